"""Robust unit-level tests for rank intervals.

References: exact enumeration of all 2^T sign patterns (sign-flip); the
Student t p-value for Gaussian unit means, which the bootstrap-t p-value
approaches (within its Monte Carlo error); seeded reproducibility.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import mixrank
from mixrank.errors import DesignError
from mixrank.inference.ranks import rank_intervals
from mixrank.inference.ranks.robust import bootstrap_t_tests, sign_flip_tests

UM = np.array([0.12, -0.03, 0.08, 0.05, 0.10, -0.01, 0.04])


def test_sign_flip_matches_exact_enumeration():
    t = UM.sum()
    sums = np.array([np.dot(s, UM) for s in itertools.product([-1, 1], repeat=UM.size)])
    want_g = np.mean(sums >= t - 1e-12)
    want_l = np.mean(sums <= t + 1e-12)
    est, se, df, s_jk, s_kj, p_jk, p_kj = sign_flip_tests(UM, B=1000, gen=np.random.default_rng(1))
    assert est == pytest.approx(UM.mean())
    assert p_jk == pytest.approx(want_g, rel=1e-12) and p_kj == pytest.approx(want_l, rel=1e-12)
    assert math.isnan(se) and math.isnan(df)
    # no evidence either way when every unit mean is 0
    assert sign_flip_tests(np.zeros(5), B=100, gen=np.random.default_rng(1))[5:] == (1.0, 1.0)


def test_bootstrap_t_approaches_student_t_for_gaussian_means():
    rng = np.random.default_rng(7)
    um = rng.normal(0.02, 0.05, 40)
    B = 20000
    est, se, df, t, mt, p_jk, p_kj = bootstrap_t_tests(um, B=B, gen=np.random.default_rng(3))
    assert t == pytest.approx(um.mean() / (um.std(ddof=1) / math.sqrt(40)))
    want = stats.t.sf(t, 39)
    mc = math.sqrt(want * (1 - want) / B)
    # bootstrap-t is second-order accurate; allow its O(1/T) bias plus 4 MC SE
    assert abs(p_jk - want) <= 0.25 * want + 4 * mc
    assert p_jk + p_kj == pytest.approx(1.0, abs=2 / B)
    # seeded: identical p-values for the same generator state
    again = bootstrap_t_tests(um, B=B, gen=np.random.default_rng(3))
    assert again[5] == p_jk
    assert bootstrap_t_tests(np.full(6, 0.3), B=200, gen=np.random.default_rng(0))[5:] == (1.0, 1.0)


@pytest.mark.parametrize("test", ["bootstrap", "permutation"])
def test_rank_intervals_with_robust_tests(test):
    data = mixrank.load_example()
    a = rank_intervals(data, unit="subject", test=test, rng=11)
    b = rank_intervals(data, unit="subject", test=test, rng=11)
    t = rank_intervals(data, unit="subject", test="t")
    assert a.equals(b)
    assert a.attrs["mixrank"]["test"] == test and a.attrs["mixrank"]["B"] == 2000
    assert list(a.columns) == list(t.columns)
    assert (a["rank_lower"] <= a["rank"]).all() and (a["rank"] <= a["rank_upper"]).all()
    assert a["model"].tolist() == t["model"].tolist()
    # clearly separated best and worst models (every unit mean of one sign): exact sign-flip
    # p = 2^-10 and bootstrap-t p = 1/(B+1) pass Holm, so their intervals are the point ranks
    sim = mixrank.simulate(models=4, subjects=10, questions=20, effects=[0, 1.5, 3, 4.5],
                           sd_model_subject=0.1, rng=3)
    sep = rank_intervals(sim, unit="subject", test=test, rng=1).set_index("model")
    for m in ("m01", "m04"):
        assert sep.loc[m, "rank_lower"] == sep.loc[m, "rank"] == sep.loc[m, "rank_upper"]


def test_rank_intervals_bad_options():
    with pytest.raises(DesignError, match="'bootstrap'"):
        rank_intervals(mixrank.load_example(), test="jackknife")
    with pytest.raises(DesignError, match="draws="):
        rank_intervals(mixrank.load_example(), test="bootstrap", draws=10)
