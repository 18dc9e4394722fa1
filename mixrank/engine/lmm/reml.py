"""Stage engine: profiled REML for the paired-difference model of one pair, as public stages.

Inputs: :class:`~mixrank.engine.structure.Structure`,
:class:`~mixrank.engine.structure.PairSums` and a
:class:`~mixrank.engine.control.Control`.  Outputs: :class:`RemlFit`
(variance components, GLS mean, its variance, Satterthwaite df, REML
criterion, convergence diagnostics).

The stages mirror lme4's ``mkLmerDevfun -> optimizeLmer -> checkConv ->
mkMerMod`` and can be called one by one:

1. :func:`~mixrank.engine.lmm.objective.make_objective` -- the REML criterion as
   a function of ``psi = (sigma_r / sigma)^2`` alone (:mod:`mixrank.engine.lmm.objective`);
2. :func:`optimise` -- in dense mode first an exact Newton search
   (:func:`mixrank.engine.lmm.newton.projected_newton`: its one-term fast path, or
   from Henderson's method-1 estimates for several terms, docs/speed.md §3); then,
   without a KKT certificate, bounded L-BFGS-B over ``psi >= 0`` from the
   control's starts (moment estimates, lme4's default) and each boundary
   face; the REML criterion is the arbiter.  The gradient is analytic in dense mode
   (:mod:`mixrank.engine.lmm.reml_grad`), central differences in sparse mode;
3. :func:`check_convergence` -- the KKT conditions of the bounded problem
   (zero gradient on interior components, non-negative on components at 0);
4. :func:`~mixrank.engine.lmm.satterthwaite.satterthwaite` -- the df of ``Var(mu_hat)``;
5. :func:`package` -- estimates on the caller's scale and order.

:func:`optimise` and :func:`check_convergence` take any
:class:`~mixrank.engine.lmm.objective.RemlObjective`: they are also the
optimiser and certificate of the model x covariate fit
(:func:`mixrank.engine.lmm.reml_fixed.fit_reml_fixed`).
:func:`fit_reml` composes them.  Notes: docs/engine.md §1 (stages), §2
(one start with a KKT certificate, scaling).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache

import numpy as np
import scipy.optimize as opt

from ...errors import DesignError
from ..control import DEFAULT_CONTROL, Control
from ..records import RemlFit
from ..structure import PairSums, Structure
from .newton import henderson_start, newton_bounded, newton_one_term
from .objective import (
    LOG2PI,
    Objective,
    RemlObjective,
    deviance_and_gradient,
    full_deviance,
    make_objective,
    moment_psi,
    profiled_deviance,
    quad_forms,
)
from .satterthwaite import fd_gradient_psi, satterthwaite

__all__ = ["RemlFit", "Optimum", "Convergence", "fit_reml", "optimise", "check_convergence",
           "package", "moment_start", "moment_psi", "kkt_verdict", "make_objective", "quad_forms", "profiled_deviance",
           "deviance_and_gradient", "full_deviance", "LOG2PI"]


@dataclass(frozen=True)
class Optimum:
    """Result of :func:`optimise`: ``psi`` in block order, its criterion, evaluations used."""

    psi: np.ndarray
    criterion: float
    nfev: int
    hit_limit: bool = False         # an optimisation stopped at max_iterations
    convergence: Convergence | None = None  # the certificate, when optimise checked it


@dataclass(frozen=True)
class Convergence:
    """Result of :func:`check_convergence`."""

    converged: bool
    gradient: float                 # max |d criterion / d psi| over interior components
    kkt_ok: bool                    # derivative >= -tol on every component at 0
    message: str


def moment_start(obj: RemlObjective) -> np.ndarray:
    """One-way ANOVA moment estimates of ``psi = sigma_r^2 / sigma^2``, each term alone."""
    return obj.moment_start()


def _minimise(obj: RemlObjective, x0: np.ndarray, control: Control,
              fixed_zero: tuple[int, ...] = ()) -> tuple[np.ndarray, float, int, bool]:
    """L-BFGS-B over ``psi >= 0`` (components in ``fixed_zero`` held at 0).

    The variables are ``psi / scale`` with ``scale`` the start (floored at
    a tenth of its largest entry): components an order of magnitude apart
    otherwise make the first quasi-Newton steps poorly scaled.  Uses the
    objective's analytic gradient where it has one, central finite
    differences of the criterion otherwise.  Returns ``(psi, criterion,
    evaluations, stopped at the iteration limit)``.
    """
    free = [i for i in range(len(x0)) if i not in fixed_zero]
    nfev = 0
    if not free:
        return np.zeros(len(x0)), obj.deviance(np.zeros(len(x0))), 1, False
    start = np.maximum(x0[free], 0.0)
    scale = np.maximum(start, max(0.1 * float(start.max()), 1e-3))

    def expand(z):
        x = np.zeros(len(x0))
        x[free] = np.maximum(z, 0.0) * scale
        return x

    def fun_and_jac(z):
        nonlocal nfev
        fg = obj.value_grad(expand(z)) if obj.analytic else None
        if fg is not None:
            nfev += 1
            return fg[0], fg[1][free] * scale
        nfev += 1 + 2 * len(z)
        zc = np.maximum(z, 0.0)
        return obj.deviance(expand(zc)), scale * fd_gradient_psi(
            lambda p: obj.deviance(expand(p / scale)), zc * scale, step=control.fd_gradient_step)

    res = opt.minimize(fun_and_jac, start / scale, jac=True, method="L-BFGS-B",
                       bounds=[(0.0, None)] * len(free),
                       options=dict(ftol=control.ftol, gtol=control.gtol,
                                    maxiter=control.max_iterations))
    return expand(res.x), float(res.fun), nfev, res.nit >= control.max_iterations


def _newton_start(obj: Objective, x0: Callable[[], np.ndarray], control: Control) -> np.ndarray:
    """Henderson's method-1 estimates where the first start is the moment one and they exist,
    else the first start ``x0()`` (computed only then)."""
    h = henderson_start(obj) if control.starts[0] == "moment" else None
    return x0() if h is None else h


def optimise(obj: RemlObjective, control: Control = DEFAULT_CONTROL,
             start: np.ndarray | None = None) -> Optimum:
    """Minimise the REML criterion over ``psi >= 0`` (cf. lme4's ``optimizeLmer``).

    From the first of ``control.starts`` (in dense mode by exact Newton, from
    Henderson's method-1 estimates when that start is ``"moment"`` and there
    are several terms); with ``control.certify``, stop there when
    :func:`check_convergence` certifies the optimum (KKT).
    Otherwise from the remaining starts, then (``control.check_faces``) on
    each boundary face through the best point (kept when better by more
    than ``control.boundary_tol``), then a polishing restart.

    ``start`` (``psi`` in block order, e.g. a fit of nearly the same data:
    the leave-one-out refits of docs/sensitivity.md, "Speed") replaces the
    first start; the certificate and the remaining starts are unchanged, so
    the optimum accepted is the same KKT point.
    """
    R = obj.R
    starts = {"moment": obj.moment_start, "default": lambda: np.ones(R)}
    nfev, limit = 0, False

    def run(x0: np.ndarray, fixed: tuple[int, ...] = ()) -> tuple[np.ndarray, float]:
        nonlocal nfev, limit
        x, fx, k, hit = _minimise(obj, x0, control, fixed)
        nfev += k
        limit |= hit
        return x, fx

    warm = start is not None and len(start) == R and bool(np.all(np.isfinite(start)))

    @cache
    def x0() -> np.ndarray:              # the first start, computed once and only when used
        return np.maximum(np.asarray(start, dtype=float), 0.0) if warm else \
            starts[control.starts[0]]()

    newton = None
    if obj.exact_hessian:                # exact Newton instead of L-BFGS-B (docs/speed.md §3)
        assert isinstance(obj, Objective)
        newton = newton_one_term(obj, float(x0()[0]), max_iterations=control.max_iterations) \
            if R == 1 else newton_bounded(obj, x0() if warm else _newton_start(obj, x0, control),
                                          max_iterations=control.max_iterations)
    if newton is not None:
        best = (newton[0], newton[1])
        nfev, limit = newton[2], newton[3]
    else:
        best = run(x0())
    if control.certify:
        first = Optimum(psi=best[0], criterion=best[1], nfev=nfev, hit_limit=limit)
        conv = check_convergence(obj, first, control)
        if conv.converged:
            return replace(first, convergence=conv)
    for name in control.starts[1:]:
        x, fx = run(starts[name]())
        if fx < best[1]:
            best = (x, fx)
    if control.check_faces and R > 1:
        for r in range(R):
            if best[0][r] > 0:
                x, fx = run(best[0], (r,))
                if fx < best[1] - control.boundary_tol:
                    best = (x, fx)
    x, fx = run(best[0])                 # polish: re-start from the best point
    if fx < best[1]:
        best = (x, fx)
    return Optimum(psi=best[0], criterion=best[1], nfev=nfev, hit_limit=limit)


def check_convergence(obj: RemlObjective, optimum: Optimum, control: Control = DEFAULT_CONTROL) -> Convergence:
    """KKT check of the optimum (cf. lme4's ``checkConv``).

    Interior components need ``|d criterion / d psi| < gradient_tol`` (scaled
    up by ``1 / min psi`` for small components); components at zero need a
    derivative ``>= -kkt_tol * max(1, |criterion|)``.  The gradient is the
    objective's analytic one where it has one, central differences otherwise.
    """
    psi, crit = optimum.psi, optimum.criterion
    fg = obj.value_grad(psi) if obj.analytic else None
    g = fg[1] if fg is not None else fd_gradient_psi(obj.deviance, psi, crit,
                                                      step=control.fd_gradient_step)
    return kkt_verdict(g, psi, crit, control, optimum.hit_limit)


def kkt_verdict(g: np.ndarray, psi: np.ndarray, crit: float, control: Control = DEFAULT_CONTROL,
                hit_limit: bool = False) -> Convergence:
    """The KKT test of :func:`check_convergence` given the gradient ``g`` in ``psi`` at the optimum.

    The one certificate of both fits (through :func:`check_convergence`).
    """
    # on Python floats: a pair has a handful of components, where numpy's per-call cost dominates
    gl, pl = g.tolist(), psi.tolist()
    floor = -control.kkt_tol * max(1.0, abs(crit))
    kkt_ok = not any(gi < floor for gi, p in zip(gl, pl) if not p > 0)
    gfree = [abs(gi) for gi, p in zip(gl, pl) if p > 0]
    gmax = (math.nan if any(math.isnan(x) for x in gfree) else max(gfree)) if gfree else 0.0
    scale = max(1.0, 1.0 / max(min(p for p in pl if p > 0) if gfree else 1.0, 1e-12))
    converged = kkt_ok and gmax < control.gradient_tol * scale
    if converged:
        msg = "ok"
    elif not kkt_ok:
        msg = f"KKT violated on a boundary component (gradient {g.min():.3g})"
    else:
        msg = f"gradient {gmax:.3g} not small at the optimum"
    if hit_limit and not converged:
        msg += f" (optimiser stopped at max_iterations={control.max_iterations})"
    return Convergence(converged=converged, gradient=gmax, kkt_ok=kkt_ok, message=msg)


def package(obj: Objective, optimum: Optimum, conv: Convergence, names: list[str] | tuple[str, ...],
            df: float) -> RemlFit:
    """Estimates at the optimum on the caller's order and scale (cf. lme4's ``mkMerMod``)."""
    st, n, R = obj.st, obj.n, obj.R
    theta_b = np.sqrt(optimum.psi)
    _, rx2, r2, mu = obj.core(theta_b)
    sigma2 = r2 / (n - 1)
    # block order -> caller's order
    theta_c = theta_b.copy() if st.order == tuple(range(R)) else theta_b[np.argsort(st.order)]
    variances = np.empty(R + 1)
    variances[:R] = sigma2 * theta_c ** 2
    variances[R] = sigma2
    boundary = tuple(names[i] for i, t in enumerate(theta_c.tolist()) if t == 0.0)
    return RemlFit(names=tuple(names) + ("residual",), variances=variances, theta=theta_c,
                   sigma=math.sqrt(sigma2), mu=mu, var_mu=sigma2 / rx2, df=df,
                   criterion=optimum.criterion, n=n, boundary=boundary, gradient=conv.gradient,
                   converged=conv.converged, message=conv.message, nfev=optimum.nfev,
                   theta_block=theta_b, block_names=st.names)


def _closed_form(obj: Objective) -> RemlFit:
    """No random term: the mean and sample variance."""
    ps, n = obj.ps, obj.n
    mu = ps.sum_d / n
    s2 = (ps.sumsq_d - n * mu * mu) / (n - 1)
    return RemlFit(names=("residual",), variances=np.array([s2]), theta=np.zeros(0),
                   sigma=math.sqrt(s2), mu=mu, var_mu=s2 / n, df=float(n - 1),
                   criterion=obj.deviance(np.zeros(0)), n=n, boundary=(), gradient=0.0,
                   converged=True, message="closed form", nfev=1)


def fit_reml(st: Structure, ps: PairSums, names: list[str] | tuple[str, ...], *,
             control: Control = DEFAULT_CONTROL,
             var_fn: Callable[[np.ndarray, float], float] | None = None,
             start: np.ndarray | None = None) -> RemlFit:
    """Fit the paired-difference model by profiled REML: the five stages in order.

    ``var_fn`` (theta in block order, sigma) replaces ``Var(mu_hat)`` as the
    variance whose Satterthwaite df is reported.  ``start``: a warm start
    (``psi`` in block order) for :func:`optimise`.

    Raises
    ------
    DesignError
        Fewer than two cells, or no residual variation (all differences equal).
    """
    obj = make_objective(st, ps)
    if obj.R == 0:
        return _closed_form(obj)
    optimum = optimise(obj, control, start)
    conv = optimum.convergence or check_convergence(obj, optimum, control)
    theta_b = np.sqrt(optimum.psi)
    sigma = math.sqrt(obj.core(theta_b)[2] / (obj.n - 1))
    if sigma * sigma < 1e-290:
        raise DesignError(
            f"the residual variance is estimated at 0 (sigma = {sigma:.3g}): the random terms "
            f"({', '.join(names)}) reproduce the differences exactly, so REML's likelihood is "
            "unbounded and no standard error follows. Drop the finest random term, or use "
            "method='aggregate'")
    df = satterthwaite(obj, theta_b, sigma, var_fn, control)[0]
    return package(obj, optimum, conv, names, df)
