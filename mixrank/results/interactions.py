"""Stage results: where the gap lives — contrasts by covariate level of a model x covariate fit.

Inputs: a :class:`~mixrank.results.FitResult` of an interaction formula (its
pairs carry :class:`~mixrank.engine.lmm.fixed.FixedPair` in ``fixed``).
Outputs: tidy tables: :func:`contrasts_by` (the gap per level of a
categorical covariate, or its slope per unit of a numeric one).

Reference grid (docs/interactions.md §4, as emmeans): for the gap at level
``l`` of ``by``, the fitted gap is averaged with equal weights over every
level combination of the other categorical covariates, numeric covariates
held at their mean over the pair's common cells.  A numeric ``by`` gives the
change of that average per unit of ``by``.  Each row is ``L' beta`` with
``Var = L' Cov(beta) L`` and lmerTest's Satterthwaite df (``contest``).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd
from scipy import stats

from .._util import tidy
from ..engine.control import DEFAULT_CONTROL
from ..engine.lmm.fixed import Design, FixedPair, build_design, fit_models_fixed
from ..engine.lmm.native import score_scale, snap_zero
from ..errors import DataError, DesignError

if TYPE_CHECKING:
    from .fit_result import FitResult

__all__ = ["coefficient_rows", "contrasts_by", "model_scores_by", "check_by", "fixed_pairs", "hypotheses", "global_levels"]

_TAKEN = {"model_a", "model_b", "estimate", "std_error", "df", "statistic", "p_value",
          "ci_lower", "ci_upper", "level", "n", "note", "p_adjusted", "p_greater"}


def fixed_pairs(fit: FitResult) -> list[FixedPair | None]:
    """The p-column fit of every pair (None for a degenerate pair); DesignError when the
    formula has no covariate."""
    out = [p.fixed for p in fit.pairs]
    if not getattr(fit.frame.spec, "covariates", ()) or all(f is None for f in out):
        raise DesignError(
            f"the formula {fit.frame.spec.formula!r} has no covariate in its fixed part, so the "
            "gap has no levels to be split by; fit e.g. 'correct ~ model * x + (1|subject)'")
    return out


def check_by(fit: FitResult, by: str) -> Design:
    """The design, after checking that ``by`` is a covariate of the formula."""
    fps = fixed_pairs(fit)
    covs = list(getattr(fit.frame.spec, "covariates", ()))
    if not isinstance(by, str) or by not in covs:
        raise DataError(f"by={by!r} is not a covariate of the formula {fit.frame.spec.formula!r}; "
                        f"expected one of {covs} (a column crossed with "
                        f"{fit.frame.spec.comparison!r} in the fixed part)")
    if by in _TAKEN:
        raise DataError(f"by={by!r} clashes with a column of the contrasts table; rename the "
                        "covariate column in the data")
    return next(f for f in fps if f is not None).design


def _grid(levels: dict[str, tuple[str, ...]], numeric: tuple[str, ...], by: str, value: object,
          means: dict[str, float]) -> pd.DataFrame:
    """Reference-grid rows with ``by`` at ``value``: all level combinations of the
    other categorical covariates, numeric covariates at ``means``."""
    others = [c for c in levels if c != by]
    combos = list(itertools.product(*(levels[c] for c in others))) or [()]
    rows = []
    for combo in combos:
        row: dict[str, object] = dict(zip(others, combo))
        row.update({c: means[c] for c in numeric if c != by})
        row[by] = value
        rows.append(row)
    return pd.DataFrame(rows)


def global_levels(fit: FitResult) -> dict[str, tuple[str, ...]]:
    """Every categorical covariate's levels over all cells of the frame."""
    cells = fit.frame.cells
    return {c: tuple(str(v) for v in cells[c].cat.categories)
            for c in getattr(fit.frame.spec, "covariates", ())
            if isinstance(cells[c].dtype, pd.CategoricalDtype)}


def _mean_row(fp: FixedPair, grid: pd.DataFrame) -> np.ndarray | None:
    """The average model-matrix row of ``grid`` in the pair's coding (None: a grid level
    has no cells for the pair)."""
    design = fp.design
    for c, levs in design.levels.items():
        if not grid[c].isin(levs).all():
            return None
    return design.grid_matrix(grid).mean(axis=0)


def hypotheses(fit: FitResult, by: str, fp: FixedPair) -> list[tuple[object, np.ndarray | None, int]]:
    """``(level or None, L or None, n)`` rows of the contrasts by ``by`` for one pair."""
    levels = global_levels(fit)
    numeric = fp.design.numeric
    means = fp.numeric_means
    if by in numeric:
        x0 = _mean_row(fp, _grid(levels, numeric, by, means[by], means))
        x1 = _mean_row(fp, _grid(levels, numeric, by, means[by] + 1.0, means))
        return [(None, None if x0 is None or x1 is None else x1 - x0, fp.fit.n)]
    return [(lev, _mean_row(fp, _grid(levels, numeric, by, lev, means)),
             fp.level_counts[by].get(lev, 0)) for lev in levels[by]]


def _rows(fit: FitResult, by: str, fp: FixedPair | None, level: float, ident: dict,
          who: str, reason: str = "") -> list[dict]:
    """Contrast rows of one fit (pair or model) per level of ``by``."""
    rows = []
    if fp is None:   # degenerate: no variance estimable, every row NaN with the reason
        levels = global_levels(fit).get(by, ("per unit",))
        nan = float("nan")
        return [dict(ident, **{by: lev}, estimate=nan, std_error=nan, df=nan, statistic=nan,
                     p_value=nan, ci_lower=nan, ci_upper=nan, level=level, n=0,
                     note=f"{who}: {reason}") for lev in levels]
    for lev, L, n in hypotheses(fit, by, fp):
        row: dict[str, object] = dict(ident)
        row[by] = "per unit" if lev is None else lev
        note = ""
        if lev is not None and n == 0:
            note = f"level {lev!r} of {by!r} has no common cells for {who}"
        elif L is None or not fp.estimable(L):
            note = (f"not estimable: the reference grid of {by!r} = {lev!r} includes level "
                    f"combinations without cells for {who}")
        if note:
            est = se = df = t = pv = lo = hi = float("nan")
        else:
            est, var, df = fp.contrast(cast(np.ndarray, L))
            est = snap_zero(est, score_scale(fit.frame))   # exact ties (docs/hardening.md §9)
            se = float(np.sqrt(var))
            t = est / se
            pv = float(2 * stats.t.sf(abs(t), df))
            q = float(stats.t.ppf(0.5 + level / 2, df))
            lo, hi = est - q * se, est + q * se
        row.update(estimate=est, std_error=se, df=df, statistic=t, p_value=pv, ci_lower=lo,
                   ci_upper=hi, level=level, n=n, note=note)
        rows.append(row)
    return rows


def contrasts_by(fit: FitResult, by: str, level: float) -> pd.DataFrame:
    """The gap per level of ``by`` (or per unit of a numeric ``by``) for every pair.

    Returns
    -------
    pandas.DataFrame
        ``model_a, model_b, <by>`` (the level; for a numeric ``by`` the text
        ``"per unit"``), ``estimate, std_error, df, statistic, p_value,
        ci_lower, ci_upper, level, n`` (common cells at that level) and
        ``note`` (why a row is NaN: the level has no common cells for the
        pair, or the reference grid is not estimable from them).

    Notes
    -----
    ``L' beta`` of the pair's REML fit on the reference grid of
    docs/interactions.md §4, SE from ``Cov(beta)``, Satterthwaite df as
    lmerTest's ``contest``.  Validated against lme4 1.1 + lmerTest 3.1
    (``tests/reference/interactions.R``: ``contest`` on the same grid and
    ``lmer(d ~ 0 + x + ...)``).
    """
    check_by(fit, by)
    rows = []
    for p in fit.pairs:
        rows += _rows(fit, by, p.fixed, level, dict(model_a=p.model_a, model_b=p.model_b),
                      f"{p.model_a} vs {p.model_b}", p.degenerate)
    return tidy(rows, **fit._meta("contrasts", by=by, grid="equal weights over other "
                                  "categorical covariates, numeric ones at their pair mean"))


def model_scores_by(fit: FitResult, by: str, level: float) -> pd.DataFrame:
    """Each model's score per level of ``by`` (or its slope per unit of a numeric ``by``).

    Returns
    -------
    pandas.DataFrame
        ``model, <by>, estimate, std_error, df, ci_lower, ci_upper, level,
        n`` (the model's cells at that level), ``note``.

    Notes
    -----
    Each model's own cell scores are fitted by ``y ~ 1 + x + (random terms)``
    with the p-column REML engine (docs/interactions.md §4) and evaluated on
    the same reference grid as :func:`contrasts_by`; the estimand's weights
    do not enter (the grid defines the per-level score).  Validated against
    lme4 1.1 + lmerTest 3.1: ``lmer(y ~ 1 + x + ...)`` and ``contest`` on the
    same grid (``tests/reference/interactions.R``, ``models``).
    """
    check_by(fit, by)
    fps = [p.fixed for p in fit.pairs]
    design = next((f.design for f in fps if f is not None and not f.own_design), None)
    if design is None:
        design = build_design(fit.frame, fit.frame.spec)  # type: ignore[arg-type]
    rows = []
    for m in fit_models_fixed(fit.frame, design, estimand=fit.estimand,
                              control=DEFAULT_CONTROL if fit.control is None else fit.control):
        rows += _rows(fit, by, m.fixed, level, dict(model=m.model_a), m.model_a, m.degenerate)
    out = pd.DataFrame(rows).drop(columns=["statistic", "p_value"])
    return tidy(out, table="model_scores", formula=fit.frame.spec.formula, by=by,
                method=fit.method, engine=fit.engine, df_method="satterthwaite",
                model="y ~ 1 + covariates + random terms, per model")


def coefficient_rows(fp: FixedPair) -> list[tuple[str, float, float, float, float, float]]:
    """``(name, estimate, SE, df, t, p)`` per kept column of a pair's ``d ~ 1 + x`` fit
    (lme4's fixed-effects table; column names as formulaic writes them)."""
    rows = []
    p = len(fp.kept)
    for i, k in enumerate(fp.kept):
        est, var, df = fp.fit.contrast(np.eye(p)[i])
        se = float(np.sqrt(var))
        t = est / se
        rows.append((fp.design.columns[k], est, se, df, t, float(2 * stats.t.sf(abs(t), df))))
    return rows
