"""Engine benchmark (the pairwise mixed-model engine, docs/methods.md §3).

    python benchmarks/bench_engine.py            # everything (~10 min with R)
    python benchmarks/bench_engine.py --quick    # small sizes only, no 105-pair runs

Part 1 times one pair at 3.5k, 57k and 570k cells, balanced and with cells
missing (each model misses 20% of cells at random, so the pair misses 36%),
for mixrank (native), lme4 + lmerTest (Rscript, timed inside R: lmer +
summary with Satterthwaite df) and statsmodels MixedLM (variance
components; skipped where it would exceed --sm-timeout), all on the same
differences, and prints the ratios.  Part 2 fits all 105 pairs of 15 models
x 57 subjects x 100 questions x 100 prompts (8.55M rows) with
``correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)``,
(a) balanced and (b) with 20% of each model's cells missing, printing wall
time and peak traced memory excluding the frame build.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import big_design, gb, measure  # noqa: E402

import mixrank  # noqa: E402

FORMULA = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
SIZES = {"3.5k": (35, 10, 10), "57k": (57, 100, 10), "570k": (57, 100, 100)}

R_CODE = r"""
suppressMessages({library(lme4); library(lmerTest); library(jsonlite)})
args <- commandArgs(trailingOnly = TRUE)
w <- read.csv(args[1])
t <- system.time({
  m <- lmer(d ~ 1 + (1|subject) + (1|subject:question) + (1|prompt), data = w, REML = TRUE)
  s <- summary(m)
})[["elapsed"]]
cf <- s$coefficients
cat(toJSON(list(seconds = t, estimate = cf[1, 1], se = cf[1, 2], df = cf[1, 3],
                crit = REMLcrit(m)), digits = NA, auto_unbox = TRUE))
"""


def pair_frame(d):
    fr = mixrank.build_frame(d, FORMULA)
    mask = fr.observed[:, 0] & fr.observed[:, 1]
    out = fr.cells[mask].copy()
    out["d"] = fr.scores[mask, 0] - fr.scores[mask, 1]
    return fr, out


def time_lme4(pairdf, tmp: Path):
    if not shutil.which("Rscript"):
        return None
    csv = tmp / "pair.csv"
    pairdf.to_csv(csv, index=False)
    script = tmp / "fit.R"
    script.write_text(R_CODE)
    p = subprocess.run(["Rscript", str(script), str(csv)], capture_output=True, text=True)
    if p.returncode != 0:
        print("   lme4 failed:", p.stderr.strip().splitlines()[-1:])
        return None
    return json.loads(p.stdout)


SM_CODE = r"""
import sys, time, json, warnings
import numpy as np, pandas as pd
import statsmodels.formula.api as smf
warnings.simplefilter("ignore")
w = pd.read_csv(sys.argv[1])
w["g"] = 1
t = time.perf_counter()
m = smf.mixedlm("d ~ 1", w, groups="g", vc_formula={"subject": "0 + C(subject)",
                "sq": "0 + C(question)", "prompt": "0 + C(prompt)"}).fit(reml=True)
print(json.dumps({"seconds": time.perf_counter() - t, "estimate": float(m.params.iloc[0]),
                  "se": float(m.bse.iloc[0])}))
"""


def time_statsmodels(pairdf, tmp: Path, timeout: float):
    csv = tmp / "pair_sm.csv"
    pairdf.to_csv(csv, index=False)
    try:
        p = subprocess.run([sys.executable, "-c", SM_CODE, str(csv)], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": float("inf"), "timeout": timeout}
    if p.returncode != 0:
        print("   statsmodels failed:", p.stderr.strip().splitlines()[-1:])
        return None
    return json.loads(p.stdout)


def part1(sizes, sm_timeout):
    print("== Part 1: one pair, mixrank vs lme4 + lmerTest vs statsmodels ==")
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        for label, (s, q, p) in sizes.items():
            for missing in (0.0, 0.2):
                d = big_design(models=2, subjects=s, questions=q, prompts=p, missing=missing, seed=1)
                fr, pairdf = pair_frame(d)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    res = mixrank.fit(FORMULA, fr)
                    t_mx = time.perf_counter() - t0
                c = res.contrasts().iloc[0]
                kind = "balanced" if missing == 0 else "36% missing"
                print(f"{label:>5} cells, {kind:<11} n={len(pairdf):>7,}: mixrank {t_mx:8.3f} s "
                      f"(SE {c.std_error:.6g}, df {c.df:.5g})")
                r = time_lme4(pairdf, tmp)
                if r:
                    print(f"{'':>30}lme4    {r['seconds']:8.3f} s (SE {r['se']:.6g}, df "
                          f"{r['df']:.5g})  ->  mixrank is {r['seconds'] / t_mx:7.1f}x faster")
                sm = time_statsmodels(pairdf, tmp, sm_timeout)
                if sm and sm["seconds"] == float("inf"):
                    print(f"{'':>30}statsmodels  > {sm_timeout:.0f} s (stopped)  ->  mixrank is "
                          f"> {sm_timeout / t_mx:.0f}x faster")
                elif sm:
                    print(f"{'':>30}statsmodels {sm['seconds']:8.3f} s (SE {sm['se']:.6g})  ->  "
                          f"mixrank is {sm['seconds'] / t_mx:7.1f}x faster")


def part2():
    print("== Part 2: all 105 pairs, 15 models x 57 x 100 x 100 (8.55M rows) ==")
    for label, missing in (("(a) balanced", 0.0), ("(b) 20% of each model's cells missing", 0.2)):
        d = big_design(models=15, missing=missing, seed=2)
        fr = mixrank.build_frame(d, FORMULA)
        del d
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            res = mixrank.fit(FORMULA, fr)
            wall = time.perf_counter() - t0
        with measure() as m, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mixrank.fit(FORMULA, fr, pairs=[(fr.models[0], fr.models[1]), (fr.models[2], fr.models[3])])
        c = res.contrasts()
        target = 5 if missing == 0 else 120
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(f"{label}: {len(c)} pairs in {wall:.2f} s (target <= {target} s); "
              f"median df {c['df'].median():.4g}; engine peak traced on 2 pairs "
              f"{gb(m['peak_bytes'])}; process peak RSS so far {gb(rss)} (target <= 4 GiB, "
              "includes the data and the frame)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--part2-only", action="store_true", help="only the 105-pair runs")
    ap.add_argument("--sm-timeout", type=float, default=600.0)
    args = ap.parse_args()
    sizes = {k: v for k, v in SIZES.items() if not args.quick or k != "570k"}
    if not args.part2_only:
        part1(sizes, args.sm_timeout if not args.quick else 60)
    if not args.quick:
        part2()


if __name__ == "__main__":
    main()
