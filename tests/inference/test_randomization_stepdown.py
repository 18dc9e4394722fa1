"""The scaled step-down, its per-step critical values and levels (the verdicts' multiplicity
paradigm) and the per-pair intervals from inverting the unit sign-flip test.

Reference: brute force -- every sign flip applied to the raw cell differences of each
unit, the statistic (|w'd| over the within-unit SE recomputed from the flipped cells) and
the one-sided tests of ``d - delta0`` counted directly; nothing is read from the code under
test but the answers compared.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mixrank
from mixrank.design.resolution import resolution_table
from mixrank.engine.lmm.unit_se import pair_unit_data
from mixrank.inference.randomization import flip_intervals, scaled_stepdown
from tests.engine.test_unit_se import _dense_cr2
from tests.inference.test_randomization import _brute_scaled
from tests.inference.test_randomization import _data as _rdata


def _data(T=7, K=4, seed=5, shift=0.6):
    """The randomization tests' generator: model x subject sd 0.4, m0 ``shift`` and m1
    half of it above the rest."""
    return _rdata(T=T, K=K, seed=seed, sd_unit=0.4, gaps=(shift, 0.5 * shift))


def _fit(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit("correct ~ model + (1|subject)", _data(**kw), estimand="cells")


def _estimates(fit):
    return np.array([p.estimate for p in fit.pairs])


def _cr2_se(fit):
    """Each pair's CR2 SE by the dense-matrix definition (tests/engine/test_unit_se.py)."""
    out = []
    for p in fit.pairs:
        d, codes = pair_unit_data(fit.frame, p, "subject")
        out.append(np.sqrt(_dense_cr2(d, codes, np.full(d.size, 1.0 / d.size), 0.0)[0]))
    return np.array(out)


@pytest.mark.parametrize("level", [0.95, 0.8, 0.6])
def test_critical_values_and_levels_equal_brute_force(level):
    fit = _fit()
    S = _brute_scaled(fit)                      # all 2^T flips x pairs, row 0 the identity
    obs = S[0]
    order = np.argsort(-obs, kind="stable")
    N = len(S)
    k = int(np.floor((1 - level) * N + 1e-9))
    crit = np.array([np.sort(S[:, order[j:]].max(axis=1))[::-1][k] for j in range(len(obs))])
    r = scaled_stepdown(fit, B=1000, rng=None, level=level)
    np.testing.assert_allclose(r["statistic"], obs, rtol=1e-9)
    np.testing.assert_array_equal(r["step"][order], np.arange(1, len(obs) + 1))
    np.testing.assert_allclose(r["critical_value"][order], crit, rtol=1e-9)
    se = _cr2_se(fit)
    z = crit * np.abs(_estimates(fit))[order] / obs[order] / se[order]   # c_j s_j / SE_j
    np.testing.assert_allclose(r["alpha_step"][order], 2 * stats.norm.sf(z), rtol=1e-7)
    # rejected by the step-down (p_adjusted <= 1 - level) iff every step so far passes
    passed = np.cumprod(obs[order] > crit).astype(bool)
    np.testing.assert_array_equal(r["p_adjusted"][order] <= 1 - level + 1e-12, passed)


def test_verdicts_take_the_stepdown_levels_on_the_cr2_path():
    fit = _fit(T=9, K=5, seed=2)
    tab = fit.resolution(columns="all", pairs="all")
    meta = tab.attrs["mixrank"]
    assert meta["multiplicity"] == "stepdown" and "step-down" in meta["multiplicity_order"]
    assert meta["contrasts_adjust"] == "stepdown"
    # brute force: the steps in q order (as Holm's), at step j the 95% quantile c_j of the
    # max over the flips of the pairs at steps >= j; the level 2 Phi(-c_j s_j / SE_j)
    S = _brute_scaled(fit)
    key = {frozenset((p.model_a, p.model_b)): i for i, p in enumerate(fit.pairs)}
    rows = np.array([key[frozenset(x)] for x in zip(tab["model_a"], tab["model_b"])])
    steps = np.argsort(-tab["q"].to_numpy(), kind="stable")      # table rows in step order
    cols = rows[steps]
    k = int(np.floor(0.05 * len(S) + 1e-9))
    crit = np.array([np.sort(S[:, cols[j:]].max(axis=1))[::-1][k] for j in range(len(cols))])
    z = crit * np.abs(_estimates(fit))[cols] / S[0][cols] / _cr2_se(fit)[cols]
    want = np.empty(len(tab))
    want[steps] = 2 * stats.norm.sf(z)
    np.testing.assert_allclose(tab["alpha_multiplicity"], want, rtol=1e-7)
    # Holm's step rule in that order: resolved iff every step so far has q' >= 1
    q = tab["q_multiplicity"].to_numpy()
    np.testing.assert_array_equal(tab["resolved_multiplicity"].to_numpy()[steps],
                                  np.cumprod(q[steps] >= 1).astype(bool))
    holm = fit.resolution(columns="all", pairs="all", adjust="holm")
    assert holm.attrs["mixrank"]["multiplicity"] == "holm"
    np.testing.assert_allclose(tab["q"], holm["q"])          # the other paradigms unchanged
    # later steps spend more (fewer pairs in play), as Holm's alpha / (m - j + 1)
    assert np.all(np.diff(crit) <= 1e-12)


def test_verdicts_stay_holm_off_the_cr2_path():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sat = mixrank.fit("correct ~ model + (1|subject)", _data(), df="satterthwaite")
    assert sat.resolution(columns="all").attrs["mixrank"]["multiplicity"] == "holm"
    with pytest.raises(mixrank.DesignError, match="stepdown.*df='cr2'"):
        sat.resolution(columns="all", adjust="stepdown")
    with pytest.raises(mixrank.OptionError, match="stepdown"):
        resolution_table(pd.DataFrame(dict(
            model_a=["a"], model_b=["b"], estimate=[0.1], n=[10], sigma_d=[1.0])),
            adjust="stepdown", cluster=False)


def _one_sided(fit, j, delta0):
    """(P(S^eps <= S), P(S^eps >= S)) over all flips of d - delta0 per unit, by enumeration."""
    d, codes = pair_unit_data(fit.frame, fit.pairs[j], "subject")
    x = (d - delta0) / d.size
    T = codes.max() + 1
    tot = np.bincount(codes, weights=x, minlength=T)
    flips = np.array(list(itertools.product([1.0, -1.0], repeat=T)))
    Sf, S = flips @ tot, tot.sum()
    tol = 1e-12 * max(1.0, np.abs(tot).sum())
    return np.mean(Sf <= S + tol), np.mean(Sf >= S - tol)


def test_flip_intervals_invert_the_sign_flip_test():
    fit = _fit(T=8, K=3, seed=9)
    r = flip_intervals(fit, level=0.9)
    assert r["flips"] == 2 ** 8
    for j in range(len(fit.pairs)):
        lo, hi = r["ci_lower"][j], r["ci_upper"][j]
        est = fit.pairs[j].estimate
        assert lo < est < hi
        eps = 1e-7 * (hi - lo)
        for inside in (lo + eps, hi - eps, est):
            assert min(_one_sided(fit, j, inside)) > 0.05
        for outside in (lo - eps, hi + eps):
            assert min(_one_sided(fit, j, outside)) <= 0.05


def test_flip_intervals_are_infinite_with_too_few_units():
    fit = _fit(T=5, K=3, seed=1)
    r = flip_intervals(fit, level=0.95)        # 32 flips: no tail of 2.5% beyond the identity
    assert np.all(np.isinf(r["ci_lower"])) and np.all(np.isinf(r["ci_upper"]))


def test_contrasts_ci_randomization_are_the_flip_intervals():
    fit = _fit(T=8, K=3, seed=9)
    t = fit.contrasts(ci="t")
    c = fit.contrasts(ci="randomization")
    pd.testing.assert_frame_equal(fit.contrasts(), c)      # the default on the step-down path
    r = flip_intervals(fit, level=fit.level)
    np.testing.assert_allclose(c["ci_lower"], r["ci_lower"])
    np.testing.assert_allclose(c["ci_upper"], r["ci_upper"])
    flip_cols = ["ci_lower", "ci_upper", "p_value", "p_greater", "p_adjusted"]
    pd.testing.assert_frame_equal(c.drop(columns=flip_cols), t.drop(columns=flip_cols))
    # the same step-down; beside t p-values a rejection also needs the pair's own t test
    np.testing.assert_allclose(t["p_adjusted"], np.maximum(c["p_adjusted"], t["p_value"]))
    np.testing.assert_allclose(t["p_value"], 2 * stats.t.sf(t["statistic"].abs(), t["df"]))
    for j in range(len(fit.pairs)):       # the p-values are the test the interval inverts
        le, ge = _one_sided(fit, j, 0.0)
        np.testing.assert_allclose(c["p_greater"].iloc[j], ge, rtol=1e-12)
        np.testing.assert_allclose(c["p_value"].iloc[j], min(1.0, 2 * min(le, ge)), rtol=1e-12)
    assert c.attrs["mixrank"]["ci_method"] == "randomization"
    assert "sign-flip" in c.attrs["mixrank"]["ci"] and "sign-flip" in c.attrs["mixrank"]["p_value"]
    assert t.attrs["mixrank"]["ci"] == "marginal" and "p_value" not in t.attrs["mixrank"]
    lv = fit.contrasts(level=0.8, ci="randomization")
    assert ((lv["ci_lower"] >= c["ci_lower"]) & (lv["ci_upper"] <= c["ci_upper"])).all()


def test_contrasts_ci_randomization_refusals():
    fit = _fit(T=8, K=3, seed=9)
    with pytest.raises(mixrank.DesignError, match="ci='randomization'.*adjust='maxt'"):
        fit.contrasts(adjust="maxt", ci="randomization")
    with pytest.raises(mixrank.DesignError, match="ci='randomization'.*5 levels"):
        _fit(T=5, K=3, seed=1).contrasts(ci="randomization")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sat = mixrank.fit("correct ~ model + (1|subject)", _data(T=8, K=3, seed=9),
                          df="satterthwaite")
    with pytest.raises(mixrank.DesignError, match="ci='randomization'.*df='cr2'"):
        sat.contrasts(ci="randomization")
    with pytest.raises(mixrank.OptionError, match="ci='wald'"):
        fit.contrasts(ci="wald")


@pytest.mark.parametrize("T, contrasts, ranks", [(5, "holm", "holm"), (6, "stepdown", "holm"),
                                                 (7, "stepdown", "maxt")])
def test_the_flips_are_the_default_only_where_they_can_reach_the_level(T, contrasts, ranks):
    """With T units the smallest flip p-value is 1/2^(T-1) (0.0625 at 5 units: the step-down
    could never reject at 0.05, so Holm stays); the rank intervals' directed families test
    each side at alpha/2, so they need 2/2^(T-1) <= 0.05 (7 units)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit("correct ~ model + (1|subject)", _data(T=T))
        assert fit.df_method == "cr2"
        assert fit.contrasts().attrs["mixrank"]["adjust"] == contrasts
        assert fit.rank_intervals().attrs["mixrank"]["method"] == ranks
