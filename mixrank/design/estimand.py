"""The estimand of a fitted pair as weights over its common cells (design stage).

Stage: design (on top of a fitted model).
Inputs: a :class:`~mixrank.results.FitResult` and one of its pairs.
Outputs: the weights ``w`` of the pair's estimate ``w' d`` over its common
cells (:func:`pair_estimand_weights`) and the per-pair numbers the verdict table
needs (:func:`pair_inputs`): the weight factor ``n sum w_c^2``, the
discordance of 0/1 scores and the variance ratio relative to the estimand's
iid variance (``variance_ratio``).
Contents (docs/sensitivity.md, "One estimand per verdict row"):
:func:`pair_estimand_weights`, :func:`weight_factor`, :func:`pair_inputs`.
The ``cells`` / ``units`` weights themselves are defined once, in
:func:`mixrank.engine.lmm.estimand.estimand_weights`; this module applies them
to a fitted pair (the former name ``estimand_weights`` here still works for
one release, with a :class:`~mixrank.errors.MixrankDeprecationWarning`).

Every estimate of the engine is linear in the cell differences d: ``cells``
weighs every common cell ``1/n``, ``units`` every cell ``1/(T m_u)`` (T
levels of the first random term, ``m_u`` cells in the cell's level) and
``gls`` uses ``w = V^-1 1 / (1' V^-1 1)`` with the fitted covariance V (the
weights of :func:`mixrank.inference.joint.pair_weights`, shared with the joint
covariance of the contrasts).  If
the cells were independent with the sample variance ``sigma_d^2`` of d, the
estimate would have variance ``sigma_d^2 sum w_c^2`` -- the estimand's iid
variance, ``sigma_d^2 / n`` for cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from mixrank._deprecate import warn_renamed
from mixrank.engine.lmm.estimand import estimand_weights as cell_weights
from mixrank.engine.records import PairFit, pair_key, pair_lookup
from mixrank.errors import DesignError
from mixrank.frame import Frame
from mixrank.inference.joint import pair_weights

if TYPE_CHECKING:
    from mixrank.engine.records import FittedPairs

__all__ = ["pair_estimand_weights", "weight_factor", "pair_inputs", "pair_inputs_from"]


def _pair_mask(frame: Frame, p: PairFit) -> np.ndarray:
    return frame.common_mask(frame.model_index(p.model_a), frame.model_index(p.model_b))


def _find(fits: Sequence[PairFit], a: str, b: str) -> PairFit:
    p = pair_lookup(fits).get(pair_key(str(a), str(b)))
    if p is None:
        raise DesignError(f"pair ({a!r}, {b!r}) was not fitted; refit with "
                          "mixrank.fit(..., pairs=[...]) including it.")
    return p


def pair_estimand_weights(fit: FittedPairs, model_a: str, model_b: str) -> np.ndarray:
    """Weights of the pair's estimate over its common cells (frame order).

    Parameters
    ----------
    fit : FitResult
    model_a, model_b : str
        A fitted pair (either orientation).

    Returns
    -------
    numpy.ndarray
        ``w`` (sums to 1) with ``estimate = w' d`` over the common cells in
        the frame's cell order, d oriented as the stored pair.

    Notes
    -----
    ``method="aggregate"`` is the ``units`` estimand (cells when the formula
    has no random term).  For ``gls`` the weights use the fitted variance
    components (components at 0 drop out).  Validated: ``w' d`` reproduces
    the fitted estimate and ``sigma^2 / sum(V^-1 1)`` the GLS variance
    (tests).
    """
    p = _find(fit.pairs, model_a, model_b)
    return _weights(fit.frame, p, fit.method, fit.estimand)


def _weights(frame: Frame, p: PairFit, method: str, estimand: str) -> np.ndarray:
    how = "units" if method == "aggregate" else estimand
    if how == "gls" or p.degenerate or (how == "units" and not frame.spec.random):
        return pair_weights(frame, [p], method, estimand)[0, _pair_mask(frame, p)]
    idx = np.flatnonzero(_pair_mask(frame, p))
    units = frame.term_codes[frame.spec.random[0].name][idx] if how == "units" else None
    return cast(np.ndarray, cell_weights(how, len(idx), units))


def __getattr__(name: str) -> Any:
    if name == "estimand_weights":   # the former name of pair_estimand_weights (one release)
        warn_renamed("mixrank.design.estimand.estimand_weights",
                     "mixrank.design.estimand.pair_estimand_weights", stacklevel=3)
        return pair_estimand_weights
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _factor(frame: Frame, p: PairFit, method: str, estimand: str) -> float:
    if estimand == "cells" and method != "aggregate":
        return 1.0
    w = _weights(frame, p, method, estimand)
    return float(w.size * np.dot(w, w))


def weight_factor(fit: FittedPairs, model_a: str, model_b: str) -> float:
    """``n sum w_c^2``: the estimand's iid variance over ``sigma_d^2 / n`` (1 for cells).

    Kish's weighting effect: how much unequal weights inflate the variance of
    a weighted mean of independent cells.  Exactly 1.0 for ``cells``.
    """
    return _factor(fit.frame, _find(fit.pairs, model_a, model_b), fit.method, fit.estimand)


def pair_inputs(fit: FittedPairs, model_a: str, model_b: str) -> dict[str, Any]:
    """The numbers one verdict row needs, for the pair oriented ``model_a - model_b``.

    Returns
    -------
    dict
        ``model_a, model_b, estimate, n, sigma_d, std_error``,
        ``weight_factor`` (``n sum w_c^2``), ``variance_ratio``
        (``Var_REML / (sigma_d^2 sum w_c^2)``, the clustered stress over the
        estimand's own iid variance; also under its former key
        ``design_effect`` for one release) and ``discordance`` (share of common
        cells where exactly one model scores 1; NaN unless both models'
        cell scores are all 0/1).
    """
    return pair_inputs_from(fit.frame, fit.pairs, model_a, model_b, method=fit.method,
                            estimand=fit.estimand)


def pair_inputs_from(frame: Frame, fits: Sequence[PairFit], model_a: str, model_b: str, *,
                     method: str, estimand: str) -> dict[str, Any]:
    """:func:`pair_inputs` from a frame and its pair fits (no FitResult needed)."""
    p = _find(fits, model_a, model_b)
    sign = 1.0 if p.model_a == str(model_a) else -1.0
    wf = _factor(frame, p, method, estimand)
    mask = _pair_mask(frame, p)
    ya = frame.scores[mask, frame.model_index(p.model_a)]
    yb = frame.scores[mask, frame.model_index(p.model_b)]
    binary = bool(np.all((ya == 0) | (ya == 1)) and np.all((yb == 0) | (yb == 1)))
    iid = p.sigma_d ** 2 * wf / p.n
    ratio = p.design_effect if wf == 1.0 else (p.variance / iid if iid > 0 else float("nan"))
    return dict(model_a=str(model_a), model_b=str(model_b), estimate=sign * p.estimate, n=p.n,
                sigma_d=p.sigma_d, std_error=p.std_error, weight_factor=wf,
                variance_ratio=ratio, design_effect=ratio,    # design_effect: former key
                discordance=float(np.mean(ya != yb)) if binary else float("nan"))
