"""Stage engine: the profiled REML objective of one pair (cf. lme4's ``mkLmerDevfun``).

Inputs: :class:`~mixrank.engine.structure.Structure` and
:class:`~mixrank.engine.structure.PairSums`.  Outputs: :class:`Objective`
(built and validated by :func:`make_objective`): the REML criterion as a
function of the variance parameters alone, its analytic gradient (dense
mode) and the unprofiled deviance used by the Satterthwaite df.

Model: ``d = mu 1 + sum_r Z_r b_r + e``, ``b_r ~ N(0, sigma_r^2 I)``,
``e ~ N(0, sigma^2 I)``.  With ``theta_r = sigma_r / sigma``,
``Lambda = diag(theta)`` and ``A = Lambda Z'Z Lambda + I`` (lme4's notation),
the profiled REML criterion is::

    -2 l_R(theta) = log|A| + log R_X^2 + (n - 1) (1 + log(2 pi r^2 / (n - 1)))

with ``R_X^2 = n - c'Lambda A^-1 Lambda c`` (c: level counts) and ``r^2`` the
penalised residual sum of squares; ``mu_hat = (sum d - c'L A^-1 L s) / R_X^2``
and ``Var(mu_hat) = sigma^2 / R_X^2``.  The optimiser works in
``psi = theta^2 >= 0`` (a zero component keeps a non-degenerate derivative).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, cast

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ...errors import DesignError
from ..structure import PairSums, Structure
from .criterion import LOG2PI, reml_criterion, reml_deviance
from .reml_grad import dense_parts
from .reml_hess import last_evaluation

__all__ = ["Objective", "RemlObjective", "make_objective", "moment_psi", "quad_forms", "profiled_deviance",
           "deviance_and_gradient", "full_deviance", "full_gradient", "LOG2PI"]



def quad_forms(st: Structure, ps: PairSums, theta: np.ndarray) -> tuple[float, float, float, float]:
    """Return ``(log|A|, c'L A^-1 L c, c'L A^-1 L s, s'L A^-1 L s)`` at ``theta``."""
    if st.mode == "none":
        return 0.0, 0.0, 0.0, 0.0
    if st.mode == "sparse":
        lam = np.concatenate([np.full(L, t) for L, t in zip(st.levels, theta)])
        Lm = sp.diags(lam)
        A = (Lm @ st.ztz @ Lm + sp.identity(len(lam))).tocsc()
        lu = spla.splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0)
        logdet = float(np.sum(np.log(np.abs(lu.U.diagonal()))))
        c = lam * np.concatenate(st.counts)
        s = lam * np.concatenate(ps.s)
        xc, xs = lu.solve(c), lu.solve(s)
        return logdet, float(c @ xc), float(c @ xs), float(s @ xs)
    last = last_evaluation(st, ps, theta)     # the optimiser's final point, evaluated already
    logdet, cAc, cAs, sAs = dense_parts(st, ps, theta)[0] if last is None else last[0]
    return float(logdet), float(cAc), float(cAs), float(sAs)


def core(st: Structure, ps: PairSums, theta: np.ndarray) -> tuple[float, float, float, float]:
    """``(log|A|, R_X^2, r^2, mu_hat)`` at ``theta`` (floors keep the logs finite)."""
    logdet, cAc, cAs, sAs = quad_forms(st, ps, theta)
    rx2 = ps.n - cAc
    if rx2 <= 0:
        rx2 = 1e-300
    mu = (ps.sum_d - cAs) / rx2
    r2 = ps.sumsq_d - sAs - (ps.sum_d - cAs) ** 2 / rx2
    return logdet, rx2, max(r2, 1e-300), mu


def criterion(ps: PairSums, logdet: float, rx2: float, r2: float) -> float:
    """The profiled REML criterion from its three ingredients
    (:func:`~mixrank.engine.lmm.criterion.reml_criterion` with p = 1)."""
    return reml_criterion(logdet, math.log(rx2), r2, ps.n)


def profiled_deviance(st: Structure, ps: PairSums, theta: np.ndarray) -> float:
    """lme4's REML criterion at ``theta`` (sigma profiled out)."""
    return criterion(ps, *core(st, ps, theta)[:3])


def _dense_terms(st: Structure, ps: PairSums, theta: np.ndarray
                 ) -> tuple[float, float, float, np.ndarray, np.ndarray] | None:
    """``(log|A|, R_X^2, r^2, gradient of the quadratic forms, d r^2 / d psi)`` at ``theta``
    (dense mode); None where the floors on ``R_X^2`` or ``r^2`` are active."""
    last = last_evaluation(st, ps, theta)
    (logdet, cAc, cAs, sAs), g = dense_parts(st, ps, theta, grad=True) if last is None \
        else (last[0], last[1])
    g = cast(np.ndarray, g)
    rx2 = ps.n - cAc
    e = ps.sum_d - cAs
    if rx2 <= 0:
        return None
    r2 = ps.sumsq_d - sAs - e * e / rx2
    if not (r2 > 0 and math.isfinite(r2)):
        return None
    d_r2 = -g[3] + 2.0 * e * g[2] / rx2 - e * e * g[1] / (rx2 * rx2)
    return float(logdet), float(rx2), float(r2), g, d_r2


def deviance_and_gradient(st: Structure, ps: PairSums, psi: np.ndarray) -> tuple[float, np.ndarray] | None:
    """:func:`profiled_deviance` at ``theta = sqrt(psi)`` and its analytic gradient in ``psi``.

    Returns None where only finite differences apply: sparse or empty
    structures, and points where the floors on ``R_X^2`` or ``r^2`` are
    active (see :mod:`mixrank.engine.lmm.reml_grad` for the derivation).
    """
    if st.mode != "dense":
        return None
    parts = _dense_terms(st, ps, np.sqrt(np.maximum(psi, 0.0)))
    if parts is None:
        return None
    logdet, rx2, r2, g, d_r2 = parts
    return criterion(ps, logdet, rx2, r2), g[0] - g[1] / rx2 + (ps.n - 1) * d_r2 / r2


def full_gradient(st: Structure, ps: PairSums, x: np.ndarray
                  ) -> tuple[np.ndarray, float, np.ndarray] | None:
    """Analytic gradient of :func:`full_deviance` at ``x = (theta, sigma)``, with ``R_X^2`` and its gradient in theta.

    ``D = log|A| + log R_X^2 + nu log(2 pi sigma^2) + r^2 / sigma^2``; with
    ``psi = theta^2``, ``dD/dtheta_r = 2 theta_r dD/dpsi_r`` and
    ``dD/dsigma = 2 nu / sigma - 2 r^2 / sigma^3``.  None outside dense mode
    or where the floors on ``R_X^2``, ``r^2`` are active.
    """
    if st.mode != "dense":
        return None
    theta, sigma = x[:-1], float(x[-1])
    parts = _dense_terms(st, ps, np.abs(theta))
    if parts is None:
        return None
    logdet, rx2, r2, g, d_r2 = parts
    s2 = sigma * sigma
    d_psi = g[0] - g[1] / rx2 + d_r2 / s2
    out = np.empty(len(x))
    out[:-1] = 2.0 * theta * d_psi
    out[-1] = 2.0 * (ps.n - 1) / sigma - 2.0 * r2 / (s2 * sigma)
    return out, rx2, -2.0 * theta * g[1]


def full_deviance(st: Structure, ps: PairSums, x: np.ndarray) -> float:
    """REML deviance at ``x = (theta_1..theta_R, sigma)`` (lmerTest's varpar)."""
    theta, sigma = x[:-1], x[-1]
    logdet, rx2, r2, _ = core(st, ps, theta)
    return reml_deviance(logdet, math.log(rx2), r2, sigma * sigma, ps.n)


def moment_psi(n: int, sum_d: float, sumsq_d: float, counts, sums, floor: float = 1e-300
               ) -> np.ndarray:
    """Moment estimates of ``psi`` from the differences' sum, sum of squares and per-term level
    ``counts`` / ``sums``; the total variance is floored at ``floor`` (relative only: any scale).

    Shared by both objectives (:meth:`Objective.moment_start`,
    :meth:`mixrank.engine.lmm.reml_fixed.FixedObjective.moment_start`).
    """
    mean = sum_d / n
    sst = sumsq_d - n * mean * mean
    tot = max(sst / max(n - 1, 1), floor)
    comps = []
    for c, s in zip(counts, sums):
        used = c > 0
        k = int(used.sum())
        if k < 2 or n - k < 1:
            comps.append(0.0)
            continue
        ssb = float(np.sum(s[used] ** 2 / c[used]) - n * mean * mean)
        ssw = max(sst - ssb, 0.0)
        msb, msw = ssb / (k - 1), ssw / (n - k)
        n0 = (n - float(np.sum(c[used] ** 2)) / n) / (k - 1)
        comps.append(max((msb - msw) / n0, 0.0))
    sig2 = max(tot - sum(comps), 0.05 * tot)
    return np.array(comps) / sig2


class RemlObjective(Protocol):
    """What the one optimiser (:func:`mixrank.engine.lmm.reml.optimise`) and its KKT check
    need of a pair's REML objective, with p >= 1 fixed columns.

    Implemented by :class:`Objective` (intercept only) and
    :class:`mixrank.engine.lmm.reml_fixed.FixedObjective` (model x covariate).
    ``exact_hessian``: the objective is an :class:`Objective` whose exact
    second derivatives drive the projected Newton search
    (:mod:`mixrank.engine.lmm.newton`); otherwise L-BFGS-B is the first run.
    """

    @property
    def R(self) -> int: ...

    @property
    def analytic(self) -> bool: ...

    @property
    def exact_hessian(self) -> bool: ...

    def deviance(self, psi: np.ndarray) -> float: ...

    def value_grad(self, psi: np.ndarray) -> tuple[float, np.ndarray] | None: ...

    def moment_start(self) -> np.ndarray: ...


class _PairObjective:
    """What every pair objective derives from its structure ``st`` alone: ``R`` components
    in block order and whether the gradient is analytic (dense mode)."""

    st: Structure

    @property
    def R(self) -> int:
        return len(self.st.levels)

    @property
    def analytic(self) -> bool:
        return self.st.mode == "dense"


@dataclass(frozen=True, eq=False)
class Objective(_PairObjective):
    """The REML objective of one pair: functions of the variance parameters alone.

    ``R`` components in block order (``st.names``); ``analytic`` says whether
    :meth:`value_grad` has an analytic gradient (dense mode).
    """

    st: Structure
    ps: PairSums

    @property
    def n(self) -> int:
        return self.ps.n

    @property
    def exact_hessian(self) -> bool:
        return self.st.mode == "dense"

    def moment_start(self) -> np.ndarray:
        """One-way ANOVA moment estimates of ``psi`` on the differences, each term alone."""
        ps = self.ps
        return moment_psi(ps.n, ps.sum_d, ps.sumsq_d, self.st.counts, ps.s)

    def core(self, theta: np.ndarray) -> tuple[float, float, float, float]:
        """``(log|A|, R_X^2, r^2, mu_hat)`` at ``theta``."""
        return core(self.st, self.ps, theta)

    def deviance(self, psi: np.ndarray) -> float:
        """REML criterion at ``theta = sqrt(max(psi, 0))``."""
        return profiled_deviance(self.st, self.ps, np.sqrt(np.maximum(psi, 0.0)))

    def value_grad(self, psi: np.ndarray) -> tuple[float, np.ndarray] | None:
        """Criterion and analytic gradient in ``psi``, or None (sparse mode, floors active)."""
        return deviance_and_gradient(self.st, self.ps, psi)

    def full_deviance(self, x: np.ndarray) -> float:
        """Unprofiled REML deviance at ``x = (theta, sigma)``."""
        return full_deviance(self.st, self.ps, x)

    def full_gradient(self, x: np.ndarray) -> tuple[np.ndarray, float, np.ndarray] | None:
        """Analytic gradient of :meth:`full_deviance`, ``R_X^2`` and its theta-gradient (dense mode)."""
        return full_gradient(self.st, self.ps, x)

    def var_mu(self, theta: np.ndarray, sigma: float) -> float:
        """``Var(mu_hat) = sigma^2 / R_X^2`` at ``(theta, sigma)``."""
        return sigma * sigma / self.core(theta)[1]


def make_objective(st: Structure, ps: PairSums) -> Objective:
    """Validate one pair's sums and return its REML :class:`Objective`.

    Raises
    ------
    DesignError
        Fewer than two cells, or no residual variation (all differences equal).
    """
    n = ps.n
    if n < 2:
        raise DesignError(f"the pair has {n} common cell(s); at least 2 are needed to estimate a variance")
    if ps.sumsq_d - ps.sum_d ** 2 / n <= 1e-12 * ps.sumsq_d:  # relative: any scale of scores
        raise DesignError("all paired differences are identical (zero variance); no standard "
                          "error can be estimated. Check that the two models' scores differ "
                          "across cells, or compare them with an exact test")
    return Objective(st, ps)
