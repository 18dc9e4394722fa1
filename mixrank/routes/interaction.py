"""Stage fit (composition): the interaction route -- model x covariate formulas.

Inputs: an :class:`~mixrank.formula.InteractionSpec` formula (``y ~ model * x
+ (random terms)``), long-format data and the checked
:class:`~mixrank.routes.options.FitOptions`.
Outputs: :class:`~mixrank.results.FitResult` through the route's three steps
(:func:`frame`: the :class:`~mixrank.frame.Frame` with the covariates in its
``cells``, the fixed :class:`~mixrank.engine.lmm.fixed.Design` and the
screened pairs, :func:`interaction_frame`; :func:`estimate`:
:func:`mixrank.engine.lmm.fixed.fit_pairs_fixed` per pair; :func:`result`).
Statistical notes: docs/interactions.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._progress import as_progress
from ..engine.lmm.fixed import Design, build_design, fit_pairs_fixed
from ..errors import DataError, DesignError, FormulaError, OptionError
from ..formula import InteractionSpec, parse
from ..frame import Frame, build_frame
from ..frame.pairs import resolve_pairs
from ..results import FitResult
from .gaussian import check_control, check_fits, screen
from .options import FitOptions, Route

__all__ = ["ROUTE", "interaction_frame", "frame", "estimate", "result"]


def interaction_frame(spec: InteractionSpec, data: Any, *, method: str, engine: str,
                      backend: str, pair_by: Sequence[str] | None, replicate: str | None,
                      na: str) -> tuple[Frame, Design]:
    """Frame (with covariates) and fixed design of an interaction formula.

    Raises
    ------
    OptionError
        ``method`` other than ``"reml"``, an engine other than the native one,
        an out-of-core backend (covariates are read from the rows in memory).
    DataError
        Everything :func:`~mixrank.frame.build_frame` and
        :func:`~mixrank.frame.covariates.attach_covariates` raise; a prebuilt
        Frame without the covariates.
    """
    if method != "reml":
        raise OptionError(f"method={method!r} does not support covariates in the fixed part "
                          f"({spec.formula!r}); use method='reml'")
    if engine not in ("auto", "native"):
        raise OptionError(f"engine={engine!r} does not support covariates in the fixed part; "
                          "use engine='native' (the default)")
    if backend != "pandas":
        raise OptionError(f"backend={backend!r} does not support covariates in the fixed part "
                          "yet; use backend='pandas'")
    if isinstance(data, Frame):
        frame = data
        missing = [c for c in spec.covariates if c not in frame.cells.columns]
        if missing or frame.spec != spec:
            raise DataError(f"the Frame was built without the covariates {missing or list(spec.covariates)} "
                            "of this formula; pass the raw data instead")
    else:
        frame = build_frame(data, spec, pair_by=pair_by, replicate=replicate, na=na)
    return frame, build_design(frame, spec)


# ----------------------------------------------------------------- the three steps

def frame(formula: Any, data: Any, opts: FitOptions) -> dict[str, Any]:
    """The frame with the covariates, the fixed design and the pairs (resolved; those the
    formula cannot estimate kept as NaN rows).

    Raises
    ------
    OptionError
        ``client``/``backend_options`` (out-of-core only), a family other than
        gaussian, and what :func:`interaction_frame` refuses.
    DesignError
        ``incomplete="drop"``, or a ``df`` other than Satterthwaite.
    """
    control = check_control(opts.control)
    spec = parse(formula) if isinstance(formula, str) else formula
    assert isinstance(spec, InteractionSpec)     # the route applies to these only
    if opts.incomplete != "keep":
        raise DesignError(f"incomplete={opts.incomplete!r} is not available for model x "
                          "covariate formulas yet; filter the incomplete models out of the data")
    if opts.df not in (None, "satterthwaite"):
        raise DesignError(f"df={opts.df!r} is not available for model x covariate formulas; "
                          "they report Satterthwaite df (df='satterthwaite' or leave df "
                          "unset; docs/interactions.md)")
    for name, value in (("client", opts.client), ("backend_options", opts.backend_options)):
        if value is not None:
            raise OptionError(f"{name}= configures the out-of-core backends ('duckdb', "
                              "'dask'), which model x covariate formulas do not use (their "
                              "covariates are read from the rows in memory, backend='pandas'); "
                              f"drop {name}=")
    if opts.family != "gaussian":
        raise OptionError(f"family={opts.family!r} does not support covariates in the fixed part "
                          "yet; use family='gaussian'")
    fr, design = interaction_frame(spec, data, method=opts.method, engine=opts.engine,
                                   backend=opts.backend, pair_by=opts.pair_by,
                                   replicate=opts.replicate, na=opts.na)
    _, idx, left_out = screen(fr, resolve_pairs(fr, opts.pairs), "keep")
    return dict(frame=fr, design=design, idx=idx, incomplete=left_out, control=control)


def estimate(state: dict[str, Any], opts: FitOptions) -> dict[str, Any]:
    """Each pair's ``d ~ 1 + x + (random terms)`` (progress before and after), then the
    control's checks."""
    idx = state["idx"]
    progress = as_progress(opts.progress, "fitting pairs")
    if progress is not None:
        progress(0, len(idx))
    try:
        assert opts.estimand is not None
        fits = fit_pairs_fixed(state["frame"], state["design"], idx, estimand=opts.estimand,
                               control=state["control"])
        if progress is not None:
            progress(len(idx), len(idx))
    finally:
        close = getattr(progress, "close", None)
        if callable(close):
            close()
    check_fits(fits, state["frame"], idx, state["control"])
    return dict(state, fits=fits)


def result(state: dict[str, Any], opts: FitOptions) -> FitResult:
    """The :class:`~mixrank.results.FitResult` (Satterthwaite df, the native engine)."""
    assert opts.estimand is not None
    return FitResult(frame=state["frame"], pairs=tuple(state["fits"]), method=opts.method,
                     engine="native", estimand=opts.estimand, level=opts.level,
                     restricted=opts.pairs is not None, incomplete=state["incomplete"],
                     control=state["control"])


def _applies(opts: FitOptions, formula: Any) -> bool:
    """A formula with covariates in its fixed part (binomial responses such as
    ``cbind(k, n - k)`` are parsed by the binomial route, not here)."""
    try:
        return isinstance(parse(formula) if isinstance(formula, str) else formula,
                          InteractionSpec)
    except FormulaError:
        return False


#: Model x covariate formulas of the gaussian family (docs/interactions.md).
ROUTE = Route("interaction", applies=_applies,
              accepts=frozenset(FitOptions.__dataclass_fields__) - {"incomplete", "df"},
              frame=frame, estimate=estimate, result=result)
