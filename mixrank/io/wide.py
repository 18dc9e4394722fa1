"""Stage io: reader for wide items x models score matrices.

Inputs: a CSV (``.csv``, ``.csv.gz``) or parquet file, or a pandas DataFrame,
with one row per item (key columns such as ``subject, question``) and one
score column per model.  Outputs: the canonical long DataFrame
``model, <item keys>, prompt, correct``.
Contents: :func:`read_wide`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._util import tidy
from ..errors import DataError, MissingDataWarning, require
from ..frame.source import LONG_COLUMNS, file_type

__all__ = ["read_wide"]

_TRUE = {"true", "t", "yes"}
_FALSE = {"false", "f", "no"}


def _load(source: Any) -> tuple[pd.DataFrame, str, str]:
    """Return (table, source label, row-location kind: 'line' | 'row' | 'index')."""
    if isinstance(source, pd.DataFrame):
        return source, "<DataFrame>", "index"
    if not isinstance(source, (str, Path)):
        raise DataError(
            f"read_wide: expected a path (.csv, .csv.gz, .parquet) or a pandas DataFrame, got "
            f"{type(source).__name__}; convert it with pandas first"
        )
    path = Path(source)
    if not path.exists():
        raise DataError(f"read_wide: file {str(path)!r} does not exist; check the path")
    if path.is_dir():
        raise DataError(
            f"read_wide: {str(path)!r} is a folder; expected one .csv, .csv.gz or .parquet file"
        )
    kind = file_type(path)
    if kind == "parquet":
        require("pyarrow", "scale", "Reading parquet files")
        try:
            df = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises many types for corrupt files
            raise DataError(
                f"read_wide: cannot read parquet file {str(path)!r}: {exc}; expected a valid "
                "parquet file (re-export it)"
            ) from exc
        return df, str(path), "row"
    if kind == "csv":
        try:
            # all columns as text: numbers are parsed below so bad cells can be located;
            # skip_blank_lines=False keeps row i on file line i + 2 (header = line 1)
            df = pd.read_csv(path, dtype=str, skip_blank_lines=False, encoding="utf-8-sig")
        except pd.errors.EmptyDataError as exc:
            raise DataError(
                f"read_wide: {str(path)!r} is empty; expected a header line with the item key "
                "and model columns followed by one line per item"
            ) from exc
        except (pd.errors.ParserError, UnicodeDecodeError, OSError, EOFError) as exc:
            raise DataError(
                f"read_wide: cannot parse CSV {str(path)!r}: {exc}; expected a comma-separated "
                "file with one header line"
            ) from exc
        return df, str(path), "line"
    raise DataError(
        f"read_wide: unsupported file type {path.name!r}; expected .csv, .csv.gz or .parquet "
        "(or pass a DataFrame)"
    )


def _where(df: pd.DataFrame, pos: int, kind: str) -> str:
    if kind == "row":
        return f"row {pos + 1}"
    label = df.index[pos]
    label = label.item() if isinstance(label, np.generic) else label
    return f"row {pos + 1} (index {label!r})"


def _numeric(col: pd.Series) -> tuple[np.ndarray, int | None]:
    """Convert a column to float; returns values and the position of the first bad cell."""
    if pd.api.types.is_bool_dtype(col.dtype):
        return col.astype("float64").to_numpy(), None
    if pd.api.types.is_numeric_dtype(col.dtype):
        values = col.astype("float64").to_numpy()
        bad = np.flatnonzero(np.isinf(values))
        return values, (int(bad[0]) if bad.size else None)
    out = np.full(len(col), np.nan)
    for i, v in enumerate(col.to_numpy(dtype=object)):
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            continue
        if isinstance(v, (bool, np.bool_)):
            out[i] = float(v)
            continue
        if isinstance(v, (int, float, np.integer, np.floating)):
            x = float(v)
        else:
            text = str(v).strip()
            low = text.lower()
            if low in _TRUE:
                out[i] = 1.0
                continue
            if low in _FALSE:
                out[i] = 0.0
                continue
            try:
                x = float(text)
            except ValueError:
                return out, i
        if not math.isfinite(x):
            return out, i
        out[i] = x
    return out, None


def read_wide(
    path: str | Path | pd.DataFrame,
    *,
    items: str | Sequence[str] = ("subject", "question"),
    models: Sequence[str] | None = None,
    prompt: str | None = None,
    score_name: str = LONG_COLUMNS[-1],
    na: Literal["error", "drop"] = "error",
) -> pd.DataFrame:
    """Read an items x models score matrix into the canonical long format.

    Parameters
    ----------
    path : str, Path or pandas.DataFrame
        A ``.csv`` / ``.csv.gz`` or ``.parquet`` file, or a DataFrame, with one
        row per item and one score column per model.
    items : str or sequence of str, default ("subject", "question")
        The item key columns; together they must be unique per row.  Include
        ``"prompt"`` here when the matrix has one row per (item, prompt).
    models : sequence of str, optional
        The model columns to read.  ``None`` takes every non-key column; with a
        list, other columns are ignored.
    prompt : str, optional
        A constant prompt label for every row.  ``None`` uses the ``prompt``
        key column when ``items`` includes it and ``"default"`` otherwise.
    score_name : str, default "correct"
        Name of the score column in the result.
    na : {"error", "drop"}, default "error"
        Empty cells (blank, ``NA``, ``NaN``): an error naming their count and
        the first one (as missing scores in long input, see
        :func:`mixrank.fit`), or, with ``"drop"``, "not scored": no row, a
        :class:`~mixrank.errors.MissingDataWarning` with the count.

    Returns
    -------
    pandas.DataFrame
        One row per (model, item) with a score: ``model`` (str), the item key
        columns (as strings), ``prompt`` (str) and ``score_name`` (float;
        booleans and ``true``/``false`` text as 1/0).  With ``na="drop"``
        empty cells give no row; their count is
        ``attrs["mixrank"]["n_missing"]``.  Rows are ordered by model column,
        then by input row.

    Raises
    ------
    DataError
        Missing file, unsupported file type or empty file; missing item or
        model columns; a missing item key or a duplicated item key (naming the
        line/row and the first occurrence); a non-numeric or infinite score
        cell (naming the column and line/row); an empty cell with
        ``na="error"``; no model columns; a ``prompt=`` label while ``items``
        already holds ``prompt``; an unknown ``na``.

    Notes
    -----
    Long format: ``long[model=m, keys=k] = wide[k, m]`` for every non-empty
    cell.  CSV locations are file lines (header = line 1; quoted fields with
    embedded newlines shift later lines); parquet and DataFrame locations are
    1-based data rows.

    Validated against hand-built matrices in ``tests/io/test_wide.py``
    (round trip with :meth:`pandas.DataFrame.pivot`).

    Examples
    --------
    >>> import pandas as pd
    >>> wide = pd.DataFrame({"subject": ["a", "a"], "question": [1, 2],
    ...                      "m1": [1, 0], "m2": [1, 1]})
    >>> read_wide(wide)[["model", "question", "correct"]].values.tolist()
    [['m1', '1', 1.0], ['m1', '2', 0.0], ['m2', '1', 1.0], ['m2', '2', 1.0]]
    """
    if na not in ("error", "drop"):
        raise DataError(f"read_wide: na={na!r} is not an option; expected 'error' or 'drop'")
    df, label, kind = _load(path)
    keys, columns = _key_columns(df, items, label)
    df = df.set_axis(columns, axis=1)
    if kind == "line":
        # blank lines were kept to preserve line numbers; drop them now
        df = df.loc[~df.isna().all(axis=1)]
        lines = df.index.to_numpy()  # original 0-based data-row numbers
    else:
        lines = np.arange(len(df))
    if len(df) == 0:
        raise DataError(
            f"read_wide: {label} has no data rows; expected one row per item below the header"
        )
    clash = [k for k in keys if k in {"model", score_name}]
    if clash:
        raise DataError(
            f"read_wide: item key columns {clash} clash with the output columns 'model' and "
            f"{score_name!r}; rename them or pass another score_name="
        )
    if prompt is not None:
        if not isinstance(prompt, str):
            raise DataError(f"read_wide: prompt= must be a string or None, got {prompt!r}")
        if "prompt" in keys:
            raise DataError(
                "read_wide: prompt= sets a constant prompt, but items= already includes the "
                "'prompt' column; drop one of them"
            )
    model_cols = _model_columns(models, columns, keys, label)

    def where(i: int) -> str:
        if kind == "line":
            return f"line {int(lines[i]) + 2}"
        return _where(df, i, kind)

    key_text = _item_keys(df, keys, label, where)
    parts, n_missing = _long_parts(df, model_cols, key_text, label, where, na, score_name)
    if n_missing:
        warnings.warn(f"read_wide: {label}: {n_missing} empty cell(s) read as 'not scored' "
                      "(na='drop')", MissingDataWarning, stacklevel=2)
    out = pd.concat(parts, ignore_index=True)
    if "prompt" not in keys:
        out.insert(len(keys) + 1, "prompt", prompt if prompt is not None else "default")
    out = out[["model", *keys, *(["prompt"] if "prompt" not in keys else []), score_name]]
    return tidy(
        out,
        reader="read_wide",
        source=label,
        items=keys,
        models=model_cols,
        n_missing=n_missing,
    )


def _key_columns(df: pd.DataFrame, items: str | Sequence[str], label: str
                 ) -> tuple[list[str], list[str]]:
    """The item key columns (checked) and the table's column names as strings."""
    keys = [items] if isinstance(items, str) else list(items)
    if not keys or not all(isinstance(k, str) for k in keys):
        raise DataError(f"read_wide: items= must name one or more key columns, got {items!r}")
    if len(set(keys)) != len(keys):
        raise DataError(f"read_wide: items= names a column twice: {keys}")
    columns = [str(c) for c in df.columns.tolist()]
    if len(set(columns)) != len(columns):
        dup = sorted({c for c in columns if columns.count(c) > 1})
        raise DataError(f"read_wide: {label}: duplicated column names {dup}; rename them")
    missing = [k for k in keys if k not in columns]
    if missing:
        raise DataError(
            f"read_wide: {label}: item key columns {missing} not found; columns present: "
            f"{columns}; pass items= naming the key columns"
        )
    return keys, columns


def _model_columns(models: str | Sequence[str] | None, columns: list[str], keys: list[str],
                   label: str) -> list[str]:
    """The model (score) columns: those named, else every column that is not an item key."""
    if models is None:
        model_cols = [c for c in columns if c not in keys]
    else:
        model_cols = [str(m) for m in ([models] if isinstance(models, str) else models)]
        absent = [m for m in model_cols if m not in columns]
        if absent:
            raise DataError(
                f"read_wide: {label}: model columns {absent} not found; columns present: {columns}"
            )
        overlap = [m for m in model_cols if m in keys]
        if overlap:
            raise DataError(f"read_wide: columns {overlap} are listed in both items= and models=")
    if not model_cols:
        raise DataError(
            f"read_wide: {label}: no model columns; expected one score column per model besides "
            f"the item keys {keys}"
        )
    return model_cols


def _item_keys(df: pd.DataFrame, keys: list[str], label: str,
               where: Callable[[int], str]) -> pd.DataFrame:
    """The item keys as text; every item complete and present once."""
    key_frame = df[keys]
    null_keys = key_frame.isna().to_numpy()
    if null_keys.any():
        i, j = np.argwhere(null_keys)[0]
        raise DataError(
            f"read_wide: {label}: {where(int(i))}: item key {keys[int(j)]!r} is missing; every "
            "item needs all its key values (fill it in or drop the row)"
        )
    key_text = key_frame.astype(str)
    dup = key_text.duplicated(keep="first").to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        row = tuple(key_text.iloc[i])
        first = int(np.flatnonzero((key_text == list(row)).all(axis=1).to_numpy())[0])
        shown = ", ".join(f"{k}={v!r}" for k, v in zip(keys, row, strict=True))
        raise DataError(
            f"read_wide: {label}: {where(i)}: duplicate item key ({shown}), first seen on "
            f"{where(first)}; each item must appear once (add the distinguishing column, e.g. "
            "'prompt', to items=, or remove the duplicate)"
        )
    return key_text


def _long_parts(df: pd.DataFrame, model_cols: list[str], key_text: pd.DataFrame, label: str,
                where: Callable[[int], str], na: str,
                score_name: str) -> tuple[list[pd.DataFrame], int]:
    """One long block per model column (scored cells only) and the count of empty cells."""
    parts = []
    n_missing = 0
    for m in model_cols:
        values, bad = _numeric(df[m])
        if bad is not None:
            cell = df[m].iloc[bad]
            cell = cell.item() if isinstance(cell, np.generic) else cell
            raise DataError(
                f"read_wide: {label}: {where(bad)}: column {m!r} holds {cell!r}; "
                "expected a finite number (or empty for 'not scored'); if this column is an item "
                "key, add it to items=, or list the model columns with models="
            )
        ok = ~np.isnan(values)
        if na == "error" and not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise DataError(
                f"read_wide: {label}: {where(i)}: column {m!r} is empty (not scored); missing "
                "scores are an error by default. Fill them in, or pass na='drop' (--na drop) to "
                "read empty cells as 'not scored' (the count is reported)")
        n_missing += int((~ok).sum())
        part = key_text.loc[ok].copy()
        part.insert(0, "model", m)
        part[score_name] = values[ok]
        parts.append(part)
    return parts, n_missing
