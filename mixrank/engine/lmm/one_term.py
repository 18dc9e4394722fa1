"""Stage engine: exact derivatives of the REML criterion of a pair with one random term.

Inputs: a dense-mode :class:`~mixrank.engine.lmm.objective.Objective` with one
component (e.g. ``(1|subject)``) and ``psi = a``.  Outputs: the criterion
with its first and second derivatives in ``a`` (:func:`one_term_derivatives`,
the derivatives callback of the one-term fast path of
:func:`mixrank.engine.lmm.newton.projected_newton`, which replaces L-BFGS-B
there: its fixed cost dominates such small problems, and a leaderboard of 58
models has 1,653 of them) and the exact Hessian of the unprofiled deviance
(:func:`one_term_hessian`, for the Satterthwaite df).

With one term the criterion depends on ``a = psi`` through sums over the
groups ``g`` of levels sharing a count ``v_g`` (``w_g = 1 / (1 + a v_g)``,
``d(a w_g)/da = w_g^2``, ``d^2(a w_g)/da^2 = -2 v_g w_g^3``)::

    log|A| = sum_g n_g log(1 + a v_g)
    c'L A^-1 L c = a sum_g w_g cc1_g   (likewise c's with cs1_g, s's with ss1_g)

so the first and second derivatives of
``log|A| + log R_X^2 + nu log r^2`` are exact sums (chain rule below).
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from .objective import Objective, criterion
from .reml_hess import keep_evaluation, last_evaluation

__all__ = ["one_term_parts", "one_term_derivatives", "one_term_hessian"]


def _forms(obj: Objective, a: float, theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(log|A|, cAc, cAs, sAs)`` with their first and second ``a``-derivatives at ``a``
    (``theta = sqrt(a)``, where the evaluation is kept).

    Kept on the pair's sums in :func:`mixrank.engine.lmm.reml_hess.dense_hessian`'s
    form, so that the certificate, ``sigma``, the estimates and the df at
    the optimiser's last point (:func:`mixrank.engine.lmm.objective.core`,
    :func:`one_term_hessian`) reuse it instead of evaluating it again.
    """
    st, ps = obj.st, obj.ps
    last = last_evaluation(st, ps, theta)
    if last is not None:
        val, grad, hess = last
        return val, grad[:, 0], hess[:, 0, 0]
    sums = ps.memo.get("sums3")
    if sums is None:
        sums = ps.memo["sums3"] = np.stack([cast(np.ndarray, st.cc1), cast(np.ndarray, ps.cs1),
                                            cast(np.ndarray, ps.ss1)])
    v = cast(np.ndarray, st.group_values)
    ng = cast(np.ndarray, st.group_sizes)
    w = 1.0 / (1.0 + a * v)
    w2 = w * w
    # rows: log|A|, cAc, cAs, sAs; the value, d/da, d^2/da^2
    val = np.empty(4)
    d1 = np.empty(4)
    d2 = np.empty(4)
    val[0], d1[0], d2[0] = ng @ np.log1p(a * v), ng @ (v * w), -(ng @ (v * v * w2))
    val[1:], d1[1:], d2[1:] = a * (sums @ w), sums @ w2, sums @ (-2.0 * v * w2 * w)
    keep_evaluation(st, ps, theta, (val, d1[:, None], d2[:, None, None]))
    return val, d1, d2


def one_term_parts(obj: Objective, a: float, theta: float | None = None) -> tuple[float, ...] | None:
    """``(log|A|, its a-derivatives 1, 2, R_X^2, derivatives 1, 2, r^2, derivatives 1, 2)`` at ``psi = a``.

    ``theta`` (``sqrt(a)``) when the caller has it.  None where ``R_X^2 <= 0``
    or ``r^2`` is not positive (degenerate input).
    """
    ps = obj.ps
    val, q1, q2 = _forms(obj, a, math.sqrt(a) if theta is None else theta)
    logdet, ld1, ld2 = float(val[0]), float(q1[0]), float(q2[0])
    rx2, rx2_1, rx2_2 = ps.n - float(val[1]), -float(q1[1]), -float(q2[1])
    e, e1, e2 = ps.sum_d - float(val[2]), -float(q1[2]), -float(q2[2])
    if rx2 <= 0:
        return None
    r2 = ps.sumsq_d - float(val[3]) - e * e / rx2                       # S - sAs - e^2 / rx2
    if not (r2 > 0 and math.isfinite(r2)):
        return None
    t1 = (2 * e * e1 * rx2 - e * e * rx2_1) / rx2 ** 2
    t2 = (2 * (e1 * e1 + e * e2) / rx2 - 4 * e * e1 * rx2_1 / rx2 ** 2
          - e * e * rx2_2 / rx2 ** 2 + 2 * e * e * rx2_1 ** 2 / rx2 ** 3)
    return logdet, ld1, ld2, rx2, rx2_1, rx2_2, r2, -float(q1[3]) - t1, -float(q2[3]) - t2


def one_term_derivatives(obj: Objective, a: float) -> tuple[float, float, float] | None:
    """``(criterion, d/da, d^2/da^2)`` at ``psi = a`` (one random term, dense mode); None if degenerate."""
    parts = one_term_parts(obj, a)
    if parts is None:
        return None
    logdet, ld1, ld2, rx2, rx2_1, rx2_2, r2, r2_1, r2_2 = parts
    nu = obj.n - 1
    f = criterion(obj.ps, logdet, rx2, r2)
    f1 = ld1 + rx2_1 / rx2 + nu * r2_1 / r2
    f2 = ld2 + rx2_2 / rx2 - (rx2_1 / rx2) ** 2 + nu * (r2_2 / r2 - (r2_1 / r2) ** 2)
    return f, f1, f2


def one_term_hessian(obj: Objective, theta: float, sigma: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact Hessian of the unprofiled REML deviance in ``(theta, sigma)`` and the gradient of ``Var(mu_hat)``.

    ``D = log|A| + log R_X^2 + nu log(2 pi sigma^2) + r^2 / sigma^2`` with
    ``psi = theta^2``: ``D_tt = 2 D_psi + 4 theta^2 D_psipsi``,
    ``D_ts = -4 theta r^2_psi / sigma^3``, ``D_ss = -2 nu / sigma^2 + 6 r^2 / sigma^4``;
    ``Var(mu_hat) = sigma^2 / R_X^2``.
    """
    parts = one_term_parts(obj, theta * theta, theta)
    if parts is None:
        return None
    _, ld1, ld2, rx2, rx2_1, rx2_2, r2, r2_1, r2_2 = parts
    s2 = sigma * sigma
    d1 = ld1 + rx2_1 / rx2 + r2_1 / s2
    d2 = ld2 + rx2_2 / rx2 - (rx2_1 / rx2) ** 2 + r2_2 / s2
    h_ts = -4.0 * theta * r2_1 / (s2 * sigma)
    H = np.array([[2.0 * d1 + 4.0 * theta * theta * d2, h_ts],
                  [h_ts, -2.0 * (obj.n - 1) / s2 + 6.0 * r2 / (s2 * s2)]])
    g = np.array([-s2 * 2.0 * theta * rx2_1 / rx2 ** 2, 2.0 * sigma / rx2])
    return H, g
