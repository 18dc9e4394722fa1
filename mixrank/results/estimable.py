"""Stage results: the estimable parts of a :class:`~mixrank.results.FitResult`.

Inputs: a fit whose pairs are not all estimable (``incomplete``), or whose models fall in
groups that share no cells.  Outputs: :class:`EstimableMixin` (a base of ``FitResult``):
``estimable_part()`` (the fit without the models of its not-estimable pairs),
``score_group_fits()`` (one fit per group of models that share cells),
``weak_terms()`` (random terms with too few levels in some pair), docs/messy.md §2-§4, and
the design accessors run on the estimable part, ``sensitivity()`` and ``plan()``, which list
the models left out in ``attrs["mixrank"]["left_out"]``.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pandas as pd

from .._deprecate import former_keywords
from ..engine.estimability import (
    MIN_LEVELS,
    WeakTerm,
    models_to_drop,
    score_groups,
    select_models,
    weak_terms,
)
from .base import left_out

__all__ = ["EstimableMixin"]


class EstimableMixin:
    """``estimable_part``, ``score_group_fits``, ``weak_terms``, ``sensitivity`` and ``plan``."""

    frame: Any
    pairs: Any
    incomplete: Any
    models: Any
    method: Any
    engine: Any
    estimand: Any
    level: Any
    restricted: Any
    control: Any
    _df_of: Any
    #: The class the parts are built as (:class:`~mixrank.results.FitResult`, also for a
    #: judge-corrected fit), given by the class this mixin is a base of.
    _plain_fit: Any

    def estimable_part(self) -> tuple[Any, list[str]]:
        """This fit without the models of its not-estimable pairs, and those models.

        The models are removed greedily (the one in most such pairs first,
        :func:`~mixrank.engine.estimability.models_to_drop`), so every
        remaining pair was fitted; the fit itself when nothing is incomplete.
        Rank intervals, verdict tables, sensitivity, planning and anova use
        it and list the removed models in ``attrs["mixrank"]["left_out"]``
        (docs/messy.md §3).

        Returns
        -------
        part : FitResult
            The fit restricted to the kept models and the pairs among them (the fit itself
            when every pair was fitted).
        left_out : list of str
            The removed models (empty when nothing is incomplete).

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> part, left = res.estimable_part()
        >>> part is res, left
        (True, [])
        """
        if not self.incomplete:
            return self, []
        hit = _PARTS.get(self)
        if hit is None:
            names = list(self.models)
            bad = [(names.index(p.model_a), names.index(p.model_b)) for p in self.incomplete]
            drop = models_to_drop(names, bad)
            keep = [j for j, m in enumerate(names) if m not in drop]
            kept = set(names[j] for j in keep)
            sub = tuple(p for p in self.pairs if p.model_a in kept and p.model_b in kept)
            part = self._plain_fit()(
                frame=select_models(self.frame, keep), pairs=sub, method=self.method,
                engine=self.engine, estimand=self.estimand, level=self.level,
                restricted=self.restricted, control=self.control, **self._df_of(sub))
            hit = _PARTS[self] = (part, drop)
        return hit

    def score_group_fits(self) -> list[tuple[int, Any]]:
        """One fit per group of models that share cells (docs/messy.md §4).

        The groups are those of :func:`~mixrank.engine.estimability.score_groups`; a group of
        one model is left out.  Rank intervals and rank probabilities rank each group apart.

        Returns
        -------
        list of (int, FitResult)
            ``(group, fit restricted to the group's models)`` per group with at least 2
            models, by group number; ``[(1, self)]`` when all models share cells.

        Examples
        --------
        >>> import warnings
        >>> import mixrank
        >>> d = mixrank.load_example()
        >>> d = d[d["model"].isin(["m01", "m02"]) == (d["subject"] <= "s06")]   # disjoint cells
        >>> with warnings.catch_warnings():   # the pairs across the groups are not fitted
        ...     warnings.simplefilter("ignore", mixrank.MixrankWarning)
        ...     res = mixrank.fit("correct ~ model + (1|subject)", d)
        >>> [(g, part.models) for g, part in res.score_group_fits()]
        [(1, ('m01', 'm02')), (2, ('m03', 'm04', 'm05', 'm06'))]
        """
        groups = score_groups(self.frame)
        if max(groups, default=1) == 1:
            return [(1, self)]
        out = []
        for g in sorted(set(groups)):
            keep = [j for j, x in enumerate(groups) if x == g]
            if len(keep) < 2:
                continue
            names = {self.models[j] for j in keep}
            within = [tuple(p for p in ps if p.model_a in names and p.model_b in names)
                      for ps in (self.pairs, self.incomplete)]
            out.append((g, self._plain_fit()(
                frame=select_models(self.frame, keep), pairs=within[0], method=self.method,
                engine=self.engine, estimand=self.estimand, level=self.level,
                incomplete=within[1], restricted=self.restricted, control=self.control,
                **self._df_of(within[0]))))
        return out

    def weak_terms(self, threshold: int = MIN_LEVELS) -> list[WeakTerm]:
        """Random terms with too few levels among some fitted pair's common cells.

        As :func:`~mixrank.engine.estimability.weak_terms` (docs/messy.md §2): the terms whose
        variance, and the Satterthwaite df, rest on few levels.

        Parameters
        ----------
        threshold : int, default 5
            A term with fewer levels than this in some pair's common cells is weak
            (``MIN_LEVELS``; lme4's ``check.nlev.gtr.5`` uses 5 too).

        Returns
        -------
        list of WeakTerm
            One per weak term: ``term, levels`` (fewest levels among the affected pairs),
            ``n_pairs`` (affected pairs), ``examples`` (up to three of them), ``threshold``,
            and ``message()`` (the warning text); empty when no term is weak.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> res.weak_terms()
        []
        >>> w = res.weak_terms(threshold=20)[0]
        >>> w.term, w.levels, w.n_pairs
        ('subject', 12, 15)
        """
        idx = [(self.frame.model_index(p.model_a), self.frame.model_index(p.model_b))
               for p in self.pairs]
        return weak_terms(self.frame, idx, threshold)


    @former_keywords
    def sensitivity(self,
                    kind: Literal["loso", "bootstrap", "clusterings"] | Sequence[str] = "loso", *,
                    pairs: str | Sequence[tuple[str, str]] | None = None,
                    models: Sequence[str] | None = None, top: int | None = None,
                    level: float | None = None, power: float = 0.8, unit: str | None = None,
                    draws: int = 1000, groupings: Any = None, n_random: int = 200,
                    rng: Any = None, summary: bool = False, progress: Any = None,
                    **old: Any) -> pd.DataFrame:
        """How robust is the clustered verdict? (docs/sensitivity.md §2).

        Parameters
        ----------
        kind, pairs, models, top, level, power, unit, draws, groupings, n_random, rng, summary, progress
            As :func:`mixrank.design.sensitivity.sensitivity_of`; here ``pairs=None`` is the fitted
            pairs of a restricted fit (else ``"adjacent"``), ``unit=None`` the random term with the
            fewest levels (:func:`~mixrank.design.sensitivity.frames.choose_unit`).

        Returns
        -------
        pandas.DataFrame
            As :func:`~mixrank.design.sensitivity.sensitivity_of`: one row per (replicate,
            pair), ``kind, replicate, label`` (the left-out level, ``"draw"``, the grouping's
            name or ``"random"``), ``model_a, model_b, estimate, n, sigma_d, weight_factor,
            std_error, variance_ratio`` (``design_effect``, its former name, for one release),
            ``q, q_cluster, resolved, resolved_cluster, same_sign`` (the full fit's sign),
            ``fitted``; ``summary=True``: one row per pair instead.  ``attrs["mixrank"]`` adds
            ``unit_reason`` (why that unit) and ``left_out`` (models not estimable).

        Raises
        ------
        DesignError
            An unknown kind, no random term (and no ``unit``), a unit with fewer than 3
            levels (loso), bad ``draws`` / ``n_random``, unknown grouping columns.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> s = res.sensitivity()   # leave one subject out, adjacent pairs
        >>> len(s), s["label"].nunique(), s.attrs["mixrank"]["unit"]
        (60, 12, 'subject')
        >>> flips = s[~s["same_sign"]]   # replicates whose gap has the other sign
        >>> sorted(set(zip(flips["model_a"], flips["model_b"]))), len(flips)
        ([('m03', 'm02')], 2)
        """
        part, left = self.estimable_part()
        from ..design.sensitivity import sensitivity_of
        tab = sensitivity_of(part, kind, pairs=pairs, models=models, top=top,
                              level=level, power=power, unit=unit, draws=draws,
                              groupings=groupings, n_random=n_random, rng=rng, summary=summary,
                              progress=progress, **old)
        return left_out(tab, left)

    @former_keywords
    def plan(self, delta: float, *, subjects: int | None = None, questions: int | None = None,
             prompts: int | None = None, power: float = 0.8, level: float | None = None,
             pair: tuple[str, str] | None = None, roles: Mapping[str, str] | None = None,
             grid: Sequence[float] = (0.5, 1, 2, 4, 8), labels: bool = False,
             **old: Any) -> pd.DataFrame:
        """Plan a balanced design that resolves ``delta`` (docs/methods.md §6, "Design planning").

        Parameters
        ----------
        delta, subjects, questions, prompts, power, level, pair, roles, grid, labels
            As :func:`mixrank.design.plan.plan_of` (``labels=True`` needs ``fit(..., gold=)``).

        Returns
        -------
        pandas.DataFrame
            As :func:`mixrank.design.plan.plan_of`: one row per design, ``kind``
            (``"current"``, ``"design"``, ``"grid"`` or ``"minimal"``), ``vary`` (the factor
            varied), ``subjects, questions, prompts, n`` (cells), ``variance, std_error``
            (of the gap's estimate), ``mde``, ``q`` (resolution ratio), ``resolved``,
            ``unreachable``, ``limit_std_error``, ``model_a, model_b`` (the pair whose
            variance components the plan uses); ``attrs["mixrank"]["left_out"]``: models not
            estimable.

        Raises
        ------
        DesignError
            ``delta`` zero or not finite, a count that is not a whole number >= 1, a random
            term without a role, ``labels=True`` without ``fit(..., gold=)``.

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> pl = res.plan(0.05)
        >>> minimal = pl[pl["kind"] == "minimal"].set_index("vary")
        >>> int(minimal.loc["subjects", "subjects"]), bool(minimal.loc["subjects", "resolved"])
        (59, True)
        """
        from ..design.plan import plan_of  # on first use: a fit does not need it

        part, left = self.estimable_part()
        return left_out(plan_of(part, delta, subjects=subjects, questions=questions,
                                  prompts=prompts, power=power, level=level, pair=pair,
                                  roles=roles, grid=grid, labels=labels, **old), left)

_PARTS: weakref.WeakKeyDictionary[Any, tuple[Any, list[str]]] = weakref.WeakKeyDictionary()
