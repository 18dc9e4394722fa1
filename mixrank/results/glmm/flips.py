"""Stage results: the unit sign-flip randomization of the binomial GLMM's contrasts.

Inputs: a :class:`~mixrank.results.glmm.result.GlmmResult` (frame, formula,
fit), the scale of its contrasts and the pairs shown.  Outputs:
:func:`glmm_contributions` -- each pair's per-unit contributions ``D_t`` and
weights ``W_t`` (a :class:`~mixrank.inference.randomization.UnitContributions`)
built from the engine's per-unit scores and information
(:func:`mixrank.engine.glmm.scores.unit_scores`) -- and :class:`GlmmFlips`, the
source that :mod:`mixrank.inference.randomization` flips for
``contrasts(adjust="maxt"/"stepdown")`` and ``rank_intervals(adjust="maxt")``.

Method (docs/glmm.md §12): for a contrast with gradient ``g`` in ``beta``
(``e_a - e_b`` on the logit scale, the delta-method gradient on the response
scale), ``V = (sum_t I_t)^{-1}`` and ``s = g'Vg``,

    W_t = g'V I_t V g / s,    e_t = g'V U_t - W_t sum_u g'V U_u,    D_t = W_t est + e_t,

so ``sum_t W_t = 1`` and ``sum_t D_t = est``.  ``D_t`` is, to first order,
``g'V U_t(beta~)`` with ``beta~`` the estimate restricted to the null
``g'beta = 0`` (a one-step update of the fit): the unit's effective score for
the contrast mapped through the inverse information.  Under the null these
are independent across units with mean 0, so flipping their signs (the same
sign for every pair) is the randomization reference of the score
sign-flipping test (Hemerik, Goeman & Finos 2020), studentized with the CR2-type
variance ``sum_t (D_t - W_t est)^2 / (1 - W_t)`` of the linear fits.

Contents: :func:`glmm_contributions`, :class:`GlmmFlips`, :func:`flips_ready`,
:func:`flips_apply`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import expit

from ...engine.glmm.scores import UnitScores, flip_unit, unit_scores
from ...errors import DesignError
from ...inference.randomization import UnitContributions, flips_reach

__all__ = ["glmm_contributions", "GlmmFlips", "flips_ready", "flips_apply"]


def glmm_contributions(us: UnitScores, G: np.ndarray, est: np.ndarray,
                       labels: list[tuple[str, str]]) -> UnitContributions:
    """``D`` and ``W`` (units x pairs) of the contrasts ``G beta`` (rows: gradients) with
    estimates ``est`` (see module docstring); a pair is live when at least 3 units carry
    information about it."""
    info = us.info.sum(axis=0)
    try:
        V = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        raise DesignError("the GLMM's information about the model effects is singular; the "
                          "randomization max-t cannot be formed. Use adjust='holm'.") from None
    A = np.asarray(G, dtype=float) @ V                       # pairs x p
    s = np.einsum("pi,ij,pj->p", A, info, A)                 # = g'Vg
    IA = us.info @ A.T                                       # units x p x pairs (batched BLAS)
    W = np.einsum("pi,tip->tp", A, IA, optimize=True) / np.where(s > 0, s, 1.0)
    e = us.score @ A.T                                       # units x pairs
    e = e - W * e.sum(axis=0)[None, :]
    D = W * np.asarray(est, dtype=float)[None, :] + e
    live = (s > 0) & np.isfinite(est) & (np.sum(W > 1e-12, axis=0) >= 3)
    D[:, ~live] = 0.0
    W[:, ~live] = 0.0
    return UnitContributions(D, W, live, us.unit, labels=labels)


@dataclass(eq=False)
class GlmmFlips:
    """The randomization source of one GLMM contrasts table (computed on first use).

    ``pairs``: the ``(model_a, model_b)`` of the table's rows, in order;
    :meth:`unit_contributions` gives their ``D`` and ``W``.
    """

    result: Any
    scale: str = "logit"
    _uc: UnitContributions | None = field(default=None, repr=False)

    @property
    def pairs(self) -> list[tuple[str, str]]:
        m = self.result.models
        return [(m[j], m[k]) for j, k in self.result._pairs()]

    def unit_contributions(self) -> UnitContributions:
        if self._uc is None:
            r = self.result
            f = r.fit
            us = unit_scores(r.frame, r.formula, f)
            P = expit(f.beta[None, :] + f.cell_effects[:, None])
            mean_p, slope = P.mean(axis=0), (P * (1 - P)).mean(axis=0)
            idx = r._pairs()
            G = np.zeros((len(idx), len(f.beta)))
            est = np.zeros(len(idx))
            for i, (j, k) in enumerate(idx):
                if self.scale == "logit":
                    G[i, j], G[i, k], est[i] = 1.0, -1.0, f.beta[j] - f.beta[k]
                else:
                    G[i, j], G[i, k], est[i] = slope[j], -slope[k], mean_p[j] - mean_p[k]
            self._uc = glmm_contributions(us, G, est, self.pairs)
        return self._uc


def flips_ready(result: Any) -> bool:
    """True when the unit sign flips can be formed for ``result``'s contrasts: its type takes
    ``adjust="stepdown"`` (not the ``model * x`` fits) and every random term is nested in a
    unit of at least 3 levels (:func:`~mixrank.engine.glmm.scores.flip_unit`)."""
    if "stepdown" not in type(result).supported_options("contrasts").get("adjust", ()):
        return False
    try:
        flip_unit(result.frame, result.formula)
    except DesignError:
        return False
    return True


def flips_apply(result: Any, sides: int = 1) -> bool:
    """True when the unit randomization is the GLMM's default: :func:`flips_ready`, a
    model-by-unit term (the contrasts' unit of inference), at least two pairs, and T units
    the flips can reach the fit's level with, all enumerated
    (:func:`~mixrank.inference.randomization.flips_reach`: ``sides / 2^(T-1) <= 1 - level``
    and ``T <= EXACT_MAX``; T >= 6 at 0.95).  ``sides=2``: the rank intervals' marginal
    families, each at half the level (T >= 7 at 0.95)."""
    if not result.formula.model_terms or len(result._pairs()) < 2 or not flips_ready(result):
        return False
    _, codes = flip_unit(result.frame, result.formula)
    return flips_reach(int(codes.max()) + 1, result.level, sides=sides)
