"""Stage fit (composition): the judge route -- ``fit(..., gold=)``, PPI++ judge-corrected fits.

Inputs: a formula without covariates whose response is an LLM judge's score,
long data with the reference-label column ``gold`` (NaN where unlabelled) and
the checked :class:`~mixrank.routes.options.FitOptions` (``lam``, ``pairs``,
``level``, ``pair_by``, ``replicate``, ``na``, ``progress``).
Outputs: :class:`~mixrank.judge.result.JudgeResult` through the route's three
steps (:func:`frame`: the judge data and pairs; :func:`estimate`: the PPI++
corrected score of every model and contrast of every pair; :func:`result`).
Statistical notes: docs/judge.md; validated against ppi_py
(``tests/judge/test_ppi_reference.py``).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from ..errors import DesignError, MixrankWarning, WeakDesignWarning
from .options import FitOptions, Route

if TYPE_CHECKING:    # imported in the steps: the route module stays light to import
    from ..judge.result import JudgeResult

__all__ = ["ROUTE", "frame", "estimate", "result"]


def frame(formula: Any, data: Any, opts: FitOptions) -> dict[str, Any]:
    """The judge data (frame, reference labels) and the resolved pairs.

    Raises
    ------
    DesignError
        ``lam`` without ``gold``; an option of :func:`mixrank.fit` the judge
        correction does not take (named); a formula with covariates; a
        ``progress`` that is not callable; ``lam`` outside [0, 1].
    """
    from ..formula import InteractionSpec, parse
    from ..frame.pairs import resolve_pairs
    from ..judge.data import judge_data
    from ..judge.result import check_lam

    if opts.gold is None:
        raise DesignError(f"lam={opts.lam!r} needs gold=: the reference-label column of a "
                          "judge-scored benchmark (docs/judge.md)")
    bad = ROUTE.refused(opts)
    if bad:
        raise DesignError(f"gold= (judge correction, PPI++) does not take "
                          f"{', '.join(f'{k}={v!r}' for k, v in bad.items())}: its estimate "
                          "is the plain mean of the reference labels (estimand='cells'), its "
                          "uncertainty cluster-robust at the unit, from in-memory data; drop "
                          "those options")
    spec = parse(formula) if isinstance(formula, str) else formula
    if isinstance(spec, InteractionSpec):
        raise DesignError("gold= takes a formula without covariates, e.g. "
                          "'score ~ model + (1|subject)'")
    progress = _progress(opts)
    if progress is not None and not callable(progress):
        raise DesignError(f"progress={progress!r} is not callable; expected a function "
                          "progress(done, total) or None")
    lam = check_lam(opts.lam)
    jd = judge_data(data, spec, opts.gold, pair_by=opts.pair_by, replicate=opts.replicate,
                    na=opts.na)
    return dict(data=jd, idx=resolve_pairs(jd.frame, opts.pairs), lam=lam, progress=progress)


def _progress(opts: FitOptions) -> Any:
    from .._progress import as_progress

    return as_progress(opts.progress, "fitting pairs")


def estimate(state: dict[str, Any], opts: FitOptions) -> dict[str, Any]:
    """The PPI++ corrected score of every model and contrast of every pair (progress every
    50 pairs); warnings for models without enough reference labels and for labels covering
    fewer than 3 units."""
    from .._util import listed
    from ..engine.estimability import MIN_LEVELS
    from ..judge.estimate import model_estimate, pair_estimate

    jd, idx, lam, progress = state["data"], state["idx"], state["lam"], state["progress"]
    fr = jd.frame
    scores = tuple(model_estimate(jd, j, lam) for j in range(fr.n_models))
    corr = []
    for i, (j, k) in enumerate(idx):
        corr.append(pair_estimate(jd, j, k, lam))
        if progress is not None and (i + 1 == len(idx) or (i + 1) % 50 == 0):
            progress(i + 1, len(idx))
    missing = [f"{m} ({c.note})" for m, c in zip(fr.models, scores) if c.ppi is None]
    if missing:
        warnings.warn(f"{len(missing)} model(s) have too few reference labels to be corrected "
                      f"and get NaN rows: {listed(missing)}", MixrankWarning, stacklevel=4)
    few = sorted({c.ppi.n_units for c in (*scores, *corr)
                  if c.ppi is not None and c.ppi.n_units < MIN_LEVELS})
    if few and fr.spec.unit is not None:
        warnings.warn(f"weak design: the reference labels cover only {few[0]} level(s) of the "
                      f"unit {fr.spec.unit!r} for some scores or pairs (fewer than {MIN_LEVELS}); "
                      "their cluster-robust intervals rest on that many units -- label cells "
                      "in more units (docs/judge.md §3)", WeakDesignWarning, stacklevel=4)
    return dict(state, scores=scores, corrections=tuple(corr))


def result(state: dict[str, Any], opts: FitOptions) -> JudgeResult:
    """:class:`~mixrank.judge.result.JudgeResult` (method ``"ppi"``, estimand ``"cells"``)."""
    from ..judge.estimate import pair_record
    from ..judge.result import JudgeResult

    jd = state["data"]
    recs = tuple(pair_record(jd, j, k, c) for (j, k), c in zip(state["idx"],
                                                                state["corrections"]))
    return JudgeResult(frame=jd.frame, pairs=recs, method="ppi", engine="native",
                       estimand="cells", level=opts.level, restricted=opts.pairs is not None,
                       data=jd, lam=state["lam"], scores=state["scores"],
                       corrections=state["corrections"])


#: ``gold=`` (or ``lam=``) set: the judge correction (docs/judge.md).
ROUTE = Route("judge", applies=lambda opts, formula: opts.gold is not None
              or opts.lam is not None,
              accepts=frozenset({"pairs", "level", "pair_by", "replicate", "na", "progress",
                                 "gold", "lam"}),
              frame=frame, estimate=estimate, result=result)
