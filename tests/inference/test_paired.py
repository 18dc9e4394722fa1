"""Tests for mixrank.inference.paired (McNemar, paired t, Wilcoxon, effect sizes,
paired bootstrap, sign-flip) and the shared input helper.

References: R 4.2 values in tests/reference/paired_tests.json, written by
tests/reference/paired_tests.R (mcnemar.test, binom.test, t.test(paired = TRUE),
wilcox.test(paired = TRUE)); statsmodels' mcnemar; scipy's wilcoxon, bootstrap
and permutation_test; enumeration of all sign patterns by hand.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from mixrank.errors import DataError, DesignError, SmallSampleWarning
from mixrank.inference.paired import (
    effect_sizes,
    mcnemar,
    paired_bootstrap,
    paired_t,
    sign_flip,
    wilcoxon,
)
from mixrank.inference.paired_data import paired_arrays
from mixrank.inference.paired_resampling import _bca_interval

# One table of tolerances (relative unless named *_atol).
TOL = {
    "r": 1e-10,           # R reference values (JSON written with 15 significant digits)
    "exact": 1e-12,       # same computation, different library / enumeration
    "statsmodels": 1e-12,
}

REF = json.loads((Path(__file__).parents[1] / "reference" / "paired_tests.json").read_text())
DATA = {k: (np.asarray(v["x"], float), np.asarray(v["y"], float))
        for k, v in REF["datasets"].items()}


def _num(v):
    return {"Inf": math.inf, "-Inf": -math.inf}.get(v, v) if isinstance(v, str) else v


def _alt(r_alt):
    return "two-sided" if r_alt == "two.sided" else r_alt


def _long(x, y, a="A", b="B", extra=None):
    n = len(x)
    subj = [f"s{i % 3}" for i in range(n)]
    q = [f"q{i}" for i in range(n)]
    df = pd.DataFrame({"model": [a] * n + [b] * n, "subject": subj * 2, "question": q * 2,
                       "correct": np.concatenate([x, y])})
    if extra:
        for k, v in extra.items():
            df[k] = v
    return df


# ----------------------------------------------------------------- McNemar ---

@pytest.mark.parametrize("row", REF["mcnemar"], ids=lambda r: r["dataset"])
def test_mcnemar_matches_r(row):
    x, y = DATA[row["dataset"]]
    res = mcnemar(x, y, method="all").set_index("method")
    assert (res["b"] == row["b"]).all() and (res["c"] == row["c"]).all()
    assert (res["discordant"] == row["b"] + row["c"]).all()
    assert (res["n"] == row["n"]).all()
    np.testing.assert_allclose(res.loc["exact", "p_value"], row["exact_p"], rtol=TOL["r"])
    np.testing.assert_allclose(res.loc["exact", "statistic"], row["exact_statistic"], rtol=TOL["r"])
    np.testing.assert_allclose(res.loc["midp", "p_value"], row["midp"], rtol=TOL["r"])
    for m in ("corrected", "asymptotic"):
        np.testing.assert_allclose(res.loc[m, "statistic"], row[f"{m}_statistic"],
                                   rtol=TOL["r"], atol=1e-15)
        np.testing.assert_allclose(res.loc[m, "p_value"], row[f"{m}_p"], rtol=TOL["r"])


@pytest.mark.parametrize("name", [r["dataset"] for r in REF["mcnemar"]])
def test_mcnemar_matches_statsmodels(name):
    x, y = DATA[name]
    table = pd.crosstab(pd.Categorical(x, [1.0, 0.0]), pd.Categorical(y, [1.0, 0.0]),
                        dropna=False).to_numpy()
    b, c = int(table[0, 1]), int(table[1, 0])
    res = mcnemar(x, y, method="all").set_index("method")
    sm_exact = sm_mcnemar(table, exact=True)
    np.testing.assert_allclose(res.loc["exact", "p_value"], sm_exact.pvalue,
                               rtol=TOL["statsmodels"])
    assert sm_exact.statistic == min(b, c)  # statsmodels reports min(b, c); we report b (as R)
    sm_raw = sm_mcnemar(table, exact=False, correction=False)
    np.testing.assert_allclose(res.loc["asymptotic", ["statistic", "p_value"]].astype(float),
                               [sm_raw.statistic, sm_raw.pvalue], rtol=TOL["statsmodels"])
    sm_cc = sm_mcnemar(table, exact=False, correction=True)
    if b != c:
        np.testing.assert_allclose(res.loc["corrected", ["statistic", "p_value"]].astype(float),
                                   [sm_cc.statistic, sm_cc.pvalue], rtol=TOL["statsmodels"])
    else:  # documented difference: R (and mixrank) skip the correction when b == c
        assert res.loc["corrected", "statistic"] == 0.0
        np.testing.assert_allclose(sm_cc.statistic, 1.0 / (b + c))


def test_mcnemar_midp_definition_by_enumeration():
    # Fagerland et al. (2013) eq. 3: mid-p = 2 [P(X < k) + P(X = k)/2], k = min(b, c),
    # X ~ Bin(b + c, 1/2), with the pmf summed from binomial coefficients (no scipy)
    for b, c in [(7, 2), (0, 5), (12, 4), (3, 3), (40, 61)]:
        m, k = b + c, min(b, c)
        pmf = np.array([math.comb(m, j) for j in range(m + 1)]) / 2.0 ** m
        mid = min(1.0, 2 * (pmf[:k].sum() + pmf[k] / 2))
        x = np.r_[np.ones(b), np.zeros(c)]
        got = mcnemar(x, 1 - x, method="midp")["p_value"].iloc[0]
        np.testing.assert_allclose(got, mid, rtol=TOL["exact"])


def test_mcnemar_no_discordant_cells_warns_and_gives_p_one():
    x = np.array([1, 0, 1, 1, 0])
    with pytest.warns(SmallSampleWarning, match="disagree on no cell"):
        res = mcnemar(x, x.copy(), method="all")
    assert (res["p_value"] == 1.0).all()
    assert res["statistic"].isna().all()
    assert (res["discordant"] == 0).all()


def test_mcnemar_orientation_and_symmetry():
    x, y = DATA["bin30"]
    ab = mcnemar(x, y, a="A", b="B", method="all")
    ba = mcnemar(y, x, a="B", b="A", method="all")
    assert ab["model_a"].iloc[0] == "A" and ab["b"].iloc[0] == 8 and ab["c"].iloc[0] == 2
    np.testing.assert_allclose(ab["estimate"], (8 - 2) / 30)
    np.testing.assert_allclose(ab["p_value"], ba["p_value"], rtol=1e-14)
    assert (ab["b"] == ba["c"]).all()


def test_mcnemar_on_chembench_agrees_with_statsmodels(shared_data):
    data = shared_data("chembench")
    data = data[data["prompt"] == "default"]
    a, b = "claude3", "gpt-4"
    before = data.copy()
    res = mcnemar(data, a=a, b=b, method="all").set_index("method")
    pd.testing.assert_frame_equal(data, before)  # input not modified
    wide = data.pivot_table(index=["subject", "question"], columns="model", values="correct")
    xa, xb = wide[a].to_numpy(), wide[b].to_numpy()
    table = np.array([[np.sum((xa == 1) & (xb == 1)), np.sum((xa == 1) & (xb == 0))],
                      [np.sum((xa == 0) & (xb == 1)), np.sum((xa == 0) & (xb == 0))]])
    assert res["n"].iloc[0] == 2788 == table.sum()
    assert res["b"].iloc[0] == table[0, 1] and res["c"].iloc[0] == table[1, 0]
    np.testing.assert_allclose(res.loc["exact", "p_value"],
                               sm_mcnemar(table, exact=True).pvalue, rtol=TOL["statsmodels"])
    for m, corr in (("asymptotic", False), ("corrected", True)):
        sm = sm_mcnemar(table, exact=False, correction=corr)
        np.testing.assert_allclose(res.loc[m, "p_value"], sm.pvalue, rtol=TOL["statsmodels"])


# ---------------------------------------------------------------- paired t ---

@pytest.mark.parametrize("row", REF["t_test"],
                         ids=lambda r: f"{r['dataset']}-{r['alternative']}-{r['level']}")
def test_paired_t_matches_r(row):
    x, y = DATA[row["dataset"]]
    res = paired_t(x, y, alternative=_alt(row["alternative"]), level=row["level"]).iloc[0]
    for col in ("estimate", "std_error", "statistic", "df", "p_value", "ci_lower", "ci_upper"):
        np.testing.assert_allclose(res[col], _num(row[col]), rtol=TOL["r"], atol=1e-15,
                                   err_msg=col)
    assert res["level"] == row["level"] and res["n"] == len(x)


def test_paired_t_constant_differences_warn():
    with pytest.warns(SmallSampleWarning, match="differences equal"):
        res = paired_t([1.0, 0.5, 0.2], [0.5, 0.0, -0.3])
    assert np.isnan(res["p_value"].iloc[0])


# ---------------------------------------------------------------- Wilcoxon ---

@pytest.mark.parametrize("row", REF["wilcox"],
                         ids=lambda r: "-".join(str(r[k]) for k in
                                                ("dataset", "alternative", "exact", "correct")))
def test_wilcoxon_matches_r(row):
    x, y = DATA[row["dataset"]]
    r_exact = "exact" in row["r_method"]
    alt = _alt(row["alternative"])
    if row["exact"] == "NULL":  # R's default decision == method="auto"
        res = wilcoxon(x, y, method="auto", correction=row["correct"], alternative=alt)
    else:
        res = wilcoxon(x, y, method="exact" if r_exact else "asymptotic",
                       correction=row["correct"], alternative=alt)
    res = res.iloc[0]
    assert res["method"] == ("exact" if r_exact else "asymptotic")
    np.testing.assert_allclose(res["statistic"], row["statistic"], rtol=TOL["r"])
    np.testing.assert_allclose(res["p_value"], row["p_value"], rtol=TOL["r"])
    d = x - y
    assert res["n_zero"] == np.sum(d == 0) and res["n_effective"] == np.sum(d != 0)


@pytest.mark.parametrize("name", ["quart12", "quart60", "cont10"])
@pytest.mark.parametrize("correction", [False, True])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_wilcoxon_pratt_matches_scipy(name, correction, alternative):
    x, y = DATA[name]
    res = wilcoxon(x, y, zero_method="pratt", method="asymptotic", correction=correction,
                   alternative=alternative).iloc[0]
    ref = stats.wilcoxon(x, y, zero_method="pratt", method="asymptotic",
                         correction=correction, alternative=alternative)
    np.testing.assert_allclose(res["p_value"], ref.pvalue, rtol=TOL["exact"])
    greater = stats.wilcoxon(x, y, zero_method="pratt", method="asymptotic", alternative="greater")
    np.testing.assert_allclose(res["statistic"], greater.statistic, rtol=TOL["exact"])  # V = R+
    assert res["n_effective"] == len(x) and res["n_zero"] == np.sum(x == y)


def _enumerated_signed_rank_p(d, zero_method, alternative):
    """Exact conditional p-value by listing all 2^m sign patterns of the ranked set."""
    used = d[d != 0] if zero_method == "wilcox" else d
    r = stats.rankdata(np.abs(used))
    r = r[used != 0]
    v = r[used[used != 0] > 0].sum()
    vs = np.array([sum(ri for ri, s in zip(r, signs, strict=True) if s)
                   for signs in itertools.product([0, 1], repeat=len(r))])
    ge, le = np.mean(vs >= v - 1e-9), np.mean(vs <= v + 1e-9)
    if alternative == "greater":
        return ge
    if alternative == "less":
        return le
    return min(1.0, 2 * (ge if v > r.sum() / 2 else le))


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_wilcoxon_exact_with_ties_is_exact_conditional(zero_method, alternative):
    x, y = DATA["quart12"]
    res = wilcoxon(x, y, zero_method=zero_method, method="exact", alternative=alternative)
    want = _enumerated_signed_rank_p(x - y, zero_method, alternative)
    np.testing.assert_allclose(res["p_value"].iloc[0], want, rtol=TOL["exact"])
    # scipy's automatic permutation test (n <= 13 with ties) is the same distribution
    ref = stats.wilcoxon(x, y, zero_method=zero_method, alternative=alternative)
    np.testing.assert_allclose(res["p_value"].iloc[0], ref.pvalue, rtol=1e-9)


def test_wilcoxon_all_zero_differences():
    with pytest.warns(SmallSampleWarning, match="all 4 differences are zero"):
        res = wilcoxon([1, 0, 1, 1], [1, 0, 1, 1])
    assert res["p_value"].iloc[0] == 1.0 and res["n_effective"].iloc[0] == 0


# ------------------------------------------------------------ effect sizes ---

@pytest.mark.parametrize("name", ["bin30", "bin400", "cont10", "quart60"])
def test_effect_sizes_from_definitions(name):
    x, y = DATA[name]
    res = effect_sizes(x, y).iloc[0]
    pa, pb, d = x.mean(), y.mean(), x - y
    np.testing.assert_allclose(res["estimate"], pa - pb, rtol=1e-13)
    np.testing.assert_allclose(res["relative_difference"], (pa - pb) / pb, rtol=1e-13)
    np.testing.assert_allclose(res["cohen_h"],
                               2 * math.asin(math.sqrt(pa)) - 2 * math.asin(math.sqrt(pb)),
                               rtol=1e-13)
    np.testing.assert_allclose(res["d_z"], d.mean() / d.std(ddof=1), rtol=1e-13)
    # d_z * sqrt(n) is the paired t statistic
    np.testing.assert_allclose(res["d_z"] * math.sqrt(len(d)),
                               paired_t(x, y)["statistic"].iloc[0], rtol=1e-12)


def test_effect_sizes_cohen_h_known_value():
    # Cohen (1988) table 6.2.1: phi(0.65) - phi(0.45) = 1.8755 - 1.4706 = 0.4049 (4 decimals)
    x = np.r_[np.ones(65), np.zeros(35)]
    y = np.r_[np.ones(45), np.zeros(55)]
    assert abs(effect_sizes(x, y)["cohen_h"].iloc[0] - 0.4049) < 1e-4


def test_effect_sizes_degenerate_give_nan():
    res = effect_sizes([1, 1, 0], [0, 0, 0]).iloc[0]
    assert np.isnan(res["relative_difference"]) and np.isfinite(res["cohen_h"])
    assert np.isnan(effect_sizes([1, 1], [0, 0])["d_z"].iloc[0])  # sd(d) = 0


# --------------------------------------------------------------- bootstrap ---

def test_bca_formula_matches_scipy_on_identical_replicates():
    x, y = DATA["cont60"]
    for level in (0.95, 0.9):
        res = stats.bootstrap((x, y), lambda a, b, axis: np.mean(a - b, axis=axis), paired=True,
                              vectorized=True, method="BCa", n_resamples=4000,
                              confidence_level=level, rng=np.random.default_rng(11))
        d = x - y
        jack = np.array([np.delete(d, i).mean() for i in range(len(d))])
        lo, hi, _, _ = _bca_interval(d.mean(), res.bootstrap_distribution, jack, level)
        np.testing.assert_allclose([lo, hi], [res.confidence_interval.low,
                                              res.confidence_interval.high], rtol=TOL["exact"])


def test_bootstrap_end_to_end_agrees_with_scipy_within_mc_error():
    x, y = DATA["cont60"]
    B = 20000
    ours = paired_bootstrap(x, y, draws=B, ci="all", rng=2024).set_index("method")
    sd_boot = ours["std_error"].iloc[0]
    # quantile MC s.e. ~ sqrt(a(1-a)/B)/phi(z_a) * sd_boot ~= 0.019 sd_boot per endpoint at
    # B = 20000; two independent runs differ by ~0.027 sd_boot; allow 5 s.e.
    band = 5 * math.sqrt(2) * math.sqrt(0.025 * 0.975 / B) / stats.norm.pdf(1.96) * sd_boot
    for method, sp in (("percentile", "percentile"), ("bca", "BCa")):
        ref = stats.bootstrap((x, y), lambda a, b, axis: np.mean(a - b, axis=axis), paired=True,
                              vectorized=True, method=sp, n_resamples=B,
                              rng=np.random.default_rng(7))
        assert abs(ours.loc[method, "ci_lower"] - ref.confidence_interval.low) < band
        assert abs(ours.loc[method, "ci_upper"] - ref.confidence_interval.high) < band
        assert abs(ours.loc[method, "std_error"] - ref.standard_error) < 0.03 * sd_boot
    np.testing.assert_allclose(ours["estimate"], (x - y).mean(), rtol=1e-14)


def test_bootstrap_percentile_symmetric_case():
    # d symmetric about 0 -> bootstrap distribution of the mean is symmetric about 0
    d = np.r_[np.linspace(-1, 1, 41)]
    B = 20000
    res = paired_bootstrap(d, np.zeros_like(d), draws=B, rng=5).iloc[0]
    sd_boot = res["std_error"]
    band = 5 * math.sqrt(2) * math.sqrt(0.025 * 0.975 / B) / stats.norm.pdf(1.96) * sd_boot
    assert abs(res["ci_lower"] + res["ci_upper"]) < band
    # the sd of the bootstrap mean is sd_pop(d)/sqrt(n) (exact for the bootstrap distribution)
    exact_sd = d.std(ddof=0) / math.sqrt(len(d))
    assert abs(sd_boot - exact_sd) < 5 * exact_sd / math.sqrt(2 * (B - 1))


def test_cluster_bootstrap_balanced_equals_bootstrap_of_cluster_means():
    rng = np.random.default_rng(3)
    G, m = 12, 5
    d = rng.normal(0.1, 1, G * m) + np.repeat(rng.normal(0, 0.5, G), m)
    codes = np.repeat(np.arange(G), m)
    clustered = paired_bootstrap(d, np.zeros_like(d), cluster=codes, draws=3000, ci="all", rng=9)
    means = d.reshape(G, m).mean(axis=1)
    plain = paired_bootstrap(means, np.zeros(G), draws=3000, ci="all", rng=9)
    for col in ("estimate", "std_error", "ci_lower", "ci_upper"):
        np.testing.assert_allclose(clustered[col], plain[col], rtol=1e-12, err_msg=col)
    assert clustered["n_clusters"].iloc[0] == G and clustered["n"].iloc[0] == G * m


def test_cluster_bootstrap_long_form_and_cluster_jackknife():
    rng = np.random.default_rng(8)
    sizes = [3, 7, 4, 9, 5, 6, 2, 8]
    subj = np.repeat([f"s{i}" for i in range(len(sizes))], sizes)
    n = len(subj)
    x = rng.binomial(1, 0.7, n).astype(float)
    y = rng.binomial(1, 0.6, n).astype(float)
    df = pd.DataFrame({"model": ["A"] * n + ["B"] * n, "subject": np.r_[subj, subj],
                       "question": np.tile([f"q{i}" for i in range(n)], 2),
                       "correct": np.r_[x, y]})
    long = paired_bootstrap(df, a="A", b="B", cluster="subject", draws=500, ci="bca", rng=4)
    arr = paired_bootstrap(x, y, cluster=subj, draws=500, ci="bca", rng=4)
    pd.testing.assert_frame_equal(long, arr.assign(model_a="A", model_b="B"))
    # acceleration from the leave-one-cluster-out jackknife, recomputed by hand
    d = x - y
    jack = np.array([d[subj != s].mean() for s in pd.unique(subj)])
    u = jack.mean() - jack
    np.testing.assert_allclose(long.attrs["mixrank"]["acceleration"],
                               (u ** 3).sum() / (6 * ((u ** 2).sum()) ** 1.5), rtol=1e-10)


def test_bootstrap_median_cluster_and_seed_reproducible():
    x, y = DATA["quart60"]
    cl = np.arange(60) % 6
    r1 = paired_bootstrap(x, y, statistic="median", cluster=cl, draws=300, ci="all", rng=1)
    r2 = paired_bootstrap(x, y, statistic="median", cluster=cl, draws=300, ci="all",
                          rng=np.random.default_rng(1))
    pd.testing.assert_frame_equal(r1, r2)
    assert r1["estimate"].iloc[0] == np.median(x - y)
    r3 = paired_bootstrap(x, y, statistic=np.median, draws=300, rng=1)
    r4 = paired_bootstrap(x, y, statistic="median", draws=300, rng=1)
    np.testing.assert_allclose(r3[["ci_lower", "ci_upper"]], r4[["ci_lower", "ci_upper"]])


# --------------------------------------------------------------- sign flip ---

def _enumerated_sign_flip(u, alternative):
    t = u.sum()
    ts = np.array([np.dot(s, u) for s in itertools.product([-1, 1], repeat=len(u))])
    if alternative == "greater":
        return np.mean(ts >= t - 1e-9)
    if alternative == "less":
        return np.mean(ts <= t + 1e-9)
    return np.mean(np.abs(ts) >= abs(t) - 1e-9)


@pytest.mark.parametrize("d", [[1, 1, 1, 0], [0.3, -0.1, 0.25, 0.4, -0.05],
                               [1, -1, 1, 1, -1, 1, 0, 1], [2.0, 2.0, -2.0, 1.0, 1.0, -1.0]])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_sign_flip_exact_matches_hand_enumeration(d, alternative):
    d = np.asarray(d, float)
    res = sign_flip(d, np.zeros_like(d), alternative=alternative).iloc[0]
    assert res["method"] == "exact" and res["n_resamples"] == 2 ** np.sum(d != 0)
    np.testing.assert_allclose(res["p_value"], _enumerated_sign_flip(d, alternative),
                               rtol=TOL["exact"])
    np.testing.assert_allclose(res["estimate"], d.mean())


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_sign_flip_exact_matches_scipy_permutation_test(alternative):
    x, y = DATA["cont10"]
    res = sign_flip(x, y, alternative=alternative)["p_value"].iloc[0]
    ref = stats.permutation_test((x, y), lambda a, b, axis: np.mean(a - b, axis=axis),
                                 permutation_type="samples", vectorized=True,
                                 n_resamples=np.inf, alternative=alternative)
    np.testing.assert_allclose(res, ref.pvalue, rtol=TOL["exact"])


def test_sign_flip_monte_carlo_within_mc_error_of_exact():
    x, y = DATA["cont60"]
    x, y = x[:30], y[:30]
    exact = sign_flip(x, y, method="exact")["p_value"].iloc[0]
    R = 20000
    mc = sign_flip(x, y, n_resamples=R, rng=42).iloc[0]
    assert mc["method"] == "monte_carlo" and mc["n_resamples"] == R
    assert abs(mc["p_value"] - exact) < 5 * math.sqrt(exact * (1 - exact) / R) + 2 / R
    again = sign_flip(x, y, n_resamples=R, rng=42)["p_value"].iloc[0]
    assert again == mc["p_value"]


def test_sign_flip_cluster_flips_cluster_sums():
    d = np.array([0.5, -0.2, 0.3, 0.1, 0.4, -0.6, 0.2, 0.2, 0.05])
    cl = np.array([0, 0, 1, 1, 1, 2, 3, 3, 4])
    res = sign_flip(d, np.zeros_like(d), cluster=cl).iloc[0]
    sums = np.bincount(cl, weights=d)
    np.testing.assert_allclose(res["p_value"], _enumerated_sign_flip(sums, "two-sided"))
    assert res["n_clusters"] == 5 and res["n_resamples"] == 32


# ------------------------------------------------------- input handling ------

def test_long_form_matches_arrays_and_is_row_order_invariant():
    x, y = DATA["quart60"]
    df = _long(x, y)
    shuffled = df.sample(frac=1.0, random_state=3)
    for fn in (paired_t, wilcoxon, effect_sizes):
        arr = fn(x, y, a="A", b="B")
        pd.testing.assert_frame_equal(fn(df, a="A", b="B"), arr)
        pd.testing.assert_frame_equal(fn(shuffled, a="A", b="B"), arr)


def test_long_form_drops_unpaired_cells_and_reports_them():
    x, y = DATA["bin30"]
    df = _long(x, y)
    df = df.drop(index=[0, 1, 30 + 5])  # A misses q0, q1; B misses q5
    res = mcnemar(df, a="A", b="B")
    assert res["n"].iloc[0] == 27
    assert res.attrs["mixrank"]["n_unpaired_a"] == 1 and res.attrs["mixrank"]["n_unpaired_b"] == 2
    keep = ~np.isin(np.arange(30), [0, 1, 5])
    pd.testing.assert_frame_equal(res[["b", "c", "p_value"]],
                                  mcnemar(x[keep], y[keep])[["b", "c", "p_value"]])


def test_pair_by_and_default_keys():
    pdata = paired_arrays(_long(np.ones(4), np.zeros(4), extra={"prompt": "p"}), a="A", b="B")
    assert pdata.keys == ("subject", "question", "prompt")
    df = _long(np.ones(4), np.zeros(4)).rename(columns={"question": "item"})
    assert paired_arrays(df, a="A", b="B", pair_by=["item"]).keys == ("item",)


BAD_INPUTS = [
    (lambda: mcnemar([1, 0, np.nan], [1, 0, 1]), "missing value \\(NaN\\) at position 2"),
    (lambda: paired_t([1, 0, 1], [1, 0]), "x has 3 scores and y has 2"),
    (lambda: mcnemar([1, 0, 2], [1, 0, 1]), "needs 0/1 scores.*2.0"),
    (lambda: mcnemar([1, 0, 0.5], [1, 0, 1]), "needs 0/1 scores"),
    (lambda: paired_t(["a", "b"], [1, 0]), "non-numeric value 'a' at position 0"),
    (lambda: paired_t([1, 0]), "got one array x but no y"),
    (lambda: paired_t(np.ones((2, 2)), np.ones((2, 2))), "one-dimensional"),
    (lambda: mcnemar(_long(np.ones(3), np.zeros(3)), a="A", b="C"),
     "model 'C' .* available models: \\['A', 'B'\\]"),
    (lambda: mcnemar(_long(np.ones(3), np.zeros(3)), a="A", b="A"), "the same model"),
    (lambda: mcnemar(_long(np.ones(3), np.zeros(3))), "a=None, b=None"),
    (lambda: mcnemar(_long(np.ones(3), np.zeros(3)), a="A", b="B", score="acc"),
     "no score column 'acc'"),
    (lambda: mcnemar(_long(np.ones(3), np.zeros(3)), a="A", b="B", pair_by="item"),
     "pairing key column\\(s\\) \\['item'\\]"),
    (lambda: paired_t([1.0, 2.0], [0.5, 0.2], alternative="bigger"), "alternative='bigger'"),
    (lambda: paired_t([1.0, 2.0], [0.5, 0.2], level=95), "level=95"),
    (lambda: mcnemar([1, 0], [0, 1], method="fisher"), "method='fisher'"),
    (lambda: wilcoxon([1.0, 2.0], [0.5, 0.2], zero_method="zsplit"), "zero_method='zsplit'"),
    (lambda: paired_bootstrap([1.0, 2.0], [0.5, 0.2], draws=0), "B=0"),
    (lambda: paired_bootstrap([1.0, 2.0], [0.5, 0.2], ci="basic"), "ci='basic'"),
    (lambda: paired_bootstrap([1.0, 2.0], [0.5, 0.2], cluster=[1, 2, 3]), "3 labels"),
    (lambda: paired_bootstrap([1.0, 2.0], [0.5, 0.2], cluster="subject"), "column name"),
    (lambda: sign_flip(np.ones(45), np.zeros(45), method="exact"), "limited to 40"),
]


@pytest.mark.parametrize("call,match", BAD_INPUTS)
def test_malformed_inputs_raise_data_error(call, match):
    with pytest.raises(DataError, match=match):
        call()


def test_no_common_cells():
    df = _long(np.ones(3), np.zeros(3))
    df.loc[df["model"] == "B", "question"] = ["z1", "z2", "z3"]
    with pytest.raises(DataError, match="share no cell"):
        paired_t(df, a="A", b="B")


def test_duplicated_cell_is_named():
    df = _long(np.ones(4), np.zeros(4))
    df = pd.concat([df, df.iloc[[2]]], ignore_index=True)
    # pairing is the frame builder's: its message names the first duplicated keys
    with pytest.raises(DataError, match="have several rows, first \\{'subject': 's2', "
                                        "'question': 'q2', 'model': 'A'\\}"):
        mcnemar(df, a="A", b="B")


def test_nan_score_in_long_form_and_inconsistent_cluster():
    df = _long(np.ones(4), np.zeros(4))
    df.loc[5, "correct"] = np.nan
    with pytest.raises(DataError, match="column 'correct' \\(model 'B'\\) has a missing value"):
        mcnemar(df, a="A", b="B")
    df = _long(np.ones(4), np.zeros(4), extra={"team": ["t1"] * 4 + ["t1", "t2", "t1", "t1"]})
    with pytest.raises(DataError, match="cluster column 'team' takes several values on cell "
                                        "\\(subject="):
        paired_bootstrap(df, a="A", b="B", cluster="team")


def test_too_few_cells_or_clusters():
    with pytest.raises(DesignError, match="at least 2"):
        paired_t([1.0], [0.0])
    with pytest.raises(DesignError, match="at least 2 clusters"):
        paired_bootstrap([1.0, 0.0, 1.0], [0.0, 0.0, 1.0], cluster=["g"] * 3)


def test_inputs_not_modified():
    x = np.array([0.2, 0.5, 0.9, 0.4])
    y = pd.Series([0.1, 0.7, 0.3, 0.4], index=[10, 11, 12, 13])
    xc, yc = x.copy(), y.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fn in (paired_t, wilcoxon, effect_sizes, sign_flip):
            fn(x, y)
        paired_bootstrap(x, y, draws=50, rng=0)
    np.testing.assert_array_equal(x, xc)
    pd.testing.assert_series_equal(y, yc)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=2, max_size=40))
def test_swapping_models_mirrors_results(pairs):
    x = np.array([p[0] for p in pairs], float)
    y = np.array([p[1] for p in pairs], float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        ab = mcnemar(x, y, method="all")
        ba = mcnemar(y, x, method="all")
        np.testing.assert_allclose(ab["p_value"], ba["p_value"], rtol=1e-12)
        assert (ab["b"] == ba["c"]).all()
        e_ab, e_ba = effect_sizes(x, y).iloc[0], effect_sizes(y, x).iloc[0]
        np.testing.assert_allclose([e_ab["estimate"], e_ab["cohen_h"]],
                                   [-e_ba["estimate"], -e_ba["cohen_h"]], atol=1e-14)
        s_ab = sign_flip(x, y, method="exact" if len(x) <= 20 else "monte_carlo", rng=0)
        s_ba = sign_flip(y, x, method="exact" if len(x) <= 20 else "monte_carlo", rng=0)
        np.testing.assert_allclose(s_ab["p_value"], s_ba["p_value"])
