"""Stage judge: judge scores and reference labels aligned on the cells of one frame.

Inputs: long-format data whose formula response is the judge's score on
every row, the name of a column of reference labels (NaN where a cell is not
labelled), and the options of :func:`mixrank.frame.build_frame`.
Outputs: :class:`JudgeData` -- the judge's :class:`~mixrank.frame.Frame` and
a (cells x models) matrix of reference labels on the same cells
(:func:`judge_data`), after the checks of docs/judge.md §1.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..engine.estimability import levels_used
from ..errors import DataError, DesignError
from ..formula import Spec
from ..frame import Frame, build_frame
from ..frame.source import to_pandas

__all__ = ["JudgeData", "judge_data", "labelled_units"]


@dataclass(frozen=True, eq=False)
class JudgeData:
    """The judge's frame and the reference labels on its cells.

    Attributes
    ----------
    frame : Frame
        Built from the judge scores (the formula's response).
    gold : ndarray (n_cells, n_models)
        Reference label per cell and model (the mean over a cell's labelled
        replicates), NaN where the cell is not labelled or not scored.
    column : str
        Name of the reference-label column.
    binary : bool
        Every reference label is 0 or 1.
    """

    frame: Frame
    gold: np.ndarray
    column: str
    binary: bool

    @property
    def labelled(self) -> np.ndarray:
        """Boolean (n_cells, n_models): the cell is scored by the judge and labelled."""
        return self.frame.observed & np.isfinite(self.gold)


def _numeric_labels(s: pd.Series, name: str) -> np.ndarray:
    if pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=float)
    if pd.api.types.is_numeric_dtype(s):
        return s.to_numpy(dtype=float)
    conv = pd.to_numeric(s, errors="coerce")
    bad = conv.isna() & s.notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"reference-label column {name!r} is not numeric: row {i} holds "
                        f"{s.iloc[i]!r}; expected numbers (0/1 or a score on the judge's scale) "
                        "with NaN on unlabelled cells -- recode the labels as numbers")
    return conv.to_numpy(dtype=float)


def labelled_units(spec: Spec, frame: Frame, mask: np.ndarray) -> int:
    """Levels of the unit (the first random term; the cells without one) among ``mask``'s cells."""
    if spec.unit is None:
        return int(np.count_nonzero(mask))
    return levels_used(frame, spec.unit, mask)


def judge_data(data: Any, spec: Spec, gold: Any, *, pair_by: Sequence[str] | None = None,
               replicate: str | None = None, na: str = "error") -> JudgeData:
    """Validate the reference labels and align them with the judge's cells.

    Parameters
    ----------
    data : DataFrame, polars/pyarrow table or path
        Long format; the formula's response is the judge's score.
    spec : Spec
    gold : str
        Column of reference labels (NaN where not labelled).
    pair_by, replicate, na
        As :func:`mixrank.frame.build_frame` (for the judge's scores).

    Returns
    -------
    JudgeData

    Raises
    ------
    DataError
        ``gold`` missing (closest column named), equal to the response, not
        numeric, infinite, all missing, a label on a row without a judge
        score, labels covering fewer than 2 units of the formula's unit.
    DesignError
        ``gold`` is not a column name.
    """
    if not isinstance(gold, str):
        shown = repr(gold) if np.isscalar(gold) or gold is None else f"a {type(gold).__name__}"
        raise DesignError(f"gold={shown}; expected the name of the reference-label column, "
                          "e.g. gold='human' (put the labels in a column of the data)")
    if isinstance(data, Frame):
        raise DesignError("gold= needs the rows (a DataFrame or a file), not a prebuilt Frame: "
                          "a Frame holds the judge's cell scores only, not the labels")
    df = to_pandas(data)
    columns = [str(c) for c in df.columns.tolist()]
    if gold not in columns:
        close = difflib.get_close_matches(gold, columns, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise DataError(f"reference-label column gold={gold!r} is not in the data{hint}; "
                        f"columns: {columns}")
    if gold == spec.response:
        raise DataError(f"gold={gold!r} is the formula's response; the response must be the "
                        "judge's score and gold= a separate column of reference labels")
    labels = _numeric_labels(df[gold], gold)
    if np.isinf(labels).any():
        i = int(np.flatnonzero(np.isinf(labels))[0])
        raise DataError(f"reference-label column {gold!r} has an infinite value (row {i}); "
                        "labels must be finite numbers or NaN for unlabelled cells")
    has = np.isfinite(labels)
    if not has.any():
        raise DataError(f"reference-label column {gold!r} is empty (all {len(labels)} values "
                        "missing); label a random subset of cells with the reference")
    if spec.response in columns:
        judge = pd.to_numeric(df[spec.response], errors="coerce").to_numpy(dtype=float)
        orphan = has & ~np.isfinite(judge)
        if orphan.any():
            i = int(np.flatnonzero(orphan)[0])
            where = {c: df[c].iloc[i] for c in (spec.comparison, *spec.grouping_columns)
                     if c in columns}
            raise DataError(f"{int(orphan.sum())} row(s) have a reference label in {gold!r} but "
                            f"no judge score in {spec.response!r} (first: row {i}, {where}); "
                            "every labelled cell needs the judge's score -- score it or drop "
                            "the label")
    frame = build_frame(df, spec, pair_by=pair_by, replicate=replicate, na=na)
    gold_mat = _align(df, frame, labels, has)
    lab = frame.observed & np.isfinite(gold_mat)
    units = labelled_units(spec, frame, lab.any(axis=1))
    if units < 2:
        what = f"level(s) of the unit {spec.unit!r}" if spec.unit else "cell(s)"
        raise DataError(f"the labelled subset covers {units} {what}; at least 2 are needed to "
                        "estimate the correction's uncertainty at the formula's unit -- label "
                        "cells in more units")
    vals = labels[has]
    return JudgeData(frame=frame, gold=gold_mat, column=gold,
                     binary=bool(np.all((vals == 0) | (vals == 1))))


def _align(df: pd.DataFrame, frame: Frame, labels: np.ndarray, has: np.ndarray) -> np.ndarray:
    """Mean reference label per (cell, model) of ``frame`` from the labelled rows."""
    keys = list(frame.pair_by)
    comp = frame.spec.comparison
    rows = df.loc[has, keys + [comp]].copy()
    rows["_label"] = labels[has]
    cells = frame.cells[keys].copy()
    cells["_cell"] = np.arange(len(cells))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        merged = rows.merge(cells, on=keys, how="left", sort=False)
    merged["_model"] = merged[comp].astype(str).map({m: i for i, m in enumerate(frame.models)})
    ok = merged["_cell"].notna() & merged["_model"].notna()
    merged = merged[ok]
    flat = (merged["_cell"].to_numpy(dtype=np.int64) * frame.n_models
            + merged["_model"].to_numpy(dtype=np.int64))
    size = frame.n_cells * frame.n_models
    sums = np.bincount(flat, weights=merged["_label"].to_numpy(), minlength=size)
    counts = np.bincount(flat, minlength=size)
    out = np.full(size, np.nan)
    np.divide(sums, counts, out=out, where=counts > 0)
    return out.reshape(frame.n_cells, frame.n_models)
