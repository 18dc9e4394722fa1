"""Stage frame: coercing any supported input into a pandas DataFrame.

Inputs: a pandas DataFrame, a polars DataFrame, a pyarrow Table, or a path to
``.csv``, ``.csv.gz``, ``.parquet`` or ``.jsonl`` (``.jsonl.gz``).
Outputs: a pandas DataFrame (the caller's object is never modified).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DataError

__all__ = ["to_pandas", "SUPPORTED_SUFFIXES"]

SUPPORTED_SUFFIXES = (".csv", ".csv.gz", ".parquet", ".pq", ".jsonl", ".jsonl.gz", ".ndjson")


def _read_path(path: Path) -> pd.DataFrame:
    name = path.name.lower()
    if not path.exists():
        raise DataError(f"input file {str(path)!r} does not exist; check the path")
    if path.is_dir():
        raise DataError(
            f"input {str(path)!r} is a folder; pass a file ({', '.join(SUPPORTED_SUFFIXES)}) "
            "or use a reader such as mixrank.read_lm_eval for log folders")
    if path.stat().st_size == 0:
        raise DataError(f"input file {str(path)!r} is empty (0 bytes); expected a long-format table")
    try:
        if name.endswith((".csv", ".csv.gz")):
            df = pd.read_csv(path)
        elif name.endswith((".parquet", ".pq")):
            df = pd.read_parquet(path)
        elif name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
            df = pd.read_json(path, lines=True)
        else:
            raise DataError(
                f"unsupported file type {path.name!r}; expected one of {', '.join(SUPPORTED_SUFFIXES)}")
    except DataError:
        raise
    except pd.errors.EmptyDataError as exc:
        raise DataError(f"input file {str(path)!r} has no columns or rows; expected a long-format table") from exc
    except (ValueError, OSError, EOFError) as exc:
        raise DataError(f"could not read {str(path)!r}: {exc}. Check that the file is a valid "
                        f"{path.suffix} file") from exc
    return df


def to_pandas(data: Any) -> pd.DataFrame:
    """Return ``data`` as a pandas DataFrame without modifying it.

    Raises
    ------
    DataError
        Unsupported type, missing or empty file, unreadable content, or a
        table with no rows.
    """
    if isinstance(data, (str, os.PathLike)):
        df = _read_path(Path(data))
    elif isinstance(data, pd.DataFrame):
        df = data
    elif type(data).__module__.startswith("polars"):
        try:
            df = data.to_pandas()
        except Exception as exc:  # pragma: no cover - depends on polars/pyarrow install
            raise DataError(f"could not convert the polars DataFrame: {exc}; install pyarrow") from exc
    elif type(data).__module__.startswith("pyarrow"):
        df = data.to_pandas()
    else:
        raise DataError(
            f"data of type {type(data).__name__} is not supported; pass a pandas or polars "
            "DataFrame, a pyarrow Table, or a path to a .csv, .csv.gz, .parquet or .jsonl file")
    if len(df) == 0:
        raise DataError("the data have no rows; expected one row per (model, cell) observation")
    return df
