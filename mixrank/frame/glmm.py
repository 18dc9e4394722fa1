"""Stage frame: binomial data -> Frame, with the input checks (``family="binomial"``).

Inputs: long-format data and a :class:`~mixrank.formula.glmm_terms.GlmmFormula`
(0/1 rows, possibly with replicates, or count columns ``cbind(k, n - k)``).
Outputs: the :class:`~mixrank.frame.Frame` (cell score = share of
successes, ``replicates`` = trials), the number of responses glmer sees and
``sum log C(n, k)``; the engine turns the frame into the GLMM problem
(:mod:`mixrank.engine.glmm.problem`, docs/glmm.md §1).  Rows are read by
``load`` -- :func:`~mixrank.frame.build.build_frame` by default, an
out-of-core backend's loader when the caller passes one (``io`` sits above
``frame``).

Contents: :func:`binomial_frame`, :func:`log_choose`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, OptionError
from ..formula.glmm_terms import GlmmFormula
from .build import build_frame as build_rows
from .build import default_pair_by, resolve_keys
from .cells import CellTable, frame_from_cells
from .frame import Frame
from .source import to_pandas

__all__ = ["binomial_frame", "log_choose"]

#: ``load(data, spec, pair_by=, replicate=, na=) -> Frame``: how 0/1 rows become a Frame.
Loader = Callable[..., Frame]


def _pair_by(gf: GlmmFormula, columns: list[str], pair_by: Sequence[str] | None,
             replicate: str | None) -> list[str] | None:
    """Default keys plus every column of a model-by-unit term."""
    if pair_by is not None:
        return [pair_by] if isinstance(pair_by, str) else list(pair_by)
    keys = list(default_pair_by(gf.spec, columns, replicate))
    for term in gf.model_terms:
        for f in term:
            if f != gf.spec.comparison and f not in keys:
                keys.append(f)
    return keys or None


def _count_values(df: pd.DataFrame, col: str, what: str) -> np.ndarray:
    if col not in df.columns:
        raise DataError(f"column {col!r} ({what}) is not in the data; available: {list(df.columns)}")
    col_data = df[col]
    if col_data.dtype.kind in "iuf":
        x = col_data.to_numpy(dtype=np.float64)
    else:
        x = pd.to_numeric(col_data, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(x) | (x < 0) | (x != np.round(x))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(f"column {col!r} ({what}) must hold non-negative whole numbers; row {row} "
                        f"holds {df[col].iloc[row]!r}")
    return x


def _count_frame(gf: GlmmFormula, data: Any, pair_by: Sequence[str] | None,
                 replicate: str | None) -> tuple[Frame, int, float]:
    """Frame from count columns; also the number of count rows and sum log C(n, k)."""
    spec = gf.spec
    df = to_pandas(data)
    columns = [str(c) for c in df.columns.tolist()]
    k = _count_values(df, spec.response, "successes")
    if gf.trials is not None:
        n = _count_values(df, gf.trials, "trials")
        what = f"{gf.trials!r} (trials)"
    else:
        n = k + _count_values(df, str(gf.failures), "failures")
        what = "successes + failures"
    over = k > n
    if over.any():
        row = int(np.flatnonzero(over)[0])
        raise DataError(f"{int(over.sum())} row(s) have more successes than trials, first row "
                        f"{row}: {spec.response!r} = {k[row]:g} > {what} = {n[row]:g}; the "
                        "successes k must satisfy 0 <= k <= n")
    if (n == 0).any():
        raise DataError(f"{int((n == 0).sum())} row(s) have zero trials; drop them before fitting "
                        "(a binomial observation needs n >= 1)")
    keys = resolve_keys(spec, columns, pair_by=_pair_by(gf, columns, pair_by, replicate),
                        replicate=replicate, na="error")
    by = list(keys) + [spec.comparison]
    encoded = _encoded_once(df, by)
    if encoded is not None or _one_row_each(df, by):
        cols = encoded or {c: df[c].reset_index(drop=True) for c in by}
        table = CellTable(columns=cols, n=n.astype(np.int64), sums=k, n_rows=int(n.sum()),
                          source="the data")
    else:                                  # several count rows per (model, cell): add them up
        tmp = df[by].copy()
        tmp["__k"], tmp["__n"] = k, n
        g = tmp.groupby(by, sort=False, observed=True, dropna=False)
        agg = g.agg(k=("__k", "sum"), n=("__n", "sum"), rows=("__k", "size")).reset_index()
        if replicate is None:
            first = agg[agg["rows"] > 1].iloc[0]
            raise DataError(f"{int((agg['rows'] > 1).sum())} (model, cell) combination(s) have "
                            f"several count rows, first {first[by].to_dict()}; pass "
                            "replicate='<column>' to add them up, or add the distinguishing "
                            "column to pair_by")
        table = CellTable(columns={c: agg[c] for c in by}, n=agg["n"].to_numpy(np.int64),
                          sums=agg["k"].to_numpy(np.float64), n_rows=int(agg["n"].sum()),
                          source="the data")
    frame = frame_from_cells(table, spec, pair_by=keys, replicate=gf.trials or gf.failures or "n")
    return frame, len(df), float(np.sum(log_choose(n, k)))


def _encoded_once(df: pd.DataFrame, by: list[str]) -> dict[str, pd.Series] | None:
    """The ``by`` columns as categoricals when every (model, cell) has one row, else None.

    The fast path of the common case (one count row per (model, cell)):
    each column is factorised once, for the uniqueness check and for the
    frame, which encodes a categorical by its codes (sorting the levels
    only).  Columns of text or integer type without missing values only;
    anything else (object columns, whose mixed types the frame reports;
    missing keys; repeated rows) returns None for the general path and its
    messages.
    """
    out: dict[str, pd.Series] = {}
    code = np.zeros(len(df), dtype=np.int64)
    size = 1
    for col in by:
        s = df[col]
        dt = s.dtype
        if isinstance(dt, pd.CategoricalDtype):
            c, cat = s.cat.codes.to_numpy().astype(np.int64), s.reset_index(drop=True)
            q = len(dt.categories)
        elif not pd.api.types.is_object_dtype(dt) and (
                pd.api.types.is_string_dtype(dt) or pd.api.types.is_integer_dtype(dt)):
            c, lev = pd.factorize(s)
            # object categories: checked for uniqueness by a hash of Python objects (fast)
            lev = pd.Index(np.asarray(lev, dtype=object), dtype=object)
            cat, q = pd.Series(pd.Categorical.from_codes(c, lev), copy=False), len(lev)
        else:
            return None
        size *= q
        if size >= 2 ** 62 or (len(c) and int(c.min()) < 0):
            return None
        code = code * q + c
        out[col] = cat
    code.sort()
    return None if bool(np.any(code[1:] == code[:-1])) else out


def _one_row_each(df: pd.DataFrame, by: list[str]) -> bool:
    """Whether every combination of the ``by`` columns occurs in one row only."""
    code = np.zeros(len(df), dtype=np.int64)
    size = 1
    for col in by:
        c, lev = pd.factorize(df[col], use_na_sentinel=False)
        size *= len(lev) + 1
        if size >= 2 ** 62:
            return not df.duplicated(subset=by).any()
        code = code * (len(lev) + 1) + c
    code.sort()
    return not bool(np.any(code[1:] == code[:-1]))


def log_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``log C(n, k)`` elementwise (``n``, ``k`` whole numbers, ``0 <= k <= n``)."""
    from scipy.special import gammaln

    top = int(np.max(n)) if len(n) else 0
    if top <= max(4096, 4 * len(n)):     # a table of log n! (same values, fewer gammaln calls)
        lf = gammaln(np.arange(top + 1, dtype=np.float64) + 1.0)
        ni, ki = n.astype(np.int64), k.astype(np.int64)
        return lf[ni] - lf[ki] - lf[ni - ki]
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def binomial_frame(gf: GlmmFormula, data: Any, *, pair_by: Sequence[str] | None = None,
                   replicate: str | None = None, na: str = "error",
                   load: Loader | None = None) -> tuple[Frame, int, float]:
    """The Frame of binomial data, the number of responses glmer sees, and sum log C(n, k).

    ``load`` builds the frame of 0/1 rows (default the rows in memory,
    :func:`mixrank.frame.build.build_frame`; the fit
    passes an out-of-core backend's loader); count columns (``cbind``) are
    always read here.

    Raises
    ------
    OptionError
        ``na`` other than ``"error"`` with count columns.
    DataError
        0/1 rows with a score outside {0, 1}; count columns that are not
        whole numbers, with k > n or n = 0; several count rows per (model,
        cell) without ``replicate``; everything :func:`mixrank.fit` raises
        for the data.
    """
    if isinstance(data, Frame):
        frame, nobs, lc = data, int(data.n_rows), 0.0
    elif gf.trials is not None or gf.failures is not None:
        if na != "error":
            raise OptionError(f"na={na!r} drops rows with a missing 0/1 score; a cbind(...) "
                              "response has count columns, and a missing count is an error: "
                              "drop those rows before fitting (and leave na='error')")
        return _count_frame(gf, data, pair_by, replicate)
    else:
        cols = None
        if pair_by is None and gf.model_terms:
            cols = [str(c) for c in to_pandas(data).columns] if isinstance(data, pd.DataFrame) else None
        frame = (load or build_rows)(
            data, gf.spec, pair_by=_pair_by(gf, cols, None, replicate) if cols else pair_by,
            replicate=replicate, na=na)
        nobs, lc = int(frame.n_rows), 0.0
    if not frame.binary:
        bad = frame.observed & ~np.isin(frame.scores, (0.0, 1.0)) & (frame.replicates == 1)
        example = float(frame.scores[bad][0]) if bad.any() else "a non-0/1 value averaged into a cell"
        raise DataError(
            f"family='binomial' needs 0/1 scores in {gf.spec.response!r}, but it holds values "
            f"outside {{0, 1}} (e.g. {example!r}). Give 0/1 rows (replicates averaged with "
            "replicate='sample'), counts as 'cbind(k, n - k) ~ ...', or fit the linear engine "
            "(family='gaussian') for bounded continuous scores")
    return frame, nobs, lc
