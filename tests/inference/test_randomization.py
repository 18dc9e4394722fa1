"""Unit sign-flip randomization: mixrank.inference.randomization (docs/methods.md, "Validity with few units").

Reference: brute force -- every sign flip applied to the raw differences of each unit
(``d_i -> eps_t d_i`` for every cell i of unit t, the null's symmetry), the CR2 t of each
pair recomputed from the flipped cells with the dense-matrix definition of
tests/engine/test_unit_se.py, the max-t and step-down p-values counted directly.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
import mixrank.inference.randomization as rz
from mixrank.engine.lmm.unit_se import pair_unit_data
from tests.engine.test_unit_se import _dense_cr2


def _data(T=6, K=4, seed=3, sd_unit=0.5, gaps=(0.3,)):
    """Gaussian scores of K models on T subjects of 3-8 questions: a model x subject effect
    (sd ``sd_unit``), unit noise, model m shifted by ``gaps[m]`` (0 beyond the tuple)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 9, size=T)
    subj = np.repeat(np.arange(T), sizes)
    rows = []
    for m in range(K):
        eff = (rng.normal(0, sd_unit, T)[subj] + rng.normal(0, 1, subj.size)
               + (gaps[m] if m < len(gaps) else 0.0))
        rows += [dict(model=f"m{m}", subject=f"s{t}", question=f"q{i}", correct=float(e))
                 for i, (t, e) in enumerate(zip(subj, eff))]
    return pd.DataFrame(rows)


def _fit(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit("correct ~ model + (1|subject)", _data(**kw), estimand="cells")


def _over_flips(fit, statistic):
    """``statistic(dd, codes, w)`` of each pair's raw cell differences under every sign flip
    of the subjects (flips x pairs; row 0 the identity), cell weights ``1/n``."""
    T = fit.frame.term_levels["subject"]
    per = [pair_unit_data(fit.frame, p, "subject") for p in fit.pairs]
    rows = []
    for eps in itertools.product([1.0, -1.0], repeat=T):
        row = []
        for d, codes in per:
            dd = d * np.array(eps)[codes]
            row.append(statistic(dd, codes, np.full(dd.size, 1.0 / dd.size)))
        rows.append(row)
    return np.array(rows)


def _brute(fit):
    """The CR2 t of every pair under every flip (the dense-matrix CR2 variance)."""
    return _over_flips(fit, lambda dd, codes, w: float(w @ dd)
                       / np.sqrt(_dense_cr2(dd, codes, w, 0.0)[0]))


def _within_se(dd, codes, w):
    """The within-unit SE of ``w @ dd`` from the cells, by its definition."""
    v = 0.0
    for t in np.unique(codes):
        m = codes == t
        if m.sum() > 1:
            v += np.sum(w[m] ** 2 * (dd[m] - dd[m].mean()) ** 2) * m.sum() / (m.sum() - 1)
    return np.sqrt(v)


def _brute_scaled(fit):
    """|w'd| / within-unit SE under every flip of the raw cells (flips x pairs), the
    scale recomputed from the flipped cells each time."""
    return _over_flips(fit, lambda dd, codes, w: abs(float(w @ dd)) / _within_se(dd, codes, w))


def _brute_stepdown(S):
    """Westfall-Young step-down p-values from the flips x hypotheses matrix (row 0 the
    identity), the maximum over the hypotheses not yet rejected taken directly."""
    obs = S[0]
    order = np.argsort(-obs)
    want = np.empty_like(obs)
    run = 0.0
    for i, j in enumerate(order):
        run = max(run, np.mean(S[:, order[i:]].max(axis=1) >= obs[j] - 1e-9))
        want[j] = run
    return want


def test_maxt_and_stepdown_equal_brute_force_enumeration():
    fit = _fit()
    S = np.abs(_brute(fit))
    obs = S[0]
    want_single = np.array([np.mean(S.max(axis=1) >= o - 1e-9) for o in obs])
    # the step-down flips the totals scaled by their within-unit SE
    want_sd = _brute_stepdown(_brute_scaled(fit))
    single = fit.contrasts(adjust="maxt")
    sd = fit.contrasts(adjust="stepdown")
    np.testing.assert_allclose(single["statistic"].abs(), obs, rtol=1e-9)
    np.testing.assert_allclose(single["p_adjusted"], want_single, atol=1e-12)
    np.testing.assert_allclose(sd["p_adjusted"], want_sd, atol=1e-12)
    meta = single.attrs["mixrank"]
    assert meta["exact"] and meta["flips"] == 2 ** 5
    crit = np.quantile(S.max(axis=1), 0.95, method="higher")
    half = (single["ci_upper"] - single["ci_lower"]) / 2
    np.testing.assert_allclose(half, crit * single["std_error"], rtol=1e-9)


def test_streamed_chunks_give_the_same_answer(monkeypatch):
    fit = _fit(T=16, K=5)                     # 16 units: random flips, seeded
    a = fit.contrasts(adjust="stepdown", draws=3000, rng=4)["p_adjusted"].to_numpy()
    pr = fit.rank_probabilities(draws=3000, rng=4)
    monkeypatch.setattr(rz, "_CELLS", 7)       # a handful of flips per chunk
    b = fit.contrasts(adjust="stepdown", draws=3000, rng=4)["p_adjusted"].to_numpy()
    np.testing.assert_array_equal(a, b)
    assert fit.contrasts(adjust="maxt", draws=3000, rng=4).attrs["mixrank"]["exact"] is False
    pr2 = fit.rank_probabilities(draws=3000, rng=4)
    np.testing.assert_allclose(pr["probability"], pr2["probability"])


def test_rank_probabilities_from_all_flips():
    fit = _fit()
    pr = fit.rank_probabilities()
    assert pr.attrs["mixrank"]["draws"] == 2 ** 6
    tot = pr.groupby("model")["probability"].sum()
    np.testing.assert_allclose(tot, 1.0)
    # every draw ranks each of the 4 models once: each rank's probabilities sum to 1
    np.testing.assert_allclose(pr.groupby("rank")["probability"].sum(), 1.0)


def test_simultaneous_rank_intervals_use_the_flips():
    fit = _fit()
    r = fit.rank_intervals(coverage="simultaneous", adjust="maxt")
    assert "randomization" in r.attrs["mixrank"]["reference"]
    assert (r["rank_lower"] <= r["rank"]).all() and (r["rank"] <= r["rank_upper"]).all()
    with pytest.raises(mixrank.DesignError, match="stepdown.*df='cr2'"):
        mixrank.fit("correct ~ model + (1|subject)", _data(), df="satterthwaite").contrasts(
            adjust="stepdown")
