"""The speed bars of earlier issues, timed against a checkout of earlier code (issue 25).

    git worktree add ../old cdf5d93                       # e.g. the code of 2026-11-30
    python benchmarks/bench_against.py --against ../old   # every bar, then the table
    python benchmarks/bench_against.py --against ../old --only board,missing --rounds 3
    python benchmarks/bench_against.py --against ../old --only crossed,arena   # the defaults
    python benchmarks/bench_against.py --against ../old --readme   # and rewrite README's table

Each bar runs in fresh interpreters, alternately with this code and with the
checkout (``PYTHONPATH`` first; the script checks which mixrank it imported),
``--rounds`` times each; a round reports the best of its repeats.  The table
gives the best round of each side and their ratio (this code / earlier): on a
shared machine only timings of the two codes interleaved in one run compare.

Bars (the data generators of ``bench_engine.py`` and ``_entries.py``):

* ``board``: the 58-model x 805-item leaderboard, ``(1|subject)``, all 1,653
  pairs, one process (best of 5 fits per round);
* ``missing``: 15 models x 57 x 100 x 100 (8.55M rows) with 20% of the cells
  missing, ``(1|subject) + (1|subject:question) + (1|prompt)``, all 105 pairs,
  one process, from a prebuilt frame (best of 2 per round);
* ``entries``: one row per (model, cell), 50 models x 250,000 cells with 20%
  missing (10M rows, parquet written once by DuckDB under
  ``benchmarks/out/``), the DuckDB backend's compressed frame, all 1,225 pairs
  on 2 workers (one fit per round; needs the ``scale`` extra);
* ``crossed``: the ``missing`` design with ``(1|subject/question) + (1|prompt)`` and the
  default ``df="satterthwaite-vc"``, all 105 pairs, one process, from a prebuilt frame
  (best of 2 per round; ``bench_defaults.py`` times it against a group-by);
* ``arena``: 1M battles x 20 models with 40,000 question clusters, the default clustered
  CR2: ``arena()`` + ``contrasts()`` + ``rank_intervals()`` (best of 3 per round;
  ``bench_defaults.py`` times it against a group-by).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _common import markdown_table, replace_readme_block  # noqa: E402
from bench_engine import machine  # noqa: E402

_CHILD = r"""
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
warnings.simplefilter("ignore")
import mixrank
bar, extra = sys.argv[2], sys.argv[3]

def best(fn, n):
    out = float("inf")
    for _ in range(n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter(); fn(); out = min(out, time.perf_counter() - t)
    return out

mixrank.fit   # the statistics imported before any timing
if bar == "board":
    from bench_engine import leaderboard
    f = "correct ~ model + (1|subject)"
    fr = mixrank.build_frame(leaderboard(), f)
    s = best(lambda: mixrank.fit(f, fr, control=mixrank.Control(workers=1)), 5)
elif bar == "crossed":
    from bench_defaults import CROSSED, crossed_data
    fr = mixrank.build_frame(crossed_data(), CROSSED)
    s = best(lambda: mixrank.fit(CROSSED, fr, control=mixrank.Control(workers=1)), 2)
elif bar == "arena":
    from bench_defaults import arena_log, arena_run
    log = arena_log()
    s = best(lambda: arena_run(log), 3)
elif bar == "missing":
    from _common import big_design
    from bench_engine import FORMULA
    d = big_design(models=15, missing=0.2, seed=2)
    fr = mixrank.build_frame(d, FORMULA)
    del d
    s = best(lambda: mixrank.fit(FORMULA, fr, control=mixrank.Control(workers=1)), 2)
else:
    from _entries import DUCKDB, FORMULA
    from mixrank.io.backends import load_frame
    fr = load_frame(extra, FORMULA, backend="duckdb", options={**DUCKDB, "layout": "compressed"})
    s = best(lambda: mixrank.fit(FORMULA, fr, control=mixrank.Control(workers=2)), 1)
print(json.dumps({"where": mixrank.__file__, "seconds": s}))
"""

BARS = {
    "board": "leaderboard 58 × 805, (1|subject): 1,653 pairs, 1 process",
    "missing": "105 pairs, 20% of cells missing (8.55M rows), 1 process",
    "entries": "10M rows, one per (model, cell): 1,225 pairs, compressed frame, 2 workers",
    "crossed": "crossed default, (1|subject/question) + (1|prompt): 105 pairs, 6.84M rows, 1 process",
    "arena": "clustered arena default, 1M battles x 20 models, 40k questions: fit + contrasts + "
             "rank intervals",
}


def run(root: Path, bar: str, extra: str) -> float:
    """Seconds of ``bar`` with the mixrank of checkout ``root`` (a fresh interpreter)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    p = subprocess.run([sys.executable, "-c", _CHILD, str(HERE), bar, extra],
                       capture_output=True, text=True, env=env, cwd=root)
    if p.returncode != 0:
        raise SystemExit(f"{bar} with {root} failed:\n{p.stderr[-3000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    if not Path(out["where"]).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"{root}: imported mixrank from {out['where']}, not that checkout")
    return float(out["seconds"])


def entries_file() -> str:
    """The 10M-row parquet of the ``entries`` bar (written by DuckDB on first use)."""
    from _entries import write_entries

    path = HERE / "out" / "scale" / "entries" / "rows-10000000.parquet"
    if not path.exists():
        print(f"writing {path} ...", flush=True)
        write_entries(path, 10_000_000)
    return str(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=Path, required=True,
                    help="a checkout of earlier code (e.g. a git worktree)")
    ap.add_argument("--only", default=",".join(BARS), help="comma-separated bars: "
                    + ", ".join(BARS))
    ap.add_argument("--rounds", type=int, default=4, help="alternating rounds per bar")
    ap.add_argument("--readme", action="store_true", help="rewrite README's table")
    args = ap.parse_args()
    bars = [b.strip() for b in args.only.split(",") if b.strip()]
    bad = [b for b in bars if b not in BARS]
    if bad:
        raise SystemExit(f"--only: unknown bar(s) {bad}; expected {list(BARS)}")
    if not (args.against / "mixrank" / "__init__.py").exists():
        raise SystemExit(f"--against {args.against}: no mixrank package there")
    rev = subprocess.run(["git", "-C", str(args.against), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip() or str(args.against)
    here = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    header = machine()
    print("machine:", header)
    rows = []
    for bar in bars:
        extra = entries_file() if bar == "entries" else ""
        new, old = [], []
        for _ in range(args.rounds):
            old.append(run(args.against, bar, extra))
            new.append(run(ROOT, bar, extra))
        n, o = min(new), min(old)
        print(f"{bar}: this code {n:.2f} s (rounds {', '.join(f'{x:.2f}' for x in new)}); "
              f"{rev} {o:.2f} s (rounds {', '.join(f'{x:.2f}' for x in old)}) -> {n / o:.2f}x",
              flush=True)
        rows.append((BARS[bar], f"{n:.2f} s", f"{rev} {o:.2f} s", f"{n / o:.2f}×"))
    if args.readme:
        table = markdown_table("| bar | this code | earlier code | ratio |", rows)
        block = ("<!-- bench:against:start (python benchmarks/bench_against.py --readme) -->\n"
                 f"Measured by `python benchmarks/bench_against.py --against <checkout of "
                 f"{rev}> --readme` at {here} on {header}; best of {args.rounds} alternating "
                 "rounds in fresh interpreters for each side.\n\n" + table
                 + "\n<!-- bench:against:end -->")
        replace_readme_block("against", block)
        print("README table rewritten")


if __name__ == "__main__":
    main()
