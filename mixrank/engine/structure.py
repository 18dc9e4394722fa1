"""Stage engine: the random-effects structure of one pair, from cell codes.

Inputs: per-term integer level codes of the pair's cells (and, separately,
the pair's differences ``d``).  Outputs: :class:`Structure` (everything the
REML objective needs that does not depend on ``d``; shared by all pairs
scored on the same cells) and :class:`PairSums` (the ``d``-dependent sums).

Notation (lme4): ``Z_r`` is the 0/1 indicator matrix of term r's levels.
Term 1 (the one with most levels) is the *diagonal block*: ``Z_1'Z_1`` is
diagonal with the level counts ``c1``.  The other terms form block 2 of
dimension ``q2``; ``Z_2'Z_2`` (dense) and ``Z_1'Z_2`` are count matrices.
Levels of term 1 are grouped by their count ``v`` so that
``sum_i z_i z_i' / (theta^2 c1_i + 1)`` becomes ``sum_v G_v / (theta^2 v + 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

import numpy as np
import scipy.sparse as sp

__all__ = ["Structure", "PairSums", "build_structure", "pair_sums", "DENSE_Q2_LIMIT",
           "FULL_G_LIMIT"]

DENSE_Q2_LIMIT = 3000          # block 2 above this size: sparse LU path
GROUP_MEMORY_LIMIT = 400e6     # bytes for the grouped G_v matrices
#: Entries of the unpacked ``G`` kept beside the packed one (2 MB): below it the exact
#: derivatives (mixrank.engine.lmm.reml_hess) take one product with it per evaluation
#: instead of a product with the packed form and its unpacking (docs/speed.md §7).
FULL_G_LIMIT = 250_000


@dataclass(frozen=True, eq=False)
class Structure:
    n: int
    names: tuple[str, ...]          # term names in block order (term 1 first)
    order: tuple[int, ...]          # block order -> index in the caller's term list
    levels: tuple[int, ...]
    codes: tuple[np.ndarray, ...]   # per term (block order), codes over the pair's cells
    counts: tuple[np.ndarray, ...]  # per term level counts
    mode: str                       # "none" | "dense" | "sparse"
    # dense mode
    c1: np.ndarray | None = None
    z12_: np.ndarray | None = None  # (L1, q2) counts, or None: derived from zsort on first use (z12)
    z22: np.ndarray | None = None   # (q2, q2)
    c2: np.ndarray | None = None    # (q2,) counts of block-2 levels
    groups: np.ndarray | None = None       # (L1,) group index of each term-1 level
    group_sizes: np.ndarray | None = None   # (G,) levels per group
    group_values: np.ndarray | None = None  # (G,) the count value of each group
    G: np.ndarray | None = None     # (G, q2 (q2 + 1) / 2) packed upper triangles, or None (ungrouped)
    G_full: np.ndarray | None = None  # (G, q2 * q2) the same sums unpacked, when small (FULL_G_LIMIT)
    perm: np.ndarray | None = None  # (L1,) term-1 levels ordered by group (stable)
    starts: np.ndarray | None = None       # (G,) first row of each group in ``zsort``
    zsort: np.ndarray | None = None        # (L1, q2) rows of z12 in ``perm`` order (float32 if exact)
    parents: tuple[np.ndarray | None, ...] = ()  # per block-2 term: its level of each term-1 level, if nested
    triu: tuple[np.ndarray, np.ndarray] | None = None  # np.triu_indices(q2): G's packing
    h: np.ndarray | None = None     # (G, q2): sum_{i in v} z_i c1_i
    cc1: np.ndarray | None = None   # (G,): sum_{i in v} c1_i^2
    # sparse mode
    ztz: sp.csc_matrix | None = None
    offsets: tuple[int, ...] = ()

    @property
    def onehot(self) -> sp.csr_matrix | None:
        """(G, L1) indicator of each term-1 level's count group (dense mode)."""
        if self.groups is None or self.group_values is None:
            return None
        L1, nG = len(self.groups), len(self.group_values)
        return sp.csr_matrix((np.ones(L1), (self.groups, np.arange(L1))), shape=(nG, L1))

    @property
    def z12(self) -> np.ndarray | None:
        """(L1, q2) counts of the block-2 levels within each term-1 level (dense mode)."""
        if self.z12_ is None and self.zsort is not None:
            rank = np.empty_like(cast(np.ndarray, self.perm))
            rank[self.perm] = np.arange(len(rank))
            object.__setattr__(self, "z12_", self.zsort[rank].astype(np.float64))
        return self.z12_


@dataclass(frozen=True, eq=False)
class PairSums:
    n: int
    sum_d: float
    sumsq_d: float
    s: tuple[np.ndarray, ...]        # per term (block order) level sums of d
    # dense mode, grouped
    k: np.ndarray | None = None      # (G, q2): sum_{i in v} z_i s1_i
    cs1: np.ndarray | None = None    # (G,): sum_{i in v} c1_i s1_i
    ss1: np.ndarray | None = None    # (G,): sum_{i in v} s1_i^2
    s2: np.ndarray | None = None     # (q2,) stacked block-2 sums
    #: what the exact derivatives keep for this pair while it is optimised (its
    #: constants and its last evaluation; mixrank.engine.lmm.reml_hess)
    memo: dict = field(default_factory=dict, repr=False, init=False)


def _cross_counts(a: np.ndarray, la: int, b: np.ndarray, lb: int) -> np.ndarray:
    return np.bincount(a * lb + b, minlength=la * lb).reshape(la, lb).astype(np.float64)


def _group_products(zsort: np.ndarray, starts: np.ndarray, sizes: np.ndarray, bound: float,
                    triu: tuple[np.ndarray, np.ndarray], unpacked: bool = False
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Packed upper triangles of ``sum_{i in g} z_i z_i'`` for each group of rows of ``zsort``,
    the groups' row sums ``sum_{i in g} z_i`` and, with ``unpacked``, the whole matrices
    (``(G, q2 * q2)``; else None).

    The entries are sums of products of counts, each at most ``bound``
    (``max_g sum_{i in g} c1_i^2``); below 2^24 every partial sum is an
    integer that float32 holds exactly, so the products run in single
    precision (half the bytes, twice the speed) with the same result.
    """
    q2 = zsort.shape[1]
    z = zsort.astype(np.float32) if bound < 2.0 ** 24 and zsort.dtype != np.float32 else zsort
    flat = triu[0] * q2 + triu[1]
    # sums of whole counts, exact in either precision (each below the bound)
    sums = np.add.reduceat(z, starts, axis=0).astype(np.float64)
    if unpacked:                                      # every product whole, then one take
        prods = np.empty((len(starts), q2, q2), dtype=z.dtype)
        for g, (a, m) in enumerate(zip(starts, sizes)):
            np.matmul(z[a:a + m].T, z[a:a + m], out=prods[g])
        full = prods.reshape(len(starts), q2 * q2).astype(np.float64)
        return full.take(flat, axis=1), sums, full
    out = np.empty((len(starts), len(flat)))
    buf = np.empty((q2, q2), dtype=z.dtype)          # one product at a time: no (G, q2, q2) copy
    for g, (a, m) in enumerate(zip(starts, sizes)):
        zz = z[a:a + m]
        np.matmul(zz.T, zz, out=buf)
        out[g] = buf.ravel().take(flat)
    return out, sums, None


@lru_cache(maxsize=8)
def _triu(q: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(q)``, kept per size (read-only)."""
    rows, cols = np.triu_indices(q)
    rows.flags.writeable = cols.flags.writeable = False
    return rows, cols


def _count_groups(c1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(c1, return_inverse=True)`` for level counts: by a bincount when they are
    small non-negative integers (as counts are), else by sorting."""
    if len(c1) and 0 <= c1.min() and c1.max() < 1e6:
        ci = c1.astype(np.int64)
        if np.array_equal(ci, c1):
            present = np.bincount(ci) > 0
            lookup = np.cumsum(present) - 1
            return np.flatnonzero(present).astype(c1.dtype), lookup[ci]
    return np.unique(c1, return_inverse=True)


def build_structure(codes: list[np.ndarray], levels: list[int], names: list[str],
                    n: int | None = None, counts: list[np.ndarray] | None = None,
                    parents: dict[tuple[str, str], np.ndarray] | None = None) -> Structure:
    """Build the d-independent structure from per-term codes of one pair's cells.

    ``counts`` (optional): each term's level counts over the same cells,
    when the caller has them already.  ``parents`` (optional): for a term
    ``child`` nested in a term ``parent`` (every level of ``child`` within one
    level of ``parent``), ``parents[(child, parent)]`` maps each level of
    ``child`` to its ``parent`` level; when the first term is nested in a
    block-2 term, that block of ``z12`` is the first term's counts placed at
    the parents (no pass over the cells), and :func:`pair_sums` sums the
    term's levels from the first term's sums.
    """
    n = int(len(codes[0])) if n is None else int(n)
    R = len(codes)
    if R == 0:
        return Structure(n=n, names=(), order=(), levels=(), codes=(), counts=(), mode="none")
    counts0 = [np.bincount(c, minlength=L).astype(np.float64) for c, L in zip(codes, levels)] \
        if counts is None else [np.asarray(c, dtype=np.float64) for c in counts]
    nonempty = [int((c > 0).sum()) for c in counts0]
    order = tuple(sorted(range(R), key=lambda r: -nonempty[r]))
    codes_o = tuple(codes[r] for r in order)
    levels_o = tuple(int(levels[r]) for r in order)
    counts_o = tuple(counts0[r] for r in order)
    names_o = tuple(names[r] for r in order)
    q2 = sum(levels_o[1:])
    base: dict[str, Any] = dict(n=n, names=names_o, order=order, levels=levels_o, codes=codes_o,
                                counts=counts_o)
    if q2 > DENSE_Q2_LIMIT:
        offs = np.cumsum([0] + list(levels_o))
        rows = np.concatenate([c + offs[i] for i, c in enumerate(codes_o)])
        cols = np.concatenate([np.arange(n)] * R)
        Z = sp.csc_matrix((np.ones(len(rows)), (cols, rows)), shape=(n, int(offs[-1])))
        ztz = (Z.T @ Z).tocsc()
        return Structure(mode="sparse", ztz=ztz, offsets=tuple(int(o) for o in offs), **base)
    c1 = counts_o[0]
    L1 = levels_o[0]
    vals, grp = _count_groups(c1)
    nG = len(vals)
    sizes = np.bincount(grp, minlength=nG).astype(np.float64)
    cc1 = np.bincount(grp, weights=c1 * c1, minlength=nG)
    grouping: dict[str, Any] = dict(groups=grp, group_sizes=sizes,
                                    group_values=vals, cc1=cc1)
    if R == 1:
        return Structure(mode="dense", c1=c1, z12_=np.zeros((L1, 0)), z22=np.zeros((0, 0)),
                         c2=np.zeros(0), G=np.zeros((nG, 0)), h=np.zeros((nG, 0)),
                         **grouping, **base)
    off = np.cumsum([0] + list(levels_o[1:]))
    # rows of z12 grouped by count (one slice per group), built in that order; exact in
    # float32 when every sum of counts the fit forms stays below 2^24 (_group_products)
    perm = np.argsort(grp, kind="stable")
    rank = np.empty(L1, dtype=np.int64)
    rank[perm] = np.arange(L1)
    exact32 = float(cc1.max()) < 2.0 ** 24 and n < 2 ** 24
    zsort = np.empty((L1, q2), dtype=np.float32 if exact32 else np.float64)
    par = tuple((parents or {}).get((names_o[0], names_o[r])) for r in range(1, R))
    code1 = rank[codes_o[0]] if any(p is None for p in par) else None
    for r in range(1, R):
        Lr, blk = levels_o[r], zsort[:, off[r - 1]:off[r]]
        if par[r - 1] is not None:                       # nested: one entry per row
            blk[...] = 0
            blk[np.arange(L1), cast(np.ndarray, par[r - 1])[perm]] = c1[perm]
        else:
            blk[...] = np.bincount(cast(np.ndarray, code1) * Lr + codes_o[r],
                                   minlength=L1 * Lr).reshape(L1, Lr)
    z22 = np.zeros((q2, q2))
    for a in range(1, R):
        for b in range(a, R):
            if a == b:
                blk = np.diag(counts_o[a])
            else:
                blk = _cross_counts(codes_o[a], levels_o[a], codes_o[b], levels_o[b])
            z22[off[a - 1]:off[a], off[b - 1]:off[b]] = blk
            z22[off[b - 1]:off[b], off[a - 1]:off[a]] = blk.T
    c2 = np.concatenate(counts_o[1:])
    G = G_full = None
    isz = sizes.astype(np.int64)
    starts = np.cumsum(isz) - isz
    if nG * q2 * (q2 + 1) * 4 <= GROUP_MEMORY_LIMIT and nG < L1:
        # packed upper triangles: each evaluation streams G once, so half the bytes is
        # half the time of its memory-bound products
        triu = _triu(q2)
        G, zsum, G_full = _group_products(zsort, starts, isz, float(cc1.max()), triu,
                                          unpacked=nG * q2 * q2 <= FULL_G_LIMIT)
    else:
        zsum = np.add.reduceat(zsort, starts, axis=0).astype(np.float64)
    # c1 is the group's count value on every level of a group: h_g = v_g sum_{i in g} z_i
    h = vals[:, None] * zsum
    return Structure(mode="dense", c1=c1, z22=z22, c2=c2, G=G, G_full=G_full,
                     triu=triu if G is not None else None, h=h, perm=perm, starts=starts,
                     zsort=zsort, parents=par, **grouping, **base)


def pair_sums(st: Structure, d: np.ndarray) -> PairSums:
    """The d-dependent sums for ``st`` (d over the same cells, same order)."""
    par = st.parents or (None,) * max(len(st.levels) - 1, 0)
    s1 = np.bincount(st.codes[0], weights=d, minlength=st.levels[0]) if st.levels else None
    s = tuple(cast(np.ndarray, s1) if r == 0 else
              np.bincount(c, weights=d, minlength=L) if par[r - 1] is None else
              np.bincount(cast(np.ndarray, par[r - 1]), weights=s1, minlength=L)
              for r, (c, L) in enumerate(zip(st.codes, st.levels)))
    base: dict[str, Any] = dict(n=st.n, sum_d=float(d.sum()), sumsq_d=float(d @ d), s=s)
    if st.mode != "dense":
        return PairSums(**base)
    # dense mode: build_structure set every dense-mode field
    group_values = cast(np.ndarray, st.group_values)
    groups, c1 = cast(np.ndarray, st.groups), cast(np.ndarray, st.c1)
    s1 = s[0]
    nG = len(group_values)
    if st.zsort is not None:
        # k_g = sum_{i in g} s1_i z_i: the grouped rows scaled, summed group by group
        zsort, starts = st.zsort, cast(np.ndarray, st.starts)
        s1p = s1[cast(np.ndarray, st.perm)]
        k = np.add.reduceat(zsort * s1p[:, None], starts, axis=0) if zsort.shape[1] \
            else np.zeros((nG, 0))
    else:
        z12 = cast(np.ndarray, st.z12)
        k = np.asarray(cast(sp.csr_matrix, st.onehot) @ (z12 * s1[:, None])) if z12.shape[1] \
            else np.zeros((nG, 0))
    cs1 = np.bincount(groups, weights=c1 * s1, minlength=nG)
    ss1 = np.bincount(groups, weights=s1 * s1, minlength=nG)
    s2 = np.concatenate(s[1:]) if len(s) > 1 else np.zeros(0)
    return PairSums(k=k, cs1=cs1, ss1=ss1, s2=s2, **base)
