"""Stage frame: input size checked before the dense matrices are allocated.

Inputs: the numbers of cells and models of a frame about to be built (and
whether its cells x models matrices are dense).
Outputs: nothing, or a :class:`~mixrank.errors.DataError` naming the size,
the memory available and the way out (docs/hardening.md §10).
Contents: :func:`check_frame_size`, :func:`available_memory`,
:data:`BYTES_PER_ENTRY`, :data:`BYTES_PER_PAIR`.

Why: 100,000 models with one item each is a 100,000 x 100,000 cells x models
matrix (about 74.5 GiB of scores alone); numpy's MemoryError, or the
operating system killing the process, says neither why nor what to do.
"""

from __future__ import annotations

import os

from ..errors import DataError

__all__ = ["check_frame_size", "available_memory", "BYTES_PER_ENTRY", "BYTES_PER_PAIR",
           "MEMORY_ENV"]

#: Peak bytes per (cell, model) entry while the dense layout is built: the score sums,
#: counts, scores and observed mask of :func:`~mixrank.frame.build.cell_scores` and the
#: temporaries of :func:`~mixrank.frame.frame.compute_stats` (measured: 40-48).
BYTES_PER_ENTRY = 48
#: Bytes per (model, model) entry of the pair statistics (``m'm`` and its integer copy).
BYTES_PER_PAIR = 24
#: Frames needing at most this many bytes are not checked against the available memory
#: (unless ``$MIXRANK_MEMORY_BYTES`` is set): any machine that runs Python has it.
SMALL_FRAME_BYTES = 64 * 2**20
#: Environment variable overriding the memory mixrank may use (bytes), e.g. for a job
#: whose memory limit is below what the machine reports.
MEMORY_ENV = "MIXRANK_MEMORY_BYTES"


def available_memory() -> int | None:
    """Bytes mixrank may allocate: ``$MIXRANK_MEMORY_BYTES``, else the operating system's
    available memory (``MemAvailable`` of /proc/meminfo, else physical pages); None when
    unknown (no check)."""
    text = os.environ.get(MEMORY_ENV, "").strip()
    if text:
        try:
            value = int(float(text))
        except ValueError:
            value = 0
        if value <= 0:
            raise DataError(f"{MEMORY_ENV}={text!r}; expected a positive number of bytes, "
                            f"e.g. {MEMORY_ENV}=8e9")
        return value
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def _gib(n: float) -> str:
    return f"{n / 2 ** 30:,.1f} GiB"


def check_frame_size(n_cells: int, n_models: int, *, dense: bool, n_entries: int | None = None,
                     where: str = "the data") -> None:
    """Refuse a frame whose matrices would not fit in memory, before allocating them.

    ``dense``: the cells x models matrices are allocated (the pandas path);
    otherwise only the model x model pair statistics are.  ``n_entries``: the
    (model, cell) entries actually scored, to say how sparse the matrix is.

    Raises
    ------
    DataError
        The estimated peak exceeds :func:`available_memory`; the message gives
        the sizes and the ways out (fewer models, ``backend="duckdb"``).
    """
    need_pairs = BYTES_PER_PAIR * n_models * n_models
    need = need_pairs + (BYTES_PER_ENTRY * n_cells * n_models if dense else 0)
    if need <= SMALL_FRAME_BYTES and not os.environ.get(MEMORY_ENV, "").strip():
        return                  # no need to ask the operating system (a read of /proc/meminfo)
    avail = available_memory()
    if avail is None:
        return
    if need <= avail:
        return
    sparse = ""
    if n_entries is not None and n_models:
        per = n_entries / n_models
        sparse = (f"; the models are scored on {per:,.1f} cell(s) each on average, so most "
                  "pairs share no cell and cannot be compared anyway")
    if dense and need_pairs <= avail:
        way = ("hold the scores model by model: fit(..., backend='duckdb', "
               "backend_options={'layout': 'compressed'}) (docs/scale.md), or keep only the "
               "models you compare (filter the data; pairs= restricts the fit, not the frame)")
    else:
        way = ("keep only the models you compare (filter the rows to them before fitting; "
               "pairs= restricts the fit, not the frame), or set "
               f"{MEMORY_ENV}=<bytes> if more memory is really available")
    shape = (f"{n_models:,} models x {n_cells:,} cells" if dense
             else f"{n_models:,} x {n_models:,} model pairs")
    raise DataError(f"{where}: {shape} need about {_gib(need)} of memory to build the frame "
                    f"(pair statistics {_gib(need_pairs)}), but {_gib(avail)} are available"
                    f"{sparse}. Way out: {way}")
