"""Stage io: out-of-core and distributed aggregation of a source to (model, cell) cells.

Inputs: a source -- a pandas/polars/pyarrow table, a parquet file, a folder
or glob of parquet files, or a Dask DataFrame -- a formula and a backend.
Outputs: a :class:`~mixrank.frame.cells.CellTable` (one entry per (model,
cell) group: the number and the sum of its scores) and from it a
:class:`~mixrank.frame.Frame` built by
:func:`~mixrank.frame.cells.frame_from_cells`, identical to the frame
:func:`~mixrank.frame.build_frame` builds from the rows.

Backends:

* ``pandas``: read the rows into memory and call ``build_frame``.
* ``duckdb``: an embedded DuckDB connection scans the parquet files (or the
  in-memory table) out of core with three queries -- score checks and the
  distinct values of every key in one pass (``GROUPING SETS``), then a
  ``GROUP BY`` of integer key codes -- and returns only the aggregated table.
  Set ``memory_limit``, ``threads`` and ``temp_directory`` through
  ``options``; DuckDB spills to disk beyond the limit.
* ``dask``: the same two passes with dask.dataframe on any Dask cluster
  (a ``distributed.Client``, a ``LocalCluster`` or a scheduler address; by
  default dask's current scheduler).  The workers must be able to read the
  files.

Replicate values are checked for repeats without a per-replicate grouping:
with at most 64 distinct values, the sum of ``2**code`` over a group has
``n`` set bits exactly when its ``n`` codes are distinct (a carry drops a
bit, also modulo 2**64).  With more values an exact distinct count is used.

Contents: :data:`BACKENDS`, :func:`aggregate_cells`, :func:`load_frame`
(re-exported here: :class:`Source` and :func:`resolve_source` from
:mod:`mixrank.io.sources`).  The backends themselves are
:mod:`mixrank.io.backend_duckdb` and :mod:`mixrank.io.backend_dask`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._util import did_you_mean
from ..errors import OptionError
from ..formula.spec import Spec
from ..frame import Frame, build_frame
from ..frame.build import as_spec
from ..frame.cells import CellTable, ColumnTable, frame_from_cells, frame_from_columns
from .backend_dask import dask_cells
from .backend_duckdb import duckdb_cells
from .read import read_for_formula
from .sources import Source, is_glob, read_into_memory, resolve_source

__all__ = ["BACKENDS", "BACKEND_OPTIONS", "Source", "resolve_source", "aggregate_cells",
           "load_frame"]

BACKENDS = ("pandas", "duckdb", "dask")

#: The ``options`` (``fit(backend_options=)``) each backend reads; any other key is refused.
BACKEND_OPTIONS: dict[str, tuple[str, ...]] = {
    "pandas": (),
    "duckdb": ("memory_limit", "threads", "temp_directory", "layout"),
    "dask": ("timeout", "npartitions", "split_out"),
}


def check_options(backend: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``options`` as a dict, or :class:`OptionError` naming the keys ``backend`` does not read
    (and the ones it does) -- an option is never silently ignored."""
    opts = dict(options or {})
    valid = BACKEND_OPTIONS.get(backend, ())
    bad = [k for k in opts if k not in valid]
    if bad:
        where = ", ".join(f"{b!r}: {', '.join(v)}" for b, v in BACKEND_OPTIONS.items() if v)
        raise OptionError(f"backend_options {bad} are not read by backend={backend!r} (it reads "
                          f"{', '.join(valid) if valid else 'no options'}); the backends' "
                          f"options are {where}. Drop them or choose the backend they belong to")
    return opts


def aggregate_cells(source: Any, formula: str | Spec, *, backend: str = "duckdb",
                    client: Any = None, pair_by: Sequence[str] | None = None,
                    replicate: str | None = None, na: str = "error",
                    options: Mapping[str, Any] | None = None) -> CellTable | ColumnTable:
    """Aggregate a source to one entry per (model, cell) with ``backend``.

    Parameters
    ----------
    source : DataFrame, polars/pyarrow table, Dask DataFrame, str or path
        See :func:`resolve_source`.
    formula : str or Spec
    backend : {"duckdb", "dask"}
    client : distributed.Client, cluster or str, optional
        ``backend="dask"`` only: the cluster to compute on (a client, a
        cluster object or a scheduler address); default dask's current
        scheduler.
    pair_by, replicate, na
        As in :func:`~mixrank.frame.build_frame`.
    options : mapping, optional
        DuckDB: ``memory_limit`` (e.g. ``"1GB"``), ``threads``,
        ``temp_directory`` (spill folder; default a fresh temporary folder),
        ``layout`` (``"auto"``, ``"dense"``, ``"compressed"``: the scores
        model by model, docs/scale.md; ``auto`` is compressed above
        :data:`~mixrank.frame.columns.DENSE_MAX_ENTRIES` kept rows).
        Dask: ``timeout`` (seconds to reach a scheduler address, default 10),
        ``npartitions`` (for an in-memory table, default 2), ``split_out``
        (partitions of the aggregated table).

    Returns
    -------
    CellTable or ColumnTable
        Groups ``columns`` (key and model values), ``n``, ``sums``,
        ``replicate_repeats`` and the source-level counts; with DuckDB's
        compressed layout a :class:`~mixrank.frame.cells.ColumnTable`
        (keys encoded, scores model by model).

    Raises
    ------
    DataError
        Source that does not exist or cannot be read, a column of the
        formula missing from the schema (the message lists the schema), a
        key with missing values, a scheduler that cannot be reached or a
        cluster without workers (within ``timeout``).
    MissingDependencyError
        The ``scale`` extra is not installed.

    Notes
    -----
    Two passes over the source.  Pass 1 counts rows, missing, non-numeric,
    infinite and non-binary scores, and collects the distinct values of
    every key, the model and the replicate column among the kept rows.
    Pass 2 maps each key to its integer code and computes, per (cell,
    model), ``n = count(*)`` and ``sums = sum(score)``; with a replicate
    column of at most 64 distinct values also ``n - popcount(OR 2**code)``
    (repeated replicate values), otherwise ``n - count(DISTINCT code)``.
    Memory is bounded by the number of (model, cell) groups, not rows.
    Validated against :func:`~mixrank.frame.build_frame`
    (``tests/io/test_backends.py``).

    References
    ----------
    Raasveldt, M. & Muehleisen, H. (2019). DuckDB: an embeddable analytical
    database. SIGMOD '19.  Rocklin, M. (2015). Dask: parallel computation
    with blocked algorithms and task scheduling. SciPy 2015.

    Examples
    --------
    >>> import mixrank
    >>> from mixrank.io.backends import aggregate_cells
    >>> cells = aggregate_cells(mixrank.load_example(), "correct ~ model + (1|subject)")
    >>> cells.n_rows, len(cells), int(cells.n.max())
    (5760, 5760, 1)
    """
    spec = as_spec(formula)
    opts = check_options(backend, options) if backend in BACKENDS else {}
    src = source if isinstance(source, Source) else resolve_source(source)
    if backend == "duckdb":
        if client is not None:
            raise OptionError("client= is only used by backend='dask'; remove it or pass "
                            "backend='dask'")
        return duckdb_cells(src, spec, pair_by=pair_by, replicate=replicate, na=na, options=opts)
    if backend == "dask":
        return dask_cells(src, spec, pair_by=pair_by, replicate=replicate, na=na, client=client,
                           options=opts)
    raise OptionError(f"backend={backend!r} cannot aggregate out of core; expected 'duckdb' or "
                      "'dask' (backend='pandas' reads the rows: use load_frame)")


def load_frame(source: Any, formula: str | Spec, *, backend: str = "pandas", client: Any = None,
               pair_by: Sequence[str] | None = None, replicate: str | None = None,
               na: str = "error", options: Mapping[str, Any] | None = None) -> Frame:
    """Build the :class:`~mixrank.frame.Frame` of ``source`` with ``backend``.

    Parameters
    ----------
    source : DataFrame, polars/pyarrow table, Dask DataFrame, str or path
        A table, a file (any type for ``pandas``, parquet for the others), a
        folder or glob of parquet files, a Dask DataFrame, or the output of
        an evaluation harness (:func:`mixrank.read`; a formula whose left
        side names a metric of the log reads that metric).
    formula : str or Spec
    backend : {"pandas", "duckdb", "dask"}
        ``pandas`` reads the rows into memory; ``duckdb`` and ``dask``
        aggregate to (model, cell) without holding the rows (see
        :func:`aggregate_cells`).
    client, options
        See :func:`aggregate_cells`.
    pair_by, replicate, na
        As in :func:`~mixrank.frame.build_frame`.

    Returns
    -------
    Frame
        The same frame for every backend (replicate means equal up to the
        order of floating-point summation).

    Raises
    ------
    DataError
        Everything :func:`~mixrank.frame.build_frame` and
        :func:`aggregate_cells` raise.
    OptionError
        An unknown backend, ``client`` with a backend other than ``dask``,
        a ``backend_options`` key the backend does not read.

    Notes
    -----
    The fit needs only the cell scores ``sums / n`` per (model, cell), so
    ``duckdb`` and ``dask`` return :func:`aggregate_cells` and build the
    frame with :func:`~mixrank.frame.cells.frame_from_cells`.  Validated
    against ``backend="pandas"`` on ChemBench and simulated unbalanced data
    with replicates: contrasts, variance components and rank intervals agree
    within 1e-10 relative (``tests/io/test_backends.py``).

    Examples
    --------
    >>> import mixrank
    >>> from mixrank.io.backends import load_frame
    >>> fr = load_frame(mixrank.load_example(), "correct ~ model + (1|subject)",
    ...                 backend="duckdb")
    >>> fr.n_cells, fr.n_models
    (960, 6)
    """
    if backend not in BACKENDS:
        raise OptionError(f"backend={backend!r}{did_you_mean(backend, BACKENDS)}; expected one "
                          f"of {BACKENDS}")
    check_options(backend, options)
    source = read_for_formula(source, formula)  # harness output: the formula's metric
    if backend == "pandas":
        if client is not None:
            raise OptionError("client= is only used by backend='dask'; remove it or pass "
                            "backend='dask'")
        single = isinstance(source, (str, os.PathLike)) and not is_glob(os.fspath(source)) \
            and not Path(source).is_dir()
        table = source if single else read_into_memory(resolve_source(source))
        return build_frame(table, formula, pair_by=pair_by,
                           replicate=replicate, na=na)
    cells = aggregate_cells(source, formula, backend=backend, client=client, pair_by=pair_by,
                            replicate=replicate, na=na, options=options)
    if isinstance(cells, ColumnTable):
        return frame_from_columns(cells, formula, replicate=replicate, na=na)
    keys = tuple(c for c in cells.columns if c != as_spec(formula).comparison)
    return frame_from_cells(cells, formula, pair_by=keys, replicate=replicate, na=na)
