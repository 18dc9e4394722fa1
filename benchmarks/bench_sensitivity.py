"""Sensitivity-check benchmark: the cluster bootstrap's one-way REML fast path vs engine refits.

    python benchmarks/bench_sensitivity.py [--B 1000] [--engine-draws 30]

On ChemBench (published run, 9 topics, 2,788 questions), the 7 adjacent
pairs of the top 8 models with ``correct ~ model + (1|subject)``: times
``FitResult.sensitivity("bootstrap", B=...)`` (vectorised one-way REML over
all draws, mixrank/design/sensitivity/oneway.py) against refitting the same
draws one by one with the engine (``subset_frame`` + ``fit_pairs``, the path
formulas with several random terms take), and prints the time per
(draw, pair) of each and their ratio, measured in the same run.  Also checks
that both paths give the same variance on the drawn replicates (relative
difference).  Numbers on a shared machine are noisy; compare ratios.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import mixrank
from mixrank.design.sensitivity.frames import restrict_models, subset_frame, unit_codes
from mixrank.design.sensitivity.oneway import level_sums, oneway_fit
from mixrank.design.sensitivity.refit import refit


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--B", type=int, default=1000)
    ap.add_argument("--engine-draws", type=int, default=30)
    args = ap.parse_args()
    df = mixrank.load_dataset("chembench")
    df = df[df["prompt"] == "default"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("correct ~ model + (1|subject)", df)
        full = res.resolution(top=8, anytime=False, multiplicity=None)
    family = list(zip(full["model_a"], full["model_b"]))
    t0 = time.perf_counter()
    res.sensitivity("bootstrap", top=8, B=args.B, rng=1)
    fast = (time.perf_counter() - t0) / (args.B * len(family))

    frame = restrict_models(res.frame, sorted({m for p in family for m in p}))
    name, codes = unit_codes(frame, None)
    T = frame.term_levels[name]
    members = [np.flatnonzero(codes == u) for u in range(T)]
    draws = np.random.default_rng(2).integers(0, T, size=(args.engine_draws, T))
    rel = []
    t0 = time.perf_counter()
    for dr in draws:
        idx = np.concatenate([members[u] for u in dr])
        copy = np.concatenate([np.full(len(members[u]), i) for i, u in enumerate(dr)])
        fits = refit(subset_frame(frame, idx, copy=copy, unit=name), family, method="reml",
                     estimand=res.estimand)
        for (a, b), p in zip(family, fits):
            j, k = frame.model_index(a), frame.model_index(b)
            m = frame.observed[:, j] & frame.observed[:, k]
            d = frame.scores[m, j] - frame.scores[m, k]
            ms, s, ss = level_sums(d, codes[m], T)
            r = oneway_fit(ms[dr][None], s[dr][None], ss[dr][None], estimand=res.estimand)
            if p is not None:
                rel.append(abs(r["variance"][0] / p.variance - 1))
    slow = (time.perf_counter() - t0) / (args.engine_draws * len(family))
    print(f"pairs: {len(family)}; bootstrap draws: fast path {args.B}, engine {args.engine_draws}")
    print(f"time per (draw, pair): fast path {fast * 1e3:.3f} ms, engine refit {slow * 1e3:.2f} ms "
          f"(ratio {slow / fast:.0f}x)")
    print(f"variance, fast path vs engine on the same draws: max relative difference "
          f"{max(rel):.2e}")


if __name__ == "__main__":
    main()
