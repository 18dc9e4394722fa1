"""Stage arena/clusters: cluster detection, the CR2 sandwich and Bell-McCaffrey df for BT.

Inputs: a battle log's columns, the per-battle design of the free BT
parameters (:func:`mixrank.arena.ppi.design`), fitted win probabilities,
outcomes and cluster codes.
Outputs: the detected cluster column (:func:`detect_cluster`), a CR2
covariance and per-contrast Bell-McCaffrey degrees of freedom
(:func:`cr2`), the clusters touching each pair (:func:`clusters_per_pair`),
the BT design by its non-zeros (:class:`Rows`, :func:`battle_rows`).
Contents (docs/arena.md §4, "Clusters"; the fast path without df: docs/speed.md §8).

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

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from mixrank.arena.data import Battles

__all__ = ["Rows", "battle_rows", "cluster_codes", "CLUSTER_COLUMNS", "MAX_CR2_SIZE", "MAX_BM_CLUSTERS", "MAX_SERIES_TERMS",
           "SERIES_TOL", "detect_cluster", "series_terms", "cr2", "clusters_per_pair"]

#: Columns taken as a battle's cluster when ``cluster=`` is not given (first present wins):
#: the prompt / conversation a vote was cast on, else the voter.
CLUSTER_COLUMNS = ("question_id", "conversation_id", "prompt_id", "prompt", "conversation",
                   "question", "voter_id", "voter", "user_id", "user", "annotator")
#: Largest cluster handled by CR2 (an m x m eigen-decomposition per cluster); above it CR1.
MAX_CR2_SIZE = 400
#: Most clusters for which Bell-McCaffrey df are computed; above it the df are the clusters
#: touching the pair minus one (thousands: the t reference is the normal one to 3 decimals).
MAX_BM_CLUSTERS = 2000


@dataclass(frozen=True)
class Rows:
    """A per-battle design by its non-zeros, slot by slot: ``D`` (l, N) values and ``J``
    (l, N) columns (zero-padded), ``shape`` (N, P).  :func:`battle_rows` builds the BT
    design so."""

    D: np.ndarray
    J: np.ndarray
    shape: tuple[int, int]
    #: Without covariates, each battle's ordered pair ``a K + b`` (model 0 the dropped one):
    #: the bread and leverages then come from per-pair weight sums (:func:`_pair_bread`).
    pair: np.ndarray | None = None

    def __matmul__(self, theta: np.ndarray) -> np.ndarray:
        """``Z theta``."""
        t = np.asarray(theta)
        if self.pair is not None and t.ndim == 1:  # theta_a - theta_b by pair (theta_0 = 0)
            s = np.r_[0.0, t]
            return (s[:, None] - s[None, :]).ravel()[self.pair]
        out = self.D[0] * t[self.J[0]]
        for d, j in zip(self.D[1:], self.J[1:]):
            out += d * t[j]
        return out


def battle_rows(bt: Battles) -> Rows:
    """:func:`mixrank.arena.ppi.design` as :class:`Rows`: ``+1`` at model a, ``-1`` at model b,
    the covariate differences; model 0's column dropped (its entry a zero in column 0)."""
    K, n, p = len(bt.models), bt.n, bt.x.shape[1]
    J = np.empty((2 + p, n), dtype=np.int64)
    np.maximum(bt.a - 1, 0, out=J[0])              # the dropped model 0: column 0, entry 0
    np.maximum(bt.b - 1, 0, out=J[1])
    J[2:] = np.arange(K - 1, K - 1 + p)[:, None]
    D = np.empty((2 + p, n))
    np.not_equal(bt.a, 0, out=D[0])
    np.subtract(bt.b == 0, 1.0, out=D[1])
    D[2:] = bt.x.T
    return Rows(D, J, (n, K + p - 1), None if p else bt.a.astype(np.int64) * K + bt.b)


def cluster_codes(cluster: np.ndarray) -> np.ndarray:
    """Cluster codes ``0..G-1`` each in use: ``cluster`` itself when it is so already (the
    codes :func:`mixrank.arena.data.encode_battles` stores), else ``pd.factorize``'s."""
    c = np.asarray(cluster)
    if c.dtype.kind in "iu" and c.size and int(c.min()) >= 0 and bool(
            np.all(np.bincount(c) > 0)):
        return c
    return pd.factorize(c)[0]


def detect_cluster(columns: pd.Index) -> str | None:
    """The first of :data:`CLUSTER_COLUMNS` among ``columns``, or None."""
    have = set(map(str, columns))
    return next((c for c in CLUSTER_COLUMNS if c in have), None)


#: Most clusters x models for which :func:`clusters_per_pair` forms the dense 0/1 table.
_DENSE_TABLE = 20_000_000


def clusters_per_pair(a: np.ndarray, b: np.ndarray, cluster: np.ndarray, K: int) -> np.ndarray:
    """(K, K) number of clusters holding a battle of model i or model j (the pair's clusters)."""
    G = int(cluster.max()) + 1
    if G * K <= _DENSE_TABLE:                      # dense 0/1 table: one BLAS product
        flat = np.zeros(G * K, dtype=np.float32)   # sums of 0/1 below 2^24: exact
        base = cluster * K
        flat[base + a] = 1.0
        flat[base + b] = 1.0
        T = flat.reshape(G, K)
        from mixrank.engine.parallel import blas_controller

        with blas_controller().limit(limits=1, user_api="blas"):    # threads only contend
            both = (np.ascontiguousarray(T.T) @ T).astype(np.float64)
    else:
        Ts = sparse.coo_matrix((np.ones(2 * a.size), (np.r_[cluster, cluster], np.r_[a, b])),
                               shape=(G, K)).tocsr()
        Ts.data[:] = 1.0                           # a cluster touches a model once
        both = (Ts.T @ Ts).toarray()
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


def cr2(Z: np.ndarray | sparse.spmatrix | Rows, mu: np.ndarray, e: np.ndarray, cluster: np.ndarray,
        L: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """CR2 covariance of the free BT parameters and Bell-McCaffrey df of ``L' theta``.

    Parameters
    ----------
    Z : (N, P) per-battle design (dense, scipy sparse or :class:`Rows`); mu : (N,) fitted
        P(a wins); e : (N,) residual ``outcome - mu``; cluster : (N,) integer codes.
    L : (P, m), optional
        Combinations whose df are wanted (contrasts, centred scores).

    Returns
    -------
    (P, P) covariance and (m,) df (None without ``L``).

    Notes
    -----
    Without ``L`` only the adjusted scores ``u_g`` are needed: single battles take HC2's
    closed form, clusters whose hat block has a small trace the series
    ``(I - H_gg)^-1/2 r_g = sum_k c_k H_gg^k r_g`` summed until its bound says the rest is
    below :data:`SERIES_TOL` of ``|r_g|`` (:func:`series_terms`, :func:`_fewest_terms`,
    :func:`_series_scores`), the others (at most :data:`EXACT_SHARE` of them) the
    eigen-decomposition of ``I - H_gg`` (:func:`_exact_scores`); all from the design's
    non-zeros (two a battle without covariates).  With ``L`` every cluster takes the
    eigen-decomposition.
    """
    w = np.maximum(mu * (1 - mu), 1e-12)
    sw = np.sqrt(w)
    r = e / sw                                     # working residuals W^-1/2 e
    P = Z.shape[1]
    G = int(cluster.max()) + 1
    U = np.zeros((G, P))
    if L is None:
        from mixrank.engine.parallel import blas_controller

        # (G, P) x (P, P) products a term: BLAS threads only contend (1.6x the CPU, measured)
        with blas_controller().limit(limits=1, user_api="blas"):
            B, U = _scores(Z, sw, r, cluster, G)
            return B @ (np.ascontiguousarray(U.T) @ U) @ B, None
    if isinstance(Z, Rows):
        Zd = np.zeros(Z.shape)
        for d, j in zip(Z.D, Z.J):
            np.add.at(Zd, (np.arange(Z.shape[0]), j), d)
    else:
        Zd = np.asarray(Z.toarray() if sparse.issparse(Z) else Z)  # type: ignore[union-attr]
    Xt = Zd * sw[:, None]
    B = np.linalg.inv(np.ascontiguousarray(Xt.T) @ Xt)
    groups = _groups(cluster)
    Rs = np.zeros((G, P, P))                       # X~_g' A_g X~_g
    AX: dict[int, np.ndarray] = {}
    _exact_scores(Xt, B, r, cluster, groups, U, Rs, AX)
    cov = B @ (np.ascontiguousarray(U.T) @ U) @ B
    BL = B @ L                                     # (P, m_c)
    step = max(1, 8_000_000 // max(G * P, 1))      # combinations per block (memory bound)
    df = np.empty(L.shape[1])
    for s in range(0, L.shape[1], step):
        df[s:s + step] = _bm_df(BL[:, s:s + step], B, Rs, AX, groups, cluster, G)
    return cov, df


def _scores(Z: np.ndarray | sparse.spmatrix | Rows, sw: np.ndarray, r: np.ndarray,
            cluster: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray]:
    """Bread ``B`` and (G, P) adjusted scores ``u_g`` of :func:`cr2` without df, from the
    design's non-zeros: ``X~`` as a sparse ``N x (G P)`` matrix whose column ``g P + j`` is
    column ``j`` within cluster ``g`` (:func:`_cluster_operator`), so a per-cluster sum
    ``X~_g' v`` is one sparse product and its gather back another."""
    P = Z.shape[1]
    D, J = _padded(Z)                              # (l, N) non-zeros and their columns
    cl = cluster
    dw = [d * sw for d in D]                       # X~'s non-zeros, by slot
    jj = list(J)
    if isinstance(Z, Rows) and Z.pair is not None and P * P * (P + 1) <= _PAIR_TABLE:
        B, h = _pair_bread(Z.pair, P + 1, sw * sw)
    else:
        B, h = _bread(dw, jj, P)
    need = series_terms(h, cl, G)
    single = np.bincount(cl, minlength=G) == 1
    terms = _fewest_terms(need[~single])
    series = (need <= terms) & ~single
    Xs = _cluster_operator(dw, jj, cl, G, P)
    acc = np.zeros(cl.size)                        # A_g r_g, battle by battle
    in_single, in_series = single[cl], series[cl]
    if single.any():                               # single battles: HC2 leverage
        a1 = np.where(h < 1 - 1e-10, 1.0 / np.sqrt(np.clip(1 - h, 1e-10, None)), 0.0)
        acc += np.where(in_single, a1 * r, 0.0)
    if series.any():
        acc += _series_scores(Xs, np.where(in_series, r, 0.0), B, terms, G)
    U = (Xs.T @ acc).reshape(G, P)                 # X~_g' A_g r_g
    rest = np.flatnonzero(~in_series & ~in_single)
    if rest.size:                                  # dense rows of those clusters only
        Xt = np.zeros((rest.size, P))
        for d, j in zip(dw, jj):
            np.add.at(Xt, (np.arange(rest.size), j[rest]), d[rest])
        _exact_scores(Xt, B, r[rest], cl[rest], _groups(cl[rest]), U, None, None)
    return B, U


def _bread(dw: list[np.ndarray], jj: list[np.ndarray], P: int) -> tuple[np.ndarray, np.ndarray]:
    """Bread ``B = (X~' X~)^-1`` and leverages ``h_i = x~_i' B x~_i`` from the non-zeros."""
    gram = np.zeros(P * P)
    prods = []                                     # slot pairs' (column pair, product)
    for i in range(len(dw)):
        for k in range(i + 1):
            key, prod = jj[i] * P + jj[k], dw[i] * dw[k]
            g = np.bincount(key, weights=prod, minlength=P * P)
            gram += g if i == k else g + g.reshape(P, P).T.ravel()
            prods.append((key, prod if i == k else np.multiply(prod, 2.0, out=prod)))
    B = np.linalg.inv(gram.reshape(P, P))
    Bf = B.ravel()
    h = np.zeros(dw[0].size)                       # leverages x~_i' B x~_i
    for key, prod in prods:
        h += prod * Bf[key]
    return B, h


#: Most ordered pairs x models for :func:`_pair_bread`'s table (else :func:`_bread`).
_PAIR_TABLE = 20_000_000


def _pair_bread(pair: np.ndarray, K: int, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_bread` for a BT design without covariates: ``X~' X~ = sum_(a,b) W_ab z_ab
    z_ab'`` with ``z_ab = e_a - e_b`` (model 0's column dropped) and ``W_ab`` the pair's sum
    of weights; ``h_i = w_i z_ab' B z_ab``."""
    wp = np.bincount(pair, weights=w, minlength=K * K)
    up = np.flatnonzero(wp > 0)                    # the ordered pairs met (weights > 0)
    rows = np.arange(up.size)
    Zp = np.zeros((up.size, K))
    Zp[rows, up // K] += 1.0
    Zp[rows, up % K] -= 1.0
    Zp = Zp[:, 1:]
    B = np.linalg.inv(Zp.T @ (wp[up, None] * Zp))
    hp = np.zeros(K * K)
    hp[up] = np.einsum("ij,jk,ik->i", Zp, B, Zp)
    return B, w * hp[pair]


def _cluster_operator(dw: list[np.ndarray], jj: list[np.ndarray], cluster: np.ndarray, G: int,
                      P: int) -> sparse.csr_matrix:
    """``X~`` as a CSR ``N x (G P)`` matrix, row ``i``'s non-zeros ``dw[s][i]`` in columns
    ``cluster[i] P + jj[s][i]`` (a column met twice in a row stays twice: products are
    linear in the entries).  Built without a sort: each row holds one entry per slot."""
    n, lw = cluster.size, len(dw)
    itype = np.int32 if G * P < 2**31 - 1 and n * lw < 2**31 - 1 else np.int64
    idx = np.empty((n, lw), dtype=itype)
    val = np.empty((n, lw))
    base = cluster.astype(itype) * itype(P)
    for s in range(lw):
        np.add(base, jj[s], out=idx[:, s], casting="unsafe")
        val[:, s] = dw[s]
    ptr = np.arange(0, n * lw + 1, lw, dtype=itype)
    return sparse.csr_matrix((val.ravel(), idx.ravel(), ptr), shape=(n, G * P))


def _exact_scores(Xt: np.ndarray, B: np.ndarray, r: np.ndarray, cluster: np.ndarray,
                  groups: dict[int, np.ndarray], U: np.ndarray, Rs: np.ndarray | None,
                  AX: dict[int, np.ndarray] | None) -> None:
    """``u_g = X~_g' A_g r_g`` with ``A_g = (I - H_gg)^-1/2`` from a batched eigen-decomposition
    of each size's clusters (``groups``: size -> (G_m, m) battle indices), written into ``U``;
    with ``Rs``/``AX`` also ``X~_g' A_g X~_g`` and ``A_g X~_g`` for the df."""
    for m, idx in groups.items():
        X = Xt[idx]                                # (G_m, m, P)
        XB = X @ B
        H = np.matmul(XB, np.swapaxes(X, 1, 2))
        lam, vec = np.linalg.eigh(np.eye(m)[None] - H)
        inv_sqrt = np.where(lam > 1e-10, 1.0 / np.sqrt(np.clip(lam, 1e-10, None)), 0.0)
        A = np.matmul(vec * inv_sqrt[:, None, :], np.swapaxes(vec, 1, 2))
        u = np.matmul(np.swapaxes(X, 1, 2), np.matmul(A, r[idx][:, :, None]))[:, :, 0]
        U[cluster[idx[:, 0]]] = u
        if Rs is not None and AX is not None:
            ax = np.matmul(A, X)                   # A_g X~_g
            AX[m] = ax
            Rs[cluster[idx[:, 0]]] = np.matmul(np.swapaxes(X, 1, 2), ax)


#: Most terms of the series ``(1 - x)^-1/2 = sum_k c_k x^k`` used for a cluster's CR2
#: adjustment; a cluster whose bound needs more (hat-block trace above about 0.02) takes the
#: eigen-decomposition.
MAX_SERIES_TERMS = 8
#: The series stops when its remainder is below this fraction of ``|r_g|``: under the rounding
#: error of the eigen-decomposition it replaces (the two differ by ~1e-12 relative on
#: benchmarks/bench_defaults.py's million battles; tests/arena/test_cr2_series.py).
SERIES_TOL = 1e-13
#: Share of the clusters left to the eigen-decomposition so that the series needs one term
#: fewer for all the others (:func:`_fewest_terms`).
EXACT_SHARE = 0.01


def _series_coefficients(n: int) -> np.ndarray:
    """``c_0..c_n`` of ``(1 - x)^-1/2``: ``c_k = binom(2k, k) / 4^k``."""
    c = np.ones(n + 1)
    for k in range(1, n + 1):
        c[k] = c[k - 1] * (2 * k - 1) / (2 * k)
    return c


def _padded(Z: np.ndarray | sparse.spmatrix | Rows) -> tuple[np.ndarray, np.ndarray]:
    """The design's non-zeros slot by slot, ``(l, N)`` values and columns padded with zeros
    (``l``: the most in a row; a BT battle has two, one against the dropped model 0).  A
    column met twice in a row stays twice: every use is linear in the entries."""
    if isinstance(Z, Rows):
        return Z.D, Z.J
    Zs = sparse.csr_matrix(Z)                      # no copy of a CSR matrix
    n = np.diff(Zs.indptr)
    width = max(int(n.max(initial=0)), 1)
    pos = Zs.indptr[None, :-1] + np.arange(width)[:, None]
    valid = np.arange(width)[:, None] < n[None, :]
    if Zs.nnz == 0:
        return np.zeros(pos.shape), np.zeros(pos.shape, dtype=np.int64)
    pos = np.where(valid, pos, 0)
    return (np.where(valid, Zs.data[pos], 0.0),
            np.where(valid, Zs.indices[pos], 0).astype(np.int64))


def series_terms(h: np.ndarray, cluster: np.ndarray, G: int) -> np.ndarray:
    """(G,) terms of the series each cluster's CR2 adjustment needs (above
    :data:`MAX_SERIES_TERMS`: the cluster takes the eigen-decomposition), from the
    leverages ``h``.

    ``rho_g = tr(H_gg) = sum_{i in g} h_i`` bounds the largest eigenvalue of the
    positive semi-definite ``H_gg``; as the ``c_k`` decrease, the remainder after the
    ``K``-th term is at most ``c_{K+1} rho_g^{K+1} / (1 - rho_g)`` times ``|r_g|`` (and
    ``|A_g r_g| >= |r_g|``): ``K`` is the fewest terms that put it below
    :data:`SERIES_TOL`."""
    rho = np.bincount(cluster, weights=h, minlength=G)
    c = _series_coefficients(MAX_SERIES_TERMS + 1)
    need = np.full(G, MAX_SERIES_TERMS + 1)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        for k in range(MAX_SERIES_TERMS, -1, -1):  # fewest terms whose remainder is small
            ok = (rho < 1) & (c[k + 1] * rho ** (k + 1) <= SERIES_TOL * (1 - rho))
            need[ok] = k
    return need


def _fewest_terms(need: np.ndarray) -> int:
    """Series terms for the clusters (``need``: each one's, :func:`series_terms`): the fewest
    that leave at most :data:`EXACT_SHARE` of them (and never one needing more than
    :data:`MAX_SERIES_TERMS`) to the eigen-decomposition, each further term being a pass
    over every battle."""
    counts = np.bincount(np.minimum(need, MAX_SERIES_TERMS + 1), minlength=MAX_SERIES_TERMS + 2)
    above = need.size - np.cumsum(counts)          # above[t]: clusters needing more than t
    ok = np.flatnonzero(above[:MAX_SERIES_TERMS + 1] <= EXACT_SHARE * need.size)
    return int(ok[0]) if ok.size else MAX_SERIES_TERMS


def _series_scores(Xs: sparse.csr_matrix, r: np.ndarray, B: np.ndarray, terms: int,
                   G: int) -> np.ndarray:
    """(N,) ``sum_{k<=terms} c_k H_gg^k r_g`` battle by battle (``r`` zero outside the
    clusters that take the series, where the result is then zero).

    ``Xs``: :func:`_cluster_operator`.  ``H_gg v = X~_g (B (X~_g' v))``: the per-cluster
    sums ``Xs' v``, a ``(G, P) x (P, P)`` product and the gather ``Xs y``, so each term costs
    two sparse products over the non-zeros (two a battle), never an ``m x m`` matrix."""
    P = B.shape[0]
    Xt = Xs.T                                      # CSC view: the per-cluster sums
    c = _series_coefficients(terms)
    v = r
    acc = r.copy()
    for k in range(1, terms + 1):
        y = (Xt @ v).reshape(G, P) @ B.T           # B X~_g' v_g
        v = Xs @ y.ravel()
        acc += c[k] * v
    return acc


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
