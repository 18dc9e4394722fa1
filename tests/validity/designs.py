"""Designs of the validity simulation suite (docs/methods.md, "Validity with few units").

Few models (6-10), few subjects of unequal size (8-15 subjects of 5-60
questions), 0/1 outcomes from a latent-logistic model or Gaussian scores, with
crossed subject and question effects and optional model x subject and model x
question effects.  Every pair is null (no model main effect) unless ``gaps``
is given.  Seeded: one Generator per replicate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def sizes_for(n_subjects: int, rng: np.random.Generator) -> np.ndarray:
    """Unequal subject sizes between 5 and 60 questions."""
    return rng.integers(5, 61, size=n_subjects)


def simulate(n_models: int, n_subjects: int, rng: np.random.Generator, *,
             outcome: str = "binary", sd_subject: float = 0.5, sd_question: float = 1.0,
             sd_model_subject: float = 0.3, sd_model_question: float = 0.0,
             gaps: np.ndarray | None = None, sizes: np.ndarray | None = None) -> pd.DataFrame:
    """Long data ``model, subject, question, correct`` of one replicate."""
    sizes = sizes_for(n_subjects, rng) if sizes is None else np.asarray(sizes)
    subj = np.repeat(np.arange(n_subjects), sizes)
    nq = subj.size
    eta_q = rng.normal(0, sd_subject, n_subjects)[subj] + rng.normal(0, sd_question, nq)
    gaps = np.zeros(n_models) if gaps is None else np.asarray(gaps, float)
    ms = rng.normal(0, sd_model_subject, (n_models, n_subjects))[:, subj]
    mq = rng.normal(0, sd_model_question, (n_models, nq)) if sd_model_question > 0 else 0.0
    eta = gaps[:, None] + eta_q[None, :] + ms + mq
    if outcome == "binary":
        y = (rng.random(eta.shape) < 1 / (1 + np.exp(-eta))).astype(float)
    else:
        y = eta + rng.normal(0, 1.0, eta.shape)
    models = np.repeat([f"m{m:02d}" for m in range(n_models)], nq)
    return pd.DataFrame(dict(model=models, subject=np.tile([f"s{t:02d}" for t in subj], n_models),
                             question=np.tile([f"q{i:04d}" for i in range(nq)], n_models),
                             correct=y.ravel()))
