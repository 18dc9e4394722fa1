"""Stage engine: the one projected Newton loop of the REML fits, with its two specialisations.

Inputs: a derivatives callback ``psi -> (criterion, gradient, Hessian)`` (or
None where the exact derivatives are unavailable), a start ``psi0 >= 0``, a
direction rule and a stopping rule.  Outputs: ``(psi, criterion,
evaluations, hit the iteration limit)`` or None, used by
:func:`mixrank.engine.lmm.reml.optimise` in place of L-BFGS-B as the first run
(dense mode, where the objective has exact second derivatives); its optimum
is then certified by the KKT check like any other (and the remaining starts
run when it is not).

:func:`projected_newton` is the loop: the components at 0 whose derivative
is non-negative are held there (the active set of the bound ``psi >= 0``),
the others take the direction's step, projected on ``psi >= 0`` and halved
until the criterion does not increase.  Its two specialisations:

* :func:`newton_bounded` (several random terms): derivatives from
  :func:`mixrank.engine.lmm.reml_hess.profiled_derivatives`, the Newton step
  on the free components (the Hessian's eigenvalues floored when it is not
  positive definite); it stops after a step below ``tol`` relative to each
  component (floored at ``1e-6`` of the largest), or after a full step below
  :data:`QUADRATIC_STEP` (convergence is quadratic there, so the point
  reached is within ``O(step^2)`` of the optimum);
* :func:`newton_one_term` (one random term, the fast path): the same loop on
  floats, with the exact scalar derivatives of
  :func:`mixrank.engine.lmm.one_term.one_term_derivatives`, the step
  ``-f'/f''`` (a gradient step where the curvature is not positive); it
  stops after a step below ``tol`` relative to ``max(1, psi)``, or after a
  full step below :data:`QUADRATIC_STEP` relative to ``psi`` (as above).

:func:`henderson_start` gives the several-term search its start.  Notes:
docs/speed.md §3.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
import scipy.linalg as la

from ..structure import Structure
from .objective import Objective
from .one_term import one_term_derivatives
from .reml_hess import _packed_index, block_indicator, profiled_derivatives

__all__ = ["projected_newton", "newton_bounded", "newton_one_term", "henderson_start",
           "QUADRATIC_STEP"]

_potrf, _potrs, _gesv = la.lapack.dpotrf, la.lapack.dpotrs, la.lapack.dgesv

#: A full Newton step below this (relative to each component) ends the search: the
#: convergence is quadratic, so the point reached is within ~1e-10 of the optimum.
QUADRATIC_STEP = 1e-5

#: ``psi -> (criterion, gradient, Hessian)``: arrays, or floats for a float ``psi``.
Derivatives = Callable[[Any], "tuple[float, Any, Any] | None"]
Direction = Callable[[Any, Any, Any, Any], Any]
Stop = Callable[[Any, Any, float], bool]
NewtonResult = tuple[Any, float, int, bool]


def projected_newton(derivatives: Derivatives, psi0: Any, *, direction: Direction,
                     stop: Stop, max_iterations: int = 100) -> NewtonResult | None:
    """Minimise over ``psi >= 0`` from ``psi0 >= 0``: ``(psi, criterion, evaluations, hit the
    limit)``, or None where the derivatives are unavailable at the start.

    ``direction(g, H, free, psi)`` is the step (zero off the free components);
    ``stop(psi, new, lam)`` ends the search after the accepted step from
    ``psi`` to ``new`` (``lam`` the line search's factor, 1 for a full step).
    A float ``psi0`` (one component) runs the same loop on floats, with
    float derivatives: the one-term fast path, without the cost of
    one-element arrays.
    """
    scalar = isinstance(psi0, float)
    psi = psi0
    cur = derivatives(psi)
    if cur is None:
        return None
    nfev = 1
    for _ in range(max_iterations):
        f, g, H = cur
        free = (psi > 0) | (g < 0)
        if not (free if scalar else free.any()):
            return psi, f, nfev, False               # KKT at the bounds
        step = direction(g, H, free, psi)
        lam = 1.0
        while True:
            new = max(psi + lam * step, 0.0) if scalar else np.maximum(psi + lam * step, 0.0)
            nxt = derivatives(new)
            nfev += 1
            if nxt is not None and nxt[0] <= f + 1e-14 * max(1.0, abs(f)):
                break
            lam *= 0.5
            if lam < 1e-10:
                return psi, f, nfev, False           # no descent left: a stationary point
        done = stop(psi, new, lam)
        psi, cur = new, nxt
        if done:
            return psi, cur[0], nfev, False
    return psi, cur[0], nfev, True


def _direction(g: np.ndarray, H: np.ndarray, free: np.ndarray, psi: np.ndarray) -> np.ndarray:
    """The Newton step on the free components (eigenvalues floored to keep it a descent direction)."""
    step = np.zeros(len(g))
    gf, Hf = (g, H) if free.all() else (g[free], H[free][:, free])
    L, info = _potrf(Hf, lower=1)
    if info == 0:
        step[free] = -_potrs(L, gf, lower=1)[0]
    else:
        ev, V = np.linalg.eigh(Hf)
        floor = max(1e-8 * float(np.max(np.abs(ev))), 1e-300)
        step[free] = -V @ ((V.T @ gf) / np.maximum(np.abs(ev), floor))
    return step


def newton_bounded(obj: Objective, psi0: np.ndarray, *, tol: float = 1e-10,
                   max_iterations: int = 100) -> NewtonResult | None:
    """:func:`projected_newton` with the exact derivatives of several random terms (dense mode)."""

    def stop(psi: np.ndarray, new: np.ndarray, lam: float) -> bool:
        # a full step this small lands within O(step^2) of the optimum: done (on Python
        # floats: a handful of components, where numpy's per-call cost dominates)
        old, now = psi.tolist(), new.tolist()
        floor = 1e-6 * max(max(old), 1e-3)
        rel = max(abs(b - a) / max(a, floor) for a, b in zip(old, now))
        return rel <= tol or (lam == 1.0 and rel <= QUADRATIC_STEP)

    return projected_newton(lambda psi: profiled_derivatives(obj.st, obj.ps, psi),
                            np.maximum(np.asarray(psi0, dtype=float), 0.0), direction=_direction,
                            stop=stop, max_iterations=max_iterations)


def _one_term_direction(g: float, H: float, free: bool, a: float) -> float:
    """``-f'/f''``, or a gradient step scaled by ``max(a, 1)`` where the curvature is not positive."""
    return -g / H if H > 0 else -g * max(a, 1.0) / max(abs(g), 1.0)


def newton_one_term(obj: Objective, a0: float, *, tol: float = 1e-12,
                    max_iterations: int = 100) -> NewtonResult | None:
    """:func:`projected_newton` over ``a >= 0`` from ``a0`` with one random term (the fast path,
    on floats)."""

    def stop(a: float, a_new: float, lam: float) -> bool:
        step = abs(a_new - a)
        return step <= tol * max(1.0, a) or (lam == 1.0 and step <= QUADRATIC_STEP * a_new)

    out = projected_newton(lambda a: one_term_derivatives(obj, a), max(float(a0), 0.0),
                           direction=_one_term_direction, stop=stop,
                           max_iterations=max_iterations)
    return None if out is None else (np.array([out[0]]), out[1], out[2], out[3])


def _square_sums(st: Structure) -> tuple[np.ndarray, np.ndarray]:
    """Per block-2 level m: ``sum_i z_im^2`` and ``sum_i z_im^2 / c1_i`` over the term-1 levels i."""
    q2 = cast(np.ndarray, st.z22).shape[0]
    vals = cast(np.ndarray, st.group_values)
    if st.G is not None:                       # diagonal of G_g: sum over the group of z_im^2
        diag = st.G[:, _packed_index(q2).reshape(q2, q2).diagonal()]
        inv = np.divide(1.0, vals, out=np.zeros_like(vals), where=vals > 0)   # empty levels: 0
        return diag.sum(axis=0), inv @ diag
    z12, c1 = cast(np.ndarray, st.z12), cast(np.ndarray, st.c1)
    sq = z12 * z12
    return sq.sum(axis=0), (sq / np.maximum(c1, 1.0)[:, None]).sum(axis=0)


def henderson_start(obj: Objective) -> np.ndarray | None:
    """Henderson's method-1 moment estimates of ``psi`` (dense mode, several terms), or None.

    Each term's between-level sum of squares ``SSB_r = sum_l s_rl^2 / c_rl - S^2 / n``
    (and the total ``SST``) has expectation ``sum_t sigma_t^2 k_rt + (L_r - 1) sigma^2``
    with ``k_rt = sum_{l, m} n_lm^2 / c_rl - sum_m c_tm^2 / n`` (``n_lm``: cells in
    level l of term r and level m of term t), so one (R + 1) x (R + 1) solve
    gives unbiased estimates for crossed and nested terms alike, unlike the
    one-way estimates of :func:`mixrank.engine.lmm.reml.moment_start` (each term
    alone), which count a nesting term's variance twice.  Negative estimates
    are set to 0.  None when the system is singular or the residual estimate
    is not positive.  Only a start: the optimum is found and certified as
    from any other (docs/speed.md §3).  The system is formed from block sums with the
    block-2 terms' indicator matrix (docs/speed.md §7).
    """
    st, ps = obj.st, obj.ps
    R, n = obj.R, float(ps.n)
    c1, c2 = np.asarray(st.counts[0], dtype=float), cast(np.ndarray, st.c2)
    z22, s1, s2 = cast(np.ndarray, st.z22), np.asarray(ps.s[0]), cast(np.ndarray, ps.s2)
    # the block-2 terms at once: E (q2 x R-1) is the terms' indicator matrix
    E = block_indicator(tuple(st.levels[1:]))
    inv2 = 1.0 / np.maximum(c2, 1.0)                      # empty levels: their sums are 0
    sq, sq_w = _square_sums(st)
    sq_over_n = np.empty(R)
    sq_over_n[0] = float(c1 @ c1) / n
    sq_over_n[1:] = (c2 * c2) @ E / n
    S2n = ps.sum_d ** 2 / n
    K = np.empty((R + 1, R + 1))
    rhs = np.empty(R + 1)
    used1 = c1 > 0
    rhs[0] = float(np.sum(s1[used1] ** 2 / c1[used1]))
    rhs[1:R] = (s2 * s2 * inv2) @ E
    rhs[:R] -= S2n
    K[0, 0] = n
    K[0, 1:R] = sq_w @ E                                  # term 1 against each block-2 term
    K[1:R, 0] = (sq * inv2) @ E
    K[1:R, 1:R] = E.T @ (z22 * z22 * inv2[:, None]) @ E   # its diagonal: n
    K[:R, :R] -= sq_over_n[None, :]
    K[0, R] = np.count_nonzero(used1) - 1                 # levels used - 1
    K[1:R, R] = (c2 > 0) @ E - 1.0
    K[R, :R] = n - sq_over_n
    K[R, R] = n - 1
    rhs[R] = ps.sumsq_d - S2n
    x, info = _gesv(K, rhs)[2:]
    if info != 0 or not (np.all(np.isfinite(x)) and x[R] > 0):
        return None
    return np.maximum(x[:R], 0.0) / x[R]
