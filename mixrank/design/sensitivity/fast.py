"""Leave-one-out and cluster bootstrap with several random terms, without refits (design stage).

Stage: design (per-cluster sums of each pair, then the batched REML of
:mod:`mixrank.design.sensitivity.crossed` over all replicates at once).
Inputs: the fit, its (model-restricted) frame, the judged, the resampled
unit and the replicates (left-out levels, or the bootstrap's draws).
Outputs: per replicate, one dict per pair with ``estimate, n, sigma_d,
weight_factor, variance`` -- as :func:`~mixrank.design.sensitivity.refit.replicate_rows`
-- or None when the formula's structure is not covered.
Contents (docs/sensitivity.md, "Several random terms"): :func:`fast_rows`,
:func:`structure`.

Covered (REML, two or more random terms, the term with most levels the
*block* term, the others :data:`MAX_COLUMNS` levels or fewer in all):

* ``"block"``: the resampled unit is the block term (e.g. leave one
  question out with ``(1|question) + (1|prompt)``); a replicate weights the
  blocks (0 left out, k drawn k times); for the bootstrap no other term may
  be nested in the unit;
* ``"copies"``: two terms and the unit is the smaller one, crossed with
  the block term (e.g. resample the 4 prompts); a replicate is the list of
  drawn levels, each a column of its own.

Replicates the sums cannot settle exactly as the engine would (too few
cells, identical differences, a term with one cell per level, two terms
with equal level counts, a term left with one level, no convergence) are
refitted with the engine, replicate by replicate.  A ``"copies"`` bootstrap
draw of one level only (T copies of the same prompt) leaves no residual
variation: it is reported as not fitted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mixrank.design.sensitivity.crossed import Sums, fit_sums
from mixrank.design.sensitivity.frames import nested_in, subset_frame
from mixrank.design.sensitivity.refit import MakeReplicate, refit, rows_of, warm_starts
from mixrank.engine.lmm.native import score_scale, snap_zero
from mixrank.engine.parallel import blas_controller
from mixrank.frame import Frame

__all__ = ["fast_rows", "structure", "MAX_COLUMNS"]

#: Most levels of the non-block terms together (the dense step's size).
MAX_COLUMNS = 64
#: Elements of the per-size sums held per batch of replicates (bounds memory).
_BATCH_ELEMENTS = 4_000_000


def structure(fit: Any, frame: Frame, unit: str, kind: str) -> tuple[str, str] | None:
    """``(case, block term)`` of the fast path for this fit and check, or None."""
    names = list(frame.spec.term_names)
    if fit.method != "reml" or len(names) < 2 or unit not in names:
        return None
    lv = frame.term_levels
    big = max(names, key=lambda t: lv[t])
    if sum(lv[t] for t in names if t != big) > MAX_COLUMNS:
        return None
    if sum(lv[t] == lv[big] for t in names) > 1:
        return None
    if unit == big:
        if kind == "bootstrap" and any(nested_in(frame, t, unit) for t in names if t != unit):
            return None
        return "block", big
    if len(names) == 2 and not nested_in(frame, big, unit):
        return "copies", big
    return None


def _sizes(nl: np.ndarray) -> np.ndarray:
    return np.unique(nl[nl > 0])


def _block_sums(d: np.ndarray, cb: np.ndarray, L: int, cols: list[np.ndarray], q: int,
                W: np.ndarray, col_term: np.ndarray, k: int) -> Sums:
    """Sums of replicates that weight the blocks by ``W`` (R, L)."""
    nl = np.bincount(cb, minlength=L).astype(float)
    sl = np.bincount(cb, weights=d, minlength=L)
    ssl = np.bincount(cb, weights=d * d, minlength=L)
    a12, y12 = np.zeros(L * q), np.zeros(L * q)
    cc = np.zeros(L * q * q)
    for i, ci in enumerate(cols):
        a12 += np.bincount(cb * q + ci, minlength=L * q)
        y12 += np.bincount(cb * q + ci, weights=d, minlength=L * q)
        for cj in cols[i:]:
            block = np.bincount((cb * q + ci) * q + cj, minlength=L * q * q).astype(float)
            if cj is not ci:
                block += block.reshape(L, q, q).transpose(0, 2, 1).ravel()
            cc += block
    A = a12.reshape(L, q)
    nv = _sizes(nl)
    M = (nl[:, None] == nv[None, :]).astype(float)                      # (L, V)
    V, R = len(nv), len(W)
    aa = (A[:, :, None] * A[:, None, :]).reshape(L, q * q)

    def per_size(x: np.ndarray) -> np.ndarray:                          # (L, m) -> (R, V, m)
        return (W @ (M[:, :, None] * x[:, None, :]).reshape(L, -1)).reshape(R, V, -1)

    return Sums(nv=nv, c0=W @ M, s1=W @ (M * sl[:, None]), s2=W @ (M * (sl * sl)[:, None]),
                sa=per_size(A), ssa=per_size(sl[:, None] * A),
                saa=per_size(aa).reshape(R, V, q, q),
                a22=(W @ cc.reshape(L, q * q)).reshape(R, q, q), sy=W @ y12.reshape(L, q),
                n=W @ nl, s=W @ sl, ss=W @ ssl, col_term=col_term, k=k)


def _copy_sums(d: np.ndarray, cb: np.ndarray, L: int, cu: np.ndarray, P: int,
               draws: np.ndarray) -> Sums:
    """Sums of replicates that draw the unit's levels ``draws`` (R, T), each a column.

    Blocks with the same cells per unit level (the same row of N) have the
    same size in every replicate, so they are summed as one group first.
    """
    N = np.bincount(cb * P + cu, minlength=L * P).reshape(L, P).astype(float)
    Y = np.bincount(cb * P + cu, weights=d, minlength=L * P).reshape(L, P)
    ssp = np.bincount(cu, weights=d * d, minlength=P)
    pats, ginv = np.unique(N, axis=0, return_inverse=True)
    ginv = ginv.ravel()
    G = len(pats)
    onehot = np.zeros((G, L))
    onehot[ginv, np.arange(L)] = 1.0
    cg = onehot.sum(axis=1)                                             # blocks per group
    Yg = onehot @ Y                                                     # (G, P)
    YYg = (onehot @ (Y[:, :, None] * Y[:, None, :]).reshape(L, P * P)).reshape(G, P, P)
    PP = (pats[:, :, None] * pats[:, None, :]).reshape(G, P * P)
    R, T = draws.shape
    w = np.zeros((R, P))
    np.add.at(w, (np.repeat(np.arange(R), T), draws.ravel()), 1.0)
    nlg = w @ pats.T                                                    # (R, G) block size
    slg = w @ Yg.T                                                      # sum of block sums
    s2g = np.einsum("rp,gpq,rq->rg", w, YYg, w)                         # of their squares
    nv = _sizes(nlg)
    pair = (draws[:, :, None] * P + draws[:, None, :]).reshape(R, T * T)
    c0, s1, s2 = (np.zeros((R, len(nv))) for _ in range(3))
    sa, ssa = np.zeros((R, len(nv), T)), np.zeros((R, len(nv), T))
    saa = np.zeros((R, len(nv), T, T))
    for v, size in enumerate(nv):
        m = (nlg == size).astype(float)
        mc = m * cg
        c0[:, v], s1[:, v], s2[:, v] = mc.sum(axis=1), (m * slg).sum(axis=1), (m * s2g).sum(1)
        sa[:, v] = np.take_along_axis(mc @ pats, draws, axis=1)
        ssa[:, v] = np.take_along_axis((m * slg) @ pats, draws, axis=1)
        saa[:, v] = np.take_along_axis(mc @ PP, pair, axis=1).reshape(R, T, T)
    cnt, syp = N.sum(axis=0), Y.sum(axis=0)
    a22 = np.zeros((R, T, T))
    a22[:, np.arange(T), np.arange(T)] = cnt[draws]
    return Sums(nv=nv, c0=c0, s1=s1, s2=s2, sa=sa, ssa=ssa, saa=saa, a22=a22, sy=syp[draws],
                n=cnt[draws].sum(axis=1), s=syp[draws].sum(axis=1), ss=ssp[draws].sum(axis=1),
                col_term=np.ones(T, dtype=np.int64), k=2)


def _levels_present(st: Sums) -> np.ndarray:
    """(R, k) levels of each term among the replicate's cells."""
    cols = st.cnt > 0
    per = [cols[:, st.col_term == t].sum(axis=1) for t in range(1, st.k)]
    return np.stack([st.c0.sum(axis=1), *per], axis=1)


def _order(frame: Frame, case: str, big: str) -> list[str]:
    """The terms in theta order: the block term, then the others in formula order."""
    return [big, *[t for t in frame.spec.term_names if t != big]]


def _pair_sums(frame: Frame, a: str, b: str, case: str, big: str, unit: str,
               plan: tuple[str, np.ndarray]) -> tuple[Sums, list[str], np.ndarray | None]:
    """The pair's sums for every replicate, the terms in theta order and the unit columns."""
    j, k = frame.model_index(a), frame.model_index(b)
    mask = frame.common_mask(j, k)
    d = frame.scores[mask, j] - frame.scores[mask, k]
    lv, codes = frame.term_levels, frame.term_codes
    cb = codes[big][mask]
    first = frame.spec.term_names[0]
    kind, what = plan
    if case == "copies":
        P = lv[unit]
        if kind == "loso":
            keep = [np.delete(np.arange(P), np.flatnonzero(np.arange(P) == lev)) for lev in what]
            draws = np.stack(keep)
        else:
            draws = what
        st = _copy_sums(d, cb, lv[big], codes[unit][mask], P, draws)
        ucols = None if first == big else np.arange(draws.shape[1])
        return st, [big, unit], ucols
    small = [t for t in frame.spec.term_names if t != big]
    offs = np.cumsum([0] + [lv[t] for t in small])
    cols = [codes[t][mask] + o for t, o in zip(small, offs[:-1])]
    col_term = np.concatenate([np.full(lv[t], i + 1) for i, t in enumerate(small)])
    L = lv[big]
    if kind == "loso":
        W = np.ones((len(what), L))
        W[np.arange(len(what)), what] = 0.0
    else:
        W = np.zeros((len(what), L))
        np.add.at(W, (np.repeat(np.arange(len(what)), what.shape[1]), what.ravel()), 1.0)
    st = _block_sums(d, cb, L, cols, int(offs[-1]), W, col_term, len(small) + 1)
    ucols = None
    if first != big:
        i = small.index(first)
        ucols = np.arange(offs[i], offs[i + 1])
    return st, [big, *small], ucols


def _settle(st: Sums, names: list[str], first: str, start: np.ndarray, estimand: str,
            ucols: np.ndarray | None, force: np.ndarray | None = None
            ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The batched fits and which replicates must be refitted instead (also ``force``)."""
    have = _levels_present(st)
    n = st.n
    spread = st.ss - st.s**2 / np.where(n > 0, n, 1.0)
    refit_me = (n < 3) | ~(spread > 1e-9 * st.ss) | (have == n[:, None]).any(axis=1)
    refit_me |= have[:, names.index(first)] < 2
    if force is not None:
        refit_me |= force
    free = have >= 2
    refit_me |= free.sum(axis=1) < 2
    for i in range(st.k):
        for j in range(i + 1, st.k):
            refit_me |= free[:, i] & free[:, j] & (have[:, i] == have[:, j])
    out: dict[str, np.ndarray] = {c: np.full(len(n), np.nan) for c in
                                  ("estimate", "variance", "sigma_d", "n", "weight_factor")}
    ok = np.flatnonzero(~refit_me)
    batch = max(16, _BATCH_ELEMENTS // max(1, st.saa[0].size))
    for lo in range(0, len(ok), batch):
        rows = ok[lo:lo + batch]
        r = fit_sums(st.take(rows), np.broadcast_to(start, (len(rows), st.k)), free[rows],
                     estimand=estimand, unit_cols=ucols)
        for c in out:
            out[c][rows] = r[c]
        refit_me[rows[~r["converged"]]] = True
    return out, refit_me


def fast_rows(fit: Any, frame: Frame, judged: Sequence[tuple[str, str]], unit: str,
              plan: tuple[str, np.ndarray], make: MakeReplicate,
              progress: Callable[[int], Any] | None = None
              ) -> list[list[dict[str, float]]] | None:
    """Rows of every replicate from per-cluster sums (None: structure not covered).

    ``plan``: ``("loso", levels)`` (the unit's left-out level codes, one
    replicate each) or ``("bootstrap", draws)`` (an (R, T) array of drawn
    level codes).  ``make`` builds replicate ``i``'s cells for the engine
    refits of the few replicates the sums do not settle.  Equal to
    :func:`~mixrank.design.sensitivity.refit.replicate_rows` to the engine's
    tolerance (tests/design/test_sensitivity_fast.py).
    """
    got = structure(fit, frame, unit, plan[0])
    if got is None:
        return None
    case, big = got
    R = len(plan[1])
    kind, what = plan
    # a bootstrap replicate is the multiset of its draws: the same multiset in another
    # order is the same data with the copies renamed, so it is fitted once
    if kind == "bootstrap":
        what, inv = np.unique(np.sort(what, axis=1), axis=0, return_inverse=True)
        inv = inv.ravel()
    else:
        inv = np.arange(R)
    U = len(what)
    first_of = np.zeros(U, dtype=np.int64)
    first_of[inv[::-1]] = np.arange(R)[::-1]                # a replicate per multiset
    starts = warm_starts(fit.pairs, judged)
    first = frame.spec.term_names[0]
    scale = score_scale(frame)
    single = np.zeros(U, dtype=bool)
    if case == "copies" and kind == "bootstrap":
        # one level drawn T times: each block's cells are T copies of one cell, no
        # residual variation is left and the model is not estimable (the engine ends
        # at a residual variance of rounding size, after seconds): not fitted
        single = what[:, 0] == what[:, -1]
    got_u: list[list[dict[str, float]]] = [[{} for _ in judged] for _ in range(U)]
    redo: dict[int, list[int]] = {}
    for h, (a, b) in enumerate(judged):
        psi = starts.get((a, b), {})
        start = np.array([math.sqrt(v) if np.isfinite(v) and v > 0 else 0.0
                          for v in (psi.get(t, np.nan) for t in _order(frame, case, big))])
        start = np.maximum(start, 0.05)
        with blas_controller().limit(limits=1, user_api="blas"):   # small products
            st, names, ucols = _pair_sums(frame, a, b, case, big, unit, (kind, what))
            out, again = _settle(st, names, first, start, fit.estimand, ucols, single)
        for u in range(U):
            if single[u]:
                continue
            if again[u]:
                redo.setdefault(u, []).append(h)
                continue
            got_u[u][h] = dict(estimate=snap_zero(float(out["estimate"][u]), scale),
                               n=float(out["n"][u]), sigma_d=float(out["sigma_d"][u]),
                               weight_factor=float(out["weight_factor"][u]),
                               variance=float(out["variance"][u]))
    for u, hs in redo.items():                   # the few replicates the sums leave open
        rows, copy = make(int(first_of[u]))
        sub = subset_frame(frame, rows, copy=copy, unit=unit if copy is not None else None)
        fam = [judged[h] for h in hs]
        fits = refit(sub, fam, method=fit.method, estimand=fit.estimand, starts=starts)
        for h, r in zip(hs, rows_of(sub, fam, fits, fit.method, fit.estimand)):
            got_u[u][h] = r
    res = [[dict(r) for r in got_u[u]] for u in inv]
    if progress is not None:
        progress(R)
    return res
