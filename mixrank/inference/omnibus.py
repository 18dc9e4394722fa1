"""Stage inference: the omnibus test that every model's score is equal (docs/methods.md §12).

Inputs: the cell scores (cells x models, NaN where a model did not score a cell) and,
for the cluster-robust test, each cell's unit code.
Outputs: one :class:`OmnibusTest` (statistic, numerator and denominator df, p-value):

* :func:`cr2_htz` -- the Wald test of ``lm(score ~ 0 + model)`` clustered by the unit,
  CR2 covariance, Hotelling-T^2 with Pustejovsky & Tipton's (2018) "HTZ" df (clubSandwich's
  ``Wald_test(..., constrain_equal(...), vcov = "CR2", test = "HTZ")``);
* :func:`friedman` -- Friedman's rank test over complete cells (blocks);
* :func:`cochran` -- Cochran's Q over complete binary cells.

With model indicators as the only columns, ``X'X`` is diagonal; every matrix the CR2
adjustment and the HTZ df need is then a q x q or q x K block per unit (no N x N matrix is
formed; the derivation is in methods.md §12).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..errors import DataError

__all__ = ["OmnibusTest", "cr2_htz", "friedman", "cochran", "randomization", "wald_q"]


@dataclass(frozen=True)
class OmnibusTest:
    """One omnibus test: ``statistic`` is F (``cr2``) or chi-square (``friedman``,
    ``cochran``; ``df_den`` is then infinite); ``p_value`` NaN where ``df_den <= 0``."""

    statistic: float
    df_num: float
    df_den: float
    p_value: float


def _sym_power(a: np.ndarray, power: float) -> np.ndarray:
    w, v = np.linalg.eigh((a + a.T) / 2)
    return (v * w ** power) @ v.T


def cr2_htz(scores: np.ndarray, units: np.ndarray) -> OmnibusTest:
    """The HTZ Wald test that the K model means of ``scores`` (cells x K, NaN = not scored)
    are equal, clustered by ``units`` (one integer code per cell).

    Unweighted least squares with the identity working covariance, the constraint
    ``C = [-1, e_k]`` (model 1 against each other model; the test is invariant to it).
    """
    obs = ~np.isnan(scores)
    y = np.where(obs, scores, 0.0)
    _, u = np.unique(units, return_inverse=True)
    J, K = int(u.max()) + 1, scores.shape[1]
    q = K - 1
    n_jk = np.zeros((J, K))
    s_jk = np.zeros((J, K))
    np.add.at(n_jk, u, obs.astype(float))
    np.add.at(s_jk, u, y)
    n_k = n_jk.sum(axis=0)
    beta = s_jk.sum(axis=0) / n_k
    lam = n_jk / n_k                               # leverage share of each unit per model
    if (lam >= 1 - 1e-12).any():
        raise DataError("the cluster-robust omnibus test needs every model scored in at "
                        "least two units; a model is scored in one unit only")
    d = (1 - lam) ** -0.5                          # CR2: X_j' A_j = D_j X_j'
    e_jk = s_jk - n_jk * beta                      # residual sums per unit and model
    C = np.hstack([-np.ones((q, 1)), np.eye(q)])
    m = 1 / n_k
    CM = C * m                                     # C M (q x K)
    uu = CM[None] * (d * e_jk)[:, None, :]         # C M u_j (J x q x K)
    cv = np.einsum("jqk->jq", uu)
    vcov = cv.T @ cv                               # C V_CR2 C'
    ev = np.linalg.eigvalsh(vcov)
    if not ev.min() > 1e-10 * max(ev.max(), 0.0):
        raise DataError(
            f"the cluster-robust covariance of the {K} model scores is singular (rank below "
            f"{q}): with {J} units there are too few units for {K} models, or two models' "
            "scores differ by the same amount in every unit (e.g. a duplicated model); the "
            "Wald test needs more units than models and no such pair: drop a duplicate, or "
            "use method='friedman' or method='cochran'")
    cb = C @ beta
    Q = float(cb @ np.linalg.solve(vcov, cb))
    # Under the working model the scaled sum of unit j's cluster term is
    #   C M D_j (S_j e - diag(lam_j) S e),  Cov(S_j e) = diag(n_jk),
    # so the J x J blocks are P_jk = delta_jk F_j - a_j M a_k', F_j = C M D_j^2 N_j M C',
    # a_j = C M D_j N_j.
    F = np.einsum("qk,jk,rk->jqr", CM, d ** 2 * n_jk, CM)
    a = CM[None] * (d * n_jk)[:, None, :]          # J x q x K
    b = a * np.sqrt(m)                             # a_j M^{1/2}
    omega = F.sum(axis=0) - np.einsum("jqk,jrk->qr", b, b)
    w = _sym_power(omega, -0.5)
    Fn = np.einsum("qs,jst,tr->jqr", w, F, w)
    bn = np.einsum("qs,jsk->jqk", w, b)
    bb = np.einsum("jqk,jrk->jqr", bn, bn)
    T = np.einsum("jsa,jub->suab", bn, bn)         # sum_j b_j (x) b_j (q x q x K x K)
    FnT = np.transpose(Fn, (0, 2, 1))
    bbT = np.transpose(bb, (0, 2, 1))
    # sum_jk B_jk[s,t] B_jk[t,s] with B_jk = delta_jk Fn_j - bn_j bn_k'
    first = (np.einsum("jst,jst->st", Fn, FnT) - np.einsum("jst,jst->st", Fn, bbT)
             - np.einsum("jst,jst->st", bb, FnT) + np.einsum("stab,tsab->st", T, T))
    # sum_jk B_jk[s,s] B_jk[t,t]
    dF = np.einsum("jss->js", Fn)
    dB = np.einsum("jss->js", bb)
    second = (np.einsum("js,jt->st", dF, dF) - np.einsum("js,jt->st", dF, dB)
              - np.einsum("js,jt->st", dB, dF) + np.einsum("stab,stab->st", T, T))
    nu = q * (q + 1) / float((first + second).sum())
    df_den = nu - q + 1
    stat = max(df_den / nu, 0.0) * Q / q
    p = float(special.fdtrc(q, df_den, stat)) if df_den > 0 else float("nan")
    return OmnibusTest(float(stat), float(q), float(df_den), p)


def _complete(scores: np.ndarray, test: str) -> np.ndarray:
    keep = ~np.isnan(scores).any(axis=1)
    if not keep.all():
        raise DataError(f"{test} needs every model scored on every cell (complete blocks); "
                        f"{int((~keep).sum())} of {len(keep)} cells miss a model's score: "
                        "use the default cluster-robust test or restrict the data to the "
                        "cells every model scored")
    return scores


def friedman(scores: np.ndarray) -> OmnibusTest:
    """Friedman's chi-square over the cells (blocks) x models, mid-ranks for ties and the
    tie correction (as :func:`scipy.stats.friedmanchisquare`)."""
    x = _complete(scores, "method='friedman'")
    n, K = x.shape
    order = np.argsort(x, axis=1, kind="stable")
    xs = np.take_along_axis(x, order, axis=1)
    ranks = np.empty_like(x)
    ties = 0.0
    for i in range(n):
        _, inv, cnt = np.unique(xs[i], return_inverse=True, return_counts=True)
        ends = np.cumsum(cnt)
        mid = ends - (cnt - 1) / 2
        ranks[i, order[i]] = mid[inv]
        ties += float((cnt ** 3 - cnt).sum())
    c = 1 - ties / (n * K * (K * K - 1))
    if c <= 0:
        raise DataError("method='friedman': every cell gives all models the same score; "
                        "the ranks carry no information")
    r = ranks.sum(axis=0)
    stat = (12 / (n * K * (K + 1)) * float((r ** 2).sum()) - 3 * n * (K + 1)) / c
    return OmnibusTest(stat, float(K - 1), float("inf"), float(special.chdtrc(K - 1, stat)))


def cochran(scores: np.ndarray) -> OmnibusTest:
    """Cochran's Q over complete binary cells x models (as statsmodels' ``cochrans_q``)."""
    x = _complete(scores, "method='cochran'")
    if not np.isin(x, (0.0, 1.0)).all():
        raise DataError("method='cochran' needs 0/1 cell scores; some cells score between 0 "
                        "and 1 (replicate means or a continuous score): use "
                        "method='friedman' instead")
    K = x.shape[1]
    col = x.sum(axis=0)
    row = x.sum(axis=1)
    den = K * row.sum() - float((row ** 2).sum())
    if den <= 0:
        raise DataError("method='cochran': every cell gives all models the same 0/1 score; "
                        "Q is undefined")
    stat = (K - 1) * (K * float((col ** 2).sum()) - row.sum() ** 2) / den
    return OmnibusTest(float(stat), float(K - 1), float("inf"), float(special.chdtrc(K - 1, stat)))


def _unit_sums(scores: np.ndarray, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-unit model sums (J x K) and cells per unit (J) of complete cells."""
    _, u = np.unique(units, return_inverse=True)
    J = int(u.max()) + 1
    s = np.zeros((J, scores.shape[1]))
    np.add.at(s, u, scores)
    return s, np.bincount(u, minlength=J).astype(float)


def wald_q(sums: np.ndarray, n_j: np.ndarray) -> np.ndarray:
    """The CR2 Wald statistic Q of :func:`cr2_htz` on complete cells from the per-unit model
    sums ``sums`` (... x J x K; leading axes: data sets, e.g. permutations)."""
    N = n_j.sum()
    d = (1 - n_j / N) ** -0.5                         # one CR2 scalar per unit (complete)
    beta = sums.sum(axis=-2) / N
    u = d[:, None] * (sums - n_j[:, None] * beta[..., None, :])
    cu = (u[..., 1:] - u[..., :1]) / N                # C M u_j
    vcov = np.einsum("...jq,...jr->...qr", cu, cu)
    cb = beta[..., 1:] - beta[..., :1]
    w, v = np.linalg.eigh(vcov)
    proj = np.einsum("...qr,...q->...r", v, cb)
    # a singular covariance (possible under a permutation of 0/1 scores): Q = inf, counted
    # as at least the observed Q (conservative)
    singular = w[..., :1] <= 1e-12 * np.abs(w[..., -1:])
    safe = np.where(singular, 1.0, w)
    return np.where(singular[..., 0], np.inf, (proj ** 2 / safe).sum(axis=-1))


def randomization(scores: np.ndarray, units: np.ndarray, draws: int,
                  rng: np.random.Generator) -> tuple[OmnibusTest, int, bool]:
    """The unit-level randomization omnibus: the HTZ test of :func:`cr2_htz` with its
    p-value from permutations of the model labels, one permutation per unit applied to all
    its cells (complete cells only).  Every permutation is enumerated (fixing the first
    unit's: Q does not change when all units relabel alike) when there are at most
    ``draws`` of them, else ``draws`` random ones, p = (1 + #{Q* >= Q}) / (draws + 1).
    Returns the test, the number of permutations and whether they were all enumerated."""
    x = _complete(scores, "method='randomization'")
    obs = cr2_htz(x, units)
    sums, n_j = _unit_sums(x, units)
    J, K = sums.shape
    q_obs = float(wald_q(sums, n_j))
    perms = np.array(list(itertools.permutations(range(K))))
    total = float(len(perms)) ** (J - 1)
    tol = 1e-9 * abs(q_obs)
    if total <= draws:
        idx = np.array(list(itertools.product(range(len(perms)), repeat=J - 1)), dtype=np.int64)
        idx = idx.reshape(len(idx), J - 1)
        first = np.broadcast_to(np.arange(K), (len(idx), 1, K))
        order = np.concatenate([first, perms[idx]], axis=1)
        q = wald_q(np.take_along_axis(sums[None], order, axis=2), n_j)
        p = float(np.mean(q >= q_obs - tol))
        return OmnibusTest(obs.statistic, obs.df_num, obs.df_den, p), len(q), True
    hits = 0
    for start in range(0, draws, 2000):
        b = min(2000, draws - start)
        order = np.argsort(rng.random((b, J, K)), axis=2)
        hits += int((wald_q(np.take_along_axis(sums[None], order, axis=2), n_j)
                     >= q_obs - tol).sum())
    p = (1 + hits) / (draws + 1)
    return OmnibusTest(obs.statistic, obs.df_num, obs.df_den, p), draws, False
