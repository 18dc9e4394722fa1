"""Stage fit (composition): the gaussian route -- formula -> Frame -> pair fits -> FitResult.

Inputs: a formula without covariates in its fixed part and long-format data
(or a prebuilt Frame), with the checked :class:`~mixrank.routes.options.FitOptions`.
Outputs: :class:`~mixrank.results.FitResult` through the route's three steps
(:func:`frame`: load the frame, resolve and screen the pairs; :func:`estimate`:
fit every pair with the engine's fitter; :func:`result`: the df method and the
result).  Also the pieces the interaction route shares: :data:`ENGINES` (the
gaussian family's fitters), :func:`check_control`, :func:`screen` (pairs the
formula cannot estimate, docs/messy.md §3) and :func:`check_fits` (the
control's actions on singular, non-converged and weak fits).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._progress import as_progress
from ..design.omitted_keys import warn_omitted_keys
from ..engine.control import DEFAULT_CONTROL, Control, act
from ..engine.estimability import (
    incomplete_pairs,
    incomplete_row,
    models_to_drop,
    select_models,
    unpaired_cells,
    unpaired_text,
    weak_terms,
)
from ..engine.glmm.control import GlmmControl
from ..engine.lmm.native import ESTIMANDS, METHODS, PairFit, degenerate_pair, fit_pairs
from ..engine.lmm.unit_se import resolve_df
from ..errors import (
    ConvergenceError,
    ConvergenceWarning,
    DataError,
    DegeneratePairWarning,
    DesignError,
    IncompletePairWarning,
    OptionError,
    SingularFitWarning,
    UnpairedCellsWarning,
    WeakDesignWarning,
)
from ..formula import parse
from ..frame import Frame
from ..frame.columns import CompressedFrame
from ..frame.pairs import resolve_pairs
from ..results import FitResult
from .options import FitOptions, Route, check_choice

__all__ = ["ROUTE", "ENGINES", "Fitter", "check_control", "screen", "check_fits", "frame",
           "estimate", "result"]

#: ``fitter(frame, index_pairs, method=, estimand=, control=) -> [PairFit]``
Fitter = Callable[..., list[PairFit]]


def _native(frame: Frame, idx: list[tuple[int, int]], *, method: str, estimand: str,
            control: Control) -> list[PairFit]:
    return fit_pairs(frame, idx, method=method, estimand=estimand, control=control,
                     flag_degenerate=True)


def _statsmodels(frame: Frame, idx: list[tuple[int, int]], *, method: str, estimand: str,
                 control: Control) -> list[PairFit]:
    from ..engine.crosscheck.statsmodels_engine import fit_pairs_statsmodels

    return fit_pairs_statsmodels(frame, idx, estimand=estimand)


def _lme4(frame: Frame, idx: list[tuple[int, int]], *, method: str, estimand: str,
          control: Control) -> list[PairFit]:
    from ..engine.crosscheck.lme4_engine import fit_pairs_lme4

    return fit_pairs_lme4(frame, idx, estimand=estimand)


#: engine name -> fitter for the gaussian family ("auto" is "native").
ENGINES: dict[str, Fitter] = {"native": _native, "statsmodels": _statsmodels, "lme4": _lme4}
#: Control fields every engine honours (the per-check actions, applied by check_fits).
_CHECK_FIELDS = ("singular", "convergence", "small_sample", "min_units")
#: Levels between the warnings of this route and the caller of :func:`mixrank.fit`
#: (warn <- helper <- step <- Route.run <- fit <- caller).
_UP = 5


def check_control(control: Any) -> Control:
    """``control`` as a :class:`Control` for the linear engine (default ``Control()``)."""
    control = DEFAULT_CONTROL if control is None else control
    if isinstance(control, GlmmControl):
        raise OptionError("control=GlmmControl(...) sets the binomial GLMM; pass "
                          "family='binomial', or a mixrank.Control(...) for the linear engine")
    if not isinstance(control, Control):
        raise OptionError(f"control={control!r}; expected a mixrank.Control(...)")
    return control


def _refuse_optimiser_control(control: Control, engine: str) -> None:
    """A cross-check engine runs its own optimiser: non-default optimiser fields are refused."""
    base = Control()
    set_ = [f for f in vars(base) if f not in _CHECK_FIELDS and getattr(control, f) !=
            getattr(base, f)]
    if set_:
        raise OptionError(f"Control({', '.join(set_)}=...) sets the native engine's optimiser, "
                          f"which engine={engine!r} does not use; with this engine only "
                          f"Control({', '.join(_CHECK_FIELDS)}) apply, or use engine='native'")


def _fitter(family: str, engine: str, method: str, estimand: str) -> Fitter:
    """The registered fitter for (family, engine, method); DesignError naming valid values."""
    from . import families

    known = families()
    check_choice("family", family, tuple(known))
    engines = known[family]
    check_choice("engine", engine, ("auto", *engines), f" for family={family!r}")
    check_choice("method", method, METHODS)
    check_choice("estimand", estimand, ESTIMANDS)
    if method == "aggregate" and engine not in ("auto", "native"):
        raise OptionError(f"method='aggregate' is computed by the native engine; engine={engine!r} "
                          "would be ignored: drop engine= (or pass 'native'), or use method='reml'")
    return engines["native" if engine == "auto" or method == "aggregate" else engine]


def screen(frame: Frame, idx: list[tuple[int, int]], incomplete: str
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
                      IncompletePairWarning, stacklevel=_UP)
        idx2 = [(new[j], new[k]) for j, k in idx if j in new and k in new]
        if not idx2:
            raise DesignError(f"incomplete='drop' would remove {drop}, leaving no pair to fit; "
                              f"{shown}")
        return select_models(frame, keep), idx2, ()
    warnings.warn(f"{len(bad)} pair(s) cannot be estimated under the formula and are kept as "
                  f"rows with NaN estimate (reason in contrasts()['note']); affected models: "
                  f"{affected}; pairs: {shown}{'; ...' if len(bad) > 3 else ''}. "
                  "fit(..., incomplete='drop') removes those models (docs/messy.md §3)",
                  IncompletePairWarning, stacklevel=_UP)
    rows = tuple(incomplete_row(frame, j, k, bad[i]) for i, (j, k) in enumerate(idx) if i in bad)
    return frame, [p for i, p in enumerate(idx) if i not in bad], rows


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
                      f"{'; ...' if len(names) > 3 else ''}", DegeneratePairWarning,
                      stacklevel=_UP)
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
            SingularFitWarning, DesignError, stacklevel=_UP + 1)
    bad = [f"{p.model_a} vs {p.model_b}: {p.message}" for p in fits if not p.converged]
    if bad and control.convergence != "ignore":
        act(control.convergence, f"the optimum of {len(bad)} pair(s) failed the convergence check "
            f"({'; '.join(bad[:3])}{'; ...' if len(bad) > 3 else ''}); adjust Control(ftol=, "
            "gtol=, max_iterations=, starts=) or check the design", ConvergenceWarning,
            ConvergenceError, stacklevel=_UP + 1)
    left = unpaired_cells(frame, idx)
    if left:
        warnings.warn(unpaired_text(frame, left), UnpairedCellsWarning, stacklevel=_UP)
    if control.small_sample != "ignore":
        weak = weak_terms(frame, idx, control.min_units)
        if weak:
            act(control.small_sample, "weak design: " + "; ".join(w.message() for w in weak)
                + f" [threshold Control(min_units={control.min_units})]", WeakDesignWarning,
                DesignError, stacklevel=_UP + 1)


# ----------------------------------------------------------------- the three steps

def frame(formula: Any, data: Any, opts: FitOptions) -> dict[str, Any]:
    """The frame (loaded by the backend, or the prebuilt one), the fitter and the pairs:
    requested, resolved and screened (``incomplete=``)."""
    control = check_control(opts.control)
    spec = parse(formula) if isinstance(formula, str) else formula
    assert opts.estimand is not None
    fitter = _fitter(opts.family, opts.engine, opts.method, opts.estimand)
    if fitter is not _native:
        _refuse_optimiser_control(control, opts.engine)
    if isinstance(data, Frame):
        fr = data
        if formula is not None and spec != fr.spec:
            raise DataError("the Frame was built for a different formula; rebuild it or pass the "
                            "raw data")
    else:
        from ..io.backends import load_frame

        fr = load_frame(data, formula, backend=opts.backend, client=opts.client,
                        pair_by=opts.pair_by, replicate=opts.replicate, na=opts.na,
                        options=opts.backend_options)
    fr, idx, left_out = screen(fr, resolve_pairs(fr, opts.pairs), opts.incomplete)
    return dict(frame=fr, idx=idx, incomplete=left_out, fitter=fitter, control=control)


def estimate(state: dict[str, Any], opts: FitOptions) -> dict[str, Any]:
    """Every pair fitted by the engine (in chunks with ``progress``), then the control's
    checks."""
    engine = "native" if opts.engine == "auto" or opts.method == "aggregate" else opts.engine
    reporter = as_progress(opts.progress, "fitting pairs")
    try:
        fits = _fit_all(state["frame"], state["idx"], state["fitter"],
                        dict(method=opts.method, estimand=opts.estimand,
                             control=state["control"]), reporter, chunked=engine == "native")
    finally:
        if reporter is not None:
            reporter.close()
    check_fits(fits, state["frame"], state["idx"], state["control"])
    warn_omitted_keys(state["frame"], fits)   # a pairing key left out of the formula
    return dict(state, fits=fits, engine=engine)


def result(state: dict[str, Any], opts: FitOptions) -> FitResult:
    """The df method (``df=``) and the :class:`~mixrank.results.FitResult`."""
    assert opts.estimand is not None
    how, inference = resolve_df(state["frame"], state["fits"], method=opts.method,
                                estimand=opts.estimand, df=opts.df)
    return FitResult(frame=state["frame"], pairs=tuple(state["fits"]), method=opts.method,
                     engine=state["engine"], estimand=opts.estimand, level=opts.level,
                     incomplete=state["incomplete"], restricted=opts.pairs is not None,
                     df_method=how, inference=inference, control=state["control"])


#: The fallback route: every option is the gaussian route's (``gold``/``lam`` and
#: ``nagq`` lead to other routes or are refused by :meth:`FitOptions.checked`).
ROUTE = Route("gaussian", applies=lambda opts, formula: True,
              accepts=frozenset(f for f in FitOptions.__dataclass_fields__),
              frame=frame, estimate=estimate, result=result, family="gaussian", engines=ENGINES)
