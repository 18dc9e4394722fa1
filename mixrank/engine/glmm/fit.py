"""Stage engine: the binomial GLMM over all models at once (glmer's literal reading).

Inputs: a :class:`~mixrank.frame.Frame` of binomial data and its
:class:`~mixrank.formula.glmm_terms.GlmmFormula`.  Outputs: :class:`GlmmFit`
-- model effects on the logit scale with their full covariance, variance
components on the logit scale, the log-likelihood, deviance, AIC/BIC and
convergence/singularity diagnostics, and the shared random effects of every
cell (for the probability-scale contrasts).

The model, as ``lme4::glmer(formula, family = binomial, nAGQ = 0 | 1)``:
``k_i ~ Binomial(n_i, logit^-1(eta_i))``, ``eta = X beta + Z b``,
``b ~ N(0, Lam Lam')`` with ``Lam = diag(theta_r)`` per random intercept
term (the logit scale has no residual variance, so ``theta_r`` is the
term's standard deviation).  See docs/glmm.md §1-§4.

Contents: :class:`GlmmFit`, :func:`fit_glmm`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import (
    ConvergenceError,
    DesignError,
    GlmmConvergenceWarning,
    SingularFitWarning,
    SmallSampleWarning,
)
from ...formula.glmm_terms import GlmmFormula
from ...frame import Frame
from ..control import act
from .control import DEFAULT_GLMM_CONTROL, GlmmControl
from .optim import optimise
from .pirls import PirlsError
from .problem import (
    build_problem,
    check_separation,
    merge_exchangeable,
    model_groups,
    unit_levels,
)

__all__ = ["GlmmFit", "fit_glmm", "GlmmConvergenceWarning"]


@dataclass(frozen=True, eq=False)
class GlmmFit:
    """One binomial GLMM fit (engine record; :class:`~mixrank.results.GlmmResult` wraps it).

    Attributes
    ----------
    models : tuple of str
    nagq : int
    beta : ndarray (M,)
        Log-odds of each model at zero random effects (cell-means coding).
    vcov : ndarray (M, M)
        Covariance of ``beta``.
    terms : tuple of str
        Random terms as written, formula order.
    theta : ndarray
        Standard deviation of each term on the logit scale (same order).
    loglik, deviance, aic, bic : float
        As lme4: ``deviance = -2 loglik``; ``loglik`` includes the binomial
        coefficients when the response was counts.
    nobs : int
        Responses as glmer sees them (rows, or count rows).
    n_params : int
    converged : bool
    message : str
    gradient : float
        Max absolute gradient of the deviance over the free parameters.
    singular : tuple of str
        Terms with ``theta < 1e-4`` (lme4's ``isSingular``).
    hessian_ok : bool
        nAGQ = 1: the finite-difference Hessian was positive definite
        (else ``vcov`` is the nAGQ = 0 form, as lme4 falls back).
    nfev : int
        Penalised IRLS runs.
    cell_effects : ndarray (n_cells,)
        Sum of the conditional modes of the terms without the comparison
        factor at each cell of the frame (shared by all models).
    trials, successes : ndarray (M,)
        Per fixed-effect column (per model, or per (model, level) with a covariate).
    groups : ndarray of int (P, 2) or None
        ``model * x`` fits: the model index and covariate level index of each
        entry of ``beta`` (cell-means coding over the (model, level)
        combinations that have cells, docs/glmm.md §11); None otherwise (then
        ``beta[j]`` is model j).
    """

    models: tuple[str, ...]
    nagq: int
    beta: np.ndarray
    vcov: np.ndarray
    terms: tuple[str, ...]
    theta: np.ndarray
    loglik: float
    deviance: float
    aic: float
    bic: float
    nobs: int
    n_params: int
    converged: bool
    message: str
    gradient: float
    singular: tuple[str, ...]
    hessian_ok: bool
    nfev: int
    cell_effects: np.ndarray = field(repr=False)
    trials: np.ndarray = field(repr=False)
    successes: np.ndarray = field(repr=False)
    groups: np.ndarray | None = field(default=None, repr=False)
    #: ``model * x`` with a numeric ``x``: its name (``beta[:M]`` intercepts and
    #: ``beta[M:]`` slopes per model, docs/glmm.md §11); None otherwise
    slope: str | None = None

    def fixef(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """glmer's treatment coding: names, ``(Intercept), model<level>...`` and covariance
        (with a slope: then ``x, model<level>:x...``)."""
        M = len(self.models)
        T: np.ndarray = np.eye(M)
        T[1:, 0] = -1.0
        names = ["(Intercept)"] + [f"model{m}" for m in self.models[1:]]
        if self.slope is not None:
            T = np.kron(np.eye(2), T)
            names += [self.slope] + [f"model{m}:{self.slope}" for m in self.models[1:]]
        return names, T @ self.beta, T @ self.vcov @ T.T


def _cell_effects(frame: Frame, gf: GlmmFormula, prob, mode) -> np.ndarray:
    """Shared (model-free) random effects summed at every frame cell."""
    out = np.zeros(frame.n_cells)
    u = prob.expand_u(mode.u)
    start = 0
    for name, q, th in zip(prob.names, prob.total_levels().astype(int), mode.theta):
        if name in gf.spec.term_names:
            # codes of a model-free term are the frame's term codes (same encoding)
            out += th * u[start:start + q][frame.term_codes[name]]
        start += q
    return out


def fit_glmm(frame: Frame, gf: GlmmFormula, *, nagq: int = 1, nobs: int | None = None,
             log_choose: float = 0.0, control: GlmmControl = DEFAULT_GLMM_CONTROL,
             cell_level: np.ndarray | None = None,
             level_names: tuple[str, ...] | None = None,
             cell_x: np.ndarray | None = None) -> GlmmFit:
    """Fit the binomial GLMM of ``gf`` to ``frame`` (see module docstring).

    ``cell_level`` (with ``level_names``): the level of a categorical
    covariate at each cell, for ``model * x`` (one fixed effect per (model,
    level) combination with cells; docs/glmm.md §11).  ``cell_x``: the value
    of a numeric covariate at each cell, for ``model * x`` with numeric
    ``x`` (an intercept and a slope per model; docs/glmm.md §11).

    Raises
    ------
    DesignError
        ``nagq`` not 0 or 1; no random term.
    DataError
        Complete separation of a model (every trial succeeds or fails).
    ConvergenceError
        The penalised IRLS fails at every theta tried; with
        ``control.convergence="error"``, the optimiser's criterion not met.
    DesignError
        ``control.singular="error"`` and a singular fit;
        ``control.small_sample="error"`` and a term with few levels.

    Warns
    -----
    SingularFitWarning
        A term's standard deviation is below ``control.singular_tol``
        (boundary fit; ``control.singular="warning"``, the default).
    GlmmConvergenceWarning
        The optimiser's criterion was not met (the fit is returned;
        ``control.convergence="warning"``, the default).
    SmallSampleWarning
        ``control.small_sample="warning"`` and a random term whose grouping
        has fewer than ``control.min_units`` levels.
    """
    if nagq not in (0, 1):
        raise DesignError(f"nagq={nagq!r}; expected 0 (PIRLS over the model effects too) or 1 "
                          "(Laplace), as glmer's nAGQ; adaptive quadrature with more points is "
                          "not supported")
    prob = build_problem(frame, gf, cell_level)
    if cell_x is not None and prob.cell is not None:
        prob.slope = np.asarray(cell_x, dtype=np.float64)[prob.cell]
    groups = None
    names = None
    if cell_level is not None:
        groups = model_groups(frame, cell_level)[1]
        lv = level_names or tuple(str(i) for i in range(int(cell_level.max()) + 1))
        names = [f"{frame.models[j]} at {gf.by}={lv[x]}" for j, x in groups]
    check_separation(frame, prob, names)
    few = {t: q for t, q in unit_levels(frame, gf).items() if q < control.min_units}
    if few:
        act(control.small_sample, "few levels: " + ", ".join(
            f"(1|{t}) has {q} level(s) of its grouping" for t, q in few.items())
            + f" (fewer than min_units={control.min_units}); its variance and the contrasts' "
            "standard errors rest on few units", SmallSampleWarning, DesignError)
    prob = merge_exchangeable(prob)
    try:
        opt = optimise(prob, nagq, control)
    except PirlsError as exc:
        raise ConvergenceError(f"the binomial GLMM could not be fitted: {exc}. Check for "
                               "separation within random-effect levels or simplify the random "
                               "terms") from None
    order = [prob.names.index(t) for t in gf.term_names]
    theta = np.abs(opt.theta[order])
    terms = tuple(gf.term_names)
    singular = tuple(t for t, th in zip(terms, theta) if th < control.singular_tol)
    if singular:
        act(control.singular, f"boundary (singular) fit: variance of {', '.join(singular)} "
            "estimated at (nearly) 0 on the logit scale", SingularFitWarning, DesignError)
    if not opt.converged:
        act(control.convergence, f"the GLMM optimiser did not meet its criterion ({opt.message}; "
            f"max |gradient| {opt.gradient:.2g})" + ("; the estimates are returned, check "
                                                      "diagnostics()" if control.convergence
                                                      == "warning" else ""),
            GlmmConvergenceWarning, ConvergenceError)
    loglik = -0.5 * opt.deviance + log_choose
    n_params = len(opt.beta) + len(theta)
    n_resp = int(nobs if nobs is not None else frame.n_rows)
    M = prob.n_models
    return GlmmFit(
        models=frame.models, nagq=nagq, beta=opt.beta, vcov=opt.vcov, terms=terms, theta=theta,
        loglik=loglik, deviance=-2.0 * loglik, aic=-2.0 * loglik + 2 * n_params,
        bic=-2.0 * loglik + np.log(n_resp) * n_params, nobs=n_resp, n_params=n_params,
        converged=opt.converged, message=opt.message, gradient=opt.gradient, singular=singular,
        hessian_ok=opt.hessian_ok, nfev=opt.nfev,
        cell_effects=_cell_effects(frame, gf, prob, opt.mode),
        trials=np.bincount(prob.model, weights=prob.n, minlength=M),
        successes=np.bincount(prob.model, weights=prob.k, minlength=M), groups=groups,
        slope=None if cell_x is None else str(gf.by))
