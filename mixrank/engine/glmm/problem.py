"""Stage engine: a binomial Frame -> the GLMM problem, with the design checks.

Inputs: the :class:`~mixrank.frame.Frame` of binomial data (built by
:mod:`mixrank.frame.glmm`) and its
:class:`~mixrank.formula.glmm_terms.GlmmFormula`.  Outputs: the
:class:`~mixrank.engine.glmm.system.Problem` of one observation per (model,
cell): successes ``k`` of ``n`` trials -- the sufficient statistics of the
binomial likelihood (docs/glmm.md §1).

Contents: :func:`build_problem`, :func:`check_separation`,
:func:`merge_exchangeable`, :func:`model_groups`, :func:`unit_levels`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...errors import DataError, DesignError
from ...formula.glmm_terms import GlmmFormula
from ...frame import Frame
from .system import Problem

__all__ = ["build_problem", "check_separation", "merge_exchangeable", "model_groups",
           "unit_levels"]


def _unit_codes(frame: Frame, factors: Sequence[str]) -> np.ndarray:
    """Per-cell code of the combination of ``factors`` (columns of ``frame.cells``)."""
    missing = [f for f in factors if f not in frame.cells.columns]
    if missing:
        raise DesignError(f"model-by-unit term column(s) {missing} are not pairing keys "
                          f"{list(frame.pair_by)}; add them to pair_by")
    codes = np.zeros(frame.n_cells, dtype=np.int64)
    for f in factors:
        if f in frame.term_codes:          # a one-factor term: the same sorted-level codes
            c, n_lev = frame.term_codes[f], frame.term_levels[f]
        else:
            c, lev = pd.factorize(frame.cells[f], sort=True)
            n_lev = len(lev)
        codes = codes * (n_lev + 1) + c
    return np.unique(codes, return_inverse=True)[1].ravel()


def unit_levels(frame: Frame, gf: GlmmFormula) -> dict[str, int]:
    """Levels of each random term's grouping without the comparison factor (scored cells).

    ``(1|subject:model)`` counts subjects; ``(1|question)`` counts questions.
    The few-levels check of :class:`~mixrank.engine.glmm.control.GlmmControl`
    compares them with ``min_units``.
    """
    out = {t: int(np.unique(frame.term_codes[t]).size) for t in gf.spec.term_names}
    for factors in gf.model_terms:
        base = _unit_codes(frame, [f for f in factors if f != gf.spec.comparison])
        out[":".join(factors)] = int(np.unique(base).size)
    return out


def model_groups(frame: Frame, cell_level: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The fixed-effect column of every scored (model, cell) and each column's (model, level).

    Without a covariate (``cell_level`` None) the columns are the models.
    With one categorical covariate (``model * x``, docs/glmm.md §11) they are
    the (model, level) combinations that have cells -- the cell-means coding
    of glmer's ``model * x``, the same column space as its treatment coding.

    Returns
    -------
    column : ndarray of int (n_obs,)
        In the order of ``np.nonzero(frame.observed)``.
    groups : ndarray of int (n_columns, 2)
        Model index and level index of each column.
    """
    cell, model = np.nonzero(frame.observed)
    if cell_level is None:
        M = frame.n_models
        return model.astype(np.int64), np.stack([np.arange(M), np.zeros(M, np.int64)], axis=1)
    L = int(cell_level.max()) + 1
    combo = model.astype(np.int64) * L + cell_level[cell]
    present, column = np.unique(combo, return_inverse=True)
    return column.ravel().astype(np.int64), np.stack([present // L, present % L], axis=1)


def build_problem(frame: Frame, gf: GlmmFormula, cell_level: np.ndarray | None = None) -> Problem:
    """One observation per scored (model, cell); random terms ordered by size.

    ``cell_level``: the level of a categorical covariate at each cell
    (``model * x``); the fixed effects are then one per (model, level), see
    :func:`model_groups`; model-by-unit terms still group by the model.

    Raises
    ------
    DesignError
        No random term (glmer needs one; use a GLM), a term with a single level.
    """
    cell, model = np.nonzero(frame.observed)
    n = frame.replicates[cell, model].astype(np.float64)
    k = np.rint(frame.scores[cell, model] * n)
    M = frame.n_models
    column, groups = model_groups(frame, cell_level)
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
    return Problem(k=k, n=n, model=column, n_models=len(groups),
                   names=tuple(s[1] for s in sized), codes=tuple(s[2] for s in sized),
                   levels=tuple(s[0] for s in sized), cell=cell.astype(np.int64),
                   n_cells=frame.n_cells,
                   cell_codes=tuple(frame.term_codes[s[1]] if s[1] in model_free else None
                                    for s in sized))


def check_separation(frame: Frame, prob: Problem, names: list[str] | None = None) -> None:
    """Complete separation of a model effect: every trial of a model succeeds (or fails).

    Raises
    ------
    DataError
        Naming the models: their log-odds would be infinite (glmer returns a
        huge estimate with a huge standard error and a convergence warning).
    """
    ks = np.bincount(prob.model, weights=prob.k, minlength=prob.n_models)
    ns = np.bincount(prob.model, weights=prob.n, minlength=prob.n_models)
    names = list(frame.models) if names is None else names
    bad = [(names[j], "succeeds" if ks[j] == ns[j] else "fails", int(ns[j]))
           for j in range(prob.n_models) if ks[j] == 0 or ks[j] == ns[j]]
    if bad:
        desc = ", ".join(f"{m!r} {what} on all {n} trials" for m, what, n in bad)
        raise DataError(
            f"complete separation: {desc}. Its log-odds estimate would be infinite (glmer "
            "returns a huge estimate and standard error with a convergence warning). Drop "
            "that model from the data, or compare it with the linear engine (family='gaussian'), "
            "whose difference in proportions stays finite")


def _level_signatures(prob: Problem) -> tuple[np.ndarray, np.ndarray] | None:
    """Group the first term's levels by their observations' multiset of (model, k, n, other levels).

    Returns the group of each level and one representative level per group,
    or None when (almost) every level is distinct or the levels are too
    unequal in size to compare as rows.
    """
    q0, c0 = prob.levels[0], prob.codes[0]
    if _distinct_by_counts(prob) > 0.8 * q0:
        return None
    cols = [prob.model, prob.k, prob.n, *prob.codes[1:]]
    # cheap screen: per level, the sum of a random hash of each observation's tuple
    rng = np.random.default_rng(20261130)
    h = np.zeros(prob.n_obs)
    for col in cols:
        col = np.asarray(col)
        if col.dtype.kind == "f":
            h += np.sin(col * rng.uniform(0.5, 1.5) + rng.uniform(0, 6.3))
        else:
            h += rng.normal(size=int(col.max()) + 1)[col]
    counts = np.bincount(c0, minlength=q0)
    screen = np.round(np.bincount(c0, weights=np.cos(3.0 * h), minlength=q0), 9)
    order = np.lexsort((screen, counts))             # distinct (screen, count) pairs
    s_, c_ = screen[order], counts[order]
    if 1 + np.count_nonzero((s_[1:] != s_[:-1]) | (c_[1:] != c_[:-1])) > 0.8 * q0:
        return None
    width = int(counts.max())
    if q0 * width > 4 * prob.n_obs + 1000:
        return None
    # exact: each level's sorted observation keys as one row (padded with -1)
    key = np.zeros(prob.n_obs, dtype=np.int64)
    for col in cols:                      # whole numbers >= 0 (codes, successes, trials)
        ci = np.rint(col).astype(np.int64)
        nc = int(ci.max()) + 1
        if (int(key.max()) + 1) * nc >= 2 ** 62:
            key = np.unique(key, return_inverse=True)[1].ravel()
        key = key * nc + ci
    nk = int(key.max()) + 1
    order = np.argsort(c0 * nk + key) if nk * q0 < 2 ** 62 else np.lexsort((key, c0))
    pos = np.arange(prob.n_obs) - np.repeat(np.cumsum(counts) - counts, counts)
    rows = np.full((q0, width), -1, dtype=np.int64)
    rows[c0[order], pos] = key[order]
    by_row = np.lexsort(rows.T[::-1])
    srt = rows[by_row]
    new_group = np.concatenate([[True], np.any(srt[1:] != srt[:-1], axis=1)])
    group = np.empty(q0, dtype=np.int64)
    group[by_row] = np.cumsum(new_group) - 1
    first = by_row[new_group]
    return group, first


def _distinct_by_counts(prob: Problem) -> int:
    """A lower bound on the number of distinct observation multisets of the first term's levels.

    Per level the sum of ``k R1[model] + n R2[model]`` (random integer
    weights; exact in floating point while below 2**53, so the order of
    summation does not matter) and the number of observations: equal
    multisets give equal pairs.  Cheap (two bincounts); 0 when the sums could
    be inexact.
    """
    q0, c0 = prob.levels[0], prob.codes[0]
    counts = np.bincount(c0, minlength=q0)
    top = float(np.max(prob.n)) * 2.0 * float(counts.max()) if prob.n_obs else 0.0
    if not 0 < top * 2.0 ** 20 < 2.0 ** 52:
        return 0
    R = np.random.default_rng(14).integers(1, 2 ** 20, (2, prob.n_models)).astype(np.float64)
    key = np.bincount(c0, weights=prob.k * R[0][prob.model] + prob.n * R[1][prob.model],
                      minlength=q0)
    order = np.lexsort((key, counts))
    k_, c_ = key[order], counts[order]
    return 1 + int(np.count_nonzero((k_[1:] != k_[:-1]) | (c_[1:] != c_[:-1])))


def merge_exchangeable(prob: Problem) -> Problem:
    """Merge the first term's levels whose observations are identical (docs/glmm.md §3).

    Two levels of the first term with the same multiset of (model, k, n,
    levels of the other terms) are exchangeable: the penalised deviance is
    invariant under swapping them, so its (unique) mode gives them the same
    effect and the Laplace deviance is the sum of identical contributions.
    One representative is kept per group, its observations' ``k`` and ``n``
    multiplied by the group size ``mult`` (the binomial kernel and the IRLS
    weights are linear in them), with ``mult`` weighting its penalty and
    log-determinant (:class:`~mixrank.engine.glmm.system.Problem`).  Exact,
    not an approximation; 0/1 items answered alike by every model (the bulk
    of a large 0/1 matrix with one item term) collapse this way.  Returns
    ``prob`` itself when fewer than 20% of the levels would merge.
    """
    if prob.slope is not None:        # a numeric covariate: levels are not compared on it
        return prob
    sig = _level_signatures(prob)
    if sig is None:
        return prob
    group, first = sig
    G = len(first)
    mult = np.bincount(group, minlength=G).astype(np.float64)
    keep = np.flatnonzero(np.isin(prob.codes[0], first))
    rep_of = np.full(prob.levels[0], -1, dtype=np.int64)
    rep_of[first] = np.arange(G)
    code0 = rep_of[prob.codes[0][keep]]
    w = mult[code0]
    cell, n_cells, cell_codes = None, 0, prob.cell_codes
    if prob.cell is not None:
        used, cell = np.unique(prob.cell[keep], return_inverse=True)
        cell, n_cells = cell.ravel(), len(used)
        cell_codes = tuple(None if cc is None else (rep_of[cc[used]] if r == 0 else cc[used])
                           for r, cc in enumerate(prob.cell_codes))
    return Problem(k=prob.k[keep] * w, n=prob.n[keep] * w, model=prob.model[keep],
                   n_models=prob.n_models, names=prob.names,
                   codes=(code0,) + tuple(c[keep] for c in prob.codes[1:]),
                   levels=(G,) + tuple(prob.levels[1:]), cell=cell, n_cells=n_cells,
                   cell_codes=cell_codes, mult=mult, expand=group)
