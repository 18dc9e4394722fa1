"""Stage engine: analytic gradient of the profiled REML criterion in the relative variances.

Inputs: the dense-mode :class:`~mixrank.engine.structure.Structure` and
:class:`~mixrank.engine.structure.PairSums` of one pair, and ``psi`` (the
relative variances ``sigma_r^2 / sigma^2`` in block order, ``psi = theta^2``).
Outputs: the gradient of :func:`mixrank.engine.reml.profiled_deviance` with
respect to ``psi``, or None where only finite differences apply (sparse
mode).  Contents: :func:`deviance_gradient`.

Derivation (notation of :func:`mixrank.engine.reml.quad_forms`).  With
``a = psi_1`` the largest term's relative variance, each group ``g`` of
its levels (same count value ``v_g``) has ``w_g = 1 / (1 + a v_g)`` and
``d(a w_g)/da = w_g^2``.  The rest is the Schur complement
``S = I + Lam M2 Lam``, ``M2 = Z22 - a sum_g w_g G_g``, ``Lam^2 = Psi2``;
by the push-through identity ``log|S| = log|I + M2 Psi2|`` and
``r' S^-1 r = u' B u`` with ``B = Lam S^-1 Lam = Psi2 (I + M2 Psi2)^-1``,
all smooth in ``psi`` down to 0.  Hence, for a block-2 term ``j`` with
indicator ``E_j``:

* ``d log|S| / d psi_j = sum_{i in j} K_ii``,
  ``K = M2 - (M2 Lam) S^-1 (Lam M2)``;
* ``d (u_x' B u_y) / d psi_j = sum_{i in j} z_x,i z_y,i``,
  ``z = (I + M2 Psi2)^-1 u = u - M2 Lam S^-1 Lam u``;

and for ``a`` (``dM2 = -P da``, ``P = sum_g w_g^2 G_g``; ``du = -sum_g w_g^2 h_g da``):

* ``d log|S| / da = -sum(B * P)``;
* ``d (u_x' B u_y) / da = du_x' B u_y + u_x' B du_y + (B u_x)' P (B u_y)``.

The criterion ``log|A| + log R_X^2 + nu log r^2`` then follows by the
chain rule.  Validated against central finite differences of
:func:`~mixrank.engine.reml.profiled_deviance` (tests/engine/test_reml_grad.py).
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np
import scipy.linalg as la

from .structure import PairSums, Structure

__all__ = ["deviance_gradient"]

_potrf, _potri = la.lapack.dpotrf, la.lapack.dpotri


def _quad_parts(st: Structure, ps: PairSums, psi: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Values ``(logdet, cAc, cAs, sAs)`` and their gradients (4 x R) in ``psi``; None if not dense."""
    if st.mode != "dense":
        return None
    R = len(st.levels)
    gv, gs = cast(np.ndarray, st.group_values), cast(np.ndarray, st.group_sizes)
    cc1, z12, z22, c2, h = (cast(np.ndarray, st.cc1), cast(np.ndarray, st.z12), cast(np.ndarray, st.z22),
                            cast(np.ndarray, st.c2), cast(np.ndarray, st.h))
    cs1, ss1, s2, k = (cast(np.ndarray, ps.cs1), cast(np.ndarray, ps.ss1), cast(np.ndarray, ps.s2),
                       cast(np.ndarray, ps.k))
    a = max(float(psi[0]), 0.0)
    D = a * gv + 1.0
    w = 1.0 / D
    w2 = w * w
    val = np.array([float(gs @ np.log(D)), a * float(w @ cc1), a * float(w @ cs1), a * float(w @ ss1)])
    grad = np.zeros((4, R))
    grad[:, 0] = [float(gs @ (gv * w)), float(w2 @ cc1), float(w2 @ cs1), float(w2 @ ss1)]
    q2 = z12.shape[1]
    if q2 == 0:
        return val, grad
    psi2 = np.concatenate([np.full(L, max(float(t), 0.0)) for L, t in zip(st.levels[1:], psi[1:])])
    lam = np.sqrt(psi2)
    if st.G is not None:
        Gf = st.G.reshape(st.G.shape[0], -1)
        M2 = z22 - a * (w @ Gf).reshape(q2, q2)
        P = (w2 @ Gf).reshape(q2, q2)
    else:
        wi = w[cast(np.ndarray, st.groups)]
        M2 = z22 - a * (z12.T @ (z12 * wi[:, None]))
        P = z12.T @ (z12 * (wi * wi)[:, None])
    u = np.stack([c2 - a * (w @ h), s2 - a * (w @ k)], axis=1)      # (q2, 2): c, s
    du = -np.stack([w2 @ h, w2 @ k], axis=1)                         # d u / d a
    S = lam[:, None] * M2 * lam[None, :]
    S.flat[:: q2 + 1] += 1.0
    L, info = _potrf(S, lower=1, clean=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"Schur complement not positive definite (potrf info {info})")
    Sinv, info = _potri(L, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"Schur complement inverse failed (potri info {info})")
    Sinv = np.tril(Sinv) + np.tril(Sinv, -1).T
    B = lam[:, None] * Sinv * lam[None, :]                           # Psi2 (I + M2 Psi2)^-1
    Bu = B @ u                                                       # (q2, 2)
    Q = u.T @ Bu                                                     # 2 x 2: cc, cs / sc, ss
    val += [2.0 * float(np.sum(np.log(L.diagonal()))), Q[0, 0], Q[0, 1], Q[1, 1]]
    # d/da
    PBu = P @ Bu
    dQa = du.T @ Bu + Bu.T @ du + Bu.T @ PBu
    grad[:, 0] += [-float(np.sum(B * P)), dQa[0, 0], dQa[0, 1], dQa[1, 1]]
    # d/dpsi_j, j >= 2
    M2lam = M2 * lam[None, :]
    Kdiag = np.diag(M2) - ((M2lam @ Sinv) * M2lam).sum(axis=1)
    z = u - M2 @ Bu                                                  # (I + M2 Psi2)^-1 u
    start = 0
    for j, Lj in enumerate(st.levels[1:], start=1):
        sl = slice(start, start + Lj)
        zz = z[sl]
        grad[:, j] += [float(Kdiag[sl].sum()), float(zz[:, 0] @ zz[:, 0]), float(zz[:, 0] @ zz[:, 1]),
                       float(zz[:, 1] @ zz[:, 1])]
        start += Lj
    return val, grad


def deviance_gradient(st: Structure, ps: PairSums, psi: np.ndarray) -> np.ndarray | None:
    """Gradient of lme4's profiled REML criterion with respect to ``psi = theta^2`` (block order).

    Parameters
    ----------
    st, ps : Structure, PairSums
        One pair's structure and sums (dense mode; other modes return None).
    psi : numpy.ndarray
        Relative variances, one per random term in block order; negative
        entries are treated as 0 (as the optimiser's objective does).

    Returns
    -------
    numpy.ndarray or None
        ``d criterion / d psi``; None where the structure is not dense (the
        caller then uses finite differences), or where the criterion's floors
        on ``R_X^2`` or ``r^2`` are active.
    """
    parts = _quad_parts(st, ps, np.asarray(psi, dtype=float))
    if parts is None:
        return None
    (logdet, cAc, cAs, sAs), (g_ld, g_cc, g_cs, g_ss) = parts
    rx2 = ps.n - cAc
    e = ps.sum_d - cAs
    if rx2 <= 0:
        return None
    r2 = ps.sumsq_d - sAs - e * e / rx2
    if r2 <= 0 or not math.isfinite(r2):
        return None
    nu = ps.n - 1
    d_rx2 = -g_cc
    d_r2 = -g_ss + 2.0 * e * g_cs / rx2 - e * e * g_cc / (rx2 * rx2)
    return g_ld + d_rx2 / rx2 + nu * d_r2 / r2
