"""Degenerate pairs: a pair with identical paired
differences, or with its common cells in a single unit, is kept as a flagged
row instead of killing the all-pairs fit, tested by the exact sign test (p-value 1 for a
zero gap: no evidence); the zero-variance threshold is relative to the data's scale."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank import DegeneratePairWarning

F1 = "correct ~ model + (1|subject)"
F2 = "correct ~ model + (1|subject) + (1|prompt)"


def with_copy(data: pd.DataFrame, model: str = "m01", name: str = "m01copy") -> pd.DataFrame:
    twin = data[data.model == model].copy()
    twin["model"] = name
    return pd.concat([data, twin], ignore_index=True)


def quiet_fit(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(*args, **kw)


def test_identical_pair_keeps_the_all_pairs_fit():
    data = with_copy(mixrank.load_example())
    with pytest.warns(DegeneratePairWarning, match=r"m01 vs m01copy \(all 960 paired differences "
                      r"are identical \(0\)"):
        res = mixrank.fit(F1, data)
    assert len(res.pairs) == 7 * 6 // 2
    c = res.contrasts().set_index(["model_a", "model_b"]).loc[("m01", "m01copy")]
    assert c.estimate == 0 and c.std_error == 0 and c.p_value == 1 and c.p_greater == 1
    assert np.isnan(c.statistic) and np.isnan(c.ci_lower) and np.isnan(c.ci_upper)
    diag = res.diagnostics()
    assert diag.degenerate.tolist() == [(a, b) == ("m01", "m01copy")
                                        for a, b in zip(diag.model_a, diag.model_b)]
    # every other pair is fitted exactly as without the copy
    plain = quiet_fit(F1, mixrank.load_example()).contrasts()
    others = res.contrasts().query("model_b != 'm01copy' and model_a != 'm01copy'")
    np.testing.assert_allclose(others.std_error.to_numpy(), plain.std_error.to_numpy(), rtol=1e-10)


def test_identical_pair_is_no_evidence_for_ranks_and_resolution():
    data = with_copy(mixrank.load_example())
    res = quiet_fit(F1, data)
    for kw in ({}, dict(method="maxt", rng=1), dict(coverage="simultaneous")):
        tab = res.rank_intervals(**kw).set_index("model")
        # the twins can never be separated: each one's interval covers the other's rank
        for m in ("m01", "m01copy"):
            assert tab.loc[m, "rank_lower"] == 1 and tab.loc[m, "rank_upper"] >= 2, kw
    res_tab = res.resolution(columns="all", pairs="all")
    row = res_tab[(res_tab.model_a == "m01") & (res_tab.model_b == "m01copy")].iloc[0]
    assert row.estimate == 0 and row.n_star == np.inf and not row.resolved_all


def test_constant_nonzero_difference_and_estimate_reported():
    d = mixrank.simulate(2, 6, 5, 1, family="gaussian", rng=3)
    d.loc[d.model == "m02", "correct"] = d.loc[d.model == "m01", "correct"].to_numpy() - 0.5
    with pytest.warns(DegeneratePairWarning, match=r"identical \(0\.5\)"):
        res = mixrank.fit(F1, d)
    c = res.contrasts().iloc[0]
    # a consistent non-zero gap is evidence -- all 6 subjects agree on its sign
    assert c.estimate == pytest.approx(0.5) and c.p_value == 2 * 0.5 ** 6
    assert c.p_greater == 0.5 ** 6
    # the resolution verdict reports the observed difference but has no variance for N*
    r = res.resolution(columns="all", pairs="all").iloc[0]
    assert r.estimate == pytest.approx(0.5) and not r.resolved_all


def test_thirty_models_four_items():
    rng = np.random.default_rng(0)
    rows = [dict(model=f"m{j:02d}", subject=f"s{i % 2}", question=f"q{i}",
                 correct=int(rng.random() < 0.5)) for j in range(30) for i in range(4)]
    data = pd.DataFrame(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("correct ~ model", data)
    diag = res.diagnostics()
    assert len(diag) == 30 * 29 // 2 and diag.degenerate.any() and not diag.degenerate.all()
    tab = res.contrasts()
    assert (tab.loc[diag.degenerate, "p_value"] == 1).all()
    assert res.rank_intervals().shape[0] == 30


def test_pair_within_one_unit():
    d = mixrank.simulate(3, 4, 6, 1, family="gaussian", rng=5)
    # m03 is scored only on subject s1: its pairs have one unit
    d = d[(d.model != "m03") | (d.subject == d.subject.iloc[0])]
    with pytest.warns(DegeneratePairWarning, match="fall in 1 level of the unit 'subject'"):
        res = mixrank.fit(F1, d)
    diag = res.diagnostics().set_index(["model_a", "model_b"])
    assert diag.degenerate.tolist() == [False, True, True]
    c = res.contrasts().set_index(["model_a", "model_b"]).loc[("m01", "m03")]
    sub = d[d.subject == d.subject.iloc[0]].pivot_table(index="question", columns="model",
                                                        values="correct")
    assert c.estimate == pytest.approx((sub.m01 - sub.m03).mean(), rel=1e-12)
    assert c.p_value == 1


@pytest.mark.parametrize("engine", ["native", "statsmodels"])
def test_other_engines_survive(engine):
    d = with_copy(mixrank.simulate(3, 6, 5, 1, family="gaussian", rng=2))
    res = quiet_fit(F1, d, engine=engine, estimand="gls")
    assert res.diagnostics().degenerate.sum() == 1 and len(res.pairs) == 6


def test_aggregate_identical_unit_means():
    d = mixrank.simulate(2, 4, 6, 1, family="gaussian", rng=4)
    a = d.model == "m01"
    # m02 = m01 + noise that averages to 0 within each subject
    noise = np.tile([0.3, -0.3], len(d[a]) // 2)
    d.loc[~a, "correct"] = d.loc[a, "correct"].to_numpy() + noise
    with pytest.warns(DegeneratePairWarning, match="'subject'-level mean differences are identical"):
        res = mixrank.fit(F1, d, method="aggregate")
    assert res.contrasts().p_value.iloc[0] == 1


@pytest.mark.parametrize("formula", [F1, F2, "correct ~ model"])
def test_zero_variance_threshold_is_relative(formula):
    """0/1 scores times 1e-7 on a small design were 'identical'; now any scale fits alike."""
    d = mixrank.simulate(2, 5, 4, 2, family="binomial", rng=11)
    tiny = d.assign(correct=d.correct * 1e-7)
    big = d.assign(correct=d.correct * 1e7)
    ref = quiet_fit(formula, d).contrasts().iloc[0]
    for scaled, s in ((tiny, 1e-7), (big, 1e7)):
        c = quiet_fit(formula, scaled).contrasts().iloc[0]
        assert c.estimate == pytest.approx(ref.estimate * s, rel=1e-9)
        assert c.statistic == pytest.approx(ref.statistic, rel=1e-4)
        assert c.df == pytest.approx(ref.df, rel=1e-3)
    # agrees with the paired t-test on the cells for the cell-level model
    if formula == "correct ~ model":
        t = mixrank.paired_t(tiny, a="m01", b="m02", pair_by=["subject", "question", "prompt"])
        assert float(t.p_value.iloc[0]) == pytest.approx(
            quiet_fit(formula, tiny).contrasts().p_value.iloc[0], rel=1e-6)


def test_degenerate_pair_in_simultaneous_contrasts_and_rank_probabilities():
    res = quiet_fit(F1, with_copy(mixrank.load_example()))
    tab = res.contrasts(adjust="maxt", rng=1)
    row = tab[(tab.model_a == "m01") & (tab.model_b == "m01copy")].iloc[0]
    assert row.p_value == 1 and row.p_adjusted == 1
    assert np.isfinite(tab.drop(index=row.name).ci_lower).all()
    probs = res.rank_probabilities(draws=2000, rng=1)
    p_best = probs.groupby("model").p_best.first()
    assert p_best["m01"] == pytest.approx(p_best["m01copy"])


def test_zero_residual_pair_is_the_limit_over_level_means():
    """Differences constant within each subject but not across subjects: REML's
    residual variance is 0 and its likelihood is unbounded there (lme4 stops with a
    convergence failure); the fit is the sigma^2 -> 0 limit, the one-sample t test
    of the subject means (scipy.stats.ttest_1samp as the independent reference).
    Found by the fuzz suite (a ZeroDivisionError in the Satterthwaite step before)."""
    import warnings

    import pandas as pd
    from scipy import stats

    import mixrank

    subj = ["s0"] * 4 + ["s1"] * 3 + ["s2"] * 2
    d = [0.5] * 4 + [-0.25] * 3 + [1.0] * 2
    rows = []
    for i, (s, di) in enumerate(zip(subj, d, strict=True)):
        rows.append(dict(model="A", subject=s, question=f"q{i}", correct=0.5 + di / 2))
        rows.append(dict(model="B", subject=s, question=f"q{i}", correct=0.5 - di / 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("correct ~ model + (1|subject)", pd.DataFrame(rows), estimand="gls",
                          df="satterthwaite")   # the REML limit (cr2 df is Bell-McCaffrey)
    row = res.contrasts().iloc[0]
    means = [0.5, -0.25, 1.0]
    ref = stats.ttest_1samp(means, 0.0)
    assert row["estimate"] == pytest.approx(sum(means) / 3, rel=1e-12)
    assert row["df"] == 2
    assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    comps = res.variance_components()
    assert comps.loc[comps["group"] == "residual", "variance"].iloc[0] == 0.0
