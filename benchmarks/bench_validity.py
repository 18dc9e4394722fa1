"""The validity grid of docs/methods.md, "Validity with few units" (seeded; slow).

Runs the replicates of tests/validity/runner.py on the issue's grid (6 and 10
models, 8-15 subjects of 5-60 questions, 0/1 latent-logistic or Gaussian
outcomes, with model x subject or model x question effects) under the global
null, and one design with gaps for power, for df="cr2" (the default) and
df="satterthwaite" (lme4 + lmerTest), and prints one row per design and method:
per-pair type-I error, 95% CI coverage, Holm / max-t / step-down family-wise
error, simultaneous rank-interval coverage, Holm power.

    python benchmarks/bench_validity.py [replicates] [design name filter]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # the repository root

from tests.validity.runner import run  # noqa: E402

GRID = [
    ("6 models x 8 subjects, 0/1, model x subject", (6, 8), {}),
    ("6 models x 12 subjects, Gaussian, model x question", (6, 12),
     dict(outcome="gaussian", sd_model_subject=0.0, sd_model_question=0.5)),
    ("10 models x 10 subjects, 0/1, model x subject", (10, 10), {}),
    ("10 models x 15 subjects, Gaussian, model x subject", (10, 15), dict(outcome="gaussian")),
    ("6 models x 10 subjects, 0/1, gaps 0..0.5 (power)", (6, 10),
     dict(gaps=np.linspace(0, 0.5, 6))),
    ("6 models x 10 subjects, 0/1, gaps 0..1.5 (power)", (6, 10),
     dict(gaps=np.linspace(0, 1.5, 6))),
]
ANSWERS = ["pair", "cover", "holm", "maxt", "stepdown", "rank_cover", "power"]


def main(reps: int, only: str | None = None) -> None:
    print(f"{reps} replicates per design (seeds 0..{reps - 1}); mean (MC SE)")
    print("| design | df | " + " | ".join(ANSWERS) + " |")
    print("|---|---|" + "---|" * len(ANSWERS))
    for name, args, kw in GRID:
        if only is not None and only not in name:
            continue
        t0 = time.perf_counter()
        res = run(range(reps), *args, ranks=True, **kw)
        for how in ("cr2", "satterthwaite"):
            cells = [f"{res[k][0]:.3f} ({res[k][1]:.3f})" if (k := f"{how}_{a}") in res else "–"
                     for a in ANSWERS]
            print(f"| {name} | {how} | " + " | ".join(cells) + " |")
        print(f"<!-- {name}: {time.perf_counter() - t0:.0f} s -->", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300, sys.argv[2] if len(sys.argv) > 2 else None)
