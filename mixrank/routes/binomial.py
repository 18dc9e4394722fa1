"""Stage fit (composition): the binomial route -- glmer formula -> binomial frame -> GLMM.

Inputs: a formula as ``lme4::glmer`` reads it, long-format data (0/1 rows,
replicates, or counts via ``cbind(k, n - k)``) and the checked
:class:`~mixrank.routes.options.FitOptions`.  Outputs:
:class:`~mixrank.results.glmm.result.GlmmResult` through the route's three
steps (:func:`frame`, :func:`estimate`, :func:`result`), taken by
:func:`mixrank.fit` when ``family="binomial"`` (docs/glmm.md); validated
against lme4 1.1 ``glmer`` (``tests/reference/glmer.R``).  The family's
fitters: :data:`ENGINES`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import DesignError, OptionError, UnitOfInferenceWarning
from .options import FitOptions, Route

if TYPE_CHECKING:    # imported in the steps: the route module stays light to import
    from ..formula.glmm_terms import GlmmFormula
    from ..results.glmm.result import GlmmResult

__all__ = ["ROUTE", "ENGINES", "covariate_levels", "frame", "estimate", "result",
           "UnitOfInferenceWarning"]


def covariate_levels(frame: Any, gf: GlmmFormula,
                     data: Any) -> tuple[Any, tuple[str, ...] | None]:
    """The level of ``gf.by`` at every cell of ``frame`` and the level names (sorted);
    for a numeric covariate its value at every cell and None.

    Raises
    ------
    DataError
        The covariate varies within a cell or is missing (as for the linear engine).
    DesignError
        Data given as a Frame; a categorical covariate with one level.
    """
    import numpy as np
    import pandas as pd

    from ..formula.fixed import InteractionSpec
    from ..frame import Frame
    from ..frame.covariates import attach_covariates

    if isinstance(data, Frame):
        raise DesignError("a binomial 'model * x' fit reads the covariate from the data; pass "
                          "the DataFrame, not a Frame")
    ispec = InteractionSpec(formula=gf.formula, response=gf.spec.response,
                            comparison=gf.spec.comparison, random=gf.spec.random,
                            fixed_terms=((str(gf.by),),), covariates=(str(gf.by),))
    cells = attach_covariates(frame, data, ispec).cells[gf.by]
    if not isinstance(cells.dtype, pd.CategoricalDtype):
        return np.asarray(cells, dtype=np.float64), None   # a constant one is refused above
    codes = np.asarray(cells.cat.codes, dtype=np.int64)
    used = np.unique(codes)
    if len(used) < 2:
        raise DesignError(f"covariate {gf.by!r} takes a single level over the cells; drop "
                          f"'* {gf.by}' from the formula")
    names = tuple(str(c) for c in cells.cat.categories[used])
    return np.searchsorted(used, codes), names


def frame(formula: Any, data: Any, opts: FitOptions) -> dict[str, Any]:
    """The formula read as glmer reads it, the binomial frame, the pairs and the covariate.

    Raises
    ------
    OptionError
        Linear-engine options (``method``, ``estimand``, ``engine``,
        ``progress``, ``incomplete``, ``df``) set; out-of-core options with a
        ``cbind`` response.
    DesignError
        One model; ``pairs`` naming a model twice or an unknown model.
    """
    bad = ROUTE.refused(opts)
    if bad:
        raise OptionError(f"option(s) {bad} apply to the linear (gaussian) engine only; the "
                          "binomial GLMM is one joint maximum-likelihood fit (drop them). It "
                          "takes nagq=, pairs=, level=, pair_by=, replicate=, na=, backend=, "
                          "client=, backend_options= and control=mixrank.GlmmControl(...)")
    from ..engine.glmm.control import as_glmm_control
    from ..formula.glmm_terms import parse_glmm
    from ..frame.glmm import binomial_frame

    ctl = as_glmm_control(opts.control)
    # a Spec is read from its text as given (str(spec) would drop a cbind response)
    gf: GlmmFormula = parse_glmm(formula if isinstance(formula, str)
                                 else getattr(formula, "formula", str(formula)))
    if (gf.trials or gf.failures) and (opts.backend != "pandas" or opts.client is not None
                                       or opts.backend_options):
        raise OptionError("a cbind(...) response reads its count columns in memory; "
                          f"backend={opts.backend!r}, client= and backend_options= apply to 0/1 "
                          "rows only: drop them, or give the 0/1 rows instead of counts")

    def load(source: Any, spec: Any, **kw: Any) -> Any:
        from ..io.backends import load_frame  # io sits above frame: the loader is passed in

        return load_frame(source, spec, backend=opts.backend, client=opts.client,
                          options=opts.backend_options, **kw)

    fr, nobs, log_choose = binomial_frame(gf, data, pair_by=opts.pair_by,
                                          replicate=opts.replicate, na=opts.na, load=load)
    if fr.n_models < 2:
        raise DesignError(f"comparison factor {gf.spec.comparison!r} has a single level "
                          f"{fr.models!r}; at least two models are needed")
    keep = requested = None
    if opts.pairs is not None:
        names: list[str] = []
        ordered: dict[frozenset[str], tuple[str, str]] = {}
        for pr in opts.pairs:
            if len(pr) != 2 or pr[0] == pr[1]:
                raise DesignError(f"each pair must be two different models; got {pr!r}")
            for m in pr:
                fr.model_index(m)
                names.append(str(m))
            # a pair keeps the order it was requested in (a - b); a repeat is listed once
            ordered.setdefault(frozenset(map(str, pr)), (str(pr[0]), str(pr[1])))
        keep, requested = tuple(dict.fromkeys(names)), tuple(ordered.values())
    cell_level = level_names = cell_x = None
    if gf.by is not None:
        cell_level, level_names = covariate_levels(fr, gf, data)
        if level_names is None:                    # numeric: a slope per model
            cell_level, cell_x = None, cell_level
    return dict(frame=fr, formula=gf, nobs=nobs, log_choose=log_choose, control=ctl,
                pair_filter=keep, pairs_requested=requested, cell_level=cell_level,
                level_names=level_names, cell_x=cell_x)


def _glmm(frame: Any, gf: GlmmFormula, **kw: Any) -> Any:
    """The binomial family's one engine: :func:`mixrank.engine.glmm.fit.fit_glmm`."""
    from ..engine.glmm.fit import fit_glmm

    return fit_glmm(frame, gf, **kw)


#: engine name -> fitter of the binomial family (one joint glmer-style fit).
ENGINES: dict[str, Callable[..., Any]] = {"native": _glmm}


def estimate(state: dict[str, Any], opts: FitOptions) -> dict[str, Any]:
    """``glmer(formula, family = binomial, nAGQ = nagq)`` over all models at once."""
    fitted = ENGINES["native"](state["frame"], state["formula"],
                               nagq=1 if opts.nagq is None else opts.nagq, nobs=state["nobs"],
                               log_choose=state["log_choose"], control=state["control"],
                               cell_level=state["cell_level"], level_names=state["level_names"],
                               cell_x=state["cell_x"])
    return dict(state, fit=fitted)


def result(state: dict[str, Any], opts: FitOptions) -> GlmmResult:
    """:class:`~mixrank.results.glmm.result.GlmmResult` (a ``model * x`` formula:
    :class:`~mixrank.results.glmm.by.GlmmByResult` for a categorical ``x``,
    :class:`~mixrank.results.glmm.slope.GlmmSlopeResult` for a numeric one); a
    :class:`~mixrank.errors.UnitOfInferenceWarning` when no term makes a unit of inference.

    Examples
    --------
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> sub = df[df.model.isin(["m01", "m02"])]
    >>> res = mixrank.fit("correct ~ model + (1|subject:question:prompt) + (1|subject:model)",
    ...                   sub, family="binomial", nagq=0)
    >>> res.contrasts(scale="response")[["model_a", "model_b", "n"]]
      model_a model_b    n
    0     m01     m02  960
    >>> res.unit_of_inference
    'unit of inference for model contrasts: subject (via (1|subject:model))'
    """
    from ..results.glmm.by import GlmmByResult
    from ..results.glmm.result import GlmmResult, unit_line
    from ..results.glmm.slope import GlmmSlopeResult

    gf = state["formula"]
    form = ("counts (cbind(successes, failures))" if gf.trials or gf.failures
            else "0/1 with replicates" if opts.replicate is not None else "0/1")
    common = dict(frame=state["frame"], formula=gf, fit=state["fit"], level=opts.level,
                  pair_filter=state["pair_filter"], pairs_requested=state["pairs_requested"],
                  response_form=form)
    res: GlmmResult
    if gf.by is not None and state["cell_x"] is not None:
        res = GlmmSlopeResult(**common, by=gf.by, cell_x=state["cell_x"])
    elif gf.by is not None and state["cell_level"] is not None:
        res = GlmmByResult(**common, by=gf.by, by_levels=state["level_names"] or (),
                           cell_level=state["cell_level"])
    else:
        res = GlmmResult(**common)
    if not gf.model_terms:
        warnings.warn(unit_line(gf)[0].upper() + unit_line(gf)[1:] + " (glmer's literal reading; "
                      "see docs/glmm.md)", UnitOfInferenceWarning, stacklevel=4)
    return res


#: ``family="binomial"``: glmer over all models at once (docs/glmm.md).
ROUTE = Route("binomial", applies=lambda opts, formula: opts.family == "binomial",
              accepts=frozenset(FitOptions.__dataclass_fields__)
              - {"method", "engine", "estimand", "progress", "incomplete", "df"},
              frame=frame, estimate=estimate, result=result, family="binomial",
              engines=ENGINES)
