"""Closed-form resolution diagnostics: mixrank.design.power and mixrank.design.power.audit.

Published reference values come from arXiv 2605.30315 ("Resolution
Diagnostics for Paired LLM Evaluation", Kotawala 2026) as restated in
docs/methods.md §6; each test names the number it reproduces.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from mixrank.design.checks import rho_bounds
from mixrank.design.power import mde, n_star, power, resolution_ratio, sigma_d
from mixrank.design.power.audit import (
    calculator_audit,
    cohen_h,
    multiplicity_alpha,
    n_star_scale,
    shortcut_constant,
    shortcut_n,
    shortcut_safe_delta,
)
from mixrank.errors import DesignError

Z975 = stats.norm.ppf(0.975)
Z80 = stats.norm.ppf(0.8)
K = (Z975 + Z80) ** 2  # docs/methods.md (conventions): K ~ 7.849


# ---------------------------------------------------------------------------
# published values (arXiv 2605.30315; docs/methods.md §6)
# ---------------------------------------------------------------------------

def test_worked_example_n_star_and_shortcut():
    # arXiv 2605.30315 worked example: (p_A, p_B, rho) = (0.65, 0.60, 0.30)
    # gives N* ~ 1028 and the shortcut ~ 515.
    ns = n_star(p_a=0.65, p_b=0.60, rho=0.30)
    assert math.ceil(ns) == 1028
    assert math.ceil(shortcut_n(0.65, 0.60, rho=0.30)) == 515
    assert isinstance(ns, float)


def test_sample_size_table_standard_errors():
    # docs/methods.md §6, sample sizes at p ~ 0.7: n = 1,000 -> SE 1.45 pp,
    # n = 3,610 -> SE 0.76 pp, SE = sqrt(p(1-p)/n).  mde() scales the SD by
    # (z_{1-a/2} + z_{1-b}) / sqrt(n), so mde / sqrt(K) is the SE.
    sd = math.sqrt(0.7 * 0.3)
    se_1000 = mde(1000, sigma_d=sd) / math.sqrt(K)
    se_3610 = mde(3610, sigma_d=sd) / math.sqrt(K)
    assert round(100 * se_1000, 2) == 1.45
    assert round(100 * se_3610, 2) == 0.76
    assert se_1000 == pytest.approx(math.sqrt(0.21 / 1000), rel=1e-12)


@pytest.mark.parametrize("split, published", [(0.55, 784), (0.60, 197), (0.65, 88)])
def test_mcnemar_discordant_counts(split, published):
    # docs/methods.md §6: McNemar discordant counts needed for 55:45 / 60:40 /
    # 65:35 splits: ~ 784 / 197 / 88".  Conditional on the discordant pairs,
    # psi = 1 and delta = 2*split - 1 = 0.1 / 0.2 / 0.3.  Convention check:
    # the numbers are the Wald form with the *null* variance psi = 1 on both
    # quantiles, N = K psi / delta^2 = 784.9 / 196.2 / 87.2 (rounded up
    # 785 / 197 / 88, i.e. within 1 of the published values).  Connor's
    # formula with psi = 1 (alternative variance psi - delta^2 on z_{1-b})
    # gives 782.5 / 193.8 / 84.8, which does not reproduce 197 and 88.
    delta = 2 * split - 1
    wald_null = n_star(delta, sigma_d=1.0)
    assert abs(math.ceil(wald_null) - published) <= 1
    connor = n_star(delta, psi=1.0, method="connor")
    assert connor < wald_null
    if published != 784:
        assert abs(math.ceil(connor) - published) > 1


# ---------------------------------------------------------------------------
# the shortcut lemma: n_h / N* = 1/2 - (delta^2/2) [...] + O(delta^4)
# ---------------------------------------------------------------------------

def _ratio(p, rho, delta):
    pa, pb = p + delta / 2, p - delta / 2
    return shortcut_n(pa, pb, rho=rho) / n_star(p_a=pa, p_b=pb, rho=rho)


def _bracket(p, rho):
    # the bracket of the lemma exactly as written in docs/methods.md §6
    u = p * (1 - p)
    return (1 + rho) * (1 - 2 * p) ** 2 / (16 * (1 - rho) * u**2) - 1 / (6 * u)


@pytest.mark.parametrize("rho", [-0.5, 0.0, 0.3, 0.8])
def test_shortcut_constant_at_one_half_is_one_third(rho):
    # docs/methods.md §6: C(1/2, rho) = 1/3 for every rho.
    assert shortcut_constant(0.5, rho) == pytest.approx(1 / 3, rel=1e-14)


@pytest.mark.parametrize("p, rho", [(0.5, 0.3), (0.6, 0.0), (0.7, 0.4), (0.3, -0.2), (0.9, 0.8)])
def test_shortcut_ratio_second_order_expansion(p, rho):
    # ratio -> 1/2 as delta -> 0
    assert _ratio(p, rho, 1e-5) == pytest.approx(0.5, abs=1e-8)
    # C(p, rho) is half the absolute bracket
    assert shortcut_constant(p, rho) == pytest.approx(0.5 * abs(_bracket(p, rho)), rel=1e-13)

    def residual(delta):
        return _ratio(p, rho, delta) - (0.5 - delta**2 / 2 * _bracket(p, rho))

    # O(delta^4): halving delta divides the residual by about 2^4 = 16; an
    # expansion wrong at second order would only divide it by about 4.
    for delta in (0.02, 0.01):
        factor = residual(delta) / residual(delta / 2)
        assert 15.0 < factor < 17.0
    # and the second-order term itself is captured: the residual is far
    # smaller than the second-order term
    d = 0.02
    assert abs(residual(d)) < 0.05 * abs(d**2 / 2 * _bracket(p, rho))


@pytest.mark.parametrize("p, rho", [(0.6, 0.0), (0.7, 0.4), (0.5, 0.5)])
def test_shortcut_safe_delta(p, rho):
    eps = 1e-4
    dstar = shortcut_safe_delta(p, rho, eps=eps)
    assert dstar == pytest.approx(math.sqrt(eps / shortcut_constant(p, rho)), rel=1e-14)
    # at delta*, the exact ratio is eps away from 1/2 up to fourth-order terms
    assert abs(_ratio(p, rho, dstar) - 0.5) == pytest.approx(eps, rel=0.05)


def test_shortcut_safe_delta_where_second_order_vanishes():
    # C = 0 when (1+rho)(1-2p)^2 / (16 (1-rho) u) = 1/6; at rho = 0:
    # (1-2p)^2 = 16u/6  <=>  1 - 4u = 8u/3  <=>  u = 3/20.
    p = (1 - math.sqrt(1 - 4 * 0.15)) / 2
    assert shortcut_constant(p, 0.0) == pytest.approx(0.0, abs=1e-12)
    assert shortcut_safe_delta(p, 0.0, eps=0.01) > 1e5


# ---------------------------------------------------------------------------
# internal consistency of the closed forms
# ---------------------------------------------------------------------------

def test_sigma_d_matches_discordance_identity():
    pa, pb, rho = 0.72, 0.61, 0.35
    s = math.sqrt(pa * (1 - pa) * pb * (1 - pb))
    p11 = pa * pb + rho * s
    p10, p01 = pa - p11, pb - p11
    assert sigma_d(pa, pb, rho=rho) ** 2 == pytest.approx((p10 + p01) - (p10 - p01) ** 2, rel=1e-13)
    # the three descriptions of the same pair give the same N*
    a = n_star(p_a=pa, p_b=pb, rho=rho)
    b = n_star(p10=p10, p01=p01)
    c = n_star(pa - pb, sigma_d=sigma_d(pa, pb, rho=rho))
    d = n_star(pa - pb, psi=p10 + p01)
    assert a == pytest.approx(b, rel=1e-12) == pytest.approx(c, rel=1e-12)
    assert d == pytest.approx(a, rel=1e-12)
    assert n_star(p_a=pa, p_b=pb, rho=rho, method="connor") == pytest.approx(
        n_star(p10=p10, p01=p01, method="connor"), rel=1e-12)


def test_connor_with_psi_one_is_one_sample_binomial_formula():
    # Conditional on discordance the McNemar test is a one-sample test of
    # P(A wins) = 1/2; its textbook size (z sqrt(p0 q0) + z_b sqrt(p1 q1))^2 / (p1 - p0)^2
    # with p1 = (1 + delta)/2 is Connor's formula at psi = 1.
    for delta in (0.1, 0.2, 0.3):
        p1 = (1 + delta) / 2
        ref = (Z975 * 0.5 + Z80 * math.sqrt(p1 * (1 - p1))) ** 2 / (p1 - 0.5) ** 2
        assert n_star(delta, psi=1.0, method="connor") == pytest.approx(ref, rel=1e-12)


def test_mde_and_n_star_are_inverse():
    for kw in ({"sigma_d": 0.45}, {"psi": 0.3}, {"psi": 0.3, "method": "connor"}):
        m = mde(800, **kw)
        assert n_star(m, **kw) == pytest.approx(800, rel=1e-9)
    # marginals + connor hold the implied discordance fixed
    m = mde(500, p_a=0.7, p_b=0.6, rho=0.3, method="connor")
    s = math.sqrt(0.7 * 0.3 * 0.6 * 0.4)
    psi = 0.7 + 0.6 - 2 * (0.42 + 0.3 * s)
    assert n_star(m, psi=psi, method="connor") == pytest.approx(500, rel=1e-9)
    # marginals + wald: sigma_D evaluated at the marginals (plug-in)
    assert mde(500, p_a=0.7, p_b=0.6, rho=0.3) == pytest.approx(
        math.sqrt(K) * sigma_d(0.7, 0.6, rho=0.3) / math.sqrt(500), rel=1e-12)


def test_resolution_ratio_equivalence():
    # q >= 1  <=>  |delta| sqrt(N) / sigma_D >= z_{1-a/2} + z_{1-b}
    sd, delta = 0.5, 0.03
    for n in (500, 2180, 2181, 5000):
        q = resolution_ratio(n, delta, sigma_d=sd)
        assert (q >= 1) == (delta * math.sqrt(n) / sd >= Z975 + Z80)
        assert q == pytest.approx(n / n_star(delta, sigma_d=sd), rel=1e-14)


def test_power_solves_for_each_unknown():
    kw = {"sigma_d": 0.5}
    ns = n_star(0.05, **kw)
    # power at N* is 0.8 up to the far tail Phi(-z_{1-a/2} - 2.8)
    assert power(0.05, ns, **kw) == pytest.approx(0.8, abs=1e-5)
    assert power(0.05, None, power=0.8, **kw) == pytest.approx(ns, rel=1e-4)
    assert power(None, ns, power=0.8, **kw) == pytest.approx(0.05, rel=1e-4)
    # the solved n reproduces the requested power exactly
    n9 = power(0.05, None, power=0.9, **kw)
    assert power(0.05, n9, **kw) == pytest.approx(0.9, abs=1e-10)
    # connor with fixed discordance
    d = power(None, 600, power=0.8, psi=0.3, method="connor")
    assert power(d, 600, psi=0.3, method="connor") == pytest.approx(0.8, abs=1e-10)
    # delta implied by marginals
    assert power(p_a=0.65, p_b=0.60, rho=0.30, n=1028) == pytest.approx(0.8, abs=2e-3)
    # power is alpha when there is nothing to see (n -> 0)
    assert power(0.05, 1e-12, **kw) == pytest.approx(0.05, abs=1e-6)


def test_broadcasting_returns_arrays():
    out = n_star(np.array([0.02, 0.05]), sigma_d=np.array([[0.3], [0.5]]))
    assert out.shape == (2, 2)
    assert out[1, 1] == pytest.approx(n_star(0.05, sigma_d=0.5), rel=1e-14)
    assert isinstance(sigma_d(0.6, 0.5, rho=0.1), float)


# ---------------------------------------------------------------------------
# calculator audit (statsmodels called live)
# ---------------------------------------------------------------------------

def test_calculator_audit_table():
    tab = calculator_audit(0.65, 0.60, rho=0.30)
    assert list(tab.columns) == ["method", "n", "ratio_to_n_star", "note"]
    assert list(tab["method"]) == ["cohen_textbook", "statsmodels_normal_ind", "shortcut",
                                   "statsmodels_shortcut", "paired_wald", "connor"]
    row = tab.set_index("method")
    assert math.ceil(row.loc["paired_wald", "n"]) == 1028  # arXiv 2605.30315
    assert math.ceil(row.loc["shortcut", "n"]) == 515  # arXiv 2605.30315
    assert row.loc["paired_wald", "ratio_to_n_star"] == 1.0
    h = cohen_h(0.65, 0.60)
    assert row.loc["cohen_textbook", "n"] == pytest.approx(K / h**2, rel=1e-12)
    # statsmodels' two-sample per-arm n uses Var(h_hat) = 2/n: 2K/h^2 up to the far tail
    assert row.loc["statsmodels_normal_ind", "n"] == pytest.approx(2 * K / h**2, rel=1e-4)
    assert row.loc["shortcut", "ratio_to_n_star"] == pytest.approx(0.5, abs=0.01)
    assert tab.attrs["mixrank"]["n_star"] == row.loc["paired_wald", "n"]
    assert tab.index.equals(tab.index.__class__(range(6)))


# ---------------------------------------------------------------------------
# multiplicity
# ---------------------------------------------------------------------------

def test_multiplicity_levels_and_scale():
    assert multiplicity_alpha(0.05, 9) == pytest.approx(0.05 / 9)
    assert multiplicity_alpha(0.05, 9, method="holm", rank=1) == pytest.approx(0.05 / 9)
    assert multiplicity_alpha(0.05, 9, method="holm", rank=9) == pytest.approx(0.05)
    assert multiplicity_alpha(0.05, 9, method="holm", rank=4) == pytest.approx(0.05 / 6)
    assert multiplicity_alpha(0.05, 9, method="bh", rank=3) == pytest.approx(3 * 0.05 / 9)
    np.testing.assert_allclose(multiplicity_alpha(0.05, 4, method="holm", rank=np.arange(1, 5)),
                               [0.0125, 0.05 / 3, 0.025, 0.05])
    a2 = multiplicity_alpha(0.05, 9)
    ratio = n_star(0.03, sigma_d=0.5, alpha=a2) / n_star(0.03, sigma_d=0.5)
    assert n_star_scale(a2) == pytest.approx(ratio, rel=1e-13)
    assert n_star_scale(0.05) == 1.0


# ---------------------------------------------------------------------------
# bad arguments
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("call, fragment", [
    (lambda: sigma_d(1.2, 0.5, rho=0.0), "(0, 1)"),
    (lambda: sigma_d(0.0, 0.5, rho=0.0), "(0, 1)"),
    (lambda: n_star(p_a=0.5, p_b=-0.1, rho=0.0), "(0, 1)"),
    (lambda: shortcut_constant(1.0, 0.2), "(0, 1)"),
    (lambda: n_star(0.05, sigma_d=0.5, alpha=1.5), "(0, 1)"),
    (lambda: n_star(0.05, sigma_d=0.5, alpha=0.0), "(0, 1)"),
    (lambda: multiplicity_alpha(1.0, 3), "(0, 1)"),
    (lambda: n_star(0.05, sigma_d=0.5, power=0.05), "(0.05, 1)"),
    (lambda: n_star(0.05, sigma_d=0.5, power=0.01), "(0.05, 1)"),
    (lambda: n_star(0.05, sigma_d=0.5, power=1.0), "(0.05, 1)"),
    (lambda: power(0.05, None, power=0.04, sigma_d=0.5), "(0.05, 1)"),
    (lambda: n_star(0.0, sigma_d=0.5), "non-zero"),
    (lambda: n_star(np.array([0.1, 0.0]), sigma_d=0.5), "at index 1"),
    (lambda: n_star(p_a=0.6, p_b=0.6, rho=0.3), "delta = 0"),
    (lambda: mde(0, sigma_d=0.5), "> 0"),
    (lambda: resolution_ratio(-5, 0.05, sigma_d=0.5), "> 0"),
    (lambda: power(0.05, -1.0, sigma_d=0.5), "> 0"),
    (lambda: n_star(0.05, sigma_d=0.0), "> 0"),
    (lambda: shortcut_safe_delta(0.6, 0.2, eps=0.0), "> 0"),
    (lambda: n_star(0.05), "exactly one way"),
    (lambda: n_star(0.05, sigma_d=0.5, psi=0.3), "exactly one way"),
    (lambda: n_star(p_a=0.6, p_b=0.5), "all three"),
    (lambda: n_star(p10=0.2), "both p10 and p01"),
    (lambda: n_star(p10=0.7, p01=0.5), "p10 + p01 <= 1"),
    (lambda: n_star(0.05, psi=1.2), "(0, 1]"),
    (lambda: n_star(0.5, psi=0.3), "cannot exceed"),
    (lambda: n_star(0.03, p_a=0.65, p_b=0.6, rho=0.3), "contradicts"),
    (lambda: n_star(0.05, sigma_d=0.5, method="connor"), "discordance"),
    (lambda: n_star(0.05, sigma_d=0.5, method="exact"), "'wald', 'connor'"),
    (lambda: n_star("a lot", sigma_d=0.5), "number"),
    (lambda: n_star(float("nan"), sigma_d=0.5), "finite"),
    (lambda: power(0.05, 100, power=0.8, sigma_d=0.5), "exactly one"),
    (lambda: power(None, None, sigma_d=0.5), "exactly one"),
    (lambda: power(None, 100, power=0.8, p_a=0.6, p_b=0.5, rho=0.1), "exactly one"),
    (lambda: shortcut_n(0.6, 0.6, rho=0.2), "p_a != p_b"),
    (lambda: shortcut_constant(0.5, 1.0), "Frechet"),
    (lambda: calculator_audit(np.array([0.6, 0.7]), 0.5, rho=0.1), "scalars"),
    (lambda: multiplicity_alpha(0.05, 0), "whole number >= 1"),
    (lambda: multiplicity_alpha(0.05, 2.5), "whole number >= 1"),
    (lambda: multiplicity_alpha(0.05, 5, method="holm"), "needs rank"),
    (lambda: multiplicity_alpha(0.05, 5, method="bh", rank=6), "1..m"),
    (lambda: multiplicity_alpha(0.05, 5, method="sidak"), "'bonferroni', 'holm' or 'bh'"),
    (lambda: n_star_scale(0.05, power=0.03), "(0.05, 1)"),
])
def test_bad_arguments_raise_design_error(call, fragment):
    with pytest.raises(DesignError) as info:
        call()
    assert fragment in str(info.value)


def test_rho_outside_frechet_bounds_names_the_range():
    # p_a = 0.9, p_b = 0.1: p11 in [0, 0.1], so rho in [-1, (0.1 - 0.09)/0.09] = [-1, 0.111111]
    with pytest.raises(DesignError, match=r"\[-1, 0\.111111\]"):
        sigma_d(0.9, 0.1, rho=0.5)
    with pytest.raises(DesignError, match="Frechet"):
        n_star(p_a=0.65, p_b=0.60, rho=-0.99)
    with pytest.raises(DesignError, match="Frechet"):
        shortcut_n(0.65, 0.60, rho=0.99)
    lo, hi = rho_bounds(np.float64(0.9), np.float64(0.1))
    assert (lo, hi) == pytest.approx((-1.0, 0.1 / 0.9))
    # the bounds themselves are allowed
    assert sigma_d(0.9, 0.1, rho=hi) > 0


# ---------------------------------------------------------------------------
# seeded calibration: empirical power at N* (slow)
# ---------------------------------------------------------------------------

R_CALIB = 4000
# Monte Carlo band: under the claim "power = 0.8" the rejection share over R
# independent replicates has SE sqrt(0.8 * 0.2 / R) = 0.0063 at R = 4000;
# 3.5 SE (two-sided p ~ 5e-4 per cell, ~4e-3 over the 9 cells) -> +-0.022.
BAND = 3.5 * math.sqrt(0.8 * 0.2 / R_CALIB)
CELLS = [(p, rho) for p in (0.5, 0.7, 0.9) for rho in (0.0, 0.4, 0.8)]


def _delta_for_n_star(p, rho, target=2000.0):
    """delta (p_A = p + delta/2, p_B = p - delta/2) with N*(delta) = target."""
    hi = min(0.2, 1.98 * min(p, 1 - p))
    while rho > rho_bounds(np.float64(p + hi / 2), np.float64(p - hi / 2))[1] - 1e-9:
        hi *= 0.9
    return optimize.brentq(lambda d: n_star(p_a=p + d / 2, p_b=p - d / 2, rho=rho) - target,
                           1e-4, hi, xtol=1e-14)


def _params(cells):
    return [pytest.param(p, rho, id=f"p{p}-rho{rho}") for p, rho in cells]


def _empirical_power(p, rho, target, seed_cell):
    delta = _delta_for_n_star(p, rho, target)
    pa, pb = p + delta / 2, p - delta / 2
    n = math.ceil(n_star(p_a=pa, p_b=pb, rho=rho))
    # correlated Bernoulli pairs with these exact marginals and correlation:
    # cell probabilities of the 2x2 table, p11 = pa pb + rho sqrt(pa qa pb qb)
    p11 = pa * pb + rho * math.sqrt(pa * (1 - pa) * pb * (1 - pb))
    probs = [p11, pa - p11, pb - p11, 1 - pa - pb + p11]
    rng = np.random.default_rng([20260530, seed_cell])
    counts = rng.multinomial(n, probs, size=R_CALIB)
    # paired t-test on d = y_A - y_B (d = +1 on 10 cells, -1 on 01 cells, 0 else)
    n10, n01 = counts[:, 1], counts[:, 2]
    dbar = (n10 - n01) / n
    var = (n10 + n01 - n * dbar**2) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = dbar / np.sqrt(var / n)
    reject = np.abs(t) > stats.t.ppf(0.975, n - 1)
    return reject.mean(), n


# The calibration is run at N* = 2000 (a benchmark-sized n).  At N* = 400 the
# Wald N* is conservative where discordant pairs are rare: measured with
# 200,000 replicates, every rho = 0.8 cell sits above 0.8 there (p = 0.5:
# 0.809, p = 0.7: 0.816, p = 0.9: 0.834); at N* = 2000 the same cells give
# 0.802, 0.802, 0.808 (100,000 replicates).  The small-n departure is kept as
# a strict xfail below, reported rather than hidden.


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "Wald N* is asymptotic: at p=0.9, rho=0.8 (about 15 discordant pairs at N*=400) "
    "the paired t-test's power is ~0.834, above the 0.8 target"))
def test_power_at_small_n_star_extreme_cell():
    empirical, n = _empirical_power(0.9, 0.8, 400.0, 99)
    assert abs(empirical - 0.8) <= BAND, f"empirical power {empirical:.4f} at n = {n}"


@pytest.mark.slow
@pytest.mark.parametrize("p, rho", _params(CELLS))
def test_power_at_n_star_is_nominal(p, rho):
    empirical, n = _empirical_power(p, rho, 2000.0, CELLS.index((p, rho)))
    assert abs(empirical - 0.8) <= BAND, f"empirical power {empirical:.4f} at n = {n}"
