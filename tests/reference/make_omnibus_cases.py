"""Inputs of tests/reference/omnibus.R: the designs of ``res.omnibus()``'s clubSandwich check.

Run from the repository root (only if the designs below change):

    python tests/reference/make_omnibus_cases.py
    Rscript tests/reference/omnibus.R

Each design is a ``mixrank.simulate`` data set (one row per cell: no replicates), fitted
with ``correct ~ model + (1|subject)``; clubSandwich refits ``lm(correct ~ 0 + model)``
clustered by subject on the same rows (docs/methods.md §12).  Balanced and unbalanced
subjects, Gaussian and 0/1 scores, one design with cells a model did not score.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "omnibus_cases.json"
SEED = 20261207
#: name -> (models, questions per subject, family, missing, sd_model_subject)
DESIGNS = {
    "balanced_gaussian_4x8": (4, [6] * 8, "gaussian", 0.0, 0.5),
    "unbalanced_gaussian_5x10": (5, [2, 25, 4, 9, 3, 14, 6, 5, 30, 7], "gaussian", 0.0, 0.6),
    "unbalanced_binary_3x7": (3, [3, 40, 8, 12, 5, 22, 9], "binomial", 0.0, 0.7),
    "missing_gaussian_4x9": (4, [5, 12, 3, 20, 8, 6, 15, 4, 10], "gaussian", 0.12, 0.5),
}


def cases(seed: int) -> list[dict]:
    import mixrank

    out = []
    for i, (name, (k, q, family, missing, sd)) in enumerate(DESIGNS.items()):
        d = mixrank.simulate(models=k, subjects=len(q), questions=q, family=family,
                             missing=missing, sd_model_subject=sd, sd_model_question=0.0,
                             sd_residual=1.0, rng=np.random.default_rng(seed + i))
        d = d.dropna(subset=["correct"])
        out.append(dict(design=name, model=d["model"].astype(str).tolist(),
                        subject=d["subject"].astype(str).tolist(),
                        question=d["question"].astype(str).tolist(),
                        correct=[float(v) for v in d["correct"]]))
    return out


if __name__ == "__main__":
    OUT.write_text(json.dumps(dict(seed=SEED, cases=cases(SEED))))
    print("wrote", OUT)
