"""Stage engine: outer optimisation of the binomial GLMM (nAGQ = 0 and 1).

Inputs: a :class:`~mixrank.engine.glmm.system.Problem`.  Outputs:
:class:`Optimum` -- theta, beta, the conditional mode, the Laplace deviance,
the covariance of beta and convergence diagnostics (docs/glmm.md §2-§4).

* nAGQ = 0: the deviance at the joint conditional mode of (u, beta) is
  minimised over theta alone -- up to two EM-type steps, then a projected
  quasi-Newton search with the exact gradient (docs/glmm.md §3);
  ``Cov(beta)`` is the inverse of the model block's Schur complement at the
  mode (lme4's ``RX``).
* nAGQ = 1 (Laplace): the Laplace deviance is minimised over (theta, beta),
  starting from the nAGQ = 0 optimum: theta by a bounded quasi-Newton
  search on the profile ``min_beta D(theta, beta)``, beta inside by Newton
  steps with the exact gradient (:func:`~mixrank.engine.glmm.pirls.beta_gradient`).
  ``Cov(beta) = 2 [H^{-1}]_{beta beta}`` with ``H`` the finite-difference
  Hessian of the deviance in (theta, beta), as lme4 reports by default.

Contents: :class:`Optimum`, :func:`optimise`.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import ThreadpoolController

from .control import DEFAULT_GLMM_CONTROL, GlmmControl
from .pirls import Mode, PirlsError, beta_gradient, pirls, theta_gradient_joint
from .system import Problem

__all__ = ["Optimum", "optimise", "SINGULAR_TOL"]

#: theta below this is reported as a singular (boundary) fit, as lme4's isSingular.
SINGULAR_TOL = 1e-4


@dataclass(eq=False)
class Optimum:
    """The fitted parameters and diagnostics of one GLMM fit."""

    nagq: int
    theta: np.ndarray
    beta: np.ndarray
    mode: Mode
    deviance: float          # Laplace deviance (kernel; no binomial coefficients)
    vcov: np.ndarray         # covariance of beta (cell-means coding)
    converged: bool
    message: str
    nfev: int
    gradient: float          # max |gradient| on free parameters at the optimum
    hessian_ok: bool = True
    extra: dict = field(default_factory=dict)


class _Evaluator:
    """Deviance evaluations with warm starts shared across calls."""

    def __init__(self, prob: Problem, beta: np.ndarray, u: np.ndarray, max_iter: int = 60):
        self.prob = prob
        self.max_iter = max_iter
        self.beta = np.array(beta, dtype=np.float64)
        self.u = np.array(u, dtype=np.float64)
        self.nfev = 0
        self.last: Mode | None = None

    def joint(self, theta: np.ndarray, tol: float = 1e-20, base: Mode | None = None) -> Mode:
        """Joint mode at ``theta``, warm-started from ``base`` (default: the last evaluation)."""
        self.nfev += 1
        beta, u, last = self.beta, self.u, base if base is not None else self.last
        if last is not None and last.sens is not None:
            # first-order prediction of the mode at theta from the last one
            x = np.concatenate([last.u, last.beta]) + (theta - last.theta) @ last.sens
            u, beta = x[: len(u)], x[len(u):]
        m = pirls(self.prob, theta, beta, u, joint=True, tol=tol, max_iter=self.max_iter)
        self.beta, self.u, self.last = m.beta, m.u, m
        return m

    def fixed(self, theta: np.ndarray, beta: np.ndarray) -> Mode:
        self.nfev += 1
        m = pirls(self.prob, theta, beta, self.u, joint=False, max_iter=self.max_iter)
        self.u = m.u
        return m


def _safe(f, theta: np.ndarray) -> float:
    try:
        return f(theta).deviance
    except (PirlsError, np.linalg.LinAlgError, FloatingPointError):
        return np.inf


@dataclass(eq=False)
class _Search:
    """Outcome of one quasi-Newton search over theta."""

    theta: np.ndarray
    deviance: float
    mode: Mode | None
    gradient: np.ndarray
    success: bool
    message: str


def _quasi_newton(fg, theta0: np.ndarray, tol: float = 1e-9, max_iter: int = 100) -> _Search:
    """Projected quasi-Newton (BFGS) over theta >= 0 with the exact gradient (docs/glmm.md §3).

    The Hessian starts from forward differences of the exact gradient (one
    evaluation per component) and is updated by BFGS; eigenvalues are made
    positive (|lambda|) so every step descends.  Components at the bound
    whose gradient points outwards are held fixed.  Converged when the Newton
    decrement ``g' H^{-1} g`` on the free components is below ``tol`` (a
    deviance within ``tol / 2`` of the local optimum).
    """
    th = np.maximum(np.asarray(theta0, dtype=np.float64), 0.0)
    R = len(th)
    f, g, m = fg(th)
    if not np.isfinite(f):
        return _Search(th, np.inf, None, g, False, "penalised IRLS failed at the start")
    H = np.zeros((R, R))
    for r in range(R):
        h = 1e-4 * max(1.0, th[r])
        e = np.zeros(R)
        e[r] = h
        fr, gr, _ = fg(th + e, True, m)
        H[:, r] = (gr - g) / h if np.isfinite(fr) else 0.0
    H = 0.5 * (H + H.T)
    for it in range(max_iter):
        free = ~((th <= 0.0) & (g >= 0.0))
        if not free.any():
            return _Search(th, f, m, g, True, "all components at the boundary")
        lam, V = np.linalg.eigh(H[np.ix_(free, free)])
        lam = np.maximum(np.abs(lam), 1e-8 * max(1.0, float(np.max(np.abs(lam)))))
        pf = -V @ ((V.T @ g[free]) / lam)
        dec = -float(g[free] @ pf)
        if dec < tol:
            return _Search(th, f, m, g, True, f"Newton decrement {dec:.1e} after {it} step(s)")
        p = np.zeros(R)
        p[free] = pf
        t = 1.0
        # a step may cut a component to a tenth at most (to 0 only once below 1e-3): a
        # quadratic model fitted far from the optimum often overshoots to the bound
        floor = np.where(th > 1e-3, 0.1 * th, 0.0)
        for _ in range(40):
            cand = np.maximum(th + t * p, floor)
            fc, _, mc = fg(cand, False, m, grad=False)      # the gradient once accepted
            if fc <= f + 1e-4 * float(g @ (cand - th)):
                fc, gc, mc = fg(cand)
                break
            if dec < 1e-6:           # finite-precision floor: no decrease is measurable
                return _Search(th, f, m, g, True, f"Newton decrement {dec:.1e} after {it} "
                               "step(s) (at the precision of the deviance)")
            t *= 0.5
        else:
            return _Search(th, f, m, g, False, f"no decrease along the step (decrement {dec:.1e})")
        s, y = cand - th, gc - g
        sy, Hs = float(s @ y), H @ s
        if sy > 1e-12 * float(np.linalg.norm(s) * np.linalg.norm(y)):
            H = H - np.outer(Hs, Hs) / float(s @ Hs) + np.outer(y, y) / sy
        th, f, g, m = cand, fc, gc, mc
    return _Search(th, f, m, g, False, f"no convergence in {max_iter} steps")


def _em_start(fg, prob: Problem, theta: np.ndarray, steps: int = 2) -> np.ndarray:
    """Up to ``steps`` EM-type updates of theta, each kept only if the deviance decreases.

    ``theta_r^2 <- theta_r^2 (||u_r||^2 + tr_r C^{-1}) / q_r`` (the conditional
    second moment of the term's effects at the mode): cheap, robust far from
    the optimum, where a quadratic model of the deviance is poor
    (docs/glmm.md §3).  The quasi-Newton search starts from the result.
    """
    th = np.asarray(theta, dtype=np.float64)
    # the points before the last are solved to a decrement of 1e-10 only: their D
    # (within ~1e-3) just decides whether a step is kept (their cache entries are
    # separate, so the search re-solves such a point exactly if it starts there)
    f, _, m = fg(th, 2 if steps else 0, grad=False)
    for i in range(steps):
        if m is None:
            break
        tr = m.system.block_traces(prob.levels)
        new = np.sqrt(th ** 2 * (prob.sum_squares(m.u) + tr) / prob.total_levels())
        fn, _, mn = fg(new, 2 if i < steps - 1 else 0, m, grad=False)
        if not fn < f:
            break
        th, f, m = new, fn, mn
    return th


def _minimise_theta(ev: _Evaluator, theta0: np.ndarray, prob: Problem,
                    ctl: GlmmControl = DEFAULT_GLMM_CONTROL) -> _Search:
    """Quasi-Newton over theta >= 0 (nAGQ = 0 deviance), then restarts and boundary faces.

    ``ev.joint(theta)`` is the joint (nAGQ = 0) mode; the gradient is
    :func:`~mixrank.engine.glmm.pirls.theta_gradient_joint` at that mode.
    """
    R = len(theta0)
    cache: dict[bytes, tuple[float, np.ndarray | None, Mode | None]] = {}

    def fg(th: np.ndarray, rough: int = 0, base: Mode | None = None,
           grad: bool = True) -> tuple[float, np.ndarray, Mode | None]:
        # rough = 1: the gradient for a finite-difference Hessian, whose error
        # (first order in the mode's) need only be small against H * step;
        # rough = 2: an EM step that only needs D to compare (see _em_start).
        # grad=False: the gradient is not needed now (EM steps); it is computed
        # on a later request (the mode's sensitivities, the warm start, always are)
        key = np.asarray(th, dtype=np.float64).tobytes() + bytes([rough])
        if key not in cache:
            try:
                m = ev.joint(th, (ctl.pirls_tol, max(ctl.pirls_tol, 1e-16),
                                  max(ctl.pirls_tol, 1e-10))[int(rough)], base)
                cache[key] = (m.deviance, theta_gradient_joint(prob, m, grad), m)
            except (PirlsError, np.linalg.LinAlgError, FloatingPointError):
                cache[key] = (np.inf, np.zeros(R), None)
        f, g, mc = cache[key]
        if g is None and grad and mc is not None:
            g = theta_gradient_joint(prob, mc)
            cache[key] = (f, g, mc)
        return f, (np.zeros(R) if g is None else g), mc

    def search(start: np.ndarray) -> _Search:
        return _quasi_newton(fg, start, tol=ctl.tol, max_iter=ctl.max_iterations)

    best = search(_em_start(fg, prob, theta0, steps=ctl.em_steps))
    # theta = 0 is a stationary point of the (even) deviance: a search that
    # reaches it stalls there even when a positive value is better, so restart
    # each near-zero component from a positive value and keep the better optimum.
    for r in range(R):
        if best.theta[r] < 1e-2:
            start = best.theta.copy()
            start[r] = 0.25
            alt = search(start)
            if alt.deviance < best.deviance - 1e-10:
                best = alt
    for r in range(R):                       # boundary faces: a component set to zero
        if 0.0 < best.theta[r] < 1e-2:
            cand = best.theta.copy()
            cand[r] = 0.0
            fc, gc, mc = fg(cand)
            if fc <= best.deviance + 1e-10:
                best = _Search(cand, fc, mc, gc, best.success, best.message)
    return best


def _derivs(prob: Problem, ev: _Evaluator, theta: np.ndarray, beta: np.ndarray,
            h: float = 1e-3) -> tuple[Mode, np.ndarray, np.ndarray]:
    """Mode, gradient and Hessian of the Laplace deviance in (theta, beta).

    The beta gradient is exact; the theta gradient, the theta-theta block
    and the beta-theta block are central differences (step ``h``); the
    beta-beta block differences the exact beta gradient.
    """
    R, M = len(theta), len(beta)
    m0 = ev.fixed(theta, beta)
    G = np.zeros(R + M)
    H = np.zeros((R + M, R + M))
    G[R:] = beta_gradient(prob, m0)
    for r in range(R):
        e = np.zeros(R)
        e[r] = h
        mp, mm = ev.fixed(theta + e, beta), ev.fixed(theta - e, beta)
        G[r] = (mp.deviance - mm.deviance) / (2 * h)
        H[r, r] = (mp.deviance - 2 * m0.deviance + mm.deviance) / h ** 2
        H[R:, r] = (beta_gradient(prob, mp) - beta_gradient(prob, mm)) / (2 * h)
        for s in range(r + 1, R):
            f = np.zeros(R)
            f[s] = h
            H[r, s] = (ev.fixed(theta + e + f, beta).deviance - ev.fixed(theta + e - f, beta).deviance
                       - ev.fixed(theta - e + f, beta).deviance
                       + ev.fixed(theta - e - f, beta).deviance) / (4 * h ** 2)
    for j in range(M):
        e = np.zeros(M)
        e[j] = h
        H[R:, R + j] = (beta_gradient(prob, ev.fixed(theta, beta + e))
                        - beta_gradient(prob, ev.fixed(theta, beta - e))) / (2 * h)
    H[:R, R:] = H[R:, :R].T
    ev.u = m0.u
    return m0, G, 0.5 * (H + H.T)


def _laplace_newton(prob: Problem, ev: _Evaluator, theta: np.ndarray, beta: np.ndarray,
                    max_iter: int = 40, tol: float = 1e-10,
                    h: float = 1e-3) -> tuple[Mode, np.ndarray, np.ndarray, bool, str]:
    """Damped Newton on the Laplace deviance over (theta, beta) from the nAGQ = 0 optimum.

    The deviance is even in each theta_r (a sign flip of u_r), so the search
    is unconstrained and theta is reported as ``|theta|``.  Steps are
    Levenberg-Marquardt damped until the deviance decreases.  Converged when
    the Newton decrement ``G' H^{-1} G`` is below 1e-10 with ``H`` positive
    definite, or the step and the decrease vanish.
    """
    R = len(theta)
    theta = theta.copy()
    for r in range(R):                       # escape the stationary point theta_r = 0
        if abs(theta[r]) < 1e-3:
            probe = theta.copy()
            probe[r] = 0.1
            if _safe(lambda th: ev.fixed(th, beta), probe) < _safe(lambda th: ev.fixed(th, beta), theta):
                theta = probe
    phi = np.concatenate([theta, beta])
    for it in range(max_iter):
        m0, G, H = _derivs(prob, ev, phi[:R], phi[R:], h)
        try:
            C = np.linalg.cholesky(H)
            dec = float(G @ np.linalg.solve(H, G))
            pd_ok = True
        except np.linalg.LinAlgError:
            pd_ok, dec, C = False, np.inf, None
        if pd_ok and dec < tol:
            return m0, G, H, True, f"Newton decrement {dec:.2e} after {it} step(s)"
        lam, moved = 0.0 if C is not None else 1e-6 * max(1.0, np.max(np.abs(np.diag(H)))), False
        for _ in range(40):
            try:
                step = -np.linalg.solve(H + lam * np.eye(len(phi)), G)
            except np.linalg.LinAlgError:
                step = -G
            cand = phi + step
            d = _safe(lambda th, b=cand[R:]: ev.fixed(th, b), cand[:R])
            if d < m0.deviance:
                phi, moved = cand, True
                break
            lam = max(10 * lam, 1e-6 * max(1.0, float(np.max(np.abs(np.diag(H))))))
        if not moved or np.max(np.abs(step)) < 1e-10:
            m0, G, H = _derivs(prob, ev, phi[:R], phi[R:], h)
            try:
                dec = float(G @ np.linalg.solve(H, G)) if np.all(np.linalg.eigvalsh(H) > 0) else np.inf
            except np.linalg.LinAlgError:
                dec = np.inf
            # finite-difference noise floor: no step decreases the deviance and
            # the predicted decrease G'H^{-1}G/2 is below 1e-6
            return (m0, G, H, dec < 1e-6,
                    f"no further decrease of the deviance (Newton decrement {dec:.2e})")
    m0, G, H = _derivs(prob, ev, phi[:R], phi[R:], h)
    return m0, G, H, False, f"no convergence in {max_iter} Newton steps"


def _start(prob: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Empirical logits of each model (beta); the first term's effects from its levels'
    empirical logits less their models' (shrunk by 0.8: it saves one or two Newton
    steps of the first PIRLS run), the other terms' zero."""
    ks = np.bincount(prob.model, weights=prob.k, minlength=prob.n_models)
    ns = np.bincount(prob.model, weights=prob.n, minlength=prob.n_models)
    p = (ks + 0.5) / (ns + 1.0)
    beta = np.log(p / (1 - p))
    if prob.slope is not None:                      # slopes start at 0
        beta = np.concatenate([beta, np.zeros(prob.n_models)])
    u = np.zeros(sum(prob.levels))
    c0, q0 = prob.codes[0], prob.levels[0]
    kl = np.bincount(c0, weights=prob.k, minlength=q0)
    nl = np.bincount(c0, weights=prob.n, minlength=q0)
    offset = np.bincount(c0, weights=prob.n * prob.xbeta(beta), minlength=q0) / nl
    u[:q0] = 0.8 * (np.log((kl + 0.5) / (nl - kl + 0.5)) - offset)
    return beta, u


@functools.lru_cache(maxsize=1)
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


def optimise(prob: Problem, nagq: int, control: GlmmControl = DEFAULT_GLMM_CONTROL) -> Optimum:
    """Fit the GLMM by nAGQ = 0 and, when ``nagq == 1``, the Laplace refinement.

    Small dense blocks run with one BLAS thread (threading overhead dominates them).
    """
    small = prob.n_rest + prob.n_fixed < 600
    with _blas().limit(limits=1, user_api="blas") if small else contextlib.nullcontext():
        return _optimise(prob, nagq, control)


def _optimise(prob: Problem, nagq: int, ctl: GlmmControl) -> Optimum:
    beta0, u0 = _start(prob)
    ev = _Evaluator(prob, beta0, u0, ctl.pirls_max_iterations)
    R = len(prob.levels)
    found = _minimise_theta(ev, np.full(R, float(ctl.theta_start)), prob, ctl)
    theta = found.theta
    mode = found.mode if found.mode is not None else ev.joint(theta)
    if nagq == 0:
        V = mode.system.vcov_beta()
        gt = found.gradient
        g = float(np.max(np.abs(gt[theta > 0]))) if np.any(theta > 0) else 0.0
        return Optimum(nagq=0, theta=theta, beta=mode.beta, mode=mode, deviance=mode.deviance,
                       vcov=V, converged=found.success, message=found.message,
                       nfev=ev.nfev, gradient=g)
    mode, G, H, converged, message = _laplace_newton(prob, ev, theta, mode.beta,
                                                     ctl.laplace_max_iterations, ctl.laplace_tol,
                                                     ctl.fd_step)
    theta1, beta = np.abs(mode.theta), mode.beta
    mode = ev.fixed(theta1, beta)
    Rn = len(theta1)
    hessian_ok = True
    try:
        np.linalg.cholesky(H)
        V = 2.0 * np.linalg.inv(H)[Rn:, Rn:]
    except np.linalg.LinAlgError:
        hessian_ok = False
        V = mode.system.vcov_beta()
    free = np.concatenate([theta1 > 0, np.ones(len(beta), dtype=bool)])
    return Optimum(nagq=1, theta=theta1, beta=beta, mode=mode, deviance=mode.deviance, vcov=V,
                   converged=converged, message=message, nfev=ev.nfev,
                   gradient=float(np.max(np.abs(G[free]))), hessian_ok=hessian_ok,
                   extra=dict(hessian=H))
