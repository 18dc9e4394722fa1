"""Stage io: the Dask backend, aggregating a source to (model, cell) cells on a cluster.

Inputs: a resolved :class:`~mixrank.io.sources.Source` (parquet files, a
table or a Dask DataFrame), a :class:`~mixrank.formula.Spec`, the pairing
options, a client (or None for dask's current scheduler) and the options
``timeout``, ``npartitions``, ``split_out``.
Outputs: a :class:`~mixrank.frame.cells.CellTable`.
Contents: :func:`dask_cells` and its per-partition steps (score checks,
kept rows, integer codes), the cluster connection and the replicate
repeat counts.  Called by :func:`mixrank.io.backends.aggregate_cells`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, require
from ..formula.spec import Spec
from ..frame.build import resolve_keys
from ..frame.cells import CellTable, check_levels
from ..frame.source import to_pandas
from .sources import MAX_BITS, SCORE_COL, Source, empty_cells, schema_error, stops_early

__all__ = ["dask_cells"]


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


def _first_infinite_file(src: Source, y: str) -> str | None:
    """``"<label>, first in file '<path>'"`` for the first parquet file holding an infinite
    score in ``y`` (docs/hardening.md §7); read on the error path only, one column a file."""
    for f in src.files:
        try:
            v = pd.to_numeric(pd.read_parquet(f, columns=[y])[y], errors="coerce")
        except (OSError, ValueError, KeyError):
            return None
        if np.isinf(v.to_numpy(dtype=float, na_value=np.nan)).any():
            return f"{src.label}, first in file {str(f)!r}"
    return None


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
    out[SCORE_COL] = v[keep]
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


def _dask_frame(src: Source, options: Mapping[str, Any]) -> Any:
    """The Dask DataFrame of ``src`` (read lazily)."""
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
    return ddf


def _replicate_repeats(table: pd.DataFrame, per: Any, code_cols: list[str], bits: bool) -> np.ndarray:
    """Per group, the number of rows that repeat a replicate value (``n - distinct``)."""
    if bits:
        return table["n"].to_numpy() - np.bitwise_count(
            table["r"].to_numpy(np.uint64)).astype(np.int64)
    rep_extra = (per - 1).groupby(level=list(range(len(code_cols)))).sum()
    rep_extra = rep_extra.rename("extra").reset_index()
    merged = table[code_cols].merge(rep_extra, how="left", on=code_cols)
    return merged["extra"].fillna(0).to_numpy(np.int64)


def dask_cells(src: Source, spec: Spec, *, pair_by: Sequence[str] | None,
               replicate: str | None, na: str, client: Any,
               options: Mapping[str, Any]) -> CellTable:
    """Aggregate ``src`` to (model, cell) groups with dask (two passes; see aggregate_cells)."""
    ddf = _dask_frame(src, options)
    columns = [str(c) for c in ddf.columns]
    try:
        keys = resolve_keys(spec, columns, pair_by=pair_by, replicate=replicate, na=na)
    except DataError as exc:
        raise schema_error(exc, src) from exc
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
        if kw["n_infinite"] and src.kind == "parquet":
            kw["source"] = _first_infinite_file(src, y) or src.label
        if stops_early(kw, na, kw["n_rows"] - kw["n_missing"]):
            return empty_cells(cols[:len(keys) + 1], kw)
        levels: dict[str, pd.Index] = {}
        for c, u in zip(cols, uniques):
            vals = np.asarray(u, dtype=object) if c == replicate else check_levels(c, u, src.label)
            levels[c] = pd.Index(vals, dtype=object)
        bits = replicate is not None and len(levels[replicate]) <= MAX_BITS
        code_cols = [f"c{i}" for i, c in enumerate(cols) if c != replicate]
        meta = _part_codes(ddf._meta, y, cols, levels, replicate, bits)
        coded = ddf.map_partitions(_part_codes, y, cols, levels, replicate, bits, meta=meta)
        spec_agg = {SCORE_COL: "sum", "n": "sum"}
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
        reps = (_replicate_repeats(table, res[1] if len(res) > 1 else None, code_cols, bits)
                if replicate else None)
        out = {c: pd.Series(pd.Categorical.from_codes(table[f"c{i}"].to_numpy(np.int32),
                                                      categories=levels[c]))
               for i, c in enumerate(cols) if c != replicate}
        return CellTable(columns=out, n=table["n"].to_numpy(np.int64),
                         sums=table[SCORE_COL].to_numpy(np.float64), replicate_repeats=reps, **kw)
    finally:
        if owned:
            cl.close()
