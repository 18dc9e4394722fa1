"""Composition for ``family="binomial"``: glmer formula -> binomial frame -> GLMM -> GlmmResult.

Inputs: a formula as ``lme4::glmer`` reads it and long-format data (0/1
rows, replicates, or counts via ``cbind(k, n - k)``).  Outputs:
:class:`~mixrank.results.glmm_result.GlmmResult`.  Called by
:func:`mixrank.fit` when ``family="binomial"`` (docs/glmm.md).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from .engine.glmm.control import as_glmm_control
from .engine.glmm.fit import fit_glmm
from .errors import DesignError, OptionError, UnitOfInferenceWarning
from .formula.glmm_terms import GlmmFormula, parse_glmm
from .frame.glmm import binomial_frame
from .results.glmm_by import GlmmByResult
from .results.glmm_result import GlmmResult, unit_line
from .results.glmm_slope import GlmmSlopeResult

__all__ = ["fit_binomial", "UnitOfInferenceWarning"]


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

    from .formula.fixed import InteractionSpec
    from .frame import Frame
    from .frame.covariates import attach_covariates

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


def fit_binomial(formula: Any, data: Any, *, nagq: int = 1,
                 pairs: Sequence[tuple[str, str]] | None = None, level: float = 0.95,
                 pair_by: Sequence[str] | None = None, replicate: str | None = None,
                 na: str = "error", backend: str = "pandas", client: Any = None,
                 backend_options: Mapping[str, Any] | None = None,
                 ignored: Mapping[str, Any] | None = None, control: Any = None) -> GlmmResult:
    """Fit ``glmer(formula, family = binomial, nAGQ = nagq)`` over all models at once.

    ``ignored`` holds options of the linear engine that were set to a
    non-default value; they have no meaning here and raise.  ``control``:
    a :class:`~mixrank.GlmmControl` (or a :class:`~mixrank.Control` with
    per-check actions only), see :func:`~mixrank.engine.glmm.control.as_glmm_control`.

    Raises
    ------
    OptionError
        Linear-engine options (``method``, ``estimand``, ``engine``,
        ``progress``, ``incomplete``, ``df``) set.
    DesignError
        ``pairs`` naming a model twice or an unknown model.

    Notes
    -----
    Validated against lme4 1.1 ``glmer`` (``tests/reference/glmer.R``);
    statistical notes in docs/glmm.md.

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
    bad = {k: v for k, v in (ignored or {}).items()}
    if bad:
        raise OptionError(f"option(s) {bad} apply to the linear (gaussian) engine only; the "
                          "binomial GLMM is one joint maximum-likelihood fit (drop them). It "
                          "takes nagq=, pairs=, level=, pair_by=, replicate=, na=, backend=, "
                          "client=, backend_options= and control=mixrank.GlmmControl(...)")
    ctl = as_glmm_control(control)
    # a Spec is read from its text as given (str(spec) would drop a cbind response)
    gf: GlmmFormula = parse_glmm(formula if isinstance(formula, str)
                                 else getattr(formula, "formula", str(formula)))
    if (gf.trials or gf.failures) and (backend != "pandas" or client is not None
                                       or backend_options):
        raise OptionError("a cbind(...) response reads its count columns in memory; "
                          f"backend={backend!r}, client= and backend_options= apply to 0/1 rows "
                          "only: drop them, or give the 0/1 rows instead of counts")

    def load(source: Any, spec: Any, **kw: Any) -> Any:
        from .io.backends import load_frame  # io sits above frame: the loader is passed in

        return load_frame(source, spec, backend=backend, client=client,
                          options=backend_options, **kw)

    frame, nobs, log_choose = binomial_frame(gf, data, pair_by=pair_by, replicate=replicate, na=na,
                                             load=load)
    if frame.n_models < 2:
        raise DesignError(f"comparison factor {gf.spec.comparison!r} has a single level "
                          f"{frame.models!r}; at least two models are needed")
    keep = requested = None
    if pairs is not None:
        names: list[str] = []
        ordered: dict[frozenset[str], tuple[str, str]] = {}
        for pr in pairs:
            if len(pr) != 2 or pr[0] == pr[1]:
                raise DesignError(f"each pair must be two different models; got {pr!r}")
            for m in pr:
                frame.model_index(m)
                names.append(str(m))
            # a pair keeps the order it was requested in (a - b); a repeat is listed once
            ordered.setdefault(frozenset(map(str, pr)), (str(pr[0]), str(pr[1])))
        keep, requested = tuple(dict.fromkeys(names)), tuple(ordered.values())
    cell_level = level_names = cell_x = None
    if gf.by is not None:
        cell_level, level_names = covariate_levels(frame, gf, data)
        if level_names is None:                    # numeric: a slope per model
            cell_level, cell_x = None, cell_level
    form = ("counts (cbind(successes, failures))" if gf.trials or gf.failures
            else "0/1 with replicates" if replicate is not None else "0/1")
    fitted = fit_glmm(frame, gf, nagq=nagq, nobs=nobs, log_choose=log_choose, control=ctl,
                      cell_level=cell_level, level_names=level_names, cell_x=cell_x)
    if gf.by is not None and cell_x is not None:
        res: GlmmResult = GlmmSlopeResult(frame=frame, formula=gf, fit=fitted, level=level,
                                          pair_filter=keep, pairs_requested=requested,
                                          response_form=form, by=gf.by, cell_x=cell_x)
    elif gf.by is not None and cell_level is not None:
        res = GlmmByResult(frame=frame, formula=gf, fit=fitted, level=level,
                                       pair_filter=keep, pairs_requested=requested,
                                       response_form=form, by=gf.by,
                                       by_levels=level_names or (),
                                       cell_level=cell_level)
    else:
        res = GlmmResult(frame=frame, formula=gf, fit=fitted, level=level, pair_filter=keep,
                         pairs_requested=requested, response_form=form)
    if not gf.model_terms:
        warnings.warn(unit_line(gf)[0].upper() + unit_line(gf)[1:] + " (glmer's literal reading; "
                      "see docs/glmm.md)", UnitOfInferenceWarning, stacklevel=3)
    return res
