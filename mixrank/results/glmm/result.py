"""Stage results: the binomial GLMM fit and its tidy accessors.

Inputs: a :class:`~mixrank.frame.Frame`, a GlmmFormula and the engine's GlmmFit.  Outputs:
:class:`GlmmResult`, with the accessors of :class:`~mixrank.results.FitResult` (``contrasts``
takes ``scale``) plus ``fixed_effects``, ``unit_of_inference``.  Notes: docs/glmm.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from ..._display import format_at, format_p, format_se, format_signif, se_decimals, wrap
from ..._util import TextDisplay, tidy
from ...engine.glmm.fit import GlmmFit
from ...errors import DataError, DesignError
from ...formula.glmm_terms import GlmmFormula
from ...frame import Frame
from ...inference.multiplicity import adjust_values
from ..base import ANY, RANK_OPTIONS, RESOLUTION_OPTIONS, OptionTable, PairEstimates
from ..pairwise_result import PairwiseResult
from .flips import GlmmFlips, flips_apply, flips_ready

__all__ = ["GlmmResult", "GlmmSummary", "GLMM_OPTIONS", "unit_line"]

SCALES = ("logit", "response")
#: What ``estimate`` is in a ranked table on each scale (stated in attrs and headers).
SCORE = {"logit": "log-odds beta_j at zero random effects (the quantity the logit-scale "
                  "tests compare)",
         "response": "probability averaged over the frame's cells (fitted shared random "
                     "effects, model-by-unit effects at 0; the quantity the response-scale "
                     "tests compare)"}
PROBABILITY = ("averaged over the frame's cells at their fitted shared random effects "
               "(conditional modes), model-by-unit effects at 0")
AT_ZERO = "conditional at zero random effects: logit^-1(beta_j)"
ADJUST = adjust_values("glmm_contrasts")
#: Why the ``model * x`` fits refuse the jointly drawn adjustments that GlmmResult takes.
REFUSED_JOINT: dict[tuple[str, str, Any], str] = {
    ("contrasts", "adjust", a): "the unit sign flips of the score contributions are built "
    "for the model contrasts of a 'model + (random terms)' fit; a model * x fit reports a "
    "set of pairs per level or value of x, adjusted within each set: use 'holm'"
    for a in ("maxt", "stepdown")}
#: references of ``GlmmResult.contrasts(df=)``.
GLMM_DF = ("containment", "wald")


def _after_flips(tab: pd.DataFrame, unit: str) -> pd.DataFrame:
    """The odds-ratio bounds made the exponentiated (possibly simultaneous) logit bounds;
    with the unit flips, ``attrs["mixrank"]["flip_unit"]`` names the flipped grouping and
    ``unit`` stays the unit-of-inference sentence of every GLMM table."""
    if "odds_ratio_lower" in tab.columns:
        tab["odds_ratio_lower"] = np.exp(tab["ci_lower"].to_numpy(dtype=float))
        tab["odds_ratio_upper"] = np.exp(tab["ci_upper"].to_numpy(dtype=float))
    meta = tab.attrs.get("mixrank", {})
    if "flips" in meta:
        meta["flip_unit"], meta["unit"] = meta.get("unit"), unit
    return tab


def unit_line(gf: GlmmFormula) -> str:
    """One sentence naming the unit of inference of the model contrasts and how to change it."""
    comp = gf.spec.comparison
    if gf.model_terms:
        units = ", ".join(":".join(f for f in t if f != comp) for t in gf.model_terms)
        return (f"unit of inference for model contrasts: {units} (via "
                + ", ".join(f"(1|{':'.join(t)})" for t in gf.model_terms) + ")")
    first = gf.spec.term_names[0].split(":")[0] if gf.spec.random else "subject"
    return (f"unit of inference for model contrasts: cells (random terms without {comp!r} cancel "
            f"from the contrasts); add (1|{first}:{comp}) to make {first} the unit of inference")


#: Options of :class:`GlmmResult` per accessor (accessor -> option -> allowed values, None: any).
GLMM_OPTIONS: dict[str, dict[str, tuple[Any, ...] | None]] = {
    "contrasts": {"scale": SCALES, "adjust": ADJUST, "df": GLMM_DF, "draws": ANY, "rng": ANY},
    "rank_intervals": {**RANK_OPTIONS, "scale": SCALES},
    "resolution": {**RESOLUTION_OPTIONS, "models": ANY, "top": ANY},
    "model_scores": {"scale": SCALES},
    "pass_at_k": {"k": ANY},
}


@dataclass(frozen=True, eq=False, repr=False)
class GlmmResult(PairwiseResult):
    """Result of ``mixrank.fit(..., family="binomial")``: one joint glmer-style fit.

    Orientation: for a row ``(model_a, model_b)`` the estimate is
    ``model_a - model_b`` (log-odds, or probability on the response scale).

    Examples
    --------
    >>> import mixrank
    >>> mixrank.fit("correct ~ model + (1|subject:model)", mixrank.load_example(), family="binomial")
    <GlmmResult 'correct ~ model + (1|subject:model)': binomial GLMM, 6 models, nAGQ=1>
    """

    frame: Frame
    formula: GlmmFormula
    fit: GlmmFit
    level: float
    pair_filter: tuple[str, ...] | None = None
    pairs_requested: tuple[tuple[str, str], ...] | None = None
    response_form: str = "0/1"
    family: str = "binomial"
    method: str = "glmm"
    engine: str = "native"
    estimand: str = "gls"
    OPTIONS: ClassVar[OptionTable] = GLMM_OPTIONS
    #: ``"stepdown"`` where the unit randomization applies exactly, else Holm (:meth:`_default_adjust`).
    DEFAULT_ADJUST: ClassVar[str] = "stepdown"

    # ------------------------------------------------------------------ meta
    @property
    def models(self) -> tuple[str, ...]:
        """The models compared, in the frame's order (a tuple of str)."""
        return self.frame.models

    @property
    def unit_of_inference(self) -> str:
        """A line naming the unit of inference of the formula (str)."""
        return unit_line(self.formula)

    def _meta(self, table: str, **extra: Any) -> dict:
        m = dict(table=table, formula=self.formula.formula, family="binomial",
                 nagq=self.fit.nagq, engine=self.engine, method=self.method,
                 unit=self.unit_of_inference)
        m.update(extra)
        return m

    def _pairs(self) -> list[tuple[int, int]]:
        """Index pairs of the contrasts: the requested pairs in their order and orientation
        (``pairs=[(a, b)]`` gives ``a - b``), else every pair in model order."""
        if self.pairs_requested is not None:
            return [(self.models.index(a), self.models.index(b)) for a, b in self.pairs_requested]
        M = len(self.models)
        keep = set(range(M)) if self.pair_filter is None else {
            self.models.index(m) for m in self.pair_filter}
        return [(j, k) for j in range(M) for k in range(j + 1, M) if j in keep and k in keep]

    def _trials(self, j: int, k: int, cells: np.ndarray | None = None) -> int:
        """Bernoulli trials of models j and k together on their common cells (of ``cells``)."""
        fr = self.frame
        both = fr.common_mask(j, k)
        if cells is not None:
            both = both & cells
        return int(fr.replicates[both, j].sum() + fr.replicates[both, k].sum())

    # ---------------------------------------------------------------- tables
    def unit_levels(self) -> int:
        """Levels of the unit of the first model-by-unit term.

        Returns
        -------
        int
            The count; 0 without such a term (cells are the units).

        Examples
        --------
        >>> import mixrank
        >>> g = mixrank.fit("correct ~ model + (1|subject:model)", mixrank.load_example(), family="binomial")
        >>> g.unit_levels()          # subjects: the unit of (1|subject:model)
        12
        """
        comp = self.formula.spec.comparison
        if not self.formula.model_terms:
            return 0
        cols = [f for f in self.formula.model_terms[0] if f != comp]
        if not all(c in self.frame.cells.columns for c in cols):
            return 0
        return int(self.frame.cells[cols].drop_duplicates().shape[0])

    def _reference(self, df: str | None) -> tuple[str, float]:
        """The contrasts' reference: ("containment", T - 1) or ("wald", inf) (docs/glmm.md)."""
        if df is not None and df not in GLMM_DF:
            raise DesignError(f"df={df!r} is not a reference for the binomial contrasts; "
                              f"expected one of {list(GLMM_DF)} ('wald' is glmer's z test).")
        T = self.unit_levels()
        if df == "wald" or (df is None and T < 3):
            return "wald", np.inf
        if T < 3:
            raise DesignError("df='containment' refers the contrasts to t with (units - 1) df "
                              "at the unit of a model-by-unit term such as (1|subject:model); "
                              + ("the formula has none" if T == 0 else f"its unit has {T} "
                                 "level(s), at least 3 are needed")
                              + ". Use df='wald' (glmer's z).")
        return "containment", float(T - 1)

    def _pair_estimates(self, level: float, *, scale: str = "logit",
                        df: str | None = None) -> PairEstimates:
        """The pair estimates of :meth:`~mixrank.results.base.ContrastsTemplate.contrasts`, as
        glmer: ``logit``, the log-odds difference ``beta_a - beta_b`` with its Wald SE from the
        joint covariance (and the odds ratio); ``response``, the difference in probability
        averaged over the frame's cells (average marginal effect), SE by the delta method
        (docs/glmm.md §5).  Reference: t with containment df or glmer's z (:meth:`_reference`);
        ``trials`` of the two models on their common cells. Validated against lme4 1.1 ``glmer``
        (``tests/reference/glmer.R``); coverage of the containment t by seeded simulation
        (``tests/validity/test_validity.py``)."""
        ref, dof = self._reference(df)
        dist = stats.norm if ref == "wald" else stats.t(dof)
        q = dist.ppf(0.5 + level / 2)
        f = self.fit
        beta, V = f.beta, f.vcov
        if scale == "response":
            p = expit(beta[None, :] + f.cell_effects[:, None])       # cells x models
            mean_p = p.mean(axis=0)
            slope = (p * (1 - p)).mean(axis=0)
        rows = []
        for j, k in self._pairs():
            g = np.zeros(len(beta))
            if scale == "logit":
                est = beta[j] - beta[k]
                g[j], g[k] = 1.0, -1.0
            else:
                est = mean_p[j] - mean_p[k]
                g[j], g[k] = slope[j], -slope[k]
            se = float(np.sqrt(max(g @ V @ g, 0.0)))
            row = self.contrast_row(self.models[j], self.models[k], float(est), se, dof, q,
                                    dist.sf, level=level, n=int(self.frame.stats.n_common[j, k]),
                                    trials=self._trials(j, k))
            if scale == "logit":
                row.update(odds_ratio=float(np.exp(est)), odds_ratio_lower=float(np.exp(est - q * se)),
                           odds_ratio_upper=float(np.exp(est + q * se)))
            rows.append(row)
        how = ("Wald z (normal), as glmer" if ref == "wald" else
               f"Wald SE, t with containment df (units - 1 = {dof:g})")
        return PairEstimates(rows, self._meta("contrasts", scale=scale, df_method=how),
                             nan_p="one", joint=GlmmFlips(self, scale),
                             finish=partial(_after_flips, unit=self.unit_of_inference))

    def _default_adjust(self) -> str:
        """``"stepdown"`` where the unit randomization applies exactly, else ``"holm"``.

        The randomization step-down max-T over all sign flips of the unit's score contributions
        (:mod:`mixrank.results.glmm.flips`) is the default when the formula has a model-by-unit
        term whose unit has enough levels for the smallest flip p-value, ``1 / 2^(T-1)``, to
        reach the fit's level (6 at 0.95) and at most
        :data:`~mixrank.inference.randomization.EXACT_MAX`, every random term is nested in that
        unit and the table has at least two pairs
        (:func:`~mixrank.results.glmm.flips.flips_apply`); Holm elsewhere, and for result types
        that do not take ``"stepdown"`` (docs/glmm.md §12).
        """
        if self.DEFAULT_ADJUST != "stepdown" or flips_apply(self):
            return self.DEFAULT_ADJUST
        return "holm"

    def _default_rank_adjust(self) -> str:
        """``"maxt"`` (the unit randomization step-down of the directed hypotheses) where
        ``contrasts()`` defaults to the step-down and the flips' smallest p-value can reach half
        the level (the marginal rank intervals test each side at ``alpha/2``: 7 units at 0.95);
        else ``"holm"``."""
        if self._default_adjust() == "stepdown" and flips_apply(self, sides=2):
            return "maxt"
        return "holm"

    def fixed_effects(self) -> pd.DataFrame:
        """glmer's coefficient table (treatment coding: intercept = first model).

        Returns
        -------
        pandas.DataFrame
            ``term, estimate, std_error, statistic`` (z), ``p_value``.

        Examples
        --------
        >>> import mixrank
        >>> g = mixrank.fit("correct ~ model + (1|subject:model)", mixrank.load_example(), family="binomial")
        >>> fe = g.fixed_effects()
        >>> fe["term"].tolist()[:3], round(float(fe["estimate"].iloc[0]), 1)
        (['(Intercept)', 'modelm02', 'modelm03'], 0.8)
        """
        names, est, V = self.fit.fixef()
        se = np.sqrt(np.diag(V))
        z = est / se
        rows = [dict(term=t, estimate=float(e), std_error=float(s), statistic=float(zz),
                     p_value=float(2 * stats.norm.sf(abs(zz)))) for t, e, s, zz in zip(names, est, se, z)]
        return tidy(rows, **self._meta("fixed_effects"))

    def variance_components(self) -> pd.DataFrame:
        """Random-intercept variances on the logit scale (no residual term).

        Returns
        -------
        pandas.DataFrame
            ``group`` (term as written), ``variance``, ``std_dev``,
            ``share`` (variance / sum of the terms' variances),
            ``singular`` (std_dev < 1e-4, lme4's isSingular).

        Examples
        --------
        >>> import mixrank
        >>> g = mixrank.fit("correct ~ model + (1|subject:model)", mixrank.load_example(), family="binomial")
        >>> g.variance_components()["group"].tolist()
        ['subject:model']
        """
        f = self.fit
        tot = float(np.sum(f.theta ** 2))
        rows = [dict(group=t, variance=float(th ** 2), std_dev=float(th),
                     share=float(th ** 2 / tot) if tot > 0 else np.nan, singular=t in f.singular)
                for t, th in zip(f.terms, f.theta)]
        return tidy(rows, **self._meta("variance_components", scale="logit"))

    def diagnostics(self) -> pd.DataFrame:
        """Fit statistics and convergence, as lme4 reports them (one row).

        Returns
        -------
        pandas.DataFrame
            ``nagq, loglik, deviance`` (-2 loglik), ``aic, bic, nobs,
            df_resid, converged, gradient, singular`` (comma-separated
            terms), ``hessian_ok, nfev, message``.

        Examples
        --------
        >>> import mixrank
        >>> g = mixrank.fit("correct ~ model + (1|subject:model)", mixrank.load_example(), family="binomial")
        >>> g.diagnostics()[["converged", "nobs"]].values.tolist()
        [[True, 5760]]
        """
        f = self.fit
        row = dict(nagq=f.nagq, loglik=f.loglik, deviance=f.deviance, aic=f.aic, bic=f.bic,
                   nobs=f.nobs, df_resid=f.nobs - f.n_params, converged=f.converged,
                   gradient=f.gradient, singular=",".join(f.singular), hessian_ok=f.hessian_ok,
                   nfev=f.nfev, message=f.message)
        return tidy([row], **self._meta("diagnostics"))

    def model_scores(self, level: float | None = None, *,
                     scale: Literal["logit", "response"] = "logit") -> pd.DataFrame:
        """Each model's score on one scale, its interval on the same scale, and the alternatives.

        Parameters
        ----------
        level : float, optional
            Confidence level (default: the fit's).
        scale : {"logit", "response"}, default "logit"
            ``logit``: ``estimate`` is the model's log-odds ``beta_j`` at zero random effects
            with its Wald interval.  ``response``: the probability averaged over the frame's
            cells (``probability``), its interval the logit interval transformed (the average is
            increasing in ``beta_j``), its SE by the delta method (docs/glmm.md §5).  Rank
            intervals and the resolution's adjacent pairs order models by ``estimate`` on the
            same scale.

        Returns
        -------
        pandas.DataFrame
            ``model, estimate, std_error, ci_lower, ci_upper, level`` (on ``scale``), ``n``
            (cells where the model is scored), ``trials`` (Bernoulli trials over those cells),
            ``observed`` (successes / trials, the raw share), ``logit``, ``logit_std_error``,
            ``probability`` (averaged over the cells' fitted shared random effects,
            model-by-unit effects at 0) and ``probability_at_zero`` (``logit^-1(beta_j)``:
            conditional at all random effects 0). ``attrs["mixrank"]`` names the ``scale``, the
            ``score`` and what each probability is conditional on or averaged over.

        Raises
        ------
        OptionError
            ``scale`` not "logit" or "response", or ``level`` outside (0, 1).

        Notes
        -----
        ``beta`` and its covariance are validated against lme4 1.1 ``glmer``
        (``tests/reference/glmer.R``).

        Examples
        --------
        >>> import mixrank
        >>> g = mixrank.fit("correct ~ model + (1|subject:model)", mixrank.load_example(), family="binomial")
        >>> g.model_scores(scale="response")["model"].tolist()
        ['m01', 'm02', 'm03', 'm04', 'm05', 'm06']
        """
        lev = self._level(level)
        scale = self.check_option("model_scores", "scale", scale)
        q = stats.norm.ppf(0.5 + lev / 2)
        f = self.fit
        se = np.sqrt(np.clip(np.diag(f.vcov), 0.0, None))

        def avg(b: np.ndarray) -> np.ndarray:
            return expit(b[None, :] + f.cell_effects[:, None]).mean(axis=0)

        P = expit(f.beta[None, :] + f.cell_effects[:, None])
        p = P.mean(axis=0)
        if scale == "logit":
            est, sd, lo, hi = f.beta, se, f.beta - q * se, f.beta + q * se
        else:
            est, sd = p, (P * (1 - P)).mean(axis=0) * se
            lo, hi = avg(f.beta - q * se), avg(f.beta + q * se)
        cells = self.frame.observed.sum(axis=0)
        rows = [dict(model=m, estimate=float(est[j]), std_error=float(sd[j]),
                     ci_lower=float(lo[j]), ci_upper=float(hi[j]), level=lev, n=int(cells[j]),
                     trials=int(f.trials[j]), observed=float(f.successes[j] / f.trials[j]),
                     logit=float(f.beta[j]), logit_std_error=float(se[j]),
                     probability=float(p[j]), probability_at_zero=float(expit(f.beta[j])))
                for j, m in enumerate(self.models)]
        return tidy(rows, **self._meta("model_scores", scale=scale, score=SCORE[scale],
                                       probability=PROBABILITY, probability_at_zero=AT_ZERO,
                                       response_form=self.response_form))

    # ---------------------------------------------- inference / design layers
    def _rank_intervals(self, level: float, *, coverage: str, adjust: str, draws: int,
                        rng: Any, scale: Any = "logit") -> pd.DataFrame:
        """Rank intervals of :meth:`PairwiseResult.rank_intervals`: point ranks and intervals
        from one quantity on one scale.

        See :func:`mixrank.inference.ranks.rank_intervals_from_contrasts`. The point scores are
        :meth:`model_scores` ``estimate`` on ``scale`` (``logit``: the log-odds ``beta_j``;
        ``response``: the probability averaged over the cells) and the tests the pairwise z
        tests of :meth:`contrasts` on the same scale, so a point rank always lies in its
        interval's ordering.  ``attrs["mixrank"]`` states ``scale`` and ``score``.
        """
        from ...inference.ranks.intervals import (
            rank_intervals_from_contrasts,
            rank_intervals_from_flips,
        )

        if self.pair_filter is not None:
            raise DataError("rank intervals need every pair; refit without pairs=")
        scores = self.model_scores(level, scale=scale)[["model", "estimate", "n"]]
        con = self.contrasts(level, scale=scale, adjust="none")
        if adjust == "maxt" and flips_ready(self):     # the unit sign flips, as the contrasts
            tab = rank_intervals_from_flips(scores, con, GlmmFlips(self, scale), level=level,
                                            coverage=coverage, draws=draws, rng=rng)
        else:
            tab = rank_intervals_from_contrasts(scores, con, level=level, coverage=coverage,
                                                adjust=adjust, draws=draws, rng=rng)
        tab.attrs["mixrank"].update(source="glmm", formula=self.formula.formula, scale=scale,
                                    score=SCORE[scale], unit=self.unit_of_inference,
                                    response_form=self.response_form)
        return tab

    def _resolution(self, level: float, *, power: float, pairs: Any, adjust: str | None,
                    anytime: bool | str, models: Any = None, top: int | None = None
                    ) -> pd.DataFrame:
        """Resolution verdicts from the logit-scale Wald test (docs/glmm.md §6).

        ``N* = n (z_{1-alpha/2} + z_{1-beta})^2 SE^2 / delta^2`` with delta the log-odds
        difference and SE its Wald standard error (so ``sigma_d = SE sqrt(n)`` is passed to
        :func:`mixrank.design.resolution.resolution_table`, without a separate clustered
        paradigm: the SE already carries the formula's unit of inference).  ``pairs`` default
        ``"adjacent"``; ``models``/``top`` select the models ranked (by log-odds) for
        ``"adjacent"``/``"all"``.  Returns the columns of
        :func:`~mixrank.design.resolution.resolution_table` (``estimate`` on the logit scale);
        ``attrs["mixrank"]["n_star"]`` states the formula."""
        from ...design.resolution import resolution_table

        order = self.model_scores(scale="logit").sort_values(["estimate", "model"],
                                                             ascending=[False, True])
        fam = self.judged_pairs("adjacent" if pairs is None else pairs,
                                order["model"].tolist(), models=models, top=top)
        # the joint fit has every pair's contrast, whatever pairs= restricted the tables to
        con = replace(self, pairs_requested=tuple(fam), pair_filter=None).contrasts(
            scale="logit", adjust="none")
        rows = [dict(model_a=r.model_a, model_b=r.model_b, estimate=r.estimate, n=int(r.n),
                     sigma_d=float(r.std_error * np.sqrt(r.n)), std_error=r.std_error)
                for r in con.itertuples()]
        out = resolution_table(pd.DataFrame(rows), level=level, power=power, adjust=adjust,
                               anytime=True if anytime == "auto" else anytime, cluster=False)
        out.attrs["mixrank"].update(
            formula=self.formula.formula, scale="logit", unit=self.unit_of_inference,
            n_star="logit-scale Wald test: N* = n (z_{1-alpha/2} + z_{1-beta})^2 SE^2 / delta^2")
        return out

    def pass_at_k(self, k: int, level: float | None = None) -> pd.DataFrame:
        """Model-based pass@k: P(at least one of k samples of a new item succeeds).

        For model j, an item's success probability is ``logit^-1(beta_j + b)`` with ``b ~ N(0,
        tau^2)``, ``tau^2`` the sum of the fitted variances of all random terms (the item's
        total random effect on the logit scale), so ``pass@k_j = E_b[1 - (1 - logit^-1(beta_j +
        b))^k]``, computed by 64-point Gauss-Hermite quadrature (docs/pass_at_k.md §5). The
        alternative to averaging the per-item unbiased estimates of :func:`mixrank.pass_at_k`.

        Parameters
        ----------
        k : int
            Samples per item.
        level : float, optional
            Confidence level; default the fit's.

        Returns
        -------
        pandas.DataFrame
            ``model, k, estimate, std_error`` (delta method in ``beta_j``, variances held at
            their estimates), ``ci_lower, ci_upper`` (the logit interval of ``beta_j``
            transformed: pass@k increases in it), ``level, n`` (cells).

        Raises
        ------
        DataError
            ``k`` not a positive integer.
        DesignError
            A ``model * x`` fit (one log-odds per model and level).

        Notes
        -----
        Validated against adaptive numerical integration (``scipy.integrate.quad``) and a seeded
        simulation (``tests/results/test_glmm_pass_at_k.py``).

        Examples
        --------
        >>> import mixrank
        >>> g = mixrank.fit("correct ~ model + (1|subject:model)", mixrank.load_example(), family="binomial")
        >>> g.pass_at_k(5)[["model", "k", "n"]].values.tolist()[:2]
        [['m01', 5, 960], ['m02', 5, 960]]
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise DataError(f"k={k!r}: expected a positive integer number of samples")
        if self.fit.groups is not None:
            raise DesignError("pass_at_k() of a model * x fit is not available; fit "
                              "'... ~ model + (random terms)' for the model-based pass@k")
        lev = self._level(level)
        q = stats.norm.ppf(0.5 + lev / 2)
        z, w = np.polynomial.hermite_e.hermegauss(64)
        w = w / w.sum()
        tau = float(np.sqrt(np.sum(self.fit.theta ** 2)))

        def g(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            p = expit(b[:, None] + tau * z[None, :])
            miss = (1.0 - p) ** k
            return (1.0 - miss) @ w, (k * miss / (1.0 - p) * p * (1.0 - p)) @ w

        f = self.fit
        se = np.sqrt(np.clip(np.diag(f.vcov), 0.0, None))
        est, slope = g(f.beta)
        lo, _ = g(f.beta - q * se)
        hi, _ = g(f.beta + q * se)
        cells = self.frame.observed.sum(axis=0)
        rows = [dict(model=m, k=int(k), estimate=float(est[j]), std_error=float(slope[j] * se[j]),
                     ci_lower=float(lo[j]), ci_upper=float(hi[j]), level=lev, n=int(cells[j]))
                for j, m in enumerate(self.models)]
        return tidy(rows, **self._meta("pass_at_k", scale="response", tau=tau,
                                       estimator="E[1 - (1 - p)^k] over N(0, tau^2) item effects"))

    def summary(self) -> GlmmSummary:
        """A glmer-like printable summary.

        Returns
        -------
        GlmmSummary
            Printed as text; ``str()`` gives it.

        Examples
        --------
        >>> import mixrank
        >>> g = mixrank.fit("correct ~ model + (1|subject:model)", mixrank.load_example(), family="binomial")
        >>> print(str(g.summary()).splitlines()[1])
         Family: binomial  ( logit )
        """
        return GlmmSummary(self)

    def __str__(self) -> str:
        return (f"<GlmmResult {self.formula.formula!r}: binomial GLMM, {len(self.models)} models, "
                f"nAGQ={self.fit.nagq}>")


@dataclass(frozen=True, eq=False, repr=False)
class GlmmSummary(TextDisplay):
    """Printable summary of a :class:`GlmmResult` (``str()`` gives the text).

    Examples
    --------
    >>> import mixrank
    >>> g = mixrank.fit("correct ~ model + (1|subject:model)", mixrank.load_example(), family="binomial")
    >>> str(g.summary()).splitlines()[2]
    'Formula: correct ~ model + (1|subject:model)'
    """

    result: GlmmResult

    def __str__(self) -> str:
        r, f = self.result, self.result.fit
        how = "Laplace Approximation" if f.nagq == 1 else "nAGQ = 0 (PIRLS over the model effects)"
        lines = [f"Generalized linear mixed model fit by maximum likelihood ({how})",
                 " Family: binomial  ( logit )", f"Formula: {r.formula.formula}",
                 "     AIC      BIC   logLik deviance df.resid",
                 "".join(f"{format_signif(v):>9}" for v in (f.aic, f.bic, f.loglik, f.deviance))
                 + f"{f.nobs - f.n_params:9d}",
                 "", "Random effects (logit scale):", f"  {'Groups':<24}{'Variance':>10}{'Std.Dev.':>10}"]
        for t, th in zip(f.terms, f.theta):
            lines.append(f"  {t:<24}{th ** 2:10.4f}{th:10.4f}")
        lines += ["", "Fixed effects:", f"  {'':<24}{'Estimate':>10}{'Std. Error':>11}{'z value':>9}"
                  f"{'Pr(>|z|)':>10}"]
        for _, row in r.fixed_effects().iterrows():
            dec = se_decimals(row.std_error)
            lines.append(f"  {row.term:<24}{format_at(row.estimate, dec):>10}"
                         f"{format_se(row.std_error):>11}{row.statistic:9.2f}"
                         f"{format_p(row.p_value):>10}")
        lines += ["", "Scale: contrasts on the logit scale (log-odds, odds ratios) and on the "
                  "response scale (probability, averaged over cells: contrasts(scale='response'))",
                  r.unit_of_inference[0].upper() + r.unit_of_inference[1:] + "."]
        if f.singular:
            lines.append(f"boundary (singular) fit: {', '.join(f.singular)}")
        if not f.converged:
            lines.append(f"convergence: criterion not met ({f.message}; max|grad| {f.gradient:.2g})")
        return wrap("\n".join(lines))


