"""Interactive-speed benchmark (issue 25): nothing a user waits for.

    python benchmarks/bench_interactive.py            # everything (~3-6 min with R)
    python benchmarks/bench_interactive.py --readme   # everything, then rewrite README's table
    python benchmarks/bench_interactive.py --no-r     # without the lme4 + lmerTest peer
    python benchmarks/bench_interactive.py --only loso,report   # parts 3 and 4 only
    python benchmarks/bench_interactive.py --only pair --against ../old   # part 5, and against
                                                         # a checkout of earlier code

Measures in one run, each as a ratio to a peer timed in the same run:

1. start-up: ``mixrank --version`` and ``mixrank --help`` (fresh interpreters,
   best of 5) against ``python -c "import pandas"`` (target <= 1x); and
   ``import mixrank; mixrank.fit`` (the statistics loaded) against
   ``import pandas, scipy.stats``;
2. the leaderboard of 58 models x 805 items in 9 subjects with
   ``correct ~ model + (1|subject)`` (all 1,653 pairs; the same generator as
   ``bench_engine.py``): ``contrasts(adjust="maxt")`` and
   ``rank_probabilities()`` against the fit (target <= 1x each);
3. leave-one-cluster-out with two random terms: 31 models x 479 questions x
   4 prompts, ``correct ~ model + (1|question) + (1|prompt)``, the 30
   adjacent pairs, one replicate per question, against the whole fit
   (target <= 25x); complete data, and with 10% of the cells missing;
4. ``mixrank report ... --sensitivity loso,bootstrap`` on the complete data
   of 3 as one command (target <= 15 s);
5. one unbalanced pair of 2,215 cells (35 subjects x 10 questions x 10
   prompts, each model missing 20% of its cells) with ``correct ~ model +
   (1|subject) + (1|subject:question) + (1|prompt)`` and ``estimand="gls"``
   (lme4's fixed effect): the whole ``fit(...).contrasts()`` from the data
   frame, best of 10 (target <= 3 ms), against lme4 + lmerTest (``lmer`` +
   ``summary``, timed inside R).

Wall seconds on a shared machine are noisy: the table states machine,
cores, load and date; compare the ratios.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import big_design  # noqa: E402
from bench_engine import FORMULA, leaderboard, machine, pair_frame, time_lme4  # noqa: E402

import mixrank  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "docs" / "project" / "benchmarks.md"   # the tables left the README (issue 40)
LOSO_FORMULA = "correct ~ model + (1|question) + (1|prompt)"


def startup_seconds(code: list[str], repeats: int = 5) -> float:
    """Best wall seconds of a fresh interpreter running ``code`` (python arguments)."""
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run([sys.executable, *code], check=True, capture_output=True, cwd=ROOT)
        best = min(best, time.perf_counter() - t)
    return best


def timed(fn, repeats: int = 1):
    """Best wall seconds of ``repeats`` calls and the last result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            out = fn()
            best = min(best, time.perf_counter() - t)
    return best, out


def part_startup(rows: list[tuple[str, str, str, str]]) -> None:
    print("== 1. start-up ==")
    pd_s = startup_seconds(["-c", "import pandas"])
    for flag in ("--version", "--help"):
        s = startup_seconds(["-m", "mixrank", flag])
        print(f"mixrank {flag}: {s:.3f} s; python -c 'import pandas' {pd_s:.3f} s -> "
              f"{s / pd_s:.2f}x (target <= 1x)")
        rows.append((f"`mixrank {flag}` (fresh interpreter, best of 5)", f"{s:.3f} s",
                     f"`python -c \"import pandas\"` {pd_s:.3f} s", f"{s / pd_s:.2f}× (≤ 1×)"))
    full = startup_seconds(["-c", "import mixrank; mixrank.fit"])
    peer = startup_seconds(["-c", "import pandas, scipy.stats"])
    print(f"import mixrank; mixrank.fit: {full:.3f} s; import pandas, scipy.stats {peer:.3f} s "
          f"-> {full / peer:.2f}x")
    rows.append(("`import mixrank; mixrank.fit` (statistics loaded)", f"{full:.3f} s",
                 f"`import pandas, scipy.stats` {peer:.3f} s", f"{full / peer:.2f}×"))


def part_leaderboard(rows: list[tuple[str, str, str, str]]) -> None:
    print("== 2. leaderboard 58 x 805, (1|subject): max-t and rank probabilities ==")
    f = "correct ~ model + (1|subject)"
    data = leaderboard()
    fit_s, res = timed(lambda: mixrank.fit(f, data), repeats=3)
    maxt_s, _ = timed(lambda: mixrank.fit(f, data).contrasts(adjust="maxt"), repeats=1)
    maxt_s -= fit_s                   # a fresh fit each time: the accessor's own cost
    prob_s, _ = timed(lambda: res.rank_probabilities(), repeats=1)
    for label, s in (("contrasts(adjust=\"maxt\")", maxt_s), ("rank_probabilities()", prob_s)):
        print(f"{label}: {s:.2f} s; fit {fit_s:.2f} s -> {s / fit_s:.2f}x (target <= 1x)")
        rows.append((f"leaderboard 58 × 805, `{label}`", f"{s:.2f} s",
                     f"the fit (1,653 pairs) {fit_s:.2f} s", f"{s / fit_s:.2f}× (≤ 1×)"))


def loso_data(missing: float, models: int = 31, questions: int = 479, prompts: int = 4,
              seed: int = 0) -> pd.DataFrame:
    """0/1 scores with question and prompt effects per model (categorical keys)."""
    rng = np.random.default_rng(seed)
    ability = np.linspace(1, -1, models)
    qd, pe = rng.normal(0, 1.5, questions), rng.normal(0, 0.3, prompts)
    mq, mp = rng.normal(0, 0.8, (models, questions)), rng.normal(0, 0.2, (models, prompts))
    M, Q, P = np.meshgrid(np.arange(models), np.arange(questions), np.arange(prompts),
                          indexing="ij")
    eta = ability[M] - qd[Q] + pe[P] + mq[M, Q] + mp[M, P]
    y = (rng.random(eta.shape) < 1 / (1 + np.exp(-eta))).astype(np.int8)
    df = pd.DataFrame({
        "model": pd.Categorical.from_codes(M.ravel(), [f"m{i:02d}" for i in range(models)]),
        "question": pd.Categorical.from_codes(Q.ravel(), [f"q{i:03d}" for i in range(questions)]),
        "prompt": pd.Categorical.from_codes(P.ravel(), [f"p{i}" for i in range(prompts)]),
        "correct": y.ravel()})
    if missing:
        df = df[rng.random(len(df)) >= missing].reset_index(drop=True)
    return df


def part_loso(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    print("== 3. leave-one-question-out, (1|question) + (1|prompt), 30 adjacent pairs ==")
    complete = None
    for missing in (0.0, 0.1):
        data = loso_data(missing)
        complete = data if missing == 0 else complete
        fit_s, res = timed(lambda d=data: mixrank.fit(LOSO_FORMULA, d), repeats=3)
        loso_s, tab = timed(lambda r=res: r.sensitivity("loso", unit="question"))
        reps = tab["replicate"].nunique()
        pairs = len(tab) // reps
        kind = "complete" if missing == 0 else "10% of cells missing"
        print(f"{kind}: LOSO {loso_s:.2f} s ({reps} replicates x {pairs} pairs); whole fit "
              f"({res.frame.n_models} models) {fit_s:.2f} s -> {loso_s / fit_s:.1f}x "
              "(target <= 25x)")
        rows.append((f"leave-one-question-out, 31 models × 479 questions × 4 prompts, {kind}, "
                     f"{pairs} adjacent pairs × {reps} replicates", f"{loso_s:.2f} s",
                     f"the fit ({len(res.pairs)} pairs) {fit_s:.2f} s",
                     f"{loso_s / fit_s:.1f}× (≤ 25×)"))
    assert complete is not None
    return complete


def part_report(rows: list[tuple[str, str, str, str]], data: pd.DataFrame) -> None:
    print("== 4. mixrank report --sensitivity loso,bootstrap ==")
    with tempfile.TemporaryDirectory() as td:
        src, out = Path(td) / "board.parquet", Path(td) / "r.html"
        data.to_parquet(src)
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "mixrank", "report", str(src), "-f",
                            LOSO_FORMULA, "--sensitivity", "loso,bootstrap", "-o", str(out),
                            "--quiet"], capture_output=True, text=True, cwd=ROOT)
        s = time.perf_counter() - t
        ok = p.returncode == 0 and "How robust is the clustered verdict" in out.read_text()
    print(f"report with loso,bootstrap (B = 1000): {s:.1f} s (target <= 15 s); ok: {ok}")
    if not ok:
        print(p.stderr[-2000:])
    rows.append(("`mixrank report` of the complete board above, `--sensitivity loso,bootstrap` "
                 "(B = 1000), one command", f"{s:.1f} s", "target 15 s", f"{s / 15:.2f} of it"))


def part_pair(rows: list[tuple[str, str, str, str]], with_r: bool) -> None:
    print("== 5. one unbalanced pair, 2,215 cells: the whole fit(...).contrasts() ==")
    d = big_design(models=2, subjects=35, questions=10, prompts=10, missing=0.2, seed=1)
    # estimand="gls": lme4's fixed effect, so the SE and df printed are comparable
    mixrank.fit(FORMULA, d, estimand="gls").contrasts()   # warm: imports, formula cache
    s, con = timed(lambda: mixrank.fit(FORMULA, d, estimand="gls").contrasts(), repeats=10)
    _, pairdf = pair_frame(d)
    c = con.iloc[0]
    print(f"n = {len(pairdf):,}: {s * 1e3:.2f} ms best of 10 (target <= 3 ms); SE "
          f"{c.std_error:.6g}, df {c.df:.5g}")
    peer, ratio = "—", ""
    if with_r:
        with tempfile.TemporaryDirectory() as td:
            r = time_lme4(pairdf, Path(td))
        if r:
            print(f"lme4 + lmerTest {r['seconds']:.3f} s (SE {r['se']:.6g}, df {r['df']:.5g}) "
                  f"-> mixrank {r['seconds'] / s:.0f}x faster")
            peer, ratio = f"lme4 + lmerTest {r['seconds']:.3f} s", f"{r['seconds'] / s:.0f}×"
    rows.append((f"one unbalanced pair, {len(pairdf):,} cells, 3 random terms: "
                 "`fit(data).contrasts()` best of 10", f"{s * 1e3:.2f} ms (≤ 3 ms)", peer, ratio))


_PAIR_SCRIPT = r"""
import sys, time, warnings
sys.path.insert(0, sys.argv[1])
from _common import big_design
import mixrank
warnings.simplefilter("ignore")
f = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
d = big_design(models=2, subjects=35, questions=10, prompts=10, missing=0.2, seed=1)
mixrank.fit(f, d, estimand="gls").contrasts()
best = float("inf")
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    mixrank.fit(f, d, estimand="gls").contrasts()
    best = min(best, time.perf_counter() - t)
print(mixrank.__file__, best)
"""


def pair_in(root: Path, repeats: int) -> float:
    """Best seconds of the pair's ``fit(...).contrasts()`` with the mixrank of checkout ``root``
    (a fresh interpreter with ``root`` first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    p = subprocess.run([sys.executable, "-c", _PAIR_SCRIPT, str(ROOT / "benchmarks"),
                        str(repeats)], capture_output=True, text=True, env=env, cwd=root,
                       check=True)
    where, best = p.stdout.split()
    if not Path(where).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"--against {root}: imported mixrank from {where}, not that checkout")
    return float(best)


def part_against(rows: list[tuple[str, str, str, str]], base: Path, rounds: int = 5) -> None:
    print(f"== 5b. the same pair against the code of {base}, alternately ==")
    new, old = [], []
    for _ in range(rounds):
        old.append(pair_in(base, 20))
        new.append(pair_in(ROOT, 20))
    rev = subprocess.run(["git", "-C", str(base), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip() or str(base)
    n, o = min(new), min(old)
    print(f"this code {n * 1e3:.2f} ms, {rev} {o * 1e3:.2f} ms (best of {rounds} x 20 each, "
          f"alternating) -> {n / o:.2f}x")
    rows.append((f"the same pair, this code against commit {rev} (alternating fresh "
                 f"interpreters, best of {rounds} × 20 each)", f"{n * 1e3:.2f} ms",
                 f"{rev} {o * 1e3:.2f} ms", f"{n / o:.2f}×"))


def write_readme(rows: list[tuple[str, str, str, str]], header: str) -> None:
    table = "\n".join(["| what | mixrank | peer | ratio (target) |", "|---|---|---|---|"]
                      + ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"
                         for row in rows])
    block = ("<!-- bench:interactive:start (python benchmarks/bench_interactive.py --readme) -->\n"
             f"Measured by `python benchmarks/bench_interactive.py --readme` on {header}. "
             "Each ratio is against the peer timed in the same run.\n\n" + table
             + "\n<!-- bench:interactive:end -->")
    text = README.read_text()
    pat = re.compile(r"<!-- bench:interactive:start.*?<!-- bench:interactive:end -->", re.S)
    if not pat.search(text):
        raise SystemExit(f"{README} has no bench:interactive markers")
    README.write_text(pat.sub(lambda _: block, text))
    print(f"wrote {len(rows)} rows to {README}")


#: ``--only`` names of the parts.
_NAMES = {"startup": "1", "leaderboard": "2", "loso": "3", "report": "4", "pair": "5"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--readme", action="store_true", help="rewrite README's table")
    ap.add_argument("--no-r", action="store_true", help="skip the lme4 + lmerTest peer")
    ap.add_argument("--against", type=Path, default=None,
                    help="a checkout of earlier code (e.g. a git worktree): part 5 also times "
                    "the pair with it, alternately with this code")
    ap.add_argument("--parts", default="1,2,3,4,5", help="comma-separated parts to run")
    ap.add_argument("--only", default=None, help="comma-separated parts by name instead: "
                    + ", ".join(f"{k} ({v})" for k, v in _NAMES.items()))
    args = ap.parse_args()
    header = machine()
    print("machine:", header)
    parts = {p.strip() for p in args.parts.split(",")}
    if args.only is not None:
        bad = [x for x in args.only.split(",") if x.strip() not in _NAMES]
        if bad:
            raise SystemExit(f"--only: unknown part(s) {bad}; expected {list(_NAMES)}")
        parts = {_NAMES[x.strip()] for x in args.only.split(",")}
    rows: list[tuple[str, str, str, str]] = []
    if "1" in parts:
        part_startup(rows)
    if "2" in parts:
        part_leaderboard(rows)
    board = part_loso(rows) if "3" in parts else loso_data(0.0)
    if "4" in parts:
        part_report(rows, board)
    if "5" in parts:
        part_pair(rows, not args.no_r)
        if args.against is not None:
            part_against(rows, args.against)
    if args.readme:
        write_readme(rows, header)


if __name__ == "__main__":
    main()
