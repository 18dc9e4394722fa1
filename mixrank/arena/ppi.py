"""Stage arena/ppi: prediction-powered Bradley-Terry (PPI++ for the BT score equations).

Inputs: the per-battle design of encoded battles (:func:`design`), the human
outcome (NaN where a battle is unlabelled), the verdicts of one or more LLM
judges on every battle, optional cluster codes.
Outputs: :class:`PPFit` -- strengths (``beta[0] = 0``), the power-tuning
``lam`` per judge, the sandwich covariance (per battle or clustered) and
the information of the full log.
Contents (docs/arena.md §8): :func:`design`, :func:`fit_ppbt`,
:func:`tune_lambda`.

The estimator minimises the rectified logistic loss of PPI++ (Angelopoulos,
Duchi and Zrnic 2023)::

    L(theta) = 1/n sum_lab l(d_i, y_i)
               + sum_j lam_j [ 1/N sum_unl l(d_k, yhat_kj) - 1/n sum_lab l(d_i, yhat_ij) ]

with ``l(d, y) = log(1 + e^d) - y d`` and ``d = z' theta`` (``z = e_a - e_b``
plus covariate differences).  ``lam = 0`` is the human-only BT fit on the
labelled battles; one judge with ``lam`` tuned is ppi_py's
``ppi_logistic_pointestimate`` on the same design (tests/arena/test_ppi.py).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import linalg, sparse

from mixrank.arena.data import Battles
from mixrank.arena.estimate import pad
from mixrank.errors import ConvergenceError, DataError

__all__ = ["PPFit", "design", "design_rows", "fit_ppbt", "tune_lambda"]


@dataclass(frozen=True)
class PPFit:
    """A prediction-powered BT fit; ``theta = (beta, gamma)`` with ``beta[0] = 0``."""

    theta: np.ndarray
    lam: np.ndarray
    cov: np.ndarray           # padded sandwich covariance of theta
    info: np.ndarray          # free-parameter information of the labelled battles
    n_labelled: int
    n_unlabelled: int


def design(bt: Battles) -> np.ndarray:
    """Per-battle rows ``z = e_a - e_b`` plus the covariate differences, column 0 dropped."""
    K = len(bt.models)
    n = bt.n
    Z = np.zeros((n, K + bt.x.shape[1]))
    rows = np.arange(n)
    Z[rows, bt.a] = 1.0
    Z[rows, bt.b] = -1.0
    Z[:, K:] = bt.x
    return Z[:, 1:]


def _expit(d: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * d))


def _gram(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A' B`` (a contiguous transpose: BLAS is much slower on the strided view)."""
    return np.ascontiguousarray(A.T) @ B


@dataclass(frozen=True)
class _Rows:
    """The distinct design rows ``R`` and each battle's row: sums over battles of
    ``w_i z_i z_i'`` become ``R' diag(sum w per row) R`` (at most K(K-1) rows
    without covariates)."""

    R: np.ndarray
    inv: np.ndarray

    @classmethod
    def of(cls, Z: np.ndarray) -> _Rows:
        Zc = np.ascontiguousarray(Z) + 0.0   # + 0.0: -0.0 and 0.0 share their bytes
        key = Zc.view(np.dtype((np.void, Zc.dtype.itemsize * Zc.shape[1]))).reshape(-1)
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
        return cls(R=Zc[first], inv=inv.reshape(-1))

    def sum(self, w: np.ndarray, sel: np.ndarray | None = None) -> np.ndarray:
        """Per-row sums of ``w`` (over the battles ``sel``)."""
        if sel is None:
            return np.bincount(self.inv, w, self.R.shape[0])
        return np.bincount(self.inv[sel], w[sel], self.R.shape[0])

    def gram(self, w: np.ndarray, sel: np.ndarray | None = None) -> np.ndarray:
        """``sum_i w_i z_i z_i'`` over the battles ``sel``."""
        return _gram(self.R * self.sum(w, sel)[:, None], self.R)

    def vec(self, w: np.ndarray, sel: np.ndarray | None = None) -> np.ndarray:
        """``sum_i w_i z_i`` over the battles ``sel``."""
        return self.sum(w, sel) @ self.R


def design_rows(bt: Battles) -> _Rows:
    """The distinct rows of :func:`design` and each battle's row, without the N x P matrix."""
    key = np.column_stack([bt.a, bt.b, bt.x]) + 0.0
    uniq, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    sub = Battles(models=bt.models, a=bt.a[first], b=bt.b[first], outcome=bt.outcome[first],
                  x=bt.x[first], features=bt.features, cluster=None, cluster_name=None,
                  n_ties_dropped=0)
    return _Rows(R=design(sub), inv=inv.reshape(-1))


def _newton(rows: _Rows, c: np.ndarray, t: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Minimise ``sum_i c_i log(1 + e^{d_i}) - t_i d_i`` (``c >= 0``) by damped Newton,
    on the battles pooled by design row (their ``c`` and ``t`` summed)."""
    Z = rows.R
    c, t = rows.sum(c), rows.sum(t)
    th = start.copy()

    def loss(v: np.ndarray) -> float:
        d = Z @ v
        return float(np.sum(c * np.logaddexp(0.0, d) - t * d))

    cur = loss(th)
    for _ in range(200):
        mu = _expit(Z @ th)
        g = (c * mu - t) @ Z
        H = _gram(Z * (c * mu * (1 - mu))[:, None], Z)
        try:
            step = linalg.solve(H, g, assume_a="pos")
        except (linalg.LinAlgError, ValueError):
            step = linalg.lstsq(H, g)[0]
        s = 1.0
        while True:
            new = th - s * step
            val = loss(new)
            if np.isfinite(val) and val <= cur + 1e-13 * max(1.0, abs(cur)):
                break
            s *= 0.5
            if s < 1e-10:
                raise ConvergenceError("the prediction-powered Bradley-Terry loss could not be "
                                       "decreased; check that every model has labelled battles")
        th, cur = new, val
        if not np.all(np.isfinite(th)):
            raise np.linalg.LinAlgError("non-finite Newton step")
        if np.max(np.abs(s * step)) < 1e-12 * (1 + np.max(np.abs(th))):
            if np.max(np.abs(th)) > 30:
                raise DataError("the prediction-powered strengths run to infinity (a model that "
                                "never wins or never loses among the labelled battles); label "
                                "more battles of the models at the top or bottom")
            return th
    raise ConvergenceError("Newton did not converge for the prediction-powered Bradley-Terry fit")


def _weights(lab: np.ndarray, y: np.ndarray, yhat: np.ndarray, lam: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Per-battle (c, t) of the rectified loss for the given ``lam`` (one per judge)."""
    n, N = int(lab.sum()), int((~lab).sum())
    L = float(lam.sum())
    comb = yhat @ lam
    c = np.where(lab, (1.0 - L) / n, L / max(N, 1))
    t = np.where(lab, (np.where(lab, y, 0.0) - comb) / n, comb / max(N, 1))
    return c, t


def _centred_cross(rows: _Rows, u: np.ndarray, v: np.ndarray, sel: np.ndarray) -> np.ndarray:
    """``sum_sel (u_i z_i - ubar)(v_i z_i - vbar)'`` (symmetrised), bars the means over sel."""
    m = int(sel.sum())
    S = rows.gram(u * v, sel) - np.outer(rows.vec(u, sel), rows.vec(v, sel)) / m
    return 0.5 * (S + S.T)


def tune_lambda(rows: _Rows, theta: np.ndarray, lab: np.ndarray, y: np.ndarray,
                yhat: np.ndarray) -> np.ndarray:
    """Power-tuning ``lam`` (one per judge) minimising the trace of the sandwich.

    With one judge this is PPI++'s ``lam = tr(V C V) / ((1 + n/N) tr(V S V))``
    clipped to [0, 1] (ppi_py's ``_calc_lam_glm``): ``V`` the inverse mean
    Hessian over all battles, ``C`` the symmetrised covariance of the human
    and judge scores on the labelled battles, ``S`` the covariance of the
    judge's scores on all battles.  With J judges the same quadratic in the
    vector ``lam`` is minimised over ``lam >= 0, sum(lam) <= 1``.
    """
    mu = _expit(rows.R @ theta)[rows.inv]
    n, N = int(lab.sum()), int((~lab).sum())
    every = np.ones(lab.size, dtype=bool)
    V = np.linalg.inv(rows.gram(mu * (1 - mu)) / lab.size)
    sy = mu - np.nan_to_num(y)
    sj = [mu - yhat[:, j] for j in range(yhat.shape[1])]
    J = len(sj)
    c = np.array([np.trace(V @ _centred_cross(rows, sy, sj[j], lab) @ V) / n for j in range(J)])
    Q = np.empty((J, J))
    for j in range(J):
        for k in range(j, J):
            S = _centred_cross(rows, sj[j], sj[k], every) / (lab.size - 1)
            Q[j, k] = Q[k, j] = (1 + n / N) * np.trace(V @ S @ V)
    return _constrained_quadratic(Q, c)


def _constrained_quadratic(Q: np.ndarray, c: np.ndarray) -> np.ndarray:
    """argmin ``l'Ql - 2c'l`` over ``l >= 0, sum(l) <= 1`` (active sets; J is small)."""
    J = c.size
    best, best_val = np.zeros(J), 0.0
    for r in range(1, J + 1):
        for S in itertools.combinations(range(J), r):
            idx = list(S)
            Qs, cs = Q[np.ix_(idx, idx)], c[idx]
            cands = []
            try:
                cands.append(np.linalg.solve(Qs, cs))
                ones = np.ones(len(idx))   # on the face sum(l) = 1
                qi_c, qi_1 = np.linalg.solve(Qs, cs), np.linalg.solve(Qs, ones)
                cands.append(qi_c + qi_1 * (1 - ones @ qi_c) / (ones @ qi_1))
            except np.linalg.LinAlgError:
                continue
            for v in cands:
                if np.all(v >= -1e-12) and v.sum() <= 1 + 1e-12:
                    full = np.zeros(J)
                    full[idx] = np.clip(v, 0, None)
                    val = full @ Q @ full - 2 * c @ full
                    if val < best_val - 1e-15:
                        best, best_val = full, val
    return best


def fit_ppbt(Z: np.ndarray | _Rows, y: np.ndarray, yhat: np.ndarray, *,
             lam: np.ndarray | None = None, cluster: np.ndarray | None = None) -> PPFit:
    """Prediction-powered BT: tune ``lam`` (unless given), fit, sandwich covariance.

    Parameters
    ----------
    Z : (N, P-1) design of every battle (:func:`design`), or its distinct rows
        (:func:`design_rows`, which never forms the N x P matrix).
    y : (N,) human outcome (1 / 0 / 0.5), NaN where unlabelled.
    yhat : (N, J) judge verdicts on every battle.
    lam : (J,), optional
        Fixed power-tuning; default tuned at the fit with ``lam = 1/J``
        each (as ppi_py tunes at ``lam = 1``).
    cluster : (N,) int codes, optional
        Clustered meat (labelled and unlabelled battles of a cluster summed).

    Raises
    ------
    DataError
        No labelled battle; strengths running to infinity.
    """
    lab = ~np.isnan(y)
    n, N = int(lab.sum()), int((~lab).sum())
    if n < 2:
        raise DataError(f"{n} battle(s) have a human verdict; prediction-powered BT needs "
                        "labelled battles (the winner column) beside the judge's verdicts")
    rows = Z if isinstance(Z, _Rows) else _Rows.of(Z)
    J = yhat.shape[1]
    start = np.zeros(rows.R.shape[1])
    if N == 0:   # everything labelled: the ordinary fit
        lam_ = np.zeros(J)
    elif lam is None:
        c0, t0 = _weights(lab, y, yhat, np.full(J, 1.0 / J))
        th0 = _newton(rows, c0, t0, start)
        lam_ = tune_lambda(rows, th0, lab, y, yhat)
        start = th0
    else:
        lam_ = np.asarray(lam, dtype=float)
    c, t = _weights(lab, y, yhat, lam_)
    th = _newton(rows, c, t, start)
    mu = _expit(rows.R @ th)[rows.inv]
    use_all = bool(lam_.sum() > 0) and N > 0
    sel = np.ones(lab.size, dtype=bool) if use_all else lab
    V = np.linalg.inv(rows.gram(mu * (1 - mu), sel) / sel.sum())
    comb = (mu[:, None] - yhat) @ lam_               # sum_j lam_j * judge score (scalar part)
    psi = np.where(lab, mu - np.nan_to_num(y) - comb, comb)   # battle score = psi_i z_i
    if cluster is None:
        meat = _centred_cross(rows, psi, psi, lab) / ((n - 1) * n)
        if use_all and N > 1:
            meat = meat + _centred_cross(rows, psi, psi, ~lab) / ((N - 1) * N)
    else:
        G = int(cluster.max()) + 1
        mean_l = rows.vec(psi, lab) / n
        w = np.where(lab, psi / n, psi / max(N, 1) if use_all else 0.0)
        M = sparse.coo_matrix((w, (cluster, rows.inv)), shape=(G, rows.R.shape[0])).tocsr()
        U = M @ rows.R                                   # cluster sums of the scaled scores
        # centre each part at its mean (the labelled and unlabelled scores separately)
        nl = np.bincount(cluster[lab], minlength=G) / n
        U -= np.outer(nl, mean_l)
        if use_all and N:
            mean_u = rows.vec(psi, ~lab) / N
            U -= np.outer(np.bincount(cluster[~lab], minlength=G) / N, mean_u)
        meat = _gram(U, U) * (G / (G - 1))
    cov = V @ meat @ V
    info = rows.gram(mu * (1 - mu), lab)                 # of the labelled battles
    return PPFit(theta=np.concatenate([[0.0], th]), lam=lam_, cov=pad(cov), info=info,
                 n_labelled=n, n_unlabelled=N)
