"""Stage results: :class:`PairwiseResult`, the base of the pairwise results.

Inputs: a concrete pairwise result (:class:`~mixrank.results.FitResult`,
:class:`~mixrank.results.GlmmResult` and its ``model * x`` subclasses,
:class:`~mixrank.judge.result.JudgeResult`, :class:`~mixrank.arena.result.ArenaResult`)
supplies the hooks of :class:`~mixrank.results.base.ContrastsTemplate` and
``_rank_intervals`` and ``_resolution``.  Outputs: the judged pairs
(:meth:`PairwiseResult.judged_pairs`) and the accessors every pairwise result shares,
written once: ``rank_intervals`` and ``resolution`` (with ``contrasts``, ``letters`` and
``table`` from its bases).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

import pandas as pd

from .._deprecate import former_keywords, level_from_alpha
from .._util import check_max_draws
from ..design.judged import judged_pairs
from ..design.verdict_view import verdict_columns
from ..errors import DesignError
from ..inference.keywords import former, unexpected_keywords
from .base import DEFAULT, RANK_OPTIONS, RESOLUTION_OPTIONS, ContrastsTemplate, OptionTable
from .paper_table import PaperTableMixin

__all__ = ["PairwiseResult"]


class PairwiseResult(PaperTableMixin, ContrastsTemplate):
    """Base of the pairwise results: the contrasts template, judged pairs, shared accessors.

    Subclasses are frozen dataclasses (``repr=False``: ``repr()`` is their
    ``__str__``) with a ``level`` field and a ``models`` attribute; they
    declare :attr:`OPTIONS` and implement
    ``_pair_estimates(level, **options)`` (a :class:`PairEstimates`),
    ``_rank_intervals(level, coverage=, adjust=, draws=, rng=, **options)``
    and ``_resolution(level, power=, pairs=, adjust=, anytime=, **options)``
    (``options``: the declared, accessor-specific ones such as ``scale``).
    """

    #: The hooks of the shared accessors, one per result type:
    #: ``_rank_intervals(level, *, coverage, adjust, draws, rng, **declared options)`` and
    #: ``_resolution(level, *, power, pairs, adjust, anytime, **declared options)``.
    _rank_intervals: Callable[..., pd.DataFrame]
    _resolution: Callable[..., pd.DataFrame]
    OPTIONS: ClassVar[OptionTable] = {
        "rank_intervals": RANK_OPTIONS, "resolution": RESOLUTION_OPTIONS}

    def _default_rank_adjust(self) -> str:
        """The ``adjust=`` of ``rank_intervals()`` when none is given: ``"holm"`` (a result
        type whose contrasts default to a joint adjustment overrides this)."""
        return "holm"

    def _default_verdict_adjust(self) -> str:
        """The ``adjust=`` of ``resolution()`` when none is given: ``"stepdown"`` (its per-step
        levels from the same unit flips) where ``contrasts()`` defaults to the step-down and
        the verdicts take it (the linear fits' CR2 path), else ``"holm"``."""
        takes = "stepdown" in (self.OPTIONS.get("resolution", {}).get("adjust") or ())
        return "stepdown" if takes and self._default_adjust() == "stepdown" else "holm"

    # ---------------------------------------------------------- judged pairs
    def judged_pairs(self, pairs: str | Sequence[Sequence[str]], order: Sequence[str], *,
                     models: Sequence[str] | None = None, top: int | None = None
                     ) -> list[tuple[str, str]]:
        """The pairs judged (the one rule, :func:`mixrank.design.judged.judged_pairs`).

        Parameters
        ----------
        pairs : {"adjacent", "all"} or list of (model_a, model_b)
            Consecutive models of ``order``, every pair, or explicit pairs kept as given.
        order : list of str
            The models, best first.
        models, top : list of str, int, optional
            With ``"adjacent"``/``"all"``: only these models / the ``top`` best.

        Returns
        -------
        list of (str, str)
            The judged pairs ``(model_a, model_b)``.

        Raises
        ------
        OptionError
            ``pairs`` neither ``"adjacent"``, ``"all"`` nor a list of pairs.
        DesignError
            A listed pair that does not name two different models of the fit.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> order = res.rank_intervals()["model"].tolist()   # best first
        >>> res.judged_pairs("adjacent", order, top=3)
        [('m01', 'm03'), ('m03', 'm02')]
        >>> res.judged_pairs("all", order, models=["m01", "m02", "m03"])
        [('m01', 'm03'), ('m01', 'm02'), ('m03', 'm02')]
        """
        return judged_pairs(order, self.models, pairs, models, top)   # type: ignore[attr-defined]

    # ------------------------------------------------------ shared accessors
    @former_keywords
    def rank_intervals(self, level: float | None = None, *,
                       coverage: Literal["marginal", "simultaneous"] = "marginal",
                       adjust: Literal["holm", "bonferroni", "bh", "maxt"] | None = None,
                       draws: int = 2000, rng: Any = None,
                       scale: Literal["logit", "response"] | None = None, by: str | None = None,
                       at: Any = None, **old: Any) -> pd.DataFrame:
        """Rank confidence intervals of the models (docs/methods.md §7).

        Parameters
        ----------
        level : float, optional
            Coverage level; default the fit's ``level``.
        coverage : {"marginal", "simultaneous"}, default "marginal"
        adjust : {"holm", "bonferroni", "bh", "maxt"}, optional
            The multiplicity method (former name ``method=``, deprecated);
            default the result type's (:meth:`_default_rank_adjust`: ``"maxt"``,
            the unit randomization step-down, where ``contrasts()`` defaults to
            ``"stepdown"``; else ``"holm"``).
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

        Returns
        -------
        pandas.DataFrame
            A row per model, best first: ``model, estimate, rank, rank_lower, rank_upper,
            level, n`` (with ``by``: a ``by`` column and ``note``); ``attrs["mixrank"]``
            has ``coverage``, ``method`` and the ``pairwise`` tests
            (:func:`mixrank.inference.ranks.rank_intervals_from_contrasts`).

        Raises
        ------
        OptionError
            An option or value the type does not take (``supported_options``), a bad level.
        DesignError
            ``draws`` above the draw cap.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> r = res.rank_intervals()
        >>> r["model"].tolist(), r["rank_upper"].tolist(), r.attrs["mixrank"]["method"]
        (['m01', 'm03', 'm02', 'm05', 'm04', 'm06'], [1, 6, 6, 6, 6, 6], 'maxt')
        """
        where = f"{type(self).__name__}.rank_intervals"
        given = former(old, "method", "adjust", adjust, None, where=where)
        how = self._default_rank_adjust() if given is None else given
        draws = former(old, "B", "draws", draws, 2000, where=where)
        unexpected_keywords(old, where, ("level", *self.supported_options("rank_intervals")))
        lev = self._level(level)
        coverage = self.check_option("rank_intervals", "coverage", coverage)
        how = self.check_option("rank_intervals", "adjust", how)
        check_max_draws("draws", draws, DesignError)   # before any path draws (hardening.md §8)
        extra = self._options("rank_intervals", dict(scale=scale, by=by, at=at))
        return self._rank_intervals(lev, coverage=coverage, adjust=how, draws=draws, rng=rng,
                                    **extra)

    @former_keywords
    def resolution(self, *, level: float | None = None, power: float = 0.8,
                   pairs: str | Sequence[tuple[str, str]] | None = None,
                   models: Sequence[str] | None = None, top: int | None = None,
                   adjust: Literal["holm", "bonferroni", "bh", "stepdown"] | None = DEFAULT,
                   anytime: bool | Literal["auto", "normal", "bernoulli"] = "auto",
                   cluster: bool | None = None,
                   design_effect: Literal["model", "anova"] | None = None,
                   columns: str | Sequence[str] = "default", **old: Any) -> pd.DataFrame:
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
        adjust : {"holm", "bonferroni", "bh", "stepdown"} or None, optional
            The multiplicity paradigm's method (former name ``multiplicity=``,
            deprecated); None drops that paradigm.  Default the result type's
            (:meth:`_default_verdict_adjust`: ``"stepdown"``, the unit
            randomization step-down's per-step levels, where ``contrasts()``
            defaults to ``"stepdown"``; else ``"holm"``).
        anytime : {"auto", "normal", "bernoulli"} or bool, default "auto"
        cluster : bool, optional
            The clustered paradigm (default: on where the result type has one).
        design_effect : {"model", "anova"}, optional
            How the clustered paradigm's ``variance_ratio`` is computed
            (default ``"model"``: the default contrast's SE and df;
            ``"anova"``: the published recipe's design effect from the one-way
            ANOVA ICC), where the result type has one.
        columns : {"default", "all"} or list of str, default "default"
            ``"default"``: the seed paper's table, at most 14 columns -- ``model_a,
            model_b, estimate, n, n_star, q``, the verdict of each paradigm
            (``resolved`` fixed-n, ``resolved_multiplicity``, ``resolved_anytime``,
            ``resolved_cluster``), ``resolved_all``, the family-wise ``p_adjusted``
            (and ``n_labels_star`` for a judge-corrected fit, ``note`` for a pair left
            out of the fit); ``"all"``: every column (the paradigms' N*, MDE and q,
            ``std_error``, ``df``, ``sigma_d``, ``variance_ratio``, ...); or a list of
            column names (:func:`mixrank.design.verdict_view.verdict_columns`).

        Returns
        -------
        pandas.DataFrame
            A row per judged pair: ``model_a, model_b, estimate, n, sigma_d,
            weight_factor, variance_iid``; ``mde, n_star, q, resolved`` (fixed n),
            suffixed ``_multiplicity`` (and ``alpha_multiplicity``), ``_anytime`` (and
            ``discordance, inflation_anytime``), ``_cluster`` (and ``std_error, df,
            variance_ratio``); ``p_adjusted, rejected`` (the default contrast),
            ``resolved_all``; as :func:`mixrank.design.resolution.resolution_table`.

        Raises
        ------
        OptionError
            An option or value the type does not take (``supported_options``), a bad level.
        DesignError
            A pair in ``pairs`` that does not name two models of the fit.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> v = res.resolution()
        >>> v.attrs["mixrank"]["unresolved"]["fixed"], v.loc[v["resolved"], "model_b"].tolist()
        ('4/5 unresolved', ['m03'])
        """
        where = f"{type(self).__name__}.resolution"
        given = former(old, "multiplicity", "adjust", adjust, DEFAULT, where=where)
        how = self._default_verdict_adjust() if given is DEFAULT else given
        if "alpha" in old:
            level = level_from_alpha(old.pop("alpha"), level, where=where, stacklevel=3)
        unexpected_keywords(old, where, ("level", *self.supported_options("resolution")))
        lev = self._level(level)
        how = self.check_option("resolution", "adjust", how)
        anytime = self.check_option("resolution", "anytime", anytime)
        extra = self._options("resolution", dict(models=models, top=top, cluster=cluster,
                                                 design_effect=design_effect))
        if isinstance(columns, str) or not isinstance(columns, Sequence) or not columns:
            verdict_columns(pd.DataFrame(), columns)   # a bad view: refused before the verdicts
        return verdict_columns(self._resolution(lev, power=power, pairs=pairs, adjust=how,
                                                anytime=anytime, **extra), columns)
