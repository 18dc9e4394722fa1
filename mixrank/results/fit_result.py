"""Stage results: the fitted object over all pairs and its tidy accessors.

Inputs: a :class:`~mixrank.frame.Frame` and the engine's per-pair fits.
Outputs: :class:`FitResult` with ``contrasts``, ``variance_components``,
``design_effect``, ``diagnostics``, ``model_scores`` and ``summary``; the
inference and design layers add ``rank_intervals``, ``resolution`` and
``plan`` (imported lazily so that the import graph stays one-way).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._util import tidy
from ..engine.native import PairFit
from ..frame import Frame
from .anova import anova_table
from .interactions import contrasts_by

__all__ = ["FitResult"]


@dataclass(frozen=True, eq=False)
class FitResult:
    """Result of :func:`mixrank.fit`: one paired mixed model per pair of models.

    Orientation: for a row ``(model_a, model_b)`` the estimate is the mean of
    ``model_a - model_b`` (positive favours ``model_a``).
    """

    frame: Frame
    pairs: tuple[PairFit, ...]
    method: str
    engine: str
    estimand: str
    level: float

    # ------------------------------------------------------------------ meta
    def _meta(self, table: str, **extra: Any) -> dict:
        m = dict(table=table, formula=self.frame.spec.formula, method=self.method,
                 engine=self.engine, estimand=self.estimand,
                 df_method="satterthwaite" if self.method == "reml" else "units - 1")
        m.update(extra)
        return m

    @property
    def models(self) -> tuple[str, ...]:
        return self.frame.models

    def pair(self, model_a: str, model_b: str) -> PairFit:
        """The fit of one pair (either orientation is found; the stored one is returned)."""
        for p in self.pairs:
            if {p.model_a, p.model_b} == {str(model_a), str(model_b)}:
                return p
        from ..errors import DataError
        raise DataError(f"pair ({model_a!r}, {model_b!r}) was not fitted; fitted pairs: "
                        f"{[(p.model_a, p.model_b) for p in self.pairs][:10]}...")

    # ---------------------------------------------------------------- tables
    def contrasts(self, level: float | None = None, *, by: str | None = None) -> pd.DataFrame:
        """Pairwise contrasts ``model_a - model_b``.

        ``by`` (model x covariate formulas only): the gap per level of that
        covariate (or per unit of a numeric one), see
        :func:`mixrank.results.interactions.contrasts_by`; without it, an
        interaction fit reports the overall gap of its estimand
        (docs/interactions.md §3).

        Returns
        -------
        pandas.DataFrame
            ``model_a, model_b, estimate, std_error, df, statistic`` (t),
            ``p_value`` (two-sided), ``p_greater`` (one-sided, H1: model_a
            better), ``ci_lower, ci_upper, level, n`` (common cells).

        Notes
        -----
        ``t = estimate / std_error`` referred to ``t_df`` with Satterthwaite
        df (REML) or units - 1 (aggregate).  Validated against lme4 1.1 +
        lmerTest 3.1 (``tests/reference/lme4_engine.R``).
        """
        lev = self.level if level is None else float(level)
        if by is not None:
            return contrasts_by(self, by, lev)
        rows = []
        q = stats.t.ppf(0.5 + lev / 2, [p.df for p in self.pairs]) if self.pairs else []
        for p, qq in zip(self.pairs, np.atleast_1d(q)):
            se = p.std_error
            t = p.estimate / se
            rows.append(dict(model_a=p.model_a, model_b=p.model_b, estimate=p.estimate,
                             std_error=se, df=p.df, statistic=t,
                             p_value=float(2 * stats.t.sf(abs(t), p.df)),
                             p_greater=float(stats.t.sf(t, p.df)),
                             ci_lower=p.estimate - qq * se, ci_upper=p.estimate + qq * se,
                             level=lev, n=p.n))
        return tidy(rows, **self._meta("contrasts"))

    def anova(self, *, adjust: str = "none") -> pd.DataFrame:
        """Per pair, F tests that the gap is the same at every level of each covariate term.

        See :func:`mixrank.results.anova.anova_table` (lmerTest ``anova(type = 3)``);
        ``adjust="holm"`` adds ``p_adjusted`` (Holm across pairs, per term).
        """
        return anova_table(self, adjust=adjust)

    def variance_components(self) -> pd.DataFrame:
        """Variance components per pair.

        Returns
        -------
        pandas.DataFrame
            ``model_a, model_b, group`` (component as written in the formula,
            or ``residual``), ``variance, std_dev, share`` (variance / total).
        """
        rows = []
        for p in self.pairs:
            tot = float(np.nansum(list(p.components.values())))
            for g, v in p.components.items():
                rows.append(dict(model_a=p.model_a, model_b=p.model_b, group=g, variance=v,
                                 std_dev=float(np.sqrt(v)), share=v / tot if tot > 0 else np.nan))
        return tidy(rows, **self._meta("variance_components"))

    def design_effect(self) -> pd.DataFrame:
        """Design effect per pair: ``DE = Var(estimate) / (sigma_iid^2 / n)``.

        Returns
        -------
        pandas.DataFrame
            ``model_a, model_b, n, sigma_iid`` (sample SD of the cell
            differences), ``variance`` (of the estimate under the fitted
            model), ``design_effect``, ``n_eff = n / design_effect``.
        """
        rows = [dict(model_a=p.model_a, model_b=p.model_b, n=p.n, sigma_iid=p.sigma_iid,
                     variance=p.variance, design_effect=p.design_effect,
                     n_eff=p.n / p.design_effect) for p in self.pairs]
        return tidy(rows, **self._meta("design_effect"))

    def diagnostics(self) -> pd.DataFrame:
        """Convergence and design diagnostics per pair.

        Returns
        -------
        pandas.DataFrame
            ``model_a, model_b, n, only_a, only_b`` (cells scored for one
            model only), ``criterion`` (REML criterion), ``converged``,
            ``boundary`` (components at zero, comma-separated), ``gradient``
            (max abs gradient on free components), ``nfev``, ``message``.
        """
        rows = [dict(model_a=p.model_a, model_b=p.model_b, n=p.n, only_a=p.only_a,
                     only_b=p.only_b, criterion=p.criterion, converged=p.converged,
                     boundary=",".join(p.boundary), gradient=p.gradient, nfev=p.nfev,
                     message=p.message) for p in self.pairs]
        return tidy(rows, **self._meta("diagnostics"))

    def model_scores(self) -> pd.DataFrame:
        """Mean score of each model over the cells it was scored on.

        Returns
        -------
        pandas.DataFrame
            ``model, estimate`` (mean cell score), ``n`` (cells scored).
        """
        f = self.frame
        n = f.observed.sum(axis=0)
        s = np.where(f.observed, f.scores, 0.0).sum(axis=0)
        rows = [dict(model=m, estimate=float(s[j] / n[j]), n=int(n[j]))
                for j, m in enumerate(f.models)]
        return tidy(rows, **self._meta("model_scores"))

    def summary(self):
        """An lme4-like summary (one pair) or a compact table (many pairs)."""
        from .summary import Summary

        return Summary(self)

    def __repr__(self) -> str:
        return (f"<FitResult {self.frame.spec.formula!r}: {len(self.pairs)} pair(s) of "
                f"{len(self.models)} models, method={self.method}, engine={self.engine}>")

    # ---------------------------------------------- inference / design layers
    def rank_intervals(self, level: float = 0.95, *, coverage: str = "marginal",
                       method: str = "holm", B: int = 2000, rng: Any = None) -> pd.DataFrame:
        """Rank confidence intervals; see :func:`mixrank.inference.ranks.rank_intervals_fit`."""
        from ..inference.ranks import rank_intervals_fit

        return rank_intervals_fit(self, level=level, coverage=coverage, method=method, B=B, rng=rng)

    def resolution(self, **kwargs: Any) -> pd.DataFrame:
        """Resolution verdicts per pair; see :func:`mixrank.design.resolution.resolution_fit`."""
        from ..design.resolution import resolution_fit

        return resolution_fit(self, **kwargs)

    def plan(self, delta: float, **kwargs: Any) -> pd.DataFrame:
        """Design planning from fitted components; see :func:`mixrank.design.plan.plan_fit`."""
        from ..design.plan import plan_fit

        return plan_fit(self, delta, **kwargs)
