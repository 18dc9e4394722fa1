"""Stage frame: the compressed (per-model) layout of a frame's scores.

Inputs: per model, the sorted cell indices it is scored on and its cell
scores (and replicate counts) -- built by the DuckDB backend without a
cells x models matrix (:mod:`mixrank.io.backend_duckdb`), or from a dense
frame (:meth:`ModelColumns.from_dense`, for tests).
Outputs: :class:`ModelColumns` (pair extraction, sufficient statistics, the
dense matrices on demand) and :class:`CompressedFrame`, a
:class:`~mixrank.frame.Frame` holding them.

Memory follows the (model, cell) entries present: 4 bytes of cell index
plus 1 byte of score per entry for 0/1 scores without replicates, 8 bytes
of score (and 4 of replicate count) otherwise; a missing entry costs
nothing.  The common cells of two models are the intersection of their two
sorted index arrays (a scatter into one boolean vector over the cells and a
gather), in cell order, so the paired differences -- and every fit computed
from them -- are those of the dense layout, value for value.  Layout rule and
measurements: docs/scale.md.

Contents: :class:`ModelColumns`, :class:`PairCells`, :class:`CompressedFrame`,
:func:`compress_frame`, :data:`DENSE_MAX_ENTRIES`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

import numpy as np

from .frame import Frame, SufficientStats

__all__ = ["ModelColumns", "PairCells", "CompressedFrame", "compress_frame", "DENSE_MAX_ENTRIES"]

#: The automatic layout rule (docs/scale.md): a source with more than this
#: many (model, cell) entries -- bounded above by its kept rows -- is built
#: compressed; smaller ones dense (the dense matrix then costs at most
#: ~26 bytes x this = 0.5 GB and its pair extraction is as fast or faster).
DENSE_MAX_ENTRIES = 20_000_000

_CHUNK = 1 << 18          # cells per block when counting common cells


class PairCells(NamedTuple):
    """The common cells of a pair of models and their paired differences.

    ``mask`` (bool over the cells), ``idx`` (their indices in cell order;
    None when the pair is scored on every cell), ``d = y_a - y_b`` over
    them, ``n`` common cells, ``only_a``/``only_b`` cells scored for one
    model only.
    """

    mask: np.ndarray
    idx: np.ndarray | None
    d: np.ndarray
    n: int
    only_a: int
    only_b: int


@dataclass(frozen=True, eq=False)
class ModelColumns:
    """Scores stored model by model: sorted cell indices and their values.

    Attributes
    ----------
    n_cells : int
    cells : tuple of ndarray of int32
        Per model, the sorted indices of the cells it is scored on.
    values : tuple of ndarray
        Per model, the cell scores in the same order (uint8 for 0/1 scores
        without replicates, float64 otherwise).
    counts : tuple of ndarray of int32, or None
        Per model, rows averaged into each cell score; None when every
        cell score comes from one row.
    """

    n_cells: int
    cells: tuple[np.ndarray, ...]
    values: tuple[np.ndarray, ...]
    counts: tuple[np.ndarray, ...] | None = None
    _pos: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def n_models(self) -> int:
        return len(self.cells)

    @property
    def n_observed(self) -> np.ndarray:
        """Cells scored per model (int64)."""
        return np.array([len(c) for c in self.cells], dtype=np.int64)

    @property
    def nbytes(self) -> int:
        """Bytes held by the index, score and count arrays."""
        parts = [*self.cells, *self.values, *(self.counts or ())]
        return int(sum(a.nbytes for a in parts))

    def scores_of(self, j: int) -> np.ndarray:
        """Model ``j``'s cell scores as float64 (in the order of ``cells[j]``)."""
        return np.asarray(self.values[j], dtype=np.float64)

    @classmethod
    def from_dense(cls, scores: np.ndarray, observed: np.ndarray,
                   replicates: np.ndarray | None = None) -> ModelColumns:
        """The compressed layout of a cells x models matrix (uint8 scores when all are 0/1)."""
        n_cells, M = scores.shape
        cells = tuple(np.flatnonzero(observed[:, j]).astype(np.int32) for j in range(M))
        vals = [scores[c, j] for j, c in enumerate(cells)]
        reps = None
        if replicates is not None:
            reps = tuple(replicates[c, j].astype(np.int32) for j, c in enumerate(cells))
            if all(bool((r == 1).all()) for r in reps):
                reps = None
        if reps is None and all(bool(np.isin(v, (0.0, 1.0)).all()) for v in vals):
            vals = [v.astype(np.uint8) for v in vals]
        return cls(n_cells=n_cells, cells=cells, values=tuple(vals), counts=reps)

    def to_dense(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The dense ``scores`` (NaN where unscored), ``observed`` and ``replicates`` matrices."""
        M = self.n_models
        scores = np.full((self.n_cells, M), np.nan)
        observed = np.zeros((self.n_cells, M), dtype=bool)
        reps = np.zeros((self.n_cells, M), dtype=np.int64)
        for j in range(M):
            c = self.cells[j]
            scores[c, j] = self.values[j]
            observed[c, j] = True
            reps[c, j] = 1 if self.counts is None else self.counts[j]
        return scores, observed, reps

    def _positions(self, j: int) -> np.ndarray:
        """Cell index -> position in model ``j``'s arrays (kept for the last two models)."""
        pos = self._pos.get(j)
        if pos is None:
            pos = np.zeros(self.n_cells, dtype=np.int32)
            pos[self.cells[j]] = np.arange(len(self.cells[j]), dtype=np.int32)
            if len(self._pos) >= 2:
                self._pos.pop(next(iter(self._pos)))
            self._pos[j] = pos
        return pos

    def pair(self, j: int, k: int) -> PairCells:
        """Common cells of models ``j`` and ``k`` and ``d = y_j - y_k`` over them (cell order)."""
        ca, cb = self.cells[j], self.cells[k]
        mask = np.zeros(self.n_cells, dtype=bool)
        mask[ca] = True
        in_a = mask[cb]                              # b's entries that a scores too
        n = int(np.count_nonzero(in_a))
        only_a, only_b = len(ca) - n, len(cb) - n
        if n == self.n_cells:                         # both scored on every cell
            return PairCells(mask, None, self.scores_of(j) - self.scores_of(k), n, 0, 0)
        pos_b = np.flatnonzero(in_a)
        idx = cb[pos_b]
        pos_a = self._positions(j)[idx]
        mask[:] = False
        mask[idx] = True
        d = np.asarray(self.values[j][pos_a], dtype=np.float64)
        d -= self.values[k][pos_b]
        return PairCells(mask, idx.astype(np.int64), d, n, only_a, only_b)

    def common_mask(self, j: int, k: int) -> np.ndarray:
        """Boolean mask over the cells: both models ``j`` and ``k`` scored."""
        a = np.zeros(self.n_cells, dtype=bool)
        a[self.cells[j]] = True
        b = np.zeros(self.n_cells, dtype=bool)
        b[self.cells[k]] = True
        return a & b

    def n_common(self) -> np.ndarray:
        """Common cells of every pair of models (M x M, int64), counted block by block."""
        M = self.n_models
        out = np.zeros((M, M), dtype=np.int64)
        bounds = [np.searchsorted(c, np.arange(0, self.n_cells + _CHUNK, _CHUNK)) for c in self.cells]
        for b, start in enumerate(range(0, self.n_cells, _CHUNK)):
            size = min(_CHUNK, self.n_cells - start)
            block = np.zeros((size, M), dtype=np.float32)
            for j, c in enumerate(self.cells):
                block[c[bounds[j][b]:bounds[j][b + 1]] - start, j] = 1.0
            out += np.rint(block.T @ block).astype(np.int64)   # exact: counts < 2**24
        return out

    def stats(self, term_codes: dict[str, np.ndarray],
              term_levels: dict[str, int]) -> SufficientStats:
        """The :class:`~mixrank.frame.SufficientStats` of :func:`~mixrank.frame.compute_stats`."""
        sums: dict[str, np.ndarray] = {}
        for name, codes in term_codes.items():
            L = term_levels[name]
            sums[name] = np.column_stack([
                np.bincount(codes[c], weights=self.scores_of(j), minlength=L)
                for j, c in enumerate(self.cells)]) if self.n_models else np.zeros((L, 0))
        return SufficientStats(level_sums=sums, n_common=self.n_common())


class _DenseView:
    """A dense matrix of a :class:`CompressedFrame`, built on first access and kept."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__.get(self.name)
        if value is None:
            scores, observed, reps = obj.columns.to_dense()
            obj.__dict__.update(scores=scores, observed=observed, replicates=reps)
            value = obj.__dict__[self.name]
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value


@dataclass(frozen=True, eq=False)
class CompressedFrame(Frame):
    """A :class:`~mixrank.frame.Frame` whose scores are held as :class:`ModelColumns`.

    It is a Frame in every respect: ``scores``, ``observed`` and
    ``replicates`` are the dense matrices, built from :attr:`columns` the
    first time one of them is read (and kept).  The native engine, the
    balance report and the sufficient statistics never read them, so a fit
    holds only the compressed columns (docs/scale.md).
    """

    columns: ModelColumns | None = None

    scores = _DenseView()
    observed = _DenseView()
    replicates = _DenseView()

    @property
    def n_cells(self) -> int:
        return len(self.cells)

    def n_observed(self) -> np.ndarray:
        return super().n_observed() if self.columns is None else self.columns.n_observed

    def common_mask(self, j: int, k: int) -> np.ndarray:
        return super().common_mask(j, k) if self.columns is None else self.columns.common_mask(j, k)

    def _scored_cells(self, j: int) -> np.ndarray:
        return super()._scored_cells(j) if self.columns is None else self.columns.cells[j]

    def n_scored_by_all(self, models: Sequence[int]) -> int:
        if self.columns is None:
            return super().n_scored_by_all(models)
        scored = np.zeros(self.n_cells, dtype=np.int32)
        for m in models:
            scored[self.columns.cells[m]] += 1          # a model's cells are distinct
        return int(np.count_nonzero(scored == len(models)))


def compress_frame(frame: Frame) -> CompressedFrame:
    """``frame`` in the compressed layout (same cells, terms and statistics; no dense copy kept)."""
    if isinstance(frame, CompressedFrame):
        return frame
    cols = ModelColumns.from_dense(frame.scores, frame.observed, frame.replicates)
    kw = {f.name: getattr(frame, f.name) for f in fields(frame)}
    kw.update(scores=None, observed=None, replicates=None)
    return CompressedFrame(columns=cols, **kw)
