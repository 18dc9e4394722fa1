"""Tests for mixrank.change.eb and reliable_change(method="eb").

References used here:
* tests/reference/rci_eb_nlme.R -> rci_eb_nlme.json: R nlme::lme ML fits of
  the normal-normal model with known variances, and the textbook REML
  criterion minimised by R optimize (nlme's fixed-sigma REML has a known
  discrepancy; see the script);
* the published metafor REML fit of the BCG vaccine trials (Viechtbauer
  2010, J. Stat. Softw. 36(3), section 5: tau^2 = 0.3132, estimate -0.7145,
  SE 0.1798; data from Colditz et al. 1994, log relative risks);
* scipy.stats.fisher_exact / ttest_ind and statsmodels' Benjamini-Hochberg;
* a hand-worked Storey q-value example;
* seeded simulations: realised FDR against the target with a Monte Carlo band.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import special, stats

from mixrank.change.eb import (
    fisher_exact_two_sided,
    fit_normal_normal,
    pooled_t_test,
    smallest_fisher_p,
    storey_qvalues,
)
from mixrank.change.rci import reliable_change
from mixrank.errors import DesignError, MixrankWarning
from tests.change.test_rci import BEFORE, _frame, hand_frame

REF = Path(__file__).resolve().parents[1] / "reference" / "rci_eb_nlme.json"

# Tolerances (one table).
TOL = {
    "tau2_rel": 1e-5,   # optimiser tolerance on both sides (R optimize / nlme vs bounded Brent)
    "estimate": 1e-7,   # mu and BLUPs
    "published": 5e-5,  # 4-decimal published numbers
    "exact": 1e-12,
}


# --------------------------------------------------------------------------- normal-normal model
@pytest.mark.parametrize("case", ["hetero", "binomial", "small_tau"])
@pytest.mark.parametrize("method", ["ml", "reml"])
def test_normal_normal_against_r(case, method):
    ref = json.loads(REF.read_text())["cases"][case]
    fit = fit_normal_normal(np.array(ref["delta"]), np.array(ref["s2"]), method=method)
    r = ref[method]
    assert fit["tau2"] == pytest.approx(r["tau2"], rel=TOL["tau2_rel"])
    assert fit["mu"] == pytest.approx(r["mu"], abs=TOL["estimate"])
    np.testing.assert_allclose(fit["estimate"], r["blup"], atol=TOL["estimate"])


def test_normal_normal_bcg_published():
    tpos = np.array([4, 6, 3, 62, 33, 180, 8, 505, 29, 17, 186, 5, 27])
    tneg = np.array([119, 300, 228, 13536, 5036, 1361, 2537, 87886, 7470, 1699, 50448, 2493, 16886])
    cpos = np.array([11, 29, 11, 248, 47, 372, 10, 499, 45, 65, 141, 3, 29])
    cneg = np.array([128, 274, 209, 12619, 5761, 1079, 619, 87892, 7232, 1600, 27197, 2338, 17825])
    yi = np.log(tpos / (tpos + tneg)) - np.log(cpos / (cpos + cneg))
    vi = 1 / tpos - 1 / (tpos + tneg) + 1 / cpos - 1 / (cpos + cneg)
    fit = fit_normal_normal(yi, vi)
    assert fit["tau2"] == pytest.approx(0.3132, abs=TOL["published"])
    assert fit["mu"] == pytest.approx(-0.7145, abs=TOL["published"])
    assert fit["mu_std_error"] == pytest.approx(0.1798, abs=TOL["published"])


def test_normal_normal_equal_variances_closed_form():
    rng = np.random.default_rng(3)
    delta = rng.normal(0.1, 0.4, 50)
    s2 = np.full(50, 0.05)
    fit = fit_normal_normal(delta, s2)
    assert fit["tau2"] == pytest.approx(np.var(delta, ddof=1) - 0.05, rel=1e-7)
    assert fit["mu"] == pytest.approx(delta.mean(), abs=TOL["exact"])
    # boundary: sampling variance larger than the spread -> tau2 = 0, full shrinkage to the mean
    fit0 = fit_normal_normal(delta * 0.1, np.full(50, 1.0))
    assert fit0["tau2"] == 0.0
    np.testing.assert_allclose(fit0["estimate"], np.mean(delta * 0.1), atol=TOL["exact"])


def test_normal_normal_errors():
    with pytest.raises(DesignError, match="at least 3"):
        fit_normal_normal(np.array([0.1, 0.2]), np.array([0.1, 0.1]))
    with pytest.raises(DesignError, match="method="):
        fit_normal_normal(np.zeros(4), np.ones(4), method="bayes")


# --------------------------------------------------------------------------- p-values and q-values
def test_fisher_matches_scipy_all_tables():
    kb, ka = 4, 5
    xb, xa = np.meshgrid(np.arange(kb + 1), np.arange(ka + 1), indexing="ij")
    xb, xa = xb.ravel(), xa.ravel()
    got = fisher_exact_two_sided(xb, kb, xa, ka)
    want = [stats.fisher_exact([[b, kb - b], [a, ka - a]])[1] for b, a in zip(xb, xa, strict=True)]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


def test_smallest_fisher_p_is_the_minimum_over_all_tables():
    for kb in range(1, 9):
        for ka in range(1, 9):
            xb, xa = np.meshgrid(np.arange(kb + 1), np.arange(ka + 1), indexing="ij")
            want = min(stats.fisher_exact([[b, kb - b], [a, ka - a]])[1]
                       for b, a in zip(xb.ravel(), xa.ravel(), strict=True))
            assert smallest_fisher_p(kb, ka) == pytest.approx(want, rel=1e-9), (kb, ka)
    assert smallest_fisher_p(3, 3) == pytest.approx(0.1, rel=1e-12)  # 2 / C(6, 3)


def test_pooled_t_matches_scipy():
    rng = np.random.default_rng(5)
    yb, ya = rng.uniform(0, 1, (20, 4)), rng.uniform(0, 1, (20, 6))
    p, s2 = pooled_t_test(yb, ya)
    ref = stats.ttest_ind(ya, yb, axis=1, equal_var=True)
    np.testing.assert_allclose(p, ref.pvalue, rtol=1e-10)
    t = (ya.mean(1) - yb.mean(1)) / np.sqrt(s2)
    np.testing.assert_allclose(t, ref.statistic, rtol=1e-10)
    # zero pooled variance: p = 1 without change, 0 with a deterministic change
    p0, _ = pooled_t_test(np.full((2, 3), 0.5), np.array([[0.5] * 3, [0.7] * 3]))
    assert list(p0) == [1.0, 0.0]


def test_storey_hand_example():
    p = np.array([0.001, 0.004, 0.01, 0.04, 0.045, 0.2, 0.4, 0.6, 0.8, 0.95])
    # #{p > 0.5} = 3 -> pi0 = (1 + 3) / (10 * 0.5) = 0.8; raw q = 8 p / rank
    # = .008 .016 .02667 .08 .072 .26667 .45714 .6 .71111 .76; running min from the right
    q, pi0 = storey_qvalues(p)
    assert pi0 == pytest.approx(0.8, abs=TOL["exact"])
    want = [0.008, 0.016, 0.08 / 3, 0.072, 0.072, 1.6 / 6, 3.2 / 7, 0.6, 6.4 / 9, 0.76]
    np.testing.assert_allclose(q, want, atol=TOL["exact"])
    # shuffled input gives the same q per p-value
    perm = np.random.default_rng(0).permutation(10)
    np.testing.assert_allclose(storey_qvalues(p[perm])[0], np.array(want)[perm], atol=TOL["exact"])


def test_storey_with_pi0_one_is_bh():
    from statsmodels.stats.multitest import multipletests

    p = np.random.default_rng(1).uniform(0, 1, 40) ** 3
    p[:5] = [0.9, 0.95, 0.99, 0.97, 0.93]
    q, pi0 = storey_qvalues(p, lam=0.99)  # almost nothing above lambda -> pi0 capped at 1
    assert pi0 == 1.0
    np.testing.assert_allclose(q, multipletests(p, method="fdr_bh")[1], atol=TOL["exact"])


# --------------------------------------------------------------------------- wiring in reliable_change
def test_eb_columns_on_hand_example():
    it = reliable_change(hand_frame(), before="old", after="new", method="eb").items()
    assert {"std_error", "eb_estimate", "eb_std_error", "p_value", "q_value", "eb_class"} <= set(it.columns)
    xb = np.rint(it["p_before"] * 4).astype(int)
    xa = np.rint(it["p_after"] * 4).astype(int)
    fisher = [stats.fisher_exact([[a, 4 - a], [b, 4 - b]])[1] for a, b in zip(xb, xa, strict=True)]
    np.testing.assert_allclose(it["p_value"], fisher, rtol=1e-10)
    an = (it["class"] != "floor_ceiling").to_numpy()
    # exact null variance of delta given the item's total t: delta = x_after (1/4 + 1/4) - t/4, and
    # x_after | t is hypergeometric (8 samples, t correct, 4 drawn)
    t = (xb + xa).to_numpy()
    var_after = 4 * (t / 8) * (1 - t / 8) * (8 - 4) / (8 - 1)  # hypergeometric variance
    np.testing.assert_allclose(var_after[(t > 0) & (t < 8)],
                               [stats.hypergeom(8, ti, 4).var() for ti in t[(t > 0) & (t < 8)]], rtol=1e-12)
    s2 = var_after * (1 / 4 + 1 / 4) ** 2
    np.testing.assert_allclose(it["std_error"], np.sqrt(s2), atol=TOL["exact"])
    fit = fit_normal_normal(it["delta"].to_numpy()[an], s2[an])
    np.testing.assert_allclose(it["eb_estimate"].to_numpy()[an], fit["estimate"], atol=TOL["exact"])
    np.testing.assert_allclose(it["eb_std_error"].to_numpy()[an], fit["std_error"], atol=TOL["exact"])
    assert it["q_value"].isna().tolist() == list(~an)
    # with 4 + 4 samples the smallest two-sided Fisher p is 2/70: nothing survives FDR 0.05
    assert list(it["eb_class"]) == ["floor_ceiling", "no_change", "floor_ceiling", "no_change",
                                    "no_change", "no_change"]
    s = reliable_change(hand_frame(), before="old", after="new", method="eb").summary()
    assert set(s.classes["method"]) == {"rci", "eb"}
    assert s.eb["n_family"] == 4 and s.eb["fdr"] == 0.05


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 4, 10])
def test_eb_prior_variance_at_boundary_under_null(k):
    """Complete null, 0/1 samples: with the exact null variance of each change the normal-normal model
    is correctly specified at tau^2 = 0, where the REML estimate sits on the boundary in about half of
    the replicates (the 50:50 chi-bar-square law). Band: 1/2 - 3 MC SE. The plug-in binomial variance
    (without n/(n - 1)) understates the noise and gave tau^2 > 0 in 95-100% of replicates."""
    rng = np.random.default_rng(500 + k)
    reps, at_zero = 100, 0
    for _ in range(reps):
        p = rng.beta(0.5, 0.5, 1000)
        yb = (rng.random((1000, k)) < p[:, None]).astype(int)
        ya = (rng.random((1000, k)) < p[:, None]).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MixrankWarning)
            res = reliable_change(_frame(yb, ya), before="old", after="new", by=None, method="eb")
        at_zero += res.summary().eb["tau2"] <= 1e-12
    share = at_zero / reps
    assert share >= 0.5 - 3 * math.sqrt(0.25 / reps), f"tau^2 = 0 in only {share:.2f} of null replicates"


def test_eb_unequal_k_between_versions():
    after = [row + [row[0], row[1]] for row in
             [[1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0], [0, 0, 1, 1], [1, 0, 1, 1], [0, 0, 0, 0]]]
    it = reliable_change(hand_frame(BEFORE, after), before="old", after="new", method="eb").items()
    xb = np.rint(it["p_before"] * 4).astype(int)
    xa = np.rint(it["p_after"] * 6).astype(int)
    fisher = [stats.fisher_exact([[a, 4 - a], [b, 6 - b]])[1] for a, b in zip(xb, xa, strict=True)]
    np.testing.assert_allclose(it["p_value"], fisher, rtol=1e-10)


def test_eb_needs_three_analysable_items():
    before = [[1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 1, 1], [0, 1, 0, 0], [0, 0, 0, 0]]
    after = [[1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 0, 1], [1, 1, 1, 1], [0, 0, 1, 0], [0, 0, 0, 0]]
    with pytest.raises(DesignError, match="at least 3 analysable"):
        reliable_change(hand_frame(before, after), before="old", after="new", method="eb")


# --------------------------------------------------------------------------- simulation: FDR
def _binary_versions(rng, n, k, pi1, shift, beta):
    p = rng.beta(*beta, size=n)
    changed = rng.random(n) < pi1
    lp = special.logit(np.clip(p, 1e-4, 1 - 1e-4))
    pa = np.where(changed, special.expit(lp + rng.choice([-1.0, 1.0], n) * shift), p)
    yb = (rng.random((n, k)) < p[:, None]).astype(int)
    ya = (rng.random((n, k)) < pa[:, None]).astype(int)
    return yb, ya, changed


def _continuous_versions(rng, n, k, pi1, shift, beta):
    m = rng.uniform(0.3, 0.7, n)
    changed = rng.random(n) < pi1
    ma = m + np.where(changed, rng.choice([-shift, shift], n), 0.0)
    return m[:, None] + rng.normal(0, 0.03, (n, k)), ma[:, None] + rng.normal(0, 0.03, (n, k)), changed


REGIMES = {
    # name: (generator, K, share truly changed, shift (logit or score), Beta difficulty, replicates)
    "binary_k20_beta22": (_binary_versions, 20, 0.2, 3.0, (2, 2), 100),
    "binary_k10_u_shaped": (_binary_versions, 10, 0.2, 3.0, (0.5, 0.5), 100),
    "binary_k20_llm_like": (_binary_versions, 20, 0.2, 3.0, (0.3, 0.1), 100),
    "continuous_k4": (_continuous_versions, 4, 0.2, 0.05, None, 100),
    "complete_null_binary_k10": (_binary_versions, 10, 0.0, 0.0, (2, 2), 100),
    # t-test p-values are exactly uniform here, so P(any discovery) sits near the target: more replicates
    "complete_null_continuous_k4": (_continuous_versions, 4, 0.0, 0.0, None, 400),
}


@pytest.mark.slow
@pytest.mark.parametrize("regime", list(REGIMES))
def test_eb_realised_fdr_at_most_target(regime):
    """Realised FDR (mean false discovery proportion over seeded replicates) <= target + 3 MC SE.

    Under the complete null the FDR is the probability of any discovery.  The
    non-null regimes must make discoveries, so the check is not vacuous.
    """
    gen, k, pi1, shift, beta, reps = REGIMES[regime]
    rng = np.random.default_rng([8675309, list(REGIMES).index(regime)])
    n, target = 1000, 0.1
    fdp, n_disc = [], []
    for _ in range(reps):
        yb, ya, changed = gen(rng, n, k, pi1, shift, beta)
        it = reliable_change(_frame(yb, ya), before="old", after="new", by=None, method="eb",
                             fdr=target).items()
        disc = it["eb_class"].isin(["improved", "deteriorated"]).to_numpy()
        n_disc.append(disc.sum())
        fdp.append((disc & ~changed).sum() / max(disc.sum(), 1))
    mean, se = float(np.mean(fdp)), float(np.std(fdp, ddof=1) / np.sqrt(reps))
    assert mean <= target + 3 * se, f"{regime}: realised FDR {mean:.4f} (MC SE {se:.4f}) > target {target}"
    if pi1 > 0:
        assert np.mean(n_disc) >= 5, f"{regime}: only {np.mean(n_disc):.1f} discoveries per replicate"


def test_eb_beats_rci_false_alarms_on_null_rerun(shared_data):
    d = shared_data("llm_stability")
    # against the classical pooled-SEM RCI (the per-item default cannot call anything at K = 3 vs 2)
    res = reliable_change(d, before={"sample": [0, 1, 2]}, after={"sample": [3, 4]}, method="eb",
                          sem="pooled")
    it = res.items()
    # K = 3 vs 2: the odd version drops its last sample from the split only
    rel = res.summary().reliability.set_index("role")
    assert rel.loc["before", "k"] == 3 and rel.loc["before", "k_split"] == 2
    n_eb = int(it["eb_class"].isin(["improved", "deteriorated"]).sum())
    n_rci = int(it["class"].isin(["improved", "deteriorated"]).sum())
    assert n_eb == 0, f"EB called {n_eb} items changed on identical re-runs (RCI: {n_rci})"
    assert n_rci > 0.05 * len(it), f"pooled RCI called {n_rci} of {len(it)} items"
