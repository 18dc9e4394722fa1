"""Stage engine: Satterthwaite degrees of freedom, in one place.

Inputs: a pair's REML :class:`~mixrank.engine.lmm.objective.Objective` at its
optimum ``(theta, sigma)``, or (balanced designs) the stratum mean squares.
Outputs: the df of ``Var(estimate)``, with the asymptotic covariance of the
variance parameters.  Contents:

* :func:`satterthwaite` -- lmerTest's method: ``df = 2 V^2 / (g' A g)`` with
  ``V = var_fn(theta, sigma)``, ``g`` its gradient and ``A = 2 H^-1`` from the
  Hessian ``H`` of the REML deviance in ``(theta, sigma)``.  ``H`` is exact in
  dense mode (:func:`mixrank.engine.lmm.reml_hess.deviance_hessian`; central
  differences of the analytic gradient, :func:`gradient_hessian`, only where
  its floors are active), otherwise from Richardson-extrapolated central differences of the
  deviance (``4 R^2 + 2`` evaluations per step);
* :func:`balanced_df` -- the closed form for a linear combination of
  independent mean squares (the balanced fast path);
* :class:`LinearVariance` -- the variance ``var_fn`` of a ``cells`` / ``units``
  estimate ``w'd`` (weights from :mod:`mixrank.engine.lmm.estimand`), with an
  analytic gradient;
* :func:`fd_gradient_psi`, :func:`fd_hessian`, :func:`fd_gradient`,
  :func:`central_hessian`, :func:`central_jacobian`, :func:`fd_steps` -- the
  finite-difference helpers.

Callers: :func:`mixrank.engine.lmm.reml.fit_reml` (the GLS estimate),
:mod:`mixrank.engine.lmm.native` (the ``cells`` / ``units`` estimands),
:func:`mixrank.engine.lmm.balanced.fit_balanced` (closed form),
:mod:`mixrank.engine.crosscheck.statsmodels_engine` (df at statsmodels' optimum) and
:mod:`mixrank.engine.lmm.reml_fixed` (Hessian and ``Cov(beta)`` Jacobian of the
p-column fit, one central step).
The finite-difference steps are :class:`~mixrank.engine.control.Control`'s
``fd_steps`` and ``fd_gradient_step``.  Validated against lmerTest 3.1
(tests/reference/lme4_engine.R, tests/engine/test_lme4_reference.py).
Notes: docs/engine.md §3.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..control import DEFAULT_CONTROL, Control
from ..structure import Structure
from .objective import Objective
from .one_term import one_term_hessian
from .reml_hess import deviance_hessian

__all__ = ["satterthwaite", "gradient_hessian", "balanced_df",
           "LinearVariance", "linear_variance", "fd_gradient_psi", "fd_hessian", "fd_gradient",
           "fd_steps", "central_hessian", "central_jacobian"]

VarFn = Callable[[np.ndarray, float], float]


def fd_gradient_psi(f: Callable[[np.ndarray], float], psi: np.ndarray, f0: float | None = None,
                    step: float = 1e-6) -> np.ndarray:
    """Central-difference gradient in ``psi >= 0`` (one-sided second order at the bound)."""
    g = np.empty_like(psi)
    for i in range(len(psi)):
        h = step * max(psi[i], 1e-3)
        e = np.zeros_like(psi)
        e[i] = h
        if psi[i] > h:
            g[i] = (f(psi + e) - f(psi - e)) / (2 * h)
        else:
            base = f(psi) if f0 is None else f0
            g[i] = (-3 * base + 4 * f(psi + e) - f(psi + 2 * e)) / (2 * h)
    return g


def fd_steps(x: np.ndarray, step: float) -> np.ndarray:
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


def central_hessian(f: Callable[[np.ndarray], float], x: np.ndarray, step: float) -> np.ndarray:
    """Central-difference Hessian with the steps of :func:`fd_steps` (no extrapolation)."""
    k = len(x)
    h = fd_steps(x, step)
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


def central_jacobian(f: Callable[[np.ndarray], np.ndarray | float], x: np.ndarray,
                     step: float) -> np.ndarray:
    """Central differences of a scalar- or array-valued ``f``, stacked along axis 0 (steps of :func:`fd_steps`)."""
    h = fd_steps(x, step)
    out = []
    for i in range(len(x)):
        e = np.zeros(len(x))
        e[i] = h[i]
        out.append((f(x + e) - f(x - e)) / (2 * h[i]))
    return np.stack(out)


def fd_hessian(f: Callable[[np.ndarray], float], x: np.ndarray,
               steps: tuple[float, float] = (2e-4, 1e-4)) -> np.ndarray:
    """Richardson-extrapolated central-difference Hessian (steps: coarse, fine = coarse / 2)."""
    H1, H2 = central_hessian(f, x, steps[0]), central_hessian(f, x, steps[1])
    return H2 + (H2 - H1) / 3.0


def fd_gradient(f: Callable[[np.ndarray], float], x: np.ndarray,
                steps: tuple[float, float] = (2e-4, 1e-4)) -> np.ndarray:
    """Richardson-extrapolated central-difference gradient."""
    g1, g2 = central_jacobian(f, x, steps[0]), central_jacobian(f, x, steps[1])
    return g2 + (g2 - g1) / 3.0


def gradient_hessian(obj: Objective, x: np.ndarray, step: float = 1e-4) -> np.ndarray | None:
    """Hessian of the REML deviance at ``x = (theta, sigma)`` from its analytic gradient.

    theta columns: central differences of the gradient with step
    ``step * max(|theta_r|, 0.01)`` (no cancellation of second differences,
    so the step can follow theta down to small components: the truncation
    error is ``O((h / theta)^2)``, 1e-4 relative at theta ~ 3e-3 with an
    absolute step 1e-4, 1e-8 with this one); the sigma-sigma entry is exact,
    ``-2 nu / sigma^2 + 6 r^2 / sigma^4``.  None where the objective has no
    analytic gradient.
    """
    k = len(x)
    H = np.empty((k, k))
    for i in range(k - 1):
        h = step * max(abs(float(x[i])), 0.01)
        e = np.zeros(k)
        e[i] = h
        gp, gm = obj.full_gradient(x + e), obj.full_gradient(x - e)
        if gp is None or gm is None:
            return None
        H[:, i] = (gp[0] - gm[0]) / (2 * h)
    sigma = float(x[-1])
    r2 = obj.core(x[:-1])[2]
    H[:-1, -1] = H[-1, :-1]
    H[-1, -1] = -2.0 * (obj.n - 1) / sigma ** 2 + 6.0 * r2 / sigma ** 4
    return 0.5 * (H + H.T)


def _analytic_parts(obj: Objective, x: np.ndarray, var_fn: VarFn | None, control: Control
                    ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Hessian of the deviance and gradient of the variance where derivatives are available (else None)."""
    if not obj.analytic:
        return None, None
    theta, sigma = x[:-1], float(x[-1])
    g = var_fn.gradient(theta, sigma) if isinstance(var_fn, LinearVariance) else None
    if obj.R == 1:                       # one term: exact second derivatives
        exact = one_term_hessian(obj, float(theta[0]), sigma)
        if exact is not None:
            return exact[0], (exact[1] if var_fn is None else g)
    exact2 = deviance_hessian(obj.st, obj.ps, theta, sigma)   # dense mode: exact second derivatives
    if exact2 is not None:
        return exact2[0], (exact2[1] if var_fn is None else g)
    H = gradient_hessian(obj, x, control.fd_steps[1])
    if var_fn is None:
        fg = obj.full_gradient(x)
        if fg is not None:
            _, rx2, d_rx2 = fg
            g = np.append(-sigma * sigma * d_rx2 / rx2 ** 2, 2.0 * sigma / rx2)
    return H, g


def satterthwaite(obj: Objective, theta: np.ndarray, sigma: float, var_fn: VarFn | None = None,
                  control: Control = DEFAULT_CONTROL) -> tuple[float, np.ndarray, np.ndarray]:
    """Satterthwaite df of ``var_fn(theta, sigma)`` (default: ``Var(mu_hat)``).

    ``theta`` is in block order (``obj.st.names``).  Returns
    ``(df, gradient, A)`` with ``A = 2 H^-1`` the asymptotic covariance of
    ``(theta, sigma)``; df is NaN when ``g' A g <= 0``.  With one random term
    the Hessian is exact (:func:`~mixrank.engine.lmm.one_term.one_term_hessian`);
    a :class:`LinearVariance` ``var_fn`` is differentiated analytically.
    """
    x = np.append(theta, sigma)
    vf = obj.var_mu if var_fn is None else var_fn
    H, g = _analytic_parts(obj, x, var_fn, control)
    if H is None:
        H = fd_hessian(obj.full_deviance, x, control.fd_steps)
    if g is None:
        g = fd_gradient(lambda z: vf(z[:-1], z[-1]), x, control.fd_steps)
    A = 2.0 * _inverse(H)
    v = vf(theta, sigma)
    denom = float(g @ A @ g)
    df = 2.0 * v * v / denom if denom > 0 else float("nan")
    return df, g, A


def _inverse(H: np.ndarray) -> np.ndarray:
    """``H^-1`` (the pseudo-inverse where ``H`` is singular); a 2 x 2 (one random term) in
    closed form, where ``numpy.linalg.inv``'s fixed cost is most of a small pair's df."""
    if H.shape == (2, 2):
        (a, b), (c, d) = H.tolist()
        det = a * d - b * c
        if det != 0.0 and math.isfinite(det):
            return np.array([[d, -b], [-c, a]]) / det
    try:
        return np.linalg.inv(H)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(H)


def balanced_df(lam_u: float, coef: np.ndarray, lam: np.ndarray, dfg: np.ndarray) -> float:
    """Satterthwaite df of ``lam_u = sum_g coef_g lam_g``, a combination of independent mean squares.

    ``lam_g`` has ``dfg_g`` degrees of freedom (chi-square), so
    ``Var(lam_u_hat) ~ 2 sum (coef lam)^2 / dfg``.
    """
    return lam_u ** 2 / float(np.sum((coef * lam) ** 2 / dfg))


class LinearVariance:
    """``Var(w'd) = sigma^2 (w'w + sum_r theta_r^2 |Z_r'w|^2)`` as a function of ``(theta, sigma)``.

    theta in block order; ``|Z_r'w|^2`` is computed once, so calls and the
    analytic :meth:`gradient` cost O(R).
    """

    def __init__(self, st: Structure, w: np.ndarray, uniform: bool = False) -> None:
        self.ww = float(w @ w)
        if uniform:             # w = 1/n on every cell (the cells estimand): Z_r'w = counts / n
            n = float(len(w))
            self.zw2 = np.array([float(np.sum((np.asarray(c, dtype=float) / n) ** 2))
                                 for c in st.counts])
            return
        self.zw2 = np.array([float(np.sum(np.bincount(c, weights=w, minlength=L) ** 2))
                             for c, L in zip(st.codes, st.levels)])

    def __call__(self, theta: np.ndarray, sigma: float) -> float:
        return sigma * sigma * (self.ww + float(np.dot(np.asarray(theta) ** 2, self.zw2)))

    def gradient(self, theta: np.ndarray, sigma: float) -> np.ndarray:
        return np.append(2.0 * sigma * sigma * np.asarray(theta) * self.zw2,
                         2.0 * self(theta, sigma) / sigma)


def linear_variance(st: Structure, w: np.ndarray, theta_block: np.ndarray, sigma: float) -> float:
    """``Var(w'd)`` at ``(theta_block, sigma)`` (see :class:`LinearVariance`)."""
    return LinearVariance(st, w)(theta_block, sigma)
