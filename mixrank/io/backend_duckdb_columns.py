"""Stage io: the DuckDB backend's compressed output, scores model by model.

Inputs: an open DuckDB connection, the source's ``base`` query (score and
missing flag per row) and the distinct values of every key, the model and
the replicate column found by the first pass of
:mod:`mixrank.io.backend_duckdb`.
Outputs: a :class:`~mixrank.frame.cells.ColumnTable` -- keys encoded in
sorted order, per model the sorted cell indices and their scores -- built
without a cells x models matrix and without the aggregated table in Python
memory (docs/scale.md).

The cell key of an entry is the mixed-radix number of its sorted key codes,
so its order is the frame's lexicographic cell order.  Without a replicate
column each kept row is one entry: the rows (model code, cell key, score)
are streamed out of DuckDB in record batches and appended to their model's
arrays (no aggregation); each model's keys are then sorted, equal
neighbours are duplicated (model, cell) rows (an error), and the sorted
union of all keys numbers the cells.  With a replicate column a
``GROUP BY`` of (model code, cell key) goes into a DuckDB temporary table
(spilled to its temp directory beyond ``memory_limit``), the duplicate and
replicate checks run on it, its distinct keys number the cells and it is
streamed the same way.  Scores are uint8 for 0/1 scores without
replicates, float64 otherwise.

Contents: :func:`duckdb_columns`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError
from ..frame.build import several_rows_error
from ..frame.cells import ColumnTable
from ..frame.columns import ModelColumns
from ..frame.encode import encode_column
from .sources import MAX_BITS, MISSING_COL, SCORE_COL
from .sources import quote_ident as _qi

__all__ = ["duckdb_columns", "BATCH_ROWS", "MAX_KEY_SPACE", "UINT32_KEY_SPACE"]

#: Entries per record batch streamed out of DuckDB.
BATCH_ROWS = 1 << 20
#: Cell keys below this bound (the product of the key level counts); beyond it the
#: dense layout is used.
MAX_KEY_SPACE = 2**62
#: Key spaces below this size keep the cell keys as uint32 while streaming.
UINT32_KEY_SPACE = 2**32
_AGG = "__mixrank_agg"


def _sorted_codes(arr: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Sorted rank of each distinct value in ``arr`` and the sorted values (as encode_column)."""
    vals = arr.to_pandas()
    cat = pd.Series(pd.Categorical.from_codes(np.arange(len(vals)), categories=vals))
    return encode_column(cat, name)


def _where(k: int, m: int, keys: Sequence[str], strides: list[int], sizes: list[int],
           key_levels: dict[str, np.ndarray]) -> dict[str, Any]:
    return {c: key_levels[c][(k // strides[i]) % sizes[i]] for i, c in enumerate(keys)}


def _duplicates(count: int, k: int, m: int, spec: Any, keys: Sequence[str], strides: list[int],
                sizes: list[int], key_levels: dict[str, np.ndarray],
                models: np.ndarray) -> DataError:
    """Several rows for ``count`` (model, cell)s, the first (in cell order) at key ``k``, model ``m``."""
    where = _where(k, m, keys, strides, sizes, key_levels)
    where[spec.comparison] = models[m]
    return several_rows_error(count, where, keys)


def _checks(con: Any, spec: Any, keys: Sequence[str], replicate: str | None, max_n: int,
            strides: list[int], sizes: list[int], key_levels: dict[str, np.ndarray],
            models: np.ndarray) -> None:
    """Several rows per (model, cell) without a replicate column; repeated replicate values."""
    if replicate is None and max_n > 1:
        count, k, m = con.sql(f"SELECT count(*) OVER (), k, m FROM {_AGG} WHERE n > 1 "
                              "ORDER BY k, m LIMIT 1").fetchall()[0]
        raise _duplicates(count, k, m, spec, keys, strides, sizes, key_levels, models)
    if replicate is not None:
        first = con.sql(f"SELECT count(*) OVER (), k, m FROM {_AGG} WHERE rep > 0 "
                        "ORDER BY k, m LIMIT 1").fetchall()
        if first:
            count, k, m = first[0]
            raise DataError(
                f"replicate {replicate!r} values repeat within {count} (model, cell) group(s), "
                f"first for model {models[m]!r} at "
                f"{_where(k, m, keys, strides, sizes, key_levels)}; replicate values must be "
                "unique within a (model, cell)")


def _batches(rel: Any) -> Any:
    return rel.to_arrow_reader(BATCH_ROWS) if hasattr(rel, "to_arrow_reader") \
        else rel.fetch_record_batch(BATCH_ROWS)                  # duckdb < 1.4


def _split(batch: Any, n_models: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The batch's row order grouped by model, the group bounds and the models present."""
    m = batch.column(0).to_numpy()
    order = np.argsort(m, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(m, minlength=n_models))])
    return order, bounds, [int(j) for j in np.flatnonzero(bounds[1:] > bounds[:-1])]


def _rows(con: Any, query: str, n_models: int, compact: bool, kdtype: Any,
          dup: Any) -> tuple[np.ndarray, ModelColumns]:
    """Without replicates: stream the kept rows themselves (one per entry), no aggregation.

    Each model's cell keys are sorted; equal neighbours are duplicated
    (model, cell) rows (``dup(count, k, m)`` returns the error); the sorted
    union of the keys numbers the cells (a stable sort of two sorted runs is
    a linear merge).
    """
    ks: list[list[np.ndarray]] = [[] for _ in range(n_models)]
    vals: list[list[np.ndarray]] = [[] for _ in range(n_models)]
    for batch in _batches(con.sql(query)):
        order, bounds, present = _split(batch, n_models)
        k = batch.column(1).to_numpy()[order].astype(kdtype)
        s = batch.column(2).to_numpy()[order]
        val = s.astype(np.uint8) if compact else s
        for j in present:
            ks[j].append(k[bounds[j]:bounds[j + 1]])
            vals[j].append(val[bounds[j]:bounds[j + 1]])
        del batch, order, k, s, val
    keys_m: list[np.ndarray] = []
    out_v: list[np.ndarray] = []
    cell_keys = np.zeros(0, dtype=kdtype)
    n_dup, first = 0, None
    for j in range(n_models):
        k = np.concatenate(ks[j]) if ks[j] else np.zeros(0, kdtype)
        order = np.argsort(k, kind="stable")
        k = k[order]
        out_v.append((np.concatenate(vals[j]) if vals[j] else np.zeros(0))[order])
        ks[j] = vals[j] = []
        same = k[1:] == k[:-1]
        if same.any():
            rep = np.unique(k[1:][same])
            n_dup += len(rep)
            first = min(first or (int(rep[0]), j), (int(rep[0]), j))
        keys_m.append(k)
        merged = np.concatenate([cell_keys, k])
        merged.sort(kind="stable")
        cell_keys = merged[np.concatenate([[True], merged[1:] != merged[:-1]])]
    if first is not None:
        raise dup(n_dup, first[0], first[1])
    cells = []
    for j in range(n_models):
        cells.append(np.searchsorted(cell_keys, keys_m[j]).astype(np.int32))
        keys_m[j] = np.zeros(0, kdtype)
    return cell_keys.astype(np.int64), ModelColumns(n_cells=len(cell_keys), cells=tuple(cells),
                                                    values=tuple(out_v))


def _stream(con: Any, n_models: int, cell_keys: np.ndarray, compact: bool,
            with_counts: bool) -> ModelColumns:
    """Stream the aggregated table into per-model sorted arrays."""
    cells: list[list[np.ndarray]] = [[] for _ in range(n_models)]
    vals: list[list[np.ndarray]] = [[] for _ in range(n_models)]
    cnts: list[list[np.ndarray]] = [[] for _ in range(n_models)]
    for batch in _batches(con.sql(f"SELECT m, k, n, s FROM {_AGG}")):
        order, bounds, present = _split(batch, n_models)
        cell = np.searchsorted(cell_keys, batch.column(1).to_numpy()).astype(np.int32)[order]
        n = batch.column(2).to_numpy()[order]
        s = batch.column(3).to_numpy()[order]
        val = s.astype(np.uint8) if compact else s / n
        for j in present:
            lo, hi = bounds[j], bounds[j + 1]
            cells[j].append(cell[lo:hi])
            vals[j].append(val[lo:hi])
            if with_counts:
                cnts[j].append(n[lo:hi].astype(np.int32))
        del batch, order, cell, n, s, val
    out_c, out_v, out_n = [], [], []
    for j in range(n_models):
        c = np.concatenate(cells[j]) if cells[j] else np.zeros(0, np.int32)
        order = np.argsort(c, kind="stable")
        out_c.append(c[order])
        cells[j] = []
        out_v.append((np.concatenate(vals[j]) if vals[j] else np.zeros(0))[order])
        vals[j] = []
        if with_counts:
            out_n.append((np.concatenate(cnts[j]) if cnts[j] else np.zeros(0, np.int32))[order])
            cnts[j] = []
    return ModelColumns(n_cells=len(cell_keys), cells=tuple(out_c), values=tuple(out_v),
                        counts=tuple(out_n) if with_counts else None)


def duckdb_columns(con: Any, pa: Any, base: str, spec: Any, keys: tuple[str, ...],
                   replicate: str | None, levels: dict[str, Any],
                   kw: dict[str, Any]) -> ColumnTable | None:
    """The compressed :class:`ColumnTable` of the source (None: cell keys overflow 62 bits).

    ``base`` is the ``WITH base AS (...)`` clause of the first pass and
    ``levels`` the distinct kept values (pyarrow arrays) of every key, the
    model and the replicate column; ``kw`` the source-level counts.
    """
    key_levels: dict[str, np.ndarray] = {}
    sizes: list[int] = []
    for i, c in enumerate((*keys, spec.comparison)):
        codes, key_levels[c] = _sorted_codes(levels[c], c)
        con.register(f"__mixrank_sv{i}", pa.table({"v": levels[c], "c": pa.array(codes)}))
        sizes.append(len(codes))
    sizes = sizes[:len(keys)]
    strides = [int(np.prod(sizes[i + 1:], dtype=object)) for i in range(len(keys))]
    space = int(np.prod(sizes, dtype=object))
    if space >= MAX_KEY_SPACE:
        return None
    cols = [*keys, spec.comparison]
    joins = " ".join(f"JOIN __mixrank_sv{i} AS l{i} ON b.{_qi(c)} = l{i}.v"
                     for i, c in enumerate(cols))
    kexpr = " + ".join(f"CAST(l{i}.c AS BIGINT) * {strides[i]}" for i in range(len(keys)))
    models = key_levels[spec.comparison]
    mcode = f"CAST(l{len(keys)}.c AS INTEGER) AS m"
    if replicate is None:      # one row per entry (or duplicates): no aggregation needed
        kdtype = np.uint32 if space < UINT32_KEY_SPACE else np.int64

        def dup(count: int, k: int, m: int) -> DataError:
            return _duplicates(count, k, m, spec, keys, strides, sizes, key_levels, models)

        cell_keys, columns = _rows(
            con, f"{base} SELECT {mcode}, {kexpr} AS k, b.{SCORE_COL} AS s FROM base AS b "
            f"{joins} WHERE NOT b.{MISSING_COL}", len(models), not kw["n_nonbinary"], kdtype, dup)
        return _table(keys, key_levels, cell_keys, strides, sizes, models, columns, kw)
    rep_sel = ""
    if replicate:
        r = len(cols)
        joins += f" JOIN __mixrank_lv{r} AS l{r} ON b.{_qi(replicate)} = l{r}.v"
        distinct = (f"bit_count(bit_or(CAST(1 AS UBIGINT) << l{r}.c))"
                    if len(levels[replicate]) <= MAX_BITS else f"count(DISTINCT l{r}.c)")
        rep_sel = f", CAST(count(*) - {distinct} AS INTEGER) AS rep"
    con.sql(f"CREATE OR REPLACE TEMP TABLE {_AGG} AS {base} SELECT {mcode}, "
            f"{kexpr} AS k, CAST(count(*) AS INTEGER) AS n, "
            f"sum(b.{SCORE_COL}) AS s{rep_sel} FROM base AS b {joins} "
            f"WHERE NOT b.{MISSING_COL} GROUP BY ALL")
    try:
        max_n = int(con.sql(f"SELECT max(n) FROM {_AGG}").fetchall()[0][0])
        _checks(con, spec, keys, replicate, max_n, strides, sizes, key_levels, models)
        cell_keys = con.sql(f"SELECT DISTINCT k FROM {_AGG} ORDER BY k").to_arrow_table() \
            .column(0).to_numpy()
        compact = max_n == 1 and not kw["n_nonbinary"]
        columns = _stream(con, len(models), cell_keys, compact, max_n > 1)
    finally:
        con.sql(f"DROP TABLE IF EXISTS {_AGG}")
    return _table(keys, key_levels, cell_keys, strides, sizes, models, columns, kw)


def _table(keys: tuple[str, ...], key_levels: dict[str, np.ndarray], cell_keys: np.ndarray,
           strides: list[int], sizes: list[int], models: np.ndarray, columns: ModelColumns,
           kw: dict[str, Any]) -> ColumnTable:
    cell_key_codes = {c: (cell_keys // strides[i]) % sizes[i] for i, c in enumerate(keys)}
    table_kw = {k: v for k, v in kw.items() if k != "replicate_repeats"}
    return ColumnTable(keys=keys, key_levels={c: key_levels[c] for c in keys},
                       cell_key_codes=cell_key_codes, models=models, columns=columns, **table_kw)
