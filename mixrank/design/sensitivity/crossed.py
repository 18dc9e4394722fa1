"""Vectorised REML of many replicates of one pair from per-cluster sums (design stage).

Stage: design (a batched special case of the engine's linear mixed model, for
the leave-one-out and cluster-bootstrap checks of
:mod:`mixrank.design.sensitivity` with several random terms).
Inputs: :class:`Sums` -- per replicate, the sums of the pair's differences
over the levels of the random term with most levels (the *blocks*) and over
the levels of the other terms (the *columns*, few in all).
Outputs: per replicate the REML optimum and the estimand's estimate, its
variance, ``sigma_d`` and weight factor (:func:`fit_sums`).
Contents (docs/sensitivity.md, "Several random terms"): :class:`Sums`,
:func:`criterion`, :func:`fit_sums`.

Model: ``d = mu 1 + Z_B b_B + Z_C b_C + e``, ``b ~ N(0, sigma^2 Lambda^2)``
with ``Lambda = diag(theta)`` (lme4's relative standard deviations; one
theta per term).  The block term's part of ``Z'Z`` is diagonal, so with
``g_l = theta_B^2 / (1 + theta_B^2 n_l)`` everything the profiled REML
criterion needs is a sum over blocks plus a dense step on the few columns:

    log|I + Lambda Z'Z Lambda| = sum_l w_l log(1 + theta_B^2 n_l) + log|S|,
    S = I + Theta_C K Theta_C,  K = A22 - sum_l w_l g_l a_l a_l',
    u'V0^-1 v = u'v - sum_l w_l g_l U_l V_l - h_u' Theta_C S^-1 Theta_C h_v,
    h_u = Z_C'u - sum_l w_l g_l U_l a_l,

for ``u, v`` in ``{1, d}`` (``U_l`` the block sum of u, ``a_l`` the block's
cell counts per column, ``w_l`` how often the block occurs in the replicate:
0 left out, 2 drawn twice).  Leaving a cluster out or weighting clusters by
their bootstrap counts changes only ``w``, so the criterion of every
replicate is exact, not an approximation.  The criterion is even in each
theta, so an unconstrained Newton search in theta (finite-difference
derivatives, safeguarded steps) lands on the boundary theta = 0 when that
is the optimum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Sums", "criterion", "fit_sums"]

_MAX_ITER = 40
_TOL = 1e-8     # Newton step size at which theta is taken (the step is applied)
#: Below this theta a step may go straight to the boundary (a variance ratio of 1e-6).
_FLOOR = 1e-3
#: Up to this many columns, Cholesky factors column by column across replicates.
_SMALL_Q = 12


@dataclass
class Sums:
    """Per-replicate sums of one pair's differences ``d`` (R replicates), the blocks
    grouped by their size (``g_l`` depends on a block only through its cell count).

    ``nv``: (V,) the block sizes; per replicate and size: ``c0`` (R, V) how
    many blocks (with multiplicity), ``s1``, ``s2`` (R, V) sums over them of
    the block's sum of d and its square, ``sa`` (R, V, q) of its cells per
    column, ``ssa`` (R, V, q) of the block's sum times its cells per column,
    ``saa`` (R, V, q, q) of the products of its cells per column.  Per
    replicate: ``a22`` (R, q, q) cells per pair of columns, ``sy`` (R, q) sum
    of d per column, ``n``, ``s``, ``ss`` (R,) cells, sum and sum of squares
    of d.  ``col_term``: (q,) the term (1, 2, ...) of each column (term 0 is
    the block term); ``k`` terms in all.  Unused columns may have no cells.
    """

    nv: np.ndarray
    c0: np.ndarray
    s1: np.ndarray
    s2: np.ndarray
    sa: np.ndarray
    ssa: np.ndarray
    saa: np.ndarray
    a22: np.ndarray
    sy: np.ndarray
    n: np.ndarray
    s: np.ndarray
    ss: np.ndarray
    col_term: np.ndarray
    k: int

    @property
    def cnt(self) -> np.ndarray:
        return np.diagonal(self.a22, axis1=1, axis2=2)

    def take(self, rows: np.ndarray) -> Sums:
        """The replicates ``rows``."""
        return Sums(self.nv, self.c0[rows], self.s1[rows], self.s2[rows], self.sa[rows],
                    self.ssa[rows], self.saa[rows], self.a22[rows], self.sy[rows],
                    self.n[rows], self.s[rows], self.ss[rows], self.col_term, self.k)


def _pieces(st: Sums, th: np.ndarray) -> tuple[Any, ...]:
    """logdet, 1'V0^-1 1, 1'V0^-1 d, d'V0^-1 d at theta (R, k); and S, Theta_C, x."""
    tb2 = th[:, :1] ** 2
    nv = st.nv[None, :]
    g = tb2 / (1.0 + tb2 * nv)
    ld = (st.c0 * np.log1p(tb2 * nv)).sum(axis=1)
    xx = st.n - (g * st.c0 * nv * nv).sum(axis=1)
    xy = st.s - (g * nv * st.s1).sum(axis=1)
    yy = st.ss - (g * st.s2).sum(axis=1)
    q = st.a22.shape[-1]
    if q == 0:
        return ld, xx, xy, yy, None, None, None
    t2 = th[:, 1:][:, st.col_term - 1]
    K = st.a22 - np.einsum("rv,rvpq->rpq", g, st.saa)
    h1 = st.cnt - np.einsum("rv,rvq->rq", g * nv, st.sa)
    hy = st.sy - np.einsum("rv,rvq->rq", g, st.ssa)
    S = t2[:, :, None] * K * t2[:, None, :]
    S[:, np.arange(q), np.arange(q)] += 1.0
    rhs = np.stack([t2 * h1, t2 * hy], axis=2)
    diag, z = _chol_forward(S, rhs)              # S = C C', z = C^-1 rhs
    ld = ld + 2.0 * np.log(diag).sum(axis=1)
    xx = xx - np.einsum("rq,rq->r", z[:, :, 0], z[:, :, 0])
    xy = xy - np.einsum("rq,rq->r", z[:, :, 0], z[:, :, 1])
    yy = yy - np.einsum("rq,rq->r", z[:, :, 1], z[:, :, 1])
    return ld, xx, xy, yy, S, t2, rhs


def _chol_forward(S: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Diagonal of the Cholesky factor C of each S (R, q, q) and ``C^-1 rhs``.

    For a few columns, column by column over all replicates at once (numpy's
    batched factorisations cost microseconds per matrix); else LAPACK.
    """
    R, q, _ = S.shape
    if q > _SMALL_Q:
        C = np.linalg.cholesky(S)
        return np.diagonal(C, axis1=1, axis2=2), np.linalg.solve(C, rhs)
    C = np.zeros_like(S)
    for j in range(q):
        dj = np.sqrt(S[:, j, j] - np.einsum("rk,rk->r", C[:, j, :j], C[:, j, :j]))
        C[:, j, j] = dj
        if j + 1 < q:
            C[:, j + 1:, j] = (S[:, j + 1:, j] - np.einsum("rik,rk->ri", C[:, j + 1:, :j],
                                                           C[:, j, :j])) / dj[:, None]
    z = np.empty_like(rhs)
    for i in range(q):
        z[:, i] = (rhs[:, i] - np.einsum("rk,rkm->rm", C[:, i, :i], z[:, :i])) / C[:, i, i, None]
    return np.diagonal(C, axis1=1, axis2=2), z


def criterion(st: Sums, th: np.ndarray) -> np.ndarray:
    """The profiled REML criterion (``-2 log L_R`` up to a constant) at theta (R, k)."""
    ld, xx, xy, yy = _pieces(st, th)[:4]
    rss = np.maximum(yy - xy * xy / xx, 1e-300)
    return ld + np.log(xx) + (st.n - 1.0) * np.log(rss)


def _derivatives(st: Sums, th: np.ndarray, free: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Criterion, finite-difference gradient and Hessian in the free thetas.

    All stencil points of all replicates go through one :func:`criterion`
    call (the replicates' arrays are small: calls, not arithmetic, cost).
    """
    R, k = th.shape
    h = np.where(free, 1e-4 * (np.abs(th) + 0.05), 0.0)
    pts = [np.zeros((R, k))]
    for i in range(k):
        for sign in (1.0, -1.0):
            e = np.zeros((R, k))
            e[:, i] = sign * h[:, i]
            pts.append(e)
    cross = [(i, j) for i in range(k) for j in range(i + 1, k)]
    for i, j in cross:
        e = np.zeros((R, k))
        e[:, i], e[:, j] = h[:, i], h[:, j]
        pts.append(e)
    allp = (th[None] + np.stack(pts)).reshape(-1, k)
    f = criterion(st.take(np.tile(np.arange(R), len(pts))), allp).reshape(len(pts), R)
    f0 = f[0]
    grad, hess = np.zeros((R, k)), np.zeros((R, k, k))
    hs = np.where(free, h, 1.0)
    fp = f[1:1 + 2 * k:2].T
    fm = f[2:2 + 2 * k:2].T
    grad = np.where(free, (fp - fm) / (2 * hs), 0.0)
    hess[:, np.arange(k), np.arange(k)] = np.where(free, (fp - 2 * f0[:, None] + fm) / hs**2,
                                                   1.0)
    for c, (i, j) in enumerate(cross):
        both = free[:, i] & free[:, j]
        hij = np.where(both, (f[1 + 2 * k + c] - fp[:, i] - fp[:, j] + f0)
                       / (hs[:, i] * hs[:, j]), 0.0)
        hess[:, i, j] = hess[:, j, i] = hij
    return f0, grad, hess


def _newton_step(grad: np.ndarray, hess: np.ndarray) -> np.ndarray:
    """``-H^-1 g`` with H made positive definite (eigenvalues floored at their size)."""
    lam, vec = np.linalg.eigh(hess)
    big = np.maximum(np.abs(lam).max(axis=1, keepdims=True), 1e-12)
    lam = np.maximum(np.abs(lam), 1e-8 * big)
    coef = np.einsum("rki,rk->ri", vec, grad) / lam
    return -np.einsum("rki,ri->rk", vec, coef)


def optimise(st: Sums, start: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimise :func:`criterion` over theta per replicate from ``start`` (R, k).

    ``free``: (R, k) which thetas are estimated (the others stay at 0: a
    term with fewer than two levels in a replicate is left out, as the
    engine does).  Returns ``theta >= 0`` and a converged flag per replicate.
    """
    th = np.where(free, np.abs(start), 0.0)
    done = np.zeros(len(th), dtype=bool)
    conv = np.zeros(len(th), dtype=bool)
    for _ in range(_MAX_ITER):
        act = np.flatnonzero(~done)
        if act.size == 0:
            break
        sub, t, fr = st.take(act), th[act], free[act]
        f0, grad, hess = _derivatives(sub, t, fr)
        step = np.where(fr, _newton_step(grad, hess), 0.0)
        # scale the step (keeping its direction) so that no theta grows by more than
        # max(theta, 1) nor shrinks below a tenth of itself in one step: a jump across
        # an interior optimum to the boundary would land in the wrong basin
        at = np.abs(t)
        toward0 = (step * np.sign(t) < 0) & (at > _FLOOR)
        lim = np.where(toward0, 0.9 * at, np.maximum(at, 1.0))
        over = np.abs(step) / lim
        step = step / np.maximum(over.max(axis=1, keepdims=True), 1.0) if t.shape[1] else step
        alpha = np.ones(len(act))
        new = t + step
        f1 = criterion(sub, new)
        for _ in range(30):
            bad = ~(f1 <= f0 + 1e-12 * np.abs(f0))
            if not bad.any():
                break
            alpha[bad] *= 0.5
            new[bad] = t[bad] + alpha[bad, None] * step[bad]
            f1[bad] = criterion(sub.take(np.flatnonzero(bad)), new[bad])
        moved = np.abs(new - t).max(axis=1) if t.shape[1] else np.zeros(len(act))
        small = moved <= _TOL * (1.0 + np.abs(t).max(axis=1))
        stuck = alpha < 2.0**-29
        th[act] = np.where(stuck[:, None], t, new)
        done[act[small | stuck]] = True
        conv[act[small & ~stuck]] = True
    return np.abs(th), conv


def fit_sums(st: Sums, start: np.ndarray, free: np.ndarray, *, estimand: str,
             unit_cols: np.ndarray | None) -> dict[str, np.ndarray]:
    """REML fits of the replicates of :class:`Sums` and the estimand's numbers.

    ``unit_cols``: for ``estimand="units"``, the columns of the unit (the
    formula's first random term) when it is not the block term (None: the
    block term is the unit).  Returns ``estimate, variance, sigma_d, n,
    weight_factor, theta, converged`` per replicate (arrays).
    """
    th, conv = optimise(st, start, free)
    ld, xx, xy, yy, S, t2, rhs = _pieces(st, th)
    x = None if S is None else np.linalg.solve(S, rhs)
    n = st.n
    sigma2 = (yy - xy * xy / xx) / (n - 1.0)
    mu = xy / xx
    sigma_d = np.sqrt(np.maximum(st.ss - st.s**2 / n, 0.0) / (n - 1.0))
    tb2 = th[:, 0] ** 2
    nv = st.nv[None, :]
    g = tb2[:, None] / (1.0 + tb2[:, None] * nv)
    c0, cnt = st.c0, st.cnt
    R, q = len(n), cnt.shape[1]
    b = np.zeros((R, q)) if x is None else t2 * x[:, :, 0]
    sab = np.einsum("rvq,rq->rv", st.sa, b)                 # per size: sum_l w_l a_l'b
    bab = np.einsum("rvpq,rp,rq->rv", st.saa, b, b)
    if estimand == "gls":
        # V0^-1 1 per cell is 1 - a_l - sum_r b_j(r), a_l = g_l (n_l - a_l'b)
        na = (g * nv * (nv * c0 - sab)).sum(axis=1)          # sum_l w_l n_l a_l
        naa = (g * g * nv * (nv * nv * c0 - 2 * nv * sab + bab)).sum(axis=1)
        aab = (g * (nv * sab - bab)).sum(axis=1)
        cb = np.einsum("rq,rq->r", cnt, b)
        v1 = n - na - cb
        v2 = n - 2 * na - 2 * cb + naa + 2 * aab + np.einsum("rq,rqp,rp->r", b, st.a22, b)
        return dict(estimate=mu, variance=sigma2 / xx, sigma_d=sigma_d, n=n,
                    weight_factor=n * v2 / v1**2, theta=th, converged=conv)
    if estimand == "cells":
        est, ww = st.s / n, 1.0 / n
        wbb = (c0 * nv * nv).sum(axis=1) / n**2          # sum_l w_l (weight in block l)^2
        wc = cnt / n[:, None]                           # weight per column
    elif unit_cols is None:                             # units: the block term
        T = c0.sum(axis=1)
        est = (st.s1 / nv).sum(axis=1) / T
        ww = (c0 / nv).sum(axis=1) / T**2
        wbb = 1.0 / T
        wc = np.einsum("rvq,v->rq", st.sa, 1.0 / st.nv) / T[:, None]
    else:                                               # units: a column term
        cu = cnt[:, unit_cols]
        have = cu > 0
        T = have.sum(axis=1)
        inv = np.where(have, 1.0 / np.where(have, cu, 1.0), 0.0)
        est = (st.sy[:, unit_cols] * inv).sum(axis=1) / T
        ww = inv.sum(axis=1) / T**2
        e = np.zeros_like(cnt)
        e[:, unit_cols] = inv / T[:, None]
        wbb = np.einsum("rvpq,rp,rq->r", st.saa, e, e)
        wc = np.einsum("rq,rqp->rp", e, st.a22)
    tc2 = np.zeros_like(cnt) if t2 is None else t2**2
    var = sigma2 * (ww + tb2 * wbb + np.einsum("rq,rq->r", tc2, wc * wc))
    return dict(estimate=est, variance=var, sigma_d=sigma_d, n=n, weight_factor=n * ww,
                theta=th, converged=conv)
