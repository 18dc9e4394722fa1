"""Seeded simulated judge-scored benchmarks for the judge tests (docs/judge.md §7).

Reference score ``y = mu_model + u_subject + v_(subject, model) + e``; judge
``yhat = y + bias_model + w_subject + noise`` (a judge shifted per model,
with its own subject effect); a random subset of questions labelled (the
same questions for every model, so pairs stay paired).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def simulate(rng: int | np.random.Generator, *, models: int = 3, subjects: int = 20,
             questions: int = 30, frac: float = 0.15, judge_noise: float = 0.5,
             sd_subject: float = 0.5, sd_pair: float = 0.3, bias_sd: float = 0.3,
             judge_subject: float = 0.2, unequal: bool = False
             ) -> tuple[pd.DataFrame, np.ndarray]:
    """Long data (model, subject, question, score, human) and the true model means.

    ``unequal``: subject sizes drawn from 5..60 questions (``questions`` is ignored);
    the truth is then the mean over the cells' subjects' population (the subject
    effects have mean 0), as with equal sizes.
    """
    g = np.random.default_rng(rng)
    mu = np.linspace(0.0, 0.4, models)
    bias = g.normal(0, bias_sd, models) + 0.5
    u = g.normal(0, sd_subject, subjects)
    w = g.normal(0, judge_subject, subjects)
    sizes = g.integers(5, 61, subjects) if unequal else np.full(subjects, questions)
    s = np.repeat(np.arange(subjects), sizes)
    q = np.concatenate([np.arange(k) for k in sizes])
    labelled = g.random(s.size) < frac
    rows = []
    for m in range(models):
        v = g.normal(0, sd_pair, subjects)
        y = mu[m] + u[s] + v[s] + g.normal(0, 1, s.size)
        yh = y + bias[m] + w[s] + g.normal(0, judge_noise, s.size)
        rows.append(pd.DataFrame({"model": f"m{m}", "subject": s, "question": q,
                                  "score": yh, "human": np.where(labelled, y, np.nan)}))
    return pd.concat(rows, ignore_index=True), mu
