"""Stage judge: the PPI++ mean of reference labels at a unit of inference (docs/judge.md §2-§3).

Inputs: reference labels ``y`` and judge scores ``yhat`` on the labelled
cells, judge scores ``yhat_u`` on the unlabelled cells, and optionally the
codes of the formula's random groupings on both sets of cells.
Outputs: :class:`PPIEstimate` (estimate, variance, df, the tuned lambda and
the labelled-only variance at the same unit) from :func:`ppi_mean`.

The estimator is PPI++ for a mean (Angelopoulos, Duchi & Zrnic 2024):
``theta = lam mean(yhat_u) + mean(y - lam yhat)``, ``lam`` by default the
published plug-in (as ``ppi_py``), or ``"unit"``: the minimiser of the
variance at the unit.  At the cell unit (no grouping) the variance is the
plug-in of the paper and of ``ppi_py`` (``lam^2 var(yhat_u)/N + var(y - lam
yhat)/n``, population variances); with one grouping (the unit) it is CR2 at
the unit with Bell-McCaffrey df (:class:`CR2`, as the linear fits'
``df="cr2"``); with several crossed random terms it is multiway
cluster-robust by inclusion-exclusion with df = levels - 1.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["PPIEstimate", "ppi_mean", "ppi_lambda", "CR2"]


@dataclass(frozen=True)
class PPIEstimate:
    """One PPI++ estimate of a mean of reference labels.

    Attributes
    ----------
    estimate, variance, df : float
        The corrected mean, its variance at the unit and the df of its t
        reference (inf at the cell unit: the normal interval of PPI++).
    lam : float
        The lambda used (plug-in, unit-tuned or fixed).
    n_labelled, n_unlabelled, n_units : int
        Labelled cells, unlabelled cells, levels of the unit among the
        labelled cells (the cells themselves at the cell unit).
    variance_labelled : float
        Variance of the labelled-only mean (lambda = 0) at the same unit.
    variance_cell : float
        The variance at the same lambda if the cells were independent (the
        cell-unit plug-in); ``variance / variance_cell`` is the design effect.
    sigma, rho : float
        Population SD of the labels and judge-label correlation on the labelled cells.
    """

    estimate: float
    variance: float
    df: float
    lam: float
    n_labelled: int
    n_unlabelled: int
    n_units: int
    variance_labelled: float
    variance_cell: float
    sigma: float
    rho: float

    @property
    def std_error(self) -> float:
        return math.sqrt(self.variance) if self.variance >= 0 else float("nan")

    @property
    def n_effective(self) -> float:
        """Labels a labelled-only mean would need for the same variance: ``n var_0 / var``."""
        if not (self.variance > 0):
            return float("nan")
        return self.n_labelled * self.variance_labelled / self.variance


def ppi_lambda(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> float:
    """The power-tuned lambda of PPI++ for a mean at the cell unit.

    ``lam = cov(y, yhat) / ((1 + n/N) var(yhat and yhat_u pooled))`` clipped
    to [0, 1]: covariance with divisor n, pooled variance with divisor
    n + N - 1 (Angelopoulos et al. 2024, Example 6.1; as ``ppi_py``).
    """
    n, N = len(y), len(yhat_u)
    if N == 0 or n < 2:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    pooled = np.concatenate([yhat, yhat_u])
    var = float(np.var(pooled, ddof=1))
    if not var > 0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / N) * var), 0.0, 1.0))


def _group_sets(groups_l: Sequence[np.ndarray], groups_u: Sequence[np.ndarray]
                ) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(size, codes on labelled, codes on unlabelled) for every non-empty subset of the
    groupings: the intersections of inclusion-exclusion (Cameron, Gelbach & Miller 2011)."""
    k = len(groups_l)
    out = []
    for r in range(1, k + 1):
        for sub in itertools.combinations(range(k), r):
            if r == 1:   # one grouping: its codes are already non-negative integers
                codes = np.concatenate([groups_l[sub[0]], groups_u[sub[0]]]).astype(np.int64)
            else:
                stacked = np.concatenate([np.column_stack([groups_l[i] for i in sub]),
                                          np.column_stack([groups_u[i] for i in sub])])
                codes = np.unique(stacked, axis=0, return_inverse=True)[1].ravel()
            out.append((r, codes[:len(groups_l[0])], codes[len(groups_l[0]):]))
    return out


def _quadratic(b: np.ndarray, d: np.ndarray, sets: list[tuple[int, np.ndarray, np.ndarray]]
               ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Coefficients ``(a, b, c)`` of ``V(lam) = a + 2 b lam + c lam^2`` (multiway CR1) and the
    one-way coefficient vectors, from the per-cell influence parts ``b`` (lam-free) and ``d``
    (multiplying lam), labelled cells first."""
    total = np.zeros(3)
    oneway = []
    for size, cl, cu in sets:
        codes = np.concatenate([cl, cu])
        G = int(codes.max()) + 1 if codes.size else 0
        Bg = np.bincount(codes, weights=b, minlength=G)
        Dg = np.bincount(codes, weights=d, minlength=G)
        used = int(np.count_nonzero(np.bincount(codes, minlength=G)))
        f = used / (used - 1) if used > 1 else float("nan")
        coef = f * np.array([Bg @ Bg, Bg @ Dg, Dg @ Dg])
        total += (1 if size % 2 else -1) * coef
        if size == 1:
            oneway.append(coef)
    return total, oneway


class CR2:
    """CR2 at one unit for the PPI++ mean and its Bell-McCaffrey df.

    The estimator is ``c'beta`` of a regression with two intercepts (the labelled
    cells' mean of ``r``, the unlabelled cells' mean of ``lam yhat``), clustered by
    the unit: cell c of unit g in part P (labelled, n cells; unlabelled, N) has
    leverage ``m_Pg / n_P`` within its unit's block, so the CR2 adjustment
    ``(I - H_gg)^(-1/2)`` scales unit g's residual total in part P by
    ``1 / sqrt(1 - m_Pg / n_P)`` (Bell & McCaffrey 2002; Pustejovsky & Tipton 2018).
    """

    def __init__(self, cl: np.ndarray, cu: np.ndarray, n: int, N: int) -> None:
        G = int(max(cl.max(initial=-1), cu.max(initial=-1))) + 1
        self.n, self.N = n, N
        self.mL = np.bincount(cl, minlength=G).astype(float)
        self.mU = np.bincount(cu, minlength=G).astype(float)
        self.sL = 1.0 / np.sqrt(np.clip(1.0 - self.mL / max(n, 1), 1e-12, None))
        self.sU = 1.0 / np.sqrt(np.clip(1.0 - self.mU / max(N, 1), 1e-12, None))
        self.scale = np.concatenate([self.sL[cl], self.sU[cu]])
        self.codes = np.concatenate([cl, cu]).astype(np.int64)
        self.G = G

    def quadratic(self, b: np.ndarray, d: np.ndarray) -> np.ndarray:
        """``(a, b, c)`` of the CR2 variance ``a + 2 b lam + c lam^2``."""
        Bg = np.bincount(self.codes, weights=b * self.scale, minlength=self.G)
        Dg = np.bincount(self.codes, weights=d * self.scale, minlength=self.G)
        return np.array([Bg @ Bg, Bg @ Dg, Dg @ Dg])

    def df(self, var_l: float, var_u: float) -> float:
        """``tr(M)^2 / tr(M^2)``, ``M = var_l M_L + var_u M_U`` with, per part,
        ``M_P = D_a (diag(m) - m m' / n_P) D_a``, ``a_g = s_Pg / n_P`` (working
        independence with each part's own variance)."""
        M = np.zeros((self.G, self.G))
        for m, sc, tot, v in ((self.mL, self.sL, self.n, var_l), (self.mU, self.sU, self.N, var_u)):
            if tot == 0 or not v > 0:
                continue
            a = sc / tot
            M += v * a[:, None] * (np.diag(m) - np.outer(m, m) / tot) * a[None, :]
        tr2 = float(np.sum(M * M))
        return float(np.trace(M) ** 2 / tr2) if tr2 > 0 else float("inf")


def ppi_mean(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, *,
             groups_l: Sequence[np.ndarray] | None = None,
             groups_u: Sequence[np.ndarray] | None = None,
             lam: float | str | None = None) -> PPIEstimate:
    """PPI++ estimate of the mean of the reference labels (docs/judge.md §2-§3).

    Parameters
    ----------
    y, yhat : ndarray (n,)
        Reference labels and judge scores on the labelled cells.
    yhat_u : ndarray (N,)
        Judge scores on the unlabelled cells (N may be 0: then lambda = 0).
    groups_l, groups_u : sequence of int ndarrays, optional
        Codes of each random grouping on the labelled / unlabelled cells;
        None for the cell unit.
    lam : float, "unit" or None
        Fixed lambda in [0, 1]; None (default) the plug-in :func:`ppi_lambda`;
        ``"unit"`` the minimiser of the variance at the unit.

    Returns
    -------
    PPIEstimate

    Notes
    -----
    Per cell the estimate's influence is ``lam (yhat_c - mean(yhat_u)) / N``
    on an unlabelled cell and ``(r_c - mean(r)) / n`` on a labelled one
    (``r = y - lam yhat``).  At the cell unit the variance is the sum of their
    squares (``ppi_py``'s ``ppi_mean_ci`` variance exactly) and df = inf.  With
    groupings it is ``sum_S (-1)^(|S|+1) G_S/(G_S - 1) sum_g (sum_{c in g}
    influence_c)^2`` over the non-empty sets S of groupings (nested terms
    cancel to the outer one); if that is not positive the largest one-way
    variance is used; ``df = min_r G_r - 1`` with ``G_r`` the levels of
    grouping r among the labelled cells.  With a single random term (the
    unit) the variance is CR2 instead: unit g's influence total in each part
    (labelled, unlabelled) is scaled by ``1 / sqrt(1 - m_g / n_part)`` (its
    leverage), and the df are Bell-McCaffrey's ``tr(M)^2 / tr(M^2)`` under
    working independence, capped at ``G - 1`` (:class:`CR2`; issue 37:
    coverage 0.95 at 8 subjects with 10-20% labelled and unequal subject
    sizes, where CR1 with ``G - 1`` df gave 0.918-0.929).  The
    variance is quadratic in lambda; ``lam="unit"`` takes its minimiser
    clipped to [0, 1] (never wider than lambda = 0, but the minimum of a
    variance estimated from few units is optimistic: docs/judge.md §3).  Validated against ``ppi_py`` 0.2.3
    (``tests/judge/test_ppi_reference.py``) and by simulation.
    """
    y = np.asarray(y, dtype=float)
    yhat = np.asarray(yhat, dtype=float)
    yhat_u = np.asarray(yhat_u, dtype=float)
    n, N = len(y), len(yhat_u)
    sigma = float(np.std(y)) if n else float("nan")
    rho = (float(np.corrcoef(y, yhat)[0, 1]) if n > 1 and np.std(y) > 0 and np.std(yhat) > 0
           else float("nan"))
    # influence parts: lam-free b, and d multiplying lam
    b = np.concatenate([(y - y.mean()) / n, np.zeros(N)])
    d = np.concatenate([-(yhat - yhat.mean()) / n,
                        (yhat_u - yhat_u.mean()) / N if N else np.zeros(0)])
    cell = np.array([b @ b, b @ d, d @ d])
    clustered = groups_l is not None and len(groups_l) > 0
    one_way = None
    if clustered and groups_l is not None and groups_u is not None:
        n_units = min(int(np.unique(g).size) for g in groups_l)
        df = float(n_units - 1)
        if len(groups_l) == 1:     # one unit: CR2 with Bell-McCaffrey df (as the linear fits)
            one_way = CR2(groups_l[0], groups_u[0], n, N)
            quad = one_way.quadratic(b, d)
            oneway = [quad]
        else:
            sets = _group_sets(groups_l, groups_u)
            quad, oneway = _quadratic(b, d, sets)
    else:
        quad, oneway = cell, [cell]
        n_units, df = n, float("inf")
    if N == 0:
        lam_used = 0.0
    elif lam == "unit":
        lam_used = float(np.clip(-quad[1] / quad[2], 0.0, 1.0)) if quad[2] > 0 else 0.0
    elif lam is not None:
        lam_used = float(lam)
    else:
        lam_used = ppi_lambda(y, yhat, yhat_u)

    def var(q: np.ndarray, lm: float) -> float:
        return float(q[0] + 2 * lm * q[1] + lm * lm * q[2])

    v = var(quad, lam_used)
    if one_way is not None:
        r = y - lam_used * yhat
        df = min(df, one_way.df(float(np.var(r)) if n else 0.0,
                                lam_used ** 2 * float(np.var(yhat_u)) if N else 0.0))
    if clustered and not v > 0:
        v = max(var(q, lam_used) for q in oneway)
    v0 = quad[0] if quad[0] > 0 or not clustered else max(q[0] for q in oneway)
    est = (lam_used * float(yhat_u.mean()) if N else 0.0) + float(np.mean(y - lam_used * yhat))
    return PPIEstimate(estimate=est, variance=v, df=df, lam=lam_used, n_labelled=n,
                       n_unlabelled=N, n_units=n_units, variance_labelled=float(v0),
                       variance_cell=var(cell, lam_used), sigma=sigma, rho=rho)
