"""Stage engine: binomial data -> Frame -> GLMM problem, with the input checks.

Inputs: long-format data and a :class:`~mixrank.formula.glmm_terms.GlmmFormula`
(0/1 rows, possibly with replicates, or count columns ``cbind(k, n - k)``).
Outputs: the :class:`~mixrank.frame.Frame` (cell score = share of
successes, ``replicates`` = trials) and the
:class:`~mixrank.engine.glmm_system.Problem` of one observation per
(model, cell): successes ``k`` of ``n`` trials -- the sufficient statistics
of the binomial likelihood (docs/glmm.md §1).

Contents: :func:`binomial_frame`, :func:`build_problem`, :func:`check_separation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import gammaln

from ..errors import DataError, DesignError
from ..formula.glmm_terms import GlmmFormula
from ..frame import Frame
from ..frame.build import default_pair_by, resolve_keys
from ..frame.cells import CellTable, frame_from_cells
from ..frame.source import to_pandas
from .glmm_system import Problem

__all__ = ["binomial_frame", "build_problem", "check_separation", "log_choose"]


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
    s = pd.to_numeric(df[col], errors="coerce")
    bad = s.isna() | ~np.isfinite(s) | (s < 0) | (s != np.round(s))
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"column {col!r} ({what}) must hold non-negative whole numbers; row {row} "
                        f"holds {df[col].iloc[row]!r}")
    return s.to_numpy(dtype=np.float64)


def _count_frame(gf: GlmmFormula, data: Any, pair_by: Sequence[str] | None,
                 replicate: str | None) -> tuple[Frame, int, float]:
    """Frame from count columns; also the number of count rows and sum log C(n, k)."""
    spec = gf.spec
    df = to_pandas(data)
    columns = [str(c) for c in df.columns]
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
    tmp = df[by].copy()
    tmp["__k"], tmp["__n"] = k, n
    g = tmp.groupby(by, sort=False, observed=True, dropna=False)
    agg = g.agg(k=("__k", "sum"), n=("__n", "sum"), rows=("__k", "size")).reset_index()
    if replicate is None and (agg["rows"] > 1).any():
        first = agg[agg["rows"] > 1].iloc[0]
        raise DataError(f"{int((agg['rows'] > 1).sum())} (model, cell) combination(s) have several "
                        f"count rows, first {first[by].to_dict()}; pass replicate='<column>' to "
                        "add them up, or add the distinguishing column to pair_by")
    table = CellTable(columns={c: agg[c] for c in by}, n=agg["n"].to_numpy(np.int64),
                      sums=agg["k"].to_numpy(np.float64), n_rows=int(agg["n"].sum()),
                      source="the data")
    frame = frame_from_cells(table, spec, pair_by=keys, replicate=gf.trials or gf.failures or "n")
    return frame, len(df), float(np.sum(log_choose(n, k)))


def log_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``log C(n, k)`` elementwise."""
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def binomial_frame(gf: GlmmFormula, data: Any, *, pair_by: Sequence[str] | None = None,
                   replicate: str | None = None, na: str = "error", backend: str = "pandas",
                   client: Any = None, options: Any = None) -> tuple[Frame, int, float]:
    """The Frame of binomial data, the number of responses glmer sees, and sum log C(n, k).

    Raises
    ------
    DataError
        0/1 rows with a score outside {0, 1}; count columns that are not
        whole numbers, with k > n or n = 0; several count rows per (model,
        cell) without ``replicate``; everything :func:`mixrank.fit` raises
        for the data.
    """
    if isinstance(data, Frame):
        frame, nobs, lc = data, int(data.n_rows), 0.0
    elif gf.trials is not None or gf.failures is not None:
        return _count_frame(gf, data, pair_by, replicate)
    else:
        from ..io.backends import load_frame

        cols = None
        if pair_by is None and gf.model_terms:
            cols = [str(c) for c in to_pandas(data).columns] if isinstance(data, pd.DataFrame) else None
        frame = load_frame(data, gf.spec, backend=backend, client=client,
                           pair_by=_pair_by(gf, cols, None, replicate) if cols else pair_by,
                           replicate=replicate, na=na, options=options)
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


def _unit_codes(frame: Frame, factors: Sequence[str]) -> np.ndarray:
    """Per-cell code of the combination of ``factors`` (columns of ``frame.cells``)."""
    missing = [f for f in factors if f not in frame.cells.columns]
    if missing:
        raise DesignError(f"model-by-unit term column(s) {missing} are not pairing keys "
                          f"{list(frame.pair_by)}; add them to pair_by")
    codes = np.zeros(frame.n_cells, dtype=np.int64)
    for f in factors:
        c, lev = pd.factorize(frame.cells[f], sort=True)
        codes = codes * (len(lev) + 1) + c
    return np.unique(codes, return_inverse=True)[1].ravel()


def build_problem(frame: Frame, gf: GlmmFormula) -> Problem:
    """One observation per scored (model, cell); random terms ordered by size.

    Raises
    ------
    DesignError
        No random term (glmer needs one; use a GLM), a term with a single level.
    """
    cell, model = np.nonzero(frame.observed)
    n = frame.replicates[cell, model].astype(np.float64)
    k = np.rint(frame.scores[cell, model] * n)
    M = frame.n_models
    terms: list[tuple[str, np.ndarray]] = [(t, frame.term_codes[t][cell]) for t in gf.spec.term_names]
    for factors in gf.model_terms:
        base = _unit_codes(frame, [f for f in factors if f != gf.spec.comparison])
        code = np.unique(base[cell] * M + model, return_inverse=True)[1].ravel()
        terms.append((":".join(factors), code))
    if not terms:
        raise DesignError(
            f"{gf.formula!r} has no random term; a binomial mixed model needs at least one, "
            "e.g. '(1|question)' (without one this is a logistic regression)")
    model_free = set(gf.spec.term_names)
    sized = []
    for name, code in terms:
        q = int(code.max()) + 1
        if q < 2:
            raise DesignError(f"random term (1|{name}) has a single level; drop it or add data")
        sized.append((q, name, code))
    sized.sort(key=lambda t: -t[0])
    return Problem(k=k, n=n, model=model.astype(np.int64), n_models=M,
                   names=tuple(s[1] for s in sized), codes=tuple(s[2] for s in sized),
                   levels=tuple(s[0] for s in sized), cell=cell.astype(np.int64),
                   n_cells=frame.n_cells,
                   cell_codes=tuple(frame.term_codes[s[1]] if s[1] in model_free else None
                                    for s in sized))


def check_separation(frame: Frame, prob: Problem) -> None:
    """Complete separation of a model effect: every trial of a model succeeds (or fails).

    Raises
    ------
    DataError
        Naming the models: their log-odds would be infinite (glmer returns a
        huge estimate with a huge standard error and a convergence warning).
    """
    ks = np.bincount(prob.model, weights=prob.k, minlength=prob.n_models)
    ns = np.bincount(prob.model, weights=prob.n, minlength=prob.n_models)
    bad = [(frame.models[j], "succeeds" if ks[j] == ns[j] else "fails")
           for j in range(prob.n_models) if ks[j] == 0 or ks[j] == ns[j]]
    if bad:
        desc = ", ".join(f"{m!r} {what} on all {int(ns[frame.models.index(m)])} trials"
                         for m, what in bad)
        raise DataError(
            f"complete separation: {desc}. Its log-odds estimate would be infinite (glmer "
            "returns a huge estimate and standard error with a convergence warning). Drop "
            "that model from the data, or compare it with the linear engine (family='gaussian'), "
            "whose difference in proportions stays finite")
