"""Joint covariance of all pairwise contrasts (mixrank.inference.joint).

References: a brute-force dense computation ``L K L'`` over the stacked
(model, cell) scores of the joint model in docs/model_scores.md §3, with the
GLS weights checked against the dense ``V^-1 1 / (1' V^-1 1)``; the exact
identity ``Cov(X_j - X_k, X_l - X_m) = (v_jm + v_kl - v_jl - v_km) / 2`` for
complete data (all pairs on the same cells).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.inference.joint import contrast_covariance, pair_weights
from mixrank.inference.ranks.maxt import joint_covariance


def _data(rng, models=3, subjects=6, questions=5, prompts=2, missing=0.2):
    rows = []
    for m in range(models):
        for s in range(subjects):
            for q in range(questions):
                for p in range(prompts):
                    if rng.random() >= missing:
                        rows.append(dict(model=f"m{m}", subject=f"s{s}", question=f"q{q}",
                                         prompt=f"p{p}", correct=rng.normal()))
    return pd.DataFrame(rows)


def _psd(rng, M, scale):
    A = rng.normal(size=(M, M)) * scale
    return A @ A.T


@pytest.mark.parametrize("estimand", ["gls", "cells", "units"])
def test_matches_dense_joint_model(estimand):
    """Cov from the pairwise components == L K L' of the stacked joint model (consistent components)."""
    rng = np.random.default_rng(7)
    df = _data(rng)
    formula = "correct ~ model + (1|subject) + (1|prompt)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        fit = mixrank.fit(formula, df, estimand=estimand)
    f = fit.frame
    M, n = f.n_models, f.n_cells
    C = {"subject": _psd(rng, M, 0.5), "prompt": _psd(rng, M, 0.3), "residual": _psd(rng, M, 1.0)}
    pairs = []
    for p in fit.pairs:
        j, k = f.models.index(p.model_a), f.models.index(p.model_b)
        comps = {t: float(C[t][j, j] + C[t][k, k] - 2 * C[t][j, k]) for t in C}
        pairs.append(dataclasses.replace(p, components=comps))
    W = pair_weights(f, pairs, "reml", estimand)
    # dense K over (model, cell)
    same = {t: (f.term_codes[t][:, None] == f.term_codes[t][None, :]).astype(float)
            for t in ("subject", "prompt")}
    K = np.kron(C["residual"], np.eye(n))
    for t in same:
        K += np.kron(C[t], same[t])
    L = np.zeros((len(pairs), M * n))
    for h, p in enumerate(pairs):
        j, k = f.models.index(p.model_a), f.models.index(p.model_b)
        L[h, j * n:(j + 1) * n] = W[h]
        L[h, k * n:(k + 1) * n] = -W[h]
    dense = L @ K @ L.T
    for h, p in enumerate(pairs):
        mask = f.observed[:, f.models.index(p.model_a)] & f.observed[:, f.models.index(p.model_b)]
        V = p.components["residual"] * np.eye(int(mask.sum()))
        for t in same:
            V = V + p.components[t] * same[t][np.ix_(mask, mask)]
        if estimand == "gls":   # the weights are the GLS weights of the pair's own model
            x = np.linalg.solve(V, np.ones(len(V)))
            np.testing.assert_allclose(W[h, mask], x / x.sum(), rtol=1e-9, atol=1e-14)
        pairs[h] = dataclasses.replace(p, variance=float(W[h, mask] @ V @ W[h, mask]))
    cov, info = contrast_covariance(f, pairs, estimand=estimand)
    np.testing.assert_allclose(cov, dense, rtol=1e-9, atol=1e-14)
    assert info["diag_rel"] < 1e-9 and info["component_inconsistency"] < 1e-9


def test_complete_cells_is_the_pairwise_identity():
    """Complete data, cells estimand: the MDS identity on the pairs' own variances holds exactly."""
    rng = np.random.default_rng(3)
    df = _data(rng, models=4, missing=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        fit = mixrank.fit("correct ~ model + (1|subject) + (1|prompt)", df, estimand="cells")
    cov, _ = contrast_covariance(fit.frame, fit.pairs, estimand="cells")
    M = fit.frame.n_models
    v = np.zeros((M, M))
    for p in fit.pairs:
        j, k = fit.frame.models.index(p.model_a), fit.frame.models.index(p.model_b)
        v[j, k] = v[k, j] = p.variance
    Cm, _ = joint_covariance(v)
    D = np.zeros((len(fit.pairs), M))
    for h, p in enumerate(fit.pairs):
        D[h, fit.frame.models.index(p.model_a)] = 1
        D[h, fit.frame.models.index(p.model_b)] = -1
    np.testing.assert_allclose(cov, D @ Cm @ D.T, rtol=1e-8, atol=1e-14)


def test_aggregate_complete_is_sample_covariance():
    rng = np.random.default_rng(5)
    df = _data(rng, models=3, subjects=8, missing=0.0)
    fit = mixrank.fit("correct ~ model + (1|subject)", df, method="aggregate")
    cov, info = contrast_covariance(fit.frame, fit.pairs, method="aggregate")
    assert info["diag_rel"] < 1e-12
    um = df.groupby(["model", "subject"])["correct"].mean().unstack(0)
    d = np.column_stack([um[p.model_a] - um[p.model_b] for p in fit.pairs])
    np.testing.assert_allclose(cov, np.cov(d, rowvar=False) / len(um), rtol=1e-10)


def test_needs_every_pair():
    rng = np.random.default_rng(1)
    df = _data(rng, models=3, missing=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        fit = mixrank.fit("correct ~ model + (1|subject)", df, pairs=[("m0", "m1"), ("m0", "m2")],
                          df="satterthwaite")
    with pytest.raises(mixrank.DesignError, match="every pair.*'m1', 'm2'"):
        contrast_covariance(fit.frame, fit.pairs)
    with pytest.raises(mixrank.DesignError, match="every pair"):
        fit.contrasts(adjust="maxt")
    # the unit sign-flip max-t (df="cr2") needs no joint covariance: any family of pairs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        cr2 = mixrank.fit("correct ~ model + (1|subject)", df, pairs=[("m0", "m1"), ("m0", "m2")])
    assert cr2.contrasts(adjust="maxt")["p_adjusted"].notna().all()
    assert "p_adjusted" in fit.contrasts().columns   # holm needs no joint covariance
