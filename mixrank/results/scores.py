"""Stage results: each model's score with its uncertainty at the formula's unit.

Inputs: a :class:`~mixrank.results.FitResult`.  Outputs: the tidy table of
:meth:`FitResult.model_scores` (one row per model; when models' cell sets
differ, the scores of the models missing cells are on the union of cells,
adjusted by :mod:`~mixrank.results.score_adjust`; intervals of proportions
stay in [0, 1]; every row's SE and df by the contrasts' method,
:mod:`~mixrank.results.score_se`).  Contents: :func:`model_scores_table`, :func:`score_interval`.  The per-model fits
(:func:`mixrank.engine.lmm.single.fit_models`) are cached per fit and estimand,
so that the report, rank intervals and verdict tables that order models by
their score fit each model once.
"""

from __future__ import annotations

import warnings
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import special, stats

from .._deprecate import former_column
from .._util import check_level, did_you_mean, tidy
from ..engine.estimability import score_groups
from ..engine.lmm.native import ESTIMANDS
from ..engine.lmm.single import ModelFit, fit_models
from ..errors import DesignError, MixrankWarning, OptionError
from .score_adjust import adjusted_scores
from .score_se import score_inference, unit_ratio

if TYPE_CHECKING:
    import pandas as pd

    from .fit_result import FitResult

__all__ = ["model_scores_table", "model_fits", "score_interval", "SCORINGS"]

#: ``model_scores(scoring=)``: on the union of cells (adjusted) or each model's own cells.
SCORINGS = ("adjusted", "plain")

_CACHE: weakref.WeakKeyDictionary[Any, dict[str, list[ModelFit]]] = weakref.WeakKeyDictionary()
#: The adjusted scores of a fit (the additive model and its CR2 linearisation).
_ADJUSTED: weakref.WeakKeyDictionary[Any, list] = weakref.WeakKeyDictionary()
#: The mixed-method warnings already given for a fit (one per fit and text).
_WARNED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def model_fits(fit: FitResult, estimand: str) -> list[ModelFit]:
    """The per-model fits of ``fit`` for ``estimand`` (computed once per fit)."""
    per = _CACHE.setdefault(fit, {})
    if estimand not in per:
        per[estimand] = fit_models(fit.frame, method=fit.method, estimand=estimand,
                                   engine=fit.engine, control=fit.control)
    return per[estimand]


def score_interval(estimate: float, std_error: float, df: float, level: float,
                   bounded: bool) -> tuple[float, float, bool]:
    """``(ci_lower, ci_upper, on_logit)``: the t interval, or for a score bounded in [0, 1]
    whose t interval leaves [0, 1], the interval on the logit scale.

    Notes
    -----
    On the logit scale ``eta = log(p / (1 - p))`` has the delta-method SE
    ``std_error / (p (1 - p))``; ``expit(eta -+ q SE)`` lies in (0, 1) and
    contains ``p``.  A score of exactly 0 or 1 keeps the t interval clipped
    to [0, 1].
    """
    q = float(stats.t.ppf(0.5 + level / 2, df)) if np.isfinite(df) and df > 0 else np.nan
    lo, hi = estimate - q * std_error, estimate + q * std_error
    if not bounded or not (lo < 0 or hi > 1):
        return lo, hi, False
    if 0 < estimate < 1:
        eta = np.log(estimate / (1 - estimate))
        se = std_error / (estimate * (1 - estimate))
        return float(special.expit(eta - q * se)), float(special.expit(eta + q * se)), True
    return max(lo, 0.0), min(hi, 1.0), False


def model_scores_table(fit: FitResult, *, level: float | None = None,
                       estimand: str | None = None, scoring: str = "adjusted") -> pd.DataFrame:
    """One row per model: its score with CI at the formula's unit of inference.

    See :meth:`mixrank.results.FitResult.model_scores` for the columns.
    """
    lev = fit.level if level is None else check_level(level, DesignError)
    est = fit.estimand if estimand is None else estimand
    if est not in ESTIMANDS:
        raise OptionError(f"estimand={estimand!r}{did_you_mean(estimand, ESTIMANDS)}; expected "
                          f"one of {list(ESTIMANDS)}")
    if scoring not in SCORINGS:
        raise OptionError(f"scoring={scoring!r}{did_you_mean(scoring, SCORINGS)}; expected one "
                          f"of {list(SCORINGS)} (adjusted: every model on the union of cells; "
                          "plain: the plain mean over each model's own cells)")
    fits = model_fits(fit, est)
    fr = fit.frame
    adjust = scoring == "adjusted" and est == "cells"
    if adjust and fit not in _ADJUSTED:
        unit = fr.spec.unit
        ratios = {str(m.model): unit_ratio(dict(m.components), unit) for m in fits} \
            if unit is not None else {}
        _ADJUSTED[fit] = adjusted_scores(fr, ratios)
    adj = {a.model: a for a in _ADJUSTED[fit]} if adjust else {}
    adj = {k: a for k, a in adj.items()
           if np.isfinite(next(m.std_error for m in fits if str(m.model) == k))}
    inference, df_label, mixed = score_inference(fit, fits, adj, est)
    bounded = bool(fr.binary or (np.nanmin(fr.scores[fr.observed]) >= 0
                                 and np.nanmax(fr.scores[fr.observed]) <= 1)) \
        if fr.n_cells else False
    rows = []
    for m, (var, df, why) in zip(fits, inference):
        a = adj.get(str(m.model))
        estimate = m.estimate if a is None else a.estimate
        se = float(np.sqrt(var)) if var >= 0 else float("nan")
        lo, hi, logit = score_interval(estimate, se, df, lev, bounded)
        iid = m.iid_std_error
        basis = (f"adjusted, scored on {m.n:,} of {fr.n_cells:,} cells" if a is not None
                 else f"plain mean, scored on {m.n:,} of {fr.n_cells:,} cells")
        note = "; ".join(x for x in (m.note, why, "interval on the logit scale (the t "
                                     "interval left [0, 1])" if logit else "") if x)
        rows.append(dict(model=m.model, estimate=estimate, std_error=se, df=df,
                         ci_lower=lo, ci_upper=hi, level=lev,
                         n=m.n, sigma_iid=m.sigma_iid,
                         variance_ratio=(se / iid) ** 2 if iid > 0 else np.nan,
                         iid_std_error=iid, n_cells=fr.n_cells, adjusted=a is not None,
                         basis=basis, note=note))
    if mixed and mixed not in _WARNED.setdefault(fit, set()):
        _WARNED[fit].add(mixed)     # once per fit: the report and verdicts ask again
        warnings.warn(mixed, MixrankWarning, stacklevel=3)
    spec = fit.frame.spec
    extra: dict[str, Any] = {}
    groups = score_groups(fit.frame)
    if max(groups, default=1) > 1:
        by_name = dict(zip(fit.frame.models, groups))
        for r in rows:
            r["group"] = by_name[str(r["model"])]
        sizes = {g: groups.count(g) for g in sorted(set(groups))}
        note = (f"the models fall in {len(sizes)} groups that share no cells (models "
                f"per group: {sizes}; e.g. judged by different annotators or on different "
                "items): scores are on one scale only within a group (the 'group' column). "
                "To compare across groups, fit a formula whose pairing keys they share, or "
                "model the key as a covariate ('model * key', by=) (docs/messy.md §4)")
        warnings.warn(f"model_scores: {note}", MixrankWarning, stacklevel=3)
        extra["groups_note"] = note
    if adj:
        extra["adjusted"] = {m: f"adjusted, scored on {a.n:,} of {a.n_cells:,} cells"
                             for m, a in adj.items()}
    unit = spec.unit or "cell"
    return former_column(tidy(rows, table="model_scores", formula=spec.formula, method=fit.method,
                engine=fit.engine, estimand=est, scoring=scoring if est == "cells" else "plain",
                df_method=df_label, df_method_note=(
                    "a score is one model's mean, not a paired difference, with its SE and df "
                    f"by the contrasts' method ({fit.df_label}): "
                    + ("CR2 at the unit of the model's own weighted mean (an adjusted score: of "
                       "its unit contributions), as a pair's" if fit.df_method == "cr2"
                       and fit.method != "aggregate" and spec.unit is not None else
                       "the model's own fit y ~ 1 + (random terms)")),
                model="y ~ 1 + " + (" + ".join(f"(1|{t})" for t in spec.term_names)
                                    if spec.random else "(cells independent)"),
                unit=unit, mixed_methods=bool(mixed), **extra), "design_effect", "variance_ratio")
