"""Stage results: the fitted object over all pairs and its tidy accessors.

Inputs: a :class:`~mixrank.frame.Frame` and the engine's per-pair fits.
Outputs: :class:`FitResult` with ``contrasts``, ``variance_components``, ``design_effect``,
``diagnostics``, ``model_scores`` and ``summary``, and the accessors computed by the inference and
design stages (``rank_intervals``, ``rank_probabilities``, ``resolution``, ``plan``).

Import order: results is the facade over the stages below it.  It imports inference and design;
they take a ``FitResult`` as an argument typed as the protocol
:class:`~mixrank.engine.records.FittedPairs`, so no package cycle exists even at type-check time
(``tests/test_import_graph.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from scipy import special

from .._deprecate import former_keywords
from .._util import check_level, tidy
from ..engine.control import Control
from ..engine.records import PairFit, pair_key, pair_lookup
from ..errors import DataError, DesignError
from ..frame import Frame
from ..inference.keywords import former, unexpected_keywords
from ..inference.sign_exact import degenerate_sign_test
from ..inference.simultaneous import randomized, rank_probabilities_of
from .base import FIT_OPTIONS, OptionTable, PairEstimates, left_out
from .estimable import EstimableMixin
from .omnibus import OmnibusMixin
from .pairwise_result import PairwiseResult
from .scores import model_scores_table
from .summary import Summary

__all__ = ["FitResult"]


def _t_sf(x: Any, df: Any) -> Any:   # scipy.stats.t.sf(x, df): Student's t survival function
    return special.stdtr(df, -x)


@dataclass(frozen=True, eq=False, repr=False)
class FitResult(EstimableMixin, OmnibusMixin, PairwiseResult):
    """Result of :func:`mixrank.fit`: one paired mixed model per pair of models.

    Orientation: for a row ``(model_a, model_b)`` the estimate is the mean of
    ``model_a - model_b`` (positive favours ``model_a``).

    ``pairs`` holds the fitted pairs; ``incomplete`` the pairs the formula cannot estimate (NaN
    rows with the reason in ``message``; shown by ``contrasts()`` and ``diagnostics()``, left out
    of everything else; docs/messy.md §3).  ``restricted``: the fit was asked for some pairs
    (``fit(..., pairs=)``); verdicts, sensitivity and planning then default to those pairs.
    ``control``: the fit's :class:`~mixrank.Control`, used by the per-model refits of
    ``model_scores()`` too.

    Examples
    --------
    >>> import mixrank
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> len(res.pairs), res.models, res.method
    (15, ('m01', 'm02', 'm03', 'm04', 'm05', 'm06'), 'reml')
    """

    frame: Frame
    pairs: tuple[PairFit, ...]
    method: str
    engine: str
    estimand: str
    level: float
    incomplete: tuple[PairFit, ...] = ()
    restricted: bool = False
    df_method: str = "satterthwaite"
    inference: tuple[tuple[float, float], ...] = ()
    control: Control | None = None
    OPTIONS: ClassVar[OptionTable] = FIT_OPTIONS
    REFUSED: ClassVar[dict[tuple[str, str, Any], str]] = {
        ("contrasts", "adjust", "bonferroni"): "Holm has the same family-wise guarantee and "
        "rejects at least what Bonferroni rejects; use 'holm'"}
    #: ``"stepdown"`` where the unit randomization applies exactly, else Holm (:meth:`_default_adjust`).
    DEFAULT_ADJUST: ClassVar[str] = "stepdown"

    # ------------------------------------------------------------------ meta
    def _meta(self, table: str, **extra: Any) -> dict:
        m = dict(table=table, formula=self.frame.spec.formula, method=self.method,
                 engine=self.engine, estimand=self.estimand, df_method=self.df_label)
        m.update(extra)
        return m

    @property
    def df_label(self) -> str:
        """Which SE and df the contrasts use (docs/methods.md, "Validity with few units")."""
        if self.method == "aggregate":
            return "units - 1"
        return {"cr2": f"CR2 at {self.frame.spec.unit!r}, Bell-McCaffrey df",
                "containment": "REML SE, containment df (units - 1)",
                "satterthwaite-vc": "REML SE, Satterthwaite df of the variance components",
                }.get(self.df_method, "satterthwaite")

    def _df_of(self, pairs: Sequence[PairFit]) -> dict[str, Any]:
        """``df_method`` and ``inference`` of a subset of the pairs (restricted fits)."""
        if not self.inference:
            return dict(df_method=self.df_method)
        got = dict(zip(map(id, self.pairs), self.inference))
        idx = pair_lookup(self.pairs)
        return dict(df_method=self.df_method, inference=tuple(
            got[id(idx[pair_key(p.model_a, p.model_b)])] for p in pairs))

    def inference_pairs(self) -> tuple[PairFit, ...]:
        """The pairs with the ``variance`` and ``df`` of the fit's df method.

        Identical to :attr:`pairs` for ``df="satterthwaite"``; for a unit-level
        method (``fit(df=...)``) each pair carries its unit-level variance and df.

        Returns
        -------
        tuple of PairFit
            One per fitted pair, in the order of :attr:`pairs`.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> len(res.inference_pairs()), res.df_method, round(res.inference_pairs()[0].df, 3)
        (15, 'cr2', 11.0)
        """
        if not self.inference:
            return self.pairs
        return tuple(_unit_variance(p, v, d) for p, (v, d) in zip(self.pairs, self.inference))

    @property
    def models(self) -> tuple[str, ...]:
        """The models compared, in the frame's order (a tuple of str)."""
        return self.frame.models

    def pair(self, model_a: str, model_b: str) -> PairFit:
        """The fit of one pair (either orientation is found; the stored one is returned).

        Parameters
        ----------
        model_a, model_b : str
            The two models, in either order.

        Returns
        -------
        PairFit
            The stored fit (its ``model_a, model_b`` in the fitted orientation).

        Raises
        ------
        DataError
            The pair was not fitted (a model not in the data, or ``fit(pairs=)`` left it out).

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> p = res.pair("m02", "m01")
        >>> p.model_a, p.model_b, p.n
        ('m01', 'm02', 960)
        """
        p = pair_lookup(self.pairs).get(pair_key(model_a, model_b))
        if p is not None:
            return p
        raise DataError(f"pair ({model_a!r}, {model_b!r}) was not fitted; fitted pairs: "
                        f"{[(p.model_a, p.model_b) for p in self.pairs][:10]}...")

    # ---------------------------------------------------------------- tables
    def _pair_estimates(self, level: float, *, by: str | None = None) -> PairEstimates:
        """The pair estimates of :meth:`~mixrank.results.base.ContrastsTemplate.contrasts`: one row
        per fitted pair (t with the pair's df; a degenerate pair, no variance estimable, gets the
        exact sign test, docs/hardening.md §1), max-t and step-down drawn from this fit, the pairs
        the formula cannot estimate appended after the adjustment; with ``by``, one row per pair
        and level of the covariate (:func:`mixrank.results.interactions.contrasts_by`), adjusted
        within each level."""
        if by is not None:
            from .interactions import contrasts_by
            tab = contrasts_by(self, by, level)
            meta = {k: v for k, v in tab.attrs["mixrank"].items() if k != "version"}
            return PairEstimates(tab, dict(meta, family="the pairs at each level of " + by),
                                 within=by, joint=self)
        rows = []
        pairs = self.inference_pairs()
        # scipy.stats.t's ppf and sf are these special functions (the same values, without
        # the argument checks of a distribution object: most of a one-pair table's cost)
        q = special.stdtrit(np.array([p.df for p in pairs], dtype=float), 0.5 + level / 2) \
            if pairs else []
        for p, qq in zip(pairs, np.atleast_1d(q)):
            se = p.std_error
            if p.degenerate:  # no variance estimable: the exact sign test (docs/hardening.md §1)
                p2, pg, _ = degenerate_sign_test(self.frame, p)
                rows.append(dict(model_a=p.model_a, model_b=p.model_b, estimate=p.estimate,
                                 std_error=se, df=p.df, statistic=np.nan, p_value=p2,
                                 p_greater=pg, ci_lower=np.nan, ci_upper=np.nan, level=level,
                                 n=p.n, note=p.message))
                continue
            rows.append(self.contrast_row(p.model_a, p.model_b, p.estimate, se, p.df, qq,
                                          partial(_t_sf, df=p.df), level=level,
                                          n=p.n, zero_se_nan=False, note=""))
        return PairEstimates(rows, self._meta("contrasts"), joint=self,
                             finish=partial(self._with_incomplete, lev=level))

    def _default_adjust(self) -> str:
        """``"stepdown"`` (Westfall-Young over all ``2^(T-1)`` unit sign flips,
        :func:`~mixrank.inference.randomization.scaled_stepdown`: the CR2 tests' assumption) on the
        CR2 path with 2+ pairs and T units the flips reach the level with
        (:func:`~mixrank.inference.randomization.flips_reach`: 6 to 14 at 0.95; deterministic);
        Holm elsewhere (docs/methods.md §9)."""
        from ..inference.randomization import flips_reach

        unit = self.frame.spec.unit
        if self.DEFAULT_ADJUST != "stepdown" or (
                randomized(self) and unit is not None and len(self.pairs) >= 2
                and flips_reach(int(self.frame.term_levels[unit]), self.level)):
            return self.DEFAULT_ADJUST
        return "holm"

    def _default_rank_adjust(self) -> str:
        """``"maxt"`` (the directed step-down over the same flips) where ``contrasts()``
        defaults to the step-down and each side's ``alpha/2`` is reachable (7+ units at 0.95)."""
        from ..inference.randomization import flips_reach

        ok = self._default_adjust() == "stepdown" and flips_reach(
            int(self.frame.term_levels[str(self.frame.spec.unit)]), self.level, sides=2)
        return "maxt" if ok else "holm"

    def _with_incomplete(self, tab: pd.DataFrame, lev: float) -> pd.DataFrame:
        """``tab`` with the NaN rows of the pairs the formula cannot estimate appended."""
        meta = dict(tab.attrs.get("mixrank", {}))
        meta["not_estimable"] = [(p.model_a, p.model_b) for p in self.incomplete]
        if self.incomplete:
            extra = pd.DataFrame([dict(model_a=p.model_a, model_b=p.model_b, n=p.n, level=lev,
                                       note=p.message) for p in self.incomplete])
            tab = pd.concat([tab, extra], ignore_index=True) if len(tab) else extra
            tab = tab.astype({"n": "int64"})
        tab.attrs["mixrank"] = meta
        return tab

    def anova(self, *, adjust: Literal["none", "holm"] = "none") -> pd.DataFrame:
        """Per pair, F tests that the gap is the same at every level of each covariate term.

        Parameters
        ----------
        adjust : {"none", "holm"}, default "none"
            ``"holm"`` adds ``p_adjusted`` (Holm across pairs, per term).

        Returns
        -------
        pandas.DataFrame
            Per pair and term, as :func:`mixrank.results.anova.anova_table` (lmerTest
            ``anova(type = 3)``): ``model_a, model_b, term, F, num_df, den_df, p_value``
            (``p_adjusted``), ``note``; ``attrs["mixrank"]["left_out"]``: models not estimable.

        Raises
        ------
        DesignError
            A formula without a model x covariate term.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model * prompt + (1|subject)", mixrank.load_example(),
        ...                   pairs=[("m01", "m02")])
        >>> a = res.anova()
        >>> a["term"].tolist(), a["num_df"].tolist(), bool(a.loc[0, "p_value"] > 0.05)
        (['model:prompt'], [3.0], True)
        """
        part, left = self.estimable_part()
        from .anova import anova_table
        return left_out(anova_table(part, adjust=adjust), left)

    def variance_components(self) -> pd.DataFrame:
        """Variance components per pair.

        Returns
        -------
        pandas.DataFrame
            ``model_a, model_b, group`` (component as written in the formula,
            or ``residual``), ``variance, std_dev, share`` (variance / total).

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> vc = res.variance_components()
        >>> len(vc), vc["group"].tolist()[:2], bool((vc["variance"] > 0).all())
        (30, ['subject', 'residual'], True)
        """
        rows = []
        for p in self.pairs:
            tot = float(np.nansum(list(p.components.values())))
            for g, v in p.components.items():
                rows.append(dict(model_a=p.model_a, model_b=p.model_b, group=g, variance=v,
                                 std_dev=float(np.sqrt(v)), share=v / tot if tot > 0 else np.nan))
        return tidy(rows, **self._meta("variance_components"))

    def design_effect(self) -> pd.DataFrame:
        """Design effect per pair: ``DE = Var(estimate) / (sigma_d^2 / n)`` (docs/methods.md §4).

        Returns
        -------
        pandas.DataFrame
            ``model_a, model_b, n, sigma_d`` (sample SD of the cell
            differences, the ``sigma_d`` of :func:`mixrank.power.n_star`), ``variance`` (of the estimate under the fitted
            model), ``design_effect``, ``n_eff = n / design_effect``.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> de = res.design_effect()
        >>> len(de), de["n"].unique().tolist(), bool((de["design_effect"] > 1).all())
        (15, [960], True)
        """
        rows = [dict(model_a=p.model_a, model_b=p.model_b, n=p.n, sigma_d=p.sigma_d,
                     variance=p.variance, design_effect=p.design_effect,
                     n_eff=p.n / p.design_effect) for p in self.pairs]
        return tidy(rows, **self._meta("design_effect"))

    def diagnostics(self) -> pd.DataFrame:
        """Convergence and design diagnostics per pair.

        Returns
        -------
        pandas.DataFrame
            ``model_a, model_b, n, only_a, only_b`` (cells scored for one model only),
            ``criterion`` (REML criterion), ``converged``, ``boundary`` (components at zero,
            comma-separated), ``gradient`` (max abs gradient on free components), ``nfev``,
            ``degenerate`` (True when no variance is estimable for the pair: identical differences
            or fewer than two units; see :func:`mixrank.fit`), ``message`` (``"not estimable:
            ..."`` for the pairs the formula cannot estimate, listed last with ``converged``
            False).

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> dg = res.diagnostics()
        >>> len(dg), bool(dg["converged"].all()), int(dg["degenerate"].sum()), int(dg["n"].max())
        (15, True, 0, 960)
        """
        rows = [dict(model_a=p.model_a, model_b=p.model_b, n=p.n, only_a=p.only_a,
                     only_b=p.only_b, criterion=p.criterion, converged=p.converged,
                     boundary=",".join(p.boundary), gradient=p.gradient, nfev=p.nfev,
                     degenerate=bool(p.degenerate), message=p.message)
                for p in (*self.pairs, *self.incomplete)]
        return tidy(rows, **self._meta("diagnostics"))

    def model_scores(self, level: float | None = None, *,
                     estimand: Literal["gls", "cells", "units"] | None = None,
                     by: str | None = None,
                     scoring: Literal["adjusted", "plain"] = "adjusted") -> pd.DataFrame:
        """Each model's score with its uncertainty at the formula's unit of inference.

        Parameters
        ----------
        level : float, optional
            Confidence level (default the fit's).
        estimand : {"gls", "cells", "units"}, optional
            Default the fit's.  ``cells`` is the plain mean over the model's
            cells (the leaderboard number).
        by : str, optional
            Model x covariate formulas: each model's score per level of that
            covariate instead (columns ``model, <by>, estimate, std_error,
            df, ci_lower, ci_upper, level, n, note``); see
            :func:`mixrank.results.interactions.model_scores_by`.
        scoring : {"adjusted", "plain"}, default "adjusted"
            Unequal cell sets (estimand cells): on the union of cells, adjusted
            (docs/methods.md §11), or the plain mean of the model's own cells.

        Returns
        -------
        pandas.DataFrame
            ``model, estimate, std_error, df, ci_lower, ci_upper, level, n`` (cells scored),
            ``sigma_iid`` (sample SD of the cell scores), ``variance_ratio`` (``(std_error /
            iid_std_error)^2``; former name ``design_effect``, kept one release as a last column),
            ``iid_std_error`` (``sigma_iid / sqrt(n)``, the sample standard error
            lm-evaluation-harness reports), ``n_cells`` (the union), ``adjusted``, ``basis``
            ("adjusted, scored on N of M cells"), ``note`` (NaN uncertainty, or a logit-scale
            interval kept in [0, 1]).

        Raises
        ------
        DesignError
            A random term confounded with the residual among one model's cells (named), an unknown
            estimand or level.

        Notes
        -----
        Each model's own cell scores are fitted by ``y ~ 1 + (random terms of the formula)``;
        SE and df by the contrasts' method (``df="cr2"``: CR2 at the unit, Bell-McCaffrey df;
        else the REML fit's, as lme4 + lmerTest); a row needing another says so in ``note``.
        docs/model_scores.md §1b.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> sc = res.model_scores()
        >>> str(sc.loc[0, "model"]), int(sc.loc[0, "n"]), round(float(sc.loc[0, "df"]), 1)
        ('m01', 960, 11.0)
        >>> bool((sc["std_error"] > sc["iid_std_error"]).all())   # subjects cluster the scores
        True
        """
        if by is not None:   # model x covariate fits: docs/interactions.md §4
            lev = self.level if level is None else check_level(level, DesignError)
            from .interactions import model_scores_by
            return model_scores_by(self, by, lev)
        return model_scores_table(self, level=level, estimand=estimand, scoring=scoring)

    @staticmethod
    def _plain_fit() -> type[FitResult]:   # the class of estimable_part() and score_group_fits()
        return FitResult

    def summary(self) -> Summary:
        """An lme4-like summary (one pair) or a compact table (many pairs).

        Returns
        -------
        Summary
            Prints as text; holds the ``contrasts``, ``variance_components``,
            ``diagnostics`` and ``model_scores`` tables it shows.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> s = res.summary()
        >>> str(s).splitlines()[1], s.contrasts.shape
        ('Formula: correct ~ model + (1|subject)', (15, 14))
        """
        return Summary(self)

    def __str__(self) -> str:
        return (f"<FitResult {self.frame.spec.formula!r}: {len(self.pairs)} pair(s) of "
                f"{len(self.models)} models, method={self.method}, engine={self.engine}>")

    # ---------------------------------------------- inference / design layers
    def _rank_intervals(self, level: float, *, coverage: str, adjust: str, draws: int,
                        rng: Any, by: str | None = None) -> pd.DataFrame:
        """The rank intervals of :meth:`PairwiseResult.rank_intervals`: through
        :func:`mixrank.inference.ranks.rank_intervals_of` (``by``: per level of a covariate,
        :func:`mixrank.results.ranks_by.rank_intervals_by`)."""
        kw = dict(coverage=coverage, adjust=adjust, draws=draws, rng=rng)
        if by is not None:
            from .ranks_by import rank_intervals_by
            return rank_intervals_by(self, by, level=level, **kw)
        parts = self.score_group_fits()
        if len(parts) > 1:   # scores on different cells: one ranking per group (docs/messy.md §4)
            tabs = []
            for g, sub in parts:
                t = sub.rank_intervals(level, **kw)
                tabs.append(t.assign(group=g))
            out = pd.concat(tabs, ignore_index=True)
            out.attrs["mixrank"] = dict(tabs[0].attrs.get("mixrank", {}), groups=len(parts),
                                        left_out=[m for t in tabs for m in
                                                  t.attrs.get("mixrank", {}).get("left_out", [])])
            return out
        part, left = self.estimable_part()
        from ..inference.ranks.intervals import rank_intervals_of
        return left_out(rank_intervals_of(part, level=level, **kw), left)

    @former_keywords
    def rank_probabilities(self, *, draws: int = 10000, rng: Any = None,
                           **old: Any) -> pd.DataFrame:
        """P(rank = r) and P(best) per model; see docs/model_scores.md §4.

        Parameters
        ----------
        draws : int, default 10000
            Gaussian draws (the same draws as ``contrasts(adjust="maxt")``
            for equal ``draws`` and ``rng``; former name ``B=``, deprecated).
        rng : Generator or int, optional

        Returns
        -------
        pandas.DataFrame
            One row per model and rank (models best score first): ``model,
            rank, probability`` (P(rank = r)), ``p_best`` (P(rank = 1), the
            probability that the model beats every other one).

        Raises
        ------
        DataError
            A single model, pairs not fitted.
        DesignError
            Bad ``draws``; joint covariance too large.

        Notes
        -----
        Each draw gives every contrast a value ``estimate + std_error * T_h`` (t margins, Gaussian
        copula with the joint correlation of the contrasts; pairs with fewer than 30 df -- crossed
        designs with Satterthwaite df -- multivariate t, :mod:`mixrank.inference.mvt`; the unit's
        sign flips on the CR2 path); a model's rank in a draw is 1 + the number of models whose
        contrast with it is positive in their favour.  Pairs fitted on different cells need not
        give transitive draws; the share of draws in which no model beats all others (so the
        ``p_best`` sum falls short of 1) is ``attrs["mixrank"]["no_model_beats_all"]``.  Validated
        by closed forms for two models (``P(best) = P(T > -t)``) and by simulation
        (``tests/inference/test_simultaneous.py``).

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> rp = res.rank_probabilities(rng=1)
        >>> best = rp[rp["rank"] == 1].sort_values("p_best").iloc[-1]
        >>> str(best["model"]), bool(best["p_best"] > 0.9)
        ('m01', True)
        """
        B = former(old, "B", "draws", draws, 10000, where="FitResult.rank_probabilities")
        unexpected_keywords(old, "FitResult.rank_probabilities", ("draws", "rng"))
        parts = self.score_group_fits()
        if len(parts) > 1:   # one set of rank probabilities per score group (docs/messy.md §4)
            tabs = [sub.rank_probabilities(draws=B, rng=rng).assign(group=g) for g, sub in parts]
            out = pd.concat(tabs, ignore_index=True)
            out.attrs["mixrank"] = dict(tabs[0].attrs.get("mixrank", {}), groups=len(parts))
            return out
        part, left = self.estimable_part()
        return left_out(rank_probabilities_of(part, B=B, rng=rng), left)

    def _resolution(self, level: float, *, power: float, pairs: Any, adjust: str | None,
                    anytime: bool | str, models: Sequence[str] | None = None,
                    top: int | None = None, cluster: bool = True,
                    design_effect: str | None = None) -> pd.DataFrame:
        """The verdicts of :meth:`PairwiseResult.resolution` through
        :func:`mixrank.design.resolution.resolution_of` (``pairs=None``: the fitted pairs of
        a fit restricted with ``fit(..., pairs=)``, else ``"adjacent"``; ``anytime="auto"``:
        the paired-Bernoulli e-process for 0/1 scores).  Every column tests the fit's
        estimand (docs/sensitivity.md)."""
        part, left = self.estimable_part()
        from ..design.resolution import resolution_of
        return left_out(resolution_of(part, level=level, power=power, pairs=pairs,
                                        models=models, top=top, adjust=adjust, anytime=anytime,
                                        cluster=cluster, design_effect=design_effect,
                                        columns="all"), left)


def _unit_variance(p: PairFit, variance: float, df: float) -> PairFit:
    """``p`` with its unit-level variance and df (``fit(df=)``).  A unit-level variance of
    exactly 0 (every unit carries the same mean gap) leaves nothing to studentize by: the
    pair is then degenerate, tested by the exact sign test over the units (hardening.md §1)."""
    if variance == 0.0 and not p.degenerate and np.isfinite(p.estimate):
        return replace(p, variance=0.0, df=float("nan"),
                       degenerate="unit-level variance 0: every unit carries the same mean gap")
    return replace(p, variance=variance, df=df)
