"""Replicates of the binomial GLMM cell (docs/glmm.md §12, docs/methods.md §9).

* :func:`glmm_replicate` -- 0/1 data of the latent-logistic design of
  :mod:`tests.validity.designs` (subject sd 0.7, model x subject sd 0.5, no question
  effect: exactly the GLMM fitted), ``correct ~ model + (1|subject) + (1|subject:model)``
  (Laplace, the defaults), and per family-wise method -- the default (the unit sign-flip
  step-down), the randomization max-t, Holm with the containment t (T - 1 df) --
  whether any true-null pair is rejected at 0.05 and the share of the non-null pairs
  rejected (power);
* :func:`summarise` -- mean and Monte Carlo SE of each answer over the replicates.
"""

from __future__ import annotations

import warnings

import numpy as np

import mixrank

from .designs import simulate

FORMULA = "correct ~ model + (1|subject) + (1|subject:model)"
METHODS = ("default", "maxt", "holm")


def glmm_replicate(seed: int, n_models: int, n_subjects: int,
                   gaps: np.ndarray | None = None) -> dict[str, float]:
    """One replicate: ``<method>_fwer`` (any true-null pair rejected) and ``<method>_power``
    (share of the pairs with a true gap rejected; NaN under the global null), plus
    ``default_is_stepdown``."""
    rng = np.random.default_rng(seed)
    d = simulate(n_models, n_subjects, rng, sd_subject=0.7, sd_question=0.0,
                 sd_model_subject=0.5, gaps=gaps)
    g = np.zeros(n_models) if gaps is None else np.asarray(gaps, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit(FORMULA, d, family="binomial")
        tabs = dict(default=fit.contrasts(), maxt=fit.contrasts(adjust="maxt"),
                    holm=fit.contrasts(adjust="holm"))
    out: dict[str, float] = dict(
        default_is_stepdown=float(tabs["default"].attrs["mixrank"]["adjust"] == "stepdown"))
    for name, c in tabs.items():
        a = np.array([int(m[1:]) for m in c["model_a"]])
        b = np.array([int(m[1:]) for m in c["model_b"]])
        null = g[a] == g[b]
        rej = (c["p_adjusted"] < 0.05).to_numpy()
        out[f"{name}_fwer"] = float(rej[null].any())
        out[f"{name}_power"] = float(rej[~null].mean()) if (~null).any() else np.nan
    return out


def summarise(rows: list[dict[str, float]]) -> dict[str, tuple[float, float]]:
    """Mean and Monte Carlo SE of every answer (NaN entries left out)."""
    out = {}
    for k in rows[0]:
        v = np.array([r[k] for r in rows], dtype=float)
        v = v[np.isfinite(v)]
        if v.size:
            out[k] = (float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1
                      else np.nan)
    return out
