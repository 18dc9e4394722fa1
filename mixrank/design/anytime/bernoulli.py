"""Anytime-valid resolution for 0/1 scores: the paired-Bernoulli mixture e-process (design stage).

Stage: design (needs no fitted model).
Inputs: counts of discordant cells (planned or observed), a discordance rate
``psi = p10 + p01``, ``alpha``; for :func:`monitor_bernoulli` a stream of
paired differences in {-1, 0, 1}.
Outputs: floats (boundaries, inflation factors, N*) and, from
:func:`monitor_bernoulli`, a tidy per-step table.
Contents (docs/anytime.md): :func:`bernoulli_log_e` (the e-value),
:func:`tune_beta` (the mixing distribution tuned to the benchmark's size),
:func:`bernoulli_threshold`, :func:`bernoulli_inflation`,
:func:`bernoulli_n_star` and :func:`monitor_bernoulli`.

The e-process.  On a discordant cell (exactly one model right) write
``X = 1`` when model A is the one right.  Under McNemar's null
``p10 = p01`` every discordant cell has ``X ~ Bernoulli(1/2)`` independently
of the past, while concordant cells carry no information.  For a prior
``theta ~ Beta(a, a)`` on ``P(X = 1)`` the likelihood-ratio mixture after D
discordant cells with k wins for A and ``S = 2k - D``,

    E_D = int prod (theta / 1/2)^X ((1 - theta) / 1/2)^(1 - X) dBeta(a, a)
        = 2^D B(a + k, a + D - k) / B(a, a),

is a non-negative martingale with ``E_0 = 1`` under the null (it stays
constant on concordant cells), so by Ville's inequality
``P(sup_n E_n >= 1/alpha) <= alpha``: rejecting at the first cell with
``E >= 1/alpha`` is a level-alpha test that may be checked after every cell.
The symmetric prior makes the test two-sided; ``a`` is tuned so that the
boundary on ``|S|`` is smallest at the planned number of discordant cells
(the Beta-binomial mixture of Howard, Ramdas, McAuliffe & Sekhon 2021, sec. 3.2
and Prop. 7, specialised to the symmetric Bernoulli case).  Unlike the
normal mixture of :mod:`mixrank.design.anytime` it needs no variance, known
or estimated: the null distribution of the signs is exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, special

from mixrank._util import tidy
from mixrank.design.checks import (
    as_result,
    check_alpha,
    check_delta,
    check_interval,
    check_positive,
    check_power,
    z_quantile,
    z_upper,
)
from mixrank.errors import DataError, DesignError

#: Discordant cells the monitor's prior is tuned for when no plan is given: a
#: data-independent default (1,000 cells at a discordance of 0.25).
DEFAULT_D_PLAN = 250.0

__all__ = [
    "DEFAULT_D_PLAN",
    "bernoulli_log_e",
    "tune_beta",
    "bernoulli_threshold",
    "bernoulli_inflation",
    "bernoulli_n_star",
    "monitor_bernoulli",
]

_BISECT = 64  # halvings of [0, D]: the threshold to D * 2^-64


def _log_e(s: np.ndarray, d: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``log E`` after d discordant cells with sum s (continuous in s)."""
    k = (d + s) / 2.0
    return d * np.log(2.0) + special.betaln(a + k, a + d - k) - special.betaln(a, a)


def bernoulli_log_e(s: Any, d: Any, *, a: Any) -> float | np.ndarray:
    """Log e-value of the paired-Bernoulli mixture after ``d`` discordant cells.

    Parameters
    ----------
    s : int or array_like
        ``S = (#cells only A right) - (#cells only B right)``, ``|s| <= d``.
    d : int or array_like
        Discordant cells so far, >= 0 (same parity as ``s``).
    a : float or array_like
        Parameter of the symmetric ``Beta(a, a)`` mixing distribution, > 0.

    Returns
    -------
    float or numpy.ndarray
        ``log(2^d B(a + k, a + d - k) / B(a, a))`` with ``k = (d + s) / 2``.

    Raises
    ------
    DesignError
        ``d < 0``, ``|s| > d`` or ``a <= 0``.

    Notes
    -----
    Validated against direct numerical integration of the likelihood ratio
    over the Beta prior (tests).
    """
    sv = np.asarray(s, dtype=float)
    dv = np.asarray(d, dtype=float)
    av = check_positive("a", a, hint="a is the Beta(a, a) mixing parameter.")
    if np.any(dv < 0) or np.any(np.abs(sv) > dv):
        raise DesignError(f"need d >= 0 and |s| <= d (s is a difference of counts summing to "
                          f"d); received s={s!r}, d={d!r}.")
    return as_result(_log_e(sv, dv, av))


def _threshold(d: np.ndarray, a: np.ndarray, log_target: float) -> np.ndarray:
    """Smallest |S| in [0, D] with log E >= log_target (inf if even S = D is short)."""
    d, a = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(a, dtype=float))
    out = np.full(d.shape, np.inf)
    if d.size == 1:     # the solvers' scalar calls: the same arithmetic on floats, no arrays
        out[...] = _threshold_one(float(d.flat[0]), float(a.flat[0]), float(log_target))
        return out
    top = _log_e(d, d, a) >= log_target
    if not np.any(top):
        return out
    lo = np.zeros(int(top.sum()))
    hi = d[top].copy()
    dd, aa = d[top], a[top]
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        up = _log_e(mid, dd, aa) >= log_target
        hi = np.where(up, mid, hi)
        lo = np.where(up, lo, mid)
    out[top] = hi
    return out


_LOG2 = float(np.log(2.0))


def _threshold_one(d: float, a: float, log_target: float) -> float:
    """:func:`_threshold` of one (d, a): the same bisection and operation order on floats
    (bit-identical; ~30x fewer array calls for the tuning and N* solvers)."""
    betaln = special.betaln
    base = float(betaln(a, a))
    dl = d * _LOG2
    k = (d + d) / 2.0
    if not dl + float(betaln(a + k, a + d - k)) - base >= log_target:
        return float("inf")
    lo, hi = 0.0, d
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        k = (d + mid) / 2.0
        if dl + float(betaln(a + k, a + d - k)) - base >= log_target:
            hi = mid
        else:
            lo = mid
    return hi


def _tune(d_plan: float, alpha: float) -> float:
    """Beta parameter a minimising the boundary on |S| at d_plan discordant cells."""
    log_target = np.log(1.0 / alpha)
    # start: the normal mixture's precision rho0 = D / (x* - 1) maps to a = (rho0 - 1) / 2
    big_l = 2.0 * log_target
    x = optimize.brentq(lambda v: v - 1.0 - np.log(v) - big_l, 1.0 + 1e-12, 2.0 + 2.0 * big_l)
    a0 = max((d_plan / (x - 1.0) - 1.0) / 2.0, 0.05)

    def obj(log_a: float) -> float:
        c = float(_threshold(np.array(d_plan), np.array(np.exp(log_a)), log_target))
        return c if np.isfinite(c) else d_plan + 1.0 + log_a  # push towards smaller a

    lo, hi = np.log(a0) - 4.0, np.log(a0) + 4.0
    res = optimize.minimize_scalar(obj, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-6})
    return float(np.exp(res.x))


def tune_beta(d_plan: Any, *, alpha: Any = 0.05) -> float | np.ndarray:
    """Mixing parameter ``a`` of ``Beta(a, a)`` tightest at ``d_plan`` discordant cells.

    Parameters
    ----------
    d_plan : float or array_like
        Planned number of discordant cells (``N psi`` for a benchmark of N
        paired cells with discordance ``psi``), > 0.
    alpha : float, default 0.05
        Level, in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        ``a`` minimising :func:`bernoulli_threshold` at ``d_plan``.

    Raises
    ------
    DesignError
        ``d_plan <= 0`` or alpha outside (0, 1).

    Notes
    -----
    Bounded scalar minimisation over ``log a`` around the normal-mixture
    analogue ``a = (D/(x* - 1) - 1) / 2`` (the Beta prior on the drift
    ``2 theta - 1`` has variance ``1 / (2a + 1)``, the normal mixture's
    ``1 / rho0``).  For a small ``d_plan`` the boundary may be infinite
    (no run of discordant cells is long enough): then a small ``a`` is
    returned, the prior that needs the fewest cells.  Validated by a grid
    search (tests).
    """
    dp = check_positive("d_plan", d_plan, hint="d_plan is the planned number of discordant "
                         "cells (N * psi).")
    al = check_alpha(alpha)
    return as_result(np.vectorize(_tune, otypes=[float])(dp, al))


def _plan_a(a: Any, d_plan: Any, d: np.ndarray, al: np.ndarray) -> np.ndarray:
    if a is not None:
        if d_plan is not None:
            raise DesignError(f"pass either a or d_plan, not both; received a={a!r}, "
                              f"d_plan={d_plan!r}.")
        return check_positive("a", a, hint="a is the Beta(a, a) mixing parameter.")
    plan = d if d_plan is None else check_positive(
        "d_plan", d_plan, hint="d_plan is the planned number of discordant cells.")
    return np.asarray(tune_beta(plan, alpha=al))


def bernoulli_threshold(d: Any, *, alpha: Any = 0.05, a: Any = None,
                        d_plan: Any = None) -> float | np.ndarray:
    """Boundary on ``|S|`` after ``d`` discordant cells (continuous; inf if unreachable).

    Parameters
    ----------
    d : float or array_like
        Discordant cells so far, > 0.
    alpha : float, default 0.05
    a : float, optional
        Fixed Beta(a, a) parameter.  Default: :func:`tune_beta` at ``d_plan``
        (at ``d`` itself when d_plan is None).
    d_plan : float, optional
        The planned number of discordant cells the prior is tuned for.

    Returns
    -------
    float or numpy.ndarray
        The smallest ``c`` with ``log E(c, d) >= log(1/alpha)``; the test
        rejects when ``|S_d| >= c``.

    Raises
    ------
    DesignError
        Non-positive d, a or d_plan; alpha outside (0, 1); both a and d_plan.

    Notes
    -----
    ``log E`` increases in ``|S|``, so the boundary is found by bisection
    (64 halvings).  Validated against an exhaustive scan of the integer
    ``S`` of the same parity as ``d`` (tests).
    """
    dv = check_positive("d", d, hint="d is the number of discordant cells.")
    al = check_alpha(alpha)
    av = _plan_a(a, d_plan, dv, al)
    if al.ndim == 0:
        return as_result(_threshold(dv, av, float(np.log(1.0 / al))))
    return as_result(np.vectorize(lambda x, y, z: float(_threshold(np.array(x), np.array(y),
                                                                float(np.log(1.0 / z)))),
                             otypes=[float])(dv, av, al))


def _psi(psi: Any) -> np.ndarray:
    return check_interval("psi", psi, 0, 1, hi_closed=True,
                           what=" (the discordance p10 + p01)",
                           fix="psi is the share of cells where exactly one model is right.")


def bernoulli_inflation(n: Any, *, psi: Any, alpha: Any = 0.05,
                        n_plan: Any = None) -> float | np.ndarray:
    """Threshold inflation of the e-process over ``z_{1-alpha/2}`` after n paired cells.

    Parameters
    ----------
    n : float or array_like
        Paired cells, > 0; the e-process has seen ``D = n psi`` discordant ones.
    psi : float or array_like
        Discordance ``p10 + p01``, in (0, 1].
    alpha : float, default 0.05
    n_plan : float, optional
        The benchmark's N the prior is tuned for (``d_plan = n_plan psi``);
        default n itself.

    Returns
    -------
    float or numpy.ndarray
        ``c(D) / sqrt(D) / z_{1-alpha/2}``: under the null ``S_D`` has variance
        D, so ``c / sqrt(D)`` is the z-equivalent threshold of the e-process
        and ``z_{1-alpha/2}`` that of the fixed-n McNemar (Wald) test.

    Raises
    ------
    DesignError
        Non-positive n or n_plan, psi outside (0, 1], alpha outside (0, 1).

    Notes
    -----
    The N* of the anytime column scales by ``((z_any + z_{1-beta}) /
    (z_{1-alpha/2} + z_{1-beta}))^2`` with ``z_any = inflation z_{1-alpha/2}``.
    Validated against :func:`bernoulli_threshold` and, for the normal
    limit, :func:`mixrank.design.anytime.anytime_inflation` (tests).
    """
    nn = check_positive("n", n, hint="n is the number of paired cells.")
    ps = _psi(psi)
    al = check_alpha(alpha)
    plan = nn if n_plan is None else check_positive("n_plan", n_plan,
                                                     hint="n_plan is the benchmark's N.")
    d = nn * ps
    c = np.asarray(bernoulli_threshold(d, alpha=al, d_plan=plan * ps))
    return as_result(c / np.sqrt(d) / z_upper(al / 2))


def z_equivalent(nv: np.ndarray, psi: float, a: float, alpha: float) -> np.ndarray:
    """z-equivalent threshold c(n psi) / sqrt(n psi), at least z_{1-alpha/2}."""
    d = nv * psi
    c = _threshold(d, np.full(d.shape, a), float(np.log(1.0 / alpha)))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(d > 0, c / np.sqrt(np.maximum(d, 1e-300)), np.inf)
    return np.maximum(z, float(z_upper(alpha / 2)))


def n_star_effect(effect: float, psi: float, a: float, alpha: float, zb: float) -> float:
    """Smallest N with effect sqrt(N) >= z_any(N) + z_b (effect = |delta| / sigma)."""
    def h(nv: np.ndarray) -> np.ndarray:
        return effect * np.sqrt(nv) - z_equivalent(nv, psi, a, alpha) - zb

    start = ((float(z_upper(alpha / 2)) + zb) / effect) ** 2
    grid = start * np.geomspace(1.0, 1e8, 400)
    vals = h(grid)
    pos = np.flatnonzero(vals >= 0)
    if pos.size == 0:
        return float("inf")
    k = int(pos[0])
    if k == 0:
        return float(grid[0])
    return float(optimize.brentq(lambda v: float(h(np.array([v]))[0]), grid[k - 1], grid[k],
                                 xtol=1e-9, rtol=1e-12))


def bernoulli_n_star(delta: Any, *, psi: Any, sigma_d: Any = None, alpha: Any = 0.05,
                     power: Any = 0.8, n_plan: Any) -> float | np.ndarray:
    """Paired N at which the e-process resolves ``delta`` with the target power.

    Parameters
    ----------
    delta : float or array_like
        Difference to resolve (``p10 - p01``), non-zero.
    psi : float or array_like
        Discordance ``p10 + p01``, in (0, 1], ``>= |delta|``.
    sigma_d : float or array_like, optional
        SD of the estimate times sqrt(N) (default ``sqrt(psi - delta^2)``, the
        paired SD of a cell difference).  The verdict table passes the SD of
        its estimand (``sigma_d sqrt(N sum w_c^2)``).
    alpha : float, default 0.05
    power : float, default 0.8
    n_plan : float
        The benchmark's N the prior is tuned for (``d_plan = n_plan psi``).

    Returns
    -------
    float or numpy.ndarray
        The smallest N with ``|delta| sqrt(N) / sigma_d >= z_any(N) + z_{1-beta}``,
        ``z_any(N) = max(c(N psi) / sqrt(N psi), z_{1-alpha/2})`` (not rounded).

    Raises
    ------
    DesignError
        delta = 0, psi outside (0, 1] or below |delta|, non-positive sigma_d
        or n_plan, alpha or power out of range.

    Notes
    -----
    The last-point rule of :func:`mixrank.design.anytime.anytime_n_star`:
    at N the statistic ``S_N`` has mean ``N delta`` and SD ``sigma_d sqrt(N)``
    and must exceed the boundary with probability ``1 - beta`` (normal
    approximation; crossings before N only add power).  The floor at
    ``z_{1-alpha/2}`` keeps the anytime N* at or above the fixed-n N*.
    Solved by a geometric scan and Brent's method; validated against the
    defining equation (tests).
    """
    d = np.abs(check_delta(delta))
    ps = _psi(psi)
    if np.any(np.broadcast_to(ps < d, np.broadcast(ps, d).shape)):
        raise DesignError(f"psi (the discordance p10 + p01) must be at least |delta| = |p10 - "
                          f"p01|; received psi={psi!r}, delta={delta!r}.")
    sd = (np.sqrt(np.maximum(ps - d**2, 0.0)) if sigma_d is None else
          check_positive("sigma_d", sigma_d, hint="sigma_d is the SD of one paired difference."))
    al = check_alpha(alpha)
    pw = check_power(power, al)
    plan = check_positive("n_plan", n_plan, hint="n_plan is the benchmark's N.")
    a = np.asarray(tune_beta(plan * ps, alpha=al))

    def one(dd, ss, p, aa, alv, zb):
        if ss <= 0:
            return 0.0
        return n_star_effect(dd / ss, p, aa, alv, zb)

    return as_result(np.vectorize(one, otypes=[float])(d, sd, ps, a, al, z_quantile(pw)))


def _ternary(d: np.ndarray) -> np.ndarray:
    ok = np.isin(d, (-1.0, 0.0, 1.0))
    if not np.all(ok):
        i = int(np.flatnonzero(~ok)[0])
        raise DataError(
            f"the Bernoulli e-process needs paired 0/1 scores (differences in {{-1, 0, 1}}); "
            f"position {i} has difference {d[i]!r}. Use monitor(anytime='normal') for continuous scores."
        )
    return d


def monitor_bernoulli(d: np.ndarray, *, alpha: float = 0.05,
                      d_plan: float | None = None) -> pd.DataFrame:
    """Monitor paired 0/1 outcomes with the Bernoulli mixture e-process.

    Called by :func:`mixrank.design.anytime.monitor` with ``anytime="bernoulli"``.

    Parameters
    ----------
    d : numpy.ndarray
        Differences ``x - y`` in {-1, 0, 1}, in arrival order.
    alpha : float, default 0.05
    d_plan : float, optional
        Discordant cells the prior is tuned for, fixed before the data; default
        :data:`DEFAULT_D_PLAN` (data-independent, so the path of the first n
        cells is the same whatever comes after them; see Notes).

    Returns
    -------
    pandas.DataFrame
        One row per cell: ``n`` (cells so far), ``estimate`` (``S_n / n``),
        ``sum`` (``S_n``), ``discordant`` (D_n), ``log_e_value`` (log E_n),
        ``boundary`` (the boundary on ``|S_n|`` at D_n; inf while no run of
        discordant cells can reach it), ``crossed`` (``E_n >= 1/alpha``).
        ``attrs["mixrank"]``: ``method`` ("bernoulli_mixture"),
        ``resolved_at``, ``alpha``, ``d_plan``, ``a`` (Beta parameter),
        ``inflation`` (z-equivalent threshold at d_plan over z_{1-alpha/2}).

    Raises
    ------
    DataError
        A difference outside {-1, 0, 1}.
    DesignError
        alpha outside (0, 1); non-positive d_plan.

    Notes
    -----
    The prior is fixed before the data (``d_plan`` or :data:`DEFAULT_D_PLAN`):
    a prior tuned on the stream's own discordant count is valid for one look
    at the whole stream, but re-calling the monitor on each prefix re-tunes
    it at every look, and the union over looks of those differently tuned
    e-processes is not one test martingale (measured: 0.063-0.075 null
    crossings at alpha = 0.05 with a look every 10 items, issue 21).  With a
    fixed prior ``monitor(d[:n])`` is the first n rows of ``monitor(d)``.
    Validated by seeded null simulation (10,000 paths; re-called every 10
    items, tests/design/test_monitor_fixed_prior.py) and against
    :func:`bernoulli_log_e` (tests).
    """
    d = _ternary(np.asarray(d, dtype=float))
    al = float(check_alpha(alpha))
    disc = np.cumsum(d != 0).astype(float)
    s_n = np.cumsum(d)
    steps = np.arange(1, d.size + 1)
    plan: float | None = DEFAULT_D_PLAN if d_plan is None else float(check_positive(
        "d_plan", d_plan, hint="d_plan is the planned number of discordant cells."))
    log_e = np.zeros(d.size)
    bound = np.full(d.size, np.inf)
    a = c_plan = float("nan")
    if plan is not None:
        a = float(tune_beta(plan, alpha=al))
        pos = disc > 0
        log_e[pos] = _log_e(s_n[pos], disc[pos], np.full(int(pos.sum()), a))
        bound[pos] = _threshold(disc[pos], np.full(int(pos.sum()), a), float(np.log(1 / al)))
        c_plan = float(_threshold(np.array(plan), np.array(a), float(np.log(1 / al))))
    crossed = log_e >= np.log(1.0 / al)
    hits = np.flatnonzero(crossed)
    table = pd.DataFrame({"n": steps, "estimate": s_n / steps, "sum": s_n,
                          "discordant": disc.astype(int), "log_e_value": log_e,
                          "boundary": bound, "crossed": crossed})
    return tidy(table, method="bernoulli_mixture", resolved_at=int(hits[0]) + 1 if hits.size
                else None, alpha=al, d_plan=plan, a=a,
                mixing="Beta(a, a) on P(A right | discordant)",
                inflation=(c_plan / np.sqrt(plan) / float(z_upper(al / 2))
                           if plan is not None else float("nan")))
