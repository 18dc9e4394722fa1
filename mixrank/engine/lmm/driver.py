"""Stage engine: the one pair driver of the LMM fits (intercept-only and model x covariate).

Inputs: a frame, the index pairs, a :class:`~mixrank.engine.control.Control`
and a per-pair fitter.  Outputs: one :class:`~mixrank.engine.records.PairFit`
per pair, in the order of the pairs.

Both fits -- :func:`mixrank.engine.lmm.native.fit_pairs` (``d ~ 1``) and
:func:`mixrank.engine.lmm.fixed.fit_pairs_fixed` (``d ~ 1 + x + ...``) -- run
each pair through the same steps, from here:

1. common cells: :func:`check_common` (at least ``min_cells`` common cells,
   one message for both fits);
2. structure cache: :class:`StructureCache` keyed by :func:`cells_key` (pairs
   scored on the same cells share the random-effects structure);
3. degenerate check: :func:`flagged_row` builds the row of a pair no model
   can estimate a variance for (the reason in ``degenerate`` and
   ``message``), and :func:`warn_dropped_terms` the one warning for a random
   term with a single level among a pair's cells;
4. fit: the caller's fitter (profiled REML through the one optimiser,
   :func:`mixrank.engine.lmm.reml.optimise`);
5. record: :func:`run_pair_tasks` runs the pairs in this process (one BLAS
   thread: the per-evaluation matrices are small, and multithreaded BLAS only
   adds synchronisation cost, measured 5x slower on 2 cores) or on
   ``Control(workers=)`` forked processes (:mod:`mixrank.engine.parallel`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import numpy as np

from ...errors import DesignError, MixrankWarning
from ...frame import Frame
from ..control import Control
from ..parallel import blas_controller, default_workers, run_pairs
from ..records import PairFit

__all__ = ["StructureCache", "cells_key", "check_common", "warn_dropped_terms", "flagged_row",
           "run_pair_tasks"]

V = TypeVar("V")
R = TypeVar("R")


class StructureCache(Generic[V]):
    """Keeps what the pairs on the last few distinct common-cell masks share."""

    def __init__(self, size: int = 3) -> None:
        self.size = size
        self.items: dict[bytes, V] = {}

    def __contains__(self, key: bytes) -> bool:
        return key in self.items

    def get(self, key: bytes, build: Callable[[], V]) -> V:
        if key in self.items:
            return self.items[key]
        value = build()
        if len(self.items) >= self.size:
            self.items.pop(next(iter(self.items)))
        self.items[key] = value
        return value


def cells_key(mask: np.ndarray, full: bool) -> bytes:
    """The cache key of a pair's common cells (``full``: every cell of the frame)."""
    return b"full" if full else np.packbits(mask).tobytes()


def check_common(n: int, a: str, b: str, min_cells: int = 2, what: str = "") -> None:
    """Raise the one message for a pair with fewer than ``min_cells`` common cells."""
    if n < min_cells:
        raise DesignError(f"models {a!r} and {b!r} share {n} cell(s); at least {min_cells} common "
                          f"cells are needed{what}. Exclude the pair with pairs=[...] or add data")


def warn_dropped_terms(names: Sequence[str], used: Sequence[str], n: int, a: str, b: str,
                       stacklevel: int = 5) -> None:
    """The one warning for random terms with a single level among a pair's ``n`` common cells."""
    if len(used) < len(names):
        dropped = [t for t in names if t not in used]
        warnings.warn(f"random term(s) {', '.join(f'(1|{t})' for t in dropped)} have a single "
                      f"level among the {n} common cells of {a!r} vs {b!r}; their variance is "
                      "not estimable for this pair, so they are left out of its model "
                      "(reported as NaN)", MixrankWarning, stacklevel=stacklevel)


def flagged_row(frame: Frame, j: int, k: int, n: int, estimate: float, sigma_d: float,
                names: Sequence[str], reason: str, *, only: tuple[int, int] | None = None
                ) -> PairFit:
    """The row of a degenerate pair: the mean difference as ``estimate``, variance 0, df NaN,
    NaN components and ``reason`` in ``degenerate`` and ``message`` (``only``: the cells
    scored for one model only, when the caller has them)."""
    if only is None:
        per_model = frame.n_observed()
        only = (int(per_model[j]) - n, int(per_model[k]) - n)
    return PairFit(model_a=frame.models[j], model_b=frame.models[k], n=n, only_a=only[0],
                   only_b=only[1], estimate=estimate, variance=0.0, df=float("nan"),
                   sigma_d=sigma_d, components={t: float("nan") for t in names},
                   converged=True, message=f"degenerate: {reason}", degenerate=reason)


def run_pair_tasks(task: Callable[[tuple[int, int]], R], pairs: Sequence[tuple[int, int]],
                   frame: Frame, control: Control, *, one_blas_thread: bool = True) -> list[R]:
    """``[task(p) for p in pairs]`` on ``control.workers`` processes (None: as many as pay,
    :func:`~mixrank.engine.parallel.default_workers`), else here with one BLAS thread when
    ``one_blas_thread``."""
    workers = (default_workers(len(pairs), frame.n_cells) if control.workers is None
               else control.workers)
    if workers > 1:
        return run_pairs(task, list(pairs), workers)
    one_thread = blas_controller().limit(limits=1, user_api="blas") if one_blas_thread \
        else contextlib.nullcontext()
    with one_thread:
        return [task(p) for p in pairs]

