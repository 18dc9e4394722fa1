"""Benchmark: subset scoring on a 30-model x 15,000-item reference (issue 41: under 10 s on 2 cores).

Times, on one simulated leaderboard (2PL items in 20 subjects, 0/1 scores,
450,000 rows; string model, subject and question names):

1. ``mixrank.select_items(reference, 100, rng=1)`` -- the long table read
   into a models x items matrix, the Rasch fit, the strata and the draw;
2. ``mixrank.subset_score(reference, new, selection=sel)`` for 5 new models
   (the fit again, each model's ability and its three estimates);
3. ``mixrank.item_diagnostics(reference)``.

    python benchmarks/bench_subset.py [--models 30] [--items 15000]

Prints the timings (best of ``--repeats``) and the machine line.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine  # noqa: E402

import mixrank  # noqa: E402


def leaderboard(models: int, items: int, subjects: int = 20, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    subj = np.sort(rng.integers(0, subjects, items))
    theta = rng.normal(0, 1.2, models)
    a = np.exp(rng.normal(0, 0.3, items))
    b = rng.normal(0, 1.5, items)
    Y = (rng.random((models, items)) < expit(b + a * theta[:, None])).astype(np.int8)
    return pd.DataFrame({
        "model": np.repeat([f"model_{i:02d}" for i in range(models)], items),
        "subject": np.tile([f"subject_{s:02d}" for s in subj], models),
        "question": np.tile([f"q{i:05d}" for i in range(items)], models),
        "correct": Y.reshape(-1),
    })


def best_of(fn, repeats: int):
    best, out = np.inf, None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", type=int, default=30)
    p.add_argument("--items", type=int, default=15000)
    p.add_argument("--new", type=int, default=5)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    data = leaderboard(args.models + args.new, args.items)
    names = sorted(data["model"].unique())
    ref = data[data["model"].isin(names[: args.models])]
    new_all = data[data["model"].isin(names[args.models:])]
    print(machine())
    print(f"reference: {args.models} models x {args.items:,} items ({len(ref):,} rows)")
    t_sel, sel = best_of(lambda: mixrank.select_items(ref, 100, rng=1), args.repeats)
    new = new_all[new_all["question"].isin(sel["question"])]
    t_score, res = best_of(lambda: mixrank.subset_score(ref, new, selection=sel), args.repeats)
    t_diag, _ = best_of(lambda: mixrank.item_diagnostics(ref), args.repeats)
    print(f"select_items (k=100):              {t_sel:6.2f} s")
    print(f"subset_score ({args.new} new models):       {t_score:6.2f} s")
    print(f"selection + scoring:               {t_sel + t_score:6.2f} s  (target < 10 s)")
    print(f"item_diagnostics:                  {t_diag:6.2f} s")
    truth = new_all.groupby("model")["correct"].mean()
    tab = res.scores("model_assisted").set_index("model")
    print("model-assisted estimate - truth:",
          ", ".join(f"{m}: {tab.loc[m, 'estimate'] - truth[m]:+.3f} (SE {tab.loc[m, 'std_error']:.3f})"
                    for m in tab.index))


if __name__ == "__main__":
    main()
