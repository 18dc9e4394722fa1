"""Stage results: the binomial GLMM with a model x NUMERIC covariate (``model * x``).

Inputs: a :class:`~mixrank.engine.glmm.fit.GlmmFit` whose fixed effects are an
intercept and a slope in ``x`` per model (``beta[:M]``, ``beta[M:]``; the
column space of glmer's treatment-coded ``model * x``), the frame, and the
value of ``x`` at each cell.  Outputs: :class:`GlmmSlopeResult`, a
:class:`~mixrank.results.glmm.result.GlmmResult` whose ``contrasts`` and
``model_scores`` are evaluated at chosen values of ``x`` (``at=``; default
its mean over the cells, with ``by="x"`` its quartiles), ``anova()`` (Wald
chi-square of each pair's slope difference and of all slopes equal), and
``fixed_effects()`` in glmer's coding.  Statistical notes: docs/glmm.md §11.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from ..._util import tidy
from ...errors import DataError, DesignError
from ...inference.multiplicity import adjust_values, adjust_within
from ..base import ANY, OptionTable, PairEstimates, with_options
from .result import AT_ZERO, GLMM_OPTIONS, PROBABILITY, REFUSED_JOINT, GlmmResult

__all__ = ["GlmmSlopeResult"]

#: What ``estimate`` is in a ranked table on each scale (``x0``: the value of the covariate).
SLOPE_SCORE = {"logit": "log-odds a_j + b_j x0 at zero random effects (the quantity the "
                        "logit-scale tests compare)",
               "response": "probability at x0 averaged over the frame's cells (fitted shared "
                           "random effects, model-by-unit effects at 0; the quantity the "
                           "response-scale tests compare)"}
#: Quantiles of x over the cells used by ``by="x"`` without ``at`` (emmeans-style grid).
QUARTILES = (0.25, 0.5, 0.75)


#: ``adjust=`` of the contrasts and anova: p-values adjusted within each set of pairs.
PER_SET = adjust_values("glmm_anova")
#: Options of :class:`GlmmSlopeResult`: those of :class:`GlmmResult` with ``by=``, ``at=``
#: and ``anova``.
GLMM_SLOPE_OPTIONS = with_options(GLMM_OPTIONS, contrasts={"by": ANY, "at": ANY,
                                                           "adjust": PER_SET},
                                  model_scores={"by": ANY, "at": ANY},
                                  rank_intervals={"by": ANY, "at": ANY},
                                  anova={"adjust": PER_SET})
for _unused in ("draws", "rng"):     # no jointly drawn adjustment here
    GLMM_SLOPE_OPTIONS["contrasts"].pop(_unused)


@dataclass(frozen=True, eq=False, repr=False)
class GlmmSlopeResult(GlmmResult):
    """Result of a binomial ``model * x`` fit with a numeric ``x`` (docs/glmm.md §11).

    Model j's log-odds at ``x = x0`` (zero random effects) is ``a_j + b_j x0``;
    the accessors evaluate it at ``at`` values of ``x`` (docs/glmm.md §11):
    without ``by``/``at`` at the mean of ``x`` over the frame's cells (as
    emmeans' reference grid holds a covariate at its mean), with
    ``by="<x>"`` and no ``at`` at its quartiles over the cells.

    Examples
    --------
    >>> import mixrank
    >>> df = mixrank.load_example().query("model in ['m01', 'm02', 'm03']")
    >>> df = df.assign(length=df["prompt"].str[1].astype(int))   # a numeric covariate
    >>> s = mixrank.fit("correct ~ model * length + (1|subject:model)", df, family="binomial")
    >>> type(s).__name__, s.by
    ('GlmmSlopeResult', 'length')
    """

    OPTIONS: ClassVar[OptionTable] = GLMM_SLOPE_OPTIONS
    DEFAULT_ADJUST: ClassVar[str] = "holm"
    REFUSED: ClassVar[dict[tuple[str, str, Any], str]] = REFUSED_JOINT
    by: str = ""
    cell_x: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)

    def __str__(self) -> str:
        return (f"<GlmmSlopeResult {self.formula.formula!r}: binomial GLMM, {len(self.models)} "
                f"models with a slope in {self.by!r}, nAGQ={self.fit.nagq}>")

    # ------------------------------------------------------------- internals
    def _at(self, by: str | None, at: float | Sequence[float] | None) -> np.ndarray:
        """The values of x to evaluate at (checked)."""
        if by is not None and by != self.by:
            raise DesignError(f"by={by!r}: the formula crosses the model with {self.by!r} only; "
                              f"use by={self.by!r}")
        if at is None:
            x = self.cell_x
            return (np.array([float(np.mean(x))]) if by is None
                    else np.quantile(x, QUARTILES))
        vals = np.atleast_1d(np.asarray(at, dtype=object))
        try:
            out = vals.astype(np.float64)
        except (TypeError, ValueError):
            raise DesignError(f"at={at!r}: expected a number or a list of numbers (values of "
                              f"{self.by!r})") from None
        if out.ndim != 1 or not len(out) or not np.all(np.isfinite(out)):
            raise DesignError(f"at={at!r}: expected finite values of {self.by!r}")
        return out

    def _score(self, j: int, x0: float, scale: str) -> tuple[float, np.ndarray]:
        """Model j's score at ``x = x0`` on ``scale`` and its gradient in beta."""
        M, b = len(self.models), self.fit.beta
        g = np.zeros(len(b))
        if scale == "logit":
            g[j], g[M + j] = 1.0, x0
            return float(g @ b), g
        p = expit(b[j] + b[M + j] * x0 + self.fit.cell_effects)
        d = float(np.mean(p * (1 - p)))
        g[j], g[M + j] = d, d * x0
        return float(p.mean()), g

    def _check(self, level: float | None, scale: str) -> float:
        self.check_option("contrasts", "scale", scale)
        return self._level(level)

    # ---------------------------------------------------------------- tables
    def _pair_estimates(self, level: float, *, scale: str = "logit", df: str | None = None,
                        by: str | None = None,
                        at: float | Sequence[float] | None = None) -> PairEstimates:
        """The pair estimates at chosen values ``x0`` of the covariate (docs/glmm.md §11).

        ``logit``: ``(a_a + b_a x0) - (a_b + b_b x0)``, the log odds ratio at
        ``x = x0``; ``response``: the average marginal effect at ``x0`` (the
        difference in probability at ``x = x0`` averaged over the frame's cells,
        model-by-unit effects at 0), delta-method SE.  glmer's Wald z is the only
        reference (``df="wald"``).  ``at`` default: the mean of ``x`` over the
        cells (with ``by``, its quartiles); adjusted within each value of ``x0``.
        The logit contrasts are linear in glmer's fixed effects, validated against
        lme4 1.1 ``glmer`` (``tests/reference/glmer_slope.R``).
        """
        lev = level
        if df not in (None, "wald"):
            raise DesignError(f"df={df!r}: model x numeric covariate GLMM contrasts are glmer's "
                              "Wald z tests (df='wald'); the containment t is not available "
                              "for them")
        xs = self._at(by, at)
        q = stats.norm.ppf(0.5 + lev / 2)
        V = self.fit.vcov
        rows = []
        for x0 in xs:
            for j, k in self._pairs():
                (ea, ga), (eb, gb) = self._score(j, x0, scale), self._score(k, x0, scale)
                est, g = ea - eb, ga - gb
                se = float(np.sqrt(max(g @ V @ g, 0.0)))
                both = self.frame.common_mask(j, k)
                row: dict[str, Any] = dict(model_a=self.models[j], model_b=self.models[k])
                row[self.by] = float(x0)
                row.update(self.contrast_row(self.models[j], self.models[k], est, se, np.inf,
                                             q, stats.norm.sf, level=lev, n=int(both.sum()),
                                             trials=self._trials(j, k)))
                if scale == "logit":
                    row.update(odds_ratio=float(np.exp(est)),
                               odds_ratio_lower=float(np.exp(est - q * se)),
                               odds_ratio_upper=float(np.exp(est + q * se)))
                rows.append(row)
        return PairEstimates(rows, self._meta("contrasts", scale=scale, by=by,
                                              at=[float(x) for x in xs],
                                              df_method="Wald z (normal), as glmer"),
                             within=self.by)

    def model_scores(self, level: float | None = None, *,
                     scale: Literal["logit", "response"] = "logit",
                     by: str | None = None,
                     at: float | Sequence[float] | None = None) -> pd.DataFrame:
        """Each model's score at chosen values of the covariate, on one scale.

        ``logit``: ``a_j + b_j x0`` (zero random effects) with its Wald
        interval; ``response``: the probability at ``x0`` averaged over the
        frame's cells, its interval the logit interval transformed, SE by
        the delta method.

        Parameters
        ----------
        level : float, optional
            Confidence level; default the fit's.
        scale : {"logit", "response"}, default "logit"
            The scale of the scores.
        by, at : str, float or list of float, optional
            As :meth:`contrasts`: the covariate and its values.

        Returns
        -------
        pandas.DataFrame
            ``model, <x>, estimate, std_error, ci_lower, ci_upper, level, n``
            (cells), ``trials, observed`` (successes / trials over all
            cells), ``logit, logit_std_error, probability,
            probability_at_zero`` (both at ``x0``).

        Raises
        ------
        DesignError
            ``by`` not the fitted covariate, or ``at`` not finite numbers.
        OptionError
            ``scale`` not one of the scales, or ``level`` outside (0, 1).

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example().query("model in ['m01', 'm02', 'm03']")
        >>> df = df.assign(length=df["prompt"].str[1].astype(int))   # a numeric covariate
        >>> s = mixrank.fit("correct ~ model * length + (1|subject:model)", df, family="binomial")
        >>> ms = s.model_scores(by="length")     # at the quartiles of length over the cells
        >>> ms[["model", "length"]].values.tolist()[:4]
        [['m01', 1.75], ['m02', 1.75], ['m03', 1.75], ['m01', 2.5]]
        """
        lev = self._check(level, scale)
        xs = self._at(by, at)
        q = stats.norm.ppf(0.5 + lev / 2)
        f = self.fit
        cells = self.frame.observed.sum(axis=0)
        rows = []
        for x0 in xs:
            for j, m in enumerate(self.models):
                lo_, glo = self._score(j, x0, "logit")
                lse = float(np.sqrt(max(glo @ f.vcov @ glo, 0.0)))
                p, gp = self._score(j, x0, "response")
                if scale == "logit":
                    est, se, lo, hi = lo_, lse, lo_ - q * lse, lo_ + q * lse
                else:
                    est = p
                    se = float(np.sqrt(max(gp @ f.vcov @ gp, 0.0)))
                    # the average probability increases in the log-odds a_j + b_j x0
                    lo = float(expit(lo_ - q * lse + f.cell_effects).mean())
                    hi = float(expit(lo_ + q * lse + f.cell_effects).mean())
                row: dict[str, Any] = dict(model=m)
                row[self.by] = float(x0)
                row.update(estimate=float(est), std_error=float(se), ci_lower=float(lo),
                           ci_upper=float(hi), level=lev, n=int(cells[j]),
                           trials=int(f.trials[j]), observed=float(f.successes[j] / f.trials[j]),
                           logit=float(lo_), logit_std_error=lse, probability=float(p),
                           probability_at_zero=float(expit(lo_)))
                rows.append(row)
        return tidy(rows, **self._meta("model_scores", scale=scale, by=by,
                                       at=[float(x) for x in xs],
                                       score=f"{SLOPE_SCORE[scale]}, {self.by} = x0",
                                       probability=PROBABILITY,
                                       probability_at_zero=f"{AT_ZERO} at {self.by} = x0",
                                       response_form=self.response_form))

    def _rank_intervals(self, level: float, *, coverage: str, adjust: str, draws: int,
                        rng: Any, scale: Any = "logit", by: str | None = None,
                        at: float | Sequence[float] | None = None) -> pd.DataFrame:
        """Rank intervals at each value of the covariate (``by``/``at`` as :meth:`contrasts`).

        At each ``x0`` the point scores are :meth:`model_scores` and the
        tests :meth:`contrasts` there, on one ``scale``.  Columns as
        :meth:`GlmmResult.rank_intervals` plus ``<x>``.
        """
        from ...inference.ranks.intervals import rank_intervals_from_contrasts

        if self.pair_filter is not None:
            raise DataError("rank intervals need every pair; refit without pairs=")
        self._check(None, scale)
        xs = self._at(by, at)
        scores = self.model_scores(level, scale=scale, at=list(xs))
        con = self.contrasts(level, scale=scale, at=list(xs))
        parts = []
        for x0 in xs:
            tab = rank_intervals_from_contrasts(
                scores[scores[self.by] == x0][["model", "estimate", "n"]],
                con[con[self.by] == x0], level=level, coverage=coverage, adjust=adjust,
                draws=draws, rng=rng)
            tab.insert(1, self.by, float(x0))
            parts.append(tab)
        out = pd.concat(parts, ignore_index=True)
        out.attrs["mixrank"] = dict(parts[0].attrs.get("mixrank", {}), source="glmm",
                                    formula=self.formula.formula, scale=scale,
                                    score=f"{SLOPE_SCORE[scale]}, {self.by} = x0", by=by,
                                    at=[float(x) for x in xs], unit=self.unit_of_inference,
                                    response_form=self.response_form)
        return out

    def anova(self, adjust: Literal["holm", "none", "bh", "bonferroni"] = "none") -> pd.DataFrame:
        """Do the models' slopes in the covariate differ?  Wald chi-square tests of ``model:x``.

        Per pair: H0 ``b_a = b_b`` (1 df).  Last row (``model_a = model_b =
        "(all)"``): the joint test of glmer's ``model:x`` coefficients (all
        slopes equal, ``M - 1`` df).  ``f_value`` = chi-square / df.

        Parameters
        ----------
        adjust : {"none", "holm", "bh", "bonferroni"}, default "none"
            The adjustment of ``p_adjusted`` across the pairs (none: no column).

        Returns
        -------
        pandas.DataFrame
            ``term, model_a, model_b, estimate`` (``b_a - b_b``; NaN on the
            joint row), ``std_error, statistic, df, f_value, p_value``
            (``p_adjusted`` across the pairs when ``adjust`` is not "none").

        Raises
        ------
        OptionError
            ``adjust`` not one of the values above.

        Notes
        -----
        The pair statistic is ``((b_a - b_b) / SE)^2`` from glmer's
        ``fixef``/``vcov`` (``tests/engine/test_glmm_slope_reference.py``).

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example().query("model in ['m01', 'm02', 'm03']")
        >>> df = df.assign(length=df["prompt"].str[1].astype(int))   # a numeric covariate
        >>> s = mixrank.fit("correct ~ model * length + (1|subject:model)", df, family="binomial")
        >>> s.anova()[["model_a", "model_b", "df"]].values.tolist()
        [['m01', 'm02', 1], ['m01', 'm03', 1], ['m02', 'm03', 1], ['(all)', '(all)', 2]]
        """
        adjust = self.check_option("anova", "adjust", adjust)
        b, V, M = self.fit.beta, self.fit.vcov, len(self.models)
        term = f"{self.formula.spec.comparison}:{self.by}"
        rows = []
        for j, k in self._pairs():
            g = np.zeros(len(b))
            g[M + j], g[M + k] = 1.0, -1.0
            est, se = float(g @ b), float(np.sqrt(max(g @ V @ g, 0.0)))
            chi = (est / se) ** 2 if se > 0 else np.nan
            rows.append(dict(term=term, model_a=self.models[j], model_b=self.models[k],
                             estimate=est, std_error=se, statistic=chi, df=1, f_value=chi,
                             p_value=float(stats.chi2.sf(chi, 1))))
        out = tidy(rows, **self._meta("anova", test="Wald chi-square", adjust=adjust))
        if adjust != "none" and len(out):
            out["p_adjusted"] = adjust_within(out["p_value"].to_numpy(),
                                              [np.arange(len(out))], adjust)
        Lm = np.zeros((M - 1, len(b)))
        Lm[np.arange(M - 1), M + 1 + np.arange(M - 1)] = 1.0
        Lm[:, M] = -1.0
        d = Lm @ b
        chi = float(d @ np.linalg.solve(Lm @ V @ Lm.T, d))
        joint = pd.DataFrame([dict(term=term, model_a="(all)", model_b="(all)", estimate=np.nan,
                                   std_error=np.nan, statistic=chi, df=M - 1,
                                   f_value=chi / (M - 1),
                                   p_value=float(stats.chi2.sf(chi, M - 1)))])
        res = pd.concat([out, joint], ignore_index=True)
        res.attrs = out.attrs
        return res

    def fixed_effects(self) -> pd.DataFrame:
        """glmer's treatment coding of ``model * x``: ``(Intercept), <model><m>..., <x>,
        <model><m>:<x>...`` (intercept and slope of the first model, differences of the others).

        Returns
        -------
        pandas.DataFrame
            ``term, estimate, std_error, statistic`` (z), ``p_value``.

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example().query("model in ['m01', 'm02', 'm03']")
        >>> df = df.assign(length=df["prompt"].str[1].astype(int))   # a numeric covariate
        >>> s = mixrank.fit("correct ~ model * length + (1|subject:model)", df, family="binomial")
        >>> s.fixed_effects()["term"].tolist()
        ['(Intercept)', 'modelm02', 'modelm03', 'length', 'modelm02:length', 'modelm03:length']
        """
        out = super().fixed_effects()
        comp = self.formula.spec.comparison
        out["term"] = [t if t in ("(Intercept)", self.by) else comp + t[len("model"):]
                       for t in out["term"]]
        return out

    def pass_at_k(self, k: int, level: float | None = None) -> pd.DataFrame:
        """Not available for a slope fit.

        Parameters
        ----------
        k : int
            As :meth:`GlmmResult.pass_at_k`.
        level : float, optional
            As :meth:`GlmmResult.pass_at_k`.

        Returns
        -------
        pandas.DataFrame
            Never: always raises.

        Raises
        ------
        DesignError
            Always: fit ``... ~ model + (random terms)`` for the model-based pass@k.

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example().query("model in ['m01', 'm02', 'm03']")
        >>> df = df.assign(length=df["prompt"].str[1].astype(int))   # a numeric covariate
        >>> s = mixrank.fit("correct ~ model * length + (1|subject:model)", df, family="binomial")
        >>> try:
        ...     s.pass_at_k(5)
        ... except mixrank.DesignError as e:
        ...     print(str(e).split(";")[0])
        pass_at_k() of a model * x fit is not available
        """
        raise DesignError("pass_at_k() of a model * x fit is not available; fit "
                          "'... ~ model + (random terms)' for the model-based pass@k")
