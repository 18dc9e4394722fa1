"""Stage engine: the REML criterion of a pair with p >= 1 fixed columns -- the one definition.

Inputs: the three ingredients every evaluation of the pair's model computes
(``log|A|``, ``log|R_X|^2`` and the penalised residual sum of squares
``r^2``), the number of common cells ``n`` and of fixed columns ``p``.
Outputs: lme4's profiled REML criterion (``REMLcrit``, sigma profiled out,
:func:`reml_criterion`) and the unprofiled REML deviance in
``(theta, sigma)`` (lmerTest's ``varpar`` deviance, :func:`reml_deviance`)::

    profiled:   log|A| + log|R_X|^2 + (n - p) (1 + log(2 pi r^2 / (n - p)))
    unprofiled: log|A| + log|R_X|^2 + (n - p) log(2 pi sigma^2) + r^2 / sigma^2

The intercept-only pair (:mod:`mixrank.engine.lmm.objective`, ``p = 1``,
``|R_X|^2 = R_X^2``) and the model x covariate pair
(:mod:`mixrank.engine.lmm.reml_fixed`, ``R_X`` the Cholesky factor of
``X'V^-1 X``) evaluate the same two expressions; the exact derivatives of
:mod:`mixrank.engine.lmm.reml_hess` and :mod:`mixrank.engine.lmm.one_term`
differentiate them.  The balanced fast path (:mod:`mixrank.engine.lmm.balanced`)
states the criterion's value in closed form from the strata mean squares.
"""

from __future__ import annotations

import math

__all__ = ["LOG2PI", "reml_criterion", "reml_deviance"]

LOG2PI = math.log(2 * math.pi)


def reml_criterion(logdet: float, log_rx2: float, r2: float, n: int, p: int = 1) -> float:
    """The profiled REML criterion from ``log|A|``, ``log|R_X|^2`` and ``r^2`` (n cells, p columns)."""
    nu = n - p
    return logdet + log_rx2 + nu * (1.0 + LOG2PI + math.log(r2 / nu))


def reml_deviance(logdet: float, log_rx2: float, r2: float, s2: float, n: int, p: int = 1
                  ) -> float:
    """The unprofiled REML deviance at residual variance ``s2`` (the Satterthwaite Hessian's)."""
    return logdet + log_rx2 + (n - p) * (LOG2PI + math.log(s2)) + r2 / s2
