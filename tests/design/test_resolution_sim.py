"""Clustered resolution on simulated data (docs/methods.md §4 and §6).

* The design effect of the fitted mixed model against its closed forms
  (docs/methods.md §4): balanced clusters of size m give
  ``1 + (m - 1) ICC`` for every estimand; unequal sizes give
  ``1 + (sum m_i^2 / N - 1) ICC`` for ``cells`` and
  ``N / ((s_s + s_e) sum m_i / (s_e + m_i s_s))`` for ``gls`` -- exact
  algebra at the fitted components, so checked to 1e-8 relative.
* Seeded simulations (marked slow): the SE that ``plan()`` predicts for a new
  design against the empirical SD of mu_hat at that design, and the power of
  the mixed-model Wald test at the clustered N*.  Pass bands come from Monte
  Carlo standard errors: the SD of a sample SD over R replicates is about
  SD / sqrt(2 (R - 1)); a proportion's is sqrt(p (1 - p) / R).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import mixrank
from mixrank.errors import SingularFitWarning

Z975 = stats.norm.ppf(0.975)
K = (Z975 + stats.norm.ppf(0.8)) ** 2
ONE = "correct ~ model + (1|subject)"
FULL = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"


def _one_term(questions, rng, **kw):
    sd = dict(sd_model_subject=0.35, sd_model_question=0.6, sd_model_prompt=0.0, sd_residual=0.0)
    sd.update(kw)
    subjects = len(questions) if np.ndim(questions) else 12
    return mixrank.simulate(2, subjects, questions, 1, family="gaussian", rng=rng, **sd)


def _model_de(p):
    """Var_REML(estimate) / (sigma_tot^2 / N): the DE with the fitted total variance."""
    return p.variance * p.n / (p.components["subject"] + p.components["residual"])


# ---------------------------------------------------------------------------
# design effect: REML ratio vs closed forms (docs/methods.md §4)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("estimand", ["gls", "cells", "units"])
def test_design_effect_balanced_is_one_plus_m_minus_one_icc(estimand):
    m = 15
    res = mixrank.fit(ONE, _one_term(m, rng=11), estimand=estimand)
    p = res.pairs[0]
    assert not p.boundary
    s_s, s_e = p.components["subject"], p.components["residual"]
    icc = s_s / (s_s + s_e)
    assert _model_de(p) == pytest.approx(1 + (m - 1) * icc, rel=1e-8)
    assert _model_de(p) > 2                                  # a real cluster effect
    # the table's DE is the default contrast's variance over the sample variance of d
    # (one SE per pair); balanced with an interior component, CR2 reproduces the
    # REML SE (docs/methods.md §9), so the REML design effect comes back
    tab = res.resolution(columns="all", pairs="all", adjust=None, anytime=False)
    c = res.contrasts().iloc[0]
    assert tab["std_error"].iloc[0] == c["std_error"] and tab["df"].iloc[0] == c["df"]
    assert tab["variance_ratio"].iloc[0] == pytest.approx(
        c["std_error"] ** 2 * p.n / p.sigma_d ** 2, rel=1e-12)
    assert tab["variance_ratio"].iloc[0] == pytest.approx(p.variance * p.n / p.sigma_d ** 2
                                                         / tab["weight_factor"].iloc[0],
                                                         rel=1e-6)
    kt = (stats.t.ppf(0.975, c["df"]) + stats.t.ppf(0.8, c["df"])) ** 2
    assert tab["q_cluster"].iloc[0] == pytest.approx(
        p.estimate**2 / (max(kt, K) * c["std_error"] ** 2), rel=1e-12)


SIZES = [4, 7, 12, 20, 9, 15, 30, 6, 11, 18, 3, 25]


def test_design_effect_unequal_sizes_cells_estimand():
    res = mixrank.fit(ONE, _one_term(SIZES, rng=21), estimand="cells")
    p = res.pairs[0]
    assert not p.boundary
    m = np.array(SIZES, dtype=float)
    N = m.sum()
    assert p.n == N
    s_s, s_e = p.components["subject"], p.components["residual"]
    icc = s_s / (s_s + s_e)
    expect = 1 + ((m**2).sum() / N - 1) * icc
    assert _model_de(p) == pytest.approx(expect, rel=1e-8)
    # the same, written with the coefficient of variation (population variance of sizes)
    cv2 = m.var() / m.mean() ** 2
    assert expect == pytest.approx(1 + ((1 + cv2) * m.mean() - 1) * icc, rel=1e-12)


def test_design_effect_unequal_sizes_gls_estimand():
    res = mixrank.fit(ONE, _one_term(SIZES, rng=21), estimand="gls")
    p = res.pairs[0]
    assert not p.boundary
    m = np.array(SIZES, dtype=float)
    N = m.sum()
    s_s, s_e = p.components["subject"], p.components["residual"]
    expect = N / ((s_s + s_e) * np.sum(m / (s_e + m * s_s)))
    assert _model_de(p) == pytest.approx(expect, rel=1e-8)
    # GLS is the efficient estimand: smaller DE than the micro-average at the same components
    cells = 1 + ((m**2).sum() / N - 1) * s_s / (s_s + s_e)
    assert expect < cells


# ---------------------------------------------------------------------------
# seeded simulations
# ---------------------------------------------------------------------------

# true components of the paired difference: simulate() gives each model its own
# interaction effects, so each variance of d is twice the per-model variance
SD = dict(sd_model_subject=0.3, sd_model_question=0.4, sd_model_prompt=0.15, sd_residual=0.5)


def _true_var(T, Q, V):
    return 2 * (SD["sd_model_subject"] ** 2 / T + SD["sd_model_question"] ** 2 / (T * Q)
                + SD["sd_model_prompt"] ** 2 / V + SD["sd_residual"] ** 2 / (T * Q * V))


@pytest.mark.slow
def test_planned_se_matches_empirical_sd_of_mu_hat():
    """plan() from a pilot at design A predicts the SE at design B."""
    R = 800
    A = dict(subjects=20, questions=8, prompts=8)        # pilot
    B = dict(subjects=12, questions=20, prompts=3)       # planned design
    rng = np.random.default_rng(20260531)
    pred, mu = np.empty(R), np.empty(R)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        for r in range(R):
            pilot = mixrank.simulate(2, A["subjects"], A["questions"], A["prompts"],
                                     family="gaussian", rng=rng, **SD)
            tab = mixrank.fit(FULL, pilot).plan(0.3, **B)
            pred[r] = tab.loc[tab["kind"] == "design", "variance"].iloc[0]
            new = mixrank.simulate(2, B["subjects"], B["questions"], B["prompts"],
                                   family="gaussian", rng=rng, **SD)
            mu[r] = mixrank.fit(FULL, new).pairs[0].estimate
    sd_emp = mu.std(ddof=1)
    se_pred = math.sqrt(pred.mean())
    # MC error: SD of a sample SD ~ SD / sqrt(2(R-1)); of sqrt(mean prediction) by the
    # delta method, sd(pred) / sqrt(R) / (2 se_pred)
    mc = math.hypot(sd_emp / math.sqrt(2 * (R - 1)), pred.std(ddof=1) / math.sqrt(R) / (2 * se_pred))
    assert abs(se_pred - sd_emp) <= 4 * mc, (se_pred, sd_emp, mc)
    # and both agree with the truth (the planned variance is unbiased: interior REML)
    truth = math.sqrt(_true_var(**{"T": 12, "Q": 20, "V": 3}))
    assert abs(sd_emp - truth) <= 4 * truth / math.sqrt(2 * (R - 1))
    assert abs(se_pred - truth) <= 4 * pred.std(ddof=1) / math.sqrt(R) / (2 * truth)
    # a wrong divisor would be caught: e.g. prompt variance over T*V instead of V
    wrong = math.sqrt(_true_var(12, 20, 3) - 2 * SD["sd_model_prompt"] ** 2 * (1 / 3 - 1 / 36))
    assert abs(wrong - sd_emp) > 8 * mc


@pytest.mark.slow
def test_clustered_n_star_gives_the_target_power():
    """At q_cluster = 1 (true components) the mixed-model Wald test has power 1 - beta."""
    T, m, R = 40, 20, 600
    s_s, s_e = 2 * 0.3**2, 2 * 0.6**2
    var = s_s / T + s_e / (T * m)
    delta = math.sqrt(K * var)                               # N*_cluster = N exactly
    rng = np.random.default_rng(7)
    hits = 0
    iid_q = []
    for _ in range(R):
        df = mixrank.simulate(2, T, m, 1, family="gaussian", rng=rng, effects=[delta, 0.0],
                              sd_model_subject=0.3, sd_model_question=0.6, sd_model_prompt=0.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SingularFitWarning)
            res = mixrank.fit(ONE, df)
        p = res.pairs[0]
        hits += abs(p.estimate) / p.std_error >= Z975
        iid_q.append(p.n * delta**2 / (K * p.sigma_d**2))
    rate = hits / R
    # with T subjects the REML SE carries T - 1 df (balanced, one term), so the z test on
    # it has the power of a noncentral t: P(|t_{T-1}(sqrt(K))| >= z) = 0.798 at T = 40
    expect = (stats.nct.sf(Z975, T - 1, math.sqrt(K)) + stats.nct.cdf(-Z975, T - 1, math.sqrt(K)))
    assert abs(expect - 0.8) < 0.005
    assert abs(rate - expect) <= 4 * math.sqrt(expect * (1 - expect) / R), rate
    # the fixed-n paradigm ignores clustering and claims q ~ DE = 1 + (m-1) ICC >> 1
    de = 1 + (m - 1) * s_s / (s_s + s_e)
    assert np.mean(iid_q) == pytest.approx(de, rel=0.1)
