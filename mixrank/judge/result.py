"""Stage judge: the judge-corrected fit and how it is computed (docs/judge.md).

Inputs: a formula, long data whose response is the judge's score, the
reference-label column (``gold``), the pairs, lambda and level.
Outputs: :class:`JudgeResult` (what ``mixrank.fit(..., gold=)`` returns,
built by the judge route, :mod:`mixrank.routes.judge`) -- a :class:`~mixrank.results.FitResult`
whose pairs are the PPI++ corrected contrasts, so ``contrasts(adjust=)``,
``rank_intervals``, ``rank_probabilities``, ``resolution`` and the report
work on them unchanged; it adds ``judge()`` (diagnostics) and
``plan(delta, labels=True)`` (label budget), and its ``model_scores`` are the
corrected scores.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from scipy import stats

from .._deprecate import former_column, former_keywords
from .._util import check_level, listed, tidy
from ..engine.records import PairFit, pair_key, pair_lookup
from ..errors import DataError, DesignError, OptionError
from ..inference.keywords import alpha_from, unexpected_keywords
from ..results import FitResult
from ..results.base import FIT_OPTIONS, OptionTable, PairEstimates, with_options
from .data import JudgeData
from .diagnostics import judge_table
from .estimate import Corrected
from .joint import contrast_covariance_ppi
from .plan import n_labels_star

__all__ = ["JudgeResult", "check_lam"]

_NO_COMPONENTS = ("a judge-corrected fit (gold=) has no variance components: PPI++ estimates "
                  "its uncertainty cluster-robustly at the unit (docs/judge.md §3)")


def check_lam(lam: Any) -> float | str | None:
    """``lam`` as a float in [0, 1], ``"unit"`` or None (plug-in); DesignError otherwise."""
    if lam is None or lam == "unit":
        return lam
    ok = isinstance(lam, (int, float, np.integer, np.floating)) and not isinstance(lam, bool) \
        and 0.0 <= float(lam) <= 1.0
    if not ok:
        raise DesignError(f"lam={lam!r}; expected a number in [0, 1] (0: labelled cells only, "
                          "1: classical PPI), None (the PPI++ plug-in per quantity) or 'unit' "
                          "(minimise the variance at the unit)")
    return float(lam)


@dataclass(frozen=True, eq=False, repr=False)
class JudgeResult(FitResult):
    """Result of ``mixrank.fit(..., gold=)``: PPI++ corrected scores and contrasts.

    Orientation as :class:`~mixrank.results.FitResult`.  ``method`` is
    ``"ppi"``, ``estimand`` ``"cells"`` (the plain mean of the reference
    labels over the cells the judge scored).

    Examples
    --------
    >>> import mixrank
    >>> tq = mixrank.load_dataset("triviaqa_judges").query("judge_name == 'Llama-7B'")
    >>> d = tq[tq["model"].isin(["gpt-4t", "llama2-70b-chat", "mistral-7B"])]
    >>> d = d.assign(gold=d["gold"].where(d["question"].rank(method="dense") % 10 == 0))
    >>> res = mixrank.fit("judge ~ model", d, gold="gold")   # human grades of 40 questions
    >>> res.method, res.estimand, res.models
    ('ppi', 'cells', ('gpt-4t', 'llama2-70b-chat', 'mistral-7B'))
    """

    data: JudgeData | None = None
    lam: float | str | None = None
    scores: tuple[Corrected, ...] = ()
    corrections: tuple[Corrected, ...] = ()
    #: :class:`~mixrank.results.FitResult`'s options without ``sensitivity`` and ``anova``
    #: (they refit the mixed model of the judge's scores; the methods say why they refuse).
    OPTIONS: ClassVar[OptionTable] = with_options(FIT_OPTIONS, sensitivity=None, anova=None,
                                                  model_scores={"scoring": ("plain",)})

    def _meta(self, table: str, **extra: Any) -> dict:
        m = super()._meta(table, **extra)
        m.update(df_method="normal (cell unit)" if self.frame.spec.unit is None
                 else "CR2, Bell-McCaffrey (at the unit)" if len(self.frame.spec.term_names) == 1
                 else "units - 1 (multiway cluster-robust)", gold=self._data.column,
                 lam="plug-in" if self.lam is None else self.lam)
        return m

    @property
    def _data(self) -> JudgeData:
        if self.data is None:
            raise DesignError("this JudgeResult holds no judge data; build it with "
                              "mixrank.fit(..., gold=)")
        return self.data

    def _pair_ppi(self, a: str, b: str) -> tuple[Corrected, float]:
        """The correction of the pair (either orientation) and the sign of ``a - b``."""
        lookup = _LOOKUP.get(self)
        if lookup is None:
            lookup = _LOOKUP[self] = (pair_lookup(self.pairs), dict(zip(
                map(id, self.pairs), self.corrections)))
        p = lookup[0].get(pair_key(a, b))
        if p is None:
            raise DataError(f"pair ({a!r}, {b!r}) was not fitted")
        return lookup[1][id(p)], 1.0 if (p.model_a, p.model_b) == (a, b) else -1.0

    def _pair_estimates(self, level: float, *, by: str | None = None) -> PairEstimates:
        """The corrected pair estimates: those of :class:`~mixrank.results.FitResult` (whose
        pairs are the PPI++ corrected contrasts) plus ``lam`` (lambda used), ``n_labelled``
        (cells labelled for both models) and ``n_effective`` (labels a labelled-only contrast
        would need for the same variance).  Pairs without a correction (fewer than 2
        labelled units) are degenerate rows."""
        if by is not None:
            raise DesignError("contrasts(by=) needs a model x covariate formula; judge-corrected "
                              "fits take the plain formula")
        est = super()._pair_estimates(level)
        return replace(est, finish=partial(self._ppi_columns, est.finish))

    def _ppi_columns(self, finish: Callable[[pd.DataFrame], pd.DataFrame] | None,
                     tab: pd.DataFrame) -> pd.DataFrame:
        tab = tab if finish is None else finish(tab)
        cs = [self._pair_ppi(a, b)[0] for a, b in zip(tab["model_a"], tab["model_b"])]
        tab["lam"] = [c.ppi.lam if c.ppi else np.nan for c in cs]
        tab["n_labelled"] = [c.ppi.n_labelled if c.ppi else 0 for c in cs]
        tab["n_effective"] = [c.ppi.n_effective if c.ppi else np.nan for c in cs]
        return tab

    def model_scores(  # type: ignore[override]  # only the plain scores (no adjusted ones)
            self, level: float | None = None, *,
            estimand: Literal["gls", "cells", "units"] | None = None, by: str | None = None,
            scoring: Literal["plain"] = "plain") -> pd.DataFrame:
        """Corrected score per model (docs/judge.md §2).

        Parameters
        ----------
        level : float, optional
            Confidence level; default the fit's.
        estimand : {"cells"}, optional
            The plain mean of the reference labels (the only one).
        by : None
            Not available (a :class:`~mixrank.DesignError`).
        scoring : {"plain"}, default "plain"
            Each model on its own judged cells (the only one).

        Returns
        -------
        pandas.DataFrame
            ``model, estimate`` (PPI++ mean of the reference labels over the
            model's judged cells), ``std_error, df, ci_lower, ci_upper, level,
            n`` (judged cells), ``sigma_iid`` (SD of the labels),
            ``variance_ratio`` (variance at the unit over the cell-unit PPI++
            variance; former name ``design_effect``, kept one release), ``iid_std_error`` (the cell-unit PPI++ SE), ``judge_estimate``
            (the uncorrected judge mean), ``lam``, ``n_labelled``, ``n_effective``,
            ``note`` (why a row is NaN: e.g. a model without reference labels).

        Raises
        ------
        DesignError
            ``by`` given, an estimand other than ``"cells"``, a bad level.
        OptionError
            ``scoring`` other than ``"plain"``.

        Examples
        --------
        >>> import mixrank
        >>> tq = mixrank.load_dataset("triviaqa_judges").query("judge_name == 'Llama-7B'")
        >>> d = tq[tq["model"].isin(["gpt-4t", "llama2-70b-chat", "mistral-7B"])]
        >>> d = d.assign(gold=d["gold"].where(d["question"].rank(method="dense") % 10 == 0))
        >>> res = mixrank.fit("judge ~ model", d, gold="gold")   # human grades of 40 questions
        >>> sc = res.model_scores()
        >>> sc["estimate"].round(3).tolist(), sc["judge_estimate"].round(3).tolist()
        ([0.884, 0.716, 0.657], [0.868, 0.842, 0.682])
        """
        if by is not None:
            raise DesignError("model_scores(by=) needs a model x covariate formula")
        if scoring != "plain":
            raise OptionError(f"scoring={scoring!r}: a judge-corrected fit scores each model on "
                              "its own judged cells (scoring='plain')")
        if estimand not in (None, "cells"):
            raise DesignError(f"estimand={estimand!r}; a judge-corrected fit estimates the plain "
                              "mean of the reference labels (estimand='cells')")
        lev = self.level if level is None else check_level(level, DesignError)
        fr = self.frame
        rows = []
        for j, (m, c) in enumerate(zip(fr.models, self.scores)):
            judge = float(np.nanmean(fr.scores[fr.observed[:, j], j]))
            p = c.ppi
            if p is None:
                rows.append(dict(model=m, estimate=np.nan, std_error=np.nan, df=np.nan,
                                 ci_lower=np.nan, ci_upper=np.nan, level=lev, n=c.n,
                                 sigma_iid=np.nan, variance_ratio=np.nan, iid_std_error=np.nan,
                                 judge_estimate=judge, lam=np.nan,
                                 n_labelled=int(self._data.labelled[:, j].sum()),
                                 n_effective=np.nan, note=c.note))
                continue
            q = float(stats.norm.ppf(0.5 + lev / 2) if not np.isfinite(p.df)
                      else stats.t.ppf(0.5 + lev / 2, p.df))
            se = p.std_error
            rows.append(dict(model=m, estimate=p.estimate, std_error=se, df=p.df,
                             ci_lower=p.estimate - q * se, ci_upper=p.estimate + q * se,
                             level=lev, n=c.n, sigma_iid=p.sigma,
                             variance_ratio=p.variance / p.variance_cell if p.variance_cell > 0
                             else np.nan, iid_std_error=float(np.sqrt(p.variance_cell)),
                             judge_estimate=judge, lam=p.lam, n_labelled=p.n_labelled,
                             n_effective=p.n_effective, note=""))
        return former_column(tidy(rows, **self._meta("model_scores", unit=fr.spec.unit or "cell",
                                        model="PPI++ mean of the reference labels")),
                             "design_effect", "variance_ratio")

    def variance_components(self) -> pd.DataFrame:
        """Variance components: none, PPI++ fits no mixed model.

        Returns
        -------
        pandas.DataFrame
            Empty, with the columns of :meth:`FitResult.variance_components`;
            ``attrs["mixrank"]["note"]`` says why.

        Examples
        --------
        >>> import mixrank
        >>> tq = mixrank.load_dataset("triviaqa_judges").query("judge_name == 'Llama-7B'")
        >>> d = tq[tq["model"].isin(["gpt-4t", "llama2-70b-chat", "mistral-7B"])]
        >>> d = d.assign(gold=d["gold"].where(d["question"].rank(method="dense") % 10 == 0))
        >>> res = mixrank.fit("judge ~ model", d, gold="gold")   # human grades of 40 questions
        >>> vc = res.variance_components()
        >>> vc.empty, vc.columns.tolist()
        (True, ['model_a', 'model_b', 'group', 'variance', 'std_dev', 'share'])
        """
        cols = ["model_a", "model_b", "group", "variance", "std_dev", "share"]
        return tidy(pd.DataFrame(columns=cols), **self._meta("variance_components",
                                                            note=_NO_COMPONENTS))

    def anova(self, *, adjust: str = "none") -> pd.DataFrame:
        """Not available: a judge-corrected fit has no model x covariate formula.

        Parameters
        ----------
        adjust : str, default "none"
            As :meth:`FitResult.anova`.

        Returns
        -------
        pandas.DataFrame
            Never: always raises.

        Raises
        ------
        DesignError
            Always, saying why.

        Examples
        --------
        >>> import mixrank
        >>> tq = mixrank.load_dataset("triviaqa_judges").query("judge_name == 'Llama-7B'")
        >>> d = tq[tq["model"].isin(["gpt-4t", "llama2-70b-chat", "mistral-7B"])]
        >>> d = d.assign(gold=d["gold"].where(d["question"].rank(method="dense") % 10 == 0))
        >>> res = mixrank.fit("judge ~ model", d, gold="gold")   # human grades of 40 questions
        >>> res.anova()
        Traceback (most recent call last):
            ...
        mixrank.errors.DesignError: anova() needs a model x covariate formula; a judge-corrected fit (gold=) has no variance components: PPI++ estimates its uncertainty cluster-robustly at the unit (docs/judge.md §3)
        """
        raise DesignError("anova() needs a model x covariate formula; " + _NO_COMPONENTS)

    def sensitivity(self, kind: str | Sequence[str] = "loso", **kw: Any) -> pd.DataFrame:
        """Not available: it would refit the judge's scores and ignore the reference labels.

        Parameters
        ----------
        kind : str or list of str, default "loso"
            As :meth:`FitResult.sensitivity`.
        **kw
            As :meth:`FitResult.sensitivity`.

        Returns
        -------
        pandas.DataFrame
            Never: always raises.

        Raises
        ------
        DesignError
            Always, saying why (docs/judge.md §6).

        Examples
        --------
        >>> import mixrank
        >>> tq = mixrank.load_dataset("triviaqa_judges").query("judge_name == 'Llama-7B'")
        >>> d = tq[tq["model"].isin(["gpt-4t", "llama2-70b-chat", "mistral-7B"])]
        >>> d = d.assign(gold=d["gold"].where(d["question"].rank(method="dense") % 10 == 0))
        >>> res = mixrank.fit("judge ~ model", d, gold="gold")   # human grades of 40 questions
        >>> res.sensitivity()
        Traceback (most recent call last):
            ...
        mixrank.errors.DesignError: sensitivity() refits the mixed model of the judge's scores and would ignore the reference labels; it is not available for a judge-corrected fit (docs/judge.md §6)
        """
        raise DesignError("sensitivity() refits the mixed model of the judge's scores and "
                          "would ignore the reference labels; it is not available for a "
                          "judge-corrected fit (docs/judge.md §6)")

    def _rank_intervals(self, level: float, **kw: Any) -> pd.DataFrame:
        """Rank intervals from the corrected contrasts (every model needs reference labels)."""
        self._need_all_corrected("rank intervals")
        return super()._rank_intervals(level, **kw)

    @former_keywords
    def rank_probabilities(self, *, draws: int = 10000, rng: Any = None,
                           **old: Any) -> pd.DataFrame:
        """P(rank = r) and P(best) per model, from the corrected contrasts.

        Parameters
        ----------
        draws : int, default 10000
            Gaussian draws.
        rng : Generator or int, optional
            Randomness of the draws.

        Returns
        -------
        pandas.DataFrame
            As :meth:`FitResult.rank_probabilities`: ``model, rank, probability, p_best``.

        Raises
        ------
        DataError
            A model without reference labels.

        Examples
        --------
        >>> import mixrank
        >>> tq = mixrank.load_dataset("triviaqa_judges").query("judge_name == 'Llama-7B'")
        >>> d = tq[tq["model"].isin(["gpt-4t", "llama2-70b-chat", "mistral-7B"])]
        >>> d = d.assign(gold=d["gold"].where(d["question"].rank(method="dense") % 10 == 0))
        >>> res = mixrank.fit("judge ~ model", d, gold="gold")   # human grades of 40 questions
        >>> rp = res.rank_probabilities(draws=2000, rng=1)
        >>> best = rp[rp["rank"] == 1].set_index("model")["p_best"]
        >>> best.idxmax(), bool(best.max() > 0.99)
        ('gpt-4t', True)
        """
        self._need_all_corrected("rank probabilities")
        return super().rank_probabilities(draws=draws, rng=rng, **old)

    def score_group_fits(self) -> list[tuple[int, FitResult]]:
        """The one score group of a judge-corrected fit.

        Returns
        -------
        list of (int, FitResult)
            ``[(1, self)]``.

        Raises
        ------
        DesignError
            Models judged on disjoint cells (per-group sub-fits would not carry the correction).

        Examples
        --------
        >>> import mixrank
        >>> tq = mixrank.load_dataset("triviaqa_judges").query("judge_name == 'Llama-7B'")
        >>> d = tq[tq["model"].isin(["gpt-4t", "llama2-70b-chat", "mistral-7B"])]
        >>> d = d.assign(gold=d["gold"].where(d["question"].rank(method="dense") % 10 == 0))
        >>> res = mixrank.fit("judge ~ model", d, gold="gold")   # human grades of 40 questions
        >>> [(g, part is res) for g, part in res.score_group_fits()]
        [(1, True)]
        """
        groups = [g for _, g in super().score_group_fits()]
        if len(groups) > 1:
            raise DesignError("the models were judged on disjoint sets of cells (groups that "
                              "share no cell); a judge-corrected ranking needs every pair -- "
                              "fit each group separately with mixrank.fit(..., gold=)")
        return [(1, self)]

    def _need_all_corrected(self, what: str) -> None:
        bad = [m for m, c in zip(self.models, self.scores) if c.ppi is None]
        bad += [f"{p.model_a} vs {p.model_b}" for p in self.pairs if p.degenerate]
        if bad:
            raise DataError(f"{what} need a corrected score for every model and pair; without "
                            f"enough reference labels: {listed(bad)}. Label cells of those "
                            "models (in at least 2 units) or drop them from the data")

    def _resolution(self, level: float, *, power: float, pairs: Any, adjust: str | None,
                    anytime: bool | str, **kw: Any) -> pd.DataFrame:
        """Verdict table on the corrected contrasts, plus ``n_labels_star``.

        As :meth:`FitResult.resolution`, with: ``n`` the pair's judged common
        cells and ``sigma_d^2 / n`` the cell-unit PPI++ variance; the anytime
        paradigm is the normal-mixture boundary (``"auto"``; the Bernoulli
        e-process would count the judge's discordances, not the labels'); and
        ``n_labels_star`` -- reference labels needed to resolve the observed
        gap at the formula's unit (docs/judge.md §5), ``n_labelled`` and
        ``n_effective``.
        """
        if anytime == "auto" or anytime is True:
            anytime = "normal"
        tab = super()._resolution(level, power=power, pairs=pairs, adjust=adjust,
                                  anytime=anytime, **kw)
        al = tab.attrs["mixrank"]["alpha"]
        star, nl, ne = [], [], []
        for a, b, est in zip(tab["model_a"], tab["model_b"], tab["estimate"]):
            c, _ = self._pair_ppi(a, b)
            if c.ppi is None or not np.isfinite(est) or est == 0:
                star.append(np.inf)
                nl.append(0 if c.ppi is None else c.ppi.n_labelled)
                ne.append(np.nan)
                continue
            p = c.ppi
            de = max(p.variance / p.variance_cell, 1.0) if p.variance_cell > 0 else 1.0
            star.append(float(n_labels_star(est, p.sigma, p.rho if np.isfinite(p.rho) else 0.0,
                                            c.n, design_effect=de, alpha=al, power=power)))
            nl.append(p.n_labelled)
            ne.append(p.n_effective)
        tab["n_labelled"], tab["n_labels_star"], tab["n_effective"] = nl, star, ne
        return tab

    @former_keywords
    def plan(self, delta: float, *, labels: bool = True, subjects: int | None = None,
             questions: int | None = None, prompts: int | None = None, power: float = 0.8,
             level: float | None = None, pair: tuple[str, str] | None = None,
             roles: Mapping[str, str] | None = None,
             grid: Sequence[float] = (0.5, 1, 2, 4, 8), **old: Any) -> pd.DataFrame:
        """Label budget per pair to resolve ``delta`` (docs/judge.md §5).

        Parameters
        ----------
        delta : float
            Target gap (> 0).
        labels : bool, default True
            The label budget (the balanced-design planner needs variance
            components, which a PPI++ fit does not have: False is an error).
        pair : (str, str), optional
            One pair; default every corrected pair.
        power : float
        level : float, optional
            Default the fit's (two-sided ``alpha = 1 - level``; former keyword
            ``alpha=``, deprecated).
        subjects, questions, prompts, roles, grid
            Not available (a balanced design needs variance components).

        Returns
        -------
        pandas.DataFrame
            Per pair: ``model_a, model_b`` and the columns of
            :func:`mixrank.judge.plan.plan_labels` with the pair's fitted values: ``delta``,
            ``sigma`` (SD of the paired label differences), ``rho`` (judge-reference
            correlation of the differences), ``n_judged`` (common cells), ``design_effect``
            (of the unit, at least 1), ``n_labels_star`` (labels needed with the judge, inf if
            ``n_judged`` cannot suffice), ``n_labels_only_star`` (labels needed without a
            judge), ``n_labels`` (cells labelled for both), ``n_judged_star`` (judged cells the
            labels at hand need), ``n_effective`` (what the labels at hand are worth without a
            judge), ``alpha, power``, ``note`` (what an infinite count means).

        Raises
        ------
        DesignError
            ``labels=False`` or a design option (``subjects``, ``questions``, ``prompts``,
            ``roles``); a bad ``delta``, ``level`` or ``power``.
        DataError
            No pair with enough reference labels to plan.

        Examples
        --------
        >>> import mixrank
        >>> tq = mixrank.load_dataset("triviaqa_judges").query("judge_name == 'Llama-7B'")
        >>> d = tq[tq["model"].isin(["gpt-4t", "llama2-70b-chat", "mistral-7B"])]
        >>> d = d.assign(gold=d["gold"].where(d["question"].rank(method="dense") % 10 == 0))
        >>> res = mixrank.fit("judge ~ model", d, gold="gold")   # human grades of 40 questions
        >>> pl = res.plan(0.25)
        >>> [int(np.ceil(x)) for x in pl["n_labels_star"]], pl["n_labels"].tolist()
        ([15, 15, 20], [40.0, 40.0, 40.0])
        """
        from .plan import plan_labels

        if labels is not True or any(v is not None for v in (subjects, questions, prompts,
                                                                roles)):
            raise DesignError("a judge-corrected fit plans labels only: fit.plan(delta, "
                              "labels=True[, pair=, level=, power=]); " + _NO_COMPONENTS)
        alpha = alpha_from(level, old, default=self.level, where="JudgeResult.plan")
        unexpected_keywords(old, "JudgeResult.plan")
        chosen = [pair] if pair is not None else [(p.model_a, p.model_b) for p in self.pairs]
        rows = []
        for a, b in chosen:
            c, _ = self._pair_ppi(str(a), str(b))
            if c.ppi is None:
                continue
            p = c.ppi
            de = max(p.variance / p.variance_cell, 1.0) if p.variance_cell > 0 else 1.0
            t = plan_labels(delta, sigma=p.sigma, rho=p.rho if np.isfinite(p.rho) else 0.0,
                            n_judged=c.n, n_labels=p.n_labelled, design_effect=de,
                            alpha=alpha, power=power)
            rows.append(dict(model_a=a, model_b=b, **t.iloc[0].to_dict()))
        if not rows:
            raise DataError("no corrected pair to plan: every pair lacks reference labels")
        return tidy(rows, **self._meta("plan_labels"))

    def contrast_covariance(self) -> tuple[np.ndarray, dict[str, Any]]:
        """Joint covariance of the corrected contrasts, for ``adjust="maxt"`` and ``rank_probabilities``.

        Returns
        -------
        tuple of (numpy.ndarray, dict)
            The covariance in pair order and its notes, as
            :func:`mixrank.judge.joint.contrast_covariance_ppi`.

        Raises
        ------
        DesignError
            The result holds no judge data (not built by ``mixrank.fit(..., gold=)``).

        Examples
        --------
        >>> import mixrank
        >>> tq = mixrank.load_dataset("triviaqa_judges").query("judge_name == 'Llama-7B'")
        >>> d = tq[tq["model"].isin(["gpt-4t", "llama2-70b-chat", "mistral-7B"])]
        >>> d = d.assign(gold=d["gold"].where(d["question"].rank(method="dense") % 10 == 0))
        >>> res = mixrank.fit("judge ~ model", d, gold="gold")   # human grades of 40 questions
        >>> cov, notes = res.contrast_covariance()
        >>> cov.shape, bool((np.diag(cov) > 0).all()), sorted(notes)
        ((3, 3), True, ['psd_clipped'])
        """
        return contrast_covariance_ppi(self._data, self.pairs, self.corrections)

    def judge(self, level: float | None = None) -> pd.DataFrame:
        """Judge diagnostics per model.

        Parameters
        ----------
        level : float, optional
            Confidence level; default the fit's.

        Returns
        -------
        pandas.DataFrame
            One row per model (:func:`mixrank.judge.diagnostics.judge_table`): ``model,
            n_labelled`` (labelled cells), ``judge_mean, reference_mean`` (on the labelled
            cells), ``bias`` (judge - reference), ``std_error, df, ci_lower, ci_upper, level``
            (of the bias, at the formula's unit), ``correlation`` (Pearson, judge vs
            reference), ``kappa`` (Cohen's, 0/1 scores only, else NaN), ``lam`` (of the
            corrected score), ``n_effective``, ``note``; the differential-bias test in
            ``attrs["mixrank"]["differential_bias"]``.

        Raises
        ------
        DesignError
            A level outside (0, 1).

        Examples
        --------
        >>> import mixrank
        >>> tq = mixrank.load_dataset("triviaqa_judges").query("judge_name == 'Llama-7B'")
        >>> d = tq[tq["model"].isin(["gpt-4t", "llama2-70b-chat", "mistral-7B"])]
        >>> d = d.assign(gold=d["gold"].where(d["question"].rank(method="dense") % 10 == 0))
        >>> res = mixrank.fit("judge ~ model", d, gold="gold")   # human grades of 40 questions
        >>> j = res.judge()
        >>> j["n_labelled"].tolist(), j["bias"].round(3).tolist()   # lenient on llama2-70b-chat
        ([40, 40, 40], [-0.025, 0.125, 0.025])
        """
        lev = self.level if level is None else check_level(level, DesignError)
        return judge_table(self._data, list(self.scores), lev)

    def effective_labels(self) -> float:
        """Median over corrected pairs of the labels the correction is worth.

        Returns
        -------
        float
            The median effective number of labels (NaN without a corrected pair).

        Examples
        --------
        >>> import mixrank
        >>> tq = mixrank.load_dataset("triviaqa_judges").query("judge_name == 'Llama-7B'")
        >>> d = tq[tq["model"].isin(["gpt-4t", "llama2-70b-chat", "mistral-7B"])]
        >>> d = d.assign(gold=d["gold"].where(d["question"].rank(method="dense") % 10 == 0))
        >>> res = mixrank.fit("judge ~ model", d, gold="gold")   # human grades of 40 questions
        >>> round(res.effective_labels(), 1)   # the 40 labels are worth about 59
        59.1
        """
        vals = [c.ppi.n_effective for c in self.corrections if c.ppi is not None]
        return float(np.median(vals)) if vals else float("nan")

    def __str__(self) -> str:
        return (f"<JudgeResult {self.frame.spec.formula!r} gold={self._data.column!r}: "
                f"{len(self.pairs)} pair(s) of {len(self.models)} models, PPI++>")


_LOOKUP: weakref.WeakKeyDictionary[JudgeResult, tuple[dict[frozenset[str], PairFit],
                                                      dict[int, Corrected]]] = \
    weakref.WeakKeyDictionary()
