"""Stage results: rank confidence intervals per level of a covariate (where the ranking changes).

Inputs: a :class:`~mixrank.results.FitResult` of a model x covariate formula
and a categorical covariate ``by``.  Outputs: the table of
:func:`mixrank.inference.ranks.rank_intervals_from_contrasts` for each level,
stacked, with a column named ``by`` and a ``note``.

Per level, the point scores are each model's score at that level
(``model_scores(by=)``) and the tests are the per-level gaps
(``contrasts(by=)``, Satterthwaite df), so the intervals are those of
docs/interactions.md §4 fed to the rank procedures of the rank-interval
module.  At a level where some models have no cells, the others are ranked
among themselves and the absent ones get NaN rows; the ``note`` says so.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._util import tidy
from ..errors import DesignError
from ..inference.ranks.agreement import comparisons_meta
from ..inference.ranks.intervals import rank_intervals_from_contrasts
from .interactions import check_by

__all__ = ["rank_intervals_by"]


def rank_intervals_by(fit: Any, by: str, *, level: float = 0.95, coverage: str = "marginal",
                      adjust: str = "holm", draws: int = 2000, rng: Any = None) -> pd.DataFrame:
    """Rank confidence intervals of the models at each level of ``by``.

    Returns
    -------
    pandas.DataFrame
        ``model, <by>`` then the columns of
        :func:`~mixrank.inference.ranks.rank_intervals_from_contrasts`
        (``estimate, rank, rank_lower, rank_upper, level, n``, ...) and
        ``note`` (why a level's rows are NaN).

    Raises
    ------
    DataError
        ``by`` is not a covariate of the formula.
    DesignError
        ``by`` is numeric (ranks per level need levels), unknown options.
    """
    design = check_by(fit, by)
    if by in design.numeric:
        raise DesignError(f"by={by!r} is numeric; rank intervals per level need a categorical "
                          "covariate")
    scores = fit.model_scores(by=by)
    con = fit.contrasts(by=by, adjust="none")
    parts = []
    for lev in pd.unique(scores[by]):
        s = scores[(scores[by] == lev)]
        present = set(s.loc[s["estimate"].notna(), "model"])
        c = con[(con[by] == lev) & con["model_a"].isin(present) & con["model_b"].isin(present)]
        absent = s[~s["model"].isin(present)]
        rows = [pd.DataFrame(dict(model=absent["model"].to_numpy(), estimate=np.nan, rank=np.nan,
                                  rank_lower=np.nan, rank_upper=np.nan, level=level, n=0,
                                  note=f"no cells at {by} = {lev!r}"))] if len(absent) else []
        if len(present) >= 2 and c["estimate"].notna().all():
            part = rank_intervals_from_contrasts(
                s.loc[s["model"].isin(present), ["model", "estimate", "n"]].reset_index(drop=True),
                c.reset_index(drop=True), level=level, coverage=coverage, adjust=adjust,
                draws=draws, rng=rng).copy()
            part["note"] = "" if not len(absent) else f"ranked among the {len(present)} models with cells"
            rows.insert(0, part)
        elif len(present):
            kept = s[s["model"].isin(present)]
            rows.insert(0, pd.DataFrame(dict(
                model=kept["model"].to_numpy(), estimate=kept["estimate"].to_numpy(), rank=np.nan,
                rank_lower=np.nan, rank_upper=np.nan, level=level, n=kept["n"].to_numpy(),
                note=f"not ranked: fewer than 2 models, or pairs without common cells, at "
                     f"{by} = {lev!r}")))
        part = pd.concat(rows, ignore_index=True)
        part.insert(1, by, lev)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    n_models = int(out.groupby(by)["model"].nunique().max()) if len(out) else 0
    return tidy(out, table="rank_intervals", by=by, formula=fit.frame.spec.formula,
                coverage=coverage, method=adjust, **comparisons_meta(coverage, n_models, adjust))
