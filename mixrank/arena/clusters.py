"""Stage arena/clusters: cluster detection, the CR2 sandwich and Bell-McCaffrey df for BT.

Inputs: a battle log's columns, the per-battle design of the free BT
parameters (:func:`mixrank.arena.ppi.design`), fitted win probabilities,
outcomes and cluster codes.
Outputs: the detected cluster column (:func:`detect_cluster`), a CR2
covariance and per-contrast Bell-McCaffrey degrees of freedom
(:func:`cr2`), the clusters touching each pair (:func:`clusters_per_pair`).
Contents (docs/arena.md §4, "Clusters").

The BT fit is a logistic regression, so its CR2 analogue is the one of a
GLM's working weighted regression (as clubSandwich's ``vcovCR`` for
``glm``): with ``W = diag(mu (1 - mu))``, ``X~ = W^1/2 Z``, bread
``B = (Z' W Z)^-1`` and cluster blocks ``H_gg = X~_g B X~_g'``, the
cluster scores are adjusted to ``u_g = X~_g' (I - H_gg)^-1/2 W_g^-1/2 e_g``
and ``V = B (sum_g u_g u_g') B``.  Bell and McCaffrey's df of a
combination ``c'theta`` is ``tr(G'G)^2 / tr((G'G)^2)`` with
``G'G = D - R B R'`` computed from the per-cluster pieces (never the
N x N projection).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

__all__ = ["CLUSTER_COLUMNS", "MAX_CR2_SIZE", "MAX_BM_CLUSTERS", "detect_cluster", "cr2",
           "clusters_per_pair"]

#: Columns taken as a battle's cluster when ``cluster=`` is not given (first present wins):
#: the prompt / conversation a vote was cast on, else the voter.
CLUSTER_COLUMNS = ("question_id", "conversation_id", "prompt_id", "prompt", "conversation",
                   "question", "voter_id", "voter", "user_id", "user", "annotator")
#: Largest cluster handled by CR2 (an m x m eigen-decomposition per cluster); above it CR1.
MAX_CR2_SIZE = 400
#: Most clusters for which Bell-McCaffrey df are computed; above it the df are the clusters
#: touching the pair minus one (thousands: the t reference is the normal one to 3 decimals).
MAX_BM_CLUSTERS = 2000


def detect_cluster(columns: pd.Index) -> str | None:
    """The first of :data:`CLUSTER_COLUMNS` among ``columns``, or None."""
    have = set(map(str, columns))
    return next((c for c in CLUSTER_COLUMNS if c in have), None)


def clusters_per_pair(a: np.ndarray, b: np.ndarray, cluster: np.ndarray, K: int) -> np.ndarray:
    """(K, K) number of clusters holding a battle of model i or model j (the pair's clusters)."""
    G = int(cluster.max()) + 1
    T = sparse.coo_matrix((np.ones(2 * a.size), (np.r_[cluster, cluster], np.r_[a, b])),
                          shape=(G, K)).tocsr()
    T.data[:] = 1.0                                # a cluster touches a model once
    both = (T.T @ T).toarray()
    cnt = np.diag(both).copy()
    return cnt[:, None] + cnt[None, :] - both


def _groups(cluster: np.ndarray) -> dict[int, np.ndarray]:
    """Battle indices grouped by cluster size: size -> (G_m, m) index array."""
    order = np.argsort(cluster, kind="stable")
    cs = cluster[order]
    starts = np.flatnonzero(np.r_[True, cs[1:] != cs[:-1]])
    sizes = np.diff(np.r_[starts, cs.size])
    out = {}
    for m in np.unique(sizes):
        st = starts[sizes == m]
        out[int(m)] = order[st[:, None] + np.arange(m)[None, :]]
    return out


def cr2(Z: np.ndarray, mu: np.ndarray, e: np.ndarray, cluster: np.ndarray,
        L: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """CR2 covariance of the free BT parameters and Bell-McCaffrey df of ``L' theta``.

    Parameters
    ----------
    Z : (N, P) per-battle design; mu : (N,) fitted P(a wins); e : (N,) residual
        ``outcome - mu``; cluster : (N,) integer codes.
    L : (P, m), optional
        Combinations whose df are wanted (contrasts, centred scores).

    Returns
    -------
    (P, P) covariance and (m,) df (None without ``L``).
    """
    w = np.clip(mu * (1 - mu), 1e-12, None)
    sw = np.sqrt(w)
    Xt = Z * sw[:, None]
    B = np.linalg.inv(np.ascontiguousarray(Xt.T) @ Xt)
    P = Z.shape[1]
    G = int(cluster.max()) + 1
    U = np.zeros((G, P))
    Rs = np.zeros((G, P, P))                       # X~_g' A_g X~_g
    groups = _groups(cluster)
    want = L is not None
    AX: dict[int, np.ndarray] = {}
    for m, idx in groups.items():
        if m == 1 and not want:                    # single battles: HC2 leverage, all 2-D
            x1 = Xt[idx[:, 0]]
            h = np.sum((x1 @ B) * x1, axis=1)
            a1 = np.where(h < 1 - 1e-10, 1.0 / np.sqrt(np.clip(1 - h, 1e-10, None)), 0.0)
            U[cluster[idx[:, 0]]] = x1 * (a1 * e[idx[:, 0]] / sw[idx[:, 0]])[:, None]
            continue
        X = Xt[idx]                                # (G_m, m, P)
        XB = X @ B
        H = np.matmul(XB, np.swapaxes(X, 1, 2))
        lam, vec = np.linalg.eigh(np.eye(m)[None] - H)
        inv_sqrt = np.where(lam > 1e-10, 1.0 / np.sqrt(np.clip(lam, 1e-10, None)), 0.0)
        A = np.matmul(vec * inv_sqrt[:, None, :], np.swapaxes(vec, 1, 2))
        r = e[idx] / sw[idx]
        u = np.matmul(np.swapaxes(X, 1, 2), np.matmul(A, r[:, :, None]))[:, :, 0]
        U[cluster[idx[:, 0]]] = u
        if want:
            ax = np.matmul(A, X)                   # A_g X~_g
            AX[m] = ax
            Rs[cluster[idx[:, 0]]] = np.matmul(np.swapaxes(X, 1, 2), ax)
    cov = B @ (np.ascontiguousarray(U.T) @ U) @ B
    if not want:
        return cov, None
    assert L is not None
    BL = B @ L                                     # (P, m_c)
    step = max(1, 8_000_000 // max(G * P, 1))      # combinations per block (memory bound)
    df = np.empty(L.shape[1])
    for s in range(0, L.shape[1], step):
        df[s:s + step] = _bm_df(BL[:, s:s + step], B, Rs, AX, groups, cluster, G)
    return cov, df


def _bm_df(BL: np.ndarray, B: np.ndarray, Rs: np.ndarray, AX: dict[int, np.ndarray],
           groups: dict[int, np.ndarray], cluster: np.ndarray, G: int) -> np.ndarray:
    """Bell-McCaffrey df ``tr(G'G)^2 / tr((G'G)^2)`` for the combinations ``B L`` given."""
    d = np.zeros((G, BL.shape[1]))
    for m, idx in groups.items():
        q = AX[m] @ BL                             # (G_m, m, c): q_g = A_g X~_g B c
        d[cluster[idx[:, 0]]] = np.sum(q * q, axis=1)
    r = Rs @ BL                                    # (G, P, c): r_g = R_g B c
    rB = np.einsum("pq,gqc->gpc", B, r, optimize=True)
    rBr = np.sum(r * rB, axis=1)                   # (G, c)
    tr1 = d.sum(axis=0) - rBr.sum(axis=0)
    rc = np.ascontiguousarray(np.moveaxis(r, 2, 0))            # (c, G, P)
    RR = np.matmul(np.ascontiguousarray(np.swapaxes(rc, 1, 2)), rc)   # (c, P, P)
    BRR = np.matmul(B[None], RR)
    fro = np.einsum("cpq,cqp->c", BRR, BRR, optimize=True)
    tr2 = np.sum(d * d, axis=0) - 2 * np.sum(d * rBr, axis=0) + fro
    df = np.where(tr2 > 0, tr1 ** 2 / np.where(tr2 > 0, tr2, 1.0), np.inf)
    return np.clip(df, 1.0, None)
