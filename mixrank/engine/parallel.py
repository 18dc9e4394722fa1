"""Stage engine: fit independent pairs on several cores.

Inputs: a per-pair function (closing over the frame), the pairs and a worker
count.  Outputs: the per-pair results in the order of the pairs, with the
warnings the workers raised re-issued in the calling process.

Pairs share nothing but the read-only frame, so the work is split into
chunks and run in forked worker processes (the frame is inherited, not
copied or pickled).  Each worker limits BLAS to one thread: the per-pair
matrices are small and two processes x two BLAS threads on two cores only
add contention.  Where ``fork`` is unavailable the pairs run in this
process.  :func:`default_workers` decides when parallel pays (measured in
``benchmarks/bench_engine.py``; notes: docs/engine.md §4).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import warnings
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from threadpoolctl import ThreadpoolController

__all__ = ["run_pairs", "default_workers", "available_cores", "blas_controller"]

T = TypeVar("T")
_TASK: Callable[[tuple[int, int]], Any] | None = None
# fork + start-up + pickling the results back: below this much work (pairs x
# cells, a proxy of seconds of fitting) one process is faster.
MIN_WORK = 2_000_000


@lru_cache(maxsize=1)
def blas_controller() -> ThreadpoolController:
    """One controller per process: building it inspects every loaded library (~3 ms)."""
    return ThreadpoolController()


def available_cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def default_workers(n_pairs: int, n_cells: int) -> int:
    """Worker processes for ``n_pairs`` pairs over ``n_cells`` cells (1: no parallelism)."""
    cores = available_cores()
    if cores < 2 or n_pairs < 4 or n_pairs * (n_cells + 1000) < MIN_WORK:
        return 1
    if "fork" not in mp.get_all_start_methods():
        return 1  # pragma: no cover - not Linux
    return min(cores, n_pairs)


def _run_chunk(chunk: Sequence[tuple[int, int]]) -> tuple[list[Any], list[tuple[str, type[Warning]]]]:
    assert _TASK is not None          # set by run_pairs before the fork
    with warnings.catch_warnings(record=True) as caught, \
            blas_controller().limit(limits=1, user_api="blas"):
        warnings.simplefilter("always")
        out = [_TASK(p) for p in chunk]
    return out, [(str(w.message), w.category) for w in caught]


def run_pairs(task: Callable[[tuple[int, int]], T], pairs: Sequence[tuple[int, int]],
              workers: int) -> list[T]:
    """``[task(p) for p in pairs]``, on ``workers`` forked processes when ``workers > 1``.

    Exceptions raised by ``task`` propagate; warnings are re-issued here.
    """
    global _TASK
    if workers <= 1 or len(pairs) < 2:
        return [task(p) for p in pairs]
    n_chunks = min(len(pairs), 4 * workers)
    chunks = [list(pairs[i::n_chunks]) for i in range(n_chunks)]   # interleaved: balanced work
    _TASK = task
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_run_chunk, chunks, chunksize=1)
    finally:
        _TASK = None
    out: list[Any] = [None] * len(pairs)
    seen: set[tuple[str, type[Warning]]] = set()
    for i, (res, caught) in enumerate(parts):
        out[i::n_chunks] = res
        for msg, cat in caught:
            if (msg, cat) not in seen:
                seen.add((msg, cat))
                warnings.warn(msg, cat, stacklevel=3)
    return out
