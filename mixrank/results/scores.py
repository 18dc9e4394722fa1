"""Stage results: each model's score with its uncertainty at the formula's unit.

Inputs: a :class:`~mixrank.results.FitResult`.  Outputs: the tidy table of
:meth:`FitResult.model_scores` (one row per model).  Contents:
:func:`model_scores_table`.  The per-model fits
(:func:`mixrank.engine.lmm.single.fit_models`) are cached per fit and estimand,
so that the report, rank intervals and verdict tables that order models by
their score fit each model once.
"""

from __future__ import annotations

import warnings
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from .._util import check_level, tidy
from ..engine.estimability import score_groups
from ..engine.lmm.native import ESTIMANDS
from ..engine.lmm.single import ModelFit, fit_models
from ..errors import DesignError, MixrankWarning

if TYPE_CHECKING:
    import pandas as pd

    from .fit_result import FitResult

__all__ = ["model_scores_table", "model_fits"]

_CACHE: weakref.WeakKeyDictionary[Any, dict[str, list[ModelFit]]] = weakref.WeakKeyDictionary()


def model_fits(fit: FitResult, estimand: str) -> list[ModelFit]:
    """The per-model fits of ``fit`` for ``estimand`` (computed once per fit)."""
    per = _CACHE.setdefault(fit, {})
    if estimand not in per:
        per[estimand] = fit_models(fit.frame, method=fit.method, estimand=estimand,
                                   engine=fit.engine, control=fit.control)
    return per[estimand]


def model_scores_table(fit: FitResult, *, level: float | None = None,
                       estimand: str | None = None) -> pd.DataFrame:
    """One row per model: its score with CI at the formula's unit of inference.

    See :meth:`mixrank.results.FitResult.model_scores` for the columns.
    """
    lev = fit.level if level is None else check_level(level, DesignError)
    est = fit.estimand if estimand is None else estimand
    if est not in ESTIMANDS:
        raise DesignError(f"estimand={estimand!r}; expected one of {ESTIMANDS}")
    fits = model_fits(fit, est)
    rows = []
    for m in fits:
        se = m.std_error
        q = float(stats.t.ppf(0.5 + lev / 2, m.df)) if np.isfinite(m.df) and m.df > 0 else np.nan
        rows.append(dict(model=m.model, estimate=m.estimate, std_error=se, df=m.df,
                         ci_lower=m.estimate - q * se, ci_upper=m.estimate + q * se, level=lev,
                         n=m.n, sigma_iid=m.sigma_iid, design_effect=m.design_effect,
                         iid_std_error=m.iid_std_error, note=m.note))
    spec = fit.frame.spec
    extra = {}
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
    return tidy(rows, table="model_scores", formula=spec.formula, method=fit.method,
                engine=fit.engine, estimand=est,
                df_method="satterthwaite" if fit.method == "reml" else "units - 1",
                model="y ~ 1 + " + (" + ".join(f"(1|{t})" for t in spec.term_names)
                                    if spec.random else "(cells independent)"),
                unit=spec.unit or "cell", **extra)
