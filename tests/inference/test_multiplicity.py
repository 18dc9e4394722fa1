"""Tests for mixrank.inference.multiplicity (Bonferroni, Holm, BH).

References: R 4.2 ``p.adjust`` values in tests/reference/paired_tests.json
(written by tests/reference/paired_tests.R) and statsmodels'
``multipletests``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from mixrank.errors import DataError
from mixrank.inference.multiplicity import adjust, reject

TOL = {"r": 1e-10, "statsmodels": 1e-12}
REF = json.loads((Path(__file__).parents[1] / "reference" / "paired_tests.json").read_text())
SM_NAME = {"bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh"}


@pytest.mark.parametrize("row", REF["p_adjust"], ids=lambda r: r["name"])
@pytest.mark.parametrize("method", ["bonferroni", "holm", "bh"])
def test_adjust_matches_r_p_adjust(row, method):
    got = adjust(row["p"], method=method)
    np.testing.assert_allclose(got, np.asarray(row[method], float), rtol=TOL["r"], atol=0)


@pytest.mark.parametrize("row", REF["p_adjust"], ids=lambda r: r["name"])
@pytest.mark.parametrize("method", ["bonferroni", "holm", "bh"])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_adjust_and_reject_match_statsmodels(row, method, alpha):
    p = np.asarray(row["p"], float)
    rej, corrected, _, _ = multipletests(p, alpha=alpha, method=SM_NAME[method])
    np.testing.assert_allclose(adjust(p, method), corrected, rtol=TOL["statsmodels"], atol=0)
    np.testing.assert_array_equal(reject(p, alpha=alpha, method=method), rej)


def test_method_aliases_and_case():
    p = [0.01, 0.02, 0.2]
    np.testing.assert_array_equal(adjust(p, "BH"), adjust(p, "fdr_bh"))
    np.testing.assert_array_equal(adjust(p, "Holm"), adjust(p, "holm"))


def test_input_types_and_order_kept():
    p = pd.Series([0.04, 0.001, 0.03], index=["c", "a", "b"])
    out = adjust(p, "holm")
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, [0.06, 0.003, 0.06])
    assert adjust([], "bh").shape == (0,)
    np.testing.assert_allclose(adjust(0.2, "bonferroni"), [0.2])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30),
       st.sampled_from(["bonferroni", "holm", "bh"]), st.randoms(use_true_random=False))
def test_adjust_properties(p, method, rnd):
    p = np.asarray(p)
    adj = adjust(p, method)
    assert np.all(adj >= p - 1e-15) and np.all(adj <= 1.0)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adj[order]) >= -1e-15)  # monotone in p
    # invariant to the order in which the family is listed
    perm = list(range(len(p)))
    rnd.shuffle(perm)
    np.testing.assert_allclose(adjust(p[perm], method), adj[perm], rtol=0, atol=0)
    # ordering of strictness: bonferroni >= holm >= bh
    if method == "holm":
        assert np.all(adjust(p, "bonferroni") >= adj - 1e-15)
        assert np.all(adjust(p, "bh") <= adj + 1e-15)


@pytest.mark.parametrize("p,match", [
    ([0.01, np.nan], "position 1 is NaN"),
    ([0.01, 1.5], "position 1 is 1.5"),
    ([-0.1], "position 0 is -0.1"),
    (np.ones((2, 2)) * 0.1, "one-dimensional"),
    (["a", 0.1], "must be numbers"),
    (pd.DataFrame({"p": [0.1]}), "got a DataFrame"),
])
def test_bad_p_values_raise(p, match):
    with pytest.raises(DataError, match=match):
        adjust(p, "holm")


def test_bad_method_and_alpha():
    with pytest.raises(DataError, match="method='hommel'"):
        adjust([0.1], "hommel")
    with pytest.raises(DataError, match="alpha=1.5"):
        reject([0.1], alpha=1.5)
