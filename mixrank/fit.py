"""Composition of the public stages: formula -> frame -> engine -> FitResult.

Inputs: a formula and long-format data (or a prebuilt Frame).
Outputs: :class:`~mixrank.results.FitResult`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from ._util import check_level
from .errors import DataError, DesignError, MixrankWarning, SingularFitWarning
from .formula import InteractionSpec, Spec, parse
from .frame import Frame
from .results import FitResult

__all__ = ["fit", "resolve_pairs", "ENGINES"]

ENGINES = ("auto", "native", "statsmodels", "lme4")


def resolve_pairs(frame: Frame, pairs: Sequence[tuple[str, str]] | None) -> list[tuple[int, int]]:
    """Index pairs to fit; all pairs with >= 2 common cells when ``pairs`` is None."""
    M = frame.n_models
    if M < 2:
        raise DataError(f"comparison factor {frame.spec.comparison!r} has a single level "
                        f"{frame.models!r}; at least two models are needed for a paired comparison")
    if pairs is None:
        out, skipped = [], []
        for j in range(M):
            for k in range(j + 1, M):
                if frame.stats.n_common[j, k] >= 2:
                    out.append((j, k))
                else:
                    skipped.append((frame.models[j], frame.models[k]))
        if skipped:
            warnings.warn(f"{len(skipped)} pair(s) share fewer than 2 cells and were not fitted, "
                          f"e.g. {skipped[:3]}", MixrankWarning, stacklevel=3)
        if not out:
            raise DataError("no pair of models shares at least 2 cells; nothing to compare")
        return out
    out = []
    for pr in pairs:
        if len(pr) != 2:
            raise DataError(f"each pair must be (model_a, model_b); got {pr!r}")
        j, k = frame.model_index(pr[0]), frame.model_index(pr[1])
        if j == k:
            raise DataError(f"pair {pr!r} compares a model with itself")
        out.append((j, k))
    return out


def fit(formula: str | Spec, data: Any, *, method: str = "reml", engine: str = "auto",
        estimand: str = "gls", pairs: Sequence[tuple[str, str]] | None = None,
        level: float = 0.95, pair_by: Sequence[str] | None = None,
        replicate: str | None = None, na: str = "error", backend: str = "pandas",
        client: Any = None, backend_options: Mapping[str, Any] | None = None) -> FitResult:
    """Fit the paired-difference mixed model for every pair of models.

    Parameters
    ----------
    formula : str or Spec
        lme4 syntax, e.g. ``"correct ~ model + (1|subject) + (1|prompt)"``.
        The random terms are the unit of inference.
    data : DataFrame, polars/pyarrow table, path, Dask DataFrame or :class:`~mixrank.frame.Frame`
        Long format, one row per observation: a table, a file, a parquet
        file, a folder or glob of parquet files (``"runs/*.parquet"``), or a
        Dask DataFrame.
    method : {"reml", "aggregate"}
        ``reml``: the paired mixed model (methods §3); ``aggregate``: average
        the differences within the first random term's levels, then a
        paired t-test over those units.
    engine : {"auto", "native", "statsmodels", "lme4"}
        ``auto`` = ``native``.  ``statsmodels`` and ``lme4`` are cross-check
        engines (lme4 needs R with lme4 and lmerTest).
    estimand : {"gls", "cells", "units"}
        ``gls`` (lme4's fixed effect), ``cells`` (micro-average over common
        cells) or ``units`` (macro-average over the first random term).
    pairs : sequence of (str, str), optional
        Pairs to fit (``model_a``, ``model_b``); default all pairs.
    level : float
        Confidence level of the intervals.
    pair_by, replicate, na
        Passed to :func:`mixrank.frame.build_frame`.
    backend : {"pandas", "duckdb", "dask"}
        Where the data are reduced to cell scores (the fit needs nothing
        else).  ``pandas`` reads the rows into memory; ``duckdb`` aggregates
        parquet files (or a table) out of core in an embedded DuckDB;
        ``dask`` aggregates with dask.dataframe on a Dask cluster.  Every
        backend gives the same FitResult.  Ignored for a prebuilt Frame.
    client : distributed.Client, cluster or str, optional
        ``backend="dask"``: the cluster (a client, a ``LocalCluster`` or a
        scheduler address such as ``"tcp://10.0.0.5:8786"``); default dask's
        current scheduler.
    backend_options : mapping, optional
        DuckDB ``memory_limit``, ``threads``, ``temp_directory``; Dask
        ``timeout`` (seconds to reach a scheduler address), ``npartitions``,
        ``split_out``.  See :func:`mixrank.io.backends.aggregate_cells`.

    Returns
    -------
    FitResult

    Raises
    ------
    FormulaError, DataError, DesignError
        DataError also for a source that does not exist, a parquet schema
        missing a formula column, or a Dask scheduler that cannot be reached.
    MissingDependencyError
        ``backend="duckdb"``/``"dask"`` without the ``scale`` extra.

    Examples
    --------
    >>> import mixrank
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example(),
    ...                   pairs=[("m01", "m02")])
    >>> res.contrasts()[["model_a", "model_b", "n"]]
      model_a model_b    n
    0     m01     m02  960
    """
    level = check_level(level, DesignError)
    if engine not in ENGINES:
        raise DesignError(f"engine={engine!r}; expected one of {ENGINES}")
    spec = parse(formula) if isinstance(formula, str) else formula
    if isinstance(spec, InteractionSpec):   # model x covariate: docs/interactions.md
        from .fit_fixed import fit_interaction

        frame, ifits = fit_interaction(spec, data, resolve_pairs, pairs=pairs, method=method,
                                       engine=engine, estimand=estimand, backend=backend,
                                       pair_by=pair_by, replicate=replicate, na=na)
        return FitResult(frame=frame, pairs=tuple(ifits), method=method, engine="native",
                         estimand=estimand, level=level)
    if isinstance(data, Frame):
        frame = data
        if formula is not None and (parse(formula) if isinstance(formula, str) else formula) != frame.spec:
            raise DataError("the Frame was built for a different formula; rebuild it or pass the "
                            "raw data")
    else:
        from .io.backends import load_frame

        frame = load_frame(data, formula, backend=backend, client=client, pair_by=pair_by,
                           replicate=replicate, na=na, options=backend_options)
    idx = resolve_pairs(frame, pairs)
    eng = "native" if engine == "auto" else engine
    if eng == "native" or method == "aggregate":
        from .engine.native import fit_pairs

        fits = fit_pairs(frame, idx, method=method, estimand=estimand)
        eng = "native"
    elif eng == "statsmodels":
        from .engine.statsmodels_engine import fit_pairs_statsmodels

        fits = fit_pairs_statsmodels(frame, idx, estimand=estimand)
    else:
        from .engine.lme4_engine import fit_pairs_lme4

        fits = fit_pairs_lme4(frame, idx, estimand=estimand)
    nb = [f"{p.model_a} vs {p.model_b}: {', '.join(p.boundary)}" for p in fits if p.boundary]
    if nb:
        warnings.warn(f"boundary (singular) fit in {len(nb)} pair(s), variance estimated at 0 "
                      f"({'; '.join(nb[:3])}{'; ...' if len(nb) > 3 else ''})",
                      SingularFitWarning, stacklevel=2)
    return FitResult(frame=frame, pairs=tuple(fits), method=method, engine=eng,
                     estimand=estimand, level=level)
