"""Stage frame: a Frame from an aggregated (model, cell) table instead of rows.

Inputs: a :class:`CellTable` -- one entry per (model, cell) group with the
number and the sum of its scores, plus source-level counts of problem values
-- as computed out of core by :mod:`mixrank.io.backends` (DuckDB over
parquet, dask.dataframe on a cluster).  Outputs: :class:`~mixrank.frame.Frame`.

Every fit depends on the rows only through the cell scores (replicate means),
so a GROUP BY over (pairing keys, model) is all an engine has to compute.
:func:`frame_from_cells` then encodes that table exactly as
:func:`~mixrank.frame.build_frame` encodes rows (sorted levels, lexicographic
cell order, the shared :func:`~mixrank.frame.build.assemble_frame`), so the
two paths give the same frame: bit-identical scores without replicates, and
replicate means equal up to the order of floating-point summation.

A source too large for the dense cells x models matrix arrives instead as a
:class:`ColumnTable` (the DuckDB backend's compressed layout: keys already
encoded, scores model by model) and :func:`frame_from_columns` builds a
:class:`~mixrank.frame.columns.CompressedFrame` with the same checks
(docs/scale.md).

Contents: :class:`CellTable`, :func:`frame_from_cells`, :func:`check_levels`,
:class:`ColumnTable`, :func:`frame_from_columns`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, MissingDataWarning
from ..formula.spec import Spec
from .build import (
    as_spec,
    assemble_frame,
    cell_scores,
    duplicate_cells_error,
    encode_keys,
    resolve_keys,
    score_kind,
)
from .columns import ModelColumns
from .frame import Frame
from .memory import check_frame_size

__all__ = ["CellTable", "frame_from_cells", "check_levels", "ColumnTable", "frame_from_columns"]


@dataclass(frozen=True, eq=False, kw_only=True)
class ScanCounts:
    """What a scan of the source counted, shared by :class:`CellTable` and :class:`ColumnTable`.

    Attributes
    ----------
    n_rows : int
        Rows in the source, before dropping missing scores.
    n_missing : int
        Rows with a missing (null or NaN) score.
    n_nonnumeric : int
        Rows whose score is present but is not a number.
    nonnumeric_example : object
        One such value, for the error message.
    n_infinite : int
        Kept rows with an infinite score.
    n_nonbinary : int
        Kept rows whose score is neither 0 nor 1.
    replicate_missing : int
        Kept rows with a missing replicate value.
    source : str
        Description of the source, for messages.
    """

    n_rows: int
    n_missing: int = 0
    n_nonnumeric: int = 0
    nonnumeric_example: Any = None
    n_infinite: int = 0
    n_nonbinary: int = 0
    replicate_missing: int = 0
    source: str = "the data"


@dataclass(frozen=True, eq=False)
class CellTable(ScanCounts):
    """Scores aggregated to one entry per (model, cell) group.

    Attributes
    ----------
    columns : dict column name -> pandas.Series
        The value of every pairing key and of the comparison factor for each
        group (plain or categorical; categorical code -1 = missing value).
    n : ndarray of int (n_groups,)
        Rows kept in each group (missing scores excluded under ``na="drop"``).
    sums : ndarray of float (n_groups,)
        Sum of the kept scores of each group.
    replicate_repeats : ndarray of int (n_groups,) or None
        Per group: kept rows minus distinct replicate values (0 when every
        replicate value is unique); None without a replicate column.
    n_rows, n_missing, n_nonnumeric, nonnumeric_example, n_infinite, n_nonbinary, \
replicate_missing, source
        As in :class:`ScanCounts` (keyword-only).
    """

    columns: dict[str, pd.Series]
    n: np.ndarray
    sums: np.ndarray
    replicate_repeats: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.n)


def check_levels(name: str, levels: Sequence[Any] | np.ndarray | pd.Series, source: str) -> np.ndarray:
    """Return the distinct values of a key column, or raise if one is missing.

    Raises
    ------
    DataError
        A null or NaN among the values (as :func:`~mixrank.frame.build_frame`
        does for a missing key value).
    """
    values = np.asarray(levels.to_numpy() if isinstance(levels, pd.Series) else levels, dtype=object)
    if pd.isna(values).any():
        raise DataError(f"column {name!r} has a missing value in {source}; fill or drop rows "
                        "with missing keys before fitting")
    return values


def _where(columns: dict[str, pd.Series], names: Sequence[str], i: int) -> dict[str, Any]:
    return {k: columns[k].iloc[i] for k in names}


def _score_checks(cells: CellTable | ColumnTable, y_name: str, na: str, src: str) -> int:
    """Reject non-numeric and infinite scores; missing ones are an error or dropped (counted)."""
    if cells.n_nonnumeric:
        raise DataError(
            f"score column {y_name!r} must be numeric, but {cells.n_nonnumeric} value(s) in {src} "
            f"are not numbers (e.g. {cells.nonnumeric_example!r}); convert the scores to numbers "
            "(0/1 or a bounded score) before fitting")
    n_dropped = 0
    if cells.n_missing:
        if na == "error":
            raise DataError(
                f"score column {y_name!r} has {cells.n_missing} missing value(s) in {src}; fix "
                "them, or pass na='drop' to drop those rows (they are reported)")
        n_dropped = int(cells.n_missing)
        warnings.warn(f"dropped {n_dropped} row(s) with a missing {y_name!r} score",
                      MissingDataWarning, stacklevel=3)
    if cells.n_infinite:
        raise DataError(f"score column {y_name!r} has {cells.n_infinite} infinite value(s) in "
                        f"{src}; scores must be finite")
    return n_dropped


def _check_repeats(rep: np.ndarray, flat: np.ndarray, replicate: str | None,
                   keys: Sequence[str], models: Any, model_codes: np.ndarray,
                   key_codes: dict[str, np.ndarray], key_levels: dict[str, Any]) -> None:
    """Reject replicate values that repeat within a (model, cell) group (``rep`` > 0)."""
    if (rep > 0).any():
        order = np.argsort(flat, kind="stable")
        first = int(order[np.flatnonzero(rep[order] > 0)[0]])
        where = {k: key_levels[k][key_codes[k][first]] for k in keys}
        raise DataError(
            f"replicate {replicate!r} values repeat within {int((rep > 0).sum())} (model, "
            f"cell) group(s), first for model {models[model_codes[first]]!r} at {where}; "
            "replicate values must be unique within a (model, cell)")


def frame_from_cells(cells: CellTable, formula: str | Spec, *, pair_by: Sequence[str] | None = None,
                     replicate: str | None = None, na: str = "error") -> Frame:
    """Build a :class:`~mixrank.frame.Frame` from an aggregated (model, cell) table.

    Parameters
    ----------
    cells : CellTable
        One entry per (model, cell) group with at least one row in the
        source (see :mod:`mixrank.io.backends` for engines that compute it).
    formula : str or Spec
        e.g. ``"correct ~ model + (1|subject)"``.
    pair_by : sequence of str, optional
        Pairing keys; default as in :func:`~mixrank.frame.build_frame`,
        from the table's columns.
    replicate : str, optional
        The replicate column the table was aggregated over (cell score =
        replicate mean); without it a group of several rows is an error.
    na : {"error", "drop"}
        Missing scores raise, or were dropped by the engine and are reported.

    Returns
    -------
    Frame
        The frame :func:`~mixrank.frame.build_frame` builds from the rows.

    Raises
    ------
    DataError
        The table has no rows; non-numeric, missing (``na="error"``) or
        infinite scores; a missing key or replicate value; comparison levels
        that coincide as text; several rows for a (model, cell) without a
        replicate column; a replicate value repeated within a (model, cell);
        and every check of :func:`~mixrank.frame.build.assemble_frame`.

    Notes
    -----
    The cell score is ``sums / n`` for each group.  Levels of each key are
    sorted, cells are ordered lexicographically by key codes, exactly as in
    :func:`~mixrank.frame.build_frame`.  Validated against
    :func:`~mixrank.frame.build_frame` on ChemBench and simulated unbalanced
    data with replicates (``tests/io/test_backends.py``).
    """
    spec = as_spec(formula)
    src = cells.source
    columns = list(cells.columns) + [spec.response] + ([replicate] if replicate else [])
    keys = resolve_keys(spec, columns, pair_by=pair_by, replicate=replicate, na=na)
    missing_cols = [c for c in (*keys, spec.comparison) if c not in cells.columns]
    if missing_cols:
        raise DataError(f"the cell table lacks column(s) {missing_cols}; aggregate the source by "
                        f"{list(keys) + [spec.comparison]}")
    if cells.n_rows == 0:
        raise DataError(f"{src} has no rows; expected one row per (model, cell) observation")
    y_name = spec.response
    n_dropped = _score_checks(cells, y_name, na, src)
    n = np.asarray(cells.n, dtype=np.int64)
    keep = n > 0
    if not keep.any():
        raise DataError("no rows left after dropping missing scores")
    if cells.replicate_missing:
        raise DataError(f"column {replicate!r} has {cells.replicate_missing} missing value(s) in "
                        f"{src}; fill or drop rows with missing keys before fitting")
    cols = {c: cells.columns[c] for c in (*keys, spec.comparison)}
    if not keep.all():
        idx = np.flatnonzero(keep)
        cols = {c: s.iloc[idx].reset_index(drop=True) for c, s in cols.items()}
        n = n[idx]
    else:
        idx = None
    sums = np.asarray(cells.sums, dtype=np.float64)
    if idx is not None:
        sums = sums[idx]
    for c, s in cols.items():
        miss = s.isna()
        if miss.any():
            raise DataError(f"column {c!r} has a missing value in {int(miss.sum())} (model, cell) "
                            f"group(s) of {src}; fill or drop rows with missing keys before fitting")

    model_codes, models, key_codes, key_levels, cell, ncell = encode_keys(spec, keys,
                                                                           cols.__getitem__)
    M = len(models)
    check_frame_size(ncell, M, dense=True, n_entries=len(cell), where=src)   # before allocating
    flat = cell.astype(np.int64) * M
    flat += model_codes
    del cell
    groups = np.bincount(flat, minlength=ncell * M)
    if groups.max() > 1:
        first = int(np.flatnonzero(groups[flat] > 1)[0])
        raise DataError(f"the cell table has several entries for {_where(cols, keys, first)} "
                        f"and model {models[model_codes[first]]!r}; key values that differ in "
                        "the source coincide after encoding: convert the key columns to one type")
    del groups

    if replicate is None:
        err = duplicate_cells_error(n, flat, spec, keys, models, model_codes, key_codes,
                                    key_levels)
        if err is not None:
            raise err
    elif cells.replicate_repeats is not None:
        rep = np.asarray(cells.replicate_repeats)
        _check_repeats(rep if idx is None else rep[idx], flat, replicate, keys, models,
                       model_codes, key_codes, key_levels)

    scores, observed, counts, cell_key_codes = cell_scores(flat, n, sums, ncell, M, key_codes)
    binary = score_kind(None, y_name, n_nonbinary=cells.n_nonbinary, n=int(n.sum()))
    return assemble_frame(spec, keys=keys, models=models, key_levels=key_levels,
                          cell_key_codes=cell_key_codes, scores=scores, observed=observed,
                          replicates=counts, replicate=replicate, binary=binary,
                          n_rows=int(n.sum()), n_dropped=n_dropped)


@dataclass(frozen=True, eq=False)
class ColumnTable(ScanCounts):
    """Scores aggregated to (model, cell) entries, keys encoded, stored model by model.

    Attributes
    ----------
    keys : tuple of str
        The pairing keys, in cell order.
    key_levels : dict key -> ndarray of object
        Each key's sorted levels (as :func:`~mixrank.frame.build_frame` sorts them).
    cell_key_codes : dict key -> ndarray of int
        Each cell's code of every key (cells in lexicographic key-code order).
    models : ndarray of object
        The comparison factor's sorted levels.
    columns : ModelColumns
        Per model the sorted cell indices it is scored on and their scores.
    n_rows, n_missing, n_nonnumeric, nonnumeric_example, n_infinite, n_nonbinary, \
replicate_missing, source
        As in :class:`ScanCounts` (keyword-only).
    """

    keys: tuple[str, ...]
    key_levels: dict[str, np.ndarray]
    cell_key_codes: dict[str, np.ndarray]
    models: np.ndarray
    columns: ModelColumns


def frame_from_columns(table: ColumnTable, formula: str | Spec, *, replicate: str | None = None,
                       na: str = "error") -> Frame:
    """Build a :class:`~mixrank.frame.columns.CompressedFrame` from a :class:`ColumnTable`.

    Parameters
    ----------
    table : ColumnTable
    formula : str or Spec
    replicate : str, optional
        The replicate column the scores were averaged over.
    na : {"error", "drop"}

    Returns
    -------
    CompressedFrame
        The frame :func:`frame_from_cells` builds from the same source, in the
        compressed layout: same models, cells, terms and statistics.

    Raises
    ------
    DataError
        Non-numeric, missing (``na="error"``) or infinite scores, a missing
        replicate value, comparison levels that coincide as text, and every
        check of :func:`~mixrank.frame.build.assemble_frame`.  (Duplicated
        (model, cell) rows are found by the backend.)

    Notes
    -----
    Validated against :func:`frame_from_cells` and ``backend="pandas"``
    (``tests/io/test_backend_columns.py``).
    """
    spec = as_spec(formula)
    n_dropped = _score_checks(table, spec.response, na, table.source)
    if table.replicate_missing:
        raise DataError(f"column {replicate!r} has {table.replicate_missing} missing value(s) in "
                        f"{table.source}; fill or drop rows with missing keys before fitting")
    models = tuple(str(m) for m in table.models)
    if len(set(models)) != len(models):
        raise DataError(f"comparison factor {spec.comparison!r} has levels that coincide as text "
                        f"({list(table.models)}); make the labels distinct")
    cols = table.columns
    n_rows = int(sum(len(c) for c in cols.cells)) if cols.counts is None \
        else int(sum(int(c.sum()) for c in cols.counts))
    binary = score_kind(None, spec.response, n_nonbinary=table.n_nonbinary, n=n_rows)
    return assemble_frame(spec, keys=table.keys, models=models, key_levels=table.key_levels,
                          cell_key_codes=table.cell_key_codes, scores=None, observed=None,
                          replicates=None, replicate=replicate, binary=binary, n_rows=n_rows,
                          n_dropped=n_dropped, columns=cols)
