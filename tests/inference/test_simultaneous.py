"""p_adjusted, max-t simultaneous intervals and rank probabilities of a fit.

References: R's ``p.adjust`` (Holm, BH; via mixrank.inference.multiplicity,
itself checked against R), closed forms (one contrast: max-t = the marginal
test; two models: P(best) = P(t_df < t)), the studentized range
(independent equal-variance models: the simultaneous critical value is
``q_{1-alpha}(M, inf) / sqrt(2)``), and the bundled example's counts of
significant pairs (7 unadjusted, 1 after Holm).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mixrank
from mixrank.inference.multiplicity import adjust


@pytest.fixture(scope="module")
def example_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())


def test_columns_and_default_stepdown(example_fit):
    """The CR2 fit with 12 subjects: the default is the exact randomization step-down;
    Holm one keyword away, as R's p.adjust."""
    c = example_fit.contrasts()
    cols = list(c.columns)
    assert cols[cols.index("p_value") + 1] == "p_adjusted"
    assert c.attrs["mixrank"]["adjust"] == "stepdown" and c.attrs["mixrank"]["exact"]
    pd.testing.assert_frame_equal(c, example_fit.contrasts(adjust="stepdown", rng=123))
    h = example_fit.contrasts(adjust="holm")
    np.testing.assert_allclose(h["p_adjusted"], adjust(h["p_value"], "holm"), rtol=1e-12)
    assert h.attrs["mixrank"]["adjust"] == "holm" and h.attrs["mixrank"]["family_size"] == 15
    assert int((h["p_value"] < 0.05).sum()) == 7 and int((h["p_adjusted"] < 0.05).sum()) == 1
    assert int((c["p_adjusted"] < 0.05).sum()) >= 1


@pytest.mark.parametrize("how", ["none", "bh"])
def test_other_adjustments(example_fit, how):
    c = example_fit.contrasts(adjust=how)
    ref = c["p_value"] if how == "none" else adjust(c["p_value"], "bh")
    np.testing.assert_allclose(c["p_adjusted"], ref, rtol=1e-12)
    marg = example_fit.contrasts(adjust="none")
    np.testing.assert_allclose(c["ci_lower"], marg["ci_lower"])   # CIs stay marginal


@pytest.mark.parametrize("bad", ["bonf", "HOLMES", 3])
def test_bad_adjust_lists_valid_values(example_fit, bad):
    with pytest.raises(mixrank.DesignError, match=r"'none', 'holm', 'bh', 'maxt'"):
        example_fit.contrasts(adjust=bad)


def test_adjust_none_is_the_result_types_default(example_fit):
    # adjust=None (the signature's default) is the fit's own default adjustment
    given = example_fit.contrasts(adjust=None)
    assert given.attrs["mixrank"]["adjust"] == example_fit.contrasts().attrs["mixrank"]["adjust"]
    assert given["p_adjusted"].equals(example_fit.contrasts()["p_adjusted"])


@pytest.mark.parametrize("bad", [10, 2.5, "many", True])
def test_bad_draws(example_fit, bad):
    with pytest.raises(mixrank.DesignError, match="draws="):
        example_fit.contrasts(adjust="maxt", draws=bad)


def test_maxt_bounds(example_fit):
    """Simultaneous CIs are wider than marginal, narrower than Bonferroni; p between p and Bonferroni."""
    m = example_fit.contrasts(adjust="maxt", rng=1, draws=20000)
    marg = example_fit.contrasts(adjust="none")
    bonf = example_fit.contrasts(adjust="none", level=1 - 0.05 / 15)
    w, wm, wb = (t["ci_upper"] - t["ci_lower"] for t in (m, marg, bonf))
    assert (w > wm).all() and (w < wb).all()
    assert (m["p_adjusted"] >= m["p_value"] - 1e-12).all()
    assert (m["p_adjusted"] <= np.minimum(1, 15 * m["p_value"]) + 0.01).all()
    assert m.attrs["mixrank"]["ci"].startswith("simultaneous")
    # reproducible with a seed, and the CI excludes 0 exactly when p_adjusted < 1 - level
    again = example_fit.contrasts(adjust="maxt", rng=1, draws=20000)
    pd.testing.assert_frame_equal(m, again)
    excl = (m["ci_lower"] > 0) | (m["ci_upper"] < 0)
    assert (excl == (m["p_adjusted"] < 0.05)).all()


def _independent(models=4, n=4000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([dict(model=f"m{j}", question=f"q{i}", correct=rng.normal())
                         for j in range(models) for i in range(n)])


def test_maxt_is_studentized_range_for_independent_models():
    df = _independent()
    fit = mixrank.fit("correct ~ model", df)
    c = fit.contrasts(adjust="maxt", draws=40000, rng=2)
    crit = c.attrs["mixrank"]["critical_value_normal"]
    ref = stats.studentized_range.ppf(0.95, 4, np.inf) / np.sqrt(2)   # 2.569
    assert crit == pytest.approx(ref, abs=0.03)


def test_one_contrast_maxt_is_marginal():
    df = _independent(models=2, n=300, seed=4)
    fit = mixrank.fit("correct ~ model", df)
    m, marg = fit.contrasts(adjust="maxt", draws=40000, rng=3), fit.contrasts(adjust="none")
    assert m["p_adjusted"].iloc[0] == pytest.approx(marg["p_value"].iloc[0], abs=0.01)
    assert m["ci_lower"].iloc[0] == pytest.approx(marg["ci_lower"].iloc[0],
                                                  abs=0.03 * marg["std_error"].iloc[0])


def test_rank_probabilities_two_models():
    df = _independent(models=2, n=300, seed=4)
    fit = mixrank.fit("correct ~ model", df)
    rp = fit.rank_probabilities(draws=40000, rng=5)
    c = fit.contrasts().iloc[0]
    p_a = stats.t.cdf(c["statistic"], c["df"])                   # P(draw of a - b > 0)
    pb = rp.drop_duplicates("model").set_index("model")["p_best"]
    assert pb[c["model_a"]] == pytest.approx(p_a, abs=0.01)
    assert pb[c["model_b"]] == pytest.approx(1 - p_a, abs=0.01)


def test_rank_probabilities_table(example_fit):
    rp = example_fit.rank_probabilities(rng=1)
    assert list(rp.columns) == ["model", "rank", "probability", "p_best"]
    wide = rp.pivot(index="model", columns="rank", values="probability")
    np.testing.assert_allclose(wide.sum(axis=1), 1.0)        # each model has some rank
    first = rp[rp["rank"] == 1].set_index("model")
    np.testing.assert_allclose(first["probability"], first["p_best"])
    # at most one model beats all others in a draw; none does only in intransitive draws
    share = rp.attrs["mixrank"]["no_model_beats_all"]
    assert 0 <= share < 0.01
    assert first["p_best"].sum() == pytest.approx(1.0 - share, abs=1e-12)
    assert rp["model"].iloc[0] == "m01" and first.loc["m01", "p_best"] > 0.9
    # the same draws as the max-t contrasts: a second call with the same seed is identical
    pd.testing.assert_frame_equal(rp, example_fit.rank_probabilities(rng=1))
