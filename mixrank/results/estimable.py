"""Stage results: the estimable parts of a :class:`~mixrank.results.FitResult`.

Inputs: a fit whose pairs are not all estimable (``incomplete``), or whose models fall in
groups that share no cells.  Outputs: :class:`EstimableMixin` (a base of ``FitResult``):
``estimable_part()`` (the fit without the models of its not-estimable pairs),
``score_group_fits()`` (one fit per group of models that share cells) and
``weak_terms()`` (random terms with too few levels in some pair), docs/messy.md §2-§4.
"""

from __future__ import annotations

import weakref
from typing import Any

from ..engine.estimability import (
    MIN_LEVELS,
    WeakTerm,
    models_to_drop,
    score_groups,
    select_models,
    weak_terms,
)

__all__ = ["EstimableMixin"]


class EstimableMixin:
    """``estimable_part``, ``score_group_fits`` and ``weak_terms`` of a fit."""

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


_PARTS: weakref.WeakKeyDictionary[Any, tuple[Any, list[str]]] = weakref.WeakKeyDictionary()
