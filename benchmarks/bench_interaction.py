"""Benchmark: model x covariate formulas (docs/interactions.md).

    python benchmarks/bench_interaction.py            # 105 pairs x 8.55M rows + lme4 on one pair
    python benchmarks/bench_interaction.py --quick    # 15 models x 57 x 100 x 10 (855k rows)

Fits ``correct ~ model * topic + (1|subject) + (1|subject:question) +
(1|prompt)`` — ``topic`` a 9-level subject-level covariate — for all 105
pairs of 15 models x 57 subjects x 100 questions x 100 prompts (8.55M rows,
balanced), timing the fit from a prebuilt frame (the frame build and the
covariate attachment are timed separately), then one pair with mixrank
(contrasts by topic and the F test included) and with lme4 + lmerTest
(``lmer`` + ``summary`` + ``anova(type = 3)``, timed inside R) in the same
run, and prints the ratio and the agreement of the F test.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import big_design  # noqa: E402

import mixrank  # noqa: E402
from mixrank.frame.covariates import attach_covariates  # noqa: E402

FORMULA = "correct ~ model * topic + (1|subject) + (1|subject:question) + (1|prompt)"

R_CODE = r"""
suppressMessages({library(lme4); library(lmerTest); library(jsonlite)})
args <- commandArgs(trailingOnly = TRUE)
w <- read.csv(args[1])
w$topic <- factor(w$topic, levels = sort(unique(w$topic), method = "radix"))
t <- system.time({
  m <- lmer(d ~ 1 + topic + (1|subject) + (1|subject:question) + (1|prompt), data = w, REML = TRUE)
  s <- summary(m)
  a <- anova(m, type = 3)
})[["elapsed"]]
cat(toJSON(list(seconds = t, F = a[["F value"]][1], ddf = a$DenDF[1], crit = REMLcrit(m)),
           digits = NA, auto_unbox = TRUE))
"""


def data(prompts: int):
    d = big_design(models=15, subjects=57, questions=100, prompts=prompts, seed=3)
    codes = d["subject"].cat.codes.to_numpy() % 9
    d["topic"] = np.array([f"topic_{i}" for i in range(9)], dtype=object)[codes]
    return d


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-r", action="store_true", help="skip the lme4 comparison")
    args = ap.parse_args()
    prompts = 10 if args.quick else 100
    d = data(prompts)
    print(f"== {len(d):,} rows: 15 models x 57 subjects x 100 questions x {prompts} prompts; "
          f"{FORMULA}")
    spec = mixrank.parse(FORMULA)
    t0 = time.perf_counter()
    fr = mixrank.build_frame(d, spec)
    t1 = time.perf_counter()
    fr = attach_covariates(fr, d, spec)
    t2 = time.perf_counter()
    print(f"frame build {t1 - t0:.2f} s; covariate per cell {t2 - t1:.2f} s")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        res = mixrank.fit(FORMULA, fr)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"all {len(res.pairs)} pairs fitted in {wall:.2f} s wall, {cpu:.2f} s CPU of this process "
          "(target <= 10 s balanced; wall >> CPU means other jobs share the cores)")
    pair = [(fr.models[0], fr.models[1])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        one = mixrank.fit(FORMULA, fr, pairs=pair)
        by = one.contrasts(by="topic")
        an = one.anova()
        t_one = time.perf_counter() - t0
    print(f"one pair (fit + contrasts by topic + F test): {t_one:.3f} s; "
          f"F = {an['F'].iloc[0]:.6g} on {an['num_df'].iloc[0]:g} and {an['den_df'].iloc[0]:.6g} df; "
          f"gap range over topics {by['estimate'].min():.4f} .. {by['estimate'].max():.4f}")
    if args.no_r or shutil.which("Rscript") is None:
        print("lme4: skipped (no Rscript or --no-r)")
        return
    mask = fr.observed[:, 0] & fr.observed[:, 1]
    w = fr.cells[mask].copy()
    w["d"] = fr.scores[mask, 0] - fr.scores[mask, 1]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pair.csv"
        w.to_csv(path, index=False)
        script = Path(tmp) / "fit.R"
        script.write_text(R_CODE)
        out = subprocess.run(["Rscript", str(script), str(path)], capture_output=True, text=True,
                             check=True)
    r = json.loads(out.stdout)
    print(f"lme4 + lmerTest on the same pair: {r['seconds']:.2f} s; F = {r['F']:.6g} on "
          f"{r['ddf']:.6g} den df; ratio lme4 / mixrank = {r['seconds'] / t_one:.1f}x "
          f"(criterion mixrank {one.pairs[0].criterion:.6f} vs lme4 {r['crit']:.6f})")


if __name__ == "__main__":
    main()
