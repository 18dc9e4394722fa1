"""A simulated benchmark for the subset tests: 2PL items in subjects, models with abilities.

``board(models, items, subjects, seed)`` returns the long table (``model``,
``subject``, ``question``, ``correct``) and the true success probabilities.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit


def probabilities(models: int, items: int, subjects: int, seed: int,
                  subject_boost: dict[int, float] | None = None,
                  spread: float = 1.2) -> tuple[np.ndarray, np.ndarray]:
    """True P(correct), models x items, and each item's subject index.

    Abilities N(0, spread^2) with a small subject-specific part; 2PL items with
    log-normal discriminations and N(0, 1.5^2) easiness.  ``subject_boost``:
    extra logit ability of the *last* model on a subject.
    """
    rng = np.random.default_rng(seed)
    subj = np.sort(rng.integers(0, subjects, items))
    theta = rng.normal(0, spread, models)
    ts = rng.normal(0, 0.3, (models, subjects))
    a = np.exp(rng.normal(0, 0.3, items))
    b = rng.normal(0, 1.5, items)
    eta = b + a * (theta[:, None] + ts[:, subj])
    if subject_boost:
        for s, boost in subject_boost.items():
            eta[-1, subj == s] += boost
    return expit(eta), subj


def long_table(Y: np.ndarray, subj: np.ndarray, names: list[str] | None = None) -> pd.DataFrame:
    """A models x items 0/1 matrix as the long table."""
    M, N = Y.shape
    names = names or [f"m{i:02d}" for i in range(M)]
    return pd.DataFrame({
        "model": np.repeat(names, N),
        "subject": np.tile([f"s{s}" for s in subj], M),
        "question": np.tile([f"q{i:04d}" for i in range(N)], M),
        "correct": Y.reshape(-1).astype(int),
    })


def board(models: int = 12, items: int = 300, subjects: int = 4, seed: int = 0,
          flipped: int = 0, options: int = 2,
          spread: float = 1.2) -> tuple[pd.DataFrame, np.ndarray]:
    """The long table of a simulated leaderboard and the indices of flipped-key items.

    A flipped item's key names a wrong option of ``options``: a model scores
    1 when it picks that option, probability ``(1 - p) / (options - 1)``
    (``options=2``: the score is flipped, 1 - y).
    """
    P, subj = probabilities(models, items, subjects, seed, spread=spread)
    rng = np.random.default_rng(seed + 1000)
    bad = np.sort(rng.choice(items, flipped, replace=False)) if flipped else np.array([], int)
    P = P.copy()
    P[:, bad] = (1 - P[:, bad]) / (options - 1)
    Y = (rng.random(P.shape) < P).astype(int)
    return long_table(Y, subj), bad
