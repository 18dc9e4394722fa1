"""Sensitivity of the clustered verdict: mixrank.design.sensitivity (docs/sensitivity.md).

References: a hand-worked 4-subject example (balanced, interior components,
where REML equals the aggregate t: estimate = mean, Var = s^2(subject means)/T);
refits of the raw ChemBench rows without each topic (mixrank.fit on the
reduced data, a separate code path from the frame subsetting); the null
distribution of the design effect under random balanced clusterings
(a function of F(T-1, N-T), integrated numerically); the plug-in bootstrap
identity E[Var_boot] = (T-1)/T s^2(cluster means)/T for balanced clusters.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

import mixrank
from mixrank.design.sensitivity import stability
from mixrank.design.sensitivity.oneway import level_sums, oneway_fit
from mixrank.errors import DesignError
from tests.reference.make_resolution_cells import chembench_unbalanced

K = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) ** 2

# d = score(A) - score(B) per question; B scores 0 everywhere
HAND = {"s1": [0.9, 1.0, 1.1], "s2": [0.1, 0.2, 0.3], "s3": [0.5, 0.6, 0.7],
        "s4": [1.3, 1.5, 1.4]}


def _hand_data():
    rows = []
    for s, ds in HAND.items():
        for i, d in enumerate(ds):
            q = f"{s}q{i}"
            rows += [dict(model="A", subject=s, question=q, correct=d),
                     dict(model="B", subject=s, question=q, correct=0.0)]
    return pd.DataFrame(rows)


def _quiet_fit(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(*args, **kw)


def test_loso_hand_worked_four_subjects():
    fit = _quiet_fit("correct ~ model + (1|subject)", _hand_data())
    tab = fit.sensitivity("loso", pairs=[("A", "B")])
    assert tab["label"].tolist() == ["s1", "s2", "s3", "s4"]
    for _, r in tab.iterrows():
        kept = [v for s, v in HAND.items() if s != r["label"]]
        d = np.concatenate(kept)
        means = np.array([np.mean(v) for v in kept])
        est = d.mean()                                   # balanced: every estimand
        var = means.var(ddof=1) / 3                       # aggregate t = REML (interior)
        sd2 = d.var(ddof=1)
        assert r["estimate"] == pytest.approx(est, rel=1e-12)
        assert r["n"] == 9 and r["sigma_d"] == pytest.approx(math.sqrt(sd2), rel=1e-12)
        assert r["std_error"] ** 2 == pytest.approx(var, rel=1e-7)
        assert r["q"] == pytest.approx(est**2 * 9 / (K * sd2), rel=1e-12)
        assert r["q_cluster"] == pytest.approx(est**2 / (K * var), rel=1e-7)
        assert r["variance_ratio"] == pytest.approx(var / (sd2 / 9), rel=1e-7)
        assert r["resolved_cluster"] == (est**2 / (K * var) >= 1)
    # leaving out s2 (the smallest gap) or s4 (the largest) moves the verdict the most
    summ = stability(tab)
    assert summ.loc[0, "replicates"] == 4 and summ.loc[0, "failed"] == 0
    want = np.mean(tab["resolved_cluster"] == summ.loc[0, "resolved_cluster"])
    assert summ.loc[0, "stability"] == pytest.approx(want)


def test_loso_matches_refits_of_the_raw_data(shared_data):
    data = chembench_unbalanced(shared_data("chembench"))
    models = ["claude3", "gpt-4", "claude2"]
    data = data[data["model"].isin(models)]
    fit = _quiet_fit("correct ~ model + (1|subject)", data)
    tab = fit.sensitivity("loso", pairs="adjacent")
    assert set(tab["label"]) == set(data["subject"].unique())
    for topic, g in tab.groupby("label"):
        ref = _quiet_fit("correct ~ model + (1|subject)", data[data["subject"] != topic])
        want = ref.resolution(columns="all", pairs=list(zip(g["model_a"], g["model_b"])), adjust=None,
                              anytime=False)
        np.testing.assert_allclose(g["estimate"], want["estimate"], rtol=1e-6, atol=1e-12)
        # the refits' model-based SE (the LOSO rows refit the mixed model; the verdict
        # table's std_error is the default contrast's now)
        reml = [ref.pair(a, b).std_error for a, b in zip(g["model_a"], g["model_b"])]
        np.testing.assert_allclose(g["std_error"], reml, rtol=1e-5)
        np.testing.assert_allclose(g["q"], want["q"], rtol=1e-6)
        # q_cluster on the refit's model-based variance: delta^2 / (K Var_REML)
        var = np.maximum(np.square(reml), want["variance_iid"].to_numpy())
        K = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) ** 2
        np.testing.assert_allclose(g["q_cluster"], want["estimate"] ** 2 / (K * var), rtol=1e-5)


def test_oneway_fast_path_matches_the_engine(shared_data):
    data = chembench_unbalanced(shared_data("chembench"))
    for estimand in ("gls", "cells", "units"):
        fit = _quiet_fit("correct ~ model + (1|subject)", data, estimand=estimand)
        f = fit.frame
        for p in fit.pairs[:8]:
            j, k = f.model_index(p.model_a), f.model_index(p.model_b)
            m = f.observed[:, j] & f.observed[:, k]
            d = f.scores[m, j] - f.scores[m, k]
            r = oneway_fit(*level_sums(d, f.term_codes["subject"][m], f.term_levels["subject"]),
                           estimand=estimand)
            assert r["estimate"][0] == pytest.approx(p.estimate, rel=1e-6, abs=1e-12)
            assert r["variance"][0] == pytest.approx(p.variance, rel=1e-5)
            assert r["sigma_d"][0] == pytest.approx(p.sigma_d, rel=1e-12)


def _balanced_gaussian(T, m, sd_cluster, rng, sizes=None, hetero=False):
    """Two models; d = cluster effect + noise; B scores 0."""
    sizes = [m] * T if sizes is None else sizes
    rows = []
    for t, mt in enumerate(sizes):
        scale = sd_cluster * (math.sqrt(mt / np.mean(sizes)) * 2 if hetero else 1.0)
        u = rng.normal(0.1, scale)
        for i in range(mt):
            q = f"t{t}q{i}"
            rows += [dict(model="A", subject=f"t{t:03d}", question=q,
                          correct=u + rng.normal(0, 1.0)),
                     dict(model="B", subject=f"t{t:03d}", question=q, correct=0.0)]
    return pd.DataFrame(rows)


def _de_null_mean(T, N):
    """E[DE] under random balanced clustering: DE = max(F (N-1) / ((T-1) F + N - T), 1)."""
    d1, d2 = T - 1, N - T

    def de(f):
        return max(f * (N - 1) / (d1 * f + d2), 1.0)

    val, _ = integrate.quad(lambda f: de(f) * stats.f.pdf(f, d1, d2), 0, np.inf, limit=200)
    return val


def test_random_clusterings_design_effect_centres_on_one():
    rng = np.random.default_rng(1501)
    T, m = 12, 30
    fit = _quiet_fit("correct ~ model + (1|subject)", _balanced_gaussian(T, m, 0.5, rng),
                     estimand="cells")
    R = 400
    tab = fit.sensitivity("clusterings", pairs=[("A", "B")], n_random=R, rng=15)
    de = tab.loc[tab["label"] == "random", "variance_ratio"].to_numpy()
    assert len(de) == R and np.all(de >= 1 - 1e-6)
    assert np.median(de) == pytest.approx(1.0, abs=1e-6)  # P(F <= 1) > 1/2: median exactly 1
    want = _de_null_mean(T, T * m)
    se = de.std(ddof=1) / math.sqrt(R)
    assert abs(de.mean() - want) <= 4 * se, (de.mean(), want, se)
    summ = stability(tab)
    row = summ[summ["grouping"] == "random"].iloc[0]
    assert row["variance_ratio_median"] == pytest.approx(1.0, abs=1e-6)
    # the real clustering (sd 0.5 between subjects, 30 per subject) is far in the tail
    assert row["variance_ratio"] > 4 and row["p_value"] <= 1 / (R + 1) + 1e-12


def test_named_groupings_and_errors():
    fit = _quiet_fit("correct ~ model + (1|subject)", mixrank.load_example())
    pairs = [("m01", "m02")]
    groups = {"half": np.where(fit.frame.cells["subject"] < "s07", "h1", "h2")}
    tab = fit.sensitivity("clusterings", pairs=pairs, groupings=groups, n_random=5, rng=1)
    assert set(tab["label"]) == {"half", "random"}
    with pytest.raises(DesignError, match="'loso', 'bootstrap', 'clusterings'"):
        fit.sensitivity("jackknife", pairs=pairs)
    with pytest.raises(DesignError, match="not a pairing key"):
        fit.sensitivity("clusterings", pairs=pairs, groupings=["topic"])
    with pytest.raises(DesignError, match="whole number"):
        fit.sensitivity("bootstrap", pairs=pairs, draws=0)
    with pytest.raises(DesignError, match="no random term"):
        _quiet_fit("correct ~ model", mixrank.load_example()).sensitivity("loso", pairs=pairs)
    # several kinds at once, comma-separated as in the CLI
    both = fit.sensitivity("loso,bootstrap", pairs=pairs, draws=20, rng=2)
    assert both.attrs["mixrank"]["kinds"] == ["loso", "bootstrap"]
    assert set(both["kind"]) == {"loso", "bootstrap"}


@pytest.mark.slow
def test_cluster_bootstrap_n_star_balanced_agrees_heterogeneous_departs():
    """Balanced: N*_boot / (N* DE) = 1 within MC error (the plug-in (T-1)/T removed by the
    small-cluster factor T/(T-1)).  Heterogeneous sizes with
    size-dependent cluster effects: the model-based DE (one pooled cluster variance)
    understates the variance of the cell mean and the bootstrap N* departs from it."""
    B = 2000
    # relative MC SD of a bootstrap variance from B draws ~ sqrt(2 / (B - 1)) (normal
    # cluster means); band: 4 SD
    band = 4 * math.sqrt(2 / (B - 1))
    rng = np.random.default_rng(20261130)
    T = 40
    fit = _quiet_fit("correct ~ model + (1|subject)", _balanced_gaussian(T, 25, 0.4, rng),
                     estimand="cells")
    s = fit.sensitivity("bootstrap", pairs=[("A", "B")], draws=B, rng=7, summary=True).iloc[0]
    ratio = s["n_star_bootstrap"] / s["n_star_cluster"]
    assert s["variance_ratio"] > 3
    assert abs(ratio - 1) <= band, ratio
    assert s["variance_bootstrap"] == pytest.approx(s["variance_bootstrap_raw"] * T / (T - 1))
    sizes = list(rng.choice([3, 5, 10, 40, 150], size=T))
    het = _quiet_fit("correct ~ model + (1|subject)",
                     _balanced_gaussian(T, 0, 0.4, rng, sizes=sizes, hetero=True),
                     estimand="cells")
    h = het.sensitivity("bootstrap", pairs=[("A", "B")], draws=B, rng=7, summary=True).iloc[0]
    ratio_h = h["n_star_bootstrap"] / h["n_star_cluster"]
    # the model-based variance (one pooled cluster variance) understates the bootstrap's ...
    reml = h["variance_bootstrap"] / het.pair("A", "B").variance
    print(f"\nN*_boot / (N* DE): balanced {ratio:.3f}, heterogeneous {ratio_h:.3f}; "
          f"Var_boot / Var_REML {reml:.3f}")
    assert reml > 1 + 2 * band
    # ... while the verdict table's clustered column, on the default contrast's CR2 SE since
    # agrees with the bootstrap
    assert abs(ratio_h - 1) <= 2 * band


def _unequal_clusters(sizes, sd, hetero, rng):
    """Two models, d = cluster effect + N(0, 1) noise; the exact Var of the cells mean."""
    sizes = np.asarray(sizes)
    scale = sd * (np.sqrt(sizes / sizes.mean()) * 2 if hetero else np.ones(len(sizes)))
    subj = np.repeat(np.arange(len(sizes)), sizes)
    d = rng.normal(0.1, scale)[subj] + rng.normal(0, 1, len(subj))
    n = len(subj)
    q, s = [f"q{i}" for i in range(n)], [f"t{t:03d}" for t in subj]
    data = pd.DataFrame(dict(model=["A"] * n + ["B"] * n, subject=s + s, question=q + q,
                             correct=np.r_[d, np.zeros(n)]))
    return data, float(np.sum(sizes ** 2 * scale ** 2) / n ** 2 + 1 / n)


@pytest.mark.slow
def test_cluster_bootstrap_small_cluster_correction_twelve_unequal_clusters():
    """12 clusters of 5-60 items: the corrected bootstrap variance / the exact variance of
    the cells estimate is 1 within MC error (same-spread clusters), and with cluster effects
    growing with size it comes out above the model-based variance (which understates)."""
    sizes = [5, 8, 12, 15, 20, 25, 30, 35, 40, 45, 50, 60]
    R, B = 150, 200
    rng = np.random.default_rng(2112)
    for hetero in (False, True):
        vb, vm = [], []
        for r in range(R):
            data, true_var = _unequal_clusters(sizes, 0.3, hetero, rng)
            fit = _quiet_fit("correct ~ model + (1|subject)", data, estimand="cells")
            s = fit.sensitivity("bootstrap", pairs=[("A", "B")], draws=B, rng=r,
                                summary=True).iloc[0]
            vb.append(s["variance_bootstrap"] / true_var)
            vm.append(fit.pairs[0].variance / true_var)
        vb_a, vm_a = np.array(vb), np.array(vm)
        se = vb_a.std(ddof=1) / math.sqrt(R)          # MC SE of the mean ratio
        print(f"\nhetero={hetero}: bootstrap {vb_a.mean():.3f} +- {se:.3f}, "
              f"model {vm_a.mean():.3f}")
        if not hetero:
            assert abs(vb_a.mean() - 1) <= 4 * se, (vb_a.mean(), se)
        else:
            diff = vb_a - vm_a                          # paired over the same data sets
            assert diff.mean() > 4 * diff.std(ddof=1) / math.sqrt(R), diff.mean()
            assert vm_a.mean() < 1 - 4 * vm_a.std(ddof=1) / math.sqrt(R)
