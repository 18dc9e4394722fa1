"""Stage frame: what an input is, and coercing long input into a pandas DataFrame.

Inputs: a pandas DataFrame, a polars DataFrame, a pyarrow Table, a Dask
DataFrame, or a path: a ``.csv``/``.csv.gz``, ``.parquet`` or ``.jsonl``
file, a folder of such files, or a glob pattern.
Outputs: the input's kind (:func:`input_kind`), a file's type
(:func:`file_type`), a folder's long files (:func:`folder_files`) and the
rows as a pandas DataFrame (:func:`to_pandas`; the caller's object is never
modified).

This is the one input-kind detector: :mod:`mixrank.io.sources` (backends),
:mod:`mixrank.io.wide` and the command line ask it, so the suffix lists live
only in :data:`FILE_TYPES`.  Harness formats (lm-eval, Inspect, ...) are
recognised by the io readers' registry on top of it.  :data:`LONG_COLUMNS`
is the canonical long schema every reader targets (docs/hardening.md §5).
Contents: :data:`FILE_TYPES`, :data:`SUPPORTED_SUFFIXES`,
:data:`LONG_COLUMNS`, :func:`file_type`, :func:`input_kind`,
:func:`folder_files`, :func:`check_unique_columns`, :func:`to_pandas`.
"""

from __future__ import annotations

import glob as _glob
import io
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DataError, MissingDependencyError, require

__all__ = ["to_pandas", "row_origin", "PARTS_ATTR", "SUPPORTED_SUFFIXES", "FILE_TYPES", "LONG_COLUMNS", "file_type",
           "input_kind", "folder_files", "check_unique_columns", "read_csv"]

#: File type -> lower-case name suffixes.  The one list of long-file types.
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "csv": (".csv", ".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zip"),
    "parquet": (".parquet", ".pq", ".parq"),
    "jsonl": (".jsonl", ".jsonl.gz", ".ndjson"),
}
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(s for v in FILE_TYPES.values() for s in v)

#: The canonical long schema: one row per (model, subject, question, prompt,
#: sample) with the score ``correct`` last.  Readers return these columns in
#: this order (a reader without repeated generations may omit ``sample``;
#: extra columns come after).
LONG_COLUMNS: tuple[str, ...] = ("model", "subject", "question", "prompt", "sample", "correct")

_TABLE_MODULES = {"pandas": "pandas", "polars": "polars", "pyarrow": "arrow"}


def file_type(path: str | os.PathLike) -> str | None:
    """``"csv"``, ``"parquet"`` or ``"jsonl"`` from the file name, or None."""
    name = os.fspath(path).lower()
    for kind, suffixes in FILE_TYPES.items():
        if name.endswith(suffixes):
            return kind
    return None


def input_kind(source: Any) -> str:
    """What ``source`` is: a table, a Dask DataFrame, a file type, a folder or a glob.

    Returns
    -------
    str
        ``"pandas"``, ``"polars"``, ``"arrow"``, ``"dask"``, ``"csv"``,
        ``"parquet"``, ``"jsonl"`` (a file of that type), ``"folder"``,
        ``"glob"``, or ``"file"`` (a file of no known long type, e.g. a
        harness log, for a format reader to claim).

    Raises
    ------
    DataError
        A path that does not exist; an object of an unsupported type.
    """
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if any(ch in text for ch in "*?["):
            return "glob"
        path = Path(text)
        if not path.exists():
            raise DataError(f"input {text!r} does not exist (no such file or folder); check the "
                            "path")
        if path.is_dir():
            return "folder"
        return file_type(path) or "file"
    top = type(source).__module__.split(".")[0]
    if top in ("dask", "dask_expr") and hasattr(source, "npartitions"):
        return "dask"
    if isinstance(source, pd.DataFrame):
        return "pandas"
    if top in _TABLE_MODULES:
        return _TABLE_MODULES[top]
    raise DataError(
        f"data of type {type(source).__name__} is not supported; pass a pandas, polars or Dask "
        "DataFrame, a pyarrow Table, or a path to a .csv, .csv.gz, .parquet or .jsonl file (or "
        "a folder of them)")


def _visible(paths: Iterable[Path], root: Path) -> list[Path]:
    return [p for p in paths if p.is_file() and not any(
        part.startswith((".", "_")) for part in p.relative_to(root).parts)]


def folder_files(folder: str | os.PathLike, kind: str | None = None) -> tuple[str, list[str]]:
    """The long files below ``folder`` (recursive; hidden and ``_`` names skipped).

    Parameters
    ----------
    kind : {"csv", "parquet", "jsonl"}, optional
        Only files of this type; default: the one type present.

    Returns
    -------
    (kind, files)
        The file type and the sorted file paths.

    Raises
    ------
    DataError
        No long file in the folder, or several types without ``kind``.
    """
    root = Path(folder)
    found: dict[str, list[str]] = {}
    for p in _visible(sorted(root.rglob("*")), root):
        t = file_type(p)
        if t is not None and (kind is None or t == kind):
            found.setdefault(t, []).append(str(p))
    if not found:
        want = ", ".join(FILE_TYPES.get(kind, SUPPORTED_SUFFIXES)) if kind else \
            ", ".join(SUPPORTED_SUFFIXES)
        raise DataError(f"folder {os.fspath(folder)!r} contains no long-format file ({want}); "
                        "point to the folder holding them, or read harness logs with their "
                        "reader (mixrank.read(path, format='lm_eval'), or --input-format lm_eval on the command "
                        "line)")
    if len(found) > 1:
        raise DataError(f"folder {os.fspath(folder)!r} mixes file types "
                        f"{sorted(found)}; keep one type per folder or pass one file")
    (t, files), = found.items()
    return t, files


def check_unique_columns(columns: Iterable[Any], where: str = "the data") -> None:
    """A :class:`DataError` naming any column name that occurs twice (compared as text)."""
    if isinstance(columns, pd.Index) and isinstance(columns.dtype, pd.StringDtype) \
            and columns.is_unique:
        return                  # text names, unique: the Index knows (and keeps) the answer
    # an Index's own list: iterating a text Index value by value is slow
    cols = [str(c) for c in (columns.tolist() if hasattr(columns, "tolist") else columns)]
    dup = sorted(c for c, k in Counter(cols).items() if k > 1) if len(set(cols)) < len(cols) \
        else []
    if dup:
        raise DataError(f"{where} has several columns named {dup}; every column name must be "
                        "unique: rename or drop the duplicates")


def read_csv(source: str | os.PathLike | io.StringIO, where: str, **kw: Any) -> pd.DataFrame:
    """``pandas.read_csv`` that refuses a header naming a column twice.

    pandas would rename the second ``correct`` to ``correct.1`` and the
    first would silently be used; this raises a :class:`DataError` naming
    the column instead.
    """
    head = pd.read_csv(source, header=None, nrows=1, dtype=str, keep_default_na=False)
    check_unique_columns(head.iloc[0] if len(head) else [], where)
    if isinstance(source, io.StringIO):
        source.seek(0)
    return pd.read_csv(source, **kw)


def _read_file(path: Path, kind: str) -> pd.DataFrame:
    if path.stat().st_size == 0:
        raise DataError(f"input file {str(path)!r} is empty (0 bytes); expected a long-format table")
    try:
        if kind == "csv":
            return read_csv(path, f"file {str(path)!r}")
        if kind == "parquet":
            pq = require("pyarrow.parquet", "scale", "reading parquet files")
            check_unique_columns(pq.read_schema(path).names, f"file {str(path)!r}")
            return pd.read_parquet(path)
        return pd.read_json(path, lines=True)
    except pd.errors.EmptyDataError as exc:
        raise DataError(f"input file {str(path)!r} has no columns or rows; expected a long-format table") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"could not read {str(path)!r}: invalid UTF-8 at byte {exc.start}; "
                        "re-save the file as UTF-8") from exc
    except MissingDependencyError:
        raise
    except (ValueError, OSError, EOFError, ImportError) as exc:
        raise DataError(f"could not read {str(path)!r}: {exc}. Check that the file is a valid "
                        f"{kind} file") from exc


def _read_path(path: Path) -> pd.DataFrame:
    kind = input_kind(path)
    if kind == "folder":
        kind, files = folder_files(path)
        parts = [_read_file(Path(f), kind) for f in files]
        for f, part in zip(files, parts):
            check_unique_columns(part.columns, f"file {f!r}")
        return _concat(files, parts)
    if kind == "glob":
        matches = sorted(p for p in _glob.glob(os.fspath(path), recursive=True)
                         if os.path.isfile(p) and file_type(p) is not None)
        types = sorted({str(file_type(p)) for p in matches})
        if len(types) != 1:
            what = "no long-format file" if not types else f"several file types {types}"
            raise DataError(f"the glob pattern {str(path)!r} matches {what} "
                            f"({', '.join(SUPPORTED_SUFFIXES)}); check the pattern")
        return _concat(matches, [_read_file(Path(p), types[0]) for p in matches])
    if kind == "file":
        raise DataError(
            f"unsupported file type {path.name!r}; expected one of {', '.join(SUPPORTED_SUFFIXES)} "
            "(harness logs: pass --input-format / use the harness reader)")
    return _read_file(path, kind)


#: ``df.attrs`` key of a table read from several files: ``[(file, n_rows), ...]`` in row order.
PARTS_ATTR = "mixrank_files"


def _concat(files: list[str], parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The files' tables one after the other, remembering which rows came from which file."""
    out = pd.concat(parts, ignore_index=True)
    out.attrs[PARTS_ATTR] = [(str(f), len(p)) for f, p in zip(files, parts)]
    return out


def row_origin(df: pd.DataFrame, row: int) -> str:
    """``"row N"`` of ``df``, or ``"row N of file F"`` when ``df`` was read from a folder or
    glob of files (docs/hardening.md §5), so an error points into the file to fix."""
    parts = df.attrs.get(PARTS_ATTR, ())
    if parts and pd.api.types.is_integer_dtype(df.index):
        row = int(df.index[row])   # the concatenated files' row number (kept if reordered)
    start = 0
    for f, n in parts:
        if row < start + n:
            return f"row {row - start} of file {f!r}"
        start += n
    return f"row {row}"


def to_pandas(data: Any) -> pd.DataFrame:
    """Return ``data`` as a pandas DataFrame without modifying it.

    Raises
    ------
    DataError
        Unsupported type, missing or empty file, unreadable content
        (including invalid UTF-8), a folder or glob without long files, two
        columns with the same name, or a table with no rows.
    """
    kind = input_kind(data)
    if isinstance(data, (str, os.PathLike)):
        df = _read_path(Path(data))
    elif kind == "pandas":
        df = data
    elif kind == "polars":
        try:
            df = data.to_pandas()
        except Exception as exc:  # pragma: no cover - depends on polars/pyarrow install
            raise DataError(f"could not convert the polars DataFrame: {exc}; install pyarrow") from exc
    elif kind == "arrow":
        check_unique_columns(data.column_names)
        df = data.to_pandas()
    else:  # dask
        check_unique_columns(data.columns)
        df = data.compute()
    check_unique_columns(df.columns)
    if len(df) == 0:
        raise DataError("the data have no rows; expected one row per (model, cell) observation")
    return df
