"""Binomial GLMM benchmark: mixrank family="binomial" vs lme4::glmer in the same run.

    python benchmarks/bench_glmm.py               # designs a, b, c (glmer on c takes minutes)
    python benchmarks/bench_glmm.py --designs a b # a subset
    python benchmarks/bench_glmm.py --nagq 1      # also the Laplace fits (glmer nAGQ = 1)
    python benchmarks/bench_glmm.py --designs ax bx --nagq 0 1   # model * x (issue 24)
    python benchmarks/bench_glmm.py --designs an bn --nagq 0 1   # model * numeric x

Designs:
  a   16 models x 349 questions in 3 subjects, k of 10 per (model, question):
      cbind(k, n - k) ~ model + (1|subject) + (1|question), and the same with
      + (1|subject:model)
  b   12 models x 40,000 items, 0/1:  correct ~ model + (1|question)
  c   10 models x 57 subjects x 100 questions x 10 prompts (57k cells, 570k rows):
      correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)
  ax  design a with model x covariate (the 3 subjects as a categorical covariate,
      docs/glmm.md §11): cbind(k, n - k) ~ model * subject + (1|question) (a
      (1|subject:model) term would be confounded with the fixed model:subject)
  bx  design b with a 3-level item covariate (difficulty band):
      correct ~ model * band + (1|question)
  an  design a with a numeric question covariate x (a slope per model):
      cbind(k, n - k) ~ model * x + (1|subject) + (1|question)
  bn  design b with a numeric item covariate x: correct ~ model * x + (1|question)

Each fit is timed from the DataFrame (mixrank: frame build + fit) and inside R
(glmer only, data already read, lme4 loaded); mixrank likewise fits a small
problem once before timing, so that the one-time library loading (imports,
the BLAS thread controller's scan of the loaded libraries) is not charged to
the first design; the deviances (-2 logLik) of both are printed
with the ratio of wall times and of CPU times (process CPU seconds; on a
shared, loaded machine the CPU ratio is the steadier one).  A fit shorter than
``--short`` seconds (default 5) is repeated up to ``--repeat`` times (default
10) on both sides and the best time kept, as timing noise dominates short fits
(mixrank's design-a fits take 15-35 ms, glmer's 0.3-1 s).  Compare the
ratios, which come from the same run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import mixrank

R_CODE = r"""
suppressPackageStartupMessages({library(lme4); library(jsonlite)})
a <- commandArgs(trailingOnly = TRUE)
df <- read.csv(a[1])
best <- c(elapsed = Inf, cpu = Inf)
for (i in seq_len(as.integer(a[4]))) {
  msgs <- character(0)
  st <- system.time(m <- withCallingHandlers(
    glmer(as.formula(a[2]), data = df, family = binomial, nAGQ = as.integer(a[3])),
    warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
    message = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleMessage") }))
  best <- pmin(best, c(st[["elapsed"]], st[["user.self"]] + st[["sys.self"]]))
  if (st[["elapsed"]] > as.numeric(a[5])) break
}
cat(toJSON(list(seconds = best[[1]], cpu = best[[2]], deviance = -2 * as.numeric(logLik(m)), warnings = msgs),
           auto_unbox = TRUE, digits = NA))
"""


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def design_a(rng) -> pd.DataFrame:
    M, Q = 16, 349
    subj = np.repeat([0, 1, 2], [120, 120, 109])
    bm = rng.normal(0.0, 0.8, M)
    bs = np.array([1.2, 0.0, -1.5])
    bq = rng.normal(0, 1.2, Q)
    bsm = rng.normal(0, 0.3, (3, M))
    eta = bm[None, :] + bs[subj][:, None] + bq[:, None] + bsm[subj]
    k = rng.binomial(10, _expit(eta))
    return pd.DataFrame({"model": np.tile([f"m{m:02d}" for m in range(M)], Q),
                         "subject": np.repeat([f"s{s}" for s in subj], M),
                         "question": np.repeat([f"q{q:03d}" for q in range(Q)], M),
                         "k": k.ravel(), "n": 10})


def design_b(rng) -> pd.DataFrame:
    M, Q = 12, 40_000
    bm = rng.normal(0.5, 0.6, M)
    bq = rng.normal(0, 1.5, Q)
    y = rng.random((Q, M)) < _expit(bm[None, :] + bq[:, None])
    return pd.DataFrame({"model": np.tile([f"m{m:02d}" for m in range(M)], Q),
                         "question": np.repeat(np.arange(Q), M), "correct": y.ravel().astype(int)})


def design_c(rng) -> pd.DataFrame:
    M, S, Q, P = 10, 57, 100, 10
    bm = rng.normal(0.3, 0.5, M)
    bs = rng.normal(0, 0.6, S)
    bsq = rng.normal(0, 1.0, (S, Q))
    bp = rng.normal(0, 0.3, P)
    s, q, p = np.meshgrid(np.arange(S), np.arange(Q), np.arange(P), indexing="ij")
    s, q, p = s.ravel(), q.ravel(), p.ravel()
    eta = bm[None, :] + (bs[s] + bsq[s, q] + bp[p])[:, None]
    y = rng.random(eta.shape) < _expit(eta)
    return pd.DataFrame({"model": np.tile([f"m{m:02d}" for m in range(M)], len(s)),
                         "subject": np.repeat(s, M), "question": np.repeat(q, M),
                         "prompt": np.repeat(p, M), "correct": y.ravel().astype(int)})


def design_bx(rng) -> pd.DataFrame:
    """Design b with a per-item 3-level covariate; the models' log-odds differ by band."""
    M, Q = 12, 40_000
    band = np.arange(Q) % 3
    bm = rng.normal(0.5, 0.6, (3, M))
    bq = rng.normal(0, 1.5, Q) + np.array([1.0, 0.0, -1.0])[band]
    y = rng.random((Q, M)) < _expit(bm[band] + bq[:, None])
    return pd.DataFrame({"model": np.tile([f"m{m:02d}" for m in range(M)], Q),
                         "question": np.repeat(np.arange(Q), M),
                         "band": np.repeat(np.array(["easy", "mid", "hard"])[band], M),
                         "correct": y.ravel().astype(int)})


def design_an(rng) -> pd.DataFrame:
    """Design a with a numeric per-question covariate ``x`` (standard normal); the models'
    slopes in x differ."""
    df = design_a(rng)
    Q = df["question"].nunique()
    x = np.round(rng.normal(0, 1, Q), 4)
    slope = np.linspace(-0.2, 0.2, 16)
    eta_shift = slope[df["model"].str[1:].astype(int).to_numpy()] * np.repeat(x, 16)
    p = _expit(np.log((df["k"] + 0.5) / (df["n"] - df["k"] + 0.5)) + eta_shift)
    return df.assign(k=rng.binomial(10, p), x=np.repeat(x, 16))


def design_bn(rng) -> pd.DataFrame:
    """Design b with a numeric per-item covariate ``x`` and a slope per model."""
    M, Q = 12, 40_000
    bm = rng.normal(0.5, 0.6, M)
    sl = rng.normal(-0.3, 0.2, M)
    x = np.round(rng.normal(0, 1, Q), 4)
    bq = rng.normal(0, 1.5, Q)
    y = rng.random((Q, M)) < _expit(bm[None, :] + sl[None, :] * x[:, None] + bq[:, None])
    return pd.DataFrame({"model": np.tile([f"m{m:02d}" for m in range(M)], Q),
                         "question": np.repeat(np.arange(Q), M), "x": np.repeat(x, M),
                         "correct": y.ravel().astype(int)})


CASES = {
    "a": (design_a, ["cbind(k, n - k) ~ model + (1|subject) + (1|question)",
                     "cbind(k, n - k) ~ model + (1|subject) + (1|question) + (1|subject:model)"]),
    "b": (design_b, ["correct ~ model + (1|question)"]),
    "c": (design_c, ["correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"]),
    "ax": (design_a, ["cbind(k, n - k) ~ model * subject + (1|question)"]),
    "bx": (design_bx, ["correct ~ model * band + (1|question)"]),
    "an": (design_an, ["cbind(k, n - k) ~ model * x + (1|subject) + (1|question)"]),
    "bn": (design_bn, ["correct ~ model * x + (1|question)"]),
}


def run_r(csv: Path, formula: str, nagq: int, timeout: float, repeat: int, short: float) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as fh:
        fh.write(R_CODE)
    try:
        p = subprocess.run(["Rscript", fh.name, str(csv), formula, str(nagq), str(repeat),
                            str(short)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": float("nan"), "cpu": float("nan"), "deviance": float("nan"),
                "warnings": [f"stopped after {timeout:.0f} s"]}
    if p.returncode != 0:
        return {"seconds": float("nan"), "cpu": float("nan"), "deviance": float("nan"),
                "warnings": [p.stderr[-300:]]}
    return json.loads(p.stdout)


def run_mixrank(df: pd.DataFrame, formula: str, nagq: int, repeat: int = 1,
                short: float = 0.0) -> tuple[float, float, float, bool]:
    """Best wall and CPU seconds of up to ``repeat`` fits (one if a fit takes over ``short`` s)."""
    secs = cpu = np.inf
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.MixrankWarning)
            res = mixrank.fit(formula, df, family="binomial", nagq=nagq)
        s, c = time.perf_counter() - t0, time.process_time() - c0
        secs, cpu = min(secs, s), min(cpu, c)
        if s > short:
            break
    d = res.diagnostics().iloc[0]
    return secs, cpu, float(d["deviance"]), bool(d["converged"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--designs", nargs="+", default=["a", "b", "c"], choices=list(CASES))
    ap.add_argument("--nagq", nargs="+", type=int, default=[0], choices=[0, 1])
    ap.add_argument("--r-timeout", type=float, default=900.0)
    ap.add_argument("--repeat", type=int, default=10,
                    help="fits shorter than --short seconds are repeated, best time kept (both sides)")
    ap.add_argument("--short", type=float, default=5.0)
    ap.add_argument("--no-r", action="store_true", help="time mixrank only")
    args = ap.parse_args()
    have_r = shutil.which("Rscript") is not None and not args.no_r
    run_mixrank(design_a(np.random.default_rng(0)), CASES["a"][1][0], 0)     # warm-up, untimed
    print(f"{'design':7}{'nAGQ':>5} {'formula':70}{'mixrank s':>10}{'glmer s':>9}{'ratio':>8}"
          f"{'cpu ratio':>10}{'dev mixrank':>14}{'dev glmer':>14}  glmer warnings")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.designs:
            gen, formulas = CASES[name]
            df = gen(np.random.default_rng(14 + sum(map(ord, name))))
            csv = Path(tmp) / f"{name}.csv"
            if have_r:
                df.to_csv(csv, index=False)
            for formula in formulas:
                for nagq in args.nagq:
                    secs, cpu, dev, conv = run_mixrank(df, formula, nagq, args.repeat, args.short)
                    r = (run_r(csv, formula, nagq, args.r_timeout, args.repeat, args.short)
                         if have_r else None)
                    rs = r["seconds"] if r else float("nan")
                    rc = r.get("cpu", float("nan")) if r else float("nan")
                    rd = r["deviance"] if r else float("nan")
                    ws = r["warnings"] if r else []
                    warn = "; ".join(w[:60] for w in ([ws] if isinstance(ws, str) else ws))
                    print(f"{name:7}{nagq:>5} {formula:70}{secs:10.2f}{rs:9.2f}{rs / secs:8.1f}"
                          f"{rc / cpu:10.1f}"
                          f"{dev:14.4f}{rd:14.4f}  {'' if conv else '[mixrank: not converged] '}{warn}",
                          flush=True)


if __name__ == "__main__":
    main()
