"""The family of pairs a verdict table (or a sensitivity check) is about (design stage).

Stage: design (on top of a fitted model).
Inputs: a :class:`~mixrank.results.FitResult` and the family options of
:meth:`FitResult.resolution` (``pairs``, ``models``, ``top``).
Outputs: the pairs as ``(model_a, model_b)`` tuples, ``model_a`` the
better-scoring model for the ``adjacent`` and ``all`` families.
Contents: :func:`select_family`, :data:`PAIR_FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mixrank.engine.records import pair_key, pair_lookup
from mixrank.errors import DesignError

__all__ = ["select_family", "default_family", "PAIR_FAMILIES"]

#: Named families accepted by ``pairs=``.
PAIR_FAMILIES = ("adjacent", "all")


def default_family(fit: Any, pairs: Any, models: Sequence[str] | None = None,
                   top: int | None = None) -> Any:
    """``pairs=None``: the fitted pairs of a fit restricted with ``fit(..., pairs=)`` (when
    ``models`` and ``top`` are None too), else ``"adjacent"``; other values unchanged
    (docs/messy.md §4)."""
    if pairs is not None:
        return pairs
    if getattr(fit, "restricted", False) and models is None and top is None:
        return [(p.model_a, p.model_b) for p in fit.pairs]
    return "adjacent"


def _better_first(fitted: dict, a: str, b: str) -> tuple[str, str]:
    """``(a, b)`` (a scores higher), flipped when the pair's own contrast favours ``b``:
    every row of a named family has a non-negative estimate (docs/messy.md §1)."""
    p = fitted.get(pair_key(a, b))
    if p is None or not np.isfinite(p.estimate):
        return a, b
    est = p.estimate if p.model_a == a else -p.estimate
    return (b, a) if est < 0 else (a, b)


def select_family(fit: Any, pairs: Any, models: Sequence[str] | None,
                  top: int | None) -> list[tuple[str, str]]:
    """The pairs of the family, validated against the fit (DesignError otherwise).

    ``"adjacent"``: consecutive models in score order
    (:meth:`FitResult.model_scores`, ties by name, best first; within each
    score ``group`` when the models fall in groups sharing no cells);
    ``"all"``: every fitted pair among the selected models; each pair of
    these two oriented better model first by its own contrast (the fit's
    estimand), so its estimate is >= 0; or explicit
    pairs kept in the orientation given.  ``models`` restricts and ``top``
    keeps the best ``top`` models (named families only).
    """
    scores = fit.model_scores()
    order = sorted(zip(scores["model"].astype(str), scores["estimate"].astype(float)),
                   key=lambda t: (-t[1], t[0]))
    names = [m for m, _ in order]
    if models is not None:
        if isinstance(models, str):
            raise DesignError(f"models must be a list of model names; received the string "
                              f"{models!r}. Wrap it in a list.")
        wanted = [str(m) for m in models]
        unknown = [m for m in wanted if m not in names]
        if unknown:
            raise DesignError(f"models {unknown} are not levels of the fit's comparison factor; "
                              f"available: {names}.")
        if len(set(wanted)) < 2:
            raise DesignError(f"models must name at least two distinct models; received {wanted}.")
        names = [m for m in names if m in set(wanted)]
    if top is not None:
        if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or not 2 <= top:
            raise DesignError(f"top must be a whole number >= 2 (the best `top` models by "
                              f"score); received {top!r}.")
        names = names[: int(top)]
    if isinstance(pairs, str):
        if pairs not in PAIR_FAMILIES:
            raise DesignError(f"pairs must be 'adjacent' (consecutive models in score order), "
                              f"'all' (every fitted pair) or a list of (model_a, model_b); "
                              f"received {pairs!r}.")
        fitted = pair_lookup(fit.pairs)
        if pairs == "adjacent":
            group = (dict(zip(scores["model"].astype(str), scores["group"]))
                     if "group" in scores.columns else {})
            # models sharing no cells (score groups, docs/messy.md §4): adjacent within a group
            out: list[tuple[str, str]] = []
            for g in dict.fromkeys(group.get(m) for m in names):
                inside = [m for m in names if group.get(m) == g]
                out += [_better_first(fitted, a, b) for a, b in zip(inside[:-1], inside[1:])]
            return out
        if pairs == "all":
            return [_better_first(fitted, a, b) for i, a in enumerate(names) for b in names[i + 1:]
                    if pair_key(a, b) in fitted]
    if not isinstance(pairs, Sequence):
        raise DesignError(f"pairs must be 'adjacent', 'all' or a list of (model_a, model_b); "
                          f"received {pairs!r}.")
    if models is not None or top is not None:
        raise DesignError(f"models= and top= select the models of an 'adjacent' or 'all' "
                          f"family; with explicit pairs leave them None (received "
                          f"models={models!r}, top={top!r}).")
    out = []
    for pr in pairs:
        if isinstance(pr, str) or not isinstance(pr, Sequence) or len(pr) != 2:
            raise DesignError(f"each pair must be (model_a, model_b); received {pr!r}.")
        a, b = str(pr[0]), str(pr[1])
        unknown = [m for m in (a, b) if m not in names]
        if unknown or a == b:
            raise DesignError(
                f"pair {tuple(pr)!r} must name two different models of the fit; "
                + (f"{unknown} not among {names}." if unknown else "both are the same model.")
            )
        out.append((a, b))
    if not out:
        raise DesignError("pairs is an empty list; pass at least one (model_a, model_b).")
    return out
