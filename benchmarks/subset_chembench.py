"""Evidence for docs/subset.md §5: leave-one-model-out on the bundled ChemBench leaderboard.

Each of the 25 systems (``prompt == "default"``) in turn is the "new" model,
the other 24 the reference; ``--seeds`` stratified selections of k items are
drawn per held-out model (k = 50, 100, 200) and each estimate is compared with
the model's true mean over all 2,788 questions: mean absolute error, its ratio
to a simple random sample of the same k, coverage of the 95% intervals.  Then
k = 100 with the 2PL item model, and the ratio as the reference grows (random
subsets of 3 ... 24 reference models, drawn per seed).

    python benchmarks/subset_chembench.py            # print the tables
    python benchmarks/subset_chembench.py --docs     # also write them into docs/subset.md

Run under ``nice``; about 5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, markdown_table  # noqa: E402

import mixrank  # noqa: E402
from mixrank.subset.validation import leave_one_out, loo_summary  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent / "docs" / "subset.md"
LABEL = {"model_assisted": "model-assisted (design-based)",
         "stratified_mean": "stratified mean (design-based)",
         "irt": "pure IRT (model-based)", "random_sample": "simple random sample"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--curve-seeds", type=int, default=8)
    p.add_argument("--docs", action="store_true", help="write the tables into docs/subset.md")
    args = p.parse_args()
    data = mixrank.load_dataset("chembench").query("prompt == 'default'")
    header = machine()
    rows = []
    t0 = time.perf_counter()
    for item_model, ks in (("rasch", (50, 100, 200)), ("2pl", (100,))):
        for k in ks:
            s = loo_summary(leave_one_out(data, k, seeds=args.seeds, item_model=item_model,
                                          rng=k))
            for r in s.itertuples(index=False):
                if item_model == "2pl" and r.method in ("random_sample", "stratified_mean"):
                    continue
                rows.append([str(k), item_model, LABEL[r.method], f"{r.mae:.4f}",
                             f"{r.mae_ratio:.2f}", f"{r.coverage:.3f}",
                             f"{r.mean_std_error:.4f}", str(r.n)])
    table = markdown_table("| k | item model | estimate | MAE | MAE / SRS | coverage (95%) | "
                           "mean SE | intervals |", rows)
    curve = []
    for n_ref in (3, 6, 12, 18, 24):
        s = loo_summary(leave_one_out(data, 100, seeds=args.curve_seeds,
                                      n_reference=None if n_ref == 24 else n_ref, rng=n_ref))
        by = s.set_index("method")
        curve.append([str(n_ref), f"{by.loc['model_assisted', 'mae_ratio']:.2f}",
                      f"{by.loc['model_assisted', 'coverage']:.3f}",
                      f"{by.loc['irt', 'mae_ratio']:.2f}", f"{by.loc['irt', 'coverage']:.3f}",
                      str(int(by.loc['model_assisted', 'n']))])
    curve_table = markdown_table("| reference models | model-assisted MAE / SRS | its coverage "
                                 "| pure IRT MAE / SRS | its coverage | intervals |", curve)
    took = time.perf_counter() - t0
    block = (f"<!-- subset:loo:start (benchmarks/subset_chembench.py --seeds {args.seeds}) -->\n"
             f"{header}; {took:.0f} s.\n\n{table}\n\nAs the reference grows (k = 100, "
             f"Rasch, {args.curve_seeds} seeds per held-out model, a new random reference "
             f"subset per seed):\n\n{curve_table}\n<!-- subset:loo:end -->")
    print(block)
    if args.docs:
        text = DOCS.read_text()
        pat = re.compile(r"<!-- subset:loo:start.*?<!-- subset:loo:end -->", re.S)
        if not pat.search(text):
            raise SystemExit("docs/subset.md has no subset:loo markers")
        DOCS.write_text(pat.sub(lambda _: block, text))


if __name__ == "__main__":
    main()
