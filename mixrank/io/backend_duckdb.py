"""Stage io: the DuckDB backend, aggregating a source to (model, cell) cells out of core.

Inputs: a resolved :class:`~mixrank.io.sources.Source` (parquet files or an
in-memory table), a :class:`~mixrank.formula.Spec`, the pairing options and
the DuckDB options (``memory_limit``, ``threads``, ``temp_directory``).
Outputs: a :class:`~mixrank.frame.cells.CellTable`.
Contents: :func:`duckdb_cells` (connection and schema) and its two passes
(score checks and distinct key values with ``GROUPING SETS``; a
``GROUP BY`` of integer key codes).  Called by
:func:`mixrank.io.backends.aggregate_cells`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, require
from ..formula.spec import Spec
from ..frame.build import resolve_keys
from ..frame.cells import CellTable, ColumnTable, check_levels
from ..frame.columns import DENSE_MAX_ENTRIES
from .backend_duckdb_columns import duckdb_columns
from .sources import (
    MAX_BITS,
    MISSING_COL,
    SCORE_COL,
    Source,
    empty_cells,
    schema_error,
    stops_early,
)
from .sources import quote_ident as _qi

__all__ = ["duckdb_cells", "LAYOUTS"]

#: ``options["layout"]``: "auto" (compressed above DENSE_MAX_ENTRIES kept rows), "dense",
#: "compressed" (docs/scale.md).
LAYOUTS = ("auto", "dense", "compressed")


def _ql(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"



def _duckdb_error(duckdb: Any, exc: Exception, what: str) -> DataError:
    hint = ""
    if isinstance(exc, getattr(duckdb, "OutOfMemoryException", ())):
        hint = ("; raise backend_options['memory_limit'] or give DuckDB a temp_directory with "
                "free space to spill to")
    return DataError(f"DuckDB could not {what}: {exc}{hint}")


def duckdb_cells(src: Source, spec: Spec, *, pair_by: Sequence[str] | None,
                 replicate: str | None, na: str,
                 options: Mapping[str, Any]) -> CellTable | ColumnTable:
    """Aggregate ``src`` to (model, cell) groups with DuckDB (two passes; see aggregate_cells)."""
    duckdb = require("duckdb", "scale", "backend='duckdb'")
    layout = options.get("layout", "auto")
    if layout not in LAYOUTS:
        raise DataError(f"backend_options['layout']={layout!r}; expected one of {LAYOUTS}")
    config: dict[str, Any] = {"preserve_insertion_order": False}
    for key in ("memory_limit", "threads"):
        if options.get(key) is not None:
            config[key] = options[key]
    tmp = None
    if options.get("temp_directory") is not None:
        config["temp_directory"] = str(options["temp_directory"])
    else:
        tmp = tempfile.TemporaryDirectory(prefix="mixrank-duckdb-")
        config["temp_directory"] = tmp.name
    try:
        con = duckdb.connect(":memory:", config=config)
    except duckdb.Error as exc:
        if tmp is not None:
            tmp.cleanup()
        raise DataError(f"could not start DuckDB with options {config}: {exc}") from exc
    try:
        if src.kind == "table":
            obj = src.obj
            if type(obj).__module__.split(".")[0] == "polars":
                obj = obj.to_arrow()
            con.register("__mixrank_src", obj)
            rel = "__mixrank_src"
        elif src.kind == "parquet":
            files = "[" + ", ".join(_ql(f) for f in src.files) + "]"
            rel = f"read_parquet({files}, hive_partitioning = {str(src.hive).lower()})"
        else:
            raise DataError(f"backend='duckdb' reads parquet files or in-memory tables, not "
                            f"{src.label}; use backend='dask' for a Dask DataFrame, or "
                            "backend='pandas' for other file types")
        try:
            columns = [str(r[0]) for r in con.sql(f"DESCRIBE SELECT * FROM {rel}").fetchall()]
        except duckdb.Error as exc:
            raise DataError(f"could not read {src.label}: {exc}; check that the files are valid "
                            "parquet files with one schema") from exc
        try:
            keys = resolve_keys(spec, columns, pair_by=pair_by, replicate=replicate, na=na)
        except DataError as exc:
            raise schema_error(exc, src) from exc
        return _duckdb_aggregate(con, duckdb, rel, src, spec, keys, replicate, na, layout)
    finally:
        con.close()
        if tmp is not None:
            tmp.cleanup()



def _compressed(con: Any, duckdb: Any, pa: Any, base: str, src: Source, spec: Spec,
                keys: tuple[str, ...], replicate: str | None, levels: dict[str, Any],
                kw: dict[str, Any]) -> ColumnTable | None:
    """Pass 2, compressed: scores model by model (docs/scale.md); None: use the dense pass."""
    try:
        return duckdb_columns(con, pa, base, spec, keys, replicate, levels, kw)
    except duckdb.Error as exc:
        raise _duckdb_error(duckdb, exc, f"aggregate {src.label}") from exc


def _duckdb_aggregate(con: Any, duckdb: Any, rel: str, src: Source, spec: Spec,
                      keys: tuple[str, ...], replicate: str | None, na: str,
                      layout: str = "dense") -> CellTable | ColumnTable:
    pa = require("pyarrow", "scale", "backend='duckdb'")
    y = _qi(spec.response)
    cols = [*keys, spec.comparison] + ([replicate] if replicate else [])
    sel = ", ".join(_qi(c) for c in cols)
    num = f"TRY_CAST({y} AS DOUBLE)"
    base = (f"WITH base AS (SELECT {sel}, {num} AS {SCORE_COL}, "
            f"({y} IS NULL OR coalesce(isnan({num}), false)) AS {MISSING_COL}, "
            f"({y} IS NOT NULL AND {num} IS NULL) AS __mixrank_bad FROM {rel})")
    kept = f"NOT {MISSING_COL}"
    rep_null = f"count_if({kept} AND {_qi(replicate)} IS NULL)" if replicate else "0"
    grouping = ", ".join(f"GROUPING({_qi(c)}) AS __g{i}" for i, c in enumerate(cols))
    sets = ", ".join(f"({_qi(c)})" for c in cols) + ", ()"
    # pass 1: score checks (the empty grouping set) and the distinct values of every key
    q1 = (f"{base} SELECT {sel}, {grouping}, count(*) AS n_all, count_if({MISSING_COL}) AS n_miss, "
          f"count_if(__mixrank_bad) AS n_bad, count_if({kept} AND isinf({SCORE_COL})) AS n_inf, "
          f"count_if({kept} AND {SCORE_COL} <> 0 AND {SCORE_COL} <> 1) AS n_nonbin, {rep_null} AS n_rep_null "
          f"FROM base GROUP BY GROUPING SETS ({sets})")
    try:
        t1 = con.sql(q1).to_arrow_table()
    except duckdb.Error as exc:
        raise _duckdb_error(duckdb, exc, f"scan {src.label}") from exc
    g = np.column_stack([t1.column(f"__g{i}").to_numpy() for i in range(len(cols))])
    # count_if over no rows is NULL in DuckDB (an empty input): read NULL counts as 0
    n_kept = (t1.column("n_all").fill_null(0).to_numpy()
              - t1.column("n_miss").fill_null(0).to_numpy())
    row = int(np.flatnonzero(g.all(axis=1))[0])

    def stat(name: str) -> int:
        return int(t1.column(name)[row].as_py() or 0)

    kw: dict[str, Any] = dict(n_rows=stat("n_all"), n_missing=stat("n_miss"),
                              n_nonnumeric=stat("n_bad"), n_infinite=stat("n_inf"),
                              n_nonbinary=stat("n_nonbin"), replicate_missing=stat("n_rep_null"),
                              source=src.label)
    if kw["n_nonnumeric"]:
        kw["nonnumeric_example"] = con.sql(
            f"SELECT CAST({y} AS VARCHAR) FROM {rel} WHERE {y} IS NOT NULL AND {num} IS NULL "
            "LIMIT 1").fetchall()[0][0]
    if kw["n_infinite"] and src.kind == "parquet" and rel.startswith("read_parquet("):
        # name the first file holding one (docs/hardening.md §7): the counts alone do not
        where = rel[:-1] + ", filename = true)"
        hit = con.sql(f"SELECT filename FROM {where} WHERE isinf({num}) LIMIT 1").fetchall()
        if hit:
            kw["source"] = f"{src.label}, first in file {str(hit[0][0])!r}"
    if stops_early(kw, na, int(n_kept[row])):
        return empty_cells(cols[:len(keys) + 1], kw)
    levels: dict[str, Any] = {}
    for i, c in enumerate(cols):
        mask = (g[:, i] == 0) & (n_kept > 0)
        arr = t1.column(i).filter(pa.array(mask))
        if c == replicate:
            arr = arr.drop_null()
        else:
            check_levels(c, arr.to_pandas(), src.label)
        levels[c] = arr
        con.register(f"__mixrank_lv{i}",
                     pa.table({"v": arr, "c": pa.array(np.arange(len(arr), dtype=np.int32))}))
    if layout == "compressed" or (layout == "auto" and int(n_kept[row]) > DENSE_MAX_ENTRIES):
        if (table := _compressed(con, duckdb, pa, base, src, spec, keys, replicate, levels,
                                 kw)) is not None:
            return table
    # pass 2: GROUP BY the integer codes of (keys, model)
    joins = " ".join(f"JOIN __mixrank_lv{i} AS l{i} ON b.{_qi(c)} = l{i}.v"
                     for i, c in enumerate(cols))
    n_codes = len(keys) + 1
    code_sel = ", ".join(f"l{i}.c AS c{i}" for i in range(n_codes))
    rep_sel = ""
    if replicate:
        r = n_codes
        if len(levels[replicate]) <= MAX_BITS:
            distinct = f"bit_count(bit_or(CAST(1 AS UBIGINT) << l{r}.c))"
        else:
            distinct = f"count(DISTINCT l{r}.c)"
        rep_sel = f", CAST(count(*) - {distinct} AS BIGINT) AS rep"
    q2 = (f"{base} SELECT {code_sel}, count(*) AS n, sum(b.{SCORE_COL}) AS s{rep_sel} FROM base AS b "
          f"{joins} WHERE NOT b.{MISSING_COL} GROUP BY ALL")
    try:
        t2 = con.sql(q2).to_arrow_table()
    except duckdb.Error as exc:
        raise _duckdb_error(duckdb, exc, f"aggregate {src.label}") from exc
    out = {c: pd.Series(pd.Categorical.from_codes(t2.column(f"c{i}").to_numpy(),
                                                  categories=levels[c].to_pandas()))
           for i, c in enumerate(cols[:n_codes])}
    reps = t2.column("rep").to_numpy() if replicate else None
    return CellTable(columns=out, n=t2.column("n").to_numpy(), sums=t2.column("s").to_numpy(),
                     replicate_repeats=reps, **kw)
