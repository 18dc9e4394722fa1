"""Stage engine: dense-mode quadratic forms of the profiled REML criterion and their gradient.

Inputs: the dense-mode :class:`~mixrank.engine.structure.Structure` and
:class:`~mixrank.engine.structure.PairSums` of one pair, and ``theta`` (the
relative SDs ``sigma_r / sigma`` in block order; ``psi = theta^2``).
Outputs: ``(log|A|, c'L A^-1 L c, c'L A^-1 L s, s'L A^-1 L s)`` and, on
request, their gradient with respect to ``psi``.
Contents: :func:`dense_parts`, the one dense-mode evaluation used both by
:func:`mixrank.engine.lmm.reml.quad_forms` (values) and by
:func:`mixrank.engine.lmm.reml.deviance_and_gradient` (values and gradient).

Derivation (notation of :func:`mixrank.engine.lmm.reml.quad_forms`).  With
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
chain rule (in :mod:`mixrank.engine.lmm.reml`).  Validated against central
finite differences of :func:`~mixrank.engine.lmm.reml.profiled_deviance`
(tests/engine/test_reml_grad.py).
"""

from __future__ import annotations

from typing import cast

import numpy as np
import scipy.linalg as la

from ..structure import PairSums, Structure

__all__ = ["dense_parts", "unpack", "term_parts"]

_potrf, _potri, _trtrs = la.lapack.dpotrf, la.lapack.dpotri, la.lapack.dtrtrs


def unpack(v: np.ndarray, triu: tuple[np.ndarray, np.ndarray] | None, q: int) -> np.ndarray:
    """The symmetric q x q matrix whose packed upper triangle is ``v``."""
    iu = cast("tuple[np.ndarray, np.ndarray]", triu)
    M = np.empty((q, q))
    M[iu] = v
    M.T[iu] = v
    return M


def dense_parts(st: Structure, ps: PairSums, theta: np.ndarray, *, grad: bool = False
                ) -> tuple[np.ndarray, np.ndarray | None]:
    """The four quadratic forms at ``theta`` and, with ``grad``, their gradient in ``psi = theta^2``.

    Parameters
    ----------
    st, ps : Structure, PairSums
        One pair's dense-mode structure and sums.
    theta : numpy.ndarray
        Relative SDs in block order (non-negative).
    grad : bool, default False
        Also return the 4 x R gradient with respect to ``psi``.

    Returns
    -------
    tuple
        ``(values, gradient)``: ``values = (log|A|, cAc, cAs, sAs)``;
        ``gradient`` is None unless ``grad``.

    Raises
    ------
    numpy.linalg.LinAlgError
        The Schur complement is not positive definite (it always is for
        finite ``theta``; this flags corrupted input).
    """
    # build_structure / pair_sums set every dense-mode field
    R = len(st.levels)
    gv, gs = cast(np.ndarray, st.group_values), cast(np.ndarray, st.group_sizes)
    cc1, z22, c2, h = (cast(np.ndarray, st.cc1), cast(np.ndarray, st.z22), cast(np.ndarray, st.c2),
                       cast(np.ndarray, st.h))
    cs1, ss1, s2, k = (cast(np.ndarray, ps.cs1), cast(np.ndarray, ps.ss1), cast(np.ndarray, ps.s2),
                       cast(np.ndarray, ps.k))
    t1 = float(theta[0])
    a = t1 * t1
    D = a * gv + 1.0
    w = 1.0 / D
    w2 = w * w
    val = np.array([float(gs @ np.log(D)), a * float(w @ cc1), a * float(w @ cs1), a * float(w @ ss1)])
    g = None
    if grad:
        g = np.zeros((4, R))
        g[:, 0] = [float(gs @ (gv * w)), float(w2 @ cc1), float(w2 @ cs1), float(w2 @ ss1)]
    q2 = z22.shape[0]
    if q2 == 0:
        return val, g
    lam = np.concatenate([np.full(L, t) for L, t in zip(st.levels[1:], theta[1:])])
    Gp, P = st.G, None
    if Gp is not None and g is not None:     # one pass over G for both weightings
        WG = np.stack([w, w2]) @ Gp
        M2 = z22 - a * unpack(WG[0], st.triu, q2)
        P = unpack(WG[1], st.triu, q2)
    elif Gp is not None:
        M2 = z22 - a * unpack(w @ Gp, st.triu, q2)
    else:
        z12 = cast(np.ndarray, st.z12)
        wi = w[cast(np.ndarray, st.groups)]
        M2 = z22 - a * (z12.T @ (z12 * wi[:, None]))
    u = np.empty((q2, 2))                                            # columns c, s
    u[:, 0] = c2 - a * (w @ h)
    u[:, 1] = s2 - a * (w @ k)
    S = lam[:, None] * M2 * lam[None, :]
    S.flat[:: q2 + 1] += 1.0
    # LAPACK directly (no argument checking): this runs hundreds of times per pair
    L, info = _potrf(S, lower=1, clean=1, overwrite_a=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"Schur complement not positive definite (potrf info {info})")
    val[0] += 2.0 * float(np.sum(np.log(L.diagonal())))
    if g is None:
        y, info = _trtrs(L, lam[:, None] * u, lower=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"triangular solve failed (trtrs info {info})")
        val[1:] += [float(y[:, 0] @ y[:, 0]), float(y[:, 0] @ y[:, 1]), float(y[:, 1] @ y[:, 1])]
        return val, None
    Sinv, info = _potri(L, lower=1)          # lower triangle; L's upper part was zeroed
    if info != 0:
        raise np.linalg.LinAlgError(f"Schur complement inverse failed (potri info {info})")
    Sinv += Sinv.T
    Sinv.flat[:: q2 + 1] *= 0.5
    B = lam[:, None] * Sinv * lam[None, :]                           # Psi2 (I + M2 Psi2)^-1
    Bu = B @ u
    Q = u.T @ Bu
    val[1:] += [Q[0, 0], Q[0, 1], Q[1, 1]]
    # d/da
    if P is None:
        z12 = cast(np.ndarray, st.z12)
        P = z12.T @ (z12 * w2[cast(np.ndarray, st.groups)][:, None])
    du = -np.stack([w2 @ h, w2 @ k], axis=1)
    dQa = du.T @ Bu + Bu.T @ du + Bu.T @ (P @ Bu)
    g[:, 0] += [-float(np.sum(B * P)), dQa[0, 0], dQa[0, 1], dQa[1, 1]]
    # d/dpsi_j, j >= 2
    for j, (kd, zz) in enumerate(term_parts(M2, lam, Sinv, u, Bu, st.levels), start=1):
        g[:, j] += [kd, float(zz[:, 0] @ zz[:, 0]), float(zz[:, 0] @ zz[:, 1]),
                    float(zz[:, 1] @ zz[:, 1])]
    return val, g


def term_parts(M2: np.ndarray, lam: np.ndarray, Sinv: np.ndarray, u: np.ndarray, Bu: np.ndarray,
               levels: tuple[int, ...] | list[int]) -> list[tuple[float, np.ndarray]]:
    """Per block-2 term ``j``: ``d log|S| / d psi_j`` and the rows ``z_j`` of ``(I + M2 Psi2)^-1 u``.

    ``d (u_x' B u_y) / d psi_j = z_x,j' z_y,j`` (module docstring); shared by
    :func:`dense_parts` (two columns) and :mod:`mixrank.engine.lmm.reml_fixed`
    (``p + 1`` columns).
    """
    M2lam = M2 * lam[None, :]
    Kdiag = np.diag(M2) - ((M2lam @ Sinv) * M2lam).sum(axis=1)
    z = u - M2 @ Bu                                                  # (I + M2 Psi2)^-1 u
    out = []
    start = 0
    for Lj in levels[1:]:
        out.append((float(Kdiag[start:start + Lj].sum()), z[start:start + Lj]))
        start += Lj
    return out
