"""Write the simulated binomial ``model * x`` reference designs (seeded) for
tests/reference/glmer_by.R.

Run from the repository root: ``python tests/reference/make_glmm_by_cases.py``.
Output: ``tests/reference/glmm_by_cases/<case>.csv.gz`` and ``cases.json``
(formula and covariate of each case).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).parent / "glmm_by_cases"


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def levels3(rng: np.random.Generator) -> pd.DataFrame:
    """k-of-10 counts, 4 models x 60 items in 3 difficulty levels; the gap grows with
    difficulty; subjects as units (a model-by-subject term)."""
    M, S, Q, n = 4, 12, 5, 10
    bm = np.array([0.0, 0.3, 0.5, 0.9])
    lev = np.array(["easy", "hard", "medium"])
    shift = {"easy": 1.2, "medium": 0.0, "hard": -1.0}
    slope = {"easy": 0.5, "medium": 1.0, "hard": 1.5}
    rows = []
    for s in range(S):
        x = lev[s % 3]
        bsm = rng.normal(0, 0.3, M)
        for q in range(Q):
            bq = rng.normal(0, 1.0)
            for m in range(M):
                eta = shift[x] + slope[x] * bm[m] + bsm[m] + bq
                rows.append((f"m{m}", f"s{s:02d}", f"q{q}", x, int(rng.binomial(n, _expit(eta))), n))
    return pd.DataFrame(rows, columns=["model", "subject", "question", "difficulty", "k", "n"])


def unbalanced(rng: np.random.Generator) -> pd.DataFrame:
    """0/1 rows, 3 models, a 3-level topic with unequal numbers of items, 25% of the
    (model, item) cells missing at random; shared item effects only (cells are the unit)."""
    M = 3
    sizes = {"algebra": 40, "biology": 90, "chemistry": 25}
    bm = {"algebra": [0.0, 0.6, 0.2], "biology": [0.3, 0.2, 0.9], "chemistry": [-0.2, 0.4, 0.1]}
    rows = []
    for topic, nq in sizes.items():
        for q in range(nq):
            bq = rng.normal(0, 1.1)
            for m in range(M):
                if rng.random() < 0.25:
                    continue
                rows.append((f"m{m}", f"{topic[:3]}{q:03d}", topic,
                             int(rng.random() < _expit(bm[topic][m] + bq))))
    return pd.DataFrame(rows, columns=["model", "question", "topic", "correct"])


CASES = {
    "levels3": dict(formula="cbind(k, n - k) ~ model * difficulty + (1|subject:question) + "
                            "(1|subject:model)", by="difficulty", items=["subject", "question"]),
    "unbalanced": dict(formula="correct ~ model * topic + (1|question)", by="topic",
                       items=["question"]),
}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    rng = np.random.default_rng(20261201)
    for name, fn in (("levels3", levels3), ("unbalanced", unbalanced)):
        fn(rng).to_csv(OUT / f"{name}.csv.gz", index=False)
    (OUT / "cases.json").write_text(json.dumps(CASES, indent=1) + "\n")


if __name__ == "__main__":
    main()
