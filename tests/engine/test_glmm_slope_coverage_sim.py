"""Seeded coverage simulation of a binomial ``model * x`` fit with a NUMERIC covariate
(marker ``slow``; docs/glmm.md §11).

Data: 2 models, 40 subjects x 8 questions, a standard-normal covariate ``x`` per
(subject, question) cell, 0/1 scores from ``logit p = a_model + b_model x +
b_subject:question + b_subject:model`` (sd 1.0 and 0.4), intercepts (0.3, -0.1) and
slopes (-0.6, 0.1).  Fitted as ``correct ~ model * x + (1|subject:question) +
(1|subject:model)`` (nAGQ = 0): subject is the unit.  Three intervals per replication,
each assessed on its own (they share the fit, so they are not pooled): the log odds ratio
at ``x = 1`` (``contrasts(at=1)``), the slope difference (``anova()``'s estimate and SE,
Wald z interval) and the average marginal effect at ``x = -1`` over the simulated cells
at their true item effects and zero model-by-subject effects (``scale="response"``).
Pass band: nominal 0.95 +- 3 Monte Carlo standard errors of a proportion over the
replications.  Measured (seed 2412, 300 replications, 18 s): logit at x = 1 0.967, slope
difference 0.930, AME at x = -1 0.967.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit

import mixrank

S, Q, REPS = 40, 8, 300
A, B = (0.3, -0.1), (-0.6, 0.1)


def _draw(rng):
    x = np.round(rng.normal(0, 1, (S, Q)), 6)
    bq = rng.normal(0, 1.0, (S, Q))
    bsm = rng.normal(0, 0.4, (S, 2))
    eta = (np.array(A)[None, None, :] + np.array(B)[None, None, :] * x[:, :, None]
           + bq[:, :, None] + bsm[:, None, :])
    y = (rng.random(eta.shape) < expit(eta)).astype(int)
    s, q, m = np.meshgrid(np.arange(S), np.arange(Q), np.arange(2), indexing="ij")
    df = pd.DataFrame({"model": [f"m{j}" for j in m.ravel()], "subject": s.ravel(),
                       "question": q.ravel(), "x": x[s.ravel(), q.ravel()],
                       "correct": y.ravel()})
    ame = float((expit(A[0] - B[0] + bq) - expit(A[1] - B[1] + bq)).mean())
    return df, ame


@pytest.mark.slow
def test_slope_contrasts_coverage():
    rng = np.random.default_rng(2412)
    z = stats.norm.ppf(0.975)
    hits = {"logit at x=1": 0, "slope difference": 0, "AME at x=-1": 0}
    n = 0
    for _ in range(REPS):
        df, ame = _draw(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.MixrankWarning)
            res = mixrank.fit("correct ~ model * x + (1|subject:question) + (1|subject:model)",
                              df, family="binomial", nagq=0)
        lo = res.contrasts(at=1.0).iloc[0]
        hits["logit at x=1"] += lo.ci_lower <= (A[0] + B[0]) - (A[1] + B[1]) <= lo.ci_upper
        sl = res.anova().iloc[0]
        hits["slope difference"] += abs(sl.estimate - (B[0] - B[1])) <= z * sl.std_error
        re = res.contrasts(at=-1.0, scale="response").iloc[0]
        hits["AME at x=-1"] += re.ci_lower <= ame <= re.ci_upper
        n += 1
    se = np.sqrt(0.95 * 0.05 / n)
    for what, h in hits.items():
        cov = h / n
        print(f"{what}: coverage {cov:.3f} over {n} (band {0.95 - 3 * se:.3f} .. "
              f"{0.95 + 3 * se:.3f})")
        assert 0.95 - 3 * se <= cov <= 0.95 + 3 * se, (what, cov)
