"""The item models of mixrank.subset.irt against peers: R glmer (the Rasch GLMM, nAGQ = 0),
statsmodels' logistic regression
(the Rasch model as a GLM with model and item dummies) and scipy's optimiser (a new
model's ability)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import optimize
from scipy.special import expit

from mixrank.subset.irt import fit_ability, fit_items
from tests.subset.sim import probabilities


def _small(seed=3, models=6, items=15):
    P, _ = probabilities(models, items, 2, seed)
    rng = np.random.default_rng(seed)
    Y = (rng.random(P.shape) < P).astype(float)
    keep = (Y.min(0) < 1) & (Y.max(0) > 0)          # no item that separates perfectly
    return Y[:, keep]


def test_rasch_joint_mle_equals_statsmodels_glm_with_dummies():
    Y = _small()
    M, N = Y.shape
    im = fit_items(Y, "rasch", penalty=0.0, intercept_prior=False, iterations=2000, tol=1e-14)
    long = pd.DataFrame({"y": Y.reshape(-1), "m": np.repeat(np.arange(M), N),
                         "i": np.tile(np.arange(N), M)})
    X = pd.get_dummies(long[["m", "i"]].astype(str), drop_first=True, dtype=float)
    X = sm.add_constant(X)
    glm = sm.GLM(long["y"], X, family=sm.families.Binomial()).fit(tol=1e-12, maxiter=200)
    ours = im.fitted().reshape(-1)
    np.testing.assert_allclose(ours, glm.fittedvalues.to_numpy(), atol=2e-5)


def test_fractional_scores_enter_as_proportions():
    Y = _small(seed=5)
    half = np.vstack([Y, Y])                       # each model twice ...
    im2 = fit_items(half, "rasch", penalty=0.0, intercept_prior=False, iterations=2000,
                    tol=1e-14)
    im1 = fit_items(Y, "rasch", penalty=0.0, intercept_prior=False, iterations=2000, tol=1e-14)
    np.testing.assert_allclose(im2.fitted()[: len(Y)], im1.fitted(), atol=2e-5)


def test_ability_is_the_map_of_the_penalised_likelihood():
    P, _ = probabilities(10, 200, 3, 1)
    Y = (np.random.default_rng(1).random(P.shape) < P).astype(float)
    for kind, dims in (("rasch", 1), ("2pl", 2)):
        im = fit_items(Y[:-1], kind, dims)
        items = np.arange(0, 200, 3)
        y = Y[-1, items]
        w = np.linspace(0.5, 1.5, len(items))
        theta, cov = fit_ability(im, y, items, weights=w)
        Pinv = np.linalg.inv(im.prior_cov)

        def nll(t, im=im, y=y, w=w, Pinv=Pinv, items=items):
            eta = im.b[items] + im.a[items] @ t
            d = t - im.prior_mean
            return -np.sum(w * (y * eta - np.logaddexp(0, eta))) + 0.5 * d @ Pinv @ d

        ref = optimize.minimize(nll, im.prior_mean, method="BFGS", options={"gtol": 1e-10})
        np.testing.assert_allclose(theta, ref.x, atol=1e-5)
        assert np.all(np.linalg.eigvalsh(cov) > 0)


def test_two_pl_fits_varying_discriminations_better_than_rasch():
    P, _ = probabilities(20, 400, 2, 7)
    Y = (np.random.default_rng(7).random(P.shape) < P).astype(float)

    def loglik(im):
        p = np.clip(im.fitted(), 1e-9, 1 - 1e-9)
        return np.sum(Y * np.log(p) + (1 - Y) * np.log(1 - p))

    rasch, twopl = fit_items(Y, "rasch"), fit_items(Y, "2pl", 1)
    assert loglik(twopl) > loglik(rasch)
    # both recover the true probabilities well
    for im in (rasch, twopl):
        assert np.corrcoef(im.fitted().ravel(), P.ravel())[0, 1] > 0.85
    assert expit(0) == 0.5


def test_rasch_glmm_matches_glmer():
    # tests/reference/subset_rasch.R: glmer(correct ~ 0 + model + (1 | question), binomial,
    # nAGQ = 0) on tests/reference/subset_cases/rasch.csv (10 models x 80 items)
    import json
    from pathlib import Path

    from mixrank.subset.data import layout, matrix

    ref_dir = Path(__file__).resolve().parents[1] / "reference"
    ref = json.loads((ref_dir / "subset_rasch.json").read_text())
    data = pd.read_csv(ref_dir / "subset_cases" / "rasch.csv")
    mat = matrix(data, layout("correct ~ model + (1|question)"))
    im = fit_items(mat.Y, "rasch")
    mu = im.b.mean()
    fixef = np.array([ref["fixef"]["model" + m] for m in mat.models])
    modes = np.array([ref["item_mode"][q] for q in mat.items["question"]])
    np.testing.assert_allclose(im.theta[:, 0] + mu, fixef, atol=1e-4)
    np.testing.assert_allclose(im.b - mu, modes, atol=1e-4)
    assert im.item_variance == pytest.approx(ref["item_variance"], rel=1e-3)
