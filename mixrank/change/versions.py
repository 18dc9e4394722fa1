"""Stage change: reading the two versions of a reliable-change analysis (docs/methods.md §8).

Inputs: a long DataFrame, a version selector (a model name or a mapping
column -> value(s)), the item/sample/score column names.
Outputs: boolean row masks with a printable label, checked 0/1 or bounded
scores, and the items x K score matrix of one version (items sorted, samples
in sample-id order).  Every malformed input raises a :class:`DataError` that
names the column, value or selector and the fix.
Contents: :func:`select_version`, :func:`check_columns`, :func:`check_scores`,
:func:`version_matrix`; used by :mod:`mixrank.change.rci`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from mixrank.errors import DataError

__all__ = ["select_version", "check_columns", "check_scores", "version_matrix"]


def _as_list(v: Any) -> list:
    if isinstance(v, (list, tuple, set, frozenset, np.ndarray, pd.Index, pd.Series)):
        return list(v)
    return [v]


def select_version(sel: Any, data: pd.DataFrame, model: str, role: str) -> tuple[np.ndarray, str, dict]:
    """Rows of one version: a boolean mask, a label and the normalised selector.

    Parameters
    ----------
    sel : hashable or mapping
        A model name (rows with ``data[model] == sel``) or a mapping
        ``{column: value or list}``; every named column must take one of its
        values.
    data : pandas.DataFrame
        The long data.
    model : str
        Model column, used by a scalar selector.
    role : str
        ``"before"``/``"after"`` (or a greedy role), used in messages.

    Returns
    -------
    tuple
        ``(mask, label, spec)``: boolean row mask, printable label and the
        selector as ``{column: [values]}``.

    Raises
    ------
    DataError
        An empty mapping, a missing column, values that do not occur, or
        conditions that exclude each other.

    Examples
    --------
    >>> import pandas as pd
    >>> d = pd.DataFrame({"model": ["a", "a", "b"], "sample": [0, 1, 0]})
    >>> mask, label, spec = select_version({"model": "a", "sample": [1]}, d, "model", "before")
    >>> mask.tolist(), label
    ([False, True, False], "model == 'a', sample == 1")
    """
    if isinstance(sel, Mapping):
        if not sel:
            raise DataError(f"{role}={{}} selects nothing; expected a model name or a mapping "
                            "column -> value(s), e.g. {'sample': [0, 1]}.")
        spec = {str(c): _as_list(v) for c, v in sel.items()}
    else:
        if model not in data.columns:
            raise DataError(
                f"{role}={sel!r} is a model name, but the model column {model!r} is not in the data "
                f"(columns: {list(data.columns)}). Pass model=<column> or select the rows with a "
                f"mapping, e.g. {role}={{'sample': [0, 1]}}."
            )
        spec = {model: [sel]}
    mask = np.ones(len(data), dtype=bool)
    for col, values in spec.items():
        if col not in data.columns:
            raise DataError(f"{role} selects on column {col!r}, which is not in the data "
                            f"(columns: {list(data.columns)}).")
        present = pd.unique(data[col])
        missing = [v for v in values if not np.any(present == v)]
        if missing:
            shown = pd.Series(present[:10]).tolist()
            raise DataError(
                f"{role} asks for {col} in {missing!r}, which do not occur in the data; "
                f"values present include {shown!r}. Fix the selector."
            )
        mask &= data[col].isin(values).to_numpy()
    if isinstance(sel, Mapping):
        label = ", ".join(f"{c} in {v!r}" if len(v) > 1 else f"{c} == {v[0]!r}" for c, v in spec.items())
    else:
        label = str(sel)
    if not mask.any():
        raise DataError(f"{role} ({label}) selects no rows: the conditions exclude each other. "
                        "Fix the selector.")
    return mask, label, spec


def check_columns(data: pd.DataFrame, cols: Sequence[str], what: str) -> None:
    """Raise a :class:`DataError` naming the columns of ``cols`` missing from ``data``."""
    missing = [c for c in cols if c not in data.columns]
    if missing:
        raise DataError(f"{what} column(s) {missing!r} not in the data (columns: {list(data.columns)}). "
                        "Rename the columns or pass the right names.")


def check_scores(values: pd.Series, score: str) -> np.ndarray:
    """Scores as floats, after checking they are numeric, complete and in [0, 1]."""
    if not pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        raise DataError(f"score column {score!r} has dtype {values.dtype}; expected numbers in [0, 1] "
                        "(0/1 correctness or a bounded score). Convert it first.")
    y = values.to_numpy(dtype=float)
    if np.isnan(y).any():
        raise DataError(f"score column {score!r} has {int(np.isnan(y).sum())} missing value(s); expected "
                        "complete scores. Drop or impute those rows first (e.g. data.dropna(subset=[score])).")
    if (y < 0).any() or (y > 1).any():
        raise DataError(f"score column {score!r} ranges over [{y.min()}, {y.max()}]; expected values in "
                        "[0, 1] (floor and ceiling are 0 and 1). Rescale the score to [0, 1].")
    return y


def version_matrix(rows: pd.DataFrame, item: list[str], sample: str | None, score: str,
                    label: str, role: str) -> tuple[pd.MultiIndex, np.ndarray]:
    """Items x K matrix of one version, items sorted, samples ordered by sample id.

    Raises a :class:`DataError` for missing item keys, repeated (item,
    sample) rows (suggesting ``prompt`` in the item key when prompts
    differ), unequal K across items, or K < 2.
    """
    if rows[item].isna().any().any():
        raise DataError(f"{role} ({label}): the item columns {item!r} contain missing values; "
                        "every row needs a complete item key.")
    keys = item if sample is None else item + [sample]
    dup = rows.duplicated(keys, keep=False)
    if dup.any():
        first = rows.loc[dup, keys].iloc[0].to_dict()
        varying = [c for c in rows.columns if c not in keys + [score]
                   and rows.loc[dup].groupby(keys, sort=False)[c].nunique(dropna=False).gt(1).any()]
        hint = (f" They differ in 'prompt': the item has several prompts, so add it to the item key, "
                f"e.g. item={tuple(item) + ('prompt',)!r}." if "prompt" in varying else
                f" They differ in {varying!r}: add the right column(s) to item=... or filter the rows."
                if varying else " Remove the duplicated rows.")
        raise DataError(
            f"{role} ({label}) has {int(dup.sum())} rows that repeat an (item, sample) key, first "
            f"{first!r}; expected one row per item{' and sample' if sample else ''}.{hint}"
        )
    ordered = rows.sort_values(keys, kind="mergesort")
    counts = ordered.groupby(item, sort=False, dropna=False).size()
    k_values = np.unique(counts.to_numpy())
    if k_values.size > 1:
        bad = counts[counts != counts.max()]
        raise DataError(
            f"{role} ({label}) has unequal sample counts per item (K ranges over {k_values.tolist()}; "
            f"first item with {int(bad.iloc[0])} of {int(counts.max())}: {bad.index[0]!r}); expected the "
            "same K for every item of a version, since the split-half reliability pairs samples by "
            "position. Keep a common set of samples (e.g. filter sample < K_min) or drop those items."
        )
    k = int(k_values[0])
    if k < 2:
        raise DataError(
            f"{role} ({label}) has K = {k} sample per item; the reliable change index needs K >= 2 "
            f"repeated samples per item and version{'' if sample else ' (no sample column given)'}. "
            "Select more samples for each version."
        )
    idx = pd.MultiIndex.from_frame(counts.index.to_frame(index=False))
    y = ordered[score].to_numpy(dtype=float).reshape(len(counts), k)
    return idx, y
