"""Stage engine: Satterthwaite df in the variance components (the default on crossed designs).

Inputs: a :class:`~mixrank.frame.Frame`, the engine's
:class:`~mixrank.engine.records.PairFit` rows (REML components at the optimum) and
the estimand.
Outputs: per pair ``(variance, df)``: the engine's REML variance of the estimate and
the Satterthwaite df computed from the expected REML information of the *variances*
``psi = (sigma_1^2, ..., sigma_R^2, sigma_e^2)`` (:func:`variance_df`,
:func:`crossed_inference`).  Contents: :data:`MAX_LEVELS`, :data:`CHEAP_LEVELS`, :func:`variance_df`,
:func:`crossed_inference`, :func:`levels_exceed` (whether a pair has more random-effect levels
than a bound, read from the frame's codes in growing chunks; docs/speed.md §8).

Method (docs/methods.md §9, "Crossed designs"): with ``Sigma = sigma_e^2 I +
sum_r sigma_r^2 Z_r Z_r'`` and ``P`` the REML projection, the expected information
is ``I_ij = tr(P S_i P S_j) / 2`` (``S_r = Z_r Z_r'``, ``S_e = I``); the estimate's
variance ``V`` is linear in ``psi`` for the ``cells`` / ``units`` estimands
(``g_r = |Z_r' w|^2``, ``g_e = w'w``) and ``V = 1 / (1' Sigma^-1 1)`` for ``gls``
(``g_i = V^2 1' Sigma^-1 S_i Sigma^-1 1``); ``df = 2 V^2 / (g' I^-1 g)``
(Giesbrecht & Burns 1985; SAS PROC MIXED's ``DDFM=SATTERTHWAITE``; Kenward &
Roger 1997's df use the same ``I``).  In the interior it is close to lmerTest's
(Satterthwaite's df does not depend on the parametrization; the two differ by expected
vs observed information: median 0.1 %, at most 7 % on the 50 interior pairs of
tests/reference/crossed_cell.json); at the boundary it differs: lmerTest differentiates in ``theta = sigma_r / sigma_e``, where
``dV/dtheta_r = 0`` at ``theta_r = 0``, so a crossed term estimated at zero
(frequent with 3-5 prompts) drops out of the df and the pair is referred to the
subject and residual df -- the family-wise error of issue 37's crossed cell.  In
``psi`` the term keeps its information (``Var(sigma_r^2)`` is not 0 at 0), so the
df stays near the term's levels minus one, as the stratum mean squares of a
balanced design say it must.  Validated against an independent dense computation
in R at lme4's estimates (tests/reference/crossed_cell.R) and, on a balanced
subject x prompt design, against the textbook quasi-F Satterthwaite df
(tests/engine/test_crossed_df.py).

Computed in the levels' space (``q = sum_r L_r``; ``O(n q + q^3)``, Woodbury
``Sigma^-1 = (I - Z M Z') / sigma_e^2`` with ``M = D (sigma_e^2 I + Z'Z D)^-1``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...frame import Frame
from ..records import PairFit

__all__ = ["MAX_LEVELS", "CHEAP_LEVELS", "variance_df", "crossed_inference", "levels_exceed"]

#: above this many random-effect levels in a pair the ``q x q`` algebra (one BLAS thread:
#: 2 ms a pair at 136 levels, 27 ms at 376) is not attempted and the pair keeps lmerTest's
#: df (the caller warns).
MAX_LEVELS = 400
#: up to this many levels every pair takes the variance components' df (about 1 ms); above
#: it, only a pair with a variance component at zero does (where lmerTest's df drop the
#: term and are liberal); an interior pair keeps lmerTest's df, which differ from these by
#: a few percent there (docs/methods.md §9) -- so the per-fit cost stays lme4's.
CHEAP_LEVELS = 100


def _renumber(c: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes renumbered 0..L-1 over the levels present."""
    present = np.zeros(int(c.max(initial=-1)) + 1, dtype=bool)
    present[c] = True
    return (np.cumsum(present) - 1)[c], int(present.sum())


def variance_df(codes: Sequence[np.ndarray], psi: np.ndarray, weights: np.ndarray | None
                ) -> tuple[float, float]:
    """``(V, df)`` of the estimate at the variances ``psi`` (random terms in ``codes``' order,
    then the residual); ``weights``: the cell weights of a ``cells``/``units`` estimate
    (summing to 1), None for the GLS estimate.  df is NaN when ``g' I^-1 g <= 0`` or the
    residual variance is not positive."""
    psi = np.asarray(psi, dtype=float)
    se2 = float(psi[-1])
    if not (se2 > 0 and np.all(np.isfinite(psi))):
        return float("nan"), float("nan")
    cs, Ls = zip(*(_renumber(np.asarray(c, dtype=np.int64)) for c in codes))
    n = cs[0].size
    off = np.concatenate([[0], np.cumsum(Ls)])
    q = int(off[-1])
    G = np.zeros((q, q))                                   # Z'Z by blocks of counts
    for i, ci in enumerate(cs):
        for j, cj in enumerate(cs[: i + 1]):
            blk = np.bincount(ci * Ls[j] + cj, minlength=Ls[i] * Ls[j]).reshape(Ls[i], Ls[j])
            G[off[i]:off[i + 1], off[j]:off[j + 1]] = blk
            G[off[j]:off[j + 1], off[i]:off[i + 1]] = blk.T
    cnt = np.diag(G).copy()                                # Z'1
    D = np.repeat(np.clip(psi[:-1], 0.0, None), Ls)
    M = D[:, None] * np.linalg.solve(se2 * np.eye(q) + G * D[None, :], np.eye(q))
    M = 0.5 * (M + M.T)
    MG = M @ G
    GK = (G - G @ MG) / se2                                # Z' Sigma^-1 Z = G K, K = (I - MG)
    K = (np.eye(q) - MG) / se2                             # Sigma^-1 Z = Z K
    Mc = M @ cnt
    s = (n - cnt @ Mc) / se2                               # 1' Sigma^-1 1
    alpha = (cnt - G @ Mc) / se2                           # Z' Sigma^-1 1
    aa = (n - 2 * cnt @ Mc + Mc @ G @ Mc) / se2 ** 2       # |Sigma^-1 1|^2
    ZPZ = GK - np.outer(alpha, alpha) / s                  # Z' P Z
    Ka = K.T @ alpha
    # diagonal of (P Z)'(P Z) = K'GK - (K'a a' + a a'K) / s + a a' |Sigma^-1 1|^2 / s^2
    pzpz = np.sum(K * GK, axis=0) - 2 * Ka * alpha / s + alpha * alpha * aa / s ** 2
    R = len(cs)
    info = np.empty((R + 1, R + 1))
    for i in range(R):
        bi = slice(off[i], off[i + 1])
        for j in range(i + 1):
            bj = slice(off[j], off[j + 1])
            info[i, j] = info[j, i] = 0.5 * float(np.sum(ZPZ[bi, bj] ** 2))
        info[i, R] = info[R, i] = 0.5 * float(np.sum(pzpz[bi]))
    tr_si2 = (n - 2 * np.trace(MG) + float(np.sum(MG * MG.T))) / se2 ** 2
    a_si_a = (aa - alpha @ M @ alpha) / se2
    info[R, R] = 0.5 * (tr_si2 - 2 * a_si_a / s + (aa / s) ** 2)
    if weights is None:
        V = 1.0 / s
        g = V * V * np.append([float(alpha[off[i]:off[i + 1]] @ alpha[off[i]:off[i + 1]])
                               for i in range(R)], aa)
    else:
        w = np.asarray(weights, dtype=float)
        g = np.append([float(np.sum(np.bincount(c, weights=w, minlength=L) ** 2))
                       for c, L in zip(cs, Ls)], float(w @ w))
        V = float(g @ psi)
    try:
        A = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        A = np.linalg.pinv(info)
    denom = float(g @ A @ g)
    return float(V), (2.0 * V * V / denom if denom > 0 else float("nan"))


def crossed_inference(frame: Frame, pairs: Sequence[PairFit], estimand: str
                      ) -> tuple[tuple[tuple[float, float], ...], list[str]]:
    """Per pair ``(variance, df)``: the engine's variance and :func:`variance_df`'s df (pairs
    that are degenerate, have more than :data:`MAX_LEVELS` levels, or more than
    :data:`CHEAP_LEVELS` and every variance component positive keep lmerTest's df); and
    the pairs over :data:`MAX_LEVELS` with a variance component at zero, where lmerTest's df,
    which drop that term, are liberal (the caller warns about them; in the interior the two
    df differ by a few percent, docs/methods.md §9)."""
    from ..parallel import blas_controller
    from .native import _columns

    # q x q matrices: threads only contend (7x slower); one cached controller (~3 ms each)
    with blas_controller().limit(limits=1, user_api="blas"):
        return _crossed_inference(frame, pairs, estimand, _columns(frame))


def _crossed_inference(frame: Frame, pairs: Sequence[PairFit], estimand: str, cols: Any
                       ) -> tuple[tuple[tuple[float, float], ...], list[str]]:
    """:func:`crossed_inference` under one BLAS thread."""
    from .estimand import estimand_weights

    names = list(frame.spec.term_names)
    all_codes = [frame.term_codes[t] for t in names]
    sizes = [int(frame.term_levels[t]) for t in names]
    out: list[tuple[float, float]] = []
    kept: list[str] = []
    for p in pairs:
        comps = dict(p.components)
        if p.degenerate or not np.isfinite(p.variance) or any(
                t not in comps for t in names) or "residual" not in comps:
            out.append((p.variance, p.df))
            continue
        psi = np.array([float(comps[t]) for t in names] + [float(comps["residual"])])
        zero = bool(np.any(psi[:-1] <= 1e-10 * max(float(psi.sum()), 1e-300)))
        j, k = frame.model_index(p.model_a), frame.model_index(p.model_b)
        bound = MAX_LEVELS if zero else min(MAX_LEVELS, CHEAP_LEVELS)
        if levels_exceed(cols, j, k, all_codes, sizes, bound):
            out.append((p.variance, p.df))
            if zero:
                kept.append(f"{p.model_a} vs {p.model_b}")   # lmerTest's df drop that term
            continue
        cells = cols.pair(j, k)
        codes = [c if cells.idx is None else c[cells.idx] for c in all_codes]
        w = estimand_weights(estimand, codes[0].size, codes[0])   # unit: the first term
        _, df = variance_df(codes, psi, w)
        out.append((p.variance, df if np.isfinite(df) else p.df))
    return tuple(out), kept


#: Cells read by the first step of :func:`levels_exceed` (each further step reads twice as many).
_FIRST_CHUNK = 1 << 14


def levels_exceed(cols: Any, j: int, k: int, codes: Sequence[np.ndarray], sizes: Sequence[int],
                  bound: int) -> bool:
    """Whether the random-effect levels among the common cells of models ``j`` and ``k``
    (summed over the terms whose frame-wide ``codes`` and level counts ``sizes`` are given)
    number more than ``bound``.

    Exact, and without a pass over the pair's cells where the frame settles it: the levels
    met in any subset of the common cells are a lower bound, so the cells are read in growing
    chunks (16k cells, then twice as many each step) marking the levels seen, and the answer
    is "yes" as soon as more than ``bound`` are seen (on a crossed benchmark, within the first
    chunk); "no" only after every common cell has been read.  ``cols``: the frame's model-major
    columns (:func:`mixrank.engine.lmm.native._columns`): dense observed flags, or a
    compressed frame's per-model cell lists."""
    seen = [np.zeros(L, dtype=bool) for L in sizes]
    observed = getattr(cols, "observed", None)
    if observed is not None:                      # dense: the two models' observed flags
        oa, ob = observed[j], observed[k]
        n = oa.size
    else:                                         # compressed: the common cells' indices
        in_a = np.zeros(cols.n_cells, dtype=bool)
        in_a[cols.cells[j]] = True
        idx = cols.cells[k][in_a[cols.cells[k]]]
        n = idx.size
    s, step = 0, _FIRST_CHUNK
    while s < n:
        e = min(n, s + step)
        if observed is not None:
            m = oa[s:e] & ob[s:e]
            parts = [c[s:e][m] for c in codes]
        else:
            parts = [c[idx[s:e]] for c in codes]
        total = 0
        for part, sn in zip(parts, seen):
            sn[part] = True
            total += int(np.count_nonzero(sn))
        if total > bound:
            return True
        s, step = e, 2 * step
    return False
