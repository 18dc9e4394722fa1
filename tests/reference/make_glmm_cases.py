"""Write the simulated binomial GLMM reference designs (seeded) for tests/reference/glmer.R.

Run from the repository root: ``python tests/reference/make_glmm_cases.py``.
Output: ``tests/reference/glmm_cases/<case>.csv.gz`` and ``cases.json`` (the
formula and fit options of each case).  The real-data cases are described
in glmer.R (read from MIXRANK_DATA_DIR in place).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).parent / "glmm_cases"


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def nested(rng: np.random.Generator) -> pd.DataFrame:
    M, S, Q = 4, 6, 25
    bm = np.array([-0.4, 0.0, 0.3, 0.8])
    bs, bq = rng.normal(0, 0.6, S), rng.normal(0, 1.2, (S, Q))
    rows = [(f"m{m}", f"s{s}", f"q{q}", int(rng.random() < _expit(bm[m] + bs[s] + bq[s, q])))
            for s in range(S) for q in range(Q) for m in range(M)]
    return pd.DataFrame(rows, columns=["model", "subject", "question", "correct"])


def crossed(rng: np.random.Generator) -> pd.DataFrame:
    M, Q, P = 4, 50, 5
    bm = np.array([0.2, 0.5, 0.6, 1.1])
    bq, bp = rng.normal(0, 1.0, Q), rng.normal(0, 0.5, P)
    bmp = rng.normal(0, 0.3, (M, P))
    rows = [(f"m{m}", f"q{q:02d}", f"p{p}", int(rng.random() < _expit(bm[m] + bq[q] + bp[p] + bmp[m, p])))
            for q in range(Q) for p in range(P) for m in range(M)]
    return pd.DataFrame(rows, columns=["model", "question", "prompt", "correct"])


def unbalanced(rng: np.random.Generator) -> pd.DataFrame:
    sizes = [5, 12, 20, 33, 8, 40, 15]
    M = 5
    bm = np.linspace(-0.3, 0.7, M)
    rows = []
    for s, nq in enumerate(sizes):
        bs = rng.normal(0, 0.5)
        bsm = rng.normal(0, 0.35, M)
        for q in range(nq):
            bq = rng.normal(0, 1.0)
            for m in range(M):
                if rng.random() < 0.2:
                    continue
                rows.append((f"m{m}", f"s{s}", f"q{q}", int(rng.random() < _expit(bm[m] + bs + bsm[m] + bq))))
    return pd.DataFrame(rows, columns=["model", "subject", "question", "correct"])


def kofn(rng: np.random.Generator) -> pd.DataFrame:
    M, S, Q, n = 5, 3, 40, 10
    bm = np.linspace(-0.5, 0.9, M)
    bs, bq = rng.normal(0, 0.4, S), rng.normal(0, 1.3, (S, Q))
    rows = []
    for s in range(S):
        for q in range(Q):
            for m in range(M):
                k = int(rng.binomial(n, _expit(bm[m] + bs[s] + bq[s, q])))
                rows.append((f"m{m}", f"s{s}", f"s{s}q{q}", k, n))
    return pd.DataFrame(rows, columns=["model", "subject", "question", "k", "n"])


def replicates(rng: np.random.Generator) -> pd.DataFrame:
    """0/1 rows with 4 samples per (model, cell): the Bernoulli form of k-of-n."""
    M, Q, K = 4, 60, 4
    bm = np.array([0.0, 0.3, 0.4, 0.9])
    bq = rng.normal(0, 1.1, Q)
    rows = [(f"m{m}", f"q{q:02d}", r, int(rng.random() < _expit(bm[m] + bq[q])))
            for q in range(Q) for m in range(M) for r in range(K)]
    return pd.DataFrame(rows, columns=["model", "question", "sample", "correct"])


def ceiling(rng: np.random.Generator) -> pd.DataFrame:
    M, Q = 4, 300
    bm = np.array([2.6, 3.0, 3.4, 4.0])           # 93% .. 98%
    bq = rng.normal(0, 1.0, Q)
    rows = [(f"m{m}", f"q{q:03d}", int(rng.random() < _expit(bm[m] + bq[q])))
            for q in range(Q) for m in range(M)]
    return pd.DataFrame(rows, columns=["model", "question", "correct"])


CASES = {
    "nested": (nested, "correct ~ model + (1|subject) + (1|subject:question)", {}),
    "crossed": (crossed, "correct ~ model + (1|question) + (1|prompt) + (1|prompt:model)", {}),
    "unbalanced": (unbalanced, "correct ~ model + (1|subject:question) + (1|subject:model)", {}),
    "kofn": (kofn, "cbind(k, n - k) ~ model + (1|subject) + (1|question)", {}),
    "replicates": (replicates, "correct ~ model + (1|question)", {"replicate": "sample"}),
    "ceiling": (ceiling, "correct ~ model + (1|question)", {}),
}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    meta = {}
    for i, (name, (gen, formula, opts)) in enumerate(CASES.items()):
        df = gen(np.random.default_rng(1400 + i))
        df.to_csv(OUT / f"{name}.csv.gz", index=False)
        meta[name] = dict(file=f"{name}.csv.gz", formula=formula, options=opts, rows=len(df))
    (OUT / "cases.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
