"""Stage frame: fast, canonical integer encoding of key columns.

Inputs: pandas Series.  Outputs: integer codes whose level order is the
sorted order of the observed values (so that the encoding does not depend on
row order or on whether a column is categorical).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import DataError

__all__ = ["encode_column", "combine_codes"]


def _kind(v: object) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    if isinstance(v, str):
        return "str"
    return type(v).__name__


def encode_column(s: pd.Series, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Encode a key column as int64 codes with sorted, observed levels.

    Returns
    -------
    codes : ndarray of int32, shape (n,)
    levels : ndarray of object, the level values in code order

    Raises
    ------
    DataError
        Missing values, or values of mixed types (e.g. numbers and text).
    """
    if isinstance(s.dtype, pd.CategoricalDtype):
        cat = s.array                          # the Categorical: its codes without a Series
        raw = np.asarray(cat.codes)
        if (raw < 0).any():
            row = int(np.flatnonzero(raw < 0)[0])
            raise DataError(f"column {name!r} has a missing value (first at row {row}); "
                            "fill or drop rows with missing keys before fitting")
        index = cat.categories
        used = np.bincount(raw, minlength=len(index)) > 0
        if used.all() and _increasing(index):     # the codes are the sorted order already
            return raw.astype(np.int32), np.asarray(index, dtype=object)
        cats = np.asarray(index, dtype=object)
        cats_used = cats[used]
        order = _sorted_order(cats_used, name)
        # old category index -> new sorted index
        remap = np.full(len(cats), -1, dtype=np.int32)
        remap[np.flatnonzero(used)[order]] = np.arange(len(order))
        return remap[raw], cats_used[order]
    if s.isna().any():
        row = int(np.flatnonzero(s.isna().to_numpy())[0])
        raise DataError(f"column {name!r} has a missing value (first at row {row}); "
                        "fill or drop rows with missing keys before fitting")
    if s.dtype == object:
        kinds = pd.Series(s.map(_kind)).unique()
        if len(kinds) > 1:
            examples = {k: s[s.map(_kind) == k].iloc[0] for k in kinds}
            raise DataError(
                f"column {name!r} mixes value types {sorted(kinds)} (e.g. "
                + ", ".join(f"{v!r}" for v in examples.values())
                + "); convert it to one type, e.g. data[" + repr(name) + "] = data["
                + repr(name) + "].astype(str)")
    codes, uniques = pd.factorize(s, sort=True)
    return codes.astype(np.int32), np.asarray(uniques, dtype=object)


def _increasing(index: pd.Index) -> bool:
    """Whether ``index`` is strictly increasing (False where its values do not compare)."""
    try:
        return bool(index.is_monotonic_increasing)
    except TypeError:
        return False


def _sorted_order(values: np.ndarray, name: str) -> np.ndarray:
    try:
        return np.argsort(values, kind="stable")
    except TypeError as exc:
        kinds = sorted({_kind(v) for v in values})
        raise DataError(f"column {name!r} mixes value types {kinds}; convert it to one type") from exc


def combine_codes(a: np.ndarray, na: int, b: np.ndarray, nb: int) -> tuple[np.ndarray, int, np.ndarray]:
    """Combine two code vectors into compact codes of their observed pairs.

    The combined level order is lexicographic in (a, b).  Returns the codes,
    the number of observed combinations and, for each combined level, its
    index into the flat ``a * nb + b`` space.
    """
    flat = a.astype(np.int64) * nb
    flat += b
    space = na * nb
    if space <= 50_000_000:
        present = np.zeros(space, dtype=bool)
        present[flat] = True
        idx = np.flatnonzero(present)
        dtype = np.int32 if len(idx) < 2**31 else np.int64
        lookup = np.full(space, -1, dtype=dtype)
        lookup[idx] = np.arange(len(idx), dtype=dtype)
        return lookup[flat], len(idx), idx
    idx, inv = np.unique(flat, return_inverse=True)
    return inv.astype(np.int64), len(idx), idx
