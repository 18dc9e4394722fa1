"""Stage subset (inference/design): the item-response models fitted on a reference leaderboard.

Inputs: a models x items matrix of scores in [0, 1] (NaN where a model has
no answer), as built by :mod:`mixrank.subset.data`.  Outputs: an
:class:`ItemModel` (item intercepts ``b``, item loadings ``a``, reference
abilities ``theta``) and, for a new model's answers on some items, its
ability (:func:`fit_ability`) and its predicted success on every item.

The models, on the logit scale, for model ``m`` and item ``i``:

* ``"rasch"``: ``logit p_mi = theta_m + b_i`` (one ability, item easiness
  ``b_i``): the binomial GLMM ``correct ~ 0 + model + (1|item)``, the item
  effects' variance maximising the Laplace likelihood at the joint mode of
  model effects and item modes -- glmer's ``nAGQ = 0`` fit, equal to it to
  1e-4 (tests/subset/test_irt.py, tests/reference/subset_rasch.R);
* ``"2pl"``: ``logit p_mi = b_i + a_i' theta_m`` with ``dims`` abilities per
  model (``dims=1``: the two-parameter logistic model; ``dims>1``: a low-rank
  logistic item model), fitted by alternating penalised Newton steps.

Fits are penalised joint maximum likelihood (ridge ``penalty`` on loadings
and abilities, the normal prior on the intercepts), so an item every model
solves keeps a finite intercept.  Fractional scores (a cell mean over several
prompts or samples) enter as binomial proportions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy.special import expit

__all__ = ["ItemModel", "fit_items", "fit_ability", "ITEM_MODELS"]

#: The item models :func:`fit_items` fits.
ITEM_MODELS = ("rasch", "2pl")

_MAX_ETA = 30.0


@dataclass(frozen=True)
class ItemModel:
    """An item-response model fitted on a reference leaderboard.

    Attributes
    ----------
    kind : str
        ``"rasch"`` or ``"2pl"``.
    b : ndarray, shape (n_items,)
        Item intercepts (easiness on the logit scale).
    a : ndarray, shape (n_items, dims)
        Item loadings (all ones for the Rasch model).
    theta : ndarray, shape (n_models, dims)
        The reference models' abilities.
    prior_mean, prior_cov : ndarray
        The normal prior of a new model's ability: the reference abilities'
        mean and covariance (plus a small ridge).
    item_variance : float
        The variance of the item intercepts' normal prior (NaN without it).
    """

    kind: str
    b: np.ndarray
    a: np.ndarray
    theta: np.ndarray
    prior_mean: np.ndarray
    prior_cov: np.ndarray
    item_variance: float = float("nan")

    @property
    def dims(self) -> int:
        return int(self.a.shape[1])

    def eta(self, theta: np.ndarray) -> np.ndarray:
        """Linear predictor of abilities ``theta`` (shape (..., dims)) on every item."""
        return np.clip(self.b + np.asarray(theta) @ self.a.T, -_MAX_ETA, _MAX_ETA)

    def predict(self, theta: np.ndarray) -> np.ndarray:
        """Success probability of abilities ``theta`` on every item."""
        return expit(self.eta(theta))

    def fitted(self) -> np.ndarray:
        """The reference models' fitted probabilities, models x items."""
        return self.predict(self.theta)


def _newton_rows(X: np.ndarray, Y: np.ndarray, W: np.ndarray, offset: np.ndarray,
                 start: np.ndarray, pen: np.ndarray, prior: np.ndarray,
                 steps: int = 3) -> np.ndarray:
    """Penalised logistic regressions, one per row of ``Y``, sharing the design ``X``.

    Row r minimises ``-sum_j W_rj [Y_rj eta_rj - log(1 + e^eta_rj)] + (beta_r - prior)'
    diag(pen) (beta_r - prior) / 2`` with ``eta_rj = offset_rj + X_rj beta_r``; ``X`` has
    shape (rows, cols, p) or (cols, p) (shared), ``W`` 0 where ``Y`` is missing.
    """
    beta = start.copy()
    shared = X.ndim == 2
    if shared and X.shape[1] == 1:                  # one coefficient per row: scalar Newton
        x = X[:, 0]
        for _ in range(steps):
            mu = expit(np.clip(offset + beta[:, :1] * x, -_MAX_ETA, _MAX_ETA))
            g = (W * (Y - mu)) @ x - pen[0] * (beta[:, 0] - prior[0])
            h = (W * mu * (1 - mu)) @ (x * x) + pen[0]
            beta = beta + (g / h)[:, None]
        return beta
    for _ in range(steps):
        eta = offset + (np.einsum("cp,rp->rc", X, beta) if shared
                        else np.einsum("rcp,rp->rc", X, beta))
        mu = expit(np.clip(eta, -_MAX_ETA, _MAX_ETA))
        r = W * (Y - mu)
        v = W * mu * (1 - mu)
        if shared:
            g = r @ X
            H = np.einsum("rc,cp,cq->rpq", v, X, X)
        else:
            g = np.einsum("rc,rcp->rp", r, X)
            H = np.einsum("rc,rcp,rcq->rpq", v, X, X)
        g = g - pen * (beta - prior)
        H = H + np.eye(beta.shape[1]) * pen[..., None]
        beta = beta + np.linalg.solve(H, g[..., None])[..., 0]
    return beta


class _Alternating:
    """Alternating penalised Newton steps of an item model on one reference matrix."""

    def __init__(self, Yf: np.ndarray, W: np.ndarray, kind: str, d: int, penalty: float,
                 intercept_prior: bool) -> None:
        self.Yf, self.W, self.kind, self.d = Yf, W, kind, d
        self.penalty, self.prior = penalty, intercept_prior
        self.iterations = 0
        self.complete = bool(np.all(W > 0))

    def _w(self, x: np.ndarray) -> np.ndarray:
        return x if self.complete else self.W * x

    def _rasch_step(self, theta: np.ndarray, b: np.ndarray, mu_b: float,
                    pb: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One Newton step for the item intercepts, then one for the abilities (Rasch)."""
        Yf = self.Yf
        mu = expit(b + theta)
        g = np.sum(self._w(Yf - mu), axis=0) - pb * (b - mu_b)
        h = np.sum(self._w(mu * (1 - mu)), axis=0) + pb
        b = b + g / h
        mu = expit(b + theta)
        g = np.sum(self._w(Yf - mu), axis=1)
        h = np.sum(self._w(mu * (1 - mu)), axis=1)
        theta = theta + (g / np.maximum(h, 1e-12))[:, None]
        shift = float(theta.mean())
        return theta - shift, b + shift, mu

    def run(self, theta: np.ndarray, b: np.ndarray, a: np.ndarray, tau2: float,
            iterations: int, tol: float, *, update_tau2: bool
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Iterate to a joint mode at ``tau2`` (re-estimated by EM when ``update_tau2``).

        Stops when the largest parameter change (Rasch) or the relative change of the
        log-likelihood (2PL) falls below ``tol``.
        """
        Yf, W, d, penalty = self.Yf, self.W, self.d, self.penalty
        M, N = Yf.shape
        prev = np.inf
        last = (theta, b)
        for _ in range(iterations):
            mu_b = float(b.mean()) if self.prior else 0.0
            pb = 1.0 / tau2 if self.prior else 0.0
            if self.kind == "rasch":
                theta, b, mu = self._rasch_step(theta, b, mu_b, pb)
                step = max(float(np.max(np.abs(b - last[1]))),
                           float(np.max(np.abs(theta - last[0]))))
                last = (theta, b)
                if self.prior and update_tau2:
                    v = 1.0 / (np.sum(self._w(mu * (1 - mu)), axis=0) + 1.0 / tau2)
                    tau2 = max(float(np.mean((b - b.mean()) ** 2 + v)), 1e-4)
                self.iterations += 1
                if step < tol:
                    break
                continue
            else:
                Xi = np.hstack([np.ones((M, 1)), theta])
                ab = _newton_rows(Xi, Yf.T, W.T, np.zeros((N, M)), np.hstack([b[:, None], a]),
                                  np.r_[pb, np.full(d, penalty)], np.r_[mu_b, np.zeros(d)],
                                  steps=2)
                b, a = ab[:, 0], ab[:, 1:]
                theta = _newton_rows(a, Yf, W, np.broadcast_to(b, (M, N)), theta,
                                     np.full(d, penalty), np.zeros(d), steps=2)
            eta = np.clip(b + theta @ a.T, -_MAX_ETA, _MAX_ETA)
            loglik = float(np.sum(W * (Yf * eta - np.logaddexp(0, eta))))
            if self.prior and update_tau2:
                mu = expit(eta)
                v = 1.0 / (np.sum(W * mu * (1 - mu), axis=0) + 1.0 / tau2)
                tau2 = max(float(np.mean((b - b.mean()) ** 2 + v)), 1e-4)
            self.iterations += 1
            if abs(loglik - prev) < tol * (1 + abs(loglik)):
                break
            prev = loglik
        return theta, b, a, tau2

    def laplace_deviance(self, theta: np.ndarray, b: np.ndarray, a: np.ndarray,
                         tau2: float) -> float:
        """-2 log of the Laplace approximation at the joint mode (lme4's nAGQ = 0 deviance)."""
        eta = np.clip(b + theta @ a.T, -_MAX_ETA, _MAX_ETA)
        mu = expit(eta)
        loglik = float(np.sum(self.W * (self.Yf * eta - np.logaddexp(0, eta))))
        H = np.sum(self.W * mu * (1 - mu), axis=0)
        return (-2 * loglik + float(np.sum((b - b.mean()) ** 2)) / tau2
                + float(np.sum(np.log1p(tau2 * H))))


def fit_items(Y: np.ndarray, kind: str = "2pl", dims: int = 1, *, penalty: float = 1.0,
              iterations: int = 200, tol: float = 1e-6,
              intercept_prior: bool = True) -> ItemModel:
    """Fit an item model to the reference matrix ``Y`` (models x items, NaN = no answer).

    Parameters
    ----------
    Y : ndarray
        Scores in [0, 1], models x items.
    kind : {"rasch", "2pl"}
        The item model (module docstring).
    dims : int
        Abilities per model of the ``"2pl"`` model.
    penalty : float
        Ridge on the loadings and abilities (``"2pl"``); with
        ``intercept_prior=False`` and ``kind="rasch"`` set it to 0 for the
        plain joint maximum-likelihood fit.
    intercept_prior : bool
        Shrink the item intercepts towards their mean with a normal prior
        whose variance is estimated (the GLMM's random item effect): by the
        Laplace likelihood for the Rasch model (glmer's ``nAGQ = 0``), by its
        EM fixed point for the 2PL.
    iterations, tol : int, float
        Cap on, and convergence tolerance of, the alternating Newton steps.

    Returns
    -------
    ItemModel
    """
    M, N = Y.shape
    W = np.isfinite(Y).astype(float)
    Yf = np.where(W > 0, Y, 0.0)
    pbar_i = (Yf.sum(0) + 0.5) / (W.sum(0) + 1.0)
    pbar_m = (Yf.sum(1) + 0.5) / (W.sum(1) + 1.0)
    b = np.log(pbar_i / (1 - pbar_i))
    d = 1 if kind == "rasch" else int(dims)
    if kind == "rasch":
        theta = np.log(pbar_m / (1 - pbar_m))[:, None]
        theta = theta - theta.mean()
        a = np.ones((N, 1))
    else:
        Z = np.log((Yf * W + 0.5 * (1 - W) + 0.25) / (1.25 - (Yf * W + 0.5 * (1 - W))))
        Z = Z - Z.mean(0)
        U, s, Vt = np.linalg.svd(Z, full_matrices=False)
        theta = U[:, :d] * np.sqrt(M)
        a = (Vt[:d].T * s[:d]) / np.sqrt(M)
    tau2 = max(float(np.var(b)), 0.1)
    fit = _Alternating(Yf, W, kind, d, penalty, intercept_prior)
    theta, b, a, tau2 = fit.run(theta, b, a, tau2, iterations, tol, update_tau2=True)
    if kind == "rasch" and intercept_prior:
        # the EM fixed point of tau2 is the envelope approximation; maximise the Laplace
        # likelihood itself (glmer's nAGQ = 0: the joint mode of model effects and item
        # modes at each tau2, warm-started)
        state = {"x": (theta, b, a)}

        def deviance(log_tau2: float) -> float:
            t2 = float(np.exp(log_tau2))
            th, bb, aa, _ = fit.run(*state["x"], t2, iterations, 1e-7, update_tau2=False)
            state["x"] = (th, bb, aa)
            return fit.laplace_deviance(th, bb, aa, t2)

        lo = np.log(tau2)
        best = optimize.minimize_scalar(deviance, bounds=(lo - 1.0, lo + 1.0), method="bounded",
                                        options={"xatol": 5e-3})
        tau2 = float(np.exp(best.x))
        theta, b, a, _ = fit.run(*state["x"], tau2, iterations, 1e-9, update_tau2=False)
    mean = theta.mean(0)
    cov = np.atleast_2d(np.cov(theta.T)) if M > 1 else np.eye(d)
    cov = cov + np.eye(d) * (1e-3 + 0.05 * np.trace(cov) / d)
    return ItemModel(kind=kind, b=b, a=a, theta=theta, prior_mean=mean, prior_cov=cov,
                     item_variance=tau2 if intercept_prior else float("nan"))


def fit_ability(model: ItemModel, y: np.ndarray, items: np.ndarray,
                weights: np.ndarray | None = None, steps: int = 25) -> tuple[np.ndarray, np.ndarray]:
    """A new model's ability from its scores ``y`` on ``items`` (indices), with its covariance.

    The maximum a posteriori ability under the normal prior
    ``model.prior_mean, model.prior_cov`` (the reference models' spread);
    ``weights`` (e.g. inverse inclusion probabilities, rescaled to mean 1)
    weight the items' log-likelihood.  Returns ``(theta, cov)``: the ability
    (shape (dims,)) and the inverse of the penalised observed information.
    """
    A = model.a[items]
    b = model.b[items]
    w = np.ones(len(items)) if weights is None else np.asarray(weights, float)
    P = np.linalg.inv(model.prior_cov)
    def objective(t: np.ndarray) -> float:
        eta = np.clip(b + A @ t, -_MAX_ETA, _MAX_ETA)
        d = t - model.prior_mean
        return float(-np.sum(w * (y * eta - np.logaddexp(0, eta))) + 0.5 * d @ P @ d)

    theta = model.prior_mean.copy()
    current = objective(theta)
    H = P
    for _ in range(steps):
        eta = np.clip(b + A @ theta, -_MAX_ETA, _MAX_ETA)
        mu = expit(eta)
        g = A.T @ (w * (y - mu)) - P @ (theta - model.prior_mean)
        H = (A.T * (w * mu * (1 - mu))) @ A + P
        step = np.linalg.solve(H, g)
        scale = 1.0
        while scale > 1e-6:                      # step halving: the objective must fall
            trial = objective(theta + scale * step)
            if trial <= current + 1e-12:
                break
            scale /= 2
        theta, current = theta + scale * step, min(trial, current)
        if np.max(np.abs(scale * step)) < 1e-10:
            break
    eta = np.clip(b + A @ theta, -_MAX_ETA, _MAX_ETA)
    mu = expit(eta)
    H = (A.T * (w * mu * (1 - mu))) @ A + P
    return theta, np.linalg.inv(H)
