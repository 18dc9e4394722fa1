"""Stage fit (composition): :func:`fit`, the one entry point -- options, then a route.

Inputs: a formula and long-format data (or a prebuilt Frame) with the
keywords of :func:`fit`.  Outputs: the result of the route that applies
(:class:`~mixrank.results.FitResult`, :class:`~mixrank.results.GlmmResult`
and its ``model * x`` subclasses, :class:`~mixrank.judge.result.JudgeResult`).
The keywords become one checked record
(:class:`~mixrank.routes.options.FitOptions`); the routes, one module each,
are :mod:`mixrank.routes` (gaussian, binomial, interaction, judge).  The
registries: :data:`FAMILIES` (response family -> engine -> fitter, from the
routes) and :data:`ENGINES` (the gaussian family's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

from .engine.control import Control
from .engine.glmm.control import GlmmControl
from .engine.lmm.native import ESTIMANDS, METHODS
from .formula import Spec
from .frame.pairs import resolve_pairs
from .routes import FitOptions, families, route_for
from .routes.gaussian import ENGINES, Fitter

if TYPE_CHECKING:   # the results are imported by the routes that build them
    from .results import FitResult
    from .results.glmm.result import GlmmResult

__all__ = ["fit", "resolve_pairs", "ENGINES", "FAMILIES", "Fitter", "METHODS", "ESTIMANDS",
           "FitOptions"]

#: family -> {engine name -> fitter}, one entry per route that fits a family
#: (:func:`mixrank.routes.families`: ``gaussian``, ``binomial``).
FAMILIES: dict[str, Mapping[str, Callable[..., Any]]] = families()


#: The accepted values of fit()'s options, for its overloads (the implementation below spells
#: them out, as ``inspect.signature`` and ``help()`` show it; tests/test_signatures.py checks
#: both against the registries that validate them).
_Method = Literal["reml", "aggregate"]
_Engine = Literal["auto", "native", "statsmodels", "lme4"]
_Estimand = Literal["gls", "cells", "units"]
_Na = Literal["error", "drop"]
_Backend = Literal["pandas", "duckdb", "dask"]
_Incomplete = Literal["keep", "drop"]
_Df = Literal["cr2", "containment", "satterthwaite", "satterthwaite-vc"]


@overload
def fit(formula: str | Spec, data: Any, *, method: _Method = ..., engine: _Engine = ...,
        estimand: _Estimand | None = ..., pairs: Sequence[tuple[str, str]] | None = ...,
        level: float = ..., pair_by: Sequence[str] | None = ..., replicate: str | None = ...,
        na: _Na = ..., backend: _Backend = ..., client: Any = ...,
        backend_options: Mapping[str, Any] | None = ..., family: Literal["binomial"],
        control: Control | GlmmControl | None = ..., nagq: int | None = ...,
        progress: Callable[[int, int], Any] | bool | None = ..., gold: str | None = ...,
        lam: float | str | None = ..., incomplete: _Incomplete = ...,
        df: _Df | None = ...) -> GlmmResult:
    ...


@overload
def fit(formula: str | Spec, data: Any, *, method: _Method = ..., engine: _Engine = ...,
        estimand: _Estimand | None = ..., pairs: Sequence[tuple[str, str]] | None = ...,
        level: float = ..., pair_by: Sequence[str] | None = ..., replicate: str | None = ...,
        na: _Na = ..., backend: _Backend = ..., client: Any = ...,
        backend_options: Mapping[str, Any] | None = ..., family: Literal["gaussian"] = ...,
        control: Control | GlmmControl | None = ..., nagq: int | None = ...,
        progress: Callable[[int, int], Any] | bool | None = ..., gold: str | None = ...,
        lam: float | str | None = ..., incomplete: _Incomplete = ...,
        df: _Df | None = ...) -> FitResult:
    ...


def fit(formula: str | Spec, data: Any, *, method: Literal["reml", "aggregate"] = "reml",
        engine: Literal["auto", "native", "statsmodels", "lme4"] = "auto",
        estimand: Literal["gls", "cells", "units"] | None = None,
        pairs: Sequence[tuple[str, str]] | None = None,
        level: float = 0.95, pair_by: Sequence[str] | None = None,
        replicate: str | None = None, na: Literal["error", "drop"] = "error",
        backend: Literal["pandas", "duckdb", "dask"] = "pandas",
        client: Any = None, backend_options: Mapping[str, Any] | None = None,
        family: Literal["gaussian", "binomial"] = "gaussian",
        control: Control | GlmmControl | None = None,
        nagq: int | None = None, progress: Callable[[int, int], Any] | bool | None = None,
        gold: str | None = None, lam: float | str | None = None,
        incomplete: Literal["keep", "drop"] = "keep",
        df: Literal["cr2", "containment", "satterthwaite", "satterthwaite-vc"] | None = None
        ) -> FitResult | GlmmResult:
    """Fit the paired-difference mixed model for every pair of models.

    Parameters
    ----------
    formula : str or Spec
        lme4 syntax, e.g. ``"correct ~ model + (1|subject) + (1|prompt)"``.
        The random terms are the unit of inference.  A fixed part crossing
        the comparison factor with cell-level covariates (``model * x``)
        fits ``d ~ 1 + x + (random terms)`` per pair (docs/interactions.md;
        ``contrasts(by=)``, ``anova()``).
    data : DataFrame, polars/pyarrow table, path, Dask DataFrame or :class:`~mixrank.frame.Frame`
        Long format, one row per observation: a table, a file, a parquet
        file, a folder or glob of parquet files (``"runs/*.parquet"``), or a
        Dask DataFrame.
    method : {"reml", "aggregate"}
        ``reml``: the paired mixed model (docs/methods.md §3); ``aggregate``: average
        the differences within the first random term's levels, then a
        paired t-test over those units.
    engine : {"auto", "native", "statsmodels", "lme4"}
        ``auto`` = ``native``.  ``statsmodels`` and ``lme4`` are cross-check
        engines (lme4 needs R with lme4 and lmerTest).
    estimand : {"gls", "cells", "units"}, optional
        ``gls`` (lme4's fixed effect), ``cells`` (micro-average over common
        cells; the default) or ``units`` (macro-average over the first random
        term; the only estimand of ``method="aggregate"``, its default there).
    pairs : sequence of (str, str), or one (str, str), optional
        Pairs to fit (``model_a``, ``model_b``); default all pairs with at
        least 2 common cells.  A string (e.g. ``"m1,m2"``) is refused.
    level : float
        Confidence level of the intervals.
    pair_by, replicate, na
        Passed to :func:`mixrank.frame.build_frame`.
    backend : {"pandas", "duckdb", "dask"}
        Where the data are reduced to cell scores (the fit needs nothing
        else).  ``pandas`` reads the rows into memory; ``duckdb`` aggregates
        parquet files (or a table) out of core in an embedded DuckDB;
        ``dask`` aggregates with dask.dataframe on a Dask cluster.  Every
        backend gives the same FitResult.  A prebuilt Frame refuses it (and
        ``client``, ``backend_options``, ``pair_by``, ``replicate``, ``na``):
        they apply when the frame is built.
    client : distributed.Client, cluster or str, optional
        ``backend="dask"``: the cluster (a client, a ``LocalCluster`` or a
        scheduler address such as ``"tcp://10.0.0.5:8786"``); default dask's
        current scheduler.
    backend_options : mapping, optional
        DuckDB ``memory_limit``, ``threads``, ``temp_directory``, ``layout``
        (``"auto"``: scores held model by model above 20M rows, memory
        by the (model, cell) entries present, docs/scale.md); Dask
        ``timeout`` (seconds to reach a scheduler address), ``npartitions``,
        ``split_out``.  See :func:`mixrank.io.backends.aggregate_cells`.
    family : str
        Response family, a key of :data:`FAMILIES` (``"gaussian"``: the
        linear mixed model of the paired differences), or ``"binomial"``:
        ``lme4::glmer(formula, family = binomial)`` over all models at once,
        the formula read literally as glmer reads it (docs/glmm.md); returns
        a :class:`~mixrank.results.glmm.result.GlmmResult`.
    nagq : {1, 0}, optional
        ``family="binomial"`` only: glmer's nAGQ (default 1 = Laplace); an
        :class:`~mixrank.errors.OptionError` with any other family.
    control : Control, optional
        Optimiser tolerances, starts, finite-difference steps and the action
        ("ignore" | "warning" | "error") for singular fits, non-convergence
        and small samples; default ``Control()``.  ``family="binomial"``:
        a :class:`~mixrank.GlmmControl` (PIRLS and optimiser tolerances,
        starts, the same per-check actions), or a ``Control`` with only
        per-check actions set.
    incomplete : {"keep", "drop"}
        Pairs the formula cannot estimate on their common cells (a random
        term with one cell per level there, fewer than 2 common cells; e.g.
        a model scored under one prompt mode only with ``(1|question) +
        (1|prompt)``): ``keep`` (default) keeps them as rows with NaN
        estimate and the reason in ``note`` and fits the rest; ``drop``
        removes the models involved (fewest first, greedily) before fitting
        and says which (docs/messy.md §3).  Either way one
        :class:`~mixrank.errors.IncompletePairWarning` names every affected
        model and pair.
    progress : callable or bool, optional
        Called as ``progress(done, total)`` with the number of pairs fitted
        so far (the native engine reports about 50 times; the cross-check
        engines once at the end).  ``True``: a bar on stderr (tqdm when it
        is installed, else a one-line text bar).  The command line draws its
        progress bar with it.
    gold : str, optional
        Column of reference labels (humans, a stronger judge) on a subset of
        cells, NaN elsewhere, when the response is an LLM judge's score:
        scores and contrasts are then the PPI++ corrected means of the
        reference labels at the formula's unit, and the result is a
        :class:`~mixrank.judge.result.JudgeResult` (docs/judge.md).
    lam : float in [0, 1], "unit" or None
        With ``gold``: PPI++'s lambda -- None (default) its plug-in per score
        and contrast (as ``ppi_py``), ``"unit"`` the minimiser of the
        variance at the unit, or fixed (0: labelled cells only, 1: classical PPI).
    df : {"cr2", "containment", "satterthwaite", "satterthwaite-vc"}, optional
        How the contrasts' standard error and df are obtained
        (:data:`mixrank.engine.lmm.unit_se.DF_METHODS`; docs/methods.md, "Validity
        with few units").  ``"cr2"`` (the default for ``method="reml"`` with a
        unit of at least 3 levels): cluster-robust CR2 variance at the unit
        with Bell-McCaffrey df, valid with few units and at the boundary;
        ``"containment"``: the REML variance with df = units - 1;
        ``"satterthwaite"``: lme4 + lmerTest's answer (REML variance,
        Satterthwaite df; the default when there is no unit, for
        ``method="aggregate"`` and for model x covariate formulas);
        ``"satterthwaite-vc"``: the REML variance with the Satterthwaite df of
        the variance components' expected information (the default when a
        random term is crossed with the unit, e.g. ``(1|prompt)`` beside
        ``(1|subject)``: lmerTest's df drop a crossed term whose variance is
        estimated at zero; docs/methods.md §9).

    Returns
    -------
    FitResult or GlmmResult
        A pair whose differences are identical on every common cell, or whose
        common cells fall in fewer than two levels of the unit, is kept as a
        degenerate row (``diagnostics().degenerate``) with a
        :class:`~mixrank.errors.DegeneratePairWarning`; ``contrasts()`` gives
        it the exact sign test's p-value (1 when the gap is 0, ``2 * 0.5^n``
        when all ``n`` units favour one model; docs/hardening.md §1).

    Raises
    ------
    FormulaError, DataError, DesignError
        DesignError for an unknown ``method``, ``engine``, ``estimand``,
        ``df`` or ``family`` or a level outside (0, 1) (the message lists the
        valid values); for ``df="cr2"``/``"containment"`` without a unit of at
        least 3 levels.  DataError also for a source that does not exist, a parquet schema
        missing a formula column, or a Dask scheduler that cannot be reached.
    MissingDependencyError
        ``backend="duckdb"``/``"dask"`` without the ``scale`` extra.
    ConvergenceError
        A pair's optimum fails the convergence check under
        ``Control(convergence="error")``.

    Warns
    -----
    SingularFitWarning, ConvergenceWarning, WeakDesignWarning
        Per the control's ``singular``, ``convergence`` and ``small_sample``
        actions (defaults: warning each).  WeakDesignWarning: a random term
        with fewer than ``Control(min_units=5)`` levels among a pair's
        common cells (docs/messy.md §2).
    UnpairedCellsWarning
        Cells of a model without a partner's score were left out of a pair
        (counts per model; docs/methods.md §1).

    Examples
    --------
    >>> import mixrank
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example(),
    ...                   pairs=[("m01", "m02")])
    >>> res.contrasts()[["model_a", "model_b", "n"]]
      model_a model_b    n
    0     m01     m02  960
    """
    opts = FitOptions(method=method, engine=engine, estimand=estimand, pairs=pairs, level=level,
                      pair_by=pair_by, replicate=replicate, na=na, backend=backend,
                      client=client, backend_options=backend_options, family=family,
                      control=control, nagq=nagq, progress=progress, gold=gold, lam=lam,
                      incomplete=incomplete, df=df).checked(data)
    from ._warned import recording

    return recording(lambda: route_for(opts, formula).run(formula, data, opts))
