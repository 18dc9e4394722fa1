"""Stage results: :class:`PairwiseResult`, the one base of every pairwise result.

Inputs: a concrete result (:class:`~mixrank.results.FitResult`,
:class:`~mixrank.results.GlmmResult` and its ``model * x`` subclasses,
:class:`~mixrank.judge.result.JudgeResult`,
:class:`~mixrank.arena.result.ArenaResult`) supplies its ``level``, its
``models`` and two hooks: ``_rank_intervals`` and ``_resolution``.
Outputs: what every result shares, written once --

* ``level`` and the alpha derived from it (:meth:`PairwiseResult._level`,
  :meth:`PairwiseResult._alpha`): every accessor's default is the fit's
  level, never a hard-coded 0.95 / 0.05;
* the judged pairs (:meth:`PairwiseResult.judged_pairs`: ``"adjacent"``,
  ``"all"`` or a list, resolved to model pairs in one place);
* the declared options of each accessor (:attr:`PairwiseResult.OPTIONS`,
  accessor -> option -> allowed values) and the one check
  (:meth:`PairwiseResult.check_option`) raising the one
  :class:`~mixrank.OptionError` message;
* the accessors ``rank_intervals`` and ``resolution`` with the vocabulary of
  docs/vocabulary.md (``level=``, ``adjust=``, ``draws=``, ``pairs=``) and
  the former spellings (``alpha=``, ``method=``, ``multiplicity=``, ``B=``)
  for one release, with a :class:`~mixrank.MixrankDeprecationWarning`.

The pair lookup has one home, :func:`mixrank.engine.records.pair_lookup`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._deprecate import level_from_alpha
from .._util import check_level, check_max_draws
from ..design.judged import JUDGED, judged_pairs
from ..errors import DesignError, OptionError
from ..inference.keywords import former, unexpected_keywords
from ..inference.multiplicity import adjust_values
from ..inference.ranks.core import COVERAGES

__all__ = ["PairwiseResult", "OptionTable", "ANY", "JUDGED", "FIT_OPTIONS", "GLMM_OPTIONS", "GLMM_BY_OPTIONS",
           "GLMM_SLOPE_OPTIONS"]

#: Accessor -> option -> allowed values (None: any value the accessor checks itself).
OptionTable = Mapping[str, Mapping[str, "tuple[Any, ...] | None"]]
#: "Any value" in :attr:`PairwiseResult.OPTIONS` (the accessor checks the value itself).
ANY: tuple[Any, ...] | None = None

_RANK: dict[str, tuple[Any, ...] | None] = {
    "coverage": COVERAGES, "adjust": adjust_values("rank_intervals"), "draws": ANY,
    "rng": ANY}
_RESOLUTION: dict[str, tuple[Any, ...] | None] = {
    "power": ANY, "pairs": ANY, "adjust": adjust_values("resolution") + (None,),
    "anytime": (True, False, "auto", "normal", "bernoulli")}

#: Options of :class:`~mixrank.results.FitResult` (and JudgeResult) per accessor.
FIT_OPTIONS: dict[str, dict[str, tuple[Any, ...] | None]] = {
    "contrasts": {"by": ANY, "adjust": adjust_values("contrasts"), "draws": ANY, "rng": ANY},
    "rank_intervals": {**_RANK, "by": ANY},
    "rank_probabilities": {"draws": ANY, "rng": ANY},
    "resolution": {**_RESOLUTION, "models": ANY, "top": ANY, "cluster": (True, False)},
    "sensitivity": {"kind": ("loso", "bootstrap", "clusterings"), "pairs": ANY, "models": ANY,
                    "top": ANY, "power": ANY, "unit": ANY, "draws": ANY, "groupings": ANY,
                    "n_random": ANY, "rng": ANY, "summary": (True, False), "progress": ANY},
    "plan": {"subjects": ANY, "questions": ANY, "prompts": ANY, "power": ANY, "pair": ANY,
             "roles": ANY, "grid": ANY, "labels": (True, False)},
    "model_scores": {"estimand": ("gls", "cells", "units"), "by": ANY,
                     "scoring": ("adjusted", "plain")},
    "anova": {"adjust": ("none", "holm")},
}
#: Options of :class:`~mixrank.results.GlmmResult` (and its ``model * x`` subclasses).
GLMM_OPTIONS: dict[str, dict[str, tuple[Any, ...] | None]] = {
    "contrasts": {"scale": ("logit", "response"), "adjust": adjust_values("glmm_contrasts"),
                  "df": ("containment", "wald")},
    "rank_intervals": {**_RANK, "scale": ("logit", "response")},
    "resolution": {**_RESOLUTION, "models": ANY, "top": ANY},
    "model_scores": {"scale": ("logit", "response")},
    "pass_at_k": {"k": ANY},
    "anova": {"adjust": adjust_values("glmm_contrasts")},
}


def _with(table: dict[str, dict[str, tuple[Any, ...] | None]], **extra: dict[str, Any]
          ) -> dict[str, dict[str, tuple[Any, ...] | None]]:
    """``table`` with more options per accessor (``accessor={option: allowed}``)."""
    out = {k: dict(v) for k, v in table.items()}
    for acc, opts in extra.items():
        out.setdefault(acc, {}).update(opts)
    return out


#: Options of :class:`~mixrank.results.GlmmByResult` (categorical ``x``: ``by=``).
GLMM_BY_OPTIONS = _with(GLMM_OPTIONS, contrasts={"by": ANY}, model_scores={"by": ANY},
                        rank_intervals={"by": ANY})
#: Options of :class:`~mixrank.results.GlmmSlopeResult` (numeric ``x``: ``by=``, ``at=``).
GLMM_SLOPE_OPTIONS = _with(GLMM_OPTIONS, contrasts={"by": ANY, "at": ANY},
                           model_scores={"by": ANY, "at": ANY},
                           rank_intervals={"by": ANY, "at": ANY})


class PairwiseResult:
    """Base of the pairwise results: level, judged pairs, declared options, shared accessors.

    Subclasses are frozen dataclasses with a ``level`` field and a
    ``models`` attribute; they declare :attr:`OPTIONS` and implement
    ``_rank_intervals(level, coverage=, adjust=, draws=, rng=, **options)``
    and ``_resolution(level, power=, pairs=, adjust=, anytime=, **options)``
    (``options``: the declared, accessor-specific ones such as ``scale``).
    """

    level: float
    #: The hooks of the shared accessors, one per result type:
    #: ``_rank_intervals(level, *, coverage, adjust, draws, rng, **declared options)`` and
    #: ``_resolution(level, *, power, pairs, adjust, anytime, **declared options)``.
    _rank_intervals: Callable[..., pd.DataFrame]
    _resolution: Callable[..., pd.DataFrame]
    #: Supported options per accessor: ``{accessor: {option: allowed values or None (any)}}``.
    #: The CLI and the docs read it; :meth:`check_option` enforces it.
    OPTIONS: ClassVar[OptionTable] = {
        "rank_intervals": _RANK, "resolution": _RESOLUTION}

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
        """The options ``accessor`` takes on this result type and their allowed values
        (None: any value the accessor validates); empty when the type lacks it."""
        return dict(cls.OPTIONS.get(accessor, {}))

    def check_option(self, accessor: str, option: str, value: Any) -> Any:
        """``value`` if this result type's ``accessor`` supports ``option=value``, else the one
        :class:`OptionError` naming the option, the value, the result type and what is
        supported.  Strings are compared case-insensitively and returned lower-cased."""
        kind = type(self).__name__
        table = type(self).OPTIONS.get(accessor)
        if table is None:
            raise OptionError(f"{kind} has no {accessor}(); accessors with options: "
                              f"{sorted(type(self).OPTIONS)}")
        if option not in table:
            raise OptionError(f"{option}={value!r} is not supported by {kind}.{accessor}(); "
                              f"its options are {', '.join(f'{o}=' for o in table)}")
        allowed = table[option]
        key = value.lower() if isinstance(value, str) else value
        if allowed is not None and not any(key is a or (type(key) is type(a) and key == a)
                                           for a in allowed):
            raise OptionError(f"{option}={value!r} is not supported by {kind}.{accessor}(); "
                              f"supported values: {list(allowed)}")
        return key

    def _options(self, accessor: str, given: Mapping[str, Any]) -> dict[str, Any]:
        """The accessor-specific options that were passed (not None), each checked."""
        return {k: self.check_option(accessor, k, v) for k, v in given.items() if v is not None}

    # ------------------------------------------------------------ contrasts
    @staticmethod
    def contrast_row(model_a: str, model_b: str, estimate: Any, std_error: Any, df: Any,
                     q: Any, sf: Callable[[Any], Any], *, level: float, n: int,
                     zero_se_nan: bool = True, **extra: Any) -> dict[str, Any]:
        """One row of a contrasts table from the family's hook -- the pair's ``estimate``,
        ``std_error``, ``df`` and ``n`` on its scale -- with the reference's critical value
        ``q`` and survival function ``sf``: ``statistic = estimate / std_error``,
        two-sided ``p_value``, ``p_greater`` (H1: model_a better) and the interval
        ``estimate -/+ q std_error``.  ``zero_se_nan``: no statistic without a positive
        standard error (the Wald families).  ``extra`` columns follow ``n``."""
        z = (estimate / std_error if std_error > 0 else np.nan) if zero_se_nan \
            else estimate / std_error
        return dict(model_a=model_a, model_b=model_b, estimate=estimate, std_error=std_error,
                    df=df, statistic=z, p_value=float(2 * sf(abs(z))), p_greater=float(sf(z)),
                    ci_lower=estimate - q * std_error, ci_upper=estimate + q * std_error,
                    level=level, n=n, **extra)

    # ---------------------------------------------------------- judged pairs
    def judged_pairs(self, pairs: str | Sequence[Sequence[str]], order: Sequence[str], *,
                     models: Sequence[str] | None = None, top: int | None = None
                     ) -> list[tuple[str, str]]:
        """The pairs judged: ``"adjacent"`` (consecutive models of ``order``, best first),
        ``"all"`` (every pair of ``order``, the better-scoring first) or explicit
        ``(model_a, model_b)`` pairs of two different models of the fit, kept as given.
        With ``"adjacent"``/``"all"``, ``models`` keeps only those models of ``order`` and
        ``top`` the ``top`` best of them (the one rule, :func:`mixrank.design.judged.judged_pairs`)."""
        return judged_pairs(order, self.models, pairs, models, top)   # type: ignore[attr-defined]

    # ------------------------------------------------------ shared accessors
    def rank_intervals(self, level: float | None = None, *, coverage: str = "marginal",
                       adjust: str = "holm", draws: int = 2000, rng: Any = None,
                       scale: str | None = None, by: str | None = None,
                       at: Any = None, **old: Any) -> pd.DataFrame:
        """Rank confidence intervals of the models (docs/methods.md §7).

        Parameters
        ----------
        level : float, optional
            Coverage level; default the fit's ``level``.
        coverage : {"marginal", "simultaneous"}, default "marginal"
        adjust : {"holm", "bonferroni", "bh", "maxt"}, default "holm"
            The multiplicity method (former name ``method=``, deprecated).
        draws : int, default 2000
            Gaussian draws of ``adjust="maxt"`` (former name ``B=``, deprecated).
        rng : Generator or int, optional
        scale : str, optional
            Result types with scales (binomial GLMM: ``"logit"``,
            ``"response"``): the scale of the scores and tests.
        by : str, optional
            Model x covariate fits: one ranking per level of ``by``.
        at : float or list of float, optional
            Binomial fits with a numeric covariate: the covariate values.

        Options a result type does not support (see
        ``type(result).supported_options("rank_intervals")``) raise
        :class:`~mixrank.OptionError`.  Columns and procedures:
        :func:`mixrank.inference.ranks.rank_intervals_from_contrasts`.
        """
        where = f"{type(self).__name__}.rank_intervals"
        adjust = former(old, "method", "adjust", adjust, "holm", where=where)
        draws = former(old, "B", "draws", draws, 2000, where=where)
        unexpected_keywords(old, where, ("level", *self.supported_options("rank_intervals")))
        lev = self._level(level)
        coverage = self.check_option("rank_intervals", "coverage", coverage)
        adjust = self.check_option("rank_intervals", "adjust", adjust)
        check_max_draws("draws", draws, DesignError)   # before any path draws (hardening.md §8)
        extra = self._options("rank_intervals", dict(scale=scale, by=by, at=at))
        return self._rank_intervals(lev, coverage=coverage, adjust=adjust, draws=draws, rng=rng,
                                    **extra)

    def resolution(self, *, level: float | None = None, power: float = 0.8,
                   pairs: str | Sequence[tuple[str, str]] | None = None,
                   models: Sequence[str] | None = None, top: int | None = None,
                   adjust: str | None = "holm", anytime: bool | str = "auto",
                   cluster: bool | None = None, **old: Any) -> pd.DataFrame:
        """Resolution verdicts per judged pair (docs/methods.md §6, "Verdict table").

        Parameters
        ----------
        level : float, optional
            Default the fit's ``level``; the verdicts' two-sided ``alpha = 1 -
            level`` (former keyword ``alpha=``, deprecated).
        power : float, default 0.8
        pairs : {"adjacent", "all"} or list of (model_a, model_b), optional
            The pairs judged (default: the fitted pairs of a restricted fit,
            else ``"adjacent"``).
        models, top : optional
            With ``"adjacent"``/``"all"``: only these models / the ``top`` best.
        adjust : {"holm", "bonferroni", "bh"} or None, default "holm"
            The multiplicity paradigm's method (former name ``multiplicity=``,
            deprecated); None drops that paradigm.
        anytime : {"auto", "normal", "bernoulli"} or bool, default "auto"
        cluster : bool, optional
            The clustered paradigm (default: on where the result type has one).

        Options a result type does not support (see
        ``type(result).supported_options("resolution")``) raise
        :class:`~mixrank.OptionError`.  Columns:
        :func:`mixrank.design.resolution.resolution_table`.
        """
        where = f"{type(self).__name__}.resolution"
        adjust = former(old, "multiplicity", "adjust", adjust, "holm", where=where)
        if "alpha" in old:
            level = level_from_alpha(old.pop("alpha"), level, where=where, stacklevel=3)
        unexpected_keywords(old, where, ("level", *self.supported_options("resolution")))
        lev = self._level(level)
        adjust = self.check_option("resolution", "adjust", adjust)
        anytime = self.check_option("resolution", "anytime", anytime)
        extra = self._options("resolution", dict(models=models, top=top, cluster=cluster))
        return self._resolution(lev, power=power, pairs=pairs, adjust=adjust, anytime=anytime,
                                **extra)
