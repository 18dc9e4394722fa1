"""``GlmmResult.pass_at_k``: the model-based pass@k against adaptive quadrature of the same
integral (scipy.integrate.quad) and a seeded simulation from the model (docs/pass_at_k.md §5)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from scipy.special import expit

import mixrank

BETA, TAU, ITEMS, N = np.array([-0.5, 0.4, 1.2]), 1.3, 1500, 10


def truth(beta: float, tau: float, k: int) -> float:
    f = lambda z: (1 - (1 - expit(beta + tau * z)) ** k) * stats.norm.pdf(z)  # noqa: E731
    return integrate.quad(f, -12, 12, epsabs=1e-13, epsrel=1e-12)[0]


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(31)
    b = rng.normal(0, TAU, ITEMS)
    rows = [(f"m{j}", f"q{i}", int(rng.binomial(N, expit(BETA[j] + b[i]))), N)
            for i in range(ITEMS) for j in range(len(BETA))]
    df = pd.DataFrame(rows, columns=["model", "question", "c", "n"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        res = mixrank.fit("cbind(c, n - c) ~ model + (1|question)", df, family="binomial",
                          nagq=0)
    return df, res


@pytest.mark.parametrize("k", [1, 5])
def test_equals_quadrature_at_the_fitted_parameters(fitted, k):
    _, res = fitted
    tab = res.pass_at_k(k)
    tau = float(np.sqrt(np.sum(res.fit.theta ** 2)))
    want = [truth(b, tau, k) for b in res.fit.beta]
    np.testing.assert_allclose(tab.estimate, want, rtol=1e-9)
    assert (tab.ci_lower < tab.estimate).all() and (tab.estimate < tab.ci_upper).all()


@pytest.mark.parametrize("k", [1, 5])
def test_recovers_the_true_pass_at_k_and_agrees_with_the_unbiased_estimator(fitted, k):
    df, res = fitted
    tab = res.pass_at_k(k).set_index("model")
    emp = mixrank.pass_at_k(df, k, correct="c", trials="n").groupby("model")[f"pass_at_{k}"]
    for j, m in enumerate(tab.index):
        true = truth(BETA[j], TAU, k)
        # the SE ignores the variance estimate's uncertainty: 4 SE + 0.01 for tau
        assert abs(tab.loc[m, "estimate"] - true) <= 4 * tab.loc[m, "std_error"] + 0.01
        assert abs(tab.loc[m, "estimate"] - emp.mean()[m]) <= 0.02


def test_refusals(fitted):
    _, res = fitted
    with pytest.raises(mixrank.DataError, match="positive integer"):
        res.pass_at_k(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        by = mixrank.fit("cbind(k, n - k) ~ model * difficulty + (1|subject:question)",
                         pd.read_csv("tests/reference/glmm_by_cases/levels3.csv.gz"),
                         family="binomial", nagq=0)
    with pytest.raises(mixrank.DesignError, match="model \\* x fit is not available"):
        by.pass_at_k(2)
