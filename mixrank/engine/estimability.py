"""Stage engine: which pairs the formula can estimate, and how weak the estimable ones are.

Inputs: a :class:`~mixrank.frame.Frame` and index pairs of models.
Outputs: the reason a pair cannot be estimated (:func:`not_estimable`,
:func:`incomplete_pairs`), its NaN row (:func:`incomplete_row`), the models
whose removal leaves only estimable pairs (:func:`models_to_drop`,
:func:`select_models`; docs/messy.md §3), the groups of models whose scores
share cells (:func:`score_groups`, §4), the
random terms with few levels among the pairs' common cells
(:func:`weak_terms`, docs/messy.md §2) and the cells left
out of the fitted pairs per model (:func:`unpaired_cells`, :func:`missing_cells`,
:func:`unpaired_text`, docs/methods.md
§1).  Read by :func:`mixrank.fit` (warnings, ``incomplete=``) and by the
report (the weak-design note next to the tables).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from ..frame import Frame, compute_stats
from .records import PairFit

__all__ = ["WeakTerm", "levels_used", "pair_levels", "level_bounds", "not_estimable", "weak_terms", "unpaired_cells", "missing_cells",
           "unpaired_text", "MIN_LEVELS",
           "incomplete_pairs", "incomplete_row", "models_to_drop", "select_models",
           "score_groups"]

#: Default threshold of the weak-design check: a random term with fewer levels
#: among a pair's common cells than this (lme4's ``check.nlev.gtr.5`` uses 5 too).
MIN_LEVELS = 5


def levels_used(frame: Frame, term: str, mask: np.ndarray | None = None) -> int:
    """Levels of the random term ``term`` holding at least one of ``mask``'s cells (all cells
    when ``mask`` is None): the count the estimability, weak-design and sign-test checks use."""
    codes = frame.term_codes[term] if mask is None else frame.term_codes[term][mask]
    return int(np.count_nonzero(np.bincount(codes, minlength=frame.term_levels[term])))


#: ``[weak reference to the frame, {key: value}]``: the per-pair counts (``(j, k)``) and
#: bounds (``("bounds", j, k)``) of the last frame seen, shared by the estimability check
#: before the fit and the weak-design check after it.
_PAIR_LEVELS: list = [None, {}]


def _memo(frame: Frame) -> dict:
    """The per-pair counts and bounds kept for ``frame`` (the last frame seen)."""
    if _PAIR_LEVELS[0] is None or _PAIR_LEVELS[0]() is not frame:
        _PAIR_LEVELS[:] = [weakref.ref(frame), {}]
    return _PAIR_LEVELS[1]


def pair_levels(frame: Frame, j: int, k: int) -> tuple[int, ...]:
    """Per random term (formula order), :func:`levels_used` among the common cells of the
    pair (j, k).  Pairs sharing every cell share the whole frame's counts."""
    memo = _memo(frame)
    key: tuple[int, int] | str = "all" if _shares_all(frame, j, k) else (j, k)
    if key not in memo:
        mask = None if key == "all" else frame.common_mask(j, k)
        memo[key] = tuple(levels_used(frame, t, mask) for t in frame.spec.term_names)
    return memo[key]


def level_bounds(frame: Frame, j: int, k: int
                 ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[bool, ...]]:
    """Per random term (formula order), bounds on :func:`pair_levels` without the pair's
    common-cell mask: ``(lower, upper, some level holds >= 2 common cells)``.

    From the frame's per-model level counts (:meth:`~mixrank.frame.Frame.level_counts`):
    a level of ``c`` cells of which model j scores ``c_j`` and model k ``c_k`` holds
    between ``max(0, c_j + c_k - c)`` and ``min(c_j, c_k)`` common cells.  The checks
    below decide from the bounds when they can and count exactly otherwise, so their
    answers are those of the exact counts.
    """
    memo = _memo(frame)
    if ("bounds", j, k) in memo:
        return memo[("bounds", j, k)]
    lo, hi, two = [], [], []
    for t in frame.spec.term_names:
        total, per = frame.level_counts(t)
        a, b = per[j].astype(np.int64), per[k].astype(np.int64)
        least = a + b - total
        lo.append(int(np.count_nonzero(least > 0)))
        hi.append(int(np.count_nonzero(np.minimum(a, b))))
        two.append(bool(np.any(least >= 2)))
    out = memo[("bounds", j, k)] = (tuple(lo), tuple(hi), tuple(two))
    return out


#: Up to this many models the pairs' exact counts are cheaper than the bounds (the per-model
#: level counts serve at most 3 pairs); the answers are the same either way.
BOUNDS_FROM_MODELS = 4


def _bounds_pay(frame: Frame) -> bool:
    """Whether :func:`level_bounds` pays for its per-model level counts on ``frame``."""
    return frame.n_models >= BOUNDS_FROM_MODELS


def _shares_all(frame: Frame, j: int, k: int) -> bool:
    """Whether models j and k are both scored on every cell of the frame."""
    return bool(frame.stats.n_common[j, k] == frame.n_cells)


def not_estimable(frame: Frame, j: int, k: int) -> str:
    """Why the pair (j, k) cannot be estimated under the formula; ``""`` when it can.

    Not estimable (docs/messy.md §3): fewer than 2
    common cells, or a random term whose levels among the common cells each
    hold a single cell while there are at least 2 of them (the term is then
    confounded with the residual).  A pair whose cells fall in one level of
    the unit is *degenerate* instead (a row with p-value 1,
    :func:`mixrank.engine.lmm.native.degenerate_pair`).
    """
    a, b = frame.models[j], frame.models[k]
    n = int(frame.stats.n_common[j, k])
    if n < 2:
        return (f"{a!r} and {b!r} share {n} cell(s); at least 2 common cells are needed")
    if _shares_all(frame, j, k) or not _bounds_pay(frame):
        levels = pair_levels(frame, j, k)
    else:
        lo, hi, two = level_bounds(frame, j, k)
        # confounded needs 2 <= used == n: excluded by used <= hi < n, used <= hi < 2 or a
        # level holding two common cells
        if all(h < n or h < 2 or tw for h, tw in zip(hi, two)):
            return ""
        levels = pair_levels(frame, j, k)
    for t, used in zip(frame.spec.term_names, levels):
        if used >= 2 and used == n:
            return (f"random term (1|{t}) has one cell per level among the {n} common cells of "
                    f"{a!r} vs {b!r}, so it is confounded with the residual")
    return ""


@dataclass(frozen=True)
class WeakTerm:
    """A random term with fewer than ``threshold`` levels among some pairs' common cells.

    Examples
    --------
    >>> import mixrank
    >>> from mixrank.engine.estimability import weak_terms
    >>> df = mixrank.load_example().query("subject in ['s01', 's02', 's03']")
    >>> fr = mixrank.build_frame(df, "correct ~ model + (1|subject)")
    >>> weak_terms(fr, [(0, 1)], threshold=5)
    [WeakTerm(term='subject', levels=3, n_pairs=1, examples=(('m01', 'm02'),), threshold=5)]
    """

    term: str
    levels: int                 # fewest levels among the affected pairs' common cells
    n_pairs: int                # affected pairs
    examples: tuple[tuple[str, str], ...]
    threshold: int

    def message(self) -> str:
        """The warning text.

        Returns
        -------
        str
            The term, its level count and the alternatives.

        Examples
        --------
        >>> import mixrank
        >>> w = mixrank.WeakTerm("subject", levels=3, n_pairs=1, examples=(("m01", "m02"),),
        ...                      threshold=5)
        >>> w.message()[:64]
        '(1|subject) has 3 level(s) among the common cells of 1 pair(s) ('
        """
        ex = ", ".join(f"{a} vs {b}" for a, b in self.examples)
        return (f"(1|{self.term}) has {self.levels} level(s) among the common cells of "
                f"{self.n_pairs} pair(s) (e.g. {ex}), fewer than {self.threshold}: its variance "
                "and the Satterthwaite df rest on that many levels, so intervals are wide and "
                f"unstable. Alternatives: make it a fixed stratum ('model * {self.term}', "
                "docs/interactions.md), or method='aggregate' over a unit with more levels; "
                "Control(small_sample='ignore') silences this (docs/messy.md §2)")


def weak_terms(frame: Frame, idx: Sequence[tuple[int, int]],
               threshold: int = MIN_LEVELS) -> list[WeakTerm]:
    """Random terms with fewer than ``threshold`` levels among some pair's common cells.

    A term with fewer levels overall is weak in every pair; otherwise only
    pairs that do not share every cell are counted level by level.
    Returned in the formula's term order; pairs in ``idx`` order.
    """
    out = []
    levels = [_levels_below(frame, j, k, threshold) for j, k in idx]
    for i, t in enumerate(frame.spec.term_names):
        few: list[tuple[int, tuple[str, str]]] = []
        for (j, k), per in zip(idx, levels):
            used = per[i]
            if used < threshold:
                few.append((used, (frame.models[j], frame.models[k])))
        if few:
            out.append(WeakTerm(term=t, levels=min(u for u, _ in few), n_pairs=len(few),
                                examples=tuple(p for _, p in few[:3]), threshold=threshold))
    return out


def _levels_below(frame: Frame, j: int, k: int, threshold: int) -> tuple[int, ...]:
    """:func:`pair_levels`, or the lower bounds of :func:`level_bounds` when every one is
    at least ``threshold`` (then no term is weak in the pair and the exact counts are not
    needed)."""
    if not _shares_all(frame, j, k) and _bounds_pay(frame):
        lo = level_bounds(frame, j, k)[0]
        if min(lo, default=threshold) >= threshold:
            return lo
    return pair_levels(frame, j, k)


def missing_cells(frame: Frame) -> dict[str, int]:
    """Per model, the cells of the frame (the union over models) it was not scored on (> 0)."""
    n_obs = frame.n_observed()
    return {m: int(frame.n_cells - n) for m, n in zip(frame.models, n_obs) if n < frame.n_cells}


def unpaired_text(frame: Frame, left: dict[str, int]) -> str:
    """The UnpairedCellsWarning: the models missing cells (how many) and the cells left out."""
    miss = missing_cells(frame)
    shown = ", ".join(f"{m}: {c}" for m, c in list(left.items())[:8])
    gone = ", ".join(f"{m} lacks {c:,} of {frame.n_cells:,}" for m, c in list(miss.items())[:8])
    return (f"models scored on part of the cells: {gone}{', ...' if len(miss) > 8 else ''}; "
            "model_scores() puts their scores on all cells, adjusted for the missing cells' "
            "difficulty (scoring='plain' for the plain means; docs/methods.md §11). Cells "
            "scored for one model only were left out of its pairs (each pair uses the cells "
            "both models were scored on; docs/methods.md §1): cells left out per model "
            f"{{{shown}{', ...' if len(left) > 8 else ''}}}; diagnostics() has only_a/only_b "
            "per pair")


def unpaired_cells(frame: Frame, idx: Sequence[tuple[int, int]]) -> dict[str, int]:
    """Per model, its scored cells left out of at least one of its pairs in ``idx``.

    A cell of model j is left out of the pair (j, k) when model k has no
    score there.  Models with no such cell are omitted.  Counts model by
    model how many of its partners score each cell (no dense matrix for a
    compressed frame); a model paired with every other one needs only the
    cells every model is scored on, counted once.
    """
    partners: dict[int, set[int]] = {}
    for j, k in idx:
        partners.setdefault(j, set()).add(k)
        partners.setdefault(k, set()).add(j)
    n_obs = frame.n_observed()
    out = {}
    everyone: int | None = None          # cells scored by every model, counted once
    for j in sorted(partners):
        ks = [k for k in sorted(partners[j]) if frame.stats.n_common[j, k] < n_obs[j]]
        if not ks:
            continue
        if len(partners[j]) == frame.n_models - 1:
            # paired with every other model: its cells left in all its pairs are the
            # cells every model is scored on
            everyone = frame.n_scored_by_all(range(frame.n_models)) if everyone is None \
                else everyone
            if int(n_obs[j]) - everyone:
                out[frame.models[j]] = int(n_obs[j]) - everyone
            continue
        cnt = int(n_obs[j]) - frame.n_scored_by_all([j, *ks])
        if cnt:
            out[frame.models[j]] = cnt
    return out


def incomplete_pairs(frame: Frame, idx: Sequence[tuple[int, int]]) -> dict[int, str]:
    """``{position in idx: reason}`` of the pairs :func:`not_estimable` refuses.

    Pairs sharing every cell share one answer, computed once.
    """
    out: dict[int, str] = {}
    full: str | None = None
    for i, (j, k) in enumerate(idx):
        if _shares_all(frame, j, k):
            if full is None:
                full = not_estimable(frame, j, k)
            why = full.replace(f"{frame.models[j]!r} vs {frame.models[k]!r}", "the pair") \
                if full else ""
        else:
            why = not_estimable(frame, j, k)
        if why:
            out[i] = why
    return out


def incomplete_row(frame: Frame, j: int, k: int, reason: str) -> PairFit:
    """The row of a pair the formula cannot estimate: NaN estimate, variance and df."""
    n = int(frame.stats.n_common[j, k])
    per_model = frame.n_observed()
    names = [*frame.spec.term_names, "residual"]
    nan = float("nan")
    return PairFit(model_a=frame.models[j], model_b=frame.models[k], n=n,
                   only_a=int(per_model[j]) - n, only_b=int(per_model[k]) - n, estimate=nan,
                   variance=nan, df=nan, sigma_d=nan, components={t: nan for t in names},
                   converged=False, message=f"not estimable: {reason}")


def models_to_drop(models: Sequence[str], bad: Sequence[tuple[int, int]]) -> list[str]:
    """Models whose removal leaves no pair of ``bad``: greedily the model in most bad pairs
    (ties by name), until none is left."""
    left = [tuple(p) for p in bad]
    out: list[str] = []
    while left:
        count: dict[int, int] = {}
        for j, k in left:
            count[j] = count.get(j, 0) + 1
            count[k] = count.get(k, 0) + 1
        worst = min(count, key=lambda m: (-count[m], str(models[m])))
        out.append(str(models[worst]))
        left = [p for p in left if worst not in p]
    return out


def select_models(frame: Frame, keep: Sequence[int]) -> Frame:
    """The frame restricted to the models ``keep`` (indices, in frame order); cells and terms
    unchanged.  A compressed frame's dense matrices are built for it (as every accessor
    that needs the whole matrix does, docs/scale.md)."""
    keep = list(keep)
    scores, observed = frame.scores[:, keep], frame.observed[:, keep]
    stats = compute_stats(scores, observed, frame.term_codes, frame.term_levels)
    kw = {f.name: getattr(frame, f.name) for f in fields(Frame)}
    kw.update(models=tuple(frame.models[j] for j in keep), scores=scores, observed=observed,
              replicates=frame.replicates[:, keep], stats=stats)
    return Frame(**kw)


def score_groups(frame: Frame) -> list[int]:
    """Group number (1, 2, ...) of each model: models linked by pairs sharing >= 2 cells.

    Models in different groups were scored on cells with no pairing-key
    level combination in common (e.g. judged by disjoint annotators), so
    their plain scores are not on one scale (docs/messy.md §4).  Groups are
    numbered in the order of their first model in the frame.
    """
    M = frame.n_models
    link = frame.stats.n_common >= 2
    group = [0] * M
    g = 0
    for s in range(M):
        if group[s]:
            continue
        g += 1
        group[s] = g
        stack = [s]
        while stack:
            j = stack.pop()
            for k in np.flatnonzero(link[j]):
                if not group[int(k)]:
                    group[int(k)] = g
                    stack.append(int(k))
    return group
