"""Engine benchmark (the pairwise mixed-model engine, docs/methods.md §3): one pair against lme4 + lmerTest, all pairs, parallel pairs, a leaderboard.

    python benchmarks/bench_engine.py            # everything (~10 min with R)
    python benchmarks/bench_engine.py --quick    # small sizes only, no 105-pair runs
    python benchmarks/bench_engine.py --readme   # everything, then rewrite README's table
    python benchmarks/bench_engine.py --unbalanced-105   # only the 105 pairs with cells missing (~1 min)

Part 1 times one pair at 3.5k, 57k and 570k cells, balanced and with cells
missing (each model misses 20% of cells at random, so the pair misses 36%),
for mixrank (native; median of repeated fits), lme4 + lmerTest (Rscript,
timed inside R: lmer + summary with Satterthwaite df) and statsmodels
MixedLM (variance components; skipped where it would exceed
--sm-timeout), all on the same differences, and prints the ratios.
Part 2 fits all 105 pairs of 15 models x 57 subjects x 100 questions x 100
prompts (8.55M rows) with
``correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)``,
(a) balanced and (b) with 20% of each model's cells missing, on both cores
(``Control(workers=2)``) against one process (``workers=1``) and, for (b),
against the earlier search (``Control(certify=False)``: after the first
search, the second start, every boundary face and a polishing restart are
run whatever the KKT certificate says, as before the certificate existed;
the first search itself is the current one, so this row understates the
gain over the first-round engine).
Part 3 fits a leaderboard of 58 models x 805 items in 9 subjects of unequal
size with ``(1|subject)``: all 1,653 pairs, against one process and the
earlier search.  Every figure is a median; CPU seconds (this process and
its workers) are printed next to wall seconds because the machine may be
shared.  ``--readme`` writes the table between the ``bench:engine``
markers of README.md, stating machine, cores, load and date.
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

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import README, big_design, gb, machine, markdown_table, replace_readme_block  # noqa: E402

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


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished workers (microsecond resolution)."""
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + ch.ru_utime + ch.ru_stime


def timed_fit(formula, fr, repeats: int, **kw):
    """Median wall and CPU seconds of ``repeats`` fits, and the last result.

    The estimand is lme4's fixed effect (``gls``), the quantity whose SE and df
    are compared with lme4 + lmerTest; the default ``cells`` estimand costs the same.
    """
    kw.setdefault("estimand", "gls")
    walls, cpus, res = [], [], None
    for _ in range(repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c0, t0 = cpu_seconds(), time.perf_counter()
            res = mixrank.fit(formula, fr, **kw)
            walls.append(time.perf_counter() - t0)
            cpus.append(cpu_seconds() - c0)
    return float(np.median(walls)), float(np.median(cpus)), res


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


def part1(sizes, sm_timeout, rows):
    print("== Part 1: one pair, mixrank vs lme4 + lmerTest vs statsmodels ==")
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        for label, (s, q, p) in sizes.items():
            for missing in (0.0, 0.2):
                d = big_design(models=2, subjects=s, questions=q, prompts=p, missing=missing, seed=1)
                fr, pairdf = pair_frame(d)
                wall, cpu, res = timed_fit(FORMULA, fr, 7 if label != "570k" else 3)
                c = res.contrasts().iloc[0]
                kind = "balanced" if missing == 0 else "36% missing"
                print(f"{label:>5} cells, {kind:<11} n={len(pairdf):>7,}: mixrank {wall:8.4f} s "
                      f"(cpu {cpu:.4f} s; SE {c.std_error:.6g}, df {c.df:.5g})")
                r = time_lme4(pairdf, tmp)
                peer, ratio = "—", ""
                if r:
                    print(f"{'':>30}lme4    {r['seconds']:8.3f} s (SE {r['se']:.6g}, df "
                          f"{r['df']:.5g})  ->  mixrank is {r['seconds'] / wall:7.1f}x faster")
                    peer, ratio = f"lme4 + lmerTest {r['seconds']:.2f} s", f"{r['seconds'] / wall:.0f}×"
                rows.append((f"one pair, {label} cells, {kind}", f"{wall:.4f} s (cpu {cpu:.4f} s)",
                             peer, ratio))
                sm = time_statsmodels(pairdf, tmp, sm_timeout)
                if sm and sm["seconds"] == float("inf"):
                    print(f"{'':>30}statsmodels  > {sm_timeout:.0f} s (stopped)  ->  mixrank is "
                          f"> {sm_timeout / wall:.0f}x faster")
                elif sm:
                    print(f"{'':>30}statsmodels {sm['seconds']:8.3f} s (SE {sm['se']:.6g})  ->  "
                          f"mixrank is {sm['seconds'] / wall:7.1f}x faster")


def compare(label, formula, fr, rows, target, earlier=True, repeats=3):
    """Both cores vs one process vs (optionally) the earlier search, same frame, same run."""
    C = mixrank.Control
    w2, c2, res = timed_fit(formula, fr, repeats, control=C(workers=2))
    w1, c1, res1 = timed_fit(formula, fr, repeats, control=C(workers=1))
    same = np.allclose(res.contrasts()["std_error"], res1.contrasts()["std_error"], rtol=0, atol=0)
    print(f"{label}: 2 workers {w2:.2f} s wall (cpu {c2:.2f} s); "
          f"1 process {w1:.2f} s (cpu {c1:.2f} s)  ->  parallel speed-up {w1 / w2:.2f}x; "
          f"identical results: {same}; target <= {target} s")
    rows.append((f"{label}, 2 workers", f"{w2:.2f} s (cpu {c2:.2f} s)",
                 f"1 process {w1:.2f} s (cpu {c1:.2f} s)", f"{w1 / w2:.2f}× (target ≤ {target} s)"))
    if earlier:
        we, ce, rese = timed_fit(formula, fr, 1, control=C(workers=1, certify=False))
        a, b = res.contrasts(), rese.contrasts()
        dse = float(np.max(np.abs(a.std_error / b.std_error - 1)))
        ddf = float(np.max(np.abs(a.df / b.df - 1)))
        print(f"{'':>4}earlier search (two starts, faces, polish) {we:.2f} s (cpu {ce:.2f} s)  ->  "
              f"{we / w2:.1f}x; max relative difference SE {dse:.1e}, df {ddf:.1e}")
        rows.append((f"{label}, 1 process vs the earlier search", f"{w1:.2f} s (cpu {c1:.2f} s)",
                     f"earlier search {we:.2f} s (cpu {ce:.2f} s)",
                     f"{we / w1:.1f}× (SE within {dse:.0e})"))


def part2(rows, only_unbalanced: bool = False):
    print("== Part 2: all 105 pairs, 15 models x 57 x 100 x 100 (8.55M rows) ==")
    cases = (("105 pairs, balanced", 0.0), ("105 pairs, 20% of cells missing", 0.2))
    for label, missing in cases[1:] if only_unbalanced else cases:
        d = big_design(models=15, missing=missing, seed=2)
        fr = mixrank.build_frame(d, FORMULA)
        del d
        compare(label, FORMULA, fr, rows, 5, earlier=missing > 0 and not only_unbalanced,
                repeats=3)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"process peak RSS so far {gb(rss)} (includes the data and the frames)")


def leaderboard(models=58, items=805, subjects=9, seed=0) -> pd.DataFrame:
    """A leaderboard: every model scored once on every item; subjects of unequal size."""
    rng = np.random.default_rng(seed)
    sizes = rng.multinomial(items - subjects, np.full(subjects, 1 / subjects)) + 1
    subj = np.repeat(np.arange(subjects), sizes)
    ability, diff = rng.normal(0, 1, models), rng.normal(0, 1.5, items)
    eta = ability[:, None] - diff[None, :] + rng.normal(0, 0.4, (models, subjects))[:, subj]
    y = (rng.random((models, items)) < 1 / (1 + np.exp(-eta))).astype(int)
    return pd.DataFrame({"model": np.repeat([f"m{i:02d}" for i in range(models)], items),
                         "subject": np.tile([f"s{s}" for s in subj], models),
                         "question": np.tile([f"q{i:03d}" for i in range(items)], models),
                         "correct": y.ravel()})


def part3(rows):
    print("== Part 3: leaderboard, 58 models x 805 items, (1|subject): 1,653 pairs ==")
    f = "correct ~ model + (1|subject)"
    fr = mixrank.build_frame(leaderboard(), f)
    compare("leaderboard 58 × 805, (1|subject): 1,653 pairs", f, fr, rows, 1, repeats=5)


def write_readme(rows, header: str) -> None:
    table = markdown_table("| what | mixrank | peer / earlier | ratio |", rows)
    block = (f"<!-- bench:engine:start (python benchmarks/bench_engine.py --readme) -->\n"
             f"Measured by `python benchmarks/bench_engine.py --readme` on {header}. "
             "Medians; each ratio is against the peer or the earlier figure timed in the same "
             "run.\n\n" + table + "\n<!-- bench:engine:end -->")
    replace_readme_block("engine", block)
    print(f"wrote {len(rows)} rows to {README}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--part2-only", action="store_true", help="only the all-pairs runs")
    ap.add_argument("--unbalanced-105", action="store_true",
                    help="only the 105 pairs with 20%% of cells missing (both cores vs one process)")
    ap.add_argument("--sm-timeout", type=float, default=600.0)
    ap.add_argument("--readme", action="store_true", help="rewrite README's benchmark table")
    args = ap.parse_args()
    header = machine()
    print("machine:", header)
    rows: list[tuple[str, str, str, str]] = []
    if args.unbalanced_105:
        part2(rows, only_unbalanced=True)
        return
    sizes = {k: v for k, v in SIZES.items() if not args.quick or k != "570k"}
    if not args.part2_only:
        part1(sizes, args.sm_timeout if not args.quick else 60, rows)
    if not args.quick:
        part2(rows)
    part3(rows)
    if args.readme:
        write_readme(rows, header)


if __name__ == "__main__":
    main()
