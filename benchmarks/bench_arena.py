"""Benchmark: Bradley-Terry arena leaderboard, 1M battles x 100 models.

Times, in one run on the same simulated battle log (string model names,
FastChat winner spellings, 15% ties):

1. one pandas group-by over the battles (``groupby([model_a, model_b,
   winner]).size()``) -- the floor any analysis pays to read the log once;
2. ``mixrank.arena(log)`` + ``contrasts()`` + ``model_scores()`` +
   ``rank_intervals()`` (fit, intervals, rank intervals; target <= 5x the
   group-by);
3. ``mixrank.arena(log, se="bootstrap", B=100)`` (multinomial resamples of
   the pair counts, Newton refits warm-started);
4. the usual bootstrap (FastChat/LMArena notebooks): per resample, resample
   the rows with replacement, count wins per pair and refit a weighted
   logistic regression (scikit-learn if installed, else statsmodels GLM);
   ``--usual-resamples`` of them (default 100; fewer are extrapolated, and
   the table says so);
5. style control: ``winner ~ style(len, markdown)`` on the same battles.

``--readme`` writes the table between the ``bench:arena`` markers of
README.md with the machine, cores, load and date.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import README, machine, markdown_table, replace_readme_block  # noqa: E402

import mixrank  # noqa: E402


def battle_log(n: int, k: int, seed: int = 0) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    beta = g.normal(0, 0.7, k)
    a = g.integers(0, k, n)
    b = (a + g.integers(1, k, n)) % k
    la, lb = g.gamma(2, 150, n).round(), g.gamma(2, 150, n).round()
    ma, mb = g.poisson(3, n), g.poisson(3, n)
    d = beta[a] - beta[b] + 0.5 * (la - lb) / (la + lb)
    w = np.where(g.random(n) < 0.15, "tie",
                 np.where(g.random(n) < 1 / (1 + np.exp(-d)), "model_a", "model_b"))
    names = np.array([f"model_{i:03d}" for i in range(k)], dtype=object)
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": w,
                         "len_a": la, "len_b": lb, "markdown_a": ma, "markdown_b": mb})


def best_of(fn, repeats: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def usual_fit(df: pd.DataFrame, models: list[str]) -> np.ndarray:
    """Row-level counts per pair -> weighted logistic regression (ties half a win each way)."""
    cnt = df.groupby(["model_a", "model_b", "winner"], observed=True).size().reset_index(name="c")
    idx = {m: i for i, m in enumerate(models)}
    ia = cnt["model_a"].map(idx).to_numpy()
    ib = cnt["model_b"].map(idx).to_numpy()
    c = cnt["c"].to_numpy(dtype=float)
    win = cnt["winner"].map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}).to_numpy()
    # each count becomes a row "a beats b" with weight c*win and "b beats a" with c*(1-win)
    X = np.zeros((2 * len(c), len(models)))
    r = np.arange(len(c))
    X[r, ia] += 1
    X[r, ib] -= 1
    X[len(c) + r] = X[r]
    y = np.r_[np.ones(len(c)), np.zeros(len(c))]
    wt = np.r_[c * win, c * (1 - win)]
    keep = wt > 0
    try:
        import warnings

        from sklearn.linear_model import LogisticRegression

        with warnings.catch_warnings():   # penalty=None is being renamed (C=inf) in 1.8+
            warnings.simplefilter("ignore", FutureWarning)
            lr = LogisticRegression(fit_intercept=False, penalty=None, tol=1e-8, max_iter=1000)
            lr.fit(X[keep], y[keep], sample_weight=wt[keep])
        coef = lr.coef_[0]
    except ImportError:  # pragma: no cover
        import statsmodels.api as sm

        coef = sm.GLM(y[keep], X[keep][:, 1:], family=sm.families.Binomial(),
                      freq_weights=wt[keep]).fit().params
        coef = np.r_[0.0, coef]
    return coef - coef.mean()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--battles", type=int, default=1_000_000)
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--usual-resamples", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--readme", action="store_true")
    args = ap.parse_args()
    header = machine()
    print(header)
    log = battle_log(args.battles, args.models)
    n, k = args.battles, args.models
    rows = []

    t_gb, _ = best_of(lambda: log.groupby(["model_a", "model_b", "winner"]).size(),
                      args.repeats)

    def ours():
        res = mixrank.arena(log)
        res.contrasts()
        res.model_scores()
        return res, res.rank_intervals()

    t_ours, (res, ri) = best_of(ours, args.repeats)
    rows.append((f"{n:,} battles × {k} models: fit + contrasts + scores + rank intervals",
                 f"{t_ours:.2f} s", f"one pandas group-by {t_gb:.2f} s",
                 f"{t_ours / t_gb:.1f}× the group-by (target ≤ 5×)"))
    print(rows[-1])

    t_boot, _ = best_of(lambda: mixrank.arena(log, se="bootstrap", B=100, rng=1), 1)
    models = list(res.models)
    ref = usual_fit(log, models)
    ours_beta = res.fit.beta - res.fit.beta.mean()
    agree = float(np.max(np.abs(ref - ours_beta)))
    m = args.usual_resamples
    t0 = time.perf_counter()
    g = np.random.default_rng(1)
    for _ in range(m):
        usual_fit(log.iloc[g.integers(0, n, n)], models)
    t_usual = (time.perf_counter() - t0) * 100 / m
    how = "" if m == 100 else f" (extrapolated from {m})"
    rows.append(("bootstrap, 100 resamples (multinomial on pair counts, Newton refits)",
                 f"{t_boot:.2f} s", f"the usual way (resample rows, group-by, refit logistic "
                 f"regression){how} {t_usual:.1f} s", f"{t_usual / t_boot:.0f}× faster"))
    print(rows[-1], "max |score difference| vs the usual fit:", agree)

    t_style, sres = best_of(lambda: mixrank.arena(log, "winner ~ style(len, markdown)"), 1)
    rows.append((f"style control, `winner ~ style(len, markdown)`, {n:,} battles "
                 f"({sres.counts.a.size:,} covariate patterns)", f"{t_style:.2f} s",
                 f"one pandas group-by {t_gb:.2f} s", f"{t_style / t_gb:.1f}×"))
    print(rows[-1])
    if args.readme:
        table = markdown_table("| what | mixrank | peer | ratio |", rows)
        block = ("<!-- bench:arena:start (python benchmarks/bench_arena.py --readme) -->\n"
                 f"Measured by `python benchmarks/bench_arena.py --readme` on {header}; "
                 "best of "
                 f"{args.repeats} for the first row, one run otherwise; scores equal the usual "
                 f"weighted logistic regression to {agree:.1e}.\n\n" + table
                 + "\n<!-- bench:arena:end -->")
        replace_readme_block("arena", block)
        print(f"wrote {len(rows)} rows to {README}")

if __name__ == "__main__":
    main()
