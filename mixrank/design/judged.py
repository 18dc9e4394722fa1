"""The pairs a verdict table, a rank family or a sensitivity check judges (design stage).

Stage: design (on top of a fitted model); the one home of ``pairs=``
(docs/vocabulary.md: "family" names only the response distribution).
Inputs: the models in score order, the models of the fit and the options
``pairs`` (``"adjacent"``, ``"all"`` or a list of ``(model_a, model_b)``),
``models`` and ``top``.
Outputs: the judged pairs as ``(model_a, model_b)`` tuples, better-scoring
model first for ``"adjacent"`` and ``"all"`` (:func:`judged_pairs`, used by
every result type through :meth:`mixrank.results.pairwise_result.PairwiseResult.judged_pairs`);
for a linear fit also the fit-aware wrapper :func:`select_pairs` (score groups
of models that share no cells, orientation by each pair's own contrast) and
the default :func:`default_pairs`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mixrank.engine.records import pair_key, pair_lookup
from mixrank.errors import DesignError, OptionError

__all__ = ["judged_pairs", "select_pairs", "default_pairs", "JUDGED"]

#: Named sets of pairs accepted by ``pairs=``.
JUDGED = ("adjacent", "all")


def judged_pairs(order: Sequence[str], names: Sequence[str], pairs: Any,
                 models: Sequence[str] | None = None, top: int | None = None, *,
                 groups: dict[str, Any] | None = None,
                 orient: Callable[[str, str], tuple[str, str]] | None = None,
                 allowed: Callable[[str, str], bool] | None = None) -> list[tuple[str, str]]:
    """The judged pairs, validated (:class:`DesignError`; an unknown name: :class:`OptionError`).

    ``order``: the models best first; ``names``: every model of the fit.
    ``"adjacent"``: consecutive models of ``order`` (within each of ``groups``,
    a model -> group map, when given); ``"all"``: every pair of ``order`` for
    which ``allowed(a, b)`` holds (default: all).  ``orient`` may flip a named
    pair (e.g. so that its own estimate is >= 0).  ``models`` keeps only those
    models of ``order`` and ``top`` the ``top`` best of them (named sets only);
    explicit pairs are kept in the orientation given.
    """
    order = [str(m) for m in order]
    names = [str(m) for m in names]
    if models is not None:
        if isinstance(models, str):
            raise DesignError(f"models= must be a list of model names; received the string "
                              f"{models!r}. Wrap it in a list.")
        wanted = [str(m) for m in models]
        unknown = [m for m in wanted if m not in names]
        if unknown:
            raise DesignError(f"models={unknown} are not levels of the fit's comparison factor "
                              f"(its models); available: {names}.")
        if len(set(wanted)) < 2:
            raise DesignError(f"models= must name at least two distinct models; received {wanted}.")
        keep = set(wanted)
        order = [m for m in order if m in keep]
    if top is not None:
        if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or not 2 <= top:
            raise DesignError(f"top must be a whole number >= 2 (the best `top` models by "
                              f"score); received top={top!r}.")
        order = order[: int(top)]
    flip = orient or (lambda a, b: (a, b))
    if isinstance(pairs, str):
        key = pairs.lower()
        if key == "adjacent":
            out: list[tuple[str, str]] = []
            for g in dict.fromkeys((groups or {}).get(m) for m in order):
                inside = [m for m in order if (groups or {}).get(m) == g]
                out += [flip(a, b) for a, b in zip(inside[:-1], inside[1:])]
            return out
        if key == "all":
            ok = allowed or (lambda a, b: True)
            return [flip(a, b) for i, a in enumerate(order) for b in order[i + 1:] if ok(a, b)]
        raise OptionError(f"pairs={pairs!r} is not a set of pairs; expected 'adjacent' "
                          f"(consecutive models in score order), 'all' (every fitted pair) or "
                          f"a list of (model_a, model_b)")
    if not isinstance(pairs, Sequence):
        raise DesignError(f"pairs must be 'adjacent', 'all' or a list of (model_a, model_b); "
                          f"received {pairs!r}.")
    if models is not None or top is not None:
        raise DesignError(f"models= and top= select the models of pairs='adjacent' or 'all'; "
                          f"with explicit pairs leave them None (received models={models!r}, "
                          f"top={top!r}).")
    fam = []
    for pr in pairs:
        if isinstance(pr, str) or not isinstance(pr, Sequence) or len(pr) != 2:
            raise DesignError(f"each pair must be (model_a, model_b); received {pr!r}.")
        a, b = str(pr[0]), str(pr[1])
        unknown = [m for m in (a, b) if m not in names]
        if unknown or a == b:
            raise DesignError(
                f"pair {tuple(pr)!r} must name two different models of the fit; "
                + (f"{', '.join(map(repr, unknown))} {'is' if len(unknown) == 1 else 'are'} "
                   f"not a model of the fit (models: {names})." if unknown
                   else "both are the same model."))
        fam.append((a, b))
    if not fam:
        raise DesignError("pairs is an empty list; pass at least one (model_a, model_b).")
    return fam


def default_pairs(fit: Any, pairs: Any, models: Sequence[str] | None = None,
                  top: int | None = None) -> Any:
    """``pairs=None``: the fitted pairs of a fit restricted with ``fit(..., pairs=)`` (when
    ``models`` and ``top`` are None too), else ``"adjacent"``; other values unchanged
    (docs/messy.md §4)."""
    if pairs is not None:
        return pairs
    if getattr(fit, "restricted", False) and models is None and top is None:
        return [(p.model_a, p.model_b) for p in fit.pairs]
    return "adjacent"


def select_pairs(fit: Any, pairs: Any, models: Sequence[str] | None,
                 top: int | None) -> list[tuple[str, str]]:
    """The judged pairs of a linear fit (:func:`judged_pairs` with the fit's own order).

    ``"adjacent"``: consecutive models in score order
    (:meth:`FitResult.model_scores`, ties by name, best first; within each
    score ``group`` when the models fall in groups sharing no cells);
    ``"all"``: every fitted pair among the selected models; each pair of
    these two oriented better model first by its own contrast (the fit's
    estimand), so its estimate is >= 0 (docs/messy.md §1).
    """
    scores = fit.model_scores()
    order = sorted(zip(scores["model"].astype(str), scores["estimate"].astype(float)),
                   key=lambda t: (-t[1], t[0]))
    fitted = pair_lookup(fit.pairs)
    groups = (dict(zip(scores["model"].astype(str), scores["group"]))
              if "group" in scores.columns else None)

    def better_first(a: str, b: str) -> tuple[str, str]:
        p = fitted.get(pair_key(a, b))
        if p is None or not np.isfinite(p.estimate):
            return a, b
        est = p.estimate if p.model_a == a else -p.estimate
        return (b, a) if est < 0 else (a, b)

    return judged_pairs([m for m, _ in order], [m for m, _ in order], pairs, models, top,
                        groups=groups, orient=better_first,
                        allowed=lambda a, b: pair_key(a, b) in fitted)
