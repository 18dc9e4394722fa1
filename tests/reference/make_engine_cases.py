"""Write the simulated designs of the lme4 engine reference suite.

Stage: test reference data (not part of the package).
Inputs: none (seeded calls of :func:`mixrank.simulate`).
Outputs: ``tests/reference/engine_cases/<case>.csv.gz`` (long format,
``model, subject, question, prompt, correct``) and
``tests/reference/engine_cases/cases.json`` (the manifest: per case the file,
formula, pairing keys, replicate column, pairs and the simulation settings).

Regenerate from the repository root with::

    python tests/reference/make_engine_cases.py
    Rscript tests/reference/lme4_engine.R

The second command fits every case with lme4 + lmerTest and writes
``tests/reference/lme4_engine.json``; ``tests/engine/test_lme4_reference.py``
compares mixrank's native engine with that JSON.  Gaussian scores are rounded
to 6 decimals before writing, so R and Python read identical numbers.

Cases (docs/methods.md §3; designs that exercise balanced, crossed,
unbalanced and boundary fits):

* ``nested_balanced``: ``(1|subject) + (1|subject:question)``, every cell once;
  prompts replicate each question, so ``subject:question`` is separable from
  the residual.
* ``crossed``: ``(1|subject) + (1|subject:question) + (1|prompt)``.
* ``unbalanced``: the crossed formula, unequal subject sizes and 20% of each
  model's cells dropped (pairs share about 64% of the cells); binary scores.
* ``zero_component``: the crossed formula with true ``sd_model_prompt = 0``
  (lme4 reports a singular fit for the prompt component).
* ``two_subjects``: ``(1|subject)`` with only 2 subjects.
* ``dominant``: ``(1|subject) + (1|subject:question)`` with the subject
  component carrying about 90% of the variance.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np

import mixrank

OUT = Path(__file__).resolve().parent / "engine_cases"
NESTED = "correct ~ model + (1|subject) + (1|subject:question)"
CROSSED = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
KEYS = ["subject", "question", "prompt"]

# name -> (formula, simulate() keyword arguments); seeds fixed per case.
CASES: dict[str, tuple[str, dict]] = {
    "nested_balanced": (NESTED, dict(
        models=3, subjects=10, questions=8, prompts=3, family="gaussian",
        sd_model_subject=0.5, sd_model_question=0.7, sd_model_prompt=0.0, sd_residual=1.0,
        rng=20240601)),
    "crossed": (CROSSED, dict(
        models=3, subjects=8, questions=10, prompts=5, family="gaussian",
        sd_model_subject=0.5, sd_model_question=0.6, sd_model_prompt=0.4, sd_residual=1.0,
        rng=20240602)),
    "unbalanced": (CROSSED, dict(
        models=3, subjects=8, questions=[4, 6, 8, 10, 12, 14, 5, 9], prompts=4,
        family="binomial", sd_model_subject=0.8, sd_model_question=1.2, sd_model_prompt=0.6,
        sd_residual=0.0, missing=0.2, rng=20240603)),
    "zero_component": (CROSSED, dict(
        models=3, subjects=8, questions=8, prompts=4, family="gaussian",
        sd_model_subject=0.5, sd_model_question=0.6, sd_model_prompt=0.0, sd_residual=1.0,
        rng=20240604)),
    "two_subjects": ("correct ~ model + (1|subject)", dict(
        models=3, subjects=2, questions=30, prompts=1, family="gaussian",
        sd_model_subject=0.5, sd_model_question=0.0, sd_model_prompt=0.0, sd_residual=1.0,
        rng=20240605)),
    "dominant": (NESTED, dict(
        models=3, subjects=12, questions=6, prompts=2, family="gaussian",
        sd_model_subject=2.0, sd_model_question=0.4, sd_model_prompt=0.0, sd_residual=0.5,
        rng=20240606)),
}


def make_case(name: str, formula: str, kwargs: dict) -> dict:
    """Simulate one case, write its CSV and return its manifest entry."""
    df = mixrank.simulate(**kwargs)
    if kwargs.get("family") == "gaussian":
        df["correct"] = np.round(df["correct"].to_numpy(), 6)
    path = OUT / f"{name}.csv.gz"
    df.to_csv(path, index=False, compression={"method": "gzip", "mtime": 0})
    models = sorted(df["model"].unique())
    settings = {k: v for k, v in kwargs.items()}
    return dict(name=name, file=path.name, formula=formula, pair_by=KEYS, replicate=None,
                pairs=[list(p) for p in combinations(models, 2)], rows=int(len(df)),
                simulate=settings)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    manifest = [make_case(name, f, kw) for name, (f, kw) in CASES.items()]
    (OUT / "cases.json").write_text(json.dumps(manifest, indent=1) + "\n")
    for m in manifest:
        size = (OUT / m["file"]).stat().st_size
        print(f"{m['name']:16s} {m['rows']:6d} rows  {size / 1024:7.1f} KB  {m['formula']}")


if __name__ == "__main__":
    main()
