"""Seeded coverage simulation of the per-level contrasts of a binomial ``model * x`` fit
(marker ``slow``; docs/glmm.md §11).

Data: 2 models, 36 subjects (12 at each of 3 levels of a subject-level covariate ``x``)
x 8 questions, 0/1 scores from ``logit p = beta_{model, x} + b_subject:question +
b_subject:model`` (sd 1.0 and 0.4); the gap depends on the level (log odds ratios 0.8, 0.0,
-0.5).  Fitted as ``correct ~ model * x + (1|subject:question) + (1|subject:model)``
(nAGQ = 0): subject is the unit.  Targets per level: the log odds ratio (logit scale) and
the average marginal effect over the level's simulated cells at their true item effects and
zero model-by-subject effects (response scale).  Each replication gives 3 intervals per
scale (one per level, disjoint subjects); pass band: nominal 0.95 minus 3 Monte Carlo
standard errors of the pooled proportion, and at most nominal plus 3.  Measured (seed
2411, 250 replications): logit 0.943, response 0.951 (with 10 subjects per level the
response scale gave 0.931: the Wald z interval is slightly short with few units).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import mixrank

S, Q, REPS = 36, 8, 250
LEVELS = ("a", "b", "c")
BETA = {"a": (0.4, -0.4), "b": (0.0, 0.0), "c": (-0.3, 0.2)}    # (m0, m1) log-odds


def _draw(rng):
    lev = np.array([LEVELS[s % 3] for s in range(S)])
    bq = rng.normal(0, 1.0, (S, Q))
    bsm = rng.normal(0, 0.4, (S, 2))
    b = np.array([BETA[x] for x in lev])                         # S x 2
    eta = b[:, None, :] + bq[:, :, None] + bsm[:, None, :]
    y = (rng.random(eta.shape) < expit(eta)).astype(int)
    s, q, m = np.meshgrid(np.arange(S), np.arange(Q), np.arange(2), indexing="ij")
    df = pd.DataFrame({"model": [f"m{j}" for j in m.ravel()], "subject": s.ravel(),
                       "question": q.ravel(), "x": lev[s.ravel()], "correct": y.ravel()})
    ame = {x: float((expit(b[lev == x][:, None, 0] + bq[lev == x])
                     - expit(b[lev == x][:, None, 1] + bq[lev == x])).mean()) for x in LEVELS}
    return df, ame


@pytest.mark.slow
def test_per_level_coverage_on_both_scales():
    rng = np.random.default_rng(2411)
    hits = {"logit": 0, "response": 0}
    n = 0
    for _ in range(REPS):
        df, ame = _draw(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.MixrankWarning)
            try:
                res = mixrank.fit("correct ~ model * x + (1|subject:question) + "
                                  "(1|subject:model)", df, family="binomial", nagq=0)
            except mixrank.DataError:          # complete separation within a level
                continue
        for scale in ("logit", "response"):
            tab = res.contrasts(by="x", scale=scale).set_index("x")
            for x in LEVELS:
                true = BETA[x][0] - BETA[x][1] if scale == "logit" else ame[x]
                hits[scale] += tab.loc[x, "ci_lower"] <= true <= tab.loc[x, "ci_upper"]
        n += 1
    assert n >= 0.95 * REPS
    k = 3 * n
    se = np.sqrt(0.95 * 0.05 / k)
    for scale, h in hits.items():
        cov = h / k
        print(f"{scale}: coverage {cov:.3f} over {k} intervals (band {0.95 - 3 * se:.3f} .. "
              f"{0.95 + 3 * se:.3f})")
        assert 0.95 - 3 * se <= cov <= 0.95 + 3 * se, (scale, cov)
