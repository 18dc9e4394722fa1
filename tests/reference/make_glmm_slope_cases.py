"""Write the simulated binomial ``model * x`` reference designs with a NUMERIC covariate
(seeded) for tests/reference/glmer_slope.R.

Run from the repository root: ``python tests/reference/make_glmm_slope_cases.py``.
Output: ``tests/reference/glmm_slope_cases/<case>.csv.gz`` and ``cases.json``
(formula, covariate and cell keys of each case).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).parent / "glmm_slope_cases"


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def counts(rng: np.random.Generator) -> pd.DataFrame:
    """k-of-10 counts, 4 models x 80 questions in 10 subjects; a numeric difficulty per
    question (standard normal); the models' slopes in difficulty differ."""
    M, S, Q, n = 4, 10, 8, 10
    a = np.array([0.0, 0.3, 0.6, 0.9])
    b = np.array([-0.8, -0.6, -1.0, -0.4])
    rows = []
    for s in range(S):
        bs = rng.normal(0, 0.9)
        for q in range(Q):
            x = round(float(rng.normal(0, 1)), 3)
            bq = rng.normal(0, 0.8)
            for m in range(M):
                eta = a[m] + b[m] * x + bs + bq
                rows.append((f"m{m}", f"s{s}", f"q{q}", x, int(rng.binomial(n, _expit(eta))), n))
    return pd.DataFrame(rows, columns=["model", "subject", "question", "difficulty", "k", "n"])


def binary(rng: np.random.Generator) -> pd.DataFrame:
    """0/1 rows, 3 models x 150 questions, a numeric length per question (1..9), one
    question term; a model with no answer on some questions (unbalanced)."""
    M, Q = 3, 150
    a = np.array([0.2, 0.5, -0.1])
    b = np.array([-0.15, -0.05, -0.25])
    rows = []
    for q in range(Q):
        x = int(rng.integers(1, 10))
        bq = rng.normal(0, 1.0)
        for m in range(M):
            if m == 2 and q % 7 == 0:
                continue
            eta = a[m] + b[m] * (x - 5) + bq
            rows.append((f"m{m}", f"q{q:03d}", x, int(rng.random() < _expit(eta))))
    return pd.DataFrame(rows, columns=["model", "question", "length", "correct"])


CASES = {
    "counts": (counts, "cbind(k, n - k) ~ model * difficulty + (1|subject) + (1|subject:question)",
               "difficulty", ["subject", "question"]),
    "binary": (binary, "correct ~ model * length + (1|question)", "length", ["question"]),
}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    meta = {}
    for i, (name, (make, formula, by, items)) in enumerate(CASES.items()):
        df = make(np.random.default_rng(2400 + i))
        df.to_csv(OUT / f"{name}.csv.gz", index=False)
        meta[name] = {"formula": formula, "by": by, "items": items}
    (OUT / "cases.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
