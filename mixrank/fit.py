"""Composition of the public stages: formula -> frame -> engine -> FitResult.

Inputs: a formula and long-format data (or a prebuilt Frame).
Outputs: :class:`~mixrank.results.FitResult`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

from ._progress import as_progress
from ._util import check_level
from .engine.control import DEFAULT_CONTROL, Control, act
from .engine.estimability import (
    incomplete_pairs,
    incomplete_row,
    models_to_drop,
    select_models,
    unpaired_cells,
    weak_terms,
)
from .engine.glmm.control import GlmmControl
from .engine.lmm.native import ESTIMANDS, METHODS, PairFit, degenerate_pair, fit_pairs
from .engine.lmm.unit_se import check_df, resolve_df
from .errors import (
    ConvergenceError,
    ConvergenceWarning,
    DataError,
    DegeneratePairWarning,
    DesignError,
    FormulaError,
    IncompletePairWarning,
    OptionError,
    SingularFitWarning,
    UnpairedCellsWarning,
    WeakDesignWarning,
)
from .formula import InteractionSpec, Spec, parse
from .frame import Frame, refuse_build_options
from .frame.columns import CompressedFrame
from .frame.pairs import resolve_pairs
from .results import FitResult

if TYPE_CHECKING:   # the GLMM result is imported where family='binomial' is fitted
    from .results.glmm_result import GlmmResult

__all__ = ["fit", "resolve_pairs", "ENGINES", "FAMILIES", "Fitter", "METHODS", "ESTIMANDS"]

#: ``fitter(frame, index_pairs, method=, estimand=, control=) -> [PairFit]``
Fitter = Callable[..., list[PairFit]]


def _native(frame: Frame, idx: list[tuple[int, int]], *, method: str, estimand: str,
            control: Control) -> list[PairFit]:
    return fit_pairs(frame, idx, method=method, estimand=estimand, control=control,
                     flag_degenerate=True)


def _statsmodels(frame: Frame, idx: list[tuple[int, int]], *, method: str, estimand: str,
                 control: Control) -> list[PairFit]:
    from .engine.crosscheck.statsmodels_engine import fit_pairs_statsmodels

    return fit_pairs_statsmodels(frame, idx, estimand=estimand)


def _lme4(frame: Frame, idx: list[tuple[int, int]], *, method: str, estimand: str,
          control: Control) -> list[PairFit]:
    from .engine.crosscheck.lme4_engine import fit_pairs_lme4

    return fit_pairs_lme4(frame, idx, estimand=estimand)


#: Control fields every engine honours (the per-check actions, applied by check_fits).
_CHECK_FIELDS = ("singular", "convergence", "small_sample", "min_units")


def _refuse_optimiser_control(control: Control, engine: str) -> None:
    """A cross-check engine runs its own optimiser: non-default optimiser fields are refused."""
    base = Control()
    set_ = [f for f in vars(base) if f not in _CHECK_FIELDS and getattr(control, f) !=
            getattr(base, f)]
    if set_:
        raise OptionError(f"Control({', '.join(set_)}=...) sets the native engine's optimiser, "
                          f"which engine={engine!r} does not use; with this engine only "
                          f"Control({', '.join(_CHECK_FIELDS)}) apply, or use engine='native'")


#: engine name -> fitter for the gaussian family ("auto" is "native").
ENGINES: dict[str, Fitter] = {"native": _native, "statsmodels": _statsmodels, "lme4": _lme4}
#: family -> {engine name -> fitter}.  A new family registers one line here.
FAMILIES: dict[str, dict[str, Fitter]] = {"gaussian": ENGINES}


def _is_interaction(formula: Any) -> bool:
    """Whether ``formula`` has covariates in its fixed part (binomial responses such as
    ``cbind(k, n - k)`` are parsed by the binomial path, not here)."""
    try:
        return isinstance(parse(formula) if isinstance(formula, str) else formula, InteractionSpec)
    except FormulaError:
        return False


@overload
def fit(formula: str | Spec, data: Any, *, method: str = ..., engine: str = ...,
        estimand: str | None = ..., pairs: Sequence[tuple[str, str]] | None = ..., level: float = ...,
        pair_by: Sequence[str] | None = ..., replicate: str | None = ..., na: str = ...,
        backend: str = ..., client: Any = ..., backend_options: Mapping[str, Any] | None = ...,
        family: Literal["binomial"], control: Control | GlmmControl | None = ..., nagq: int | None = ...,
        progress: Callable[[int, int], Any] | bool | None = ..., gold: str | None = ...,
        lam: float | str | None = ..., incomplete: str = ...,
        df: str | None = ...) -> GlmmResult:
    ...


@overload
def fit(formula: str | Spec, data: Any, *, method: str = ..., engine: str = ...,
        estimand: str | None = ..., pairs: Sequence[tuple[str, str]] | None = ..., level: float = ...,
        pair_by: Sequence[str] | None = ..., replicate: str | None = ..., na: str = ...,
        backend: str = ..., client: Any = ..., backend_options: Mapping[str, Any] | None = ...,
        family: str = ..., control: Control | GlmmControl | None = ..., nagq: int | None = ...,
        progress: Callable[[int, int], Any] | bool | None = ..., gold: str | None = ...,
        lam: float | str | None = ..., incomplete: str = ...,
        df: str | None = ...) -> FitResult:
    ...


def fit(formula: str | Spec, data: Any, *, method: str = "reml", engine: str = "auto",
        estimand: str | None = None, pairs: Sequence[tuple[str, str]] | None = None,
        level: float = 0.95, pair_by: Sequence[str] | None = None,
        replicate: str | None = None, na: str = "error", backend: str = "pandas",
        client: Any = None, backend_options: Mapping[str, Any] | None = None,
        family: str = "gaussian", control: Control | GlmmControl | None = None,
        nagq: int | None = None, progress: Callable[[int, int], Any] | bool | None = None,
        gold: str | None = None, lam: float | str | None = None,
        incomplete: str = "keep", df: str | None = None) -> FitResult | GlmmResult:
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
        a :class:`~mixrank.results.glmm_result.GlmmResult`.
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
    df : {"cr2", "containment", "satterthwaite"}, optional
        How the contrasts' standard error and df are obtained
        (:data:`mixrank.engine.lmm.unit_se.DF_METHODS`; docs/methods.md, "Validity
        with few units").  ``"cr2"`` (the default for ``method="reml"`` with a
        unit of at least 3 levels): cluster-robust CR2 variance at the unit
        with Bell-McCaffrey df, valid with few units and at the boundary;
        ``"containment"``: the REML variance with df = units - 1;
        ``"satterthwaite"``: lme4 + lmerTest's answer (REML variance,
        Satterthwaite df; the default when there is no unit, for
        ``method="aggregate"`` and for model x covariate formulas).

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
    level = check_level(level, DesignError)
    refuse_build_options(data, pair_by=pair_by, replicate=replicate, na=na, backend=backend,
                         client=client, backend_options=backend_options)
    if nagq is not None and family != "binomial":
        raise OptionError(f"nagq={nagq!r} sets glmer's nAGQ of the binomial GLMM; with "
                          f"family={family!r} it would be ignored: drop it or pass "
                          "family='binomial'")
    _check_choice("incomplete", incomplete, INCOMPLETE)
    _check_choice("method", method, METHODS)
    if estimand is None:
        estimand = "units" if method == "aggregate" else "cells"
    _check_choice("estimand", estimand, ESTIMANDS)
    if method == "aggregate" and estimand != "units":
        raise OptionError(f"method='aggregate' averages the differences within the units and "
                          f"estimates their mean (estimand='units'); estimand={estimand!r} would "
                          "be ignored: drop estimand= or use method='reml'")
    if df is not None:
        check_df(df)
    if gold is not None or lam is not None:
        from .judge.result import fit_judge  # docs/judge.md

        return fit_judge(formula, data, gold, lam=lam, level=level, pairs=pairs, pair_by=pair_by,
                         replicate=replicate, na=na, resolve=resolve_pairs,
                         progress=as_progress(progress, "fitting pairs"),
                         changed={k: v for k, v, d in (
                             ("method", method, "reml"), ("engine", engine, "auto"),
                             ("estimand", estimand, "cells"),
                             ("backend", backend, "pandas"), ("family", family, "gaussian"),
                             ("control", control, None), ("nagq", nagq, None), ("client", client, None),
                             ("backend_options", backend_options, None),
                             ("incomplete", incomplete, "keep"), ("df", df, None)) if v != d})
    if family == "binomial":
        changed = {k: v for k, v, d in (("method", method, "reml"), ("engine", engine, "auto"),
                                        ("estimand", estimand, "cells"),
                                        ("progress", progress, None),
                                        ("incomplete", incomplete, "keep"), ("df", df, None))
                   if v != d}
        from .fit_binomial import fit_binomial

        return fit_binomial(formula, data, nagq=1 if nagq is None else nagq, pairs=pairs, level=level, pair_by=pair_by,
                            replicate=replicate, na=na, backend=backend, client=client,
                            backend_options=backend_options, ignored=changed,
                            control=control)
    control = DEFAULT_CONTROL if control is None else control
    if isinstance(control, GlmmControl):
        raise OptionError("control=GlmmControl(...) sets the binomial GLMM; pass "
                          "family='binomial', or a mixrank.Control(...) for the linear engine")
    if not isinstance(control, Control):
        raise OptionError(f"control={control!r}; expected a mixrank.Control(...)")
    spec = parse(formula) if isinstance(formula, str) else formula
    if isinstance(spec, InteractionSpec):   # model x covariate: docs/interactions.md
        if incomplete != "keep":
            raise DesignError(f"incomplete={incomplete!r} is not available for model x covariate "
                              "formulas yet; filter the incomplete models out of the data")
        kept: list[tuple[PairFit, ...]] = []

        def resolve_screened(fr: Frame, prs: Any) -> list[tuple[int, int]]:
            _, good, rows = _screen(fr, resolve_pairs(fr, prs), "keep")
            kept.append(rows)
            return good

        from .fit_fixed import fit_interaction

        frame, ifits, iidx = fit_interaction(spec, data, resolve_screened, pairs=pairs,
                                             method=method, engine=engine, family=family,
                                             estimand=estimand, backend=backend,
                                             pair_by=pair_by, replicate=replicate, na=na,
                                             control=control, client=client,
                                             backend_options=backend_options,
                                             progress=as_progress(progress, "fitting pairs"))
        check_fits(ifits, frame, iidx, control)
        if df not in (None, "satterthwaite"):
            raise DesignError(f"df={df!r} is not available for model x covariate formulas; "
                              "they report Satterthwaite df (df='satterthwaite' or leave df "
                              "unset; docs/interactions.md)")
        return FitResult(frame=frame, pairs=tuple(ifits), method=method, engine="native",
                         estimand=estimand, level=level, restricted=pairs is not None,
                         incomplete=kept[0] if kept else (), control=control)
    fitter = _fitter(family, engine, method, estimand)
    if fitter is not _native:
        _refuse_optimiser_control(control, engine)
    reporter = as_progress(progress, "fitting pairs")
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
    frame, idx, left_out = _screen(frame, idx, incomplete)
    eng = "native" if engine == "auto" or method == "aggregate" else engine
    try:
        fits = _fit_all(frame, idx, fitter, dict(method=method, estimand=estimand,
                                                 control=control), reporter, chunked=eng == "native")
    finally:
        if reporter is not None:
            reporter.close()
    check_fits(fits, frame, idx, control)
    from .design.omitted_keys import warn_omitted_keys; warn_omitted_keys(frame, fits)  # noqa: E702,I001 (issue 37: one line, a key left out of the formula)
    how, inference = resolve_df(frame, fits, method=method, estimand=estimand, df=df)
    return FitResult(frame=frame, pairs=tuple(fits), method=method, engine=eng,
                     estimand=estimand, level=level, incomplete=left_out,
                     restricted=pairs is not None, df_method=how, inference=inference,
                     control=control)


#: Values of ``fit(incomplete=)``.
INCOMPLETE = ("keep", "drop")


def _screen(frame: Frame, idx: list[tuple[int, int]], incomplete: str
            ) -> tuple[Frame, list[tuple[int, int]], tuple[PairFit, ...]]:
    """Split off the pairs the formula cannot estimate (docs/messy.md §3).

    Returns the frame (without the dropped models for ``incomplete="drop"``),
    the estimable index pairs and the NaN rows of the others (``keep``).  All
    pairs not estimable is a DesignError: the formula does not fit the data.
    """
    bad = incomplete_pairs(frame, idx)
    if not bad:
        return frame, idx, ()
    if len(bad) == len(idx):
        why = next(iter(bad.values()))
        raise DesignError(f"no pair can be estimated under the formula: {why}. Drop the term, "
                          "add the key that distinguishes the cells within its levels, or "
                          "check the pairing keys")
    names = frame.models
    badpairs = [idx[i] for i in bad]
    per: dict[str, int] = {}
    for pr in badpairs:
        for m in pr:
            per[names[m]] = per.get(names[m], 0) + 1
    affected = ", ".join(f"{m} ({c} pair(s))" for m, c in sorted(per.items()))
    shown = "; ".join(f"{names[j]} vs {names[k]}: {bad[i]}" for i, (j, k) in
                      list(zip(bad, badpairs))[:3])
    if incomplete == "drop":
        if isinstance(frame, CompressedFrame):
            raise DesignError(f"incomplete='drop' on an out-of-core (compressed) frame would "
                              f"build its dense matrix; filter these models out of the data "
                              f"instead: {affected}")
        drop = models_to_drop(names, badpairs)
        keep = [j for j, m in enumerate(names) if m not in drop]
        new = {j: i for i, j in enumerate(keep)}
        warnings.warn(f"incomplete='drop' removed {len(drop)} model(s) {drop} before fitting: "
                      f"{len(bad)} pair(s) cannot be estimated under the "
                      f"formula (affected models: {affected}; e.g. {shown}); docs/messy.md §3",
                      IncompletePairWarning,
                      stacklevel=3)
        idx2 = [(new[j], new[k]) for j, k in idx if j in new and k in new]
        if not idx2:
            raise DesignError(f"incomplete='drop' would remove {drop}, leaving no pair to fit; "
                              f"{shown}")
        return select_models(frame, keep), idx2, ()
    warnings.warn(f"{len(bad)} pair(s) cannot be estimated under the formula and are kept as "
                  f"rows with NaN estimate (reason in contrasts()['note']); affected models: "
                  f"{affected}; pairs: {shown}{'; ...' if len(bad) > 3 else ''}. "
                  "fit(..., incomplete='drop') removes those models (docs/messy.md §3)",
                  IncompletePairWarning, stacklevel=3)
    rows = tuple(incomplete_row(frame, j, k, bad[i]) for i, (j, k) in enumerate(idx) if i in bad)
    return frame, [p for i, p in enumerate(idx) if i not in bad], rows


def _fitter(family: str, engine: str, method: str, estimand: str) -> Fitter:
    """The registered fitter for (family, engine, method); DesignError naming valid values."""
    _check_choice("family", family, (*FAMILIES, "binomial"))
    engines = FAMILIES[family]
    _check_choice("engine", engine, ("auto", *engines), f" for family={family!r}")
    _check_choice("method", method, METHODS)
    _check_choice("estimand", estimand, ESTIMANDS)
    if method == "aggregate" and engine not in ("auto", "native"):
        raise OptionError(f"method='aggregate' is computed by the native engine; engine={engine!r} "
                          "would be ignored: drop engine= (or pass 'native'), or use method='reml'")
    return engines["native" if engine == "auto" or method == "aggregate" else engine]


def _check_choice(option: str, value: Any, valid: Sequence[str], where: str = "") -> None:
    if not isinstance(value, str) or value not in valid:
        raise DesignError(f"{option}={value!r} is not an option; expected one of "
                          f"{', '.join(repr(v) for v in valid)}{where}")


def _fit_all(frame: Frame, idx: list[tuple[int, int]], fitter: Fitter, kw: dict[str, Any],
             progress: Callable[[int, int], Any] | None, chunked: bool) -> list[PairFit]:
    """Every pair of ``idx`` in order: degenerate pairs as flagged rows, the rest by ``fitter``.

    The native fitter flags degenerate pairs itself, on the differences it
    computes for the fit (``flag_degenerate``); for the other engines they
    are found here first (:func:`~mixrank.engine.lmm.native.degenerate_pair`).
    With ``progress`` and ``chunked`` the fitter runs on about 50 chunks of
    pairs, reporting after each; otherwise in one call.
    """
    deg = {} if fitter is _native else {
        i: pf for i, (j, k) in enumerate(idx)
        if (pf := degenerate_pair(frame, j, k, kw["method"])) is not None}
    fits = _fit_regular(frame, idx, deg, fitter, kw, progress, chunked)
    flagged = [p for p in fits if p.degenerate]
    if flagged:
        names = [f"{p.model_a} vs {p.model_b} ({p.degenerate})" for p in flagged]
        warnings.warn(f"{len(flagged)} degenerate pair(s) kept without a variance, flagged in "
                      "diagnostics(); contrasts() tests them with the exact sign test (p = 1 "
                      "for a zero gap, 2 * 0.5^n when all n units favour one model; "
                      f"docs/hardening.md §1): {'; '.join(names[:3])}"
                      f"{'; ...' if len(names) > 3 else ''}", DegeneratePairWarning, stacklevel=3)
    return fits


def _fit_regular(frame: Frame, idx: list[tuple[int, int]], deg: dict[int, PairFit], fitter: Fitter,
                 kw: dict[str, Any], progress: Callable[[int, int], Any] | None,
                 chunked: bool) -> list[PairFit]:
    """The pairs of ``idx`` not in ``deg`` by ``fitter`` (in chunks with ``progress``), merged with ``deg``."""
    regular = [pr for i, pr in enumerate(idx) if i not in deg]
    total = len(idx)
    if progress is not None:
        progress(len(deg), total)
    step = max(1, math.ceil(len(regular) / 50)) if progress is not None and chunked \
        else max(1, len(regular))
    fitted: list[PairFit] = []
    for i in range(0, len(regular), step):
        fitted += fitter(frame, regular[i:i + step], **kw)
        if progress is not None:
            progress(len(deg) + len(fitted), total)
    it = iter(fitted)
    return [deg[i] if i in deg else next(it) for i in range(total)]


def check_fits(fits: Sequence[PairFit], frame: Frame, idx: Sequence[tuple[int, int]],
               control: Control = DEFAULT_CONTROL) -> None:
    """Apply the control's actions to singular, non-converged and weak-design pairs; warn once
    about cells left out of the pairs (:func:`~mixrank.engine.estimability.unpaired_cells`)."""
    nb = [f"{p.model_a} vs {p.model_b}: {', '.join(p.boundary)}" for p in fits if p.boundary]
    if nb and control.singular != "ignore":
        act(control.singular, f"boundary (singular) fit in {len(nb)} pair(s), variance estimated "
            f"at 0 ({'; '.join(nb[:3])}{'; ...' if len(nb) > 3 else ''})",
            SingularFitWarning, DesignError, stacklevel=4)
    bad = [f"{p.model_a} vs {p.model_b}: {p.message}" for p in fits if not p.converged]
    if bad and control.convergence != "ignore":
        act(control.convergence, f"the optimum of {len(bad)} pair(s) failed the convergence check "
            f"({'; '.join(bad[:3])}{'; ...' if len(bad) > 3 else ''}); adjust Control(ftol=, "
            "gtol=, max_iterations=, starts=) or check the design", ConvergenceWarning,
            ConvergenceError, stacklevel=4)
    left = unpaired_cells(frame, idx)
    if left:
        shown = ", ".join(f"{m}: {c}" for m, c in list(left.items())[:8])
        warnings.warn(f"cells scored for one model only were left out of its pairs (each pair "
                      f"uses the cells both models were scored on; docs/methods.md §1): cells left "
                      f"out per model {{{shown}{', ...' if len(left) > 8 else ''}}}; "
                      "diagnostics() has only_a/only_b per pair", UnpairedCellsWarning,
                      stacklevel=4)
    if control.small_sample != "ignore":
        weak = weak_terms(frame, idx, control.min_units)
        if weak:
            act(control.small_sample, "weak design: " + "; ".join(w.message() for w in weak)
                + f" [threshold Control(min_units={control.min_units})]", WeakDesignWarning,
                DesignError, stacklevel=4)
