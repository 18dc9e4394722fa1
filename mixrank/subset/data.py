"""Stage subset (inference/design): a long leaderboard as a models x items matrix.

Inputs: a long DataFrame (one row per model, item and replicate), a formula
``score ~ model + (1|subject/question)`` naming the score, the model column
and the item (the random term with the most factors: its factors together
identify an item), and optionally the stratum column.  Outputs: a
:class:`Layout` (the roles of the columns) and a :class:`Matrix` (scores in
[0, 1], models x items, NaN where a model has no answer; the items' keys and
strata; the models' names).  Several rows of one model and item (prompts,
samples) are averaged into one cell score.  Items and models are sorted by
their keys, so the result does not depend on the input's row order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mixrank.errors import DataError, FormulaError, OptionError
from mixrank.formula import parse
from mixrank.frame.source import to_pandas

__all__ = ["Layout", "Matrix", "layout", "matrix", "DEFAULT_FORMULA"]

#: The formula of the subset functions when none is given (ChemBench's columns).
DEFAULT_FORMULA = "correct ~ model + (1|subject/question)"


@dataclass(frozen=True)
class Layout:
    """The roles of the columns: score, model, item key columns, stratum column (or None)."""

    formula: str
    score: str
    model: str
    item: tuple[str, ...]
    strata: str | None

    @property
    def columns(self) -> list[str]:
        cols = [self.score, self.model, *self.item]
        if self.strata is not None and self.strata not in cols:
            cols.append(self.strata)
        return cols


@dataclass(frozen=True)
class Matrix:
    """A leaderboard as scores (models x items) with the items' keys and strata."""

    Y: np.ndarray
    models: list[Any]
    items: pd.DataFrame          # item key columns (+ the stratum column), one row per item
    strata: np.ndarray           # stratum label of each item (object; "all" without strata)

    @property
    def n_items(self) -> int:
        return int(self.Y.shape[1])


def layout(formula: str, strata: str | None = None) -> Layout:
    """The column roles a subset formula names (see the module docstring).

    ``strata``: the column whose levels are strata; None takes the formula's
    coarser random term nested in the item (``subject`` in
    ``(1|subject/question)``), or no stratum column when there is none.
    """
    if not isinstance(formula, str):
        raise OptionError(f"formula={formula!r} is not a formula; expected text such as "
                          f"{DEFAULT_FORMULA!r}")
    spec = parse(formula)
    if getattr(spec, "interaction", None) is not None or not hasattr(spec, "random"):
        raise FormulaError("the subset functions read 'score ~ model + (1|subject/question)': "
                           "a model column and random terms naming the item", formula)
    if not spec.random:
        raise FormulaError("the formula names no item: add the item as a random term, e.g. "
                           f"{spec.response} ~ {spec.comparison} + (1|subject/question)",
                           formula)
    item = max(spec.random, key=lambda t: len(t.factors)).factors
    if strata is None:
        coarser = [t for t in spec.random if set(t.factors) < set(item)]
        strata = coarser[0].name if coarser and len(coarser[0].factors) == 1 else None
    elif not isinstance(strata, str):
        raise OptionError(f"strata={strata!r} is not a column name; pass the name of the "
                          "column whose levels are strata (e.g. 'subject') or None")
    return Layout(formula=formula, score=spec.response, model=spec.comparison, item=item,
                  strata=strata)


def _check(df: pd.DataFrame, lay: Layout, what: str) -> None:
    missing = [c for c in lay.columns if c not in df.columns]
    if missing:
        role = {lay.score: "score", lay.model: "model", lay.strata: "strata"}
        named = ", ".join(f"{c!r} ({role.get(c, 'item key')})" for c in missing)
        hint = (f"; pass strata= naming a column of {what}, or strata=None"
                if lay.strata in missing else "; pass formula= naming its columns")
        raise DataError(f"{what} has no column {named} (columns: {list(df.columns)}){hint}")
    y = pd.to_numeric(df[lay.score], errors="coerce")
    bad = y.isna() & df[lay.score].notna()
    if bad.any():
        raise DataError(f"{what}: the score column {lay.score!r} holds non-numeric values, "
                        f"e.g. {df[lay.score][bad].iloc[0]!r}; expected scores in [0, 1]")
    if y.isna().any():
        raise DataError(f"{what}: the score column {lay.score!r} has {int(y.isna().sum())} "
                        "missing value(s); drop those rows first (a missing answer is not a "
                        "wrong one)")
    if not np.isfinite(y.to_numpy(float)).all() or (y < 0).any() or (y > 1).any():
        v = y[(y < 0) | (y > 1) | ~np.isfinite(y)].iloc[0]
        raise DataError(f"{what}: the score column {lay.score!r} holds {v!r}; the item models "
                        "need scores in [0, 1] (0/1 correctness or a proportion)")
    for c in [lay.model, *lay.item]:
        if df[c].isna().any():
            raise DataError(f"{what}: the column {c!r} has missing values; every row needs a "
                            "model and an item key")


def matrix(data: Any, lay: Layout, what: str = "reference") -> Matrix:
    """The long table ``data`` as a :class:`Matrix` (cell means over replicate rows).

    Raises
    ------
    DataError
        A missing column, a score outside [0, 1] or missing, a missing key,
        a stratum that varies within an item.
    """
    df = to_pandas(data)
    _check(df, lay, what)
    keys = list(lay.item)
    extra = [lay.strata] if lay.strata is not None and lay.strata not in keys else []
    grouped = df.groupby(keys, sort=True, observed=True, dropna=False)
    item_id = grouped.ngroup().to_numpy()
    items = grouped.size().index.to_frame(index=False)
    if extra:
        varies = grouped[extra[0]].nunique(dropna=False) > 1
        if varies.any():
            bad = varies[varies].index[0]
            raise DataError(f"{what}: the stratum column {lay.strata!r} takes several values "
                            f"within the item {bad!r}; strata must group whole items")
        items[extra[0]] = grouped[extra[0]].first().to_numpy()
    model_codes, models = pd.factorize(df[lay.model], sort=True)
    y = pd.to_numeric(df[lay.score]).to_numpy(float)
    M, N = len(models), len(items)
    flat = model_codes * N + item_id
    sums = np.bincount(flat, weights=y, minlength=M * N)
    counts = np.bincount(flat, minlength=M * N)
    with np.errstate(invalid="ignore", divide="ignore"):
        Y = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan).reshape(M, N)
    strata = (items[lay.strata].astype(str).to_numpy(object) if lay.strata is not None
              else np.full(N, "all", dtype=object))
    return Matrix(Y=Y, models=list(models), items=items, strata=strata)


def item_index(mat: Matrix, keys: pd.DataFrame, lay: Layout) -> np.ndarray:
    """Column index in ``mat`` of each row of ``keys`` (item key columns); -1 if absent."""
    cols = list(lay.item)
    ref = pd.MultiIndex.from_frame(mat.items[cols].astype(str))
    got = pd.MultiIndex.from_frame(keys[cols].astype(str))
    return np.asarray(ref.get_indexer(got))
