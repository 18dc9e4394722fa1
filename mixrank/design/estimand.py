"""The estimand of a fitted pair as weights over its common cells (design stage).

Stage: design (on top of a fitted model).
Inputs: a :class:`~mixrank.results.FitResult` and one of its pairs.
Outputs: the weights ``w`` of the pair's estimate ``w' d`` over its common
cells (:func:`estimand_weights`) and the per-pair numbers the verdict table
needs (:func:`pair_inputs`): the weight factor ``n sum w_c^2``, the
discordance of 0/1 scores and the design effect relative to the estimand's
iid variance.
Contents (docs/sensitivity.md, "One estimand per verdict row"):
:func:`estimand_weights`, :func:`weight_factor`, :func:`pair_inputs`.

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

from typing import TYPE_CHECKING, Any

import numpy as np

from mixrank.inference.joint import pair_weights

if TYPE_CHECKING:
    from mixrank.engine.native import PairFit
    from mixrank.results import FitResult

__all__ = ["estimand_weights", "weight_factor", "pair_inputs"]


def _pair_mask(fit: FitResult, p: PairFit) -> np.ndarray:
    f = fit.frame
    j, k = f.model_index(p.model_a), f.model_index(p.model_b)
    return f.observed[:, j] & f.observed[:, k]


def estimand_weights(fit: FitResult, model_a: str, model_b: str) -> np.ndarray:
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
    p = fit.pair(model_a, model_b)
    mask = _pair_mask(fit, p)
    return pair_weights(fit.frame, [p], fit.method, fit.estimand)[0, mask]


def weight_factor(fit: FitResult, model_a: str, model_b: str) -> float:
    """``n sum w_c^2``: the estimand's iid variance over ``sigma_d^2 / n`` (1 for cells).

    Kish's weighting effect: how much unequal weights inflate the variance of
    a weighted mean of independent cells.  Exactly 1.0 for ``cells``.
    """
    if fit.estimand == "cells" and fit.method != "aggregate":
        return 1.0
    w = estimand_weights(fit, model_a, model_b)
    return float(w.size * np.dot(w, w))


def pair_inputs(fit: FitResult, model_a: str, model_b: str) -> dict[str, Any]:
    """The numbers one verdict row needs, for the pair oriented ``model_a - model_b``.

    Returns
    -------
    dict
        ``model_a, model_b, estimate, n, sigma_d, std_error``,
        ``weight_factor`` (``n sum w_c^2``), ``design_effect``
        (``Var_REML / (sigma_d^2 sum w_c^2)``, the clustered stress over the
        estimand's own iid variance) and ``discordance`` (share of common
        cells where exactly one model scores 1; NaN unless both models'
        cell scores are all 0/1).
    """
    p = fit.pair(model_a, model_b)
    sign = 1.0 if p.model_a == str(model_a) else -1.0
    wf = weight_factor(fit, model_a, model_b)
    mask = _pair_mask(fit, p)
    f = fit.frame
    ya = f.scores[mask, f.model_index(p.model_a)]
    yb = f.scores[mask, f.model_index(p.model_b)]
    binary = bool(np.all((ya == 0) | (ya == 1)) and np.all((yb == 0) | (yb == 1)))
    iid = p.sigma_iid ** 2 * wf / p.n
    return dict(model_a=str(model_a), model_b=str(model_b), estimate=sign * p.estimate, n=p.n,
                sigma_d=p.sigma_iid, std_error=p.std_error, weight_factor=wf,
                design_effect=(p.design_effect if wf == 1.0 else
                               (p.variance / iid if iid > 0 else float("nan"))),
                discordance=float(np.mean(ya != yb)) if binary else float("nan"))
