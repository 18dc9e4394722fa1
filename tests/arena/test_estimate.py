"""Bradley-Terry estimates and standard errors against statsmodels and scipy (references).

statsmodels ``Logit`` on the individual battles (one row per vote, design
``e_a - e_b`` without the first model, plus covariate differences) is the
reference for the BT MLE, the information SEs and the HC0 / cluster
sandwiches; ``GLM(Binomial)`` with fractional responses for half ties; a
direct ``scipy.optimize.minimize`` of the battle-level Davidson likelihood for
Davidson ties.
"""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import optimize

import mixrank
from mixrank.arena.data import encode_battles, patterns

from .conftest import simulate_battles

BETA = np.array([0.0, 0.4, -0.3, 0.9, 0.1, -0.8])


def _design(res) -> tuple[np.ndarray, np.ndarray]:
    bt = res.battles
    n, K = bt.n, len(bt.models)
    X = np.zeros((n, K))
    X[np.arange(n), bt.a] += 1
    X[np.arange(n), bt.b] -= 1
    return np.column_stack([X[:, 1:], bt.x]), bt.outcome


def _free(res) -> np.ndarray:
    K = len(res.models)
    return res.fit.theta[1:K + res.fit.n_features]


def test_bt_equals_statsmodels_logit_to_1e8():
    log = simulate_battles(4000, BETA, rng=1)
    res = mixrank.arena(log, ties="drop")
    X, y = _design(res)
    ref = sm.Logit(y, X).fit(method="newton", tol=1e-14, maxiter=100, disp=0)
    np.testing.assert_allclose(_free(res), ref.params, atol=1e-8, rtol=0)
    np.testing.assert_allclose(np.sqrt(np.diag(res.cov))[1:], ref.bse, rtol=1e-8)
    # contrasts: beta_a - beta_b from the reference covariance
    c = res.contrasts(adjust="none", scale="logit")
    row = c[(c.model_a == "m01") & (c.model_b == "m03")].iloc[0]
    g = np.zeros(X.shape[1])
    g[0], g[2] = 1, -1
    assert row["estimate"] == pytest.approx(g @ ref.params, abs=1e-8)
    assert row["std_error"] == pytest.approx(np.sqrt(g @ ref.cov_params() @ g), rel=1e-8)


def test_half_ties_equal_binomial_glm_with_fractional_wins():
    log = simulate_battles(3000, BETA, rng=2, tie_rate=0.2)
    res = mixrank.arena(log, ties="half")
    X, y = _design(res)
    ref = sm.GLM(y, X, family=sm.families.Binomial()).fit(tol=1e-14, maxiter=100)
    np.testing.assert_allclose(_free(res), ref.params, atol=1e-8, rtol=0)
    np.testing.assert_allclose(np.sqrt(np.diag(res.cov))[1:], ref.bse, rtol=1e-7)


def test_style_control_equals_logistic_regression_with_covariates():
    log = simulate_battles(4000, BETA, rng=3, gamma=1.2)
    res = mixrank.arena(log, "winner ~ style(len)", ties="drop")
    X, y = _design(res)
    lens = log[["len_a", "len_b"]].to_numpy()
    np.testing.assert_allclose(X[:, -1], (lens[:, 0] - lens[:, 1]) / lens.sum(axis=1))
    ref = sm.Logit(y, X).fit(method="newton", tol=1e-14, maxiter=100, disp=0)
    np.testing.assert_allclose(_free(res), ref.params, atol=1e-8, rtol=0)
    np.testing.assert_allclose(np.sqrt(np.diag(res.cov))[1:], ref.bse, rtol=1e-7)
    cov = res.covariates()
    assert cov["term"].tolist() == ["len"]
    assert cov["estimate"].iloc[0] == pytest.approx(ref.params[-1], abs=1e-8)
    # covariates= is the same model; a bare name is the plain difference
    same = mixrank.arena(log, covariates=["len"], ties="drop")
    np.testing.assert_allclose(same.fit.theta, res.fit.theta, atol=1e-12)
    plain = mixrank.arena(log, "winner ~ len", ties="drop")
    Xp, _ = _design(plain)
    np.testing.assert_allclose(Xp[:, -1], lens[:, 0] - lens[:, 1])


def test_sandwich_equals_statsmodels_hc0_and_cluster():
    log = simulate_battles(3000, BETA, rng=4, n_prompts=200, prompt_sd=0.5)
    res = mixrank.arena(log, ties="drop", se="sandwich", cluster=False)
    X, y = _design(res)
    hc0 = sm.Logit(y, X).fit(method="newton", tol=1e-14, disp=0, cov_type="HC0")
    np.testing.assert_allclose(np.sqrt(np.diag(res.cov))[1:], hc0.bse, rtol=1e-7)
    # Davidson ties keep the CR1 sandwich G/(G-1) sum u_g u_g' (statsmodels' cluster meat)
    cl = mixrank.arena(log, ties="drop", cluster="prompt")
    assert cl.se == "sandwich" and "CR2" in cl.model_scores().attrs["mixrank"]["df_method"]


def _davidson_negll(theta, a, b, o, K):
    beta = np.concatenate([[0.0], theta[:K - 1]])
    d = beta[a] - beta[b]
    lz = np.logaddexp(np.logaddexp(d / 2, -d / 2), theta[-1])
    ll = np.where(o == 1, d / 2, np.where(o == 0, -d / 2, theta[-1])) - lz
    return -ll.sum()


def test_davidson_equals_direct_scipy_maximisation():
    log = simulate_battles(3000, BETA, rng=5, nu=0.8)
    res = mixrank.arena(log, ties="davidson")
    bt = res.battles
    K = len(bt.models)
    # derivative-free (Powell): independent of our gradient and Hessian
    opt = optimize.minimize(_davidson_negll, np.zeros(K), args=(bt.a, bt.b, bt.outcome, K),
                            method="Powell", options=dict(xtol=1e-12, ftol=1e-15))
    np.testing.assert_allclose(res.fit.theta[1:], opt.x, atol=1e-6)
    assert -opt.fun == pytest.approx(res.fit.loglik, abs=1e-8)
    assert res.fit.loglik >= -opt.fun - 1e-9           # Newton's optimum is no worse
    # the information equals the numerical Hessian of the negative log-likelihood
    f = lambda t: _davidson_negll(t, bt.a, bt.b, bt.outcome, K)  # noqa: E731
    h = 1e-4
    th = res.fit.theta[1:]
    H = np.empty((th.size, th.size))
    for i in range(th.size):
        e = np.zeros(th.size)
        e[i] = h
        H[:, i] = (optimize.approx_fprime(th + e, f, 1e-6)
                   - optimize.approx_fprime(th - e, f, 1e-6)) / (2 * h)
    np.testing.assert_allclose(res.fit.info, (H + H.T) / 2, rtol=2e-3, atol=1e-2)
    cov = res.covariates()
    assert cov["term"].tolist() == ["log_nu"]
    assert np.exp(cov["estimate"].iloc[0]) == pytest.approx(0.8, abs=0.15)


def test_counts_are_sufficient_and_invariant_to_row_order_and_sides():
    log = simulate_battles(2000, BETA, rng=6, tie_rate=0.1)
    res = mixrank.arena(log)
    shuffled = log.sample(frac=1.0, random_state=3).reset_index(drop=True)
    swapped = shuffled.rename(columns={"model_a": "model_b", "model_b": "model_a"})
    swapped["winner"] = swapped["winner"].map({"model_a": "model_b", "model_b": "model_a",
                                               "tie": "tie"})
    for other in (mixrank.arena(shuffled), mixrank.arena(swapped)):
        np.testing.assert_allclose(other.fit.theta, res.fit.theta, atol=1e-10)
    pt = patterns(encode_battles(log))
    assert pt.a.size <= 15 and pt.n.sum() == len(log)


def test_bootstrap_agrees_with_information_within_mc_error():
    log = simulate_battles(20000, BETA, rng=7)
    B = 1000
    boot = mixrank.arena(log, se="bootstrap", draws=B, rng=11)
    info = mixrank.arena(log)
    sb = boot.contrasts(adjust="none")["std_error"].to_numpy()
    si = info.contrasts(adjust="none")["std_error"].to_numpy()
    # SD from B draws has relative MC error ~ 1/sqrt(2B) = 2.2%; 4 MC SEs
    assert np.max(np.abs(sb / si - 1)) < 4 / np.sqrt(2 * B)
    np.testing.assert_allclose(boot.fit.theta, info.fit.theta)
    ci_b = boot.contrasts(adjust="none")[["ci_lower", "ci_upper"]].to_numpy()
    ci_i = info.contrasts(adjust="none")[["ci_lower", "ci_upper"]].to_numpy()
    assert np.max(np.abs(ci_b - ci_i) / si[:, None]) < 0.25
