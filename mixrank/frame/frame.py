"""Stage frame: the validated, encoded data every fit works from.

Inputs: built by :func:`mixrank.frame.build_frame`.
Outputs: :class:`Frame` (cells x models score matrix, term codes, pairing
keys) and :class:`SufficientStats` (per-level sums of each model's scores,
common-cell counts of every pair of models), shared by all pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from .._util import tidy
from ..errors import DataError
from ..formula.spec import Spec

__all__ = ["Frame", "SufficientStats", "LevelSums", "compute_stats", "Deferred"]


class Deferred:
    """A value not built yet: ``build()`` makes it (``Frame.cells`` and ``Frame.term_labels``
    hold one until they are read).

    ``build`` must be picklable (a module-level function or a
    :func:`functools.partial` of one), so that a frame can go to an engine
    worker before its table is built.
    """

    __slots__ = ("build",)

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build = build

    def __reduce__(self) -> tuple:
        return (Deferred, (self.build,))


class _Table:
    """``Frame.cells``, ``Frame.term_labels``: stored as given; a :class:`Deferred` is built on
    first read and kept."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name]
        if isinstance(value, Deferred):
            value = obj.__dict__[self.name] = value.build()
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value


@dataclass(frozen=True, eq=False)
class SufficientStats:
    """Statistics computed in one pass over the cells, shared by all pairs.

    Attributes
    ----------
    level_sums : mapping term name -> ndarray (n_levels, n_models)
        Sum of each model's cell scores per level of each random term (the
        balanced closed form of :mod:`mixrank.engine.lmm.balanced` reads them; a
        :class:`LevelSums`, computed when first read).
    n_common : ndarray (M, M)
        Number of cells where both models are scored.
    """

    level_sums: Mapping[str, np.ndarray]
    n_common: np.ndarray


class LevelSums(Mapping):
    """``{term name: (levels, models) sums}``, computed (every term at once) when first read
    -- an unbalanced pair's fit never reads them -- and kept (docs/speed.md §7).

    ``compute()`` must be picklable (a :func:`functools.partial` of a module-level
    function), so that a frame can go to an engine worker.
    """

    def __init__(self, compute: Callable[[], dict[str, np.ndarray]], names: Iterable[str]) -> None:
        self._compute, self._names = compute, tuple(names)
        self._done: dict[str, np.ndarray] | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        if self._done is None:
            self._done = self._compute()
        return self._done[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _level_sums(scores: np.ndarray, observed: np.ndarray, term_codes: dict[str, np.ndarray],
                term_levels: dict[str, int]) -> dict[str, np.ndarray]:
    """Each model's summed cell scores per level of each term: (levels, models) per term."""
    y0 = np.where(observed, scores, 0.0)
    n_models = scores.shape[1]
    sums: dict[str, np.ndarray] = {}
    for name, codes in term_codes.items():
        L = term_levels[name]
        if n_models <= 8:       # a count per model: faster than the (cell, model) index below
            out = np.empty((L, n_models))
            for j in range(n_models):
                out[:, j] = np.bincount(codes, weights=y0[:, j], minlength=L)
            sums[name] = out
            continue
        # one pass: level x model index of every (cell, model) entry (the same sums, in the
        # same order within each level and model)
        idx = (codes[:, None] * n_models + np.arange(n_models)[None, :]).ravel()
        sums[name] = np.bincount(idx, weights=y0.ravel(), minlength=L * n_models).reshape(L, n_models)
    return sums


def compute_stats(scores: np.ndarray, observed: np.ndarray,
                  term_codes: dict[str, np.ndarray],
                  term_levels: dict[str, int]) -> SufficientStats:
    """Compute :class:`SufficientStats` from the cells x models matrix (the level sums when
    first read)."""
    m = observed.astype(np.float64)
    sums = LevelSums(partial(_level_sums, scores, observed, term_codes, term_levels), term_codes)
    return SufficientStats(level_sums=sums, n_common=np.rint(m.T @ m).astype(np.int64))


@dataclass(frozen=True, eq=False)
class Frame:
    """Validated, encoded long-format data for one formula.

    Attributes
    ----------
    spec : Spec
    models : tuple of str
        Levels of the comparison factor, sorted.
    pair_by : tuple of str
        The pairing keys defining a cell.
    replicate : str or None
        Column whose values distinguish replicates within a cell.
    cells : pandas.DataFrame
        One row per cell with the pairing-key values (given to the
        constructor as a table or a :class:`Deferred`, built the first time it
        is read: a fit never reads it).
    term_codes : dict term name -> ndarray of int64 (n_cells,)
    term_levels : dict term name -> int
    term_labels : dict term name -> ndarray of level labels
        (like ``cells``, built the first time it is read).
    scores : ndarray (n_cells, n_models)
        Cell score per model (the replicate mean), NaN where not scored.
    observed : ndarray of bool (n_cells, n_models)
    replicates : ndarray of int (n_cells, n_models)
        Number of rows averaged into each cell score (0 where not scored).
    binary : bool
        Every row score is 0 or 1.
    n_rows : int
        Rows used (after ``na="drop"``).
    n_dropped : int
        Rows dropped for missing scores (``na="drop"``).
    stats : SufficientStats

    Examples
    --------
    >>> import mixrank
    >>> fr = mixrank.build_frame(mixrank.load_example(), "correct ~ model + (1|subject)")
    >>> fr.models, fr.pair_by, fr.scores.shape, fr.binary
    (('m01', 'm02', 'm03', 'm04', 'm05', 'm06'), ('subject', 'question', 'prompt'), (960, 6), True)
    """

    spec: Spec
    models: tuple[str, ...]
    pair_by: tuple[str, ...]
    replicate: str | None
    cells: pd.DataFrame
    term_codes: dict[str, np.ndarray]
    term_levels: dict[str, int]
    term_labels: dict[str, np.ndarray]
    scores: np.ndarray
    observed: np.ndarray
    replicates: np.ndarray
    binary: bool
    n_rows: int
    n_dropped: int
    stats: SufficientStats = field(repr=False)

    @property
    def n_cells(self) -> int:
        """The number of cells (rows of :attr:`scores`), an int."""
        return int(self.scores.shape[0])

    @property
    def n_models(self) -> int:
        """The number of models, an int."""
        return len(self.models)

    def model_index(self, model: str) -> int:
        """Position of ``model`` among :attr:`models`.

        Parameters
        ----------
        model : str
            A model of the frame.

        Returns
        -------
        int
            Its position.

        Raises
        ------
        DataError
            ``model`` is not a model of the frame.

        Examples
        --------
        >>> import mixrank
        >>> fr = mixrank.build_frame(mixrank.load_example(), "correct ~ model + (1|subject)")
        >>> fr.model_index("m03"), fr.n_models
        (2, 6)
        """
        from ..errors import DataError

        try:
            return self.models.index(str(model))
        except ValueError:
            raise DataError(f"model {model!r} is not a level of {self.spec.comparison!r}; "
                            f"available: {list(self.models)}") from None

    def n_observed(self) -> np.ndarray:
        """Cells scored per model.

        Returns
        -------
        numpy.ndarray
            int64 counts, in the order of :attr:`models`.

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example()
        >>> df = df[~((df.model == "m02") & (df.subject == "s01"))]   # m02 misses subject s01
        >>> fr = mixrank.build_frame(df, "correct ~ model + (1|subject)")
        >>> fr.n_observed().tolist()
        [960, 880, 960, 960, 960, 960]
        """
        return np.diagonal(self.stats.n_common).astype(np.int64)   # m.T @ m: counted already

    def common_mask(self, j: int, k: int) -> np.ndarray:
        """The cells both models are scored on.

        Parameters
        ----------
        j, k : int
            Positions of two models.

        Returns
        -------
        numpy.ndarray
            Boolean mask over the cells.

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example()
        >>> df = df[~((df.model == "m02") & (df.subject == "s01"))]   # m02 misses subject s01
        >>> fr = mixrank.build_frame(df, "correct ~ model + (1|subject)")
        >>> int(fr.common_mask(0, 1).sum()), int(fr.common_mask(0, 2).sum())
        (880, 960)
        """
        return self.observed[:, j] & self.observed[:, k]

    def n_scored_by_all(self, models: Sequence[int]) -> int:
        """The number of cells every model of ``models`` is scored on.

        Parameters
        ----------
        models : list of int
            Positions of models.

        Returns
        -------
        int
            The count.

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example()
        >>> df = df[~((df.model == "m02") & (df.subject == "s01"))]   # m02 misses subject s01
        >>> fr = mixrank.build_frame(df, "correct ~ model + (1|subject)")
        >>> fr.n_scored_by_all([0, 2, 3]), fr.n_scored_by_all([0, 1, 2])
        (960, 880)
        """
        return int(np.count_nonzero(self.observed[:, list(models)].all(axis=1)))

    def level_counts(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """Cells per level of a random term, overall and per model.

        Counted model by model once per frame and kept (bounds on a pair's levels without
        its common-cell mask, :mod:`mixrank.engine.estimability`).

        Parameters
        ----------
        term : str
            A random term of the formula.

        Returns
        -------
        tuple of numpy.ndarray
            Cells per level (``(L,)``, int64) and each model's scored cells per level
            (``(M, L)``, the smallest unsigned integer type that holds the largest level).

        Raises
        ------
        DataError
            ``term`` is not a random term of the formula (the message lists the terms).

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example()
        >>> df = df[~((df.model == "m02") & (df.subject == "s01"))]   # m02 misses subject s01
        >>> fr = mixrank.build_frame(df, "correct ~ model + (1|subject)")
        >>> total, per_model = fr.level_counts("subject")
        >>> total.tolist()[:3], per_model[1].tolist()[:3], per_model.shape
        ([80, 80, 80], [0, 80, 80], (6, 12))
        """
        memo = self.__dict__.setdefault("_level_counts", {})
        if term not in self.term_codes:
            raise DataError(f"level_counts({term!r}): {term!r} is not a random term of the "
                            f"formula; its random terms are {list(self.term_codes)}")
        if term not in memo:
            codes, L = self.term_codes[term], self.term_levels[term]
            total = np.bincount(codes, minlength=L).astype(np.int64)
            top = int(total.max(initial=0))
            kind = next(t for t in (np.uint8, np.uint16, np.uint32, np.int64)
                        if top <= np.iinfo(t).max)
            per = np.empty((self.n_models, L), dtype=kind)
            for j in range(self.n_models):
                per[j] = np.bincount(codes[self._scored_cells(j)], minlength=L)
            memo[term] = (total, per)
        return memo[term]

    def _scored_cells(self, j: int) -> np.ndarray:
        """The cells model ``j`` is scored on (a boolean mask or cell indices)."""
        return self.observed[:, j]

    def balance(self) -> pd.DataFrame:
        """Balance report per pair of models.

        Returns
        -------
        pandas.DataFrame
            ``model_a, model_b, n`` (cells paired), ``only_a``, ``only_b``
            (cells scored for one model only), ``neither`` (cells of the
            frame, scored for other models, that neither model was scored
            on; ``n + only_a + only_b + neither`` is every cell), ``complete``
            (both models scored on every cell of the frame: ``only_a ==
            only_b == neither == 0``).

        Examples
        --------
        >>> import mixrank
        >>> fr = mixrank.build_frame(mixrank.load_example(), "correct ~ model + (1|subject)")
        >>> bal = fr.balance()
        >>> len(bal), bool(bal["complete"].all()), int(bal["n"].iloc[0])
        (15, True, 960)
        """
        st = self.stats
        per_model = self.n_observed()
        rows = []
        for j in range(self.n_models):
            for k in range(j + 1, self.n_models):
                n = int(st.n_common[j, k])
                oa, ob = int(per_model[j] - n), int(per_model[k] - n)
                rows.append(dict(model_a=self.models[j], model_b=self.models[k], n=n,
                                 only_a=oa, only_b=ob, neither=int(self.n_cells - n - oa - ob),
                                 complete=n == self.n_cells))
        return tidy(rows, table="balance")

    def describe(self) -> pd.DataFrame:
        """Design summary: one row per grouping (terms, cells, models).

        Returns
        -------
        pandas.DataFrame
            ``term, n, role`` (comparison, random, cell) and, for random terms,
            ``cells_min, cells_max`` (cells per level).

        Examples
        --------
        >>> import mixrank
        >>> fr = mixrank.build_frame(mixrank.load_example(), "correct ~ model + (1|subject)")
        >>> fr.describe()[["term", "n", "role"]].values.tolist()
        [['model', 6, 'comparison'], ['subject', 12, 'random'], ['cell (subject:question:prompt)', 960, 'cell']]
        """
        rows = [dict(term=self.spec.comparison, n=self.n_models, role="comparison")]
        for name in self.spec.term_names:
            sizes = np.bincount(self.term_codes[name])
            rows.append(dict(term=name, n=self.term_levels[name], role="random",
                             cells_min=int(sizes.min()), cells_max=int(sizes.max())))
        rows.append(dict(term="cell (" + ":".join(self.pair_by) + ")", n=self.n_cells, role="cell"))
        return tidy(rows, table="design")

    def summary_text(self) -> str:
        """A short printable design summary.

        Returns
        -------
        str
            Formula, rows, scores, models, cells, levels per term and paired cells.

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example()
        >>> df = df[~((df.model == "m02") & (df.subject == "s01"))]   # m02 misses subject s01
        >>> fr = mixrank.build_frame(df, "correct ~ model + (1|subject)")
        >>> print(fr.summary_text())
        Formula: correct ~ model + (1|subject)
        Rows: 5,680
        Scores: binary (0/1)
        Models (6): m01, m02, m03, m04, m05, m06
        Cells: 960 keyed by subject, question, prompt
          (1|subject): 12 levels
        Pairs: 15; on every cell: 10; with cells missing: 5
        """
        bal = self.balance()
        lines = [
            f"Formula: {self.spec.formula}",
            f"Rows: {self.n_rows:,}" + (f" ({self.n_dropped:,} dropped for missing scores)"
                                        if self.n_dropped else ""),
            f"Scores: {'binary (0/1)' if self.binary else 'continuous'}"
            + (f", replicates averaged over {self.replicate!r}" if self.replicate else ""),
            f"Models ({self.n_models}): " + ", ".join(self.models),
            f"Cells: {self.n_cells:,} keyed by " + ", ".join(self.pair_by),
        ]
        for name in self.spec.term_names:
            lines.append(f"  (1|{name}): {self.term_levels[name]:,} levels")
        if len(bal):
            nb = int((~bal["complete"]).sum())
            lines.append(f"Pairs: {len(bal)}; on every cell: {len(bal) - nb}; with cells missing: {nb}")
        else:
            lines.append("Pairs: none (a single model)")
        return "\n".join(lines)


# After the dataclass is made, so that the fields have no default and its __init__
# stores through the descriptors.
for _name in ("cells", "term_labels"):
    setattr(Frame, _name, _Table())
    getattr(Frame, _name).__set_name__(Frame, _name)
