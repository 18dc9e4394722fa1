"""Shared simulated battle logs for the arena tests (seeded)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def simulate_battles(n: int, beta: np.ndarray, *, rng: int, gamma: float = 0.0,
                     nu: float = 0.0, tie_rate: float = 0.0, n_prompts: int | None = None,
                     prompt_sd: float = 0.0) -> pd.DataFrame:
    """Battles from Bradley-Terry strengths ``beta`` (logit scale).

    ``nu > 0``: Davidson ties; ``tie_rate``: ties at this rate independent of
    the pair (then BT among the rest); ``gamma``: effect of a style feature
    (normalised length difference); ``n_prompts``/``prompt_sd``: each prompt
    shifts every model's strength by its own N(0, prompt_sd^2) draw.
    """
    g = np.random.default_rng(rng)
    K = beta.size
    a = g.integers(0, K, n)
    b = (a + g.integers(1, K, n)) % K
    la, lb = g.gamma(2.0, 100.0, n), g.gamma(2.0, 100.0, n)
    d = beta[a] - beta[b] + gamma * (la - lb) / (la + lb)
    prompt = None
    if n_prompts:
        prompt = g.integers(0, n_prompts, n)
        dev = g.normal(0, prompt_sd, (n_prompts, K))
        d = d + dev[prompt, a] - dev[prompt, b]
    if nu > 0:
        pa = np.exp(d / 2) / (np.exp(d / 2) + np.exp(-d / 2) + nu)
        pt = nu / (np.exp(d / 2) + np.exp(-d / 2) + nu)
        u = g.random(n)
        out = np.where(u < pa, 1.0, np.where(u < pa + pt, 0.5, 0.0))
    else:
        out = (g.random(n) < 1 / (1 + np.exp(-d))).astype(float)
        out[g.random(n) < tie_rate] = 0.5
    df = pd.DataFrame({"model_a": [f"m{i:02d}" for i in a], "model_b": [f"m{i:02d}" for i in b],
                       "winner": np.select([out == 1, out == 0], ["model_a", "model_b"], "tie"),
                       "len_a": la, "len_b": lb})
    if prompt is not None:
        df["prompt"] = prompt
    return df
