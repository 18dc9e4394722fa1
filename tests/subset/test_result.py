"""SubsetResult.contrasts through the one contrasts template.

References: each row is recomputed here from the scores table and the reference means (new
minus reference, the new model's SE and df, Student's t or the normal for ``irt``); the
adjustments within each new model are statsmodels' ``multipletests``; the closed-testing
claim (``p_adjusted`` = ``p_value``) is checked against the rank interval it must agree with.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

import mixrank
from mixrank.results.base import ContrastsTemplate
from mixrank.results.pairwise_result import PairwiseResult
from mixrank.subset import SubsetResult


@pytest.fixture(scope="module")
def res():
    data = mixrank.load_dataset("chembench").query("prompt == 'default'")
    new_models = ["o1", "gpt-4o"]
    ref, new = data[~data.model.isin(new_models)], data[data.model.isin(new_models)]
    sel = mixrank.select_items(ref, 100, rng=2)
    return mixrank.subset_score(ref, new[new.question.isin(sel.question)], selection=sel)


@pytest.mark.parametrize("method", ["model_assisted", "stratified_mean", "irt"])
def test_rows_are_new_minus_reference(res, method):
    tab = res.contrasts(method=method)
    sc = res.scores(method).set_index("model")
    ref = res.reference.set_index("model")["estimate"]
    assert len(tab) == len(sc) * len(ref)
    for r in tab.itertuples(index=False):
        s = sc.loc[r.model_a]
        assert r.estimate == s.estimate - ref[r.model_b]
        assert (r.std_error, r.df, r.level) == (s.std_error, s.df, 0.95)
        dist = stats.t(s.df) if np.isfinite(s.df) else stats.norm()
        q = dist.ppf(0.975)
        assert r.p_value == pytest.approx(2 * dist.sf(abs(r.estimate) / s.std_error), rel=1e-12)
        assert r.ci_lower == pytest.approx(r.estimate - q * s.std_error, rel=1e-12, abs=1e-15)
    assert list(tab.columns) == ["model_a", "model_b", "estimate", "std_error", "df", "statistic",
                                 "p_value", "p_adjusted", "ci_lower", "ci_upper", "level"]
    assert tab.attrs["mixrank"]["method"] == method


def test_p_adjusted_is_the_closed_testing_answer(res):
    """At most one contrast of a new model can be null: the p-value is its adjusted p-value,
    and it rejects exactly the references outside the score interval (the rank interval's
    statement)."""
    tab = res.contrasts()
    np.testing.assert_array_equal(tab["p_adjusted"], tab["p_value"])
    assert tab.attrs["mixrank"]["adjust"] == "none" == SubsetResult.DEFAULT_ADJUST
    sc = res.scores("model_assisted").set_index("model")
    ref = res.reference.set_index("model")["estimate"]
    ri = res.rank_intervals().set_index("model")
    for m, rows in tab.groupby("model_a"):
        outside = (ref[rows.model_b].to_numpy() > sc.loc[m, "ci_upper"]) | (
            ref[rows.model_b].to_numpy() < sc.loc[m, "ci_lower"])
        np.testing.assert_array_equal(rows["p_adjusted"].to_numpy() < 0.05, outside)
        above = int((ref > sc.loc[m, "ci_upper"]).sum())
        assert ri.loc[m, "rank_lower"] == 1 + above


@pytest.mark.parametrize("how,sm", [("holm", "holm"), ("bonferroni", "bonferroni"),
                                    ("bh", "fdr_bh")])
def test_adjustments_within_each_new_model(res, how, sm):
    tab = res.contrasts(adjust=how)
    assert tab["model_a"].nunique() == 2
    for _, rows in tab.groupby("model_a"):
        want = multipletests(rows["p_value"].to_numpy(), method=sm)[1]
        np.testing.assert_allclose(rows["p_adjusted"], want, rtol=1e-12, atol=1e-300)


def test_options_and_the_former_positional_method(res):
    with pytest.raises(mixrank.OptionError, match=r"method='mle' is not supported by "
                                                  r"SubsetResult\.contrasts\(\)"):
        res.contrasts(method="mle")
    with pytest.raises(mixrank.OptionError, match="maxt"):
        res.contrasts(adjust="maxt")
    with pytest.raises(mixrank.OptionError, match="scale="):
        res.contrasts(scale="logit")
    with pytest.warns(mixrank.MixrankDeprecationWarning, match=r"contrasts\(method='irt'\)"):
        old = res.contrasts("irt")
    pd.testing.assert_frame_equal(old, res.contrasts(method="irt"))
    lev = res.contrasts(0.8)
    assert (lev["level"] == 0.8).all()
    assert ((lev.ci_upper - lev.ci_lower) < (res.contrasts().ci_upper
                                             - res.contrasts().ci_lower)).all()


def test_subset_result_is_a_result_without_pairwise_accessors(res):
    assert isinstance(res, ContrastsTemplate) and not isinstance(res, PairwiseResult)
    assert not hasattr(res, "resolution") and not hasattr(res, "judged_pairs")
    assert repr(res) == str(res) and repr(res).startswith("SubsetResult(2 new model(s), 100 of ")
    assert res._repr_html_() == "<pre>" + repr(res) + "</pre>"
