"""Verdict tables: mixrank.design.resolution (docs/methods.md §6, "Verdict table").

References: the closed forms of mixrank.design.power / audit / anytime (tested
against published values in test_power.py and test_anytime.py), restated
independently here; the MMLU-Pro example of arXiv 2605.30315 (one pair's N*
went from 432 to 13,621 with DE = 31.5); ChemBench (Mirza et al. 2024,
arXiv 2404.01475) for the four-paradigm tightening on real data.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import mixrank
from mixrank.design.anytime import anytime_n_star
from mixrank.design.power import n_star
from mixrank.design.power.audit import multiplicity_alpha, n_star_scale
from mixrank.design.resolution import resolution_of, resolution_table
from mixrank.errors import DesignError, SingularFitWarning

Z975 = stats.norm.ppf(0.975)
Z80 = stats.norm.ppf(0.8)
K = (Z975 + Z80) ** 2

VERDICTS = ("resolved_multiplicity", "resolved_anytime", "resolved_cluster")
RATIOS = ("q_multiplicity", "q_anytime", "q_cluster")


def _table(est, n, sd, de=None):
    m = len(est)
    t = pd.DataFrame({"model_a": [f"a{i}" for i in range(m)], "model_b": [f"b{i}" for i in range(m)],
                      "estimate": est, "n": n, "sigma_d": sd})
    if de is not None:
        t["variance_ratio"] = de
    return t


def _assert_tightening(tab):
    """Every stress only tightens: per row and in the counts."""
    fixed = tab["resolved"].to_numpy()
    for col in VERDICTS:
        if col in tab:
            v = tab[col].to_numpy()
            assert not np.any(v & ~fixed), f"{col} resolved a pair that fixed n does not"
            assert v.sum() <= fixed.sum()
    for col in RATIOS:
        if col in tab:
            assert np.all(tab[col].to_numpy() <= tab["q"].to_numpy() * (1 + 1e-12))
    allv = tab["resolved_all"].to_numpy()
    for col in ("resolved",) + VERDICTS:
        if col in tab:
            assert not np.any(allv & ~tab[col].to_numpy())


# ---------------------------------------------------------------------------
# closed forms
# ---------------------------------------------------------------------------

def test_fixed_n_columns_match_power_module():
    est = np.array([0.03, -0.01, 0.05])
    n = np.array([2000, 1500, 800])
    sd = np.array([0.45, 0.30, 0.60])
    tab = resolution_table(_table(est, n, sd, de=[2.0, 1.5, 3.0]))
    np.testing.assert_allclose(tab["n_star"], K * sd**2 / est**2, rtol=1e-12)
    np.testing.assert_allclose(tab["n_star"], n_star(est, sigma_d=sd), rtol=1e-12)
    np.testing.assert_allclose(tab["mde"], math.sqrt(K) * sd / np.sqrt(n), rtol=1e-12)
    np.testing.assert_allclose(tab["q"], n * est**2 / (K * sd**2), rtol=1e-12)
    # q >= 1  <=>  |delta| sqrt(N) / sigma_D >= z_{1-a/2} + z_{1-b} (docs/methods.md §6)
    assert tab["resolved"].tolist() == list(np.abs(est) * np.sqrt(n) / sd >= Z975 + Z80)
    # input order and columns kept, input unmodified
    assert tab["model_a"].tolist() == ["a0", "a1", "a2"]
    assert isinstance(tab.index, pd.RangeIndex)


def test_multiplicity_uses_the_step_level_in_fixed_n_p_value_order():
    est = np.array([0.02, 0.05, 0.03, 0.04])
    n = np.full(4, 3000)
    sd = np.full(4, 0.5)
    for method in ("holm", "bonferroni", "bh"):
        tab = resolution_table(_table(est, n, sd), adjust=method, anytime=False,
                               cluster=False)
        # independent ordering: ascending two-sided Wald p-value at fixed n
        p = 2 * stats.norm.sf(np.abs(est) * np.sqrt(n) / sd)
        rank = stats.rankdata(p, method="ordinal").astype(int)
        if method == "bonferroni":
            expect = np.full(4, 0.05 / 4)
        else:
            expect = np.asarray(multiplicity_alpha(0.05, 4, method=method, rank=rank))
        np.testing.assert_allclose(tab["alpha_multiplicity"], expect, rtol=1e-15)
        if method == "holm":
            np.testing.assert_allclose(tab["alpha_multiplicity"], 0.05 / (4 - rank + 1))
        scale = n_star_scale(expect, 0.05)
        np.testing.assert_allclose(tab["n_star_multiplicity"], tab["n_star"] * scale, rtol=1e-12)
        np.testing.assert_allclose(tab["q_multiplicity"], tab["q"] / scale, rtol=1e-12)
        np.testing.assert_allclose(tab["mde_multiplicity"], tab["mde"] * np.sqrt(scale), rtol=1e-12)
        # N* at alpha' equals n_star(alpha=alpha') directly
        np.testing.assert_allclose(tab["n_star_multiplicity"],
                                   n_star(est, sigma_d=sd, alpha=expect), rtol=1e-10)
        assert tab.attrs["mixrank"]["multiplicity"] == method


def test_step_rules_holm_step_down_and_bh_step_up():
    # Two pairs, m = 2.  scale(alpha/2) = 1.2107, scale(alpha) = 1.
    # q1 = 1.15 fails step 1 (level alpha/2); q2 = 1.10 passes step 2 (level alpha).
    s1 = float(n_star_scale(0.025, 0.05))
    assert 1.15 < s1
    sd = np.array([0.5, 0.5])
    n = np.array([1000, 1000])
    est = np.sqrt(np.array([1.15, 1.10]) * K * sd**2 / n)
    base = _table(est, n, sd)
    holm = resolution_table(base, adjust="holm", anytime=False, cluster=False)
    np.testing.assert_allclose(holm["q"], [1.15, 1.10], rtol=1e-12)
    np.testing.assert_allclose(holm["alpha_multiplicity"], [0.025, 0.05])
    assert holm["q_multiplicity"].iloc[1] == pytest.approx(1.10)
    # Holm stops at the first failure: step 2 is not reached
    assert holm["resolved_multiplicity"].tolist() == [False, False]
    # BH steps up: the last success (step 2) carries step 1 with it
    bh = resolution_table(base, adjust="bh", anytime=False, cluster=False)
    np.testing.assert_allclose(bh["alpha_multiplicity"], [0.025, 0.05])
    assert bh["resolved_multiplicity"].tolist() == [True, True]
    bonf = resolution_table(base, adjust="bonferroni", anytime=False, cluster=False)
    assert bonf["resolved_multiplicity"].tolist() == [False, False]


def test_anytime_columns_match_anytime_module():
    est = np.array([0.04, 0.02, -0.06])
    n = np.array([2788, 2788, 500])
    sd = np.array([0.45, 0.4, 0.5])
    tab = resolution_table(_table(est, n, sd), adjust=None, cluster=False)
    for i in range(3):
        assert tab["n_star_anytime"].iloc[i] == pytest.approx(
            anytime_n_star(est[i], sd[i], n_plan=n[i]), rel=1e-12)
    np.testing.assert_allclose(tab["q_anytime"], n / tab["n_star_anytime"], rtol=1e-15)
    meta = tab.attrs["mixrank"]["anytime"]
    # the z-equivalent threshold at the tuning point is sqrt(x*) = 3.035 at alpha = 0.05,
    # an inflation of 1.549 over 1.960 (mixrank.design.anytime docs, confseq-validated)
    assert meta["threshold_z"] == pytest.approx(3.0351, abs=1e-4)
    assert meta["inflation"] == pytest.approx(meta["threshold_z"] / Z975, rel=1e-12)
    # at n = n_plan the MDE closed form agrees with the solved N*: q >= 1 <=> |delta| >= MDE
    assert (tab["q_anytime"] >= 1).tolist() == (np.abs(est) >= tab["mde_anytime"]).tolist()
    np.testing.assert_allclose(tab["mde_anytime"],
                               (meta["threshold_z"] + Z80) * sd / np.sqrt(n), rtol=1e-12)


def test_cluster_columns_and_sigma_cancels():
    est = np.array([0.03, 0.03])
    n = np.array([2000, 2000])
    var = np.array([3e-4, 3e-4])
    sd = np.array([0.4, 0.5])                     # different iid SDs, same REML variance
    de = var / (sd**2 / n)
    tab = resolution_table(_table(est, n, sd, de=de), adjust=None, anytime=False)
    np.testing.assert_allclose(tab["n_star_cluster"], tab["n_star"] * de, rtol=1e-12)
    # q_cluster = delta^2 / (K Var_REML): the Wald verdict with the mixed-model SE
    np.testing.assert_allclose(tab["q_cluster"], est**2 / (K * var), rtol=1e-12)
    assert tab["q_cluster"].iloc[0] == pytest.approx(tab["q_cluster"].iloc[1], rel=1e-12)
    np.testing.assert_allclose(tab["mde_cluster"], np.sqrt(K * var), rtol=1e-12)


def test_published_mmlu_pro_clustered_n_star():
    # arXiv 2605.30315 (docs/methods.md §6): one MMLU-Pro pair's N* went from 432 to
    # 13,621 with subject clustering, DE = 31.5 (published to 3 digits: 31.45..31.55).
    sd = 0.5
    est = math.sqrt(K * sd**2 / 432)              # a pair with N* = 432
    tab = resolution_table(_table([est], [12032], [sd], de=[31.5]), adjust=None,
                           anytime=False)
    assert tab["n_star"].iloc[0] == pytest.approx(432, rel=1e-12)
    assert abs(tab["n_star_cluster"].iloc[0] - 13621) <= 0.05 * 432
    assert not tab["resolved_cluster"].iloc[0] and tab["resolved"].iloc[0]


def test_variance_ratio_below_one_never_loosens():
    tab = resolution_table(_table([0.02, 0.02], [1000, 1000], [0.3, 0.3], de=[0.5, 2.0]),
                           adjust=None, anytime=False)
    assert tab["n_star_cluster"].iloc[0] == tab["n_star"].iloc[0]
    assert tab["q_cluster"].iloc[0] == tab["q"].iloc[0]
    assert tab["variance_ratio"].iloc[0] == 0.5          # reported as fitted
    assert tab.attrs["mixrank"]["variance_ratio_below_1"] == 1


def test_degenerate_rows():
    # estimate 0 -> N* = inf, q = 0; sigma_d = 0 with a difference -> N* = 0, q = inf
    tab = resolution_table(_table([0.0, 0.1], [100, 100], [0.4, 0.0], de=[1.0, 1.0]))
    assert tab["n_star"].tolist() == [np.inf, 0.0]
    assert tab["q"].tolist() == [0.0, np.inf]
    assert tab["resolved"].tolist() == [False, True]
    assert tab["resolved_all"].tolist() == [False, True]
    assert tab["n_star_anytime"].tolist() == [np.inf, 0.0]
    assert tab["mde"].iloc[1] == 0.0


def test_attrs_counts_and_paradigm_selection():
    est = np.array([0.05, 0.001, 0.03])
    tab = resolution_table(_table(est, [2000] * 3, [0.5] * 3, de=[1.0, 1.0, 5.0]))
    meta = tab.attrs["mixrank"]
    assert meta["paradigms"] == ["fixed", "multiplicity", "anytime", "cluster"]
    for p, col in zip(meta["paradigms"], ("resolved",) + VERDICTS):
        k = int((~tab[col]).sum())
        assert meta["n_unresolved"][p] == k
        assert meta["unresolved"][p] == f"{k}/3 unresolved"
    assert meta["unresolved"]["all"] == f"{int((~tab['resolved_all']).sum())}/3 unresolved"
    assert meta["alpha"] == 0.05 and meta["power"] == 0.8
    only = resolution_table(_table(est, [2000] * 3, [0.5] * 3), adjust=None,
                            anytime=False, cluster=False)
    assert only.attrs["mixrank"]["paradigms"] == ["fixed"]
    assert not any(c.endswith(("_multiplicity", "_anytime", "_cluster")) for c in only.columns)
    assert only["resolved_all"].tolist() == only["resolved"].tolist()


# ---------------------------------------------------------------------------
# argument errors
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(alpha=0.0), r"alpha.*\(0, 1\)"),
    (dict(alpha=1.5), r"alpha.*\(0, 1\)"),
    (dict(power=0.01), r"power.*\(alpha, 1\)"),
    (dict(power=1.0), r"power.*\(alpha, 1\)"),
    (dict(multiplicity="sidak"), r"'holm', 'bonferroni', 'bh'\] or None"),
    (dict(anytime="yes"), r"anytime must be one of \[.auto., .normal., .bernoulli.\]"),
    (dict(cluster=1), r"cluster must be True or False"),
    (dict(alpha=[0.05, 0.01]), r"single number"),
])
def test_bad_arguments_name_the_allowed_range(kwargs, match):
    t = _table([0.03], [1000], [0.5], de=[1.0])
    with pytest.raises(DesignError, match=match):
        resolution_table(t, **kwargs)


@pytest.mark.parametrize("column, value, match", [
    ("n", 0, r"'n'.*> 0"),
    ("sigma_d", -0.1, r"'sigma_d'.*>= 0"),
    ("variance_ratio", 0.0, r"'variance_ratio'.*> 0"),
    ("estimate", np.nan, r"'estimate'.*finite"),
])
def test_bad_columns(column, value, match):
    t = _table([0.03], [1000], [0.5], de=[1.0])
    t[column] = value
    with pytest.raises(DesignError, match=match):
        resolution_table(t)


def test_bad_tables():
    with pytest.raises(DesignError, match="DataFrame"):
        resolution_table([1, 2, 3])
    with pytest.raises(DesignError, match="empty"):
        resolution_table(_table([], [], [], de=[]))
    with pytest.raises(DesignError, match="variance_ratio"):
        resolution_table(_table([0.03], [1000], [0.5]))     # cluster=True needs it
    assert len(resolution_table(_table([0.03], [1000], [0.5]), cluster=False)) == 1


# ---------------------------------------------------------------------------
# property tests: every stress only tightens
# ---------------------------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(st.tuples(
        st.floats(-0.3, 0.3, allow_nan=False),                 # estimate
        st.integers(2, 200_000),                               # n
        st.floats(0.0, 1.0, allow_nan=False),                  # sigma_d
        st.floats(0.05, 80.0, allow_nan=False),                # design effect
    ), min_size=1, max_size=12),
    alpha=st.floats(0.001, 0.3),
    power=st.floats(0.5, 0.99),
    method=st.sampled_from(["holm", "bonferroni", "bh"]),
)
def test_property_stresses_only_tighten(rows, alpha, power, method):
    est, n, sd, de = (np.array(x) for x in zip(*rows))
    tab = resolution_table(_table(est, n, sd, de=de), level=1 - alpha, power=power,
                           adjust=method)
    _assert_tightening(tab)
    # alpha = 1 - level (to 12 digits); multiplicity levels never exceed it; N* never shrinks
    al = tab.attrs["mixrank"]["alpha"]
    assert al == pytest.approx(alpha, abs=1e-12)
    assert np.all(tab["alpha_multiplicity"] <= al * (1 + 1e-15))
    for col in ("n_star_multiplicity", "n_star_anytime", "n_star_cluster"):
        assert np.all(tab[col].to_numpy() >= tab["n_star"].to_numpy() * (1 - 1e-12))


def _random_fit(seed, models, subjects, questions, missing, sd_subject):
    df = mixrank.simulate(models, subjects, questions, 1, family="gaussian", rng=seed,
                          sd_model_subject=sd_subject, sd_model_question=0.5, sd_residual=0.3,
                          effects=np.random.default_rng(seed).normal(0, 0.15, models),
                          missing=missing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        return mixrank.fit("correct ~ model + (1|subject)", df)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    models=st.integers(3, 5),
    subjects=st.integers(3, 8),
    questions=st.integers(3, 12),
    missing=st.sampled_from([0.0, 0.1]),
    sd_subject=st.sampled_from([0.0, 0.2, 0.6]),
    alpha=st.sampled_from([0.01, 0.05, 0.1]),
    method=st.sampled_from(["holm", "bonferroni", "bh"]),
    family=st.sampled_from(["adjacent", "all"]),
)
def test_property_random_fits(seed, models, subjects, questions, missing, sd_subject, alpha,
                              method, family):
    res = _random_fit(seed, models, subjects, questions, missing, sd_subject)
    tab = res.resolution(columns="all", pairs=family, level=1 - alpha, adjust=method)
    _assert_tightening(tab)
    scores = dict(zip(res.model_scores()["model"], res.model_scores()["estimate"]))
    # orientation: the pair's own contrast favours model_a (docs/messy.md §1); with every
    # cell shared (cells estimand) that is also the better-scoring model
    assert (tab["estimate"] >= 0).all()
    if missing == 0.0:
        assert all(scores[a] >= scores[b] - 1e-12 for a, b in zip(tab["model_a"], tab["model_b"]))
    assert len(tab) == (models - 1 if family == "adjacent" else models * (models - 1) // 2)
    # the fit's numbers go through unchanged (up to orientation); the clustered stress uses
    # the default contrast's SE and df (one SE per pair in every table)
    con = res.contrasts().set_index(["model_a", "model_b"])
    for _, r in tab.iterrows():
        p = res.pair(r["model_a"], r["model_b"])
        sign = 1 if p.model_a == r["model_a"] else -1
        c = con.loc[(p.model_a, p.model_b)]
        assert r["estimate"] == sign * p.estimate == sign * c["estimate"]
        assert r["sigma_d"] == p.sigma_d
        # the clustered stress is relative to the estimand's own iid variance (the default, cells)
        iid = p.sigma_d**2 * r["weight_factor"] / p.n
        assert r["variance_ratio"] == pytest.approx(c["std_error"] ** 2 / iid, rel=1e-12)
        assert r["variance_iid"] == pytest.approx(iid, rel=1e-12)
        assert r["std_error"] == c["std_error"] and r["df"] == c["df"]
        assert r["p_adjusted"] == c["p_adjusted"]
        assert not r["resolved_all"] or c["p_adjusted"] < alpha


# ---------------------------------------------------------------------------
# resolution_of on a fit
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_fit():
    return _random_fit(3, 5, 6, 10, 0.0, 0.4)


def test_resolution_fit_equals_table_on_the_fit_numbers(small_fit):
    # Holm, as resolution_table from numbers (the CR2 path's default is the step-down,
    # tests/inference/test_randomization_stepdown.py)
    assert small_fit.resolution(columns="all").attrs["mixrank"]["multiplicity"] == "stepdown"
    tab = small_fit.resolution(columns="all", adjust="holm")
    order = small_fit.model_scores().sort_values(["estimate", "model"],
                                                 ascending=[False, True])["model"].tolist()
    assert list(zip(tab["model_a"], tab["model_b"])) == list(zip(order[:-1], order[1:]))
    rebuilt = resolution_table(tab[["model_a", "model_b", "estimate", "n", "sigma_d",
                                    "std_error", "df", "variance_ratio", "p_adjusted"]])
    pd.testing.assert_frame_equal(tab, rebuilt, check_like=False)
    meta = tab.attrs["mixrank"]
    assert meta["formula"] == "correct ~ model + (1|subject)"
    assert meta["estimand"] == "cells" and meta["model_order"] == order
    assert resolution_of(small_fit, columns="all", adjust="holm").equals(tab)
    # q_cluster = delta^2 / (K_t SE^2): the default contrast's SE and df
    from scipy import stats
    var = tab["std_error"].to_numpy() ** 2
    kt = np.maximum((stats.t.ppf(0.975, tab["df"]) + stats.t.ppf(0.8, tab["df"])) ** 2, K)
    np.testing.assert_allclose(tab["q_cluster"], tab["estimate"] ** 2 / (kt * np.maximum(
        var, tab["sigma_d"] ** 2 / tab["n"])), rtol=1e-10)


def test_resolution_fit_family_options(small_fit):
    order = small_fit.model_scores().sort_values(["estimate", "model"],
                                                 ascending=[False, True])["model"].tolist()
    top3 = small_fit.resolution(columns="all", top=3)
    assert list(zip(top3["model_a"], top3["model_b"])) == [(order[0], order[1]),
                                                            (order[1], order[2])]
    sub = small_fit.resolution(columns="all", pairs="all", models=[order[4], order[0], order[2]])
    assert list(zip(sub["model_a"], sub["model_b"])) == [(order[0], order[2]),
                                                          (order[0], order[4]),
                                                          (order[2], order[4])]
    expl = small_fit.resolution(columns="all", pairs=[(order[3], order[0])], adjust=None)
    p = small_fit.pair(order[3], order[0])
    assert expl["estimate"].iloc[0] == (p.estimate if p.model_a == order[3] else -p.estimate)
    assert (expl["model_a"].iloc[0], expl["model_b"].iloc[0]) == (order[3], order[0])


def test_resolution_fit_errors(small_fit):
    with pytest.raises(DesignError, match="FitResult"):
        resolution_of(pd.DataFrame())
    with pytest.raises(DesignError, match="'adjacent'.*'all'"):
        small_fit.resolution(columns="all", pairs="neighbours")
    with pytest.raises(DesignError, match="not levels"):
        small_fit.resolution(columns="all", models=["m01", "nope"])
    with pytest.raises(DesignError, match="top must be a whole number >= 2"):
        small_fit.resolution(columns="all", top=1)
    with pytest.raises(DesignError, match="list of model names"):
        small_fit.resolution(columns="all", models="m01")
    df = mixrank.simulate(4, 4, 5, 1, family="gaussian", rng=1)
    part = mixrank.fit("correct ~ model + (1|subject)", df, pairs=[("m01", "m02")])
    with pytest.raises(DesignError, match="not fitted.*pairs="):
        part.resolution(columns="all", pairs="adjacent")
    # a restricted fit's default family is its fitted pairs (docs/messy.md §4)
    assert len(part.resolution(columns="all")) == 1


# ---------------------------------------------------------------------------
# ChemBench: the four paradigms on real data
# ---------------------------------------------------------------------------

def test_chembench_top10_adjacent_tightening(shared_data):
    df = shared_data("chembench")
    df = df[df["prompt"] == "default"]
    means = df.groupby("model")["correct"].mean()
    order = sorted(means.index, key=lambda m: (-means[m], m))[:10]
    adjacent = list(zip(order[:-1], order[1:]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        res = mixrank.fit("correct ~ model + (1|subject)", df, pairs=adjacent,
                          estimand="cells")
    tab = res.resolution(columns="all", top=10)
    assert list(zip(tab["model_a"], tab["model_b"])) == adjacent
    assert (tab["n"] == 2788).all()                       # fully paired: 2,788 questions
    _assert_tightening(tab)
    counts = tab.attrs["mixrank"]["n_unresolved"]
    assert counts["fixed"] <= counts["multiplicity"]
    assert counts["fixed"] <= counts["anytime"]
    assert counts["fixed"] <= counts["cluster"]
    assert counts["all"] >= max(counts[p] for p in ("multiplicity", "anytime", "cluster"))
    # estimand="cells": the fixed-n columns are the leaderboard's iid paired numbers
    for _, r in tab.iterrows():
        d = (df[df.model == r.model_a].sort_values("question")["correct"].to_numpy()
             - df[df.model == r.model_b].sort_values("question")["correct"].to_numpy())
        assert r["estimate"] == pytest.approx(d.mean(), abs=1e-12)
        assert r["sigma_d"] == pytest.approx(d.std(ddof=1), rel=1e-12)


def test_explicit_pair_errors(small_fit):
    with pytest.raises(DesignError, match="two different models.*'zz'"):
        small_fit.resolution(columns="all", pairs=[("m01", "zz")])
    with pytest.raises(DesignError, match="same model"):
        small_fit.resolution(columns="all", pairs=[("m01", "m01")])
    with pytest.raises(DesignError, match="leave them None"):
        small_fit.resolution(columns="all", pairs=[("m01", "m02")], top=3)
    with pytest.raises(DesignError, match=r"\(model_a, model_b\)"):
        small_fit.resolution(columns="all", pairs=5)
