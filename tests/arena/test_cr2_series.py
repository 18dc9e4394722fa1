"""The arena's CR2 without df (many clusters): the series path against the definition.

:func:`mixrank.arena.clusters.cr2` without combinations adjusts each cluster's scores by
``(I - H_gg)^-1/2``: single battles in closed form, clusters with a small hat-block trace by
a truncated series whose remainder is bounded below double precision, the others by an
eigen-decomposition.  The reference here is the definition computed independently, cluster
by cluster: ``H_gg = X~_g B X~_g'`` formed densely and scipy's matrix square root of
``I - H_gg`` inverted (as clubSandwich's ``vcovCR(type = "CR2")`` for a GLM's working
regression; tests/arena/test_clusters.py checks the same definition with N x N matrices on a
small log).  Designs: clusters of 1, 2, many battles, unbalanced sizes, a rarely seen model
(high-leverage clusters, which take the eigen-decomposition), covariate columns.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg, sparse

from mixrank.arena.clusters import MAX_SERIES_TERMS, SERIES_TOL, cr2, series_terms


def _reference(Z, mu, e, cl):
    w = np.clip(mu * (1 - mu), 1e-12, None)
    sw = np.sqrt(w)
    Xt = Z * sw[:, None]
    B = np.linalg.inv(Xt.T @ Xt)
    meat = np.zeros((Z.shape[1],) * 2)
    order = np.argsort(cl, kind="stable")
    bounds = np.flatnonzero(np.r_[True, np.diff(cl[order]) != 0, True])
    for s, t in zip(bounds[:-1], bounds[1:]):
        i = order[s:t]
        H = Xt[i] @ B @ Xt[i].T
        A = np.real(linalg.inv(linalg.sqrtm(np.eye(i.size) - H)))
        u = Xt[i].T @ A @ (e[i] / sw[i])
        meat += np.outer(u, u)
    return B @ meat @ B


def _design(seed: int, n: int, K: int, sizes: str, covariates: int, rare: bool):
    """BT rows ``e_a - e_b`` (model 0 dropped) plus covariates, fitted-looking ``mu``,
    residuals of 0/1/tie outcomes, and cluster codes of the requested size pattern."""
    g = np.random.default_rng(seed)
    p = np.full(K, 1.0)
    if rare:
        p[-1] = 0.002                                    # a model seen in a few battles
    p /= p.sum()
    a = g.choice(K, n, p=p)
    b = (a + g.integers(1, K, n)) % K
    Z = np.zeros((n, K + covariates))
    Z[np.arange(n), a] = 1.0
    Z[np.arange(n), b] = -1.0
    Z[:, K:] = g.normal(0, 1, (n, covariates))
    Z = Z[:, 1:]
    eta = Z @ g.normal(0, 0.5, Z.shape[1])
    mu = 1 / (1 + np.exp(-eta))
    y = np.where(g.random(n) < 0.1, 0.5, (g.random(n) < mu).astype(float))
    if sizes == "uniform":                               # ~Poisson(25) battles a cluster
        cl = g.integers(0, n // 25, n)
    elif sizes == "mixed":                               # 1, 2, a few, many (up to 300)
        m = np.concatenate([np.ones(300), np.full(200, 2), g.integers(3, 40, 300),
                            [150, 300]]).astype(int)
        m = np.tile(m, n // int(m.sum()) + 1)
        cl = np.repeat(np.arange(m.size), m)[:n]
        cl = cl[g.permutation(n)]
    else:                                                # pairs only
        cl = np.arange(n) // 2
    cl = np.unique(cl, return_inverse=True)[1]
    return Z, mu, y - mu, cl


@pytest.mark.parametrize("seed,n,K,sizes,covariates,rare", [
    (1, 20000, 6, "uniform", 0, False),
    (2, 20000, 6, "mixed", 0, True),
    (3, 12000, 5, "mixed", 2, False),
    (4, 6000, 4, "pairs", 1, True),
    (5, 3000, 8, "mixed", 0, False),
])
def test_cr2_without_df_equals_the_per_cluster_definition(seed, n, K, sizes, covariates, rare):
    Z, mu, e, cl = _design(seed, n, K, sizes, covariates, rare)
    cov, df = cr2(Z, mu, e, cl)
    assert df is None
    cov_sparse, _ = cr2(sparse.csr_matrix(Z), mu, e, cl)     # the design as arena passes it
    np.testing.assert_array_equal(cov_sparse, cov)
    ref = _reference(Z, mu, e, cl)
    np.testing.assert_allclose(cov, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    se, se_ref = np.sqrt(np.diag(cov)), np.sqrt(np.diag(ref))
    np.testing.assert_allclose(se, se_ref, rtol=1e-10)


def test_the_designs_exercise_both_paths():
    """Not vacuous: the series takes most multi-battle clusters of the large designs, the
    eigen-decomposition the high-leverage ones (the rare model, the 300-battle cluster)."""
    seen = set()
    for seed, n, K, sizes, cov, rare in [(1, 20000, 6, "uniform", 0, False),
                                         (2, 20000, 6, "mixed", 0, True)]:
        Z, mu, e, cl = _design(seed, n, K, sizes, cov, rare)
        w = np.clip(mu * (1 - mu), 1e-12, None)
        Xt = Z * np.sqrt(w)[:, None]
        h = np.sum((Xt @ np.linalg.inv(Xt.T @ Xt)) * Xt, axis=1)   # leverages
        G = int(cl.max()) + 1
        need = series_terms(h, cl, G)
        multi = np.bincount(cl) > 1
        seen |= {"series" for _ in range(1) if np.mean(need[multi] <= MAX_SERIES_TERMS) > 0.5}
        seen |= {"exact" for _ in range(1) if np.any(need[multi] > MAX_SERIES_TERMS)}
        seen |= {"several terms" for _ in range(1)
                 if np.any((need[multi] >= 2) & (need[multi] <= MAX_SERIES_TERMS))}
    assert seen == {"series", "exact", "several terms"}


def test_series_terms_bound_the_remainder():
    """The remainder bound: at the terms chosen, the series of a scalar ``(1 - rho)^-1/2``
    (the worst case, ``H_gg`` with one eigenvalue ``rho``) is within SERIES_TOL, and one term
    fewer is not (the fewest terms)."""
    rho = np.array([0.0, 1e-6, 1e-3, 5e-3, 0.01, 0.019, 0.5, 1.0, 3.0])
    need = series_terms(rho, np.arange(rho.size), rho.size)
    for r, k in zip(rho, need):
        if k > MAX_SERIES_TERMS:
            assert r > 0.01
            continue
        c = np.cumprod(np.r_[1.0, [(2 * j - 1) / (2 * j) for j in range(1, k + 1)]])
        exact = (1 - r) ** -0.5
        assert abs(float(np.sum(c * r ** np.arange(k + 1))) - exact) <= SERIES_TOL + 4e-16
        if k > 0:
            assert abs(float(np.sum(c[:-1] * r ** np.arange(k))) - exact) > SERIES_TOL / 10


@pytest.mark.parametrize("dense", [True, False])
def test_clusters_per_pair_counts_the_clusters_of_either_model(dense, monkeypatch):
    """Against counting sets of clusters pair by pair, with the dense table and the sparse
    product (a model in no cluster, clusters touching one model twice)."""
    import importlib

    clusters = importlib.import_module("mixrank.arena.clusters")
    monkeypatch.setattr(clusters, "_DENSE_TABLE", 10 ** 9 if dense else 0)
    g = np.random.default_rng(3)
    K, n = 7, 400
    a = g.integers(0, K - 1, n)                          # model K-1 never plays
    b = (a + g.integers(1, K - 1, n)) % (K - 1)
    cl = g.integers(0, 90, n)
    got = clusters.clusters_per_pair(a, b, cl, K)
    for i in range(K):
        for j in range(K):
            want = len({c for c, x, y in zip(cl, a, b) if {x, y} & {i, j}})
            assert got[i, j] == want


def test_battle_rows_are_the_design_by_its_non_zeros():
    """:func:`battle_rows` (what the arena passes with many clusters) against the dense
    design, with a position covariate: the same products and the same CR2."""
    import warnings

    import mixrank
    from mixrank.arena.clusters import battle_rows
    from mixrank.arena.ppi import design

    from .conftest import simulate_battles

    log = simulate_battles(3000, np.array([0.0, 0.4, -0.3, 0.6]), rng=4, n_prompts=2500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bt = mixrank.arena(log, position=True).battles
    Z, R = design(bt), battle_rows(bt)
    assert R.shape == Z.shape and bt.x.shape[1] == 1
    theta = np.random.default_rng(0).normal(size=Z.shape[1])
    np.testing.assert_allclose(R @ theta, Z @ theta, rtol=0, atol=1e-15)
    mu = 1 / (1 + np.exp(-(Z @ theta)))
    e = np.random.default_rng(1).random(Z.shape[0]) - mu
    cl = np.unique(bt.cluster, return_inverse=True)[1]
    got, want = cr2(R, mu, e, cl)[0], cr2(Z, mu, e, cl)[0]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13 * np.abs(want).max())


def test_pair_bread_equals_the_non_zeros_sums():
    """Without covariates :func:`battle_rows` carries each battle's pair and :func:`cr2` takes
    the bread and leverages from per-pair weight sums: the same CR2 as from the dense design
    (the non-zeros' sums), on a log with rare pairs, single-battle clusters and big ones."""
    import warnings

    import mixrank
    from mixrank.arena.clusters import battle_rows
    from mixrank.arena.ppi import design

    from .conftest import simulate_battles

    log = simulate_battles(4000, np.array([0.0, 0.4, -0.3, 0.6, 1.1]), rng=6, n_prompts=900)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bt = mixrank.arena(log).battles
    Z, R = design(bt), battle_rows(bt)
    assert R.pair is not None and bt.x.shape[1] == 0
    theta = np.random.default_rng(2).normal(size=Z.shape[1])
    np.testing.assert_allclose(R @ theta, Z @ theta, rtol=0, atol=1e-15)
    mu = 1 / (1 + np.exp(-(Z @ theta)))
    e = np.random.default_rng(3).random(Z.shape[0]) - mu
    cl = np.unique(bt.cluster, return_inverse=True)[1]
    cl[:40] = cl.max() + 1 + np.arange(40)           # single-battle clusters
    got, want = cr2(R, mu, e, cl)[0], cr2(Z, mu, e, cl)[0]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13 * np.abs(want).max())


def test_integer_cluster_codes_are_the_factorized_partition():
    """An integer cluster column takes a counting pass: the same partition of the battles as
    ``pd.factorize`` (codes 0..G-1, each used), for negative, sparse and other values."""
    import pandas as pd

    from mixrank.arena.data import _cluster_codes

    g = np.random.default_rng(7)
    for col in (pd.Series(g.integers(-50, 50, 500)), pd.Series(g.integers(0, 10**9, 300)),
                pd.Series(g.integers(0, 40, 200).astype(np.uint16)), pd.Series(["x", "y", "x"])):
        got, want = _cluster_codes(col), pd.factorize(col)[0]
        assert set(np.bincount(got)) == set(np.bincount(want)) and got.max() == want.max()
        assert len(set(zip(got, want))) == want.max() + 1       # one-to-one
