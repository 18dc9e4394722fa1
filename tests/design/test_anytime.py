"""Anytime-valid boundary, inflation, anytime N* and monitor (mixrank.design.anytime).

Reference values: confseq (Howard et al.'s own implementation of the
boundaries in Howard, Ramdas, McAuliffe & Sekhon 2021),
github.com/gostevehoward/confseq, test/uniform_boundaries_unittest.cpp,
TEST(MixtureTest, TestTwoSidedNormalMixture):
  best_rho(100, 0.05) = 12.60056;  bound(v = 100, log(1/0.05)) = 30.35209
("all target values are from a reference implementation in R").
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from mixrank.design.anytime import (
    DEFAULT_N_PLAN,
    anytime_inflation,
    anytime_n_star,
    anytime_threshold,
    monitor,
    tune_rho0,
)
from mixrank.design.power import n_star
from mixrank.errors import DataError, DesignError

Z975 = stats.norm.ppf(0.975)
Z80 = stats.norm.ppf(0.8)


def _x_star(alpha):
    # independent restatement: root of x - 1 - log x = 2 log(1/alpha)
    return optimize.brentq(lambda x: x - 1 - math.log(x) - 2 * math.log(1 / alpha), 1.0001, 100)


# ---------------------------------------------------------------------------
# boundary and tuning
# ---------------------------------------------------------------------------

def test_confseq_reference_values():
    rho = tune_rho0(100, alpha=0.05, approx=True)
    assert rho == pytest.approx(12.60056, abs=1e-5)
    assert anytime_threshold(100, alpha=0.05, rho0=rho) == pytest.approx(30.35209, abs=1e-5)


@pytest.mark.parametrize("n, sigma, alpha", [(100, 1.0, 0.05), (12032, 0.45, 0.05),
                                             (500, 2.0, 0.01), (50, 0.3, 0.2)])
def test_exact_tuning_minimises_the_boundary_at_n(n, sigma, alpha):
    v = n * sigma**2

    def bound(log_rho):
        return anytime_threshold(n, sigma=sigma, alpha=alpha, rho0=math.exp(log_rho))

    res = optimize.minimize_scalar(bound, bounds=(math.log(v) - 10, math.log(v) + 5),
                                   method="bounded", options={"xatol": 1e-10})
    tuned = tune_rho0(n, sigma=sigma, alpha=alpha)
    assert tuned == pytest.approx(math.exp(res.x), rel=1e-4)
    assert anytime_threshold(n, sigma=sigma, alpha=alpha) <= bound(res.x) * (1 + 1e-12)
    # Howard et al.'s closed form is near the exact minimiser (within 8% in
    # rho0 for alpha <= 0.2) and, the minimum being flat, the thresholds agree
    approx = tune_rho0(n, sigma=sigma, alpha=alpha, approx=True)
    assert approx == pytest.approx(tuned, rel=0.08)
    assert bound(math.log(approx)) == pytest.approx(bound(res.x), rel=3e-4)
    # default (tuned at n) equals n_plan = n
    assert anytime_threshold(n, sigma=sigma, alpha=alpha) == anytime_threshold(
        n, sigma=sigma, alpha=alpha, n_plan=n)


def test_boundary_is_the_normal_mixture_formula():
    v, rho, alpha = 250.0, 30.0, 0.05
    ref = math.sqrt((v + rho) * math.log((v + rho) / (rho * alpha**2)))
    assert anytime_threshold(250, rho0=rho, alpha=alpha) == pytest.approx(ref, rel=1e-14)
    # sigma scales V: n sigma^2 = 250 with sigma = 0.5 -> n = 1000
    assert anytime_threshold(1000, sigma=0.5, rho0=rho, alpha=alpha) == pytest.approx(ref, rel=1e-14)


# ---------------------------------------------------------------------------
# inflation
# ---------------------------------------------------------------------------

def test_inflation_tuned_at_n_is_constant_and_above_one():
    ns = np.array([10, 100, 1_000, 12_032, 1e6])
    infl = anytime_inflation(ns, 0.05)
    assert np.all(infl > 1)
    # at the optimum the z-equivalent threshold is sqrt(x*), whatever n is
    np.testing.assert_allclose(infl, math.sqrt(_x_star(0.05)) / Z975, rtol=1e-10)
    assert infl[0] == pytest.approx(1.5486, abs=1e-4)
    # stricter levels inflate less in ratio but still > 1
    assert 1 < anytime_inflation(1000, 0.001) < anytime_inflation(1000, 0.05)


def test_inflation_with_fixed_rho0_grows_slowly_with_n():
    ns = np.array([1e2, 1e3, 1e4, 1e5, 1e6, 1e7])
    infl = anytime_inflation(ns, 0.05, n_plan=100)
    assert np.all(infl > 1)
    assert np.all(np.diff(infl) > 0)  # grows beyond the tuning point
    # ... slowly: the squared z-equivalent grows by at most log(n2/n1)
    # (its derivative in log V is 1 - (log(1 + V/rho) + L) / (V/rho) < 1),
    # i.e. the threshold grows like sqrt(log n)
    z2 = (infl * Z975) ** 2
    assert np.all(np.diff(z2) <= np.diff(np.log(ns)))
    assert infl[-1] / infl[0] < 1.5  # a 100,000-fold larger n inflates by < 50%


# ---------------------------------------------------------------------------
# anytime N*
# ---------------------------------------------------------------------------

def test_anytime_n_star_closed_form_and_defining_equation():
    delta, sd = 0.03, 0.5
    n_any = anytime_n_star(delta, sd)
    # defining equation: delta N = boundary(N) + z_{1-b} sigma sqrt(N), boundary tuned at N
    lhs = delta * n_any
    rhs = anytime_threshold(n_any, sigma=sd) + Z80 * sd * math.sqrt(n_any)
    assert lhs == pytest.approx(rhs, rel=1e-10)
    # strictly more than the fixed-n N*, by ((sqrt(x*) + z_b) / (z_a + z_b))^2 ~ 1.92
    ratio = n_any / n_star(delta, sigma_d=sd)
    assert ratio == pytest.approx(((math.sqrt(_x_star(0.05)) + Z80) / (Z975 + Z80)) ** 2, rel=1e-10)
    assert 1.9 < ratio < 1.93


def test_anytime_n_star_with_fixed_rho0():
    delta, sd = 0.03, 0.5
    n0 = anytime_n_star(delta, sd)
    # a boundary tuned exactly at the solution gives the same N
    assert anytime_n_star(delta, sd, n_plan=n0) == pytest.approx(n0, rel=1e-8)
    # tuned elsewhere the boundary is looser at N, so more cells are needed
    for plan in (n0 / 10, 10 * n0):
        n1 = anytime_n_star(delta, sd, n_plan=plan)
        assert n1 > n0
        rho = tune_rho0(plan, sigma=sd)
        assert delta * n1 == pytest.approx(
            anytime_threshold(n1, sigma=sd, rho0=rho) + Z80 * sd * math.sqrt(n1), rel=1e-9)
    assert anytime_n_star(delta, sd, rho0=tune_rho0(n0, sigma=sd)) == pytest.approx(n0, rel=1e-8)


# ---------------------------------------------------------------------------
# monitor
# ---------------------------------------------------------------------------

def _paired_bernoulli(rng, n, pa, pb, rho):
    p11 = pa * pb + rho * math.sqrt(pa * (1 - pa) * pb * (1 - pb))
    cells = rng.choice(4, size=n, p=[p11, pa - p11, pb - p11, 1 - pa - pb + p11])
    x = np.isin(cells, [0, 1]).astype(int)  # A right on cells 11 and 10
    y = np.isin(cells, [0, 2]).astype(int)  # B right on cells 11 and 01
    return x, y


def test_monitor_detects_a_real_effect():
    rng = np.random.default_rng(11)
    x, y = _paired_bernoulli(rng, 4000, 0.66, 0.58, 0.3)
    x0, y0 = x.copy(), y.copy()
    tab = monitor(x, y, anytime="normal")  # 0/1 scores default to the Bernoulli e-process
    meta = tab.attrs["mixrank"]
    assert list(tab.columns) == ["n", "estimate", "sum", "variance", "boundary", "crossed"]
    assert isinstance(tab.index, pd.RangeIndex) and len(tab) == 4000
    at = meta["resolved_at"]
    assert at is not None and 1 < at < 4000
    assert bool(tab.loc[at - 1, "crossed"]) and not tab.loc[: at - 2, "crossed"].any()
    assert abs(tab.loc[at - 1, "sum"]) >= tab.loc[at - 1, "boundary"]
    assert tab["estimate"].iloc[-1] == pytest.approx((x - y).mean())
    np.testing.assert_array_equal(x, x0)  # inputs not modified
    np.testing.assert_array_equal(y, y0)
    # differences passed directly give the same table
    pd.testing.assert_frame_equal(monitor(x - y, anytime="normal"), tab)
    # the known-sigma boundary is anytime_threshold with rho0 tuned for the plan: n_plan,
    # else the data-independent default (never the stream length)
    sd = float(np.std(x - y, ddof=1))
    known = monitor(x, y, sigma=sd, n_plan=4000)
    np.testing.assert_allclose(known["boundary"],
                               anytime_threshold(np.arange(1, 4001), sigma=sd, n_plan=4000),
                               rtol=1e-12)
    np.testing.assert_allclose(monitor(x, y, sigma=sd)["boundary"],
                               anytime_threshold(np.arange(1, 4001), sigma=sd,
                                                 n_plan=DEFAULT_N_PLAN), rtol=1e-12)
    assert known.attrs["mixrank"]["resolved_at"] is not None
    assert known.attrs["mixrank"]["inflation"] == pytest.approx(anytime_inflation(4000))


def test_monitor_without_effect_on_identical_outputs_never_crosses():
    x = np.array([1, 0, 1, 1, 0, 1] * 50)
    tab = monitor(x, x.copy(), sigma=0.5)
    assert tab.attrs["mixrank"]["resolved_at"] is None
    assert not tab["crossed"].any()
    est = monitor(x, x.copy(), anytime="normal")  # estimated variance is 0: boundary undefined, no crossing
    assert est["boundary"].isna().all() and est.attrs["mixrank"]["resolved_at"] is None


def test_monitor_continuous_scores_and_sample_variance():
    rng = np.random.default_rng(5)
    base = rng.beta(2, 2, 3000)
    x = np.clip(base + 0.04 + 0.1 * rng.standard_normal(3000), 0, 1)
    y = np.clip(base + 0.1 * rng.standard_normal(3000), 0, 1)
    for variance in ("null", "sample"):
        tab = monitor(x, y, variance=variance)
        assert tab.attrs["mixrank"]["variance_process"] == variance
        assert tab.attrs["mixrank"]["resolved_at"] is not None
    assert np.isnan(monitor(x, y, variance="sample").loc[0, "boundary"])


@pytest.mark.parametrize("call, error, fragment", [
    (lambda: monitor([0.1, float("nan")]), DataError, "position 1"),
    (lambda: monitor([1, 0, 1], [1, 0]), DataError, "same length"),
    (lambda: monitor([]), DataError, "non-empty 1-D"),
    (lambda: monitor(np.ones((3, 2))), DataError, "non-empty 1-D"),
    (lambda: monitor(["a", "b"]), DataError, "numbers"),
    (lambda: monitor([1, 0], alpha=1.0), DesignError, "(0, 1)"),
    (lambda: monitor([1, 0], sigma=0.0), DesignError, "> 0"),
    (lambda: monitor([1, 0], n_plan=-3), DesignError, "> 0"),
    (lambda: monitor([1, 0], rho0=2.0, n_plan=10), DesignError, "not both"),
    (lambda: monitor([1, 0], variance="centered"), DesignError, "'null'"),
    (lambda: anytime_threshold(0), DesignError, "> 0"),
    (lambda: anytime_threshold(10, alpha=0.0), DesignError, "(0, 1)"),
    (lambda: anytime_threshold(10, rho0=-1.0), DesignError, "> 0"),
    (lambda: anytime_inflation(-1), DesignError, "> 0"),
    (lambda: tune_rho0(100, sigma=-1.0), DesignError, "> 0"),
    (lambda: anytime_n_star(0.0, 0.5), DesignError, "non-zero"),
    (lambda: anytime_n_star(0.05, 0.0), DesignError, "> 0"),
    (lambda: anytime_n_star(0.05, 0.5, power=0.05), DesignError, "(0.05, 1)"),
    (lambda: anytime_n_star(0.05, 0.5, alpha=1.2), DesignError, "(0, 1)"),
    (lambda: anytime_n_star(0.05, 0.5, n_plan=10, rho0=1.0), DesignError, "not both"),
])
def test_bad_arguments(call, error, fragment):
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value)


# ---------------------------------------------------------------------------
# seeded null simulations (slow)
# ---------------------------------------------------------------------------

R_NULL = 2000
N_NULL = 1000
ALPHA = 0.05
# The time-uniform guarantee is P(ever cross up to N) <= alpha.  Over R
# independent replicates the crossing share has SE sqrt(alpha (1 - alpha) / R)
# = 0.0049 at R = 2000; allow alpha + 3.5 SE = 0.067 (one-sided).
NULL_BAND = ALPHA + 3.5 * math.sqrt(ALPHA * (1 - ALPHA) / R_NULL)


def _crossing_share(streams, **kw):
    kw.setdefault("anytime", "normal")
    return np.mean([monitor(s, alpha=ALPHA, **kw).attrs["mixrank"]["resolved_at"] is not None
                    for s in streams])


@pytest.mark.slow
def test_null_crossing_rate_known_sigma_gaussian():
    rng = np.random.default_rng(20260531)
    d = 0.4 * rng.standard_normal((R_NULL, N_NULL))
    share = _crossing_share(d, sigma=0.4)
    assert share <= NULL_BAND, share


@pytest.mark.slow
@pytest.mark.parametrize("p, rho", [(0.7, 0.4), (0.9, 0.0)])
def test_null_crossing_rate_paired_bernoulli_estimated_sigma(p, rho):
    rng = np.random.default_rng([20260531, int(100 * p), int(10 * rho)])
    p11 = p * p + rho * p * (1 - p)
    cells = rng.choice(4, size=(R_NULL, N_NULL), p=[p11, p - p11, p - p11, 1 - 2 * p + p11])
    d = (cells == 1).astype(float) - (cells == 2).astype(float)
    share = _crossing_share(d)  # variance="null" plug-in
    assert share <= NULL_BAND, share


@pytest.mark.slow
def test_null_crossing_rate_gaussian_estimated_sigma():
    # the default plug-in (variance under H0) on continuous differences
    rng = np.random.default_rng(20260532)
    d = rng.standard_normal((R_NULL, N_NULL))
    share = _crossing_share(d)
    assert share <= NULL_BAND, share
