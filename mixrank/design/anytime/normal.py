"""Anytime-valid resolution: the two-sided normal-mixture boundary (design stage).

Stage: design (needs no fitted model).
Inputs: a planned size ``n`` (or ``n_plan``), the SD of a paired difference,
``alpha``; for :func:`monitor` a stream of paired outcomes (two arrays) or of
already-formed differences.
Outputs: floats (boundaries, inflation factors, anytime N*) and, from
:func:`monitor`, a tidy per-step table.
Contents (docs/methods.md §6, "Anytime-valid"): :func:`tune_rho0` (the
mixing parameter that makes the boundary tightest at the benchmark's N),
:func:`anytime_threshold`, :func:`anytime_inflation`, :func:`anytime_n_star`
and :func:`monitor`.

The boundary (Howard, Ramdas, McAuliffe & Sekhon 2021, eq. (14)): with S_n the
running sum of paired differences and V_n its variance process, reject
``H0: delta = 0`` at the first n with

    |S_n| >= sqrt((V_n + rho0) * log((V_n + rho0) / (rho0 * alpha^2))).

It is Ville's inequality applied to the normal-mixture martingale
``sqrt(rho0 / (V + rho0)) exp(S^2 / (2 (V + rho0)))``, so for 1-sub-Gaussian
increments with known variance the probability of *ever* crossing under H0 is
at most alpha.
"""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np
import pandas as pd
from scipy import optimize

from mixrank._deprecate import renamed
from mixrank._util import tidy
from mixrank.design.anytime.bernoulli import monitor_bernoulli
from mixrank.design.checks import (
    as_result,
    check_alpha,
    check_delta,
    check_positive,
    check_power,
    read_numbers,
    z_quantile,
    z_upper,
)
from mixrank.errors import DataError, DesignError, OptionError

#: The benchmark size the monitor is tuned for when no ``n_plan`` is given
#: (data-independent; docs/anytime.md, "A plan fixed before the data").
DEFAULT_N_PLAN = 1000.0
#: Discordance share that turns ``n_plan`` into the Bernoulli prior's planned
#: discordant cells when ``d_plan`` is not given (a planning value, never the
#: stream's own share).
PLAN_DISCORDANCE = 0.25
#: Values of ``monitor(anytime=)`` (and ``resolution(anytime=)``).
KINDS = ("auto", "normal", "bernoulli")

__all__ = [
    "DEFAULT_N_PLAN",
    "PLAN_DISCORDANCE",
    "KINDS",
    "tune_rho0",
    "anytime_threshold",
    "anytime_inflation",
    "anytime_n_star",
    "monitor",
]


def anytime_x_star(alpha: Any) -> np.ndarray:
    """Root x > 1 of ``x - 1 - log x = 2 log(1/alpha)``.

    At the optimal rho0, ``(V + rho0) / rho0 = x`` and the squared z-equivalent
    boundary ``f(V)^2 / V`` equals x.
    """
    def one(a: float) -> float:
        target = 2.0 * np.log(1.0 / a)
        hi = 2.0 + 2.0 * target
        return optimize.brentq(lambda x: x - 1.0 - np.log(x) - target, 1.0 + 1e-12, hi,
                               xtol=1e-14, rtol=1e-14)

    return np.vectorize(one, otypes=[float])(alpha)


def tune_rho0(n: Any, *, sigma: Any = 1.0, alpha: Any = 0.05,
              approx: bool = False) -> float | np.ndarray:
    """Mixing parameter rho0 that makes the boundary tightest at ``V = n sigma^2``.

    Parameters
    ----------
    n : float or array_like
        The benchmark's N (planned number of paired cells), > 0.
    sigma : float, default 1
        SD of one paired difference, > 0.
    alpha : float, default 0.05
        Level, in (0, 1).
    approx : bool, default False
        Use Howard et al.'s closed-form approximation instead of the exact
        minimiser.

    Returns
    -------
    float or numpy.ndarray
        rho0 (in the units of V, i.e. of sigma^2 times observations).

    Raises
    ------
    DesignError
        ``n <= 0``, ``sigma <= 0`` or alpha outside (0, 1).

    Notes
    -----
    Write ``m = n sigma^2`` and ``x = (m + rho0) / rho0``.  The boundary at m
    is ``m x / (x - 1) * (log x + L)`` with ``L = 2 log(1/alpha)``; setting its
    derivative to zero gives ``x - 1 - log x = L``.  The exact choice solves
    this by Brent's method and sets ``rho0 = m / (x* - 1)``; the closed form
    ``rho0 = m / (L + log(1 + L))`` (Howard et al. 2021; confseq
    ``TwoSidedNormalMixture::best_rho``) replaces log x* by log(1 + L).  At
    alpha = 0.05 the two rho0 differ by 3.5%, but the boundary is flat at its
    minimum and the thresholds at N differ by 0.003%.  At the exact optimum the boundary is
    ``sqrt(x* m)``: the z-equivalent threshold ``sqrt(x*)`` (3.035 at
    alpha = 0.05) no longer depends on N.

    Validated against confseq's reference value best_rho(100, 0.05) =
    12.60056 (approx=True) and a numerical minimisation (tests).

    References
    ----------
    Howard, S. R., Ramdas, A., McAuliffe, J. & Sekhon, J. (2021).
    Time-uniform, nonparametric, nonasymptotic confidence sequences.
    Ann. Statist. 49(2), 1055-1080.
    """
    nn = check_positive("n", n, hint="n is the planned number of paired cells.")
    s = check_positive("sigma", sigma, hint="sigma is the SD of one paired difference.")
    al = check_alpha(alpha)
    m = nn * s**2
    if approx:
        big_l = 2.0 * np.log(1.0 / al)
        return as_result(m / (big_l + np.log1p(big_l)))
    return as_result(m / (anytime_x_star(al) - 1.0))


@overload
def _boundary(v: float, rho0: float, alpha: float) -> float: ...
@overload
def _boundary(v: np.ndarray, rho0: np.ndarray, alpha: np.ndarray | float) -> np.ndarray: ...
def _boundary(v: np.ndarray | float, rho0: np.ndarray | float,
              alpha: np.ndarray | float) -> np.ndarray | float:
    return np.sqrt((v + rho0) * (np.log1p(v / rho0) + 2.0 * np.log(1.0 / alpha)))


def _rho0_for(rho0: Any, n_plan: Any, n: np.ndarray, s: np.ndarray, al: np.ndarray) -> np.ndarray:
    if rho0 is not None:
        if n_plan is not None:
            raise DesignError(
                f"pass either rho0 or n_plan, not both; received rho0={rho0!r}, "
                f"n_plan={n_plan!r}."
            )
        return check_positive("rho0", rho0, hint="rho0 is the mixing parameter (units of V).")
    plan = n if n_plan is None else check_positive(
        "n_plan", n_plan, hint="n_plan is the benchmark's N.")
    return np.asarray(tune_rho0(plan, sigma=s, alpha=al))


def anytime_threshold(n: Any, *, sigma: Any = 1.0, alpha: Any = 0.05, rho0: Any = None,
                      n_plan: Any = None) -> float | np.ndarray:
    """Anytime-valid boundary on ``|S_n|`` after n paired observations.

    Parameters
    ----------
    n : float or array_like
        Number of paired observations so far, > 0.
    sigma : float, default 1
        SD of one paired difference (V_n = n sigma^2), > 0.
    alpha : float, default 0.05
        Level, in (0, 1).
    rho0 : float, optional
        Mixing parameter (units of V).  Default: :func:`tune_rho0` at
        ``n_plan`` (or at ``n`` itself when n_plan is None).
    n_plan : float, optional
        The benchmark's N the boundary is tuned for.

    Returns
    -------
    float or numpy.ndarray
        ``sqrt((V_n + rho0) log((V_n + rho0) / (rho0 alpha^2)))``.

    Raises
    ------
    DesignError
        Non-positive n, sigma, rho0 or n_plan; alpha outside (0, 1); both
        rho0 and n_plan given.

    Notes
    -----
    Two-sided normal mixture of Howard et al. (2021), eq. (14); see the
    module docstring.  Validated against confseq's reference value
    ``bound(v=100, alpha=0.05)`` = 30.35209 at rho0 = best_rho(100, 0.05)
    (tests).

    References
    ----------
    Howard, S. R., Ramdas, A., McAuliffe, J. & Sekhon, J. (2021). Ann.
    Statist. 49(2), 1055-1080.
    """
    nn, s, al = _n_sigma_alpha(n, sigma, alpha)
    r0 = _rho0_for(rho0, n_plan, nn, s, al)
    return as_result(_boundary(nn * s**2, r0, al))


def anytime_inflation(n: Any, alpha: Any = 0.05, *, sigma: Any = 1.0, rho0: Any = None,
                      n_plan: Any = None) -> float | np.ndarray:
    """Ratio of the anytime-valid z-equivalent threshold to ``z_{1-alpha/2}``.

    Parameters
    ----------
    n : float or array_like
        Number of paired observations, > 0.
    alpha : float, default 0.05
        Level, in (0, 1).
    sigma, rho0, n_plan
        As in :func:`anytime_threshold`.

    Returns
    -------
    float or numpy.ndarray
        ``anytime_threshold(n) / (sigma sqrt(n)) / z_{1-alpha/2}`` (> 1).

    Raises
    ------
    DesignError
        As :func:`anytime_threshold`.

    Notes
    -----
    With rho0 tuned at n itself (the default) the inflation is
    ``sqrt(x*) / z_{1-alpha/2}`` whatever n is (1.549 at alpha = 0.05; see
    :func:`tune_rho0`).  With rho0 fixed (tuned for ``n_plan``) the inflation
    is smallest at n_plan and grows slowly, like ``sqrt(log n)``, beyond it.
    Validated against the closed form (tests).

    References
    ----------
    Howard, S. R., Ramdas, A., McAuliffe, J. & Sekhon, J. (2021). Ann.
    Statist. 49(2), 1055-1080.
    """
    nn, s, al = _n_sigma_alpha(n, sigma, alpha)
    thr = np.asarray(anytime_threshold(nn, sigma=s, alpha=al, rho0=rho0, n_plan=n_plan))
    return as_result(thr / (s * np.sqrt(nn)) / z_upper(al / 2))


def anytime_n_star(delta: Any, sigma_d: Any, *, alpha: Any = 0.05, power: Any = 0.8,
                   n_plan: Any = None, rho0: Any = None) -> float | np.ndarray:
    """Paired N at which an anytime-valid monitor resolves ``delta`` with the target power.

    Parameters
    ----------
    delta : float or array_like
        Difference to resolve, non-zero.
    sigma_d : float or array_like
        SD of one paired difference, > 0.
    alpha : float, default 0.05
        Level, in (0, 1).
    power : float, default 0.8
        Target power, in (alpha, 1).
    n_plan : float, optional
        Tune rho0 for this N (fixed boundary).  Default: rho0 tuned at the
        solved N itself (the boundary is tightest where it is needed).
    rho0 : float, optional
        Fixed mixing parameter instead of ``n_plan``.

    Returns
    -------
    float or numpy.ndarray
        The smallest N with ``|delta| N >= b(N) + z_{1-beta} sigma_d sqrt(N)``,
        ``b`` the boundary at ``V = N sigma_d^2`` (not rounded).

    Raises
    ------
    DesignError
        delta = 0, sigma_d <= 0, alpha outside (0, 1), power outside
        (alpha, 1), bad rho0/n_plan.

    Notes
    -----
    ``E S_N = delta N`` and ``SD(S_N) = sigma_d sqrt(N)``, so the condition
    says that the final-time statistic exceeds the boundary with probability
    ``1 - beta`` (normal approximation).  This "last-point rule" ignores
    crossings before N and so is conservative (the anytime power is at least
    the target).  With rho0 tuned at N the solution is closed-form,
    ``N = ((sqrt(x*) + z_{1-beta}) sigma_d / delta)^2`` (``x*`` from
    :func:`tune_rho0`); with a fixed rho0 the smallest root is found by a
    geometric scan followed by Brent's method.  Compared with the fixed-n
    N*, the factor is ``((sqrt(x*) + z_{1-beta}) / (z_{1-alpha/2} + z_{1-beta}))^2``
    (1.92 at the defaults).  Validated against the defining equation and a
    fixed-rho0 consistency check (tests).

    References
    ----------
    Howard, S. R., Ramdas, A., McAuliffe, J. & Sekhon, J. (2021). Ann.
    Statist. 49(2), 1055-1080.
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.
    """
    d = np.abs(check_delta(delta))
    s = check_positive("sigma_d", sigma_d, hint="sigma_d is the SD of one paired difference.")
    al = check_alpha(alpha)
    pw = check_power(power, al)
    zb = z_quantile(pw)
    if rho0 is None and n_plan is None:
        return as_result(((np.sqrt(anytime_x_star(al)) + zb) * s / d) ** 2)
    if rho0 is not None and n_plan is not None:
        raise DesignError(
            f"pass either rho0 or n_plan, not both; received rho0={rho0!r}, n_plan={n_plan!r}."
        )
    if rho0 is not None:
        r0 = check_positive("rho0", rho0, hint="rho0 is the mixing parameter (units of V).")
    else:
        plan = check_positive("n_plan", n_plan, hint="n_plan is the benchmark's N.")
        r0 = np.asarray(tune_rho0(plan, sigma=s, alpha=al))

    def one(dd: float, ss: float, a: float, b: float, r: float) -> float:
        def h(n1: float) -> float:  # standardized margin at N
            return dd * np.sqrt(n1) / ss - _boundary(n1 * ss**2, r, a) / (ss * np.sqrt(n1)) - b

        start = ((np.sqrt(anytime_x_star(a)) + b) * ss / dd) ** 2  # the tuned-at-N solution
        grid = start * np.geomspace(1e-6, 1e12, 2000)
        vals = np.array([h(g) for g in grid])
        pos = np.nonzero(vals >= 0)[0]
        if len(pos) == 0:  # pragma: no cover - h grows like sqrt(N)
            raise DesignError("no N up to 1e12 x the tuned solution reaches the target power.")
        k = pos[0]
        if k == 0:
            return float(grid[0])
        return optimize.brentq(h, grid[k - 1], grid[k], xtol=1e-10, rtol=1e-13)

    return as_result(np.vectorize(one, otypes=[float])(d, s, al, zb, r0))


def _n_sigma_alpha(n: Any, sigma: Any, alpha: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The checked ``n`` (paired observations), ``sigma`` and ``alpha`` of a boundary."""
    return (check_positive("n", n, hint="n is the number of paired observations."),
            check_positive("sigma", sigma, hint="sigma is the SD of one paired difference."),
            check_alpha(alpha))


def _differences(x: Any, y: Any) -> np.ndarray:
    def vec(name: str, v: Any) -> np.ndarray:
        a = read_numbers(v, f"{name} must be a 1-D array of numbers (0/1 scores, continuous "
                         f"scores or differences); received {type(v).__name__} that cannot be "
                         "read as numbers.", DataError)
        if a.ndim != 1 or a.size == 0:
            raise DataError(
                f"{name} must be a non-empty 1-D array; received shape {a.shape}. Pass one "
                f"value per paired cell, in the order the cells arrived."
            )
        bad = ~np.isfinite(a)
        if np.any(bad):
            i = int(np.nonzero(bad)[0][0])
            raise DataError(
                f"{name} has a missing or non-finite value at position {i} ({a[i]!r}); "
                f"expected finite scores. Drop unpaired cells before monitoring."
            )
        return a

    dx = vec("x", x)
    if y is None:
        return dx
    dy = vec("y", y)
    if dx.shape != dy.shape:
        raise DataError(
            f"x and y must be paired (same length); received {dx.size} and {dy.size} values."
        )
    return dx - dy


def monitor(x: Any, y: Any = None, *, alpha: float = 0.05, sigma: float | None = None,
            n_plan: float | None = None, rho0: float | None = None,
            variance: Literal["null", "sample"] = "null",
            anytime: Literal["auto", "normal", "bernoulli"] = "auto",
            d_plan: float | None = None, kind: str | None = None) -> pd.DataFrame:
    """Monitor a stream of paired outcomes with an anytime-valid boundary.

    Parameters
    ----------
    x : array_like
        Scores of model A per paired cell, in arrival order (0/1 or
        continuous), or the differences A - B when ``y`` is None.
    y : array_like, optional
        Scores of model B on the same cells.
    alpha : float, default 0.05
        Level, in (0, 1).
    sigma : float, optional
        Known SD of one paired difference.  Default: estimated from the
        differences seen so far (a plug-in; see ``variance``).
    n_plan : float, optional
        The benchmark's N the boundary is tuned for, fixed before the data;
        default :data:`DEFAULT_N_PLAN` (data-independent: the path of the
        first n items never depends on how many items follow, so the monitor
        may be re-called on every prefix; docs/anytime.md).
    rho0 : float, optional
        Fixed mixing parameter in units of V (overrides the tuning).
    variance : {"null", "sample"}, default "null"
        How sigma is estimated when it is not given: ``"null"`` -- the running
        paired variance under H0 (delta = 0), ``sigma_hat_n^2 = sum d_i^2 / n``;
        ``"sample"`` -- the running sample variance (ddof = 1).  Ignored when
        ``sigma`` is given.
    anytime : {"auto", "normal", "bernoulli"}, default "auto"
        Which boundary (the one public monitor of both).  ``"bernoulli"``: the paired-Bernoulli mixture e-process
        (:func:`mixrank.design.anytime.bernoulli.monitor_bernoulli`; 0/1 scores,
        prior tuned for ``d_plan`` discordant cells, else ``n_plan`` times
        :data:`PLAN_DISCORDANCE`, else
        :data:`~mixrank.design.anytime.bernoulli.DEFAULT_D_PLAN`); ``"normal"``: the normal-mixture
        boundary below; ``"auto"``: bernoulli when every difference is -1, 0
        or 1 and neither ``sigma`` nor ``rho0`` is given, normal otherwise.
    d_plan : float, optional
        Bernoulli e-process only: the planned number of discordant cells its
        prior is tuned for (overrides ``n_plan``).
    kind : str, optional
        Former name of ``anytime`` (the one keyword of the anytime boundary,
        as ``resolution(anytime=)`` and ``--anytime``); works for one release,
        with a :class:`~mixrank.errors.MixrankDeprecationWarning`.

    Returns
    -------
    pandas.DataFrame
        For the Bernoulli e-process the columns of
        :func:`~mixrank.design.anytime.bernoulli.monitor_bernoulli` (``n, estimate, sum,
        discordant, log_e_value, boundary, crossed``).  For the normal mixture one row per
        observation, columns:

        * ``n`` -- observations so far (1, 2, ...);
        * ``estimate`` -- running mean difference ``S_n / n``;
        * ``sum`` -- ``S_n``;
        * ``variance`` -- the variance process ``V_n = n sigma^2`` (or
          ``n sigma_hat_n^2``);
        * ``boundary`` -- the boundary on ``|S_n|`` (NaN while the running
          SD is undefined or zero);
        * ``crossed`` -- ``|S_n| >= boundary`` at this step.

        ``attrs["mixrank"]`` holds ``resolved_at`` (first n that crossed, or
        None), ``alpha``, ``sigma`` (None when estimated), ``variance_process``
        ("known", "null" or "sample"), ``n_plan``, ``rho0`` (None when it scales with
        the running variance), ``rho0_per_variance`` and ``inflation`` (the
        z-equivalent inflation at n_plan).

    Raises
    ------
    DataError
        x / y not 1-D numeric, empty, non-finite, or of different lengths.
    DesignError
        alpha outside (0, 1); non-positive sigma, n_plan or rho0; both rho0
        and n_plan; unknown ``variance``.

    Notes
    -----
    ``S_n = sum_{i<=n} d_i``; reject ``delta = 0`` at the first n with
    ``|S_n| >= sqrt((V_n + rho0) log((V_n + rho0) / (rho0 alpha^2)))``
    (Howard et al. 2021, eq. (14); docs/methods.md §6).  With known sigma,
    ``V_n = n sigma^2`` and ``rho0 = tune_rho0(n_plan, sigma)``: exact
    time-uniform level for Gaussian differences, and for bounded ones
    asymptotically.
    With sigma estimated, ``V_n = n sigma_hat_n^2`` and rho0 is tuned in
    the same units (``rho0 = r sigma_hat_n^2``, ``r = n_plan / (x* - 1)``),
    i.e. the rule is the studentised
    ``|S_n| / sigma_hat_n >= sqrt((n + r) log((n + r) / (r alpha^2)))``.

    Plug-in caveat.  An estimated sigma is not a predictable variance
    process, so Ville's inequality no longer applies verbatim.  The default
    ``variance="null"`` estimates the variance under H0 (about 0, not about
    the running mean), which makes ``V_n = sum d_i^2`` the self-normalising
    process for which ``exp(lambda S_n - lambda^2 V_n / 2)`` is a
    supermartingale whenever the differences are conditionally symmetric
    about 0 -- as paired differences of exchangeable models are under
    McNemar's null p10 = p01 (de la Pena 1999; Howard et al. 2020, the
    sub-Gaussian case for conditionally symmetric increments);
    only the scaling of rho0 by sigma_hat_n stays a plug-in.  Under the
    alternative it inflates V_n by the factor (1 + delta^2 / sigma^2), a
    negligible loss for small effects.  ``variance="sample"`` (the running
    sample variance) is the literal plug-in: early steps with a tiny sample
    SD behave like a Student t with few degrees of freedom, and in our
    simulations (N = 1000, 4000 runs) its null crossing rate was about
    alpha for Gaussian differences (0.058 at alpha = 0.05) against 0.017 for
    ``"null"``.  Steps where the estimated SD is still zero (all
    differences 0, or for ``"sample"`` all equal) cannot cross.  A fixed
    ``rho0`` is used as given in the units of V.

    Validated by seeded simulation: under the null the crossing frequency up
    to N stays below alpha (known and estimated sigma), and real effects are
    detected (tests).

    References
    ----------
    Howard, S. R., Ramdas, A., McAuliffe, J. & Sekhon, J. (2021). Ann.
    Statist. 49(2), 1055-1080.
    Howard, S. R., Ramdas, A., McAuliffe, J. & Sekhon, J. (2020). Time-uniform
    Chernoff bounds via nonnegative supermartingales. Probab. Surveys 17.
    de la Pena, V. H. (1999). A general class of exponential inequalities for
    martingales and ratios. Ann. Probab. 27(1), 537-564.
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.

    Examples
    --------
    >>> import numpy as np
    >>> import mixrank
    >>> a = np.tile([1, 1, 0, 1, 1, 1, 0, 1], 25)     # 0/1 scores of two models on 200 cells
    >>> b = np.tile([0, 1, 0, 0, 1, 0, 0, 1], 25)     # in arrival order
    >>> m = mixrank.monitor(a, b, d_plan=50)          # 0/1 scores: the Bernoulli e-process
    >>> m.attrs["mixrank"]["method"], m.attrs["mixrank"]["resolved_at"]
    ('bernoulli_mixture', 25)
    >>> d = np.tile([1.0, 0.0, 0.5, 0.25], 50)        # continuous differences, known SD
    >>> mixrank.monitor(d, sigma=1.0).attrs["mixrank"]["resolved_at"]
    84
    """
    d = _differences(x, y)
    al = float(check_alpha(alpha))
    if np.ndim(alpha) != 0:
        raise DesignError(f"alpha must be a scalar; received shape {np.shape(alpha)}.")
    if kind is not None:
        anytime = renamed({"kind": kind}, "kind", "anytime", anytime, default="auto",
                          where="monitor")
    if anytime not in KINDS:
        raise OptionError(f"monitor(anytime={anytime!r}): expected one of {KINDS} (the "
                          "boundary: 'normal' mixture, 'bernoulli' e-process for 0/1 scores, "
                          "'auto').")
    if variance not in ("null", "sample"):
        raise DesignError(
            f"variance must be 'null' (running variance under H0, the default) or 'sample' "
            f"(running sample variance); received {variance!r}."
        )
    ternary = bool(np.all(np.isin(d, (-1.0, 0.0, 1.0))))
    if anytime == "bernoulli" or (anytime == "auto" and ternary and sigma is None
                                  and rho0 is None):
        if sigma is not None or rho0 is not None:
            raise DesignError("sigma and rho0 belong to the normal mixture; the Bernoulli "
                              "e-process needs no variance. Drop them or use anytime='normal'.")
        plan_d = d_plan
        if plan_d is None and n_plan is not None:     # the plan, never the stream's share
            plan_d = float(check_positive("n_plan", n_plan, hint="n_plan is the benchmark's "
                                          "N.")) * PLAN_DISCORDANCE
        return monitor_bernoulli(d, alpha=al, d_plan=plan_d)
    if d_plan is not None:
        raise DesignError("d_plan (planned discordant cells) belongs to the Bernoulli "
                          "e-process of 0/1 scores; for the normal mixture pass n_plan.")
    n = d.size
    steps = np.arange(1, n + 1, dtype=float)
    s_n = np.cumsum(d)
    if rho0 is not None and n_plan is not None:
        raise DesignError(
            f"pass either rho0 or n_plan, not both; received rho0={rho0!r}, n_plan={n_plan!r}."
        )
    plan = DEFAULT_N_PLAN if n_plan is None else float(check_positive(
        "n_plan", n_plan, hint="n_plan is the benchmark's N."))
    r_units = plan / (float(anytime_x_star(al)) - 1.0)
    r_fixed = None if rho0 is None else float(check_positive(
        "rho0", rho0, hint="rho0 is the mixing parameter (units of V)."))
    q_n = np.cumsum(d**2)
    if sigma is not None:
        s = float(check_positive("sigma", sigma, hint="sigma is the SD of one paired difference."))
        var = np.full(n, s**2)
    elif variance == "null":
        var = q_n / steps
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            var = (q_n - s_n**2 / steps) / (steps - 1.0)
        var[0] = np.nan  # no sample SD from one observation
        var[1:][var[1:] <= 1e-12 * q_n[1:] / steps[1:]] = 0.0  # rounding noise -> exactly 0
    v_n = steps * var
    r0 = np.full(n, r_fixed) if r_fixed is not None else r_units * var
    ok = np.isfinite(v_n) & np.isfinite(r0) & (r0 > 0)
    boundary = np.full(n, np.nan)
    boundary[ok] = _boundary(v_n[ok], r0[ok], np.float64(al))
    crossed = np.zeros(n, dtype=bool)
    crossed[ok] = np.abs(s_n[ok]) >= boundary[ok]
    hits = np.nonzero(crossed)[0]
    resolved_at = int(hits[0]) + 1 if hits.size else None
    table = pd.DataFrame({
        "n": steps.astype(int), "estimate": s_n / steps, "sum": s_n, "variance": v_n,
        "boundary": boundary, "crossed": crossed,
    })
    if r_fixed is None:
        infl = float(np.sqrt(anytime_x_star(al)) / z_upper(al / 2))
    elif sigma is not None:
        infl = float(anytime_inflation(plan, al, sigma=s, rho0=r_fixed))
    else:
        infl = None  # a fixed rho0 with an estimated SD has no fixed inflation
    return tidy(
        table, method="normal_mixture", resolved_at=resolved_at, alpha=al,
        sigma=None if sigma is None else float(sigma),
        variance_process="known" if sigma is not None else variance,
        n_plan=plan, rho0=r_fixed if r_fixed is not None else (
            r_units * float(sigma) ** 2 if sigma is not None else None),
        rho0_per_variance=None if r_fixed is not None else r_units, inflation=infl,
    )
