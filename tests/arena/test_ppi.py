"""Prediction-powered BT against ppi_py; human-only BT against FastChat's method; judges.

References: ppi_py's ``ppi_logistic_pointestimate`` / ``ppi_logistic_ci``
(PPI++, Angelopoulos, Duchi and Zrnic 2023) on the same +/-1 design with the
first model's column dropped; FastChat's ``compute_mle_elo`` (the weighted
logistic regression on the +/-log(10) design with ties as two half-wins,
Elo = 400 * coef + 1000, coefficients summing to zero) re-implemented here
with statsmodels, and its row-resampling bootstrap.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import mixrank
from mixrank.errors import DataQualityWarning, OptionError

ppi_py = pytest.importorskip("ppi_py")

JUDGES = ["winner_gpt4", "winner_claude3", "winner_gpt35"]


@pytest.fixture(scope="module")
def battles() -> pd.DataFrame:
    return mixrank.load_dataset("chatbot_arena")


def _subset(df: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    keep = df.model_a.isin(models) & df.model_b.isin(models)
    return df[keep].reset_index(drop=True)


def _hide(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Keep the human vote on n random battles, blank the rest."""
    out = df.copy()
    g = np.random.default_rng(seed)
    keep = np.zeros(len(df), dtype=bool)
    keep[g.choice(len(df), n, replace=False)] = True
    out.loc[~keep, "winner"] = None
    return out


def _design(df: pd.DataFrame, models: list[str]) -> np.ndarray:
    idx = {m: i for i, m in enumerate(models)}
    X = np.zeros((len(df), len(models)))
    X[np.arange(len(df)), df.model_a.map(idx).to_numpy()] = 1.0
    X[np.arange(len(df)), df.model_b.map(idx).to_numpy()] = -1.0
    return X[:, 1:]


def _y(col: pd.Series) -> np.ndarray:
    return col.map({"model_a": 1.0, "model_b": 0.0}).to_numpy(dtype=float)


def test_pp_bt_equals_ppi_py_logistic_ppi_plus_plus(battles):
    models = sorted(["gpt-4", "claude-v1", "vicuna-13b", "koala-13b", "alpaca-13b",
                     "chatglm-6b"])
    df = _subset(battles, models)
    df = df[~df.winner.str.startswith("tie") & ~df.winner_gpt4.str.startswith("tie")]
    df = _hide(df.reset_index(drop=True), 600, seed=3)
    lab = df.winner.notna().to_numpy()
    res = mixrank.arena(df, judge="winner_gpt4", cluster=False)
    assert res.models == tuple(models)
    X, Y, Yh = _design(df, models), _y(df.winner), _y(df.winner_gpt4)
    ref = ppi_py.ppi_logistic_pointestimate(X[lab], Y[lab], Yh[lab], X[~lab], Yh[~lab])
    np.testing.assert_allclose(res.fit.theta[1:len(models)], ref, atol=1e-6)
    lam = res.judge.lam[0]
    assert 0 < lam < 1
    lo, hi = ppi_py.ppi_logistic_ci(X[lab], Y[lab], Yh[lab], X[~lab], Yh[~lab], alpha=0.1,
                                    lam=float(lam))
    se = np.sqrt(np.diag(res.cov))[1:len(models)]
    q = stats.norm.ppf(0.95)
    # ppi_logistic_ci refits at the given lam: the same point, and the same sandwich
    np.testing.assert_allclose(res.fit.theta[1:len(models)] - q * se, lo, atol=1e-6)
    np.testing.assert_allclose(res.fit.theta[1:len(models)] + q * se, hi, atol=1e-6)
    # lam = 0 is the human-only fit on the labelled battles
    zero = mixrank.arena(df, judge="winner_gpt4", lam=0.0, cluster=False)
    human = mixrank.arena(df[lab], cluster=False)
    np.testing.assert_allclose(zero.fit.theta, human.fit.theta, atol=1e-8)
    np.testing.assert_allclose(np.sqrt(np.diag(zero.cov)),
                               np.sqrt(np.diag(mixrank.arena(df[lab], se="sandwich",
                                                             cluster=False).cov)), rtol=2e-3)


def test_human_only_bt_equals_fastchat_mle_elo(battles):
    res = mixrank.arena(battles, cluster=False)
    models = sorted(set(battles.model_a) | set(battles.model_b))
    # FastChat: pivot tables of wins per ordered pair, ties counted once each way, wins twice
    idx = {m: i for i, m in enumerate(models)}
    K = len(models)
    a = battles.model_a.map(idx).to_numpy()
    b = battles.model_b.map(idx).to_numpy()
    w = battles.winner.to_numpy()
    win = np.zeros((K, K))
    np.add.at(win, (a[w == "model_a"], b[w == "model_a"]), 2.0)
    np.add.at(win, (b[w == "model_b"], a[w == "model_b"]), 2.0)
    tie = np.isin(w, ["tie", "tie (bothbad)"])
    np.add.at(win, (a[tie], b[tie]), 1.0)
    np.add.at(win, (b[tie], a[tie]), 1.0)
    rows, ys, wts = [], [], []
    for i in range(K):
        for j in range(K):
            if i == j:
                continue
            x = np.zeros(K)
            x[i], x[j] = np.log(10), -np.log(10)
            rows += [x, x]
            ys += [1.0, 0.0]
            wts += [win[i, j], win[j, i]]
    X, Y, W = np.array(rows), np.array(ys), np.array(wts)
    # the +/-log(10) design has the ones vector in its null space: FastChat's solver (started
    # at 0) stays in the sum-zero subspace; fit without the first column, then centre
    glm = sm.GLM(Y, X[:, 1:], family=sm.families.Binomial(), freq_weights=W).fit(tol=1e-13)
    coef = np.concatenate([[0.0], glm.params])
    elo = 400 * (coef - coef.mean()) + 1000
    ours = res.model_scores().set_index("model").loc[models, "estimate"].to_numpy()
    np.testing.assert_allclose(ours, elo, atol=1e-6)
    assert res.model_scores().attrs["mixrank"]["scale"] == "elo"


def test_bootstrap_matches_fastchat_row_bootstrap_in_distribution(battles):
    models = ["gpt-4", "claude-v1", "gpt-3.5-turbo", "vicuna-13b", "koala-13b"]
    df = _subset(battles, models)
    ours = mixrank.arena(df, se="bootstrap", draws=400, rng=7, cluster=False)
    sd_ours = ours.model_scores().set_index("model")["std_error"]
    g = np.random.default_rng(11)
    draws = []
    for _ in range(300):   # FastChat: resample battles (rows) with replacement, refit
        boot = df.iloc[g.integers(0, len(df), len(df))]
        draws.append(mixrank.arena(boot, cluster=False).model_scores()
                     .set_index("model")["estimate"])
    sd_rows = pd.concat(draws, axis=1).std(axis=1, ddof=1)
    ratio = (sd_ours / sd_rows.loc[sd_ours.index]).to_numpy()
    # SD estimates from 400 and 300 draws: relative MC SE ~ 5%; band 4 SEs per model
    assert np.all(np.abs(ratio - 1) < 0.25) and abs(ratio.mean() - 1) < 0.1
    # and both agree with the per-battle sandwich (not the binomial information, which
    # overstates the variance of a half-tie outcome: 30% of these votes are ties)
    sand = mixrank.arena(df, se="sandwich", cluster=False).model_scores().set_index("model")
    assert np.all(np.abs(sd_ours / sand["std_error"] - 1) < 0.15)


def test_several_judges_one_lambda_each(battles):
    df = _hide(battles, 1500, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        res = mixrank.arena(df, judge=JUDGES, cluster=False)
    lam = res.judge.lam
    assert lam.shape == (3,) and np.all(lam >= 0) and lam.sum() <= 1 + 1e-12
    assert lam[0] > lam[2]      # gpt-4 agrees with humans far more than gpt-3.5
    one = mixrank.arena(df, judge="winner_gpt4", cluster=False)
    human = mixrank.arena(df[df.winner.notna()], se="sandwich", cluster=False)
    v = [np.trace(r.cov) for r in (res, one, human)]
    assert v[0] <= v[1] * 1.02 and v[1] < v[2]     # each judge (tuned) does not hurt
    # a judge that guesses gets no weight
    noise = df.assign(winner_coin=np.where(np.random.default_rng(1).random(len(df)) < 0.5,
                                           "model_a", "model_b"))
    both = mixrank.arena(noise, judge=["winner_gpt4", "winner_coin"], cluster=False)
    assert both.judge.lam[1] < 0.05
    board = res.leaderboards()
    assert {"model", "human_only", "judge_only_winner_gpt4", "corrected",
            "corrected_lower"} <= set(board.columns)
    agree = res.agreement()
    assert set(agree.judge) == set(JUDGES) and agree.agreement.between(0, 1).all()


def test_position_bias_gpt35_positive_humans_near_zero(battles):
    human = mixrank.arena(battles, position=True, cluster=False).covariates().set_index("term")
    h = human.loc["position"]
    assert h.ci_lower < 0 < h.ci_upper and abs(h.estimate) < 0.03
    df = _hide(battles, 2000, seed=2)
    with pytest.warns(DataQualityWarning, match="winner_gpt35.*first-position"):
        res = mixrank.arena(df, judge=["winner_gpt4", "winner_gpt35"], position=True,
                            cluster=False)
    diag = res.judges().set_index("judge")
    g35 = diag.loc["winner_gpt35"]
    assert g35.position_lower > 1.0 and g35.position_differs          # clearly positive
    assert diag.loc["human"].position_lower < 0 < diag.loc["human"].position_upper
    assert g35.share_model_a > 0.8
    cov = res.covariates().set_index("term")
    assert "position" in cov.index           # the corrected fit's own (human) position term
    assert cov.loc["position", "ci_lower"] < 0.3


def test_judge_inputs_are_checked(battles):
    df = _hide(_subset(battles, ["gpt-4", "claude-v1", "vicuna-13b"]), 200, seed=1)
    with pytest.raises(OptionError, match="ties='half'"):
        mixrank.arena(df, judge="winner_gpt4", ties="drop")
    with pytest.raises(mixrank.DataError, match="not in the battle log"):
        mixrank.arena(df, judge="winner_gpt5")
    with pytest.raises(OptionError, match="lam="):
        mixrank.arena(df, judge="winner_gpt4", lam=1.5)
    with pytest.raises(OptionError, match="lam="):
        mixrank.arena(df, judge=JUDGES, lam=[0.6, 0.6, 0.0])
    with pytest.raises(OptionError, match="judge="):
        mixrank.arena(df, lam=0.5)
    bad = df.copy()
    bad.loc[3, "winner_gpt4"] = None
    with pytest.raises(mixrank.DataError, match="missing verdict"):
        mixrank.arena(bad, judge="winner_gpt4")
    with pytest.raises(OptionError, match="without judge"):
        mixrank.arena(df.dropna(subset=["winner"])).judges()
