"""Chatzi et al.'s protocol on the bundled Chatbot Arena battles: rank sets from few human votes.

Chatzi, Straitouri, Thejaswi and Gomez Rodriguez, "Prediction-Powered Ranking
of Large Language Models" (NeurIPS 2024): the 12 models of their
configuration; the reference ranking from all human votes among them; for n
human votes drawn at random (the rest keep only the LLM verdicts) the share
of draws in which *every* model's rank interval contains its reference rank,
and the mean size of the rank sets (upper - lower + 1), at level 0.90.

Methods: human-only BT (mixrank, simultaneous rank intervals), judge-only
BT (all LLM verdicts, uncorrected), Chatzi et al.'s win-rate estimators
(their PPR with one judge and its human-only variant, re-implemented from the
paper: average win rates, power-tuned lambda, a chi-square ellipsoid turned
into rank sets) and mixrank's prediction-powered BT with one, two and three
judges.  BT methods are scored against the BT ranking of all human votes,
the win-rate ones against the win-rate ranking (each its own estimand).

Run: ``python benchmarks/arena_ppr.py [draws]`` (about 1 s a draw and n);
prints the markdown table of docs/arena.md §9.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pandas as pd
from scipy import stats

import mixrank

MODELS = ["vicuna-13b", "koala-13b", "gpt-3.5-turbo", "gpt-4", "oasst-pythia-12b",
          "alpaca-13b", "claude-v1", "RWKV-4-Raven-14B", "chatglm-6b", "fastchat-t5-3b",
          "palm-2", "claude-instant-v1"]
JUDGES = {"gpt4": "winner_gpt4", "claude3": "winner_claude3", "gpt35": "winner_gpt35"}
LEVEL = 0.90


def battles() -> pd.DataFrame:
    df = mixrank.load_dataset("chatbot_arena")
    keep = df.model_a.isin(MODELS) & df.model_b.isin(MODELS)
    return df[keep].reset_index(drop=True)


def _ranks(score: np.ndarray) -> np.ndarray:
    return 1 + np.argsort(np.argsort(-score, kind="stable"), kind="stable")


# ------------------------------------------------------------------ Chatzi et al.'s estimator

def _wins(df: pd.DataFrame, col: str, idx: dict[str, int]) -> tuple[np.ndarray, ...]:
    """One-hot sides (N x k) and the win indicators of each side (a tie is no win)."""
    k = len(idx)
    a = np.zeros((len(df), k))
    b = np.zeros((len(df), k))
    a[np.arange(len(df)), df.model_a.map(idx).to_numpy()] = 1
    b[np.arange(len(df)), df.model_b.map(idx).to_numpy()] = 1
    w = df[col].to_numpy()
    return a, b, (w == "model_a").astype(float), (w == "model_b").astype(float)


def _avg(a: np.ndarray, b: np.ndarray, wa: np.ndarray, wb: np.ndarray, published: bool
         ) -> tuple[np.ndarray, np.ndarray]:
    """Average win rate of each model and the per-battle influence (N x k).

    ``published``: the authors' code divides the deviations by the number of
    all battles n (``Sigma = A A' / n^2``) instead of each model's number of
    battles (the variance of a ratio estimator), which shrinks every variance
    by about (battles of the model / n)^2.
    """
    cnt = (a + b).sum(axis=0)
    theta = (a.T @ wa + b.T @ wb) / cnt
    dev = a * (wa[:, None] - theta[None, :]) + b * (wb[:, None] - theta[None, :])
    return theta, dev / (len(wa) if published else cnt)


def ppr(lab: pd.DataFrame, unl: pd.DataFrame, judge: str | None, idx: dict[str, int],
        published: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Win rates with their covariance: human-only (judge None) or prediction-powered."""
    a, b, wa, wb = _wins(lab, "winner", idx)
    th_h, inf_h = _avg(a, b, wa, wb, published)
    if judge is None:
        return th_h, inf_h.T @ inf_h
    _, _, fa, fb = _wins(lab, judge, idx)
    th_f, inf_f = _avg(a, b, fa, fb, published)
    A, B, ga, gb = _wins(unl, judge, idx)
    th_u, inf_u = _avg(A, B, ga, gb, published)
    n, N = len(lab), len(unl)
    # lambda minimising the trace: tr(Cov(h, f)) / ((1 + n/N) tr(Var(f)) n-scaled)
    lam = np.trace(inf_h.T @ inf_f) / ((1 + n / N) * np.trace(inf_u.T @ inf_u) * N / n)
    lam = float(np.clip(lam, 0, 1))
    theta = lam * th_u + (th_h - lam * th_f)
    rect = inf_h - lam * inf_f
    return theta, lam ** 2 * inf_u.T @ inf_u + rect.T @ rect


def ppr_sets(theta: np.ndarray, cov: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Rank sets from the chi-square(k) ellipsoid: a pair is ordered when it separates."""
    k = theta.size
    crit = stats.chi2.ppf(level, k)
    lo, hi = np.ones(k, dtype=int), np.full(k, k)
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            v = cov[i, i] + cov[j, j] - 2 * cov[i, j]
            if abs(theta[i] - theta[j]) > np.sqrt(v * crit):
                if theta[i] < theta[j]:
                    lo[i] += 1
                else:
                    hi[i] -= 1
    return lo, hi


# ------------------------------------------------------------------ the protocol

def _bt_sets(res: mixrank.ArenaResult, order: list[str]) -> tuple[np.ndarray, np.ndarray]:
    ri = res.rank_intervals(LEVEL, coverage="simultaneous").set_index("model").loc[order]
    return ri["rank_lower"].to_numpy(), ri["rank_upper"].to_numpy()


def run(ns=(500, 1000, 2000), draws: int = 100, seed: int = 2024,
        combos: dict[str, list[str]] | None = None) -> pd.DataFrame:
    """One row per (n, method, draw): ``covered`` (all models) and ``size`` (mean set size)."""
    df = battles()
    idx = {m: i for i, m in enumerate(MODELS)}
    combos = combos or {"ours (gpt4)": ["gpt4"], "ours (gpt4+claude3)": ["gpt4", "claude3"],
                        "ours (all three)": ["gpt4", "claude3", "gpt35"]}
    warnings.simplefilter("ignore")
    full = mixrank.arena(df)
    ref_bt = _ranks(full.model_scores().set_index("model").loc[MODELS, "estimate"].to_numpy())
    ref_wr = _ranks(ppr(df, df.iloc[:0], None, idx)[0])
    rows = []

    def add(n: int, method: str, r: int, lo: np.ndarray, hi: np.ndarray, ref: np.ndarray,
            extra: float = np.nan) -> None:
        rows.append(dict(n=n, method=method, draw=r,
                         covered=bool(np.all((lo <= ref) & (ref <= hi))),
                         size=float(np.mean(hi - lo + 1)), lam=extra))

    judge_only = {k: _bt_sets(mixrank.arena(df, f"{c} ~ 1"), MODELS) for k, c in JUDGES.items()}
    g = np.random.default_rng(seed)
    for n in ns:
        for r in range(draws):
            pick = np.zeros(len(df), dtype=bool)
            pick[g.choice(len(df), n, replace=False)] = True
            lab, unl = df[pick], df[~pick]
            add(n, "human-only BT", r, *_bt_sets(mixrank.arena(lab.reset_index(drop=True)),
                                                 MODELS), ref_bt)
            for k, (lo, hi) in judge_only.items():
                add(n, f"judge-only BT ({k})", r, lo, hi, ref_bt)
            add(n, "PPR human-only (win rate, published variance)", r,
                *ppr_sets(*ppr(lab, unl, None, idx), LEVEL), ref_wr)
            add(n, "PPR gpt4 (win rate, published variance)", r,
                *ppr_sets(*ppr(lab, unl, "winner_gpt4", idx), LEVEL), ref_wr)
            add(n, "PPR gpt4 (win rate, ratio variance)", r,
                *ppr_sets(*ppr(lab, unl, "winner_gpt4", idx, published=False), LEVEL), ref_wr)
            masked = df.assign(winner=df.winner.where(pick))
            for name, js in combos.items():
                res = mixrank.arena(masked, judge=[JUDGES[j] for j in js])
                add(n, name, r, *_bt_sets(res, MODELS), ref_bt, float(res.judge.lam.sum()))
    return pd.DataFrame(rows)


def table(runs: pd.DataFrame) -> pd.DataFrame:
    out = runs.groupby(["n", "method"], sort=False).agg(
        draws=("draw", "size"), coverage=("covered", "mean"), mean_size=("size", "mean"),
        lam_sum=("lam", "mean")).reset_index()
    human = out[out.method == "human-only BT"].set_index("n")["mean_size"]
    out["size_vs_human_bt"] = out["mean_size"] / out["n"].map(human)
    return out


if __name__ == "__main__":
    d = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    tab = table(run(draws=d))
    with pd.option_context("display.width", 200):
        print(tab.to_markdown(index=False, floatfmt=".3f"))
