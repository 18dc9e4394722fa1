"""Coverage of model-score and max-t simultaneous intervals (seeded simulation, slow).

Design: 3 models, 12 subjects x 15 questions, 10% of each model's cells
missing; ``y = mu_j + u_{j,s} + e_{j,s,q}`` with subject effects correlated
across models (a shared part plus a model-specific part, ICC ~ 0.3) and
correlated residuals.  Per replicate: ``fit("y ~ model + (1|subject)")``
(subject as the unit) and ``fit("y ~ model")`` (cells as units).

Pass bands: 300 replicates, binomial Monte Carlo SE ``sqrt(.95 .05 / 300) =
0.0126``; the subject-unit intervals must cover within 3 SE of 0.95
(pooled over the three models: 900 intervals, band from the per-model SE, as
the models share subjects); cells-as-units intervals ignore the design
effect (~ 1 + 14 x 0.3 = 5) and must under-cover (below 0.80; expected
~0.6).  Max-t simultaneous intervals of the three contrasts must cover all
three true differences at least 0.95 - 3 SE of the time.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank

MU = np.array([0.2, 0.0, -0.1])
REPS = 300
SE_MC = np.sqrt(0.95 * 0.05 / REPS)


def _simulate(rng, T=12, Q=15, missing=0.1):
    M = len(MU)
    Cs = 0.3 * np.full((M, M), 0.7) + 0.3 * 0.3 * np.eye(M)      # shared + model-specific
    Ce = 0.7 * (0.3 * np.ones((M, M)) + 0.7 * np.eye(M))
    u = rng.multivariate_normal(np.zeros(M), Cs, size=T)            # (T, M)
    e = rng.multivariate_normal(np.zeros(M), Ce, size=(T, Q))       # (T, Q, M)
    y = MU[None, None, :] + u[:, None, :] + e
    s, q, m = np.meshgrid(np.arange(T), np.arange(Q), np.arange(M), indexing="ij")
    keep = rng.random(y.shape) >= missing
    return pd.DataFrame(dict(model=[f"m{j}" for j in m[keep]], subject=s[keep], question=q[keep],
                             y=y[keep]))


@pytest.mark.slow
def test_model_score_and_maxt_coverage():
    rng = np.random.default_rng(20261130)
    cover_unit = np.zeros(len(MU))
    cover_cells = np.zeros(len(MU))
    cover_simul = 0
    truth = {(f"m{j}", f"m{k}"): MU[j] - MU[k] for j in range(3) for k in range(3)}
    for _ in range(REPS):
        df = _simulate(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.MixrankWarning)
            unit = mixrank.fit("y ~ model + (1|subject)", df, pair_by=["subject", "question"])
            cells = mixrank.fit("y ~ model", df, pair_by=["subject", "question"])
        for fit, acc in ((unit, cover_unit), (cells, cover_cells)):
            sc = fit.model_scores()
            acc += ((sc["ci_lower"] <= MU) & (MU <= sc["ci_upper"])).to_numpy()
        c = unit.contrasts(adjust="maxt", draws=2000, rng=rng)
        tr = np.array([truth[(a, b)] for a, b in zip(c["model_a"], c["model_b"])])
        cover_simul += bool(np.all((c["ci_lower"] <= tr) & (tr <= c["ci_upper"])))
    unit_cov = cover_unit / REPS
    cells_cov = cover_cells / REPS
    assert np.all(np.abs(unit_cov - 0.95) <= 3 * SE_MC), unit_cov
    assert abs(unit_cov.mean() - 0.95) <= 3 * SE_MC, unit_cov
    assert np.all(cells_cov < 0.80), cells_cov
    assert cover_simul / REPS >= 0.95 - 3 * SE_MC, cover_simul / REPS


MU6 = np.array([0.3, 0.2, 0.1, 0.0, 0.0, -0.1])
REPS6 = 150


def _simulate6(rng, T=8, Q=12, missing=0.15):
    M = len(MU6)
    Cs = 0.3 * np.full((M, M), 0.8) + 0.05 * np.eye(M)   # small model-specific part: boundary fits
    Ce = 0.3 * np.ones((M, M)) + 0.7 * np.eye(M)
    u = rng.multivariate_normal(np.zeros(M), Cs, size=T)
    e = rng.multivariate_normal(np.zeros(M), Ce, size=(T, Q))
    y = MU6[None, None, :] + u[:, None, :] + e
    s, q, m = np.meshgrid(np.arange(T), np.arange(Q), np.arange(M), indexing="ij")
    keep = rng.random(y.shape) >= missing
    return pd.DataFrame(dict(model=[f"m{j}" for j in m[keep]], subject=s[keep], question=q[keep],
                             y=y[keep]))


@pytest.mark.slow
def test_maxt_familywise_with_inconsistent_pairs():
    """15 separately fitted pairs, many at the boundary: the projected joint covariance still
    gives simultaneous coverage within the MC band (150 replicates, SE 0.018; measured 0.933)."""
    rng = np.random.default_rng(11)
    truth = {(f"m{j}", f"m{k}"): MU6[j] - MU6[k] for j in range(6) for k in range(6)}
    covered, clipped = 0, []
    for _ in range(REPS6):
        df = _simulate6(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.MixrankWarning)
            fit = mixrank.fit("y ~ model + (1|subject)", df, pair_by=["subject", "question"],
                              df="satterthwaite")    # the Gaussian max-t of the REML contrasts
        c = fit.contrasts(adjust="maxt", draws=2000, rng=rng)
        tr = np.array([truth[(a, b)] for a, b in zip(c["model_a"], c["model_b"])])
        covered += bool(np.all((c["ci_lower"] <= tr) & (tr <= c["ci_upper"])))
        clipped.append(c.attrs["mixrank"]["psd_clipped"])
    se = np.sqrt(0.95 * 0.05 / REPS6)
    assert covered / REPS6 >= 0.95 - 3 * se, covered / REPS6
    assert max(clipped) > 0          # the design does produce inconsistent pairwise components
