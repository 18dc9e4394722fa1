"""Write the simulated designs of the model x covariate reference suite.

Stage: test reference data (not part of the package).
Inputs: none (seeded numpy draws).  Outputs:
``tests/reference/interaction_cases/<case>.csv.gz`` (long format, ``model,
subject, question, prompt, correct`` plus covariate columns) and
``tests/reference/interaction_cases/cases.json`` (per case: file, formula,
pairs, the ``by`` covariates to contrast).

Regenerate from the repository root with::

    python tests/reference/make_interaction_cases.py
    Rscript tests/reference/interactions.R

Each model's score on a cell is ``a_m + g_m(covariates) + u_ms + v_mq + w_mp + e``
with model-specific random effects, so the paired differences follow
``d ~ 1 + x + (random terms)``.  Scores are rounded to 6 decimals so that R
and Python read identical numbers.

Cases:

* ``balanced``: ``model * difficulty`` (3 levels, question-level), nested
  ``(1|subject) + (1|subject:question)``, every cell observed.
* ``unbalanced``: ``model * (difficulty + length)`` (length numeric), crossed
  ``(1|subject) + (1|prompt)``, unequal subject sizes, 20% of each model's
  cells missing.
* ``numeric``: ``model * length`` only (a slope), ``(1|subject) + (1|subject:question)``.
* ``crossed_xz``: ``model * difficulty * fmt`` (``fmt`` a prompt-level format,
  A for the first half of the prompts): main effects and their interaction,
  so the type III hypotheses need the containment step; 20% cells missing.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / "interaction_cases"
DIFF = ("easy", "hard", "medium")


def simulate(seed: int, sizes: list[int], prompts: int, missing: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    q_info = []
    for s, nq in enumerate(sizes):
        for q in range(nq):
            q_info.append((f"s{s + 1:02d}", f"s{s + 1:02d}_q{q + 1:02d}",
                           DIFF[int(rng.integers(3))] if missing else DIFF[q % 3],
                           round(float(rng.normal(0, 1.5)), 3)))
    models = ["m01", "m02", "m03"]
    slope = {"m01": 0.0, "m02": 0.3, "m03": -0.2}
    level_eff = {m: dict(zip(DIFF, rng.normal(0, 0.5, 3))) for m in models}
    for m_i, m in enumerate(models):
        u = {s: rng.normal(0, 0.5) for s, *_ in q_info}
        w = {p: rng.normal(0, 0.4) for p in range(prompts)}
        for s, q, diff, length in q_info:
            v = rng.normal(0, 0.6)
            for p in range(prompts):
                if missing and rng.random() < missing:
                    continue
                y = (0.2 * m_i + level_eff[m][diff] + slope[m] * length + u[s] + v + w[p]
                     + rng.normal(0, 1.0))
                rows.append(dict(model=m, subject=s, question=q, prompt=f"p{p + 1}",
                                 difficulty=diff, length=length,
                                 fmt="A" if 2 * p < prompts else "B", correct=round(y, 6)))
    return pd.DataFrame(rows)


CASES = {
    "balanced": ("correct ~ model * difficulty + (1|subject) + (1|subject:question)",
                 dict(seed=20261130, sizes=[6] * 8, prompts=3, missing=0.0), ["difficulty"]),
    "unbalanced": ("correct ~ model * (difficulty + length) + (1|subject) + (1|prompt)",
                   dict(seed=20261131, sizes=[4, 6, 8, 10, 12, 14, 5, 9], prompts=4,
                        missing=0.2), ["difficulty", "length"]),
    "numeric": ("correct ~ model * length + (1|subject) + (1|subject:question)",
                dict(seed=20261132, sizes=[5] * 10, prompts=3, missing=0.0), ["length"]),
    "crossed_xz": ("correct ~ model * difficulty * fmt + (1|subject)",
                   dict(seed=20261133, sizes=[4, 6, 8, 10, 12, 14, 5, 9], prompts=4,
                        missing=0.2), ["difficulty", "fmt"]),
}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    manifest = []
    for name, (formula, kw, by) in CASES.items():
        df = simulate(**kw)
        df.to_csv(OUT / f"{name}.csv.gz", index=False)
        pairs = [list(p) for p in combinations(sorted(df["model"].unique()), 2)]
        manifest.append(dict(name=name, file=f"{name}.csv.gz", formula=formula,
                             pair_by=["subject", "question", "prompt"], pairs=pairs, by=by,
                             rows=len(df), simulate=kw))
    (OUT / "cases.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
