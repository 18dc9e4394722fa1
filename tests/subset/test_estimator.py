"""subset_score: the design variance against exact enumeration of every sample of a tiny
population; the result's tables; bad input (unselected items, missing items, a model in both
tables, a foreign selection)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.errors import DataError, OptionError
from mixrank.subset.estimator import design_variance, stratified_estimate
from tests.subset.sim import board


def test_difference_estimator_and_its_variance_by_exact_enumeration():
    # a tiny population: 9 items in strata of 4 and 5, samples of 2 and 3, fixed predictions
    rng = np.random.default_rng(4)
    y_all = rng.integers(0, 2, 9).astype(float)
    pred = rng.uniform(0.1, 0.9, 9)
    strata = [np.arange(4), np.arange(4, 9)]
    sizes = np.array([4.0, 5.0])
    ests, vhats = [], []
    for s0 in itertools.combinations(strata[0], 2):
        for s1 in itertools.combinations(strata[1], 3):
            idx = np.array(s0 + s1)
            code = np.array([0, 0, 1, 1, 1])
            e, v, _ = stratified_estimate(y_all[idx], pred, idx, code, sizes)
            ests.append(e)
            vhats.append(v)
    ests, vhats = np.array(ests), np.array(vhats)
    assert len(ests) == 6 * 10
    assert ests.mean() == pytest.approx(y_all.mean(), abs=1e-12)          # unbiased
    true_var = ests.var()                                                  # over all samples
    assert vhats.mean() == pytest.approx(true_var, rel=1e-10)              # unbiased variance
    # the textbook formula with the population residual variances
    e_all = y_all - pred
    W = sizes / 9
    S2 = np.array([e_all[s].var(ddof=1) for s in strata])
    formula = np.sum(W ** 2 * (1 - np.array([2, 3]) / sizes) * S2 / np.array([2, 3]))
    assert true_var == pytest.approx(formula, rel=1e-10)


def test_design_variance_is_zero_for_a_census_stratum():
    y = np.array([1.0, 0.0, 1.0, 1.0])
    est, var, df = design_variance(y, np.array([0, 0, 1, 1]), np.array([2.0, 10.0]), 12)
    # stratum 0 fully observed: no variance from it
    assert est == pytest.approx(2 / 12 * 0.5 + 10 / 12 * 1.0)
    assert var == 0.0 and df >= 1


@pytest.fixture(scope="module")
def case():
    data, _ = board(models=14, items=500, subjects=4, seed=9)
    ref = data[data.model != "m13"]
    new = data[data.model == "m13"]
    sel = mixrank.select_items(ref, 80, rng=2)
    return ref, new, sel, new[new.question.isin(sel.question)]


def test_scores_contrasts_and_rank_intervals(case):
    ref, new, sel, run = case
    res = mixrank.subset_score(ref, run, selection=sel)
    tab = res.scores()
    assert list(tab["method"]) == ["model_assisted", "stratified_mean", "irt"]
    assert (tab["ci_lower"] < tab["estimate"]).all() and (tab["estimate"] < tab["ci_upper"]).all()
    assert (tab["n"] == 80).all() and (tab["n_items"] == 500).all()
    truth = new["correct"].mean()
    ma = tab.iloc[0]
    assert abs(ma["estimate"] - truth) < 4 * ma["std_error"]
    con = res.contrasts()
    full = ref.groupby("model")["correct"].mean()
    got = con.set_index("model_b")["estimate"]
    np.testing.assert_allclose(got.loc[full.index], ma["estimate"] - full.to_numpy())
    assert (con["std_error"] == ma["std_error"]).all()
    ranks = res.rank_intervals()
    r = ranks.iloc[0]
    assert r["rank_lower"] <= r["rank"] <= r["rank_upper"] and r["n"] == 14
    assert tab.attrs["mixrank"]["item_model"] == "rasch"
    with pytest.raises(OptionError, match="method='bogus'"):
        res.scores("bogus")


def test_row_order_and_two_new_models(case):
    ref, new, sel, run = case
    a = mixrank.subset_score(ref, run, selection=sel).scores()
    b = mixrank.subset_score(ref.sample(frac=1, random_state=1), run.sample(frac=1, random_state=2),
                             selection=sel.sample(frac=1, random_state=3)).scores()
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-10)
    twin = run.assign(model="twin")
    both = mixrank.subset_score(ref, pd.concat([run, twin]), selection=sel).scores()
    assert set(both["model"]) == {"m13", "twin"}
    np.testing.assert_allclose(both[both.model == "twin"]["estimate"].to_numpy(),
                               a["estimate"].to_numpy())


def test_two_pl_item_model(case):
    ref, new, sel, run = case
    res = mixrank.subset_score(ref, run, selection=sel, item_model="2pl", dims=1)
    assert res.scores().attrs["mixrank"]["item_model"] == "2pl"


def test_bad_input(case):
    ref, new, sel, run = case
    with pytest.raises(DataError, match="outside the selection"):
        mixrank.subset_score(ref, new, selection=sel)
    with pytest.raises(DataError, match="no score on 1 selected item"):
        mixrank.subset_score(ref, run.iloc[1:] if len(run) else run, selection=sel)
    with pytest.raises(DataError, match="both in the reference and among the new"):
        mixrank.subset_score(ref, ref[ref.question.isin(sel.question)], selection=sel)
    with pytest.raises(DataError, match="no column 'stratum_size'"):
        mixrank.subset_score(ref, run, selection=sel.drop(columns="stratum_size"))
    with pytest.raises(DataError, match="does not have"):
        mixrank.subset_score(ref[~ref.question.isin(sel.question.iloc[:1])], run, selection=sel)
    with pytest.raises(DataError, match="reference the selection was drawn from"):
        unsel = sorted(set(ref.question) - set(sel.question))[:5]
        mixrank.subset_score(ref[~ref.question.isin(unsel)], run, selection=sel)
    with pytest.raises(DataError, match="no column 'correct'"):
        mixrank.subset_score(ref, run.drop(columns="correct"), selection=sel)
    with pytest.raises(OptionError, match="level=2"):
        mixrank.subset_score(ref, run, selection=sel, level=2)
