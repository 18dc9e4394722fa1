"""The analytic gradient of the profiled REML criterion (mixrank.engine.lmm.reml_grad, reml.deviance_and_gradient).

Reference: central finite differences of ``profiled_deviance`` itself,
Richardson-extrapolated (error O(h^4)) in the interior and one-sided
second-order differences with a small step on the boundary psi_r = 0.
"""

from __future__ import annotations

import numpy as np
import pytest

from mixrank.engine.lmm.reml import deviance_and_gradient, fit_reml, profiled_deviance
from mixrank.engine.structure import build_structure, pair_sums

TOL = {"interior": 1e-6, "boundary": 1e-4}  # relative to max(1, |gradient|)


def _case(kind: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    if kind == "grouped":        # 3 crossed terms, term-1 levels share counts -> G stored
        n_sub, n_q, n_p = 12, 6, 5
        sub = np.repeat(np.arange(n_sub), n_q * n_p)
        item = np.repeat(np.arange(n_sub * n_q), n_p)
        prompt = np.tile(np.arange(n_p), n_sub * n_q)
        keep = rng.random(sub.size) > 0.3
        codes, levels = [item[keep], sub[keep], prompt[keep]], [n_sub * n_q, n_sub, n_p]
    elif kind == "ungrouped":    # every term-1 level has its own count -> no G
        sizes = np.arange(3, 15)
        sub = np.repeat(np.arange(sizes.size), sizes)
        prompt = rng.integers(0, 4, sub.size)
        codes, levels = [sub, prompt], [sizes.size, 4]
    else:                        # one term
        sub = rng.integers(0, 9, 200)
        codes, levels = [sub], [9]
    st = build_structure(codes, levels, [f"t{i}" for i in range(len(codes))])
    u = [rng.normal(0, s, L) for s, L in zip((0.4, 0.3, 0.2), levels)]
    d = 0.1 + sum(ui[c] for ui, c in zip(u, codes)) + rng.normal(0, 1.0, codes[0].size)
    return st, pair_sums(st, d)


def _fd(st, ps, psi: np.ndarray) -> np.ndarray:
    def f(x):
        return profiled_deviance(st, ps, np.sqrt(np.maximum(x, 0.0)))

    def central(i: int, h: float) -> float:
        e = np.zeros(psi.size)
        e[i] = h
        return (f(psi + e) - f(psi - e)) / (2 * h)

    out = np.empty(psi.size)
    for i in range(psi.size):
        if psi[i] > 1e-3:
            out[i] = (4 * central(i, 1e-5) - central(i, 2e-5)) / 3
        else:
            e = np.zeros(psi.size)
            e[i] = h = 1e-7
            out[i] = (-3 * f(psi) + 4 * f(psi + e) - f(psi + 2 * e)) / (2 * h)
    return out


@pytest.mark.parametrize("kind", ["grouped", "ungrouped", "single"])
def test_gradient_matches_finite_differences(kind):
    st, ps = _case(kind)
    assert st.mode == "dense" and (st.G is None) == (kind == "ungrouped")
    R = len(st.levels)
    rng = np.random.default_rng(1)
    points = [np.full(R, 0.3), rng.uniform(0.05, 3.0, R)]
    for psi in points:
        value, g = deviance_and_gradient(st, ps, psi)
        assert value == pytest.approx(profiled_deviance(st, ps, np.sqrt(psi)), rel=1e-12)
        want = _fd(st, ps, psi)
        np.testing.assert_allclose(g, want, rtol=0, atol=TOL["interior"] * max(1.0, np.abs(want).max()))
    boundary = [np.r_[0.0, np.full(R - 1, 0.5)]] + ([np.r_[0.5, np.zeros(R - 1)]] if R > 1 else [])
    for psi in boundary:
        _, g = deviance_and_gradient(st, ps, psi)
        want = _fd(st, ps, psi)
        np.testing.assert_allclose(g, want, rtol=0, atol=TOL["boundary"] * max(1.0, np.abs(want).max()))


def test_gradient_vanishes_at_the_optimum():
    st, ps = _case("grouped", seed=3)
    fit = fit_reml(st, ps, ["t0", "t1", "t2"])
    psi = fit.theta_block ** 2
    _, g = deviance_and_gradient(st, ps, psi)
    free = psi > 0
    assert np.all(np.abs(g[free]) < 1e-4), g
    assert np.all(g[~free] >= -1e-6), g      # KKT: the criterion rises into the interior


def test_sparse_mode_returns_none():
    # block 2 larger than DENSE_Q2_LIMIT (3000 levels): the sparse-LU path, finite differences
    n = 8000
    rng = np.random.default_rng(2)
    codes = [rng.integers(0, 6000, n), rng.integers(0, 2000, n), rng.integers(0, 1500, n)]
    levels = [int(c.max()) + 1 for c in codes]
    st = build_structure(codes, levels, ["a", "b", "c"])
    assert st.mode == "sparse"
    assert deviance_and_gradient(st, pair_sums(st, rng.normal(size=n)), np.ones(3)) is None
