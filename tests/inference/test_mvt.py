"""Multivariate-t null draws of contrasts with small df (mixrank/inference/mvt.py).

References: scipy's t distribution (exact margins), the closed form of the maximum of
independent t's (correlation I) and of one t (correlation of ones).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from mixrank.inference.mvt import DF_SHARED, normal_scores, observed_scores


def _draws(R: np.ndarray, df: np.ndarray, B: int, seed: int) -> np.ndarray:
    gen = np.random.default_rng(seed)
    w, U = np.linalg.eigh(R)
    root = U * np.sqrt(np.clip(w, 0, None))
    z0 = gen.standard_normal((B, len(R))) @ root.T
    return normal_scores(z0, df, lambda: gen.standard_normal((B, len(R))) @ root.T, gen)


def test_margins_are_exactly_t_with_fractional_df():
    R = np.array([[1, .5, .5], [.5, 1, .5], [.5, .5, 1]])
    df = np.array([2.0, 3.4, 7.7])
    z = _draws(R, df, 20000, 1)
    for h in range(3):
        t = stats.t.ppf(stats.norm.cdf(z[:, h]), df[h])
        assert stats.kstest(t, stats.t(df[h]).cdf).pvalue > 0.001


def test_independent_pairs_give_the_maximum_of_independent_t():
    P, nu, B = 6, 3.0, 40000
    z = _draws(np.eye(P), np.full(P, nu), B, 2)
    c = 4.0
    want = (1 - 2 * stats.t.sf(c, nu)) ** P          # P(max |T_h| <= c), independent t's
    got = np.mean(np.max(np.abs(z), axis=1) <= -stats.norm.ppf(stats.t.sf(c, nu)))
    assert abs(got - want) < 4 * np.sqrt(want * (1 - want) / B)


def test_identical_pairs_give_one_t_and_large_df_keeps_the_copula():
    z = _draws(np.ones((3, 3)), np.full(3, 3.0), 2000, 3)   # whole df: no private piece
    assert np.allclose(z[:, 0], z[:, 1], atol=1e-6) and np.allclose(z[:, 1], z[:, 2], atol=1e-6)
    z0 = np.random.default_rng(4).standard_normal((10, 2))
    out = normal_scores(z0, np.array([DF_SHARED, np.inf]), lambda: 1 / 0, np.random.default_rng(5))
    assert out is z0


def test_observed_scores_are_accurate_in_the_tails():
    t = np.array([-40.0, -2.0, 0.0, 2.0, 40.0])
    z = observed_scores(t, np.full(5, 3.0))
    assert np.allclose(z, -observed_scores(-t, np.full(5, 3.0)))
    assert np.allclose(stats.norm.sf(z[3]), stats.t.sf(2.0, 3.0), rtol=1e-10)
    assert np.allclose(z[4], stats.norm.isf(stats.t.sf(40.0, 3.0)), rtol=1e-10)
