"""Stage engine: profiled REML for the paired-difference model of one pair.

Inputs: :class:`~mixrank.engine.structure.Structure` and
:class:`~mixrank.engine.structure.PairSums`.  Outputs: :class:`RemlFit`
(variance components, GLS mean, its variance, Satterthwaite df, REML
criterion, convergence diagnostics).

Model: ``d = mu 1 + sum_r Z_r b_r + e``, ``b_r ~ N(0, sigma_r^2 I)``,
``e ~ N(0, sigma^2 I)``.  With ``theta_r = sigma_r / sigma``,
``Lambda = diag(theta)`` and ``A = Lambda Z'Z Lambda + I`` (lme4's notation),
the profiled REML criterion is::

    -2 l_R(theta) = log|A| + log R_X^2 + (n - 1) (1 + log(2 pi r^2 / (n - 1)))

with ``R_X^2 = n - c'Lambda A^-1 Lambda c`` (c: level counts) and ``r^2`` the
penalised residual sum of squares.  It is optimised over
``psi = theta^2 >= 0`` (so that a zero component has a non-degenerate
derivative), from moment and lme4-default starts, and compared with the
boundary faces; the REML criterion is the arbiter.  L-BFGS-B uses the
analytic gradient of :mod:`mixrank.engine.reml_grad` in dense mode and
central differences in sparse mode.  Satterthwaite df follow
lmerTest: the Hessian of the REML deviance in ``(theta, sigma)`` and the
gradient of ``Var(mu_hat)``, by Richardson-extrapolated central differences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import scipy.optimize as opt
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import DesignError
from .reml_grad import dense_parts
from .structure import PairSums, Structure

__all__ = ["RemlFit", "fit_reml", "quad_forms", "profiled_deviance", "deviance_and_gradient", "LOG2PI"]

LOG2PI = math.log(2 * math.pi)


def quad_forms(st: Structure, ps: PairSums, theta: np.ndarray) -> tuple[float, float, float, float]:
    """Return ``(log|A|, c'L A^-1 L c, c'L A^-1 L s, s'L A^-1 L s)`` at ``theta``."""
    if st.mode == "none":
        return 0.0, 0.0, 0.0, 0.0
    if st.mode == "sparse":
        lam = np.concatenate([np.full(L, t) for L, t in zip(st.levels, theta)])
        Lm = sp.diags(lam)
        A = (Lm @ st.ztz @ Lm + sp.identity(len(lam))).tocsc()
        lu = spla.splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0)
        logdet = float(np.sum(np.log(np.abs(lu.U.diagonal()))))
        c = lam * np.concatenate(st.counts)
        s = lam * np.concatenate(ps.s)
        xc, xs = lu.solve(c), lu.solve(s)
        return logdet, float(c @ xc), float(c @ xs), float(s @ xs)
    logdet, cAc, cAs, sAs = dense_parts(st, ps, theta)[0]
    return float(logdet), float(cAc), float(cAs), float(sAs)


def _core(st: Structure, ps: PairSums, theta: np.ndarray) -> tuple[float, float, float, float]:
    """``(log|A|, R_X^2, r^2, mu_hat)`` at ``theta``."""
    logdet, cAc, cAs, sAs = quad_forms(st, ps, theta)
    rx2 = ps.n - cAc
    if rx2 <= 0:
        rx2 = 1e-300
    mu = (ps.sum_d - cAs) / rx2
    r2 = ps.sumsq_d - sAs - (ps.sum_d - cAs) ** 2 / rx2
    return logdet, rx2, max(r2, 1e-300), mu


def profiled_deviance(st: Structure, ps: PairSums, theta: np.ndarray) -> float:
    """lme4's REML criterion at ``theta`` (sigma profiled out)."""
    return _criterion(ps, *_core(st, ps, theta)[:3])


def _criterion(ps: PairSums, logdet: float, rx2: float, r2: float) -> float:
    nu = ps.n - 1
    return logdet + math.log(rx2) + nu * (1.0 + LOG2PI + math.log(r2 / nu))


def deviance_and_gradient(st: Structure, ps: PairSums, psi: np.ndarray) -> tuple[float, np.ndarray] | None:
    """:func:`profiled_deviance` at ``theta = sqrt(psi)`` and its analytic gradient in ``psi``.

    Returns None where only finite differences apply: sparse or empty
    structures, and points where the floors on ``R_X^2`` or ``r^2`` are
    active (see :mod:`mixrank.engine.reml_grad` for the derivation).
    """
    if st.mode != "dense":
        return None
    (logdet, cAc, cAs, sAs), g = dense_parts(st, ps, np.sqrt(np.maximum(psi, 0.0)), grad=True)
    g = cast(np.ndarray, g)
    rx2 = ps.n - cAc
    e = ps.sum_d - cAs
    if rx2 <= 0:
        return None
    r2 = ps.sumsq_d - sAs - e * e / rx2
    if not (r2 > 0 and math.isfinite(r2)):
        return None
    d_r2 = -g[3] + 2.0 * e * g[2] / rx2 - e * e * g[1] / (rx2 * rx2)
    return _criterion(ps, logdet, rx2, r2), g[0] - g[1] / rx2 + (ps.n - 1) * d_r2 / r2


def full_deviance(st: Structure, ps: PairSums, x: np.ndarray) -> float:
    """REML deviance at ``x = (theta_1..theta_R, sigma)`` (lmerTest's varpar)."""
    theta, sigma = x[:-1], x[-1]
    logdet, rx2, r2, _ = _core(st, ps, theta)
    nu = ps.n - 1
    s2 = sigma * sigma
    return logdet + math.log(rx2) + nu * (LOG2PI + math.log(s2)) + r2 / s2


@dataclass
class RemlFit:
    """REML estimates for one pair."""

    names: tuple[str, ...]          # component names (caller's order), then "residual"
    variances: np.ndarray           # sigma_r^2 (caller's order) then sigma^2
    theta: np.ndarray               # caller's order
    sigma: float
    mu: float
    var_mu: float
    df: float
    criterion: float                # REML criterion (-2 l_R)
    n: int
    boundary: tuple[str, ...]
    gradient: float                 # max |d criterion / d psi| on free components
    converged: bool
    message: str
    nfev: int
    extras: dict = field(default_factory=dict)


def _moment_start(st: Structure, ps: PairSums) -> np.ndarray:
    """One-way ANOVA moment estimates of psi = sigma_r^2 / sigma^2, each term alone."""
    n = ps.n
    mean = ps.sum_d / n
    sst = ps.sumsq_d - n * mean * mean
    tot = max(sst / max(n - 1, 1), 1e-300)  # relative only: any scale of scores
    comps = []
    for c, s in zip(st.counts, ps.s):
        used = c > 0
        k = int(used.sum())
        if k < 2 or n - k < 1:
            comps.append(0.0)
            continue
        ssb = float(np.sum(s[used] ** 2 / c[used]) - n * mean * mean)
        ssw = max(sst - ssb, 0.0)
        msb, msw = ssb / (k - 1), ssw / (n - k)
        n0 = (n - float(np.sum(c[used] ** 2)) / n) / (k - 1)
        comps.append(max((msb - msw) / n0, 0.0))
    sig2 = max(tot - sum(comps), 0.05 * tot)
    return np.array(comps) / sig2


def _grad_psi(f, psi: np.ndarray, f0: float | None = None) -> np.ndarray:
    g = np.empty_like(psi)
    for i in range(len(psi)):
        h = 1e-6 * max(psi[i], 1e-3)
        e = np.zeros_like(psi)
        e[i] = h
        if psi[i] > h:
            g[i] = (f(psi + e) - f(psi - e)) / (2 * h)
        else:
            base = f(psi) if f0 is None else f0
            g[i] = (-3 * base + 4 * f(psi + e) - f(psi + 2 * e)) / (2 * h)
    return g


def _minimise(f, x0: np.ndarray, fixed_zero: tuple[int, ...] = (),
              value_grad=None) -> tuple[np.ndarray, float, int]:
    """L-BFGS-B over psi >= 0 (components in ``fixed_zero`` held at 0).

    ``value_grad(psi)`` returns ``(f(psi), analytic gradient)`` in one
    evaluation; without it (or where it returns None) the gradient comes
    from central finite differences of ``f``.
    """
    free = [i for i in range(len(x0)) if i not in fixed_zero]
    nfev = 0

    def expand(z):
        x = np.zeros(len(x0))
        x[free] = z
        return x

    def fun(z):
        nonlocal nfev
        nfev += 1
        return f(expand(np.maximum(z, 0.0)))

    def fun_and_jac(z):
        nonlocal nfev
        z = np.maximum(z, 0.0)
        fg = None if value_grad is None else value_grad(expand(z))
        if fg is not None:
            nfev += 1
            return fg[0], fg[1][free]
        nfev += 1 + 2 * len(z)
        return f(expand(z)), _grad_psi(lambda zz: f(expand(zz)), z)

    if not free:
        return np.zeros(len(x0)), f(np.zeros(len(x0))), 1
    res = opt.minimize(fun_and_jac, np.maximum(x0[free], 0.0), jac=True, method="L-BFGS-B",
                       bounds=[(0.0, None)] * len(free),
                       options=dict(ftol=1e-15, gtol=1e-10, maxiter=500))
    z = np.maximum(res.x, 0.0)
    return expand(z), float(fun(z)), nfev


def _steps(x: np.ndarray, step: float) -> np.ndarray:
    """Finite-difference steps for ``x = (theta_1..theta_R, sigma)``.

    theta (a ratio of SDs, O(1)) gets at least an absolute step: near a
    boundary (theta ~ 1e-3) a relative step makes the second difference of a
    criterion of size ~1e3 drown in rounding error (seen: 20% error in one
    Hessian entry, 2% in df).  sigma keeps a relative step (its scale is the
    score's).
    """
    h = step * np.maximum(np.abs(x), 1.0)
    h[-1] = step * abs(x[-1])
    return h


def _hessian(f, x: np.ndarray) -> np.ndarray:
    """Richardson-extrapolated central-difference Hessian."""
    def hess(step):
        k = len(x)
        h = _steps(x, step)
        H = np.empty((k, k))
        f0 = f(x)
        for i in range(k):
            ei = np.zeros(k)
            ei[i] = h[i]
            H[i, i] = (f(x + ei) - 2 * f0 + f(x - ei)) / h[i] ** 2
            for j in range(i):
                ej = np.zeros(k)
                ej[j] = h[j]
                H[i, j] = H[j, i] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej)
                                     + f(x - ei - ej)) / (4 * h[i] * h[j])
        return H
    H1, H2 = hess(2e-4), hess(1e-4)
    return H2 + (H2 - H1) / 3.0


def _gradient(f, x: np.ndarray) -> np.ndarray:
    def grad(step):
        h = _steps(x, step)
        g = np.empty(len(x))
        for i in range(len(x)):
            e = np.zeros(len(x))
            e[i] = h[i]
            g[i] = (f(x + e) - f(x - e)) / (2 * h[i])
        return g
    g1, g2 = grad(2e-4), grad(1e-4)
    return g2 + (g2 - g1) / 3.0


def satterthwaite(st: Structure, ps: PairSums, theta: np.ndarray, sigma: float,
                  var_fn=None) -> tuple[float, np.ndarray, np.ndarray]:
    """Satterthwaite df of ``var_fn(theta, sigma)`` (default: Var(mu_hat)).

    Returns ``(df, gradient, A)`` with ``A = 2 H^-1`` the asymptotic covariance
    of ``(theta, sigma)``.
    """
    x = np.append(theta, sigma)
    if var_fn is None:
        def var_fn(th, sg):
            return sg * sg / _core(st, ps, th)[1]
    H = _hessian(lambda z: full_deviance(st, ps, z), x)
    g = _gradient(lambda z: var_fn(z[:-1], z[-1]), x)
    try:
        A = 2.0 * np.linalg.inv(H)
    except np.linalg.LinAlgError:
        A = 2.0 * np.linalg.pinv(H)
    v = var_fn(theta, sigma)
    denom = float(g @ A @ g)
    df = 2.0 * v * v / denom if denom > 0 else float("nan")
    return df, g, A


def fit_reml(st: Structure, ps: PairSums, names: list[str] | tuple[str, ...],
             *, check_faces: bool = True) -> RemlFit:
    """Fit the paired-difference model by profiled REML.

    Raises
    ------
    DesignError
        Fewer than two cells, or no residual variation (all differences equal).
    """
    n = ps.n
    if n < 2:
        raise DesignError(f"the pair has {n} common cell(s); at least 2 are needed to estimate a variance")
    if ps.sumsq_d - ps.sum_d ** 2 / n <= 1e-12 * ps.sumsq_d:  # relative: any scale of scores
        raise DesignError("all paired differences are identical (zero variance); no standard "
                          "error can be estimated. Check that the two models' scores differ "
                          "across cells, or compare them with an exact test")
    R = len(st.levels)
    if R == 0:
        mu = ps.sum_d / n
        s2 = (ps.sumsq_d - n * mu * mu) / (n - 1)
        crit = profiled_deviance(st, ps, np.zeros(0))
        return RemlFit(names=("residual",), variances=np.array([s2]), theta=np.zeros(0),
                       sigma=math.sqrt(s2), mu=mu, var_mu=s2 / n, df=float(n - 1), criterion=crit,
                       n=n, boundary=(), gradient=0.0, converged=True, message="closed form", nfev=1)

    def f(psi):
        return profiled_deviance(st, ps, np.sqrt(np.maximum(psi, 0.0)))

    def value_grad(psi):
        return deviance_and_gradient(st, ps, psi)

    vg = value_grad if st.mode == "dense" else None

    starts = [_moment_start(st, ps), np.ones(R)]
    best = None
    nfev = 0
    for x0 in starts:
        x, fx, k = _minimise(f, x0, value_grad=vg)
        nfev += k
        if best is None or fx < best[1]:
            best = (x, fx)
    best = cast("tuple[np.ndarray, float]", best)  # set: starts is not empty
    if check_faces and R > 1:
        for r in range(R):
            if best[0][r] > 0:
                x, fx, k = _minimise(f, best[0], fixed_zero=(r,), value_grad=vg)
                nfev += k
                if fx < best[1] - 1e-10:
                    best = (x, fx)
    psi, crit = best
    # polish: re-start from the best point
    x, fx, k = _minimise(f, psi, value_grad=vg)
    nfev += k
    if fx < crit:
        psi, crit = x, fx
    g = _grad_psi(f, psi, crit)
    free = psi > 0
    kkt_bad = bool(np.any(g[~free] < -1e-6 * max(1.0, abs(crit)) * 1e-3))
    gmax = float(np.max(np.abs(g[free]))) if free.any() else 0.0
    theta_b = np.sqrt(psi)
    logdet, rx2, r2, mu = _core(st, ps, theta_b)
    sigma2 = r2 / (n - 1)
    sigma = math.sqrt(sigma2)
    var_mu = sigma2 / rx2
    df, _, _ = satterthwaite(st, ps, theta_b, sigma)
    inv = np.argsort(st.order)          # block order -> caller's order
    theta_c = theta_b[inv]
    variances = np.append(sigma2 * theta_c ** 2, sigma2)
    boundary = tuple(names[i] for i in range(R) if theta_c[i] == 0.0)
    converged = not kkt_bad and gmax < 1e-3 * max(1.0, 1.0 / max(float(np.min(psi[free])) if free.any() else 1.0, 1e-12))
    msg = "ok" if converged else (f"KKT violated on a boundary component (gradient {g.min():.3g})"
                                  if kkt_bad else f"gradient {gmax:.3g} not small at the optimum")
    return RemlFit(names=tuple(names) + ("residual",), variances=variances, theta=theta_c,
                   sigma=sigma, mu=mu, var_mu=var_mu, df=df, criterion=crit, n=n,
                   boundary=boundary, gradient=gmax, converged=converged, message=msg, nfev=nfev,
                   extras=dict(theta_block=theta_b, block_names=st.names))
