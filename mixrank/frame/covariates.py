"""Stage frame: cell-level covariates of a model x covariate formula.

Inputs: a :class:`~mixrank.frame.Frame` built from ``data`` and the
:class:`~mixrank.formula.InteractionSpec` it was built for.  Outputs: the same
frame with one column per covariate added to ``frame.cells`` (categorical
covariates as pandas Categoricals with sorted levels, numeric ones as float).

A covariate describes a cell (e.g. the difficulty of a question, the topic of
a subject, the attack method of a prompt), so it must take one value per
cell, the same for every model and replicate: a value varying within a cell,
a missing value or a covariate without any value is a :class:`DataError`.
Numeric columns (not bool) are numeric covariates (a slope); every other
column is categorical, as in R's model formulas.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError
from ..formula.fixed import InteractionSpec
from .build import encode_keys
from .encode import encode_column
from .frame import Frame
from .source import to_pandas

__all__ = ["attach_covariates"]


def _describe_cell(frame: Frame, cell: int) -> dict:
    return {k: frame.cells[k].iloc[cell] for k in frame.pair_by}


def _per_cell(frame: Frame, name: str, values: np.ndarray, raw: pd.Series,
              cell: np.ndarray) -> np.ndarray:
    """The value of each cell; DataError when a cell holds two values."""
    first = np.full(frame.n_cells, -1, dtype=np.int64)
    first[cell[::-1]] = np.arange(len(cell))[::-1]
    per_cell = values[first]
    bad = np.flatnonzero(values != per_cell[cell])
    if len(bad):
        row = int(bad[0])
        c = int(cell[row])
        raise DataError(
            f"covariate {name!r} varies within a cell: at {_describe_cell(frame, c)} it is "
            f"{raw.iloc[int(first[c])]!r} in one row and {raw.iloc[row]!r} in another. Expected "
            f"one value per cell (cells keyed by {list(frame.pair_by)}), the same for every "
            "model; a covariate must describe the cell (item, subject, prompt), not the "
            "response. Fix the data, or add the column that distinguishes those rows to pair_by")
    return per_cell


def attach_covariates(frame: Frame, data: Any, spec: InteractionSpec, *,
                      na: str = "error") -> Frame:
    """Add the covariates of ``spec`` to ``frame.cells`` (one value per cell).

    Parameters
    ----------
    frame : Frame
        Built by :func:`mixrank.frame.build_frame` from ``data`` with the same
        ``na`` (so that rows map to the same cells).
    data : DataFrame, polars/pyarrow table or path
    spec : InteractionSpec
    na : {"error", "drop"}
        As given to ``build_frame``: rows with a missing score were dropped.

    Returns
    -------
    Frame
        ``frame`` with ``cells[c]`` for every covariate ``c``.

    Raises
    ------
    DataError
        A covariate column missing from the data; a covariate with no values
        (all missing) or with some missing values; a covariate that varies
        within a cell; a covariate with a single value over all cells.
    """
    df = to_pandas(data)
    columns = [str(c) for c in df.columns.tolist()]
    for c in spec.covariates:
        if c not in columns:
            raise DataError(f"column {c!r} (a covariate of the fixed part) is not in the data. "
                            f"Available columns: {columns}")
    keep = None
    if na == "drop":
        keep = pd.to_numeric(df[spec.response], errors="coerce").notna().to_numpy()

    def col(name: str) -> pd.Series:
        s = df[name]
        return s[keep] if keep is not None else s

    cell = encode_keys(spec, frame.pair_by, col)[4]
    cells = frame.cells.copy()
    for c in spec.covariates:
        raw = col(c).reset_index(drop=True)
        miss = raw.isna().to_numpy()
        if miss.all():
            raise DataError(f"covariate {c!r} has no values (every row is missing); a covariate "
                            "needs one value per cell. Fill the column or remove it from the "
                            "formula")
        if miss.any():
            row = int(np.flatnonzero(miss)[0])
            raise DataError(f"covariate {c!r} is missing in {int(miss.sum())} row(s) (first at "
                            f"row {row}); expected one value per cell. Fill those values, or "
                            "drop those rows before fitting")
        numeric = pd.api.types.is_numeric_dtype(raw) and not pd.api.types.is_bool_dtype(raw)
        if numeric:
            vals = raw.to_numpy(dtype=np.float64)
            if not np.isfinite(vals).all():
                raise DataError(f"covariate {c!r} has an infinite value; expected finite numbers")
            per_cell: Any = _per_cell(frame, c, vals, raw, cell)
        else:
            codes, levels = encode_column(raw, c)
            pc = _per_cell(frame, c, codes, raw, cell)
            per_cell = pd.Categorical.from_codes(pc, categories=pd.Index(levels).astype(str))
        if pd.Series(per_cell).nunique() < 2:
            raise DataError(f"covariate {c!r} takes a single value over all cells; the gap "
                            "cannot depend on it. Remove it from the formula")
        cells[c] = per_cell
    return dataclasses.replace(frame, cells=cells)
