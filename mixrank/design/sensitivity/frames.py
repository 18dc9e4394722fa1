"""Re-sampled and re-grouped frames for the sensitivity checks (design stage).

Stage: design (builds new :class:`~mixrank.frame.Frame` objects from a
fitted one).
Inputs: a Frame, the cells to keep (indices, repeats allowed) or a new
grouping of the cells.
Outputs: Frames, and the unit the checks resample.
Contents (docs/sensitivity.md): :func:`subset_frame` (leave-one-out and
cluster-bootstrap frames: a level drawn twice becomes two levels),
:func:`restrict_models`, :func:`regroup_frame` (one random term ``(1|g)``
with any grouping of the cells), :func:`choose_unit`, :func:`unit_codes`,
:func:`nested_in`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mixrank.errors import DesignError
from mixrank.formula import parse
from mixrank.frame import Frame
from mixrank.frame.frame import compute_stats

__all__ = ["subset_frame", "restrict_models", "regroup_frame", "unit_codes", "choose_unit",
           "nested_in"]


def _dense(codes: np.ndarray) -> tuple[np.ndarray, int]:
    uniq, inv = np.unique(codes, return_inverse=True)
    return inv.astype(np.int64), len(uniq)


def choose_unit(frame: Frame, unit: str | None) -> tuple[str, str]:
    """The unit the checks resample and why (docs/messy.md §5).

    Given: validated.  Not given, one random term: that term.  Several: the
    term with the fewest levels (the binding unit: its few levels limit how
    far the conclusions carry), ties in formula order, among the terms with
    at least 3 levels (leave-one-out keeps 2 to estimate a variance).
    """
    names = list(frame.spec.term_names)
    if unit is not None:
        if not isinstance(unit, str) or unit not in frame.term_codes:
            raise DesignError(f"unit={unit!r} is not a random term of {frame.spec.formula!r}; "
                              f"expected one of {names} (or None: the term with the fewest "
                              "levels).")
        return unit, "given (unit=)"
    if not names:
        raise DesignError(f"the formula {frame.spec.formula!r} has no random term, so there "
                          "is no unit to leave out or resample; add one, e.g. "
                          "(1|subject), or pass unit='<random term>'.")
    if len(names) == 1:
        return names[0], "the formula's only random term"
    lv = frame.term_levels
    usable = [t for t in names if lv[t] >= 3] or names
    best = min(usable, key=lambda t: (lv[t], names.index(t)))
    few = [t for t in names if t not in usable]
    return best, (f"the random term with the fewest levels ({best}: {lv[best]}; "
                  + ", ".join(f"{t}: {lv[t]}" for t in names if t != best)
                  + "), the binding unit of inference"
                  + (f"; {few} skipped: fewer than 3 levels cannot be left out or resampled"
                     if few else ""))


def unit_codes(frame: Frame, unit: str | None) -> tuple[str, np.ndarray]:
    """The unit's name and per-cell codes (default: :func:`choose_unit`)."""
    name, _ = choose_unit(frame, unit)
    return name, frame.term_codes[name]


def nested_in(frame: Frame, term: str, unit: str) -> bool:
    """True when every level of ``term`` lies within one level of ``unit``."""
    t, u = frame.term_codes[term], frame.term_codes[unit]
    pairs = np.unique(np.stack([t, u]), axis=1)
    return pairs.shape[1] == len(np.unique(t))


def subset_frame(frame: Frame, rows: np.ndarray, *, copy: np.ndarray | None = None,
                 unit: str | None = None) -> Frame:
    """A Frame on the cells ``rows`` (repeats allowed) of ``frame``.

    ``copy`` (same length as rows) numbers the draw each cell came from in a
    cluster bootstrap: the unit and every term nested in it get a separate
    level per draw, so a unit level drawn twice counts as two independent
    levels; crossed terms keep their codes.
    """
    rows = np.asarray(rows, dtype=np.int64)
    codes: dict[str, np.ndarray] = {}
    levels: dict[str, int] = {}
    labels: dict[str, np.ndarray] = {}
    for name, c in frame.term_codes.items():
        cc = c[rows]
        split = copy is not None and unit is not None and (
            name == unit or nested_in(frame, name, unit))
        if split:
            cc = cc + np.asarray(copy, dtype=np.int64) * frame.term_levels[name]
        dense, L = _dense(cc)
        first = np.zeros(L, dtype=np.int64)
        first[dense[::-1]] = np.arange(len(dense))[::-1]
        lab = frame.term_labels[name][c[rows[first]]]
        if split:
            lab = np.array([f"{x}#{k}" for x, k in zip(lab, np.asarray(copy)[first])], dtype=object)
        codes[name], levels[name], labels[name] = dense, L, lab
    scores, observed = frame.scores[rows], frame.observed[rows]
    return Frame(spec=frame.spec, models=frame.models, pair_by=frame.pair_by,
                 replicate=frame.replicate, cells=frame.cells.iloc[rows].reset_index(drop=True),
                 term_codes=codes, term_levels=levels, term_labels=labels, scores=scores,
                 observed=observed, replicates=frame.replicates[rows], binary=frame.binary,
                 n_rows=int(frame.replicates[rows].sum()), n_dropped=0,
                 stats=compute_stats(scores, observed, codes, levels))


def restrict_models(frame: Frame, models: Sequence[str]) -> Frame:
    """The frame with only ``models`` (in frame order) and the cells any of them scored."""
    keep = [j for j, m in enumerate(frame.models) if m in set(models)]
    obs = frame.observed[:, keep]
    rows = np.flatnonzero(obs.any(axis=1))
    sub = subset_frame(frame, rows)
    return Frame(spec=sub.spec, models=tuple(frame.models[j] for j in keep),
                 pair_by=sub.pair_by, replicate=sub.replicate, cells=sub.cells,
                 term_codes=sub.term_codes, term_levels=sub.term_levels,
                 term_labels=sub.term_labels, scores=sub.scores[:, keep],
                 observed=sub.observed[:, keep], replicates=sub.replicates[:, keep],
                 binary=sub.binary, n_rows=int(sub.replicates[:, keep].sum()), n_dropped=0,
                 stats=compute_stats(sub.scores[:, keep], sub.observed[:, keep],
                                     sub.term_codes, sub.term_levels))


def regroup_frame(frame: Frame, name: str, groups: np.ndarray) -> Frame:
    """The same cells with one random term ``(1|name)`` grouping them by ``groups``."""
    groups = np.asarray(groups)
    if groups.shape != (frame.n_cells,):
        raise DesignError(f"grouping {name!r} must give one label per cell ({frame.n_cells}); "
                          f"received shape {groups.shape}.")
    uniq, inv = np.unique(groups.astype(str), return_inverse=True)
    if len(uniq) < 2:
        raise DesignError(f"grouping {name!r} has a single level; a clustering needs at least 2.")
    spec = parse(f"{frame.spec.response} ~ {frame.spec.comparison} + (1|{name})")
    codes = {name: inv.astype(np.int64)}
    levels = {name: len(uniq)}
    return Frame(spec=spec, models=frame.models, pair_by=frame.pair_by,
                 replicate=frame.replicate, cells=frame.cells, term_codes=codes,
                 term_levels=levels, term_labels={name: uniq.astype(object)},
                 scores=frame.scores, observed=frame.observed, replicates=frame.replicates,
                 binary=frame.binary, n_rows=frame.n_rows, n_dropped=frame.n_dropped,
                 stats=compute_stats(frame.scores, frame.observed, codes, levels))
