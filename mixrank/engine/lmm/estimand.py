"""Stage engine: the estimand of a pair as weights over its common cells -- the one definition.

Inputs: the estimand name (``"gls"``, ``"cells"``, ``"units"``), the number
of common cells and, for ``units``, the unit's code of each common cell.
Outputs: the cell weights ``w`` of the estimate ``w'd``
(:func:`estimand_weights`; None for ``gls``, whose weights
``V^-1 1 / (1'V^-1 1)`` depend on the fitted covariance) and the estimate
itself from correctly rounded sums (:func:`estimand_estimate`).

``cells`` weighs every common cell ``1/n``; ``units`` every cell ``1/(T m_u)``
(T levels of the first random term among the common cells, ``m_u`` cells in
the cell's level).  Callers: :mod:`mixrank.engine.lmm.native` (the fit and
its Satterthwaite df through :class:`~mixrank.engine.lmm.satterthwaite.LinearVariance`),
:mod:`mixrank.engine.lmm.fixed` (the overall gap ``L = w'X`` of a p-column
fit) and :func:`mixrank.design.estimand.pair_estimand_weights` (a fitted
pair, every estimand).
"""

from __future__ import annotations

import numpy as np

from ..._util import did_you_mean, exact_group_sums, exact_mean
from ...errors import DesignError, OptionError

__all__ = ["ESTIMANDS", "estimand_weights", "estimand_estimate"]

ESTIMANDS = ("gls", "cells", "units")   # fit() checks its options against this list


def estimand_weights(estimand: str, n: int, unit_codes: np.ndarray | None = None
                     ) -> np.ndarray | None:
    """Cell weights of ``estimand`` over ``n`` common cells: None (``gls``), ``1/n``
    (``cells``) or ``1/(T m_u)`` (``units``; ``unit_codes`` the unit's code of each cell).

    Raises
    ------
    DesignError
        An unknown estimand, or ``units`` without the unit's codes.
    """
    if estimand == "gls":
        return None
    if estimand == "cells":
        return np.full(n, 1.0 / n)
    if estimand != "units":
        raise OptionError(f"estimand={estimand!r}; expected one of {list(ESTIMANDS)}"
                          f"{did_you_mean(estimand, ESTIMANDS)}")
    if unit_codes is None:
        raise DesignError("estimand='units' needs a random term naming the unit, e.g. "
                          "(1|subject)")
    counts = np.bincount(unit_codes)
    T = int(np.count_nonzero(counts))
    return 1.0 / (T * counts[unit_codes])


def estimand_estimate(d: np.ndarray, unit_codes: np.ndarray | None,
                      whole: bool | None = None) -> float:
    """``w'd`` of the ``cells`` (``unit_codes`` None) or ``units`` estimand, from correctly
    rounded sums: identical score vectors give exactly equal values and a zero gap exactly
    0, whatever the order of the cells (docs/hardening.md §9).  ``whole=True``: the caller
    knows ``d`` holds whole numbers summing exactly (differences of 0/1 scores)."""
    if unit_codes is None:
        return exact_mean(d, whole)
    cnt = np.bincount(unit_codes)
    used = cnt > 0
    return exact_mean(exact_group_sums(unit_codes, d, whole=whole)[used] / cnt[used])
