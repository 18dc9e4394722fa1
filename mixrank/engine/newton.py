"""Stage engine: projected Newton for the dense-mode REML criterion with several random terms.

Inputs: a dense-mode :class:`~mixrank.engine.objective.Objective` with
``R >= 2`` components and a start ``psi0 >= 0``.  Outputs: ``(psi, criterion,
evaluations, hit the iteration limit)`` or None, used by
:func:`mixrank.engine.reml.optimise` in place of L-BFGS-B as the first run;
its optimum is then certified by the KKT check like any other (and the
remaining starts run when it is not).

Each iteration evaluates the criterion with its exact gradient and Hessian
in ``psi`` (:func:`mixrank.engine.reml_hess.profiled_derivatives`); the
components at 0 whose derivative is non-negative are held there (the active
set of the bound ``psi >= 0``), and the others take the Newton step (the
Hessian's eigenvalues floored when it is not positive definite), projected
on ``psi >= 0``, halved until the criterion does not increase.  It stops
when the step is below ``tol`` relative to each component (floored at
``1e-6`` of the largest).  Notes: docs/speed.md §3.
"""

from __future__ import annotations

import numpy as np

from .objective import Objective
from .reml_hess import profiled_derivatives

__all__ = ["newton_bounded"]


def _direction(g: np.ndarray, H: np.ndarray, free: np.ndarray) -> np.ndarray:
    """The Newton step on the free components (eigenvalues floored to keep it a descent direction)."""
    step = np.zeros(len(g))
    gf, Hf = g[free], H[np.ix_(free, free)]
    try:
        L = np.linalg.cholesky(Hf)
        step[free] = -np.linalg.solve(L.T, np.linalg.solve(L, gf))
    except np.linalg.LinAlgError:
        ev, V = np.linalg.eigh(Hf)
        floor = max(1e-8 * float(np.max(np.abs(ev))), 1e-300)
        step[free] = -V @ ((V.T @ gf) / np.maximum(np.abs(ev), floor))
    return step


def newton_bounded(obj: Objective, psi0: np.ndarray, *, tol: float = 1e-10,
                   max_iterations: int = 100) -> tuple[np.ndarray, float, int, bool] | None:
    """Minimise the criterion over ``psi >= 0`` from ``psi0``: ``(psi, criterion, evaluations,
    hit the limit)``, or None where the exact derivatives are unavailable (floors active)."""
    psi = np.maximum(np.asarray(psi0, dtype=float), 0.0)
    cur = profiled_derivatives(obj.st, obj.ps, psi)
    if cur is None:
        return None
    nfev = 1
    for _ in range(max_iterations):
        f, g, H = cur
        free = (psi > 0) | (g < 0)
        if not free.any():
            return psi, f, nfev, False               # KKT at the bounds
        step = _direction(g, H, free)
        scale = np.maximum(psi, 1e-6 * max(float(psi.max()), 1e-3))
        lam = 1.0
        while True:
            new = np.maximum(psi + lam * step, 0.0)
            nxt = profiled_derivatives(obj.st, obj.ps, new)
            nfev += 1
            if nxt is not None and nxt[0] <= f + 1e-14 * max(1.0, abs(f)):
                break
            lam *= 0.5
            if lam < 1e-10:
                return psi, f, nfev, False           # no descent left: a stationary point
        done = bool(np.all(np.abs(new - psi) <= tol * scale))
        psi, cur = new, nxt
        if done:
            return psi, cur[0], nfev, False
    return psi, cur[0], nfev, True
