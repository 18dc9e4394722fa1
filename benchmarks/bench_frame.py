"""Frame-building benchmark (parsing, validation and encoding of long data).

    python benchmarks/bench_frame.py [--small]

Builds the frame for 15 models x 57 subjects x 100 questions x 100 prompts
(8.55M rows; categorical key columns, as read from parquet) and prints rows
per second and the peak memory traced during the build, relative to the
input's in-memory size.  Targets on a 2-core machine: >= 5M rows/s, peak
< 3x input.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import big_design, gb, measure  # noqa: E402

import mixrank  # noqa: E402

FORMULA = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true", help="a 10x smaller design (quick check)")
    args = ap.parse_args()
    q = 10 if args.small else 100
    df = big_design(questions=q)
    size = df.memory_usage(deep=True).sum()
    mixrank.build_frame(big_design(models=3, subjects=3, questions=3, prompts=3), FORMULA)  # warm-up
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        fr = mixrank.build_frame(df, FORMULA)
        times.append(time.perf_counter() - t0)
    with measure() as m:  # memory tracing slows allocation: a separate run
        mixrank.build_frame(df, FORMULA)
    rows = len(df)
    rate = rows / min(times)
    # the same table as read from CSV: string key columns (estimated on a 1% sample)
    keys = ["model", "subject", "question", "prompt"]
    plain = df.iloc[::100].astype({c: object for c in keys})
    plain = plain.astype({c: str for c in keys}).memory_usage(deep=True).sum() * 100
    print(f"frame build: {rows:,} rows, {fr.n_cells:,} cells, {fr.n_models} models")
    print(f"  time        {min(times):.3f} s (best of 3)  ->  {rate / 1e6:.2f} M rows/s  (target >= 5)")
    print(f"  peak traced {gb(m['peak_bytes'])}")
    print(f"  input, categorical keys  {gb(size)}  ->  peak {m['peak_bytes'] / size:.2f} x input "
          "(target < 3)")
    print(f"  input, string keys       {gb(plain)}  ->  peak {m['peak_bytes'] / plain:.2f} x input "
          "(target < 3)")


if __name__ == "__main__":
    main()
