"""One answer per pair where the contrasts default to the unit step-down: each pair's
``p_value`` and ``p_greater`` are its own unit sign-flip test, its interval that test
inverted, and the step-down ``p_adjusted`` is never below it.

Reference: exact enumeration from the raw rows (pandas only: the paired differences of the
two models' common cells, each unit's share of the mean, every one of the 2^T sign vectors);
nothing is read from the code under test but the answers compared.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

import mixrank


def _data(T: int, K: int = 4, seed: int = 3) -> pd.DataFrame:
    """0/1 answers, T subjects of unequal size, K models with different abilities."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, 15, size=T)
    rows = []
    for t, n in enumerate(sizes):
        u = rng.normal(0, 0.8)
        for i in range(n):
            q = rng.normal(0, 1)
            for m in range(K):
                eta = 0.6 * (K - m) / K + u * (m % 2) + q
                rows.append(dict(model=f"m{m}", subject=f"s{t:02d}", question=f"q{t}_{i}",
                                 correct=int(rng.random() < 1 / (1 + np.exp(-eta)))))
    return pd.DataFrame(rows)


def _fit(df: pd.DataFrame) -> mixrank.FitResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit("correct ~ model + (1|subject)", df)


def _brute(df: pd.DataFrame, a: str, b: str) -> tuple[float, float]:
    """(two-sided p, P(flipped total >= observed)) of the pair's cell-mean difference."""
    wide = df.pivot_table(index=["subject", "question"], columns="model", values="correct")
    d = (wide[a] - wide[b]).dropna()
    tot = (d / len(d)).groupby(level="subject").sum().to_numpy()
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=tot.size)))
    S, obs = signs @ tot, tot.sum()
    tol = 1e-9 * np.abs(tot).sum()         # ties (a total of exactly 0 sums to +-1e-18)
    return float(np.mean(np.abs(S) >= abs(obs) - tol)), float(np.mean(S >= obs - tol))


@pytest.mark.parametrize("T", [6, 9])
def test_p_values_are_the_pairs_own_sign_flip_tests(T):
    df = _data(T)
    fit = _fit(df)
    tab = fit.contrasts()
    meta = tab.attrs["mixrank"]
    assert meta["adjust"] == "stepdown" and meta["ci_method"] == "randomization"
    assert f"all {2 ** (T - 1)} sign flips of 'subject' and their mirror images" in meta["p_value"]
    for _, r in tab.iterrows():
        two, greater = _brute(df, r["model_a"], r["model_b"])
        assert r["p_value"] == pytest.approx(two, rel=1e-12)
        assert r["p_greater"] == pytest.approx(greater, rel=1e-12)


@pytest.mark.parametrize("name, T", [("example", 12), ("chembench", 9), ("small", 7)])
def test_one_answer_per_pair(name, T):
    df = {"example": mixrank.load_example, "chembench": lambda: mixrank.load_dataset("chembench"),
          "small": lambda: _data(7, K=6, seed=11)}[name]()
    fit = _fit(df)
    assert int(fit.frame.term_levels["subject"]) == T
    tab = fit.contrasts()
    assert tab.attrs["mixrank"]["adjust"] == "stepdown"
    excludes = (tab["ci_lower"] > 0) | (tab["ci_upper"] < 0)
    # the interval excludes 0 exactly when the pair's own test rejects at its level
    np.testing.assert_array_equal(excludes, tab["p_value"] < 1 - fit.level)
    # the step-down's first step is that test: its adjusted p-value is never smaller
    assert (tab["p_adjusted"] >= tab["p_value"] - 1e-15).all()
    # family-wise rejections are among the pairs whose interval excludes 0
    assert not ((tab["p_adjusted"] < 0.05) & ~excludes).any()
    # the direction: p_greater small exactly when the estimate is large
    pos = tab["estimate"] > 0
    assert (tab.loc[pos, "p_greater"] <= tab.loc[pos, "p_value"] / 2 + 1e-15).all()
    # Holm adjusts these p-values (statsmodels' multipletests)
    holm = fit.contrasts(adjust="holm")
    np.testing.assert_allclose(holm["p_value"], tab["p_value"])
    np.testing.assert_allclose(holm["p_adjusted"],
                               multipletests(tab["p_value"], method="holm")[1])


def test_t_reference_where_the_flips_do_not_give_the_intervals():
    """Five units (2^5 flips: no 2.5% tail), max-t (simultaneous intervals), the explicit
    ``ci="t"`` and a Satterthwaite fit keep the t test and interval."""
    from scipy import stats

    five = _fit(_data(5))
    sat = mixrank.fit("correct ~ model + (1|subject)", _data(9), df="satterthwaite")
    nine = _fit(_data(9))
    for tab in (five.contrasts(), sat.contrasts(), nine.contrasts(adjust="maxt"),
                nine.contrasts(ci="t")):
        assert "ci_method" not in tab.attrs["mixrank"]
        np.testing.assert_allclose(tab["p_value"],
                                   2 * stats.t.sf(tab["statistic"].abs(), tab["df"]))


def test_a_stepdown_beside_t_p_values_still_needs_the_pairs_own_test():
    """With ``ci="t"`` the table's p-values are the t's (Bell-McCaffrey df near 2 on
    ChemBench): a step-down rejection also needs the pair's own test, so ``p_adjusted`` is
    the larger of the two and the family-wise rejections keep intervals that exclude 0."""
    fit = _fit(mixrank.load_dataset("chembench"))
    t = fit.contrasts(ci="t")
    flips = fit.contrasts()
    assert t.attrs["mixrank"]["adjust"] == "stepdown"
    np.testing.assert_allclose(t["p_adjusted"], np.maximum(flips["p_adjusted"], t["p_value"]))
    excludes = (t["ci_lower"] > 0) | (t["ci_upper"] < 0)
    assert not ((t["p_adjusted"] < 0.05) & ~excludes).any()
    assert 0 < int((t["p_adjusted"] < 0.05).sum()) < int((flips["p_adjusted"] < 0.05).sum())
