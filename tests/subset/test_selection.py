"""select_items: the sample's size, weights, strata and determinism; the inclusion
probabilities checked against their empirical frequency; the Neyman allocation; bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mixrank
from mixrank.errors import DataError, OptionError
from mixrank.subset.data import layout, matrix
from mixrank.subset.irt import fit_items
from mixrank.subset.selection import allocate, design, draw
from tests.subset.sim import board


@pytest.fixture(scope="module")
def ref() -> pd.DataFrame:
    return board(models=10, items=400, subjects=4, seed=2)[0]


def test_sample_size_weights_and_columns(ref):
    sel = mixrank.select_items(ref, 60, rng=1)
    assert len(sel) == 60
    assert not sel.duplicated(["subject", "question"]).any()
    assert sel["weight"].sum() == pytest.approx(400)
    np.testing.assert_allclose(sel["inclusion_prob"], sel["stratum_n"] / sel["stratum_size"])
    counts = sel.groupby("stratum").size()
    firsts = sel.groupby("stratum")["stratum_n"].first()
    pd.testing.assert_series_equal(counts, firsts, check_names=False)
    assert (counts >= 2).all()
    assert sel.groupby("stratum")["stratum_size"].first().sum() == 400
    # every stratum lies within one subject (or the pool of small subjects)
    assert set(sel.columns) >= {"subject", "question", "stratum", "stratum_size", "stratum_n",
                                "inclusion_prob", "weight", "difficulty", "reference_mean"}
    assert sel.attrs["mixrank"]["k"] == 60


def test_same_seed_same_items_other_seed_other_items_row_order_irrelevant(ref):
    a = mixrank.select_items(ref, 40, rng=5)
    b = mixrank.select_items(ref.sample(frac=1, random_state=3), 40, rng=5)
    c = mixrank.select_items(ref, 40, rng=6)
    pd.testing.assert_frame_equal(a, b)
    assert set(a["question"]) != set(c["question"])


def test_inclusion_probabilities_equal_the_empirical_frequencies(ref):
    lay = layout("correct ~ model + (1|subject/question)")
    mat = matrix(ref, lay)
    des = design(mat, fit_items(mat.Y, "rasch"), 50)
    rng = np.random.default_rng(0)
    R = 4000
    hits = np.zeros(mat.n_items)
    for _ in range(R):
        hits[draw(des, rng)] += 1
    pi = (des.n / des.sizes)[des.stratum]
    se = np.sqrt(pi * (1 - pi) / R)
    z = (hits / R - pi) / se
    assert np.abs(z).max() < 5.0                # 400 items: max |z| of normals
    assert abs(np.mean(z)) < 4 / np.sqrt(len(z))


def test_neyman_allocation():
    sizes = np.array([100, 100, 50, 10])
    spread = np.array([0.5, 0.1, 0.4, 0.4])
    n = allocate(sizes, spread, 40)
    assert n.sum() == 40 and (n >= 2).all() and (n <= sizes).all()
    # unconstrained strata follow N_h S_h: 50 : 10 : 20 (the last is held at its floor 2)
    ideal = 38 * np.array([50, 10, 20]) / 80
    assert np.all(np.abs(n[:3] - ideal) <= 1)
    assert allocate(np.array([3, 1, 50]), np.array([1.0, 1.0, 0.0]), 10).tolist() == [3, 1, 6]
    with pytest.raises(DataError, match="cannot give each"):
        allocate(np.array([5, 5, 5]), np.ones(3), 4)


def test_more_items_to_uncertain_strata(ref):
    sel = mixrank.select_items(ref, 80, rng=0)
    per = sel.groupby("stratum").agg(pi=("inclusion_prob", "first"),
                                     m=("reference_mean", "mean"))
    # items everyone solves (or nobody does) are sampled less often than middling ones
    spread = per.m * (1 - per.m)
    assert stats.spearmanr(spread, per.pi)[0] > 0.5


@pytest.mark.parametrize("kw, err, match", [
    ({"k": 401}, OptionError, "between 2 and the reference's 400 items"),
    ({"k": 1}, OptionError, "between 2"),
    ({"k": 10.5}, OptionError, "k=10.5"),
    ({"k": 10, "strata": "domain"}, DataError, "no column 'domain' \\(strata\\)"),
    ({"k": 10, "formula": "score ~ model + (1|subject/question)"}, DataError,
     "no column 'score' \\(score\\)"),
    ({"k": 10, "item_model": "3pl"}, OptionError, "item_model='3pl'"),
    ({"k": 10, "item_model": "rasch", "dims": 2}, OptionError, "dims=2"),
    ({"k": 10, "formula": "correct ~ model"}, mixrank.FormulaError, "names no item"),
])
def test_bad_input(ref, kw, err, match):
    kw = dict(kw)
    k = kw.pop("k")
    with pytest.raises(err, match=match):
        mixrank.select_items(ref, k, **kw)


def test_bad_data(ref):
    with pytest.raises(DataError, match="at least 2"):
        mixrank.select_items(ref[ref.model == "m00"], 10)
    bad = ref.copy()
    bad.loc[bad.index[0], "correct"] = 3
    with pytest.raises(DataError, match="scores in \\[0, 1\\]"):
        mixrank.select_items(bad, 10)
    mixed = ref.copy()
    mixed.loc[mixed.index[0], "subject"] = "other"
    with pytest.raises(DataError, match="several values within the item"):
        mixrank.select_items(mixed, 10, formula="correct ~ model + (1|question)",
                             strata="subject")
    assert ref.loc[ref.index[0], "correct"] in (0, 1)      # input untouched
