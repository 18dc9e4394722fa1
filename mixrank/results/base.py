"""Stage results: :class:`ContrastsTemplate`, the base of every result (the pairwise results'
base, :class:`~mixrank.results.pairwise_result.PairwiseResult`, builds on it).

Inputs: a concrete result (:class:`~mixrank.results.FitResult`,
:class:`~mixrank.results.GlmmResult` and its ``model * x`` subclasses,
:class:`~mixrank.judge.result.JudgeResult`,
:class:`~mixrank.arena.result.ArenaResult`, and -- through
:class:`ContrastsTemplate` alone -- :class:`~mixrank.subset.SubsetResult`)
supplies its ``level``, its ``models`` and the hooks ``_pair_estimates``,
``_rank_intervals`` and ``_resolution`` (the last two: pairwise results only).
Outputs: what every result shares, written once --

* ``level`` and the alpha derived from it (:meth:`ContrastsTemplate._level`,
  :meth:`ContrastsTemplate._alpha`): every accessor's default is the fit's
  level, never a hard-coded 0.95 / 0.05;
* the judged pairs (:meth:`PairwiseResult.judged_pairs`: ``"adjacent"``,
  ``"all"`` or a list, resolved to model pairs in one place);
* the declared options of each accessor (:attr:`ContrastsTemplate.OPTIONS`,
  accessor -> option -> allowed values, declared on each result class) and
  the one check (the classmethod :meth:`ContrastsTemplate.check_option`)
  raising the one :class:`~mixrank.OptionError` message;
* the accessors ``contrasts`` (every result) and ``rank_intervals`` and ``resolution``
  (:class:`PairwiseResult`) with the
  vocabulary of docs/vocabulary.md (``level=``, ``adjust=``, ``draws=``,
  ``pairs=``) and the former spellings (``alpha=``, ``method=``,
  ``multiplicity=``, ``B=``) for one release, with a
  :class:`~mixrank.MixrankDeprecationWarning`.  ``contrasts`` is the one
  template: it validates, asks the result type for its pair estimates
  (the hook ``_pair_estimates``, a
  :class:`~mixrank.inference.pairwise.PairEstimates`) and leaves every
  adjustment, max-t included, to :func:`mixrank.inference.pairwise.adjusted_contrasts`;
* ``repr()`` and ``_repr_html_()`` (:class:`mixrank._util.TextDisplay`) from
  each type's one-line ``__str__``.

The pair lookup has one home, :func:`mixrank.engine.records.pair_lookup`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from .._deprecate import former_keywords, warn_renamed
from .._util import TextDisplay, as_rng, check_level
from ..design.judged import JUDGED
from ..design.verdict_stepdown import FIT_DEFAULT
from ..errors import OptionError
from ..inference.keywords import former, unexpected_keywords
from ..inference.multiplicity import adjust_values
from ..inference.pairwise import PairEstimates, adjusted_contrasts
from ..inference.randomization import check_flip_ci, flip_ci_problem, flip_reference
from ..inference.ranks.core import COVERAGES
from .letters import LettersMixin

__all__ = ["ContrastsTemplate", "OptionTable", "ANY", "JUDGED", "RANK_OPTIONS",
           "RESOLUTION_OPTIONS", "RESOLUTION_FIT_OPTIONS", "with_options", "PairEstimates",
           "DEFAULT", "left_out", "FIT_OPTIONS"]

#: Accessor -> option -> allowed values (None: any value the accessor checks itself).
OptionTable = Mapping[str, Mapping[str, "tuple[Any, ...] | None"]]
#: "Any value" in :attr:`ContrastsTemplate.OPTIONS` (the accessor checks the value itself).
ANY: tuple[Any, ...] | None = None

#: The options of ``rank_intervals`` every result type shares.
RANK_OPTIONS: dict[str, tuple[Any, ...] | None] = {
    "coverage": COVERAGES, "adjust": adjust_values("rank_intervals"), "draws": ANY,
    "rng": ANY}
#: The options of ``resolution`` every result type shares.
RESOLUTION_OPTIONS: dict[str, tuple[Any, ...] | None] = {
    "power": ANY, "pairs": ANY, "adjust": adjust_values("resolution") + (None,),
    "anytime": (True, False, "auto", "normal", "bernoulli")}
#: ``FitResult.resolution``: also the unit-randomization step-down (CR2 path).
RESOLUTION_FIT_OPTIONS = dict(RESOLUTION_OPTIONS, adjust=(*adjust_values("resolution_fit"), None))
#: Options of :class:`~mixrank.results.FitResult` per accessor (accessor -> option -> allowed values, None: any).
FIT_OPTIONS: dict[str, dict[str, tuple[Any, ...] | None]] = {
    "contrasts": {"by": ANY, "adjust": adjust_values("contrasts"), "draws": ANY, "rng": ANY,
                  "ci": ("t", "randomization")},
    "rank_intervals": {**RANK_OPTIONS, "by": ANY},
    "rank_probabilities": {"draws": ANY, "rng": ANY},
    "resolution": {**RESOLUTION_FIT_OPTIONS, "models": ANY, "top": ANY, "cluster": (True, False),
                   "design_effect": ("model", "anova")},
    "sensitivity": {"kind": ("loso", "bootstrap", "clusterings"), "pairs": ANY, "models": ANY,
                    "top": ANY, "power": ANY, "unit": ANY, "draws": ANY, "groupings": ANY,
                    "n_random": ANY, "rng": ANY, "summary": (True, False), "progress": ANY},
    "plan": {"subjects": ANY, "questions": ANY, "prompts": ANY, "power": ANY, "pair": ANY,
             "roles": ANY, "grid": ANY, "labels": (True, False)},
    "model_scores": {"estimand": ("gls", "cells", "units"), "by": ANY,
                     "scoring": ("adjusted", "plain")},
    "anova": {"adjust": ("none", "holm")},
}


def with_options(table: OptionTable, **extra: dict[str, Any] | None
                 ) -> dict[str, dict[str, tuple[Any, ...] | None]]:
    """``table`` with more options per accessor (``accessor={option: allowed}``); an
    accessor given ``None`` is dropped (the subclass lacks it)."""
    out = {k: dict(v) for k, v in table.items()}
    for acc, opts in extra.items():
        if opts is None:
            out.pop(acc, None)
        else:
            out.setdefault(acc, {}).update(opts)
    return out


def left_out(tab: Any, left: list[str]) -> Any:
    """``tab`` with the models left out as not estimable in ``attrs["mixrank"]["left_out"]``."""
    if left and isinstance(tab, pd.DataFrame):
        tab.attrs.setdefault("mixrank", {})["left_out"] = list(left)
    return tab


#: ``resolution(adjust=DEFAULT)``: the result type's :meth:`PairwiseResult._default_verdict_adjust`
#: (there ``adjust=None`` drops the multiplicity paradigm, so "not given" needs its own
#: object: :data:`mixrank.design.verdict_stepdown.FIT_DEFAULT`, shown as ``default``).
#: ``contrasts()`` and ``rank_intervals()`` take ``adjust=None`` for the type's default.
DEFAULT: Any = FIT_DEFAULT


class ContrastsTemplate(LettersMixin, TextDisplay):
    """Base of every result with a contrasts table: level, declared options, ``contrasts()``.

    Subclasses have a ``level`` attribute, declare :attr:`OPTIONS` (at least
    ``"contrasts"``) and implement ``_pair_estimates(level, **options)`` (a
    :class:`PairEstimates`; ``options``: the declared, accessor-specific ones
    such as ``scale`` or ``method``).  ``repr()`` is their ``__str__``.
    """

    level: float
    #: The hook of the contrasts template: ``_pair_estimates(level, **declared options)``.
    _pair_estimates: Callable[..., PairEstimates]
    #: Supported options per accessor: ``{accessor: {option: allowed values or None (any)}}``.
    #: The CLI and the docs read it; :meth:`check_option` enforces it.
    OPTIONS: ClassVar[OptionTable] = {}
    #: Why a value another result type accepts is refused here: ``{(accessor, option, value): why}``
    #: (every ``adjust`` one family takes, the other takes too or says why not).
    REFUSED: ClassVar[dict[tuple[str, str, Any], str]] = {}
    #: The ``adjust=`` of ``contrasts()`` when none is given (one constant per result type).
    DEFAULT_ADJUST: ClassVar[str] = "holm"
    #: The ``draws=`` of a jointly drawn ``adjust=`` (``"maxt"``, ``"stepdown"``) when none is given.
    DEFAULT_DRAWS: ClassVar[int] = 10000

    # ----------------------------------------------------------------- level
    def _level(self, level: float | None = None) -> float:
        """``level`` checked (an :class:`OptionError` outside (0, 1)); None: the fit's."""
        return float(self.level) if level is None else check_level(level, OptionError)

    def _alpha(self, level: float | None = None) -> float:
        """The two-sided alpha of ``level`` (default the fit's): ``1 - level``, rounded to
        12 digits so that level 0.95 gives alpha 0.05 exactly."""
        return round(1.0 - self._level(level), 12)

    # --------------------------------------------------------------- options
    @classmethod
    def supported_options(cls, accessor: str) -> dict[str, tuple[Any, ...] | None]:
        """The options ``accessor`` takes on this result type and their allowed values.

        Parameters
        ----------
        accessor : str
            An accessor's name, such as ``"contrasts"``.

        Returns
        -------
        dict
            Option -> allowed values (None: any); empty when the type lacks ``accessor``.

        Examples
        --------
        >>> import mixrank
        >>> mixrank.FitResult.supported_options("anova")
        {'adjust': ('none', 'holm')}
        >>> mixrank.JudgeResult.supported_options("anova")   # a judge-corrected fit has none
        {}
        """
        return dict(cls.OPTIONS.get(accessor, {}))

    @classmethod
    def check_option(cls, accessor: str, option: str, value: Any) -> Any:
        """Check that this result type's ``accessor`` supports ``option=value``.

        Parameters
        ----------
        accessor, option, value : str, str, object
            The accessor's and the option's names, the value given.

        Returns
        -------
        object
            ``value`` (a string lower-cased: strings compare case-insensitively).

        Raises
        ------
        OptionError
            Naming the option, the value, the result type and what is supported.

        Examples
        --------
        >>> import mixrank
        >>> mixrank.FitResult.check_option("contrasts", "adjust", "Holm")
        'holm'
        >>> mixrank.FitResult.check_option("contrasts", "scale", "logit")
        Traceback (most recent call last):
            ...
        mixrank.errors.OptionError: scale='logit' is not supported by FitResult.contrasts(); its options are by=, adjust=, draws=, rng=, ci=
        """
        kind = cls.__name__
        table = cls.OPTIONS.get(accessor)
        if table is None:
            raise OptionError(f"{kind} has no {accessor}(); accessors with options: "
                              f"{sorted(cls.OPTIONS)}")
        if option not in table:
            raise OptionError(f"{option}={value!r} is not supported by {kind}.{accessor}(); "
                              f"its options are {', '.join(f'{o}=' for o in table)}")
        allowed = table[option]
        if allowed is None:     # any value: the accessor checks it (a column name keeps its case)
            return value
        key = value.lower() if isinstance(value, str) else value
        if not any(key is a or (type(key) is type(a) and key == a)
                                           for a in allowed):
            from .._util import did_you_mean
            why = cls.REFUSED.get((accessor, option, key), "")
            raise OptionError(f"{option}={value!r} is not supported by {kind}.{accessor}(); "
                              f"supported values: {list(allowed)}" + (f" ({why})" if why else "")
                              + did_you_mean(value, allowed))
        return key

    def _options(self, accessor: str, given: Mapping[str, Any]) -> dict[str, Any]:
        """The accessor-specific options that were passed (not None), each checked."""
        return {k: self.check_option(accessor, k, v) for k, v in given.items() if v is not None}

    # ------------------------------------------------------------ contrasts
    @staticmethod
    def contrast_row(model_a: str, model_b: str, estimate: Any, std_error: Any, df: Any,
                     q: Any, sf: Callable[[Any], Any], *, level: float, n: int,
                     zero_se_nan: bool = True, **extra: Any) -> dict[str, Any]:
        """One row of a contrasts table from a result type's pair estimates.

        Parameters
        ----------
        model_a, model_b, estimate, std_error, df, level, n, **extra
            The pair, its estimate, SE and df on its scale, the level, the common cells.
        q, sf : float, callable
            The reference's critical value at ``level`` and survival function.
        zero_se_nan : bool, default True
            No statistic without a positive standard error (the Wald families).

        Returns
        -------
        dict
            ``model_a, model_b, estimate, std_error, df, statistic, p_value`` (two-sided),
            ``p_greater`` (H1: model_a better), ``ci_lower, ci_upper, level, n``, ``extra``.

        Examples
        --------
        >>> from scipy import stats
        >>> import mixrank
        >>> row = mixrank.FitResult.contrast_row("m01", "m02", 0.5, 0.25, 10.0, 2.0,
        ...                                      stats.norm.sf, level=0.95, n=40, note="")
        >>> row["statistic"], row["ci_lower"], row["ci_upper"], round(row["p_value"], 3)
        (2.0, 0.0, 1.0, 0.046)
        """
        z = (estimate / std_error if std_error > 0 else np.nan) if zero_se_nan \
            else estimate / std_error
        return dict(model_a=model_a, model_b=model_b, estimate=estimate, std_error=std_error,
                    df=df, statistic=z, p_value=float(2 * sf(abs(z))), p_greater=float(sf(z)),
                    ci_lower=estimate - q * std_error, ci_upper=estimate + q * std_error,
                    level=level, n=n, **extra)

    @former_keywords
    def contrasts(self, level: float | None = None, *,
                  adjust: Literal["none", "holm", "bonferroni", "bh", "maxt", "stepdown"]
                  | None = None,
                  scale: Literal["logit", "response", "elo", "probability"] | None = None,
                  by: Any = None, at: Any = None, df: Literal["containment", "wald"] | None = None,
                  draws: Any = None, rng: Any = None,
                  method: Literal["model_assisted", "stratified_mean", "irt"] | None = None,
                  ci: Literal["t", "randomization"] | None = None, **old: Any) -> pd.DataFrame:
        """Pairwise contrasts ``model_a - model_b`` (every result type: one template).

        Parameters
        ----------
        level : float, optional
            Confidence level in (0, 1); default the fit's ``level``.
        adjust : str, optional
            Multiplicity adjustment of ``p_adjusted`` across the pairs shown
            (those with a finite p-value; within each level with ``by``);
            default the result type's (:attr:`DEFAULT_ADJUST`, ``"holm"``).  Every result type
            takes ``"holm"``, ``"bh"`` (false discovery rate) and ``"none"``;
            the binomial GLMM also ``"bonferroni"``; paired mixed-model and
            judge-corrected fits also ``"maxt"`` (single-step max-t from the
            joint covariance of all contrasts, or from unit sign flips with
            ``fit(df="cr2")``; it also makes ``ci_lower, ci_upper``
            simultaneous) and ``"stepdown"`` (step-down max-t over unit sign
            flips, ``df="cr2"`` fits).  Arena fits take ``"bonferroni"`` and
            ``"maxt"`` too (max-``|z|`` from the exact joint normal law of the
            strengths, :class:`~mixrank.inference.pairwise.NormalCoefficients`).
            A subset score (:class:`~mixrank.subset.SubsetResult`) adjusts
            within each new model and defaults to ``"none"`` (see Notes).
            The accepted set of a type:
            ``type(result).supported_options("contrasts")["adjust"]``.
        scale : {"logit", "response", "elo", "probability"}, optional
            Binomial GLMM: ``logit`` (default), the log-odds difference with
            its Wald SE from the joint covariance, and ``odds_ratio,
            odds_ratio_lower, odds_ratio_upper`` columns; ``response``: the
            difference in probability averaged over the frame's cells
            (average marginal effect), SE by the delta method (docs/glmm.md §5).
            Arena fits: default the fit's ``scale`` (``arena(scale=)``);
            ``logit`` (log-odds of a win), ``elo`` (times 400 / ln 10) or
            ``probability`` (P(model_a beats model_b) in a decisive battle,
            ``1 / (1 + exp(-estimate))``: interval endpoints transformed,
            ``std_error`` by the delta method); tests are the same on every
            scale.
        by : str, optional
            Model x covariate formulas only: the gap per level of that
            covariate (per unit of a numeric one for paired mixed models, at
            its quartiles for a binomial GLMM with a numeric covariate), one
            row per pair and level with a column named ``by``; see
            :func:`mixrank.results.interactions.contrasts_by` and
            docs/glmm.md §11.  Without ``by``, an interaction fit reports the
            overall gap of its estimand (docs/interactions.md §3).
        at : float or list of float, optional
            Binomial GLMM with a numeric covariate: the covariate values
            (default its mean over the cells; with ``by``, its quartiles).
        df : {"containment", "wald"}, optional
            Binomial GLMM: the reference distribution.  ``"containment"``
            (the default when the formula has a model-by-unit term such as
            ``(1|subject:model)`` whose unit has at least 3 levels): t with
            ``T - 1`` df, T the unit's levels (docs/glmm.md, "Small-sample
            reference"); ``"wald"``: glmer's z test (df inf).  Model x
            covariate GLMMs take ``"wald"`` only.
        draws : int, optional
            Draws of ``adjust="maxt"``/``"stepdown"`` (default
            :attr:`DEFAULT_DRAWS`, 10000; former name ``B=``, deprecated).
        rng : Generator or int, optional
            Randomness of ``adjust="maxt"``/``"stepdown"``.
        method : {"model_assisted", "stratified_mean", "irt"}, optional
            Subset scores only: the estimate of the new model (default
            ``"model_assisted"``; see :meth:`mixrank.subset.SubsetResult.scores`).
            Passed as the first positional argument (the former signature
            ``contrasts(method)``) it still works for one release, with a
            :class:`~mixrank.MixrankDeprecationWarning`.
        ci : {"t", "randomization"}, optional
            Paired mixed-model fits with ``df="cr2"`` and a unit of 6 to 14
            levels: ``"randomization"`` takes each pair's ``p_value,
            p_greater`` from its own unit sign-flip test (all ``2^T`` flips)
            and ``ci_lower, ci_upper`` from inverting it (marginal, so not
            with ``adjust="maxt"`` or ``by``; docs/methods.md §9): the
            marginal test of the step-down's ``p_adjusted``, for when the
            Bell-McCaffrey df collapse.  Its default where ``contrasts()``
            defaults to the step-down and the intervals are marginal; ``"t"``
            (the pair's t test and interval) elsewhere.

        Returns
        -------
        pandas.DataFrame
            ``model_a, model_b`` (then the ``by`` column), ``estimate,
            std_error, df`` (inf: normal reference), ``statistic`` (t or z),
            ``p_value`` (two-sided), ``p_adjusted``, ``p_greater`` (one-sided,
            H1: model_a better), ``ci_lower, ci_upper, level, n`` (common
            cells); paired mixed models add ``note`` (why a row has no test:
            a degenerate pair, or a pair the formula cannot estimate -- NaN
            estimate, appended after the fitted pairs; else empty);
            judge-corrected fits add ``lam, n_labelled, n_effective``; the
            binomial GLMM adds ``trials`` (and ``odds_ratio,
            odds_ratio_lower, odds_ratio_upper`` on the logit scale); arena
            fits add ``wins_a, wins_b, ties`` (``n``: battles between the two;
            with ``se="bootstrap"`` the interval is the draws' percentile
            interval); subset scores have ``model_a`` (new), ``model_b``
            (reference), no ``p_greater`` and no ``n``.
            ``attrs["mixrank"]`` records ``adjust``, ``family_size`` and
            ``ci`` (marginal or simultaneous) without ``by``, the estimand or
            scale, and ``not_estimable`` (paired mixed models).

        Raises
        ------
        OptionError
            An option the result type does not take, or a value outside its
            set (``type(result).supported_options("contrasts")``); a bad
            ``level``.
        DesignError
            ``draws`` outside [1000, the draw cap] with a jointly drawn
            adjustment ([100, the cap] for arena fits); ``adjust="maxt"`` with ``by``; ``df="containment"``
            without a model-by-unit term of at least 3 levels.

        Notes
        -----
        ``statistic = estimate / std_error`` referred to t with the pair's df
        (Satterthwaite, units - 1, Bell-McCaffrey) or to the normal (Wald);
        ``ci = estimate -/+ q std_error``.  Each result type supplies its pair
        estimates (``_pair_estimates``); the adjustment is
        :func:`mixrank.inference.pairwise.adjusted_contrasts`.  Validated
        against lme4 1.1 + lmerTest 3.1 (``tests/reference/lme4_engine.R``),
        glmer (``tests/reference/glmer.R``, ``glmer_by.R``,
        ``glmer_slope.R``) and ppi_py (judge-corrected fits); Holm, Bonferroni
        and BH as R's ``p.adjust``; max-t as docs/model_scores.md §3-§4.
        Arena contrasts: ``z = estimate / std_error`` from the Bradley-Terry
        covariance, validated against statsmodels' ``Logit`` and a direct
        scipy likelihood for Davidson ties (``tests/arena/test_estimate.py``).
        Subset scores: a reference model's full mean is known exactly, so a
        contrast carries the new model's standard error and df; at most one
        of a new model's contrasts can be null (its score is one number), so
        the closed-testing adjustment of its family is the p-value itself
        (Shaffer 1986) and ``adjust="none"`` is its default: ``p_adjusted <
        alpha`` exactly when the reference lies outside the score's interval,
        as in :meth:`~mixrank.subset.SubsetResult.rank_intervals`.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> c = res.contrasts()
        >>> int((c["p_value"] < 0.05).sum()), int((c["p_adjusted"] < 0.05).sum())
        (7, 3)
        >>> c.attrs["mixrank"]["adjust"], c.attrs["mixrank"]["flips"]   # all 2**11 sign flips
        ('stepdown', 2048)
        >>> int((res.contrasts(adjust="holm")["p_adjusted"] < 0.05).sum())
        1
        """
        where = f"{type(self).__name__}.contrasts"
        accepted = self.supported_options("contrasts")
        if isinstance(level, str) and "method" in accepted and method is None:
            warn_renamed(f"contrasts({level!r})", f"contrasts(method={level!r})", where=where)
            method, level = level, None       # the former signature contrasts(method)
        if "draws" in accepted:
            draws = former(old, "B", "draws", draws, None, where=where)
        unexpected_keywords(old, where, ("level", *accepted))
        lev = self._level(level)
        how = self.check_option("contrasts", "adjust",
                                self._default_adjust() if adjust is None else adjust)
        extra = self._options("contrasts", dict(scale=scale, by=by, at=at, df=df, draws=draws,
                                                rng=rng, method=method, ci=ci))
        asked = [f"{k}={v!r}" for k, v in (("draws", draws), ("rng", rng)) if v is not None]
        draws, rng = extra.pop("draws", self.DEFAULT_DRAWS), extra.pop("rng", None)
        self._check_rng(rng)
        if asked and how not in ("maxt", "stepdown"):
            # one rule (docs/vocabulary.md, "No argument silently ignored"): an option the
            # call's own options leave unused is refused; with maxt / stepdown whether draws
            # are taken depends on the data (attrs['mixrank']['exact'] says)
            raise OptionError(f"{' and '.join(asked)} set the draws of adjust='maxt' or "
                              f"'stepdown'; adjust={how!r} draws nothing, so they would be "
                              "ignored: drop them or pass adjust='maxt'")
        flip = extra.pop("ci", None)
        if flip == "randomization":          # asked for; the default is chosen only where valid
            check_flip_ci(self, adjust=how, by=by, level=lev)
        flip = flip or self._default_ci(how, by, lev)
        est = self._pair_estimates(lev, **extra)
        return adjusted_contrasts(flip_reference(self, est, level=lev)
                                  if flip == "randomization" else est,
                                  adjust=how, level=lev, draws=draws, rng=rng)

    def _default_adjust(self) -> str:
        """The ``adjust=`` of ``contrasts()`` when none is given: :attr:`DEFAULT_ADJUST`
        (a result type whose default depends on the fit overrides this)."""
        return self.DEFAULT_ADJUST

    def _default_ci(self, adjust: str, by: Any, level: float) -> str:
        """The ``ci=`` of ``contrasts()`` when none is given: ``"randomization"`` -- each
        pair's own unit sign-flip test and its inverted interval, the marginal test of the
        step-down's ``p_adjusted`` -- where the result type takes it, ``contrasts()``
        defaults to the step-down and the flips reach ``level`` with marginal intervals
        (not ``adjust="maxt"``, not ``by=``); else ``"t"`` (docs/methods.md §9)."""
        takes = "randomization" in (self.supported_options("contrasts").get("ci") or ())
        if not takes or self._default_adjust() != "stepdown":
            return "t"
        return "t" if flip_ci_problem(self, adjust=adjust, by=by, level=level) else "randomization"

    def _check_rng(self, rng: Any) -> None:
        """``contrasts(rng=)`` is checked whatever the adjustment (a bad value is an
        :class:`OptionError` naming ``rng`` before an unused one is)."""
        if rng is not None:
            as_rng(rng)
