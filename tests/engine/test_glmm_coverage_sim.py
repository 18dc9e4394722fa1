"""Seeded coverage simulation of the binomial GLMM at the subject unit (marker ``slow``).

Data: M = 3 models, 16 subjects x 10 questions, 0/1 scores from
``logit p = beta_model + b_subject:question + b_subject:model`` (sd 1.0 and
0.5), fitted as ``correct ~ model + (1|subject:question) + (1|subject:model)``
(nAGQ = 0), so subject is the unit of inference (docs/glmm.md §7).  Targets:
the log-odds difference ``beta_a - beta_b`` (logit scale) and the average
marginal effect over the simulated cells with their true item effects and
zero model-by-subject effects (response scale, docs/glmm.md §5).  Pass band:
nominal 0.95 minus 3 Monte Carlo standard errors.  The near-ceiling design
(about 94% and 97% correct) also fits the linear engine's paired model
``correct ~ model + (1|subject)`` and reports its coverage of the same
response-scale target next to the GLMM's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import mixrank

S, Q, REPS = 16, 10, 120


def _draw(rng, beta):
    M = len(beta)
    bq = rng.normal(0, 1.0, (S, Q))
    bsm = rng.normal(0, 0.5, (S, M))
    eta = beta[None, None, :] + bq[:, :, None] + bsm[:, None, :]
    y = (rng.random(eta.shape) < expit(eta)).astype(int)
    s, q, m = np.meshgrid(np.arange(S), np.arange(Q), np.arange(M), indexing="ij")
    df = pd.DataFrame({"model": [f"m{j}" for j in m.ravel()], "subject": s.ravel(),
                       "question": q.ravel(), "correct": y.ravel()})
    ame = expit(beta[0] + bq).mean() - expit(beta[1] + bq).mean()
    return df, ame


def _coverage(beta, seed, linear=False):
    rng = np.random.default_rng(seed)
    hit_logit = hit_resp = hit_lin = n = 0
    for _ in range(REPS):
        df, ame = _draw(rng, beta)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.MixrankWarning)
            try:
                res = mixrank.fit("correct ~ model + (1|subject:question) + (1|subject:model)",
                                  df, family="binomial", nagq=0, pairs=[("m0", "m1")])
            except mixrank.DataError:          # complete separation of a model: not counted
                continue
            lo, hi = res.contrasts().loc[0, ["ci_lower", "ci_upper"]]
            hit_logit += lo <= beta[0] - beta[1] <= hi
            lo, hi = res.contrasts(scale="response").loc[0, ["ci_lower", "ci_upper"]]
            hit_resp += lo <= ame <= hi
            if linear:
                lin = mixrank.fit("correct ~ model + (1|subject)", df, pairs=[("m0", "m1")])
                lo, hi = lin.contrasts().loc[0, ["ci_lower", "ci_upper"]]
                hit_lin += lo <= ame <= hi
        n += 1
    return n, hit_logit / n, hit_resp / n, hit_lin / n


def _band(n):
    return 0.95 - 3 * np.sqrt(0.95 * 0.05 / n)


@pytest.mark.slow
def test_coverage_at_subject_unit():
    n, logit, resp, _ = _coverage(np.array([0.2, -0.3, 0.5]), 14)
    assert n >= 0.95 * REPS
    assert logit >= _band(n), logit
    assert resp >= _band(n), resp


@pytest.mark.slow
def test_near_ceiling_glmm_next_to_linear(record_property):
    n, logit, resp, lin = _coverage(np.array([3.6, 2.9, 3.2]), 15, linear=True)
    record_property("coverage_glmm_logit", logit)
    record_property("coverage_glmm_response", resp)
    record_property("coverage_linear_response", lin)
    print(f"near ceiling, {n} fits: GLMM logit {logit:.3f}, GLMM response {resp:.3f}, "
          f"linear engine {lin:.3f} (band >= {_band(n):.3f})")
    assert logit >= _band(n), logit
    assert resp >= _band(n), resp
