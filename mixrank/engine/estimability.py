"""Stage engine: which pairs the formula can estimate, and how weak the estimable ones are.

Inputs: a :class:`~mixrank.frame.Frame` and index pairs of models.
Outputs: the reason a pair cannot be estimated (:func:`not_estimable`), the
random terms with few levels among the pairs' common cells
(:func:`weak_terms`, docs/messy.md §2) and the cells left
out of the fitted pairs per model (:func:`unpaired_cells`, docs/methods.md
§1).  Read by :func:`mixrank.fit` (warnings, ``incomplete=``) and by the
report (the weak-design note next to the tables).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..frame import Frame

__all__ = ["WeakTerm", "not_estimable", "weak_terms", "unpaired_cells", "MIN_LEVELS"]

#: Default threshold of the weak-design check: a random term with fewer levels
#: among a pair's common cells than this (lme4's ``check.nlev.gtr.5`` uses 5 too).
MIN_LEVELS = 5


def not_estimable(frame: Frame, j: int, k: int) -> str:
    """Why the pair (j, k) cannot be estimated under the formula; ``""`` when it can.

    Not estimable (docs/messy.md §3): fewer than 2
    common cells, or a random term whose levels among the common cells each
    hold a single cell while there are at least 2 of them (the term is then
    confounded with the residual).  A pair whose cells fall in one level of
    the unit is *degenerate* instead (a row with p-value 1,
    :func:`mixrank.engine.native.degenerate_pair`).
    """
    a, b = frame.models[j], frame.models[k]
    n = int(frame.stats.n_common[j, k])
    if n < 2:
        return (f"{a!r} and {b!r} share {n} cell(s); at least 2 common cells are needed")
    mask = frame.common_mask(j, k)
    for t in frame.spec.term_names:
        counts = np.bincount(frame.term_codes[t][mask], minlength=frame.term_levels[t])
        used = int(np.count_nonzero(counts))
        if used >= 2 and used == n:
            return (f"random term (1|{t}) has one cell per level among the {n} common cells of "
                    f"{a!r} vs {b!r}, so it is confounded with the residual")
    return ""


@dataclass(frozen=True)
class WeakTerm:
    """A random term with fewer than ``threshold`` levels among some pairs' common cells."""

    term: str
    levels: int                 # fewest levels among the affected pairs' common cells
    n_pairs: int                # affected pairs
    examples: tuple[tuple[str, str], ...]
    threshold: int

    def message(self) -> str:
        """The warning text: the term, its level count and the alternatives."""
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
    for t in frame.spec.term_names:
        codes, L = frame.term_codes[t], frame.term_levels[t]
        total = int(np.count_nonzero(np.bincount(codes, minlength=L)))
        few: list[tuple[int, tuple[str, str]]] = []
        for j, k in idx:
            if frame.stats.n_common[j, k] == frame.n_cells:
                used = total
            else:
                used = int(np.count_nonzero(np.bincount(codes[frame.common_mask(j, k)],
                                                        minlength=L)))
            if used < threshold:
                few.append((used, (frame.models[j], frame.models[k])))
        if few:
            out.append(WeakTerm(term=t, levels=min(u for u, _ in few), n_pairs=len(few),
                                examples=tuple(p for _, p in few[:3]), threshold=threshold))
    return out


def unpaired_cells(frame: Frame, idx: Sequence[tuple[int, int]]) -> dict[str, int]:
    """Per model, its scored cells left out of at least one of its pairs in ``idx``.

    A cell of model j is left out of the pair (j, k) when model k has no
    score there.  Models with no such cell are omitted.
    """
    partners: dict[int, set[int]] = {}
    for j, k in idx:
        partners.setdefault(j, set()).add(k)
        partners.setdefault(k, set()).add(j)
    out = {}
    obs = frame.observed
    for j in sorted(partners):
        ks = sorted(partners[j])
        if all(frame.stats.n_common[j, k] == frame.stats.n_common[j, j] for k in ks):
            continue
        left = obs[:, j] & ~np.all(obs[:, ks], axis=1)
        cnt = int(np.count_nonzero(left))
        if cnt:
            out[frame.models[j]] = cnt
    return out
