"""Summaries of the verdict table: mixrank.design.summaries.

References: an independent pandas computation (pd.cut + groupby) of the
unresolved share per |delta| bucket, a hand-worked table, the shortcut
formula of mixrank.design.power.audit (tested against the paper's worked example
in test_power.py) and the Wald N* for Gaussian differences (bootstrap N*).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mixrank
from mixrank.design.power.audit import shortcut_n
from mixrank.design.resolution import resolution_table
from mixrank.design.summaries import pair_audit, unresolved_by_effect
from mixrank.errors import DesignError

K = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) ** 2


def _independent(tab, edges, qcol, vcol):
    cut = pd.cut(tab["estimate"].abs(), bins=edges, right=False)
    g = pd.DataFrame({"b": cut, "unres": ~tab[vcol].astype(bool), "r": 1 / tab[qcol]})
    return g.groupby("b", observed=False).agg(n=("unres", "size"), u=("unres", "sum"),
                                              med=("r", "median"), worst=("r", "max"))


def test_hand_worked_buckets():
    # n = 1000, sigma_d = 0.5: q = 1000 delta^2 / (K 0.25) -> resolved iff |delta| >= 0.0443
    tab = resolution_table(pd.DataFrame({
        "model_a": list("abcde"), "model_b": list("bcdef"),
        "estimate": [0.005, -0.015, 0.03, 0.06, 0.2], "n": 1000, "sigma_d": 0.5}),
        adjust=None, anytime=False, cluster=False)
    out = unresolved_by_effect(tab, edges=[0, 0.02, 0.05, np.inf])
    assert out["paradigm"].tolist() == ["fixed"] * 3
    assert out["n_pairs"].tolist() == [2, 1, 2]
    assert out["n_unresolved"].tolist() == [2, 1, 0]
    assert out["share_unresolved"].tolist() == [1.0, 1.0, 0.0]
    r = K * 0.25 / (1000 * np.array([0.005, 0.015, 0.03, 0.06, 0.2]) ** 2)
    assert out["r_median"].tolist() == pytest.approx([np.median(r[:2]), r[2], np.median(r[3:])])
    assert out["r_worst"].tolist() == pytest.approx([r[0], r[2], r[3]])
    empty = unresolved_by_effect(tab, edges=[0, 0.001, 1])
    assert empty.loc[0, "n_pairs"] == 0 and np.isnan(empty.loc[0, "share_unresolved"])


def test_real_leaderboard_against_pandas(shared_data):
    data = shared_data("chembench")
    data = data[data["prompt"] == "default"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit("correct ~ model + (1|subject)", data, estimand="cells")
        tab = fit.resolution(columns="all", pairs="all", top=10)
    edges = [0, 0.01, 0.02, 0.05, 0.1, np.inf]
    out = unresolved_by_effect(tab, edges=edges)
    assert set(out["paradigm"]) == {"fixed", "multiplicity", "anytime", "cluster"}
    for p, (q, v) in {"fixed": ("q", "resolved"), "cluster": ("q_cluster", "resolved_cluster"),
                      "anytime": ("q_anytime", "resolved_anytime")}.items():
        want = _independent(tab, edges, q, v)
        got = out[out["paradigm"] == p]
        assert got["n_pairs"].tolist() == want["n"].tolist()
        assert got["n_unresolved"].tolist() == want["u"].astype(int).tolist()
        np.testing.assert_allclose(got["r_median"], want["med"], rtol=1e-12)
        np.testing.assert_allclose(got["r_worst"], want["worst"], rtol=1e-12)
    assert out.loc[out["paradigm"] == "fixed", "n_pairs"].sum() == 45
    # stricter paradigms leave at least as many pairs unresolved in every bucket
    f = out[out["paradigm"] == "fixed"]["n_unresolved"].to_numpy()
    c = out[out["paradigm"] == "cluster"]["n_unresolved"].to_numpy()
    assert np.all(c >= f)
    with pytest.raises(DesignError, match="increasing"):
        unresolved_by_effect(tab, edges=[0.1, 0.05])
    with pytest.raises(DesignError, match="verdict table"):
        unresolved_by_effect(pd.DataFrame({"x": [1]}))


def test_pair_audit_shortcut_ratio_and_bootstrap_n_star():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    out = pair_audit(fit, pairs="adjacent", rng=3)
    for _, r in out.iterrows():
        want = shortcut_n(r["p_a"], r["p_b"], rho=r["rho"])
        assert r["shortcut_n"] == pytest.approx(want, rel=1e-12)
        assert r["n_star"] == pytest.approx(K * r["sigma_d"] ** 2 / r["estimate"] ** 2)
        assert r["shortcut_ratio"] == pytest.approx(r["shortcut_n"] / r["n_star"])
    # the lemma: about 1/2 for small effects
    assert out["shortcut_ratio"].between(0.3, 0.7).all()


def test_bootstrap_n_star_is_wald_for_gaussian_scores():
    rng = np.random.default_rng(42)
    n = 3000
    a = rng.normal(0.55, 0.2, n)
    b = a - 0.02 + rng.normal(0, 0.3, n)
    df = pd.DataFrame({"model": ["A"] * n + ["B"] * n, "question": list(range(n)) * 2,
                       "correct": np.concatenate([a, b])})
    fit = mixrank.fit("correct ~ model", df)
    out = pair_audit(fit, pairs=[("A", "B")], draws=4000, rng=5)
    # quantile-based spread of 4000 bootstrap means: relative MC SD about 2-3%
    assert out.loc[0, "bootstrap_ratio"] == pytest.approx(1.0, abs=0.1)
    assert np.isnan(out.loc[0, "shortcut_n"])  # continuous scores: no Cohen-h shortcut
