"""Stage io: what a data source is (table, file, parquet files, Dask DataFrame).

Inputs: a pandas/polars/pyarrow table, a Dask DataFrame, or a path (a file,
a folder of parquet files, a glob pattern).
Outputs: a :class:`Source` (its kind and its sorted parquet files), the
rows in memory (:func:`read_into_memory`), and the helpers both
out-of-core backends share (:func:`stops_early`, :func:`empty_cells`,
:func:`schema_error`, the column names :data:`SCORE_COL` and
:data:`MISSING_COL`, :data:`MAX_BITS`).
Contents: :class:`Source`, :func:`resolve_source`, :func:`is_glob`,
:func:`read_into_memory` and the shared helpers above.  The backends are in
:mod:`mixrank.io.backend_duckdb` and :mod:`mixrank.io.backend_dask`; the
public entry points in :mod:`mixrank.io.backends`.
"""

from __future__ import annotations

import glob as _glob
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, require
from ..frame.cells import CellTable
from ..frame.source import FILE_TYPES, PARTS_ATTR, check_unique_columns, folder_files, input_kind

__all__ = ["Source", "resolve_source", "is_glob", "read_into_memory", "stops_early",
           "empty_cells", "schema_error", "PARQUET_SUFFIXES", "MAX_BITS", "SCORE_COL",
           "MISSING_COL", "quote_ident"]

PARQUET_SUFFIXES = FILE_TYPES["parquet"]
#: Replicate values up to this count are checked for repeats with a 64-bit mask.
MAX_BITS = 64
#: Names of the working columns (numeric score, missing flag) in backend queries.
SCORE_COL, MISSING_COL = "__mixrank_y", "__mixrank_miss"


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


def quote_ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (embedded double quotes doubled)."""
    return '"' + str(name).replace('"', '""') + '"'


def is_glob(text: str) -> bool:
    """Whether a path text is a glob pattern."""
    return any(ch in text for ch in "*?[")


def _parquet_columns(files: Sequence[str], label: str) -> None:
    """Refuse parquet files whose schema names a column twice (as every other path does), and
    files whose schemas differ: the error names the file and the column that differs."""
    pq = require("pyarrow.parquet", "scale", "reading parquet files")
    first = None
    for f in files:
        try:
            schema = pq.read_schema(f)
        except (OSError, ValueError) as exc:
            raise DataError(f"could not read {label}: {exc}; check that {f!r} is a valid "
                            "parquet file") from exc
        if first is None:
            first = schema
            check_unique_columns(schema.names, label)
            continue
        if schema.names == first.names and schema.types == first.types:
            continue
        a, b = dict(zip(first.names, first.types)), dict(zip(schema.names, schema.types))
        only_b = [c for c in b if c not in a]
        only_a = [c for c in a if c not in b]
        typed = [c for c in a if c in b and a[c] != b[c]]
        if not (only_a or only_b or typed):
            continue                      # same columns and types in another order: readable
        if only_b or only_a:
            what = (f"has column(s) {only_b} that {files[0]!r} lacks" if only_b
                    else f"lacks column(s) {only_a} of {files[0]!r}")
        else:
            c = typed[0]
            what = f"stores column {c!r} as {b[c]} where {files[0]!r} has {a[c]}"
        raise DataError(f"{label}: the files have different schemas: {f!r} {what}; every "
                        "parquet file of a folder or glob must have the same columns and "
                        "types (rewrite that file, or move it out of the folder)")


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
        A path that does not exist, a folder without long files (parquet,
        CSV or JSON lines, one type), a glob that matches no parquet file,
        an unsupported object, or a column name that occurs twice.
    """
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if is_glob(text):
            matches = sorted(p for p in _glob.glob(text, recursive=True)
                             if os.path.isfile(p) and p.lower().endswith(PARQUET_SUFFIXES))
            if not matches:
                raise DataError(f"the glob pattern {text!r} matches no parquet file "
                                f"({', '.join(PARQUET_SUFFIXES)}); check the pattern and the folder")
            _parquet_columns(matches, f"parquet files matching {text!r}")
            return Source("parquet", files=tuple(matches),
                          label=f"{len(matches)} parquet file(s) matching {text!r}")
        path = Path(text)
        if not path.exists():
            raise DataError(f"source {text!r} does not exist (no such file or folder); check the "
                            "path, or pass a DataFrame, a parquet file, a folder or a glob pattern")
        if path.is_dir():
            kind, files = folder_files(path)
            label = f"{len(files)} {kind} file(s) under {text!r}"
            if kind != "parquet":   # read into memory (pandas backend only)
                return Source("file", files=(str(path),), label=label)
            _parquet_columns(files, label)
            hive = any("=" in part for f in files for part in Path(f).relative_to(path).parts[:-1])
            return Source("parquet", files=tuple(files), root=str(path), hive=hive, label=label)
        if path.name.lower().endswith(PARQUET_SUFFIXES):
            _parquet_columns([str(path)], f"parquet file {text!r}")
            return Source("parquet", files=(str(path),), label=f"parquet file {text!r}")
        return Source("file", files=(str(path),), label=f"file {text!r}")
    kind = input_kind(source)
    if kind == "dask":
        check_unique_columns(source.columns, "the Dask DataFrame")
        return Source("dask", obj=source, label="the Dask DataFrame")
    check_unique_columns(source.column_names if kind == "arrow" else source.columns)
    return Source("table", obj=source, label="the data")


def read_into_memory(src: Source) -> Any:
    """The rows of ``src`` as something :func:`~mixrank.frame.build_frame` reads (a table or a path)."""
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
        table = pq.read_table(src.root if src.root is not None else list(src.files))
        counts = [(f, pq.read_metadata(f).num_rows) for f in src.files]
    except (OSError, ValueError) as exc:
        raise DataError(f"could not read {src.label}: {exc}; check that the files are valid "
                        "parquet files with one schema") from exc
    df = table.to_pandas()
    if sum(n for _, n in counts) == len(df):   # files read in the listed (sorted) order
        df.attrs[PARTS_ATTR] = counts          # errors then name the file of a bad row
    return df



def schema_error(exc: DataError, src: Source) -> DataError:
    """The schema error ``exc`` with the source named."""
    return DataError(f"{exc} (source: {src.label})")



def stops_early(kw: dict[str, Any], na: str, n_kept: int) -> bool:
    """Whether frame_from_cells will raise on the source-level counts alone."""
    return bool(kw["n_rows"] == 0 or kw["n_nonnumeric"] or (kw["n_missing"] and na == "error")
                or kw["n_infinite"] or n_kept == 0 or kw["replicate_missing"])


def empty_cells(cols: Sequence[str], kw: dict[str, Any]) -> CellTable:
    """A table with no groups: frame_from_cells raises (or warns) from the counts alone."""
    return CellTable(columns={c: pd.Series([], dtype=object) for c in cols},
                     n=np.zeros(0, np.int64), sums=np.zeros(0), **kw)
