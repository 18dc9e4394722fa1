"""Stage io: out-of-core and distributed aggregation of a source to (model, cell) cells.

Inputs: a source -- a pandas/polars/pyarrow table, a parquet file, a folder
or glob of parquet files, or a Dask DataFrame -- a formula and a backend.
Outputs: a :class:`~mixrank.frame.cells.CellTable` (one entry per (model,
cell) group: the number and the sum of its scores) and from it a
:class:`~mixrank.frame.Frame` built by
:func:`~mixrank.frame.cells.frame_from_cells`, identical to the frame
:func:`~mixrank.frame.build_frame` builds from the rows.

Backends:

* ``pandas``: read the rows into memory and call ``build_frame``.
* ``duckdb``: an embedded DuckDB connection scans the parquet files (or the
  in-memory table) out of core with three queries -- score checks and the
  distinct values of every key in one pass (``GROUPING SETS``), then a
  ``GROUP BY`` of integer key codes -- and returns only the aggregated table.
  Set ``memory_limit``, ``threads`` and ``temp_directory`` through
  ``options``; DuckDB spills to disk beyond the limit.
* ``dask``: the same two passes with dask.dataframe on any Dask cluster
  (a ``distributed.Client``, a ``LocalCluster`` or a scheduler address; by
  default dask's current scheduler).  The workers must be able to read the
  files.

Replicate values are checked for repeats without a per-replicate grouping:
with at most 64 distinct values, the sum of ``2**code`` over a group has
``n`` set bits exactly when its ``n`` codes are distinct (a carry drops a
bit, also modulo 2**64).  With more values an exact distinct count is used.

Contents: :data:`BACKENDS`, :class:`Source`, :func:`resolve_source`,
:func:`aggregate_cells`, :func:`load_frame`.
"""

from __future__ import annotations

import glob as _glob
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, require
from ..formula.spec import Spec
from ..frame import Frame, build_frame
from ..frame.build import _spec, resolve_keys
from ..frame.cells import CellTable, check_levels, frame_from_cells
from ..frame.source import to_pandas

__all__ = ["BACKENDS", "Source", "resolve_source", "aggregate_cells", "load_frame"]

BACKENDS = ("pandas", "duckdb", "dask")
PARQUET_SUFFIXES = (".parquet", ".pq")
_MAX_BITS = 64
_Y, _MISS = "__mixrank_y", "__mixrank_miss"


@dataclass(frozen=True)
class Source:
    """A resolved data source.

    Attributes
    ----------
    kind : {"table", "file", "parquet", "dask"}
        An in-memory table, a single non-parquet file (pandas backend only),
        parquet files, or a Dask DataFrame.
    obj : object
        The table or Dask DataFrame (None for files).
    files : tuple of str
        Parquet files, sorted.
    root : str or None
        The folder given, if any (hive-style ``key=value`` folders are read
        as columns).
    label : str
        Description for messages.
    hive : bool
        Some file lies in a ``key=value`` folder below ``root``.
    """

    kind: str
    obj: Any = None
    files: tuple[str, ...] = ()
    root: str | None = None
    label: str = "the data"
    hive: bool = False


def _is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def _is_dask(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr") and hasattr(obj, "npartitions")


def _parquet_files(folder: Path) -> list[str]:
    out = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).parts
        if p.is_file() and p.name.lower().endswith(PARQUET_SUFFIXES) and not any(
                part.startswith((".", "_")) for part in rel):
            out.append(str(p))
    return out


def resolve_source(source: Any) -> Source:
    """Classify ``source`` and list its parquet files.

    Parameters
    ----------
    source : DataFrame, polars/pyarrow table, Dask DataFrame, str or path
        A path may name a file, a folder (every ``*.parquet``/``*.pq`` file
        below it, hidden and ``_``-prefixed names skipped) or a glob pattern
        (``"runs/*.parquet"``, ``**`` recurses).

    Returns
    -------
    Source

    Raises
    ------
    DataError
        A path that does not exist, a folder without parquet files, a glob
        that matches no parquet file, or an unsupported object.
    """
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if _is_glob(text):
            matches = sorted(p for p in _glob.glob(text, recursive=True)
                             if os.path.isfile(p) and p.lower().endswith(PARQUET_SUFFIXES))
            if not matches:
                raise DataError(f"the glob pattern {text!r} matches no parquet file "
                                f"({', '.join(PARQUET_SUFFIXES)}); check the pattern and the folder")
            return Source("parquet", files=tuple(matches),
                          label=f"{len(matches)} parquet file(s) matching {text!r}")
        path = Path(text)
        if not path.exists():
            raise DataError(f"source {text!r} does not exist (no such file or folder); check the "
                            "path, or pass a DataFrame, a parquet file, a folder or a glob pattern")
        if path.is_dir():
            files = _parquet_files(path)
            if not files:
                raise DataError(f"folder {text!r} contains no parquet file "
                                f"({', '.join(PARQUET_SUFFIXES)}); point to the folder holding them, "
                                "or use a reader such as mixrank.read_lm_eval for log folders")
            hive = any("=" in part for f in files for part in Path(f).relative_to(path).parts[:-1])
            return Source("parquet", files=tuple(files), root=str(path), hive=hive,
                          label=f"{len(files)} parquet file(s) under {text!r}")
        if path.name.lower().endswith(PARQUET_SUFFIXES):
            return Source("parquet", files=(str(path),), label=f"parquet file {text!r}")
        return Source("file", files=(str(path),), label=f"file {text!r}")
    if _is_dask(source):
        return Source("dask", obj=source, label="the Dask DataFrame")
    if isinstance(source, pd.DataFrame) or type(source).__module__.split(".")[0] in ("polars",
                                                                                   "pyarrow"):
        return Source("table", obj=source, label="the data")
    raise DataError(f"source of type {type(source).__name__} is not supported; pass a pandas, "
                    "polars or Dask DataFrame, a pyarrow Table, a parquet file, a folder of "
                    "parquet files or a glob pattern")


# ------------------------------------------------------------------ pandas
def _pandas_table(src: Source) -> Any:
    if src.kind == "table":
        return src.obj
    if src.kind == "file":
        return src.files[0]
    if src.kind == "dask":
        return src.obj.compute()
    if len(src.files) == 1 and src.root is None:
        return src.files[0]
    pq = require("pyarrow.parquet", "scale", "reading a folder or glob of parquet files")
    try:
        if src.root is not None:
            return pq.read_table(src.root).to_pandas()
        return pq.read_table(list(src.files)).to_pandas()
    except (OSError, ValueError) as exc:
        raise DataError(f"could not read {src.label}: {exc}; check that the files are valid "
                        "parquet files with one schema") from exc


# ------------------------------------------------------------------ duckdb
def _qi(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def _ql(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _schema_error(exc: DataError, src: Source) -> DataError:
    return DataError(f"{exc} (source: {src.label})")


def _duckdb_error(duckdb: Any, exc: Exception, what: str) -> DataError:
    hint = ""
    if isinstance(exc, getattr(duckdb, "OutOfMemoryException", ())):
        hint = ("; raise backend_options['memory_limit'] or give DuckDB a temp_directory with "
                "free space to spill to")
    return DataError(f"DuckDB could not {what}: {exc}{hint}")


def _duckdb_cells(src: Source, spec: Spec, *, pair_by: Sequence[str] | None,
                  replicate: str | None, na: str, options: Mapping[str, Any]) -> CellTable:
    duckdb = require("duckdb", "scale", "backend='duckdb'")
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
            raise _schema_error(exc, src) from exc
        return _duckdb_aggregate(con, duckdb, rel, src, spec, keys, replicate, na)
    finally:
        con.close()
        if tmp is not None:
            tmp.cleanup()


def _stops_early(kw: dict[str, Any], na: str, n_kept: int) -> bool:
    """Whether frame_from_cells will raise on the source-level counts alone."""
    return bool(kw["n_rows"] == 0 or kw["n_nonnumeric"] or (kw["n_missing"] and na == "error")
                or kw["n_infinite"] or n_kept == 0 or kw["replicate_missing"])


def _empty(cols: Sequence[str], kw: dict[str, Any]) -> CellTable:
    """A table with no groups: frame_from_cells raises (or warns) from the counts alone."""
    return CellTable(columns={c: pd.Series([], dtype=object) for c in cols},
                     n=np.zeros(0, np.int64), sums=np.zeros(0), **kw)


def _duckdb_aggregate(con: Any, duckdb: Any, rel: str, src: Source, spec: Spec,
                      keys: tuple[str, ...], replicate: str | None, na: str) -> CellTable:
    pa = require("pyarrow", "scale", "backend='duckdb'")
    y = _qi(spec.response)
    cols = [*keys, spec.comparison] + ([replicate] if replicate else [])
    sel = ", ".join(_qi(c) for c in cols)
    num = f"TRY_CAST({y} AS DOUBLE)"
    base = (f"WITH base AS (SELECT {sel}, {num} AS {_Y}, "
            f"({y} IS NULL OR coalesce(isnan({num}), false)) AS {_MISS}, "
            f"({y} IS NOT NULL AND {num} IS NULL) AS __mixrank_bad FROM {rel})")
    kept = f"NOT {_MISS}"
    rep_null = f"count_if({kept} AND {_qi(replicate)} IS NULL)" if replicate else "0"
    grouping = ", ".join(f"GROUPING({_qi(c)}) AS __g{i}" for i, c in enumerate(cols))
    sets = ", ".join(f"({_qi(c)})" for c in cols) + ", ()"
    # pass 1: score checks (the empty grouping set) and the distinct values of every key
    q1 = (f"{base} SELECT {sel}, {grouping}, count(*) AS n_all, count_if({_MISS}) AS n_miss, "
          f"count_if(__mixrank_bad) AS n_bad, count_if({kept} AND isinf({_Y})) AS n_inf, "
          f"count_if({kept} AND {_Y} <> 0 AND {_Y} <> 1) AS n_nonbin, {rep_null} AS n_rep_null "
          f"FROM base GROUP BY GROUPING SETS ({sets})")
    try:
        t1 = con.sql(q1).to_arrow_table()
    except duckdb.Error as exc:
        raise _duckdb_error(duckdb, exc, f"scan {src.label}") from exc
    g = np.column_stack([t1.column(f"__g{i}").to_numpy() for i in range(len(cols))])
    n_kept = t1.column("n_all").to_numpy() - t1.column("n_miss").to_numpy()
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
    if _stops_early(kw, na, int(n_kept[row])):
        return _empty(cols[:len(keys) + 1], kw)
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
    # pass 2: GROUP BY the integer codes of (keys, model)
    joins = " ".join(f"JOIN __mixrank_lv{i} AS l{i} ON b.{_qi(c)} = l{i}.v"
                     for i, c in enumerate(cols))
    n_codes = len(keys) + 1
    code_sel = ", ".join(f"l{i}.c AS c{i}" for i in range(n_codes))
    rep_sel = ""
    if replicate:
        r = n_codes
        if len(levels[replicate]) <= _MAX_BITS:
            distinct = f"bit_count(bit_or(CAST(1 AS UBIGINT) << l{r}.c))"
        else:
            distinct = f"count(DISTINCT l{r}.c)"
        rep_sel = f", CAST(count(*) - {distinct} AS BIGINT) AS rep"
    q2 = (f"{base} SELECT {code_sel}, count(*) AS n, sum(b.{_Y}) AS s{rep_sel} FROM base AS b "
          f"{joins} WHERE NOT b.{_MISS} GROUP BY ALL")
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


# -------------------------------------------------------------------- dask
def _scores(part: pd.DataFrame, y: str) -> tuple[np.ndarray, np.ndarray]:
    """Scores as float and a mask of present-but-non-numeric values (one partition)."""
    s = part[y]
    if pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=np.float64, na_value=np.nan), np.zeros(len(s), bool)
    if not pd.api.types.is_numeric_dtype(s):
        num = pd.to_numeric(s, errors="coerce")
        bad = (num.isna() & s.notna()).to_numpy()
        return num.to_numpy(dtype=np.float64, na_value=np.nan), bad
    return s.to_numpy(dtype=np.float64, na_value=np.nan), np.zeros(len(s), bool)


def _part_checks(part: pd.DataFrame, y: str, replicate: str | None) -> pd.DataFrame:
    v, bad = _scores(part, y)
    miss = np.isnan(v) & ~bad
    kept = ~miss & ~bad
    ex = part[y].to_numpy()[bad][0] if bad.any() else None
    rep_null = int(part[replicate][kept].isna().sum()) if replicate else 0
    return pd.DataFrame({"n_all": [len(v)], "n_miss": [int(miss.sum())], "n_bad": [int(bad.sum())],
                         "n_inf": [int(np.isinf(v[kept]).sum())],
                         "n_nonbin": [int(((v[kept] != 0) & (v[kept] != 1)).sum())],
                         "n_rep_null": [rep_null], "example": pd.Series([ex], dtype=object)})


def _part_kept(part: pd.DataFrame, y: str, cols: list[str]) -> pd.DataFrame:
    v, _ = _scores(part, y)
    return part.loc[~np.isnan(v), cols]


def _part_codes(part: pd.DataFrame, y: str, cols: list[str], levels: dict[str, pd.Index],
                replicate: str | None, bits: bool) -> pd.DataFrame:
    v, _ = _scores(part, y)
    keep = ~np.isnan(v)
    out = {f"c{i}": levels[c].get_indexer(part[c][keep]).astype(np.int32)
           for i, c in enumerate(cols) if c != replicate}
    out[_Y] = v[keep]
    out["n"] = np.ones(int(keep.sum()), np.int64)
    if replicate:
        r = levels[replicate].get_indexer(part[replicate][keep])
        out["r"] = (np.uint64(1) << r.astype(np.uint64)) if bits else r.astype(np.int64)
    return pd.DataFrame(out)


def _connect(client: Any, options: Mapping[str, Any]) -> tuple[Any, bool]:
    """A distributed Client for ``client`` and whether this call owns (must close) it."""
    if client is None:
        return None, False
    distributed = require("distributed", "scale", "backend='dask' with a cluster")
    if isinstance(client, distributed.Client):
        return client, False
    address = getattr(client, "scheduler_address", client)
    if not isinstance(address, str):
        raise DataError(f"client={client!r} is not a distributed.Client, a cluster or a scheduler "
                        "address such as 'tcp://10.0.0.5:8786'")
    timeout = float(options.get("timeout", 10))
    try:
        return distributed.Client(address, timeout=timeout, set_as_default=False), True
    except (OSError, TimeoutError, ValueError) as exc:
        raise DataError(f"could not reach the Dask scheduler at {address!r} within {timeout:g} s "
                        f"({type(exc).__name__}: {exc}); check the address and that the scheduler "
                        "is running, or pass client=None to compute with dask's local "
                        "scheduler") from exc


def _wait_for_workers(cl: Any, timeout: float) -> None:
    try:
        cl.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise DataError(f"the Dask cluster at {cl.scheduler.address!r} has no worker after "
                        f"{timeout:g} s; start workers (dask worker <address>) or raise "
                        "backend_options['timeout']") from exc


def _dask_cells(src: Source, spec: Spec, *, pair_by: Sequence[str] | None,
                replicate: str | None, na: str, client: Any,
                options: Mapping[str, Any]) -> CellTable:
    dd = require("dask.dataframe", "scale", "backend='dask'")
    if src.kind == "dask":
        ddf = src.obj
    elif src.kind == "table":
        ddf = dd.from_pandas(to_pandas(src.obj), npartitions=int(options.get("npartitions", 2)),
                             sort=False)
    elif src.kind == "parquet":
        try:
            ddf = dd.read_parquet(src.root if src.root is not None else list(src.files))
        except (OSError, ValueError) as exc:
            raise DataError(f"could not read {src.label}: {exc}; check that the files are valid "
                            "parquet files with one schema") from exc
    else:
        raise DataError(f"backend='dask' reads parquet files, tables or Dask DataFrames, not "
                        f"{src.label}; use backend='pandas' for other file types")
    columns = [str(c) for c in ddf.columns]
    try:
        keys = resolve_keys(spec, columns, pair_by=pair_by, replicate=replicate, na=na)
    except DataError as exc:
        raise _schema_error(exc, src) from exc
    y = spec.response
    cols = [*keys, spec.comparison] + ([replicate] if replicate else [])
    cl, owned = _connect(client, options)
    try:
        if cl is not None:
            _wait_for_workers(cl, float(options.get("timeout", 10)))
        def compute(*objs: Any) -> list[Any]:
            try:
                if cl is not None:
                    return list(cl.compute(list(objs), sync=True))
                import dask

                return list(dask.compute(*objs))
            except (OSError, ValueError) as exc:
                raise DataError(f"the Dask computation over {src.label} failed: "
                                f"{type(exc).__name__}: {exc}; check that the workers can read "
                                "every file and that the files share one schema") from exc

        ddf = ddf[cols + [y]]
        meta_chk = _part_checks(ddf._meta, y, replicate)
        checks = ddf.map_partitions(_part_checks, y, replicate, meta=meta_chk)
        kept = ddf.map_partitions(_part_kept, y, cols, meta=ddf._meta[cols])
        uniq = [(kept[c].dropna() if c == replicate else kept[c]).unique(split_out=1) for c in cols]
        chk, *uniques = compute(checks, *uniq)
        ex = chk["example"].dropna()
        kw: dict[str, Any] = dict(
            n_rows=int(chk["n_all"].sum()), n_missing=int(chk["n_miss"].sum()),
            n_nonnumeric=int(chk["n_bad"].sum()), n_infinite=int(chk["n_inf"].sum()),
            n_nonbinary=int(chk["n_nonbin"].sum()), replicate_missing=int(chk["n_rep_null"].sum()),
            nonnumeric_example=ex.iloc[0] if len(ex) else None, source=src.label)
        if _stops_early(kw, na, kw["n_rows"] - kw["n_missing"]):
            return _empty(cols[:len(keys) + 1], kw)
        levels: dict[str, pd.Index] = {}
        for c, u in zip(cols, uniques):
            vals = np.asarray(u, dtype=object) if c == replicate else check_levels(c, u, src.label)
            levels[c] = pd.Index(vals, dtype=object)
        bits = replicate is not None and len(levels[replicate]) <= _MAX_BITS
        code_cols = [f"c{i}" for i, c in enumerate(cols) if c != replicate]
        meta = _part_codes(ddf._meta, y, cols, levels, replicate, bits)
        coded = ddf.map_partitions(_part_codes, y, cols, levels, replicate, bits, meta=meta)
        spec_agg = {_Y: "sum", "n": "sum"}
        if bits:
            spec_agg["r"] = "sum"
        split = {"split_out": options["split_out"]} if options.get("split_out") else {}
        agg = coded.groupby(code_cols, sort=False).agg(spec_agg, **split)
        objs = [agg]
        if replicate and not bits:
            per = coded.groupby(code_cols + ["r"], sort=False)["n"].sum(**split)
            objs.append(per[per > 1])
        res = compute(*objs)
        table = res[0].reset_index()
        reps = None
        if replicate:
            if bits:
                reps = table["n"].to_numpy() - np.bitwise_count(
                    table["r"].to_numpy(np.uint64)).astype(np.int64)
            else:
                rep_extra = (res[1] - 1).groupby(level=list(range(len(code_cols)))).sum()
                rep_extra = rep_extra.rename("extra").reset_index()
                merged = table[code_cols].merge(rep_extra, how="left", on=code_cols)
                reps = merged["extra"].fillna(0).to_numpy(np.int64)
        out = {c: pd.Series(pd.Categorical.from_codes(table[f"c{i}"].to_numpy(np.int32),
                                                      categories=levels[c]))
               for i, c in enumerate(cols) if c != replicate}
        return CellTable(columns=out, n=table["n"].to_numpy(np.int64),
                         sums=table[_Y].to_numpy(np.float64), replicate_repeats=reps, **kw)
    finally:
        if owned:
            cl.close()


# ------------------------------------------------------------------ public
def aggregate_cells(source: Any, formula: str | Spec, *, backend: str = "duckdb",
                    client: Any = None, pair_by: Sequence[str] | None = None,
                    replicate: str | None = None, na: str = "error",
                    options: Mapping[str, Any] | None = None) -> CellTable:
    """Aggregate a source to one entry per (model, cell) with ``backend``.

    Parameters
    ----------
    source : DataFrame, polars/pyarrow table, Dask DataFrame, str or path
        See :func:`resolve_source`.
    formula : str or Spec
    backend : {"duckdb", "dask"}
    client : distributed.Client, cluster or str, optional
        ``backend="dask"`` only: the cluster to compute on (a client, a
        cluster object or a scheduler address); default dask's current
        scheduler.
    pair_by, replicate, na
        As in :func:`~mixrank.frame.build_frame`.
    options : mapping, optional
        DuckDB: ``memory_limit`` (e.g. ``"1GB"``), ``threads``,
        ``temp_directory`` (spill folder; default a fresh temporary folder).
        Dask: ``timeout`` (seconds to reach a scheduler address, default 10),
        ``npartitions`` (for an in-memory table, default 2), ``split_out``
        (partitions of the aggregated table).

    Returns
    -------
    CellTable
        Groups ``columns`` (key and model values), ``n``, ``sums``,
        ``replicate_repeats`` and the source-level counts.

    Raises
    ------
    DataError
        Source that does not exist or cannot be read, a column of the
        formula missing from the schema (the message lists the schema), a
        key with missing values, a scheduler that cannot be reached or a
        cluster without workers (within ``timeout``).
    MissingDependencyError
        The ``scale`` extra is not installed.

    Notes
    -----
    Two passes over the source.  Pass 1 counts rows, missing, non-numeric,
    infinite and non-binary scores, and collects the distinct values of
    every key, the model and the replicate column among the kept rows.
    Pass 2 maps each key to its integer code and computes, per (cell,
    model), ``n = count(*)`` and ``sums = sum(score)``; with a replicate
    column of at most 64 distinct values also ``n - popcount(OR 2**code)``
    (repeated replicate values), otherwise ``n - count(DISTINCT code)``.
    Memory is bounded by the number of (model, cell) groups, not rows.
    Validated against :func:`~mixrank.frame.build_frame`
    (``tests/io/test_backends.py``).

    References
    ----------
    Raasveldt, M. & Muehleisen, H. (2019). DuckDB: an embeddable analytical
    database. SIGMOD '19.  Rocklin, M. (2015). Dask: parallel computation
    with blocked algorithms and task scheduling. SciPy 2015.

    Examples
    --------
    >>> import mixrank
    >>> from mixrank.io.backends import aggregate_cells
    >>> cells = aggregate_cells(mixrank.load_example(), "correct ~ model + (1|subject)")
    >>> cells.n_rows, len(cells), int(cells.n.max())
    (5760, 5760, 1)
    """
    spec = _spec(formula)
    opts = dict(options or {})
    src = source if isinstance(source, Source) else resolve_source(source)
    if backend == "duckdb":
        if client is not None:
            raise DataError("client= is only used by backend='dask'; remove it or pass "
                            "backend='dask'")
        return _duckdb_cells(src, spec, pair_by=pair_by, replicate=replicate, na=na, options=opts)
    if backend == "dask":
        return _dask_cells(src, spec, pair_by=pair_by, replicate=replicate, na=na, client=client,
                           options=opts)
    raise DataError(f"backend={backend!r} cannot aggregate out of core; expected 'duckdb' or "
                    "'dask' (backend='pandas' reads the rows: use load_frame)")


def load_frame(source: Any, formula: str | Spec, *, backend: str = "pandas", client: Any = None,
               pair_by: Sequence[str] | None = None, replicate: str | None = None,
               na: str = "error", options: Mapping[str, Any] | None = None) -> Frame:
    """Build the :class:`~mixrank.frame.Frame` of ``source`` with ``backend``.

    Parameters
    ----------
    source : DataFrame, polars/pyarrow table, Dask DataFrame, str or path
        A table, a file (any type for ``pandas``, parquet for the others), a
        folder or glob of parquet files, or a Dask DataFrame.
    formula : str or Spec
    backend : {"pandas", "duckdb", "dask"}
        ``pandas`` reads the rows into memory; ``duckdb`` and ``dask``
        aggregate to (model, cell) without holding the rows (see
        :func:`aggregate_cells`).
    client, options
        See :func:`aggregate_cells`.
    pair_by, replicate, na
        As in :func:`~mixrank.frame.build_frame`.

    Returns
    -------
    Frame
        The same frame for every backend (replicate means equal up to the
        order of floating-point summation).

    Raises
    ------
    DataError
        Everything :func:`~mixrank.frame.build_frame` and
        :func:`aggregate_cells` raise, an unknown backend, ``client`` with a
        backend other than ``dask``.

    Notes
    -----
    The fit needs only the cell scores ``sums / n`` per (model, cell), so
    ``duckdb`` and ``dask`` return :func:`aggregate_cells` and build the
    frame with :func:`~mixrank.frame.cells.frame_from_cells`.  Validated
    against ``backend="pandas"`` on ChemBench and simulated unbalanced data
    with replicates: contrasts, variance components and rank intervals agree
    within 1e-10 relative (``tests/io/test_backends.py``).

    Examples
    --------
    >>> import mixrank
    >>> from mixrank.io.backends import load_frame
    >>> fr = load_frame(mixrank.load_example(), "correct ~ model + (1|subject)",
    ...                 backend="duckdb")
    >>> fr.n_cells, fr.n_models
    (960, 6)
    """
    if backend not in BACKENDS:
        raise DataError(f"backend={backend!r}; expected one of {BACKENDS}")
    if backend == "pandas":
        if client is not None:
            raise DataError("client= is only used by backend='dask'; remove it or pass "
                            "backend='dask'")
        single = isinstance(source, (str, os.PathLike)) and not _is_glob(os.fspath(source)) \
            and not Path(source).is_dir()
        table = source if single else _pandas_table(resolve_source(source))
        return build_frame(table, formula, pair_by=None if pair_by is None else tuple(pair_by),
                           replicate=replicate, na=na)
    cells = aggregate_cells(source, formula, backend=backend, client=client, pair_by=pair_by,
                            replicate=replicate, na=na, options=options)
    keys = tuple(c for c in cells.columns if c != _spec(formula).comparison)
    return frame_from_cells(cells, formula, pair_by=keys, replicate=replicate, na=na)
