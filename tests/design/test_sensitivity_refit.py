"""Fast replicate refits of the sensitivity checks (mixrank.design.sensitivity.refit).

References: refits of the raw rows without each left-out level
(:func:`mixrank.fit` on the reduced data frame, then
:func:`mixrank.design.estimand.pair_inputs` -- the whole public path, no shared
structure, no shared weights); the sparse-LU GLS weights of
:func:`mixrank.inference.joint.pair_weights`; and, for the cluster bootstrap
with several random terms, refits of frames built by
:func:`~mixrank.design.sensitivity.frames.subset_frame` pair by pair.
Random designs with two and three random terms, cells missing at random.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.design.estimand import pair_inputs, pair_inputs_from
from mixrank.design.sensitivity.frames import restrict_models, subset_frame, unit_codes
from mixrank.design.sensitivity.refit import gls_weights
from mixrank.engine.lmm.native import fit_pairs
from mixrank.inference.joint import _gls_weights

TWO = "correct ~ model + (1|question) + (1|prompt)"
THREE = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
COLS = ["estimate", "n", "sigma_d", "weight_factor", "std_error"]


def _design(models: int, subjects: int, questions: int, prompts: int, missing: float,
            seed: int) -> pd.DataFrame:
    """Continuous scores with subject, question and prompt effects per model."""
    rng = np.random.default_rng(seed)
    Q = subjects * questions
    subj = np.repeat(np.arange(subjects), questions)
    rows = []
    for m in range(models):
        ms, mq, mp = (rng.normal(0, s, n) for s, n in ((0.5, subjects), (0.8, Q), (0.3, prompts)))
        for q in range(Q):
            for p in range(prompts):
                if rng.random() < missing:
                    continue
                y = 0.2 * m + ms[subj[q]] + mq[q] + mp[p] + rng.normal()
                rows.append((f"m{m}", f"s{subj[q]}", f"q{q:03d}", f"p{p}", y))
    return pd.DataFrame(rows, columns=["model", "subject", "question", "prompt", "correct"])


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


@pytest.mark.parametrize("estimand", ["gls", "cells", "units"])
@pytest.mark.parametrize("formula,unit,shape", [
    (TWO, "question", (4, 1, 14, 4)),
    (THREE, "subject", (4, 5, 4, 3)),
])
def test_fast_loso_equals_refits_of_the_raw_data(formula, unit, shape, estimand):
    data = _design(*shape, missing=0.15, seed=len(formula) + shape[2])
    fit = _quiet(mixrank.fit, formula, data, estimand=estimand)
    tab = _quiet(fit.sensitivity, "loso", unit=unit, pairs="all")
    assert tab["fitted"].all()
    levels = sorted(data[unit].unique())
    assert sorted(tab["label"].unique()) == levels
    for lev in levels:
        ref = _quiet(mixrank.fit, formula, data[data[unit] != lev], estimand=estimand)
        got = tab[tab["label"] == lev]
        for r in got.itertuples():
            x = pair_inputs(ref, r.model_a, r.model_b)
            for c in COLS:
                np.testing.assert_allclose(getattr(r, c), x[c], rtol=2e-6, atol=1e-9,
                                           err_msg=f"{formula} {lev} {c}")


@pytest.mark.parametrize("formula,unit,shape", [
    (TWO, "question", (3, 1, 10, 4)),
    (THREE, "subject", (3, 5, 3, 3)),
])
def test_bootstrap_several_terms_equals_pairwise_refits(formula, unit, shape):
    data = _design(*shape, missing=0.1, seed=7)
    fit = _quiet(mixrank.fit, formula, data, estimand="gls")
    B = 6
    tab = _quiet(fit.sensitivity, "bootstrap", unit=unit, pairs="all", B=B, rng=3)
    assert len(tab) == B * 3
    # the same draws, refitted pair by pair on frames built one by one
    frame = restrict_models(fit.frame, list(fit.frame.models))
    name, codes = unit_codes(frame, unit)
    T = frame.term_levels[name]
    draws = np.random.default_rng(3).integers(0, T, size=(B, T))
    members = [np.flatnonzero(codes == u) for u in range(T)]
    for i in range(B):
        idx = np.concatenate([members[u] for u in draws[i]])
        copy = np.concatenate([np.full(len(members[u]), t) for t, u in enumerate(draws[i])])
        sub = subset_frame(frame, idx, copy=copy, unit=name)
        for r in tab[tab["replicate"] == i + 1].itertuples():
            j, k = sub.model_index(r.model_a), sub.model_index(r.model_b)
            p = _quiet(fit_pairs, sub, [(j, k)], method="reml", estimand="gls")
            x = pair_inputs_from(sub, p, r.model_a, r.model_b, method="reml", estimand="gls")
            for c in COLS:
                np.testing.assert_allclose(getattr(r, c), x[c], rtol=2e-6, atol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_schur_gls_weights_equal_sparse_lu(seed):
    rng = np.random.default_rng(seed)
    n = 300
    codes = [rng.integers(0, L, n) for L in (60, 7, 3)[: 2 + seed % 2]]
    comps = [float(v) for v in rng.uniform(0.1, 2.0, len(codes))]
    if seed == 3:
        comps[1] = 0.0                                       # a boundary component
    w = gls_weights(codes, comps, 1.3)
    ref = _gls_weights(n, codes, comps, 1.3)
    np.testing.assert_allclose(w, ref, rtol=1e-9, atol=1e-12)
    assert abs(w.sum() - 1) < 1e-12


def test_bootstrap_summary_with_a_zero_estimate_is_infinite_not_an_error():
    """An adjacent pair with exactly equal scores: N* is infinite (no ZeroDivisionError)."""
    rng = np.random.default_rng(0)
    rows = []
    for q in range(12):
        for p in range(3):
            y = float(rng.integers(0, 2))
            rows += [("A", f"q{q}", f"p{p}", y), ("B", f"q{q}", f"p{p}", y if q < 10 else 1 - y)]
    data = pd.DataFrame(rows, columns=["model", "question", "prompt", "correct"])
    data.loc[(data.model == "B") & (data.question == "q11"), "correct"] = \
        1 - data.loc[(data.model == "B") & (data.question == "q10"), "correct"].to_numpy()
    fit = _quiet(mixrank.fit, "correct ~ model + (1|question)", data, estimand="cells")
    est = float(fit.contrasts().estimate.iloc[0])
    if est != 0.0:
        pytest.skip("design did not give an exactly zero estimate")
    summ = _quiet(fit.sensitivity, "bootstrap", B=20, rng=1, summary=True)
    assert np.isinf(summ["n_star_cluster"]).all() or np.isnan(summ["n_star_cluster"]).all()
