"""Stage engine: exact second derivatives of the dense-mode REML criterion (several random terms).

Inputs: a dense-mode :class:`~mixrank.engine.structure.Structure` and
:class:`~mixrank.engine.structure.PairSums` of one pair, and ``theta`` (block
order; ``psi = theta^2``).  Outputs: the four quadratic forms ``(log|A|, c'L
A^-1 L c, c'L A^-1 L s, s'L A^-1 L s)`` with their gradient and Hessian in
``psi`` (:func:`dense_hessian`); from them the profiled criterion with its
gradient and Hessian (:func:`profiled_derivatives`, used by the Newton
optimiser of :mod:`mixrank.engine.lmm.newton`) and the Hessian of the unprofiled
deviance in ``(theta, sigma)`` with the gradient of ``Var(mu_hat)``
(:func:`deviance_hessian`, used by the Satterthwaite df).

Derivation (docs/speed.md §2; notation of :mod:`mixrank.engine.lmm.reml_grad`).
With ``a = psi_1``, ``w_g = 1 / (1 + a v_g)``: ``M2 = Z22 - a sum_g w_g G_g``
so ``dM2/da = -P1``, ``d^2M2/da^2 = P2`` with ``P1 = sum_g w_g^2 G_g``,
``P2 = sum_g 2 v_g w_g^3 G_g`` (likewise ``u`` with ``h_g``, ``k_g``).  Let
``N = (I + M2 Psi2)^-1``, ``B = Psi2 N``, ``C = N M2 = M2 - M2 B M2``
(symmetric), ``z = N u``, ``b = B u``, ``r = P1 b + du``.  Then, for
block-2 terms ``i, j`` (indicators ``E_i``)::

    d2 log|S| / da2        = tr(B P2) - tr(B P1 B P1)
    d2 log|S| / da dpsi_j  = -sum_{l in j} (N P1 N')_ll
    d2 log|S| / dpsi_i dpsi_j = -sum_{l in i, m in j} C_lm^2
    d2 (u_x'B u_y) / da2   = d2u_x'b_y + b_x'd2u_y + 2 r_x'B r_y - b_x'P2 b_y
    d2 (u_x'B u_y) / da dpsi_j = t_x'E_j z_y + z_x'E_j t_y,  t = N r
    d2 (u_x'B u_y) / dpsi_i dpsi_j = -(E_j z_y)'C(E_i z_x) - (E_j z_x)'C(E_i z_y)

Validated against central differences of the analytic gradient
(tests/engine/test_reml_hess.py).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import cast

import numpy as np
import scipy.linalg as la

from ..structure import PairSums, Structure
from .criterion import reml_criterion

__all__ = ["dense_hessian", "keep_evaluation", "last_evaluation", "profiled_derivatives", "deviance_hessian",
           "unpack_many", "block_indicator"]

_potrf, _trtrs = la.lapack.dpotrf, la.lapack.dtrtrs
_PAIRS = ((0, 0), (0, 1), (1, 1))        # (x, y) of cAc, cAs, sAs: columns of u (c, s)


@lru_cache(maxsize=8)
def _packed_index(q: int) -> np.ndarray:
    """For each entry of a symmetric q x q matrix, its position in the packed upper triangle."""
    iu = np.triu_indices(q)
    idx = np.empty((q, q), dtype=np.intp)
    idx[iu] = np.arange(len(iu[0]))
    idx.T[iu] = np.arange(len(iu[0]))
    return idx.ravel()


def unpack_many(V: np.ndarray, q: int) -> np.ndarray:
    """The symmetric q x q matrices whose packed upper triangles are the rows of ``V``."""
    return V.take(_packed_index(q), axis=1).reshape(len(V), q, q)


def last_evaluation(st: Structure, ps: PairSums, theta: np.ndarray | float
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`dense_hessian`'s result (or the one-term search's, in its form) if the pair's last
    evaluation was at this ``theta`` (an array, or a float for one term), else None."""
    last = ps.memo.get("last")
    if last is not None and last[0] is st and last[1] == np.asarray(theta, dtype=float).tobytes():
        return last[2]
    return None


def dense_hessian(st: Structure, ps: PairSums, theta: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(values (4,), gradient (4, R), Hessian (4, R, R))`` of the quadratic forms in ``psi``.

    The forms are those of :func:`mixrank.engine.lmm.reml_grad.dense_parts`.
    The last result is kept on ``ps`` (:func:`last_evaluation`): the caller
    must not modify the arrays.

    Raises
    ------
    numpy.linalg.LinAlgError
        The Schur complement is not positive definite (corrupted input).
    """
    theta = np.asarray(theta, dtype=float)
    out = last_evaluation(st, ps, theta)
    if out is None:
        out = _dense_hessian(st, ps, theta)
        keep_evaluation(st, ps, theta, out)
    return out


def keep_evaluation(st: Structure, ps: PairSums, theta: np.ndarray | float,
                    out: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """Keep ``out`` (:func:`dense_hessian`'s form) as the pair's last evaluation at ``theta``;
    read back by :func:`last_evaluation`."""
    ps.memo["last"] = (st, np.asarray(theta, dtype=float).tobytes(), out)


_PX, _PY = np.array([x for x, _ in _PAIRS]), np.array([y for _, y in _PAIRS])
# the pairs' positions in a flattened 2 x 2 (x, y) and (y, x): ``take`` on them instead of a
# fancy index (a third of its cost on arrays this small)
_PXY, _PYX = 2 * _PX + _PY, 2 * _PY + _PX


@lru_cache(maxsize=8)
def block_indicator(levels: tuple[int, ...]) -> np.ndarray:
    """``E`` (q2 x R-1): which block-2 term each block-2 level belongs to, for the block-2
    ``levels`` of a structure (read-only; shared by the exact derivatives and Henderson's start)."""
    E = np.repeat(np.eye(len(levels)), levels, axis=0)
    E.flags.writeable = False
    return E


def _block2(st: Structure, a: float, weights: np.ndarray) -> np.ndarray:
    """``sum_g weights[m, g] G_g`` for each row m, as (m, q2, q2)."""
    q2 = cast(np.ndarray, st.z22).shape[0]
    if st.G_full is not None:                     # kept unpacked (a small structure)
        return (weights @ st.G_full).reshape(len(weights), q2, q2)
    if st.G is not None:
        return unpack_many(weights @ st.G, q2)
    z12, groups = cast(np.ndarray, st.z12), cast(np.ndarray, st.groups)
    return np.stack([z12.T @ (z12 * wm[groups][:, None]) for wm in weights])


def _constants(st: Structure, ps: PairSums) -> tuple:
    """The inputs of :func:`_dense_hessian` that do not depend on ``theta``, kept on the pair's sums."""
    kept = ps.memo.get("constants")
    if kept is not None and kept[0] is st:
        return kept[1]
    R = len(st.levels)
    gv, gs = cast(np.ndarray, st.group_values), cast(np.ndarray, st.group_sizes)
    # rows: the sums of term 1's forms (cc1, cs1, ss1), then gs * gv and gs * gv^2 -- one
    # product with (w, w^2, 2 v w^3) gives every term-1-only value, gradient and Hessian
    sig = np.stack([cast(np.ndarray, st.cc1), cast(np.ndarray, ps.cs1), cast(np.ndarray, ps.ss1),
                    gs * gv, gs * gv * gv])
    q2 = cast(np.ndarray, st.z22).shape[0]
    hk2: np.ndarray | None
    base: np.ndarray | None
    if q2:
        hk = np.stack([cast(np.ndarray, st.h), cast(np.ndarray, ps.k)], axis=2)    # (G, q2, 2)
        hk2 = hk.reshape(len(gv), 2 * q2)
        base = np.stack([cast(np.ndarray, st.c2), cast(np.ndarray, ps.s2)], axis=1)
    else:
        hk2 = base = None
    lev2 = np.array(st.levels[1:], dtype=np.intp)
    E = block_indicator(tuple(st.levels[1:]))
    out = (R, sig, q2, hk2, base, E, lev2, 2.0 * gv)
    ps.memo["constants"] = (st, out)
    return out


def _dense_hessian(st: Structure, ps: PairSums, theta: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One evaluation of :func:`dense_hessian`, written with as few array operations as the
    forms allow: a small pair's time is their count (docs/speed.md §7)."""
    R, sig, q2, hk2, base, E, lev2, gv2 = _constants(st, ps)
    hk2, base = cast(np.ndarray, hk2), cast(np.ndarray, base)
    gv, gs = cast(np.ndarray, st.group_values), cast(np.ndarray, st.group_sizes)
    a = float(theta[0]) ** 2
    W = np.empty((3, len(gv)))                           # w, w^2, 2 v w^3 with w = 1 / (1 + a v)
    w = W[0]
    np.multiply(gv, a, out=w)
    w += 1.0
    np.reciprocal(w, out=w)
    np.multiply(w, w, out=W[1])
    np.multiply(W[1], w, out=W[2])
    W[2] *= gv2
    X = sig @ W.T                                        # (5, 3)
    val = np.empty(4)
    grad = np.zeros((4, R))
    hess = np.zeros((4, R, R))
    val[0], val[1:] = float(gs @ np.log1p(a * gv)), a * X[:3, 0]
    grad[0, 0], grad[1:, 0] = X[3, 0], X[:3, 1]
    hess[0, 0, 0], hess[1:, 0, 0] = -X[4, 1], -X[:3, 2]
    if q2 == 0:
        return val, grad, hess
    lam = np.repeat(theta[1:], lev2)
    M2w, P1, P2 = _block2(st, a, W)
    M2 = cast(np.ndarray, st.z22) - a * M2w
    whk = (W @ hk2).reshape(3, q2, 2)
    u, du, d2u = base - a * whk[0], -whk[1], whk[2]
    S = lam[:, None] * M2 * lam[None, :]
    S.flat[:: q2 + 1] += 1.0
    L, info = _potrf(S, lower=1, clean=1, overwrite_a=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"Schur complement not positive definite (potrf info {info})")
    val[0] += 2.0 * float(np.log(L.diagonal()).sum())
    Li, info = _trtrs(L, np.diag(lam), lower=1, overwrite_b=1)   # L^-1 Lam (S^-1 = L^-T L^-1)
    if info != 0:
        raise np.linalg.LinAlgError(f"Schur complement inverse failed (trtrs info {info})")
    B = Li.T @ Li                                        # Lam S^-1 Lam
    MB = M2 @ B
    C = M2 - MB @ M2                                     # N M2 = M2 - M2 B M2
    N = -MB
    N.flat[:: q2 + 1] += 1.0                             # I - M2 B
    b = B @ u
    z = u - M2 @ b                                       # N u
    P1b = P1 @ b
    r = P1b + du
    Br = B @ r
    t = r - M2 @ Br                                      # N r
    BP1 = B @ P1
    # u'b, du'b, d2u'b, b'P1 b and b'P2 b in one product
    Q = np.concatenate([u, du, d2u, P1b, P2 @ b], axis=1).T @ b
    Qv, Qdu, Qd2u = Q[0:2], Q[2:4], Q[4:6]
    Qa = Qdu + Qdu.T + Q[6:8]
    Qaa = Qd2u + Qd2u.T + 2.0 * (r.T @ Br) - Q[8:10]
    npn = np.einsum("ij,ij->i", N @ P1, N)               # diag(N P1 N')
    val[1:] += Qv.ravel().take(_PXY)
    grad[1:, 0] += Qa.ravel().take(_PXY)
    hess[1:, 0, 0] += Qaa.ravel().take(_PXY)
    grad[0, 0] -= float(np.vdot(B, P1))
    hess[0, 0, 0] += float(np.vdot(B, P2)) - float(np.einsum("ij,ji->", BP1, BP1))
    # the block-2 terms at once: E (q2 x R-1) is the terms' indicator matrix; one product
    # gives tr(C E_i), diag(N P1 N')'s sums, z' E_i z and t' E_i z + z' E_i t
    zx, zy = z.take(_PX, axis=1), z.take(_PY, axis=1)
    Y = E.T @ np.concatenate([C.diagonal()[:, None], npn[:, None], zx * zy,
                              t.take(_PX, axis=1) * zy + zx * t.take(_PY, axis=1)], axis=1)
    grad[0, 1:] = Y[:, 0]
    hess[0, 0, 1:] = hess[0, 1:, 0] = -Y[:, 1]
    grad[1:, 1:] = Y[:, 2:5].T
    hess[1:, 0, 1:] = hess[1:, 1:, 0] = Y[:, 5:8].T
    hess[0, 1:, 1:] = -(E.T @ (C * C) @ E)               # -sum_{l in i, m in j} C_lm^2
    A = np.concatenate([z[:, :1] * E, z[:, 1:] * E], axis=1)
    K = (A.T @ C @ A).reshape(2, R - 1, 2, R - 1)        # K[x, i, y, j] = (E_i z_x)' C (E_j z_y)
    K = K.transpose(0, 2, 1, 3).reshape(4, R - 1, R - 1)  # K[2x + y, i, j]
    hess[1:, 1:, 1:] = -(K.take(_PXY, axis=0) + K.take(_PYX, axis=0))
    return val, grad, hess


def _ingredients(ps: PairSums, val: np.ndarray) -> tuple[float, float, float] | None:
    """``(R_X^2, e, r^2)`` from the four forms' values (``e = sum d - c'L A^-1 L s``), or None
    where the floors on ``R_X^2`` or ``r^2`` would be active."""
    rx2 = ps.n - float(val[1])
    if rx2 <= 0:
        return None
    e = ps.sum_d - float(val[2])
    r2 = ps.sumsq_d - float(val[3]) - e * e / rx2
    if not (r2 > 0 and math.isfinite(r2)):
        return None
    return rx2, e, r2


def _chain(ps: PairSums, val: np.ndarray, grad: np.ndarray, hess: np.ndarray):
    """``log|A|``, ``R_X^2``, ``r^2`` with their psi-gradients and Hessians from the four forms."""
    ing = _ingredients(ps, val)
    if ing is None:
        return None
    rx2, e, r2 = ing
    rx2_g, rx2_h, e_g, e_h = -grad[1], -hess[1], -grad[2], -hess[2]
    # r^2 = q - e^2 / rx2 (q = sumsq_d - val[3]); with c = e / rx2 and w = e' - c rx2':
    # (r^2)' = q' - 2 c e' + c^2 rx2',  (r^2)'' = q'' - 2 c e'' + c^2 rx2'' - (2 / rx2) w w'
    c = e / rx2
    r2_g = -grad[3] - 2.0 * c * e_g + c * c * rx2_g
    w = e_g - c * rx2_g
    r2_h = -hess[3] - 2.0 * c * e_h + c * c * rx2_h - (2.0 / rx2) * np.outer(w, w)
    return (val[0], grad[0], hess[0]), (rx2, rx2_g, rx2_h), (r2, r2_g, r2_h)


def profiled_derivatives(st: Structure, ps: PairSums, psi: np.ndarray
                         ) -> tuple[float, np.ndarray, np.ndarray] | None:
    """The profiled REML criterion at ``theta = sqrt(psi)`` with its gradient and Hessian in ``psi``.

    None where the floors on ``R_X^2`` or ``r^2`` would be active, or where the
    Schur complement is numerically not positive definite (a trial step far
    out on a tiny design): the caller treats that point as no descent.

    The chain rule of :func:`_chain` written out: with ``c = e / R_X^2`` and
    ``k = nu / r^2``, gradient and Hessian are the combination
    ``(1, -1 / R_X^2 - k c^2, 2 k c, -k)`` of the four forms' gradients and
    Hessians, the Hessian less ``g1 g1' / R_X^4 + 2 k w w' / R_X^2 + k r2' r2'' / r^2``
    (``g1``: the gradient of ``c'L A^-1 L c``; ``w = -g2 + c g1``; ``r2'`` the
    gradient of ``r^2``): a few array operations, where most of a small
    pair's cost is per operation.
    """
    try:
        val, grad, hess = dense_hessian(st, ps, np.sqrt(np.maximum(psi, 0.0)))
    except np.linalg.LinAlgError:
        return None
    ing = _ingredients(ps, val)
    if ing is None:
        return None
    rx2, e, r2 = ing
    nu = ps.n - 1
    c, k = e / rx2, nu / r2
    coef = np.array([1.0, -1.0 / rx2 - k * c * c, 2.0 * k * c, -k])
    g = coef @ grad
    V = np.array([[0.0, 1.0, 0.0, 0.0],                  # g1, w = -g2 + c g1, r2' = -g3 + 2c g2 - c^2 g1
                  [0.0, c, -1.0, 0.0],
                  [0.0, -c * c, 2.0 * c, -1.0]]) @ grad
    wts = np.array([1.0 / (rx2 * rx2), 2.0 * k / rx2, k / r2])
    R = len(g)
    H = (coef @ hess.reshape(4, R * R)).reshape(R, R) - (V.T * wts) @ V
    f = reml_criterion(float(val[0]), math.log(rx2), r2, ps.n)
    return f, g, 0.5 * (H + H.T)


def deviance_hessian(st: Structure, ps: PairSums, theta: np.ndarray, sigma: float
                     ) -> tuple[np.ndarray, np.ndarray] | None:
    """Hessian of the unprofiled REML deviance in ``x = (theta, sigma)`` and the gradient of ``Var(mu_hat)``.

    ``D = log|A| + log R_X^2 + nu log(2 pi sigma^2) + r^2 / sigma^2``; with
    ``psi = theta^2``: ``D_{theta_r theta_s} = 4 theta_r theta_s D_{psi_r psi_s}
    + 2 delta_rs D_{psi_r}``, ``D_{theta_r sigma} = -4 theta_r r^2_{psi_r} / sigma^3``,
    ``D_{sigma sigma} = -2 nu / sigma^2 + 6 r^2 / sigma^4``;
    ``Var(mu_hat) = sigma^2 / R_X^2``.  None where the floors would be active.
    """
    theta = np.abs(np.asarray(theta, dtype=float))
    parts = _chain(ps, *dense_hessian(st, ps, theta))
    if parts is None:
        return None
    (_, ld_g, ld_h), (rx2, rx2_g, rx2_h), (r2, r2_g, r2_h) = parts
    s2 = sigma * sigma
    d_g = ld_g + rx2_g / rx2 + r2_g / s2
    d_h = ld_h + rx2_h / rx2 - np.outer(rx2_g, rx2_g) / rx2 ** 2 + r2_h / s2
    R = len(theta)
    H = np.empty((R + 1, R + 1))
    H[:R, :R] = 4.0 * np.outer(theta, theta) * d_h + np.diag(2.0 * d_g)
    H[:R, R] = H[R, :R] = -4.0 * theta * r2_g / (s2 * sigma)
    H[R, R] = -2.0 * (ps.n - 1) / s2 + 6.0 * r2 / (s2 * s2)
    g = np.append(-s2 * 2.0 * theta * rx2_g / rx2 ** 2, 2.0 * sigma / rx2)
    return 0.5 * (H + H.T), g
