"""Arena clusters: detection, CR2 and Bell-McCaffrey df against dense formulas, bad inputs.

The reference computes CR2 and the Bell-McCaffrey df with explicit N x N
matrices (scipy's matrix square root of each cluster block of I - H, the
projection M = I - H and G = M Q), as clubSandwich defines them for a GLM's
working regression; the package computes them block by block.
"""

from __future__ import annotations

import inspect
import pydoc
import warnings

import numpy as np
import pytest
from scipy import linalg

import mixrank
from mixrank.arena.clusters import cr2
from mixrank.arena.ppi import design
from mixrank.errors import DataError, DesignError, OptionError, SmallSampleWarning

from .conftest import simulate_battles

BETA = np.array([0.0, 0.4, -0.3, 0.6])


def _dense(Z, mu, e, cl, c):
    w = mu * (1 - mu)
    Xt = Z * np.sqrt(w)[:, None]
    B = np.linalg.inv(Xt.T @ Xt)
    H = Xt @ B @ Xt.T
    N = Z.shape[0]
    meat = np.zeros((Z.shape[1],) * 2)
    Q = np.zeros((N, cl.max() + 1))
    for g in range(cl.max() + 1):
        i = np.flatnonzero(cl == g)
        A = np.real(linalg.inv(linalg.sqrtm(np.eye(i.size) - H[np.ix_(i, i)])))
        u = Xt[i].T @ A @ (e[i] / np.sqrt(w[i]))
        meat += np.outer(u, u)
        Q[i, g] = A @ Xt[i] @ B @ c
    Gm = (np.eye(N) - H) @ Q
    GG = Gm.T @ Gm
    return B @ meat @ B, np.trace(GG) ** 2 / np.trace(GG @ GG)


def test_cr2_and_bell_mccaffrey_df_equal_the_dense_formulas():
    log = simulate_battles(240, BETA, rng=8, n_prompts=12, prompt_sd=0.5, tie_rate=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        res = mixrank.arena(log, cluster="prompt")
    bt = res.battles
    Z = design(bt)
    mu = 1 / (1 + np.exp(-(Z @ res.fit.theta[1:])))
    e = bt.outcome - mu
    cl = bt.cluster
    c = np.zeros(Z.shape[1])
    c[0], c[2] = 1.0, -1.0            # beta_1 - beta_3 (beta_0 is the dropped reference)
    ref_cov, ref_df = _dense(Z, mu, e, cl, c)
    cov, df = cr2(Z, mu, e, cl, c[:, None])
    np.testing.assert_allclose(cov, ref_cov, rtol=1e-8, atol=1e-14)
    assert df[0] == pytest.approx(ref_df, rel=1e-8)
    # the result uses them: the contrast m01 - m03 has that SE and df (logit scale)
    row = res.contrasts(adjust="none", scale="logit").set_index(["model_a", "model_b"]).loc[
        ("m01", "m03")]
    assert row["std_error"] == pytest.approx(np.sqrt(c @ ref_cov @ c), rel=1e-8)
    assert row["df"] == pytest.approx(ref_df, rel=1e-8) and row["df"] < 12


def test_prompt_column_detected_and_clustered_by_default():
    log = simulate_battles(3000, BETA, rng=9, n_prompts=300, prompt_sd=0.5)
    res = mixrank.arena(log)
    assert res.se == "sandwich" and res.battles.cluster_name == "prompt"
    assert res.cluster_detected and "detected" in res.notes[0]
    meta = res.contrasts().attrs["mixrank"]
    assert meta["cluster_detected"] and "CR2" in meta["df_method"]
    assert "clustered by 'prompt'" in str(res.summary())
    off = mixrank.arena(log, cluster=False)
    assert off.se == "information" and not off.cluster_detected
    # an explicit se='information' does not detect (nothing to cluster)
    assert mixrank.arena(log, se="information").battles.cluster_name is None


def test_one_cluster_refused_two_warned_few_warned():
    log = simulate_battles(600, BETA, rng=10)
    with pytest.raises(DataError, match="single value"):
        mixrank.arena(log.assign(prompt="p"))
    with pytest.warns(SmallSampleWarning, match="rank one"):
        mixrank.arena(log.assign(voter=np.arange(len(log)) % 2))
    with pytest.warns(SmallSampleWarning, match="fewer than 20"):
        mixrank.arena(log.assign(prompt=np.arange(len(log)) % 10))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        mixrank.arena(log.assign(prompt=np.arange(len(log)) % 60))


def test_bad_rng_draws_and_signature():
    log = simulate_battles(800, BETA, rng=11)
    with pytest.raises(OptionError, match="rng='abc'"):
        mixrank.arena(log, se="bootstrap", rng="abc")
    res = mixrank.arena(log)
    with pytest.raises(OptionError, match="rng='abc'"):
        res.contrasts(adjust="maxt", rng="abc")
    with pytest.raises(OptionError, match="rng="):
        res.rank_intervals(coverage="simultaneous", adjust="maxt", rng=[1, 2])
    with pytest.raises(DesignError, match="1,000,000|1000000"):
        res.contrasts(adjust="maxt", draws=10 ** 12)
    with pytest.raises(OptionError, match="scale="):
        mixrank.arena(log, scale="odds")
    params = inspect.signature(mixrank.arena).parameters
    assert {"data", "formula", "judge", "position", "cluster", "scale"} <= set(params)
    assert "function arena" in pydoc.render_doc(mixrank.arena)
    from mixrank.arena.data import WINNER_CODES  # the subpackage stays importable

    assert WINNER_CODES["tie"] == 0.5 and inspect.isfunction(mixrank.arena)


def test_one_scale_per_fit_for_every_table():
    log = simulate_battles(2000, BETA, rng=12)
    elo = mixrank.arena(log)
    logit = mixrank.arena(log, scale="logit")
    sc_e, sc_l = elo.model_scores(), logit.model_scores()
    np.testing.assert_allclose(sc_e["estimate"] - 1000, 400 / np.log(10) * sc_l["estimate"])
    ri_e, ri_l = elo.rank_intervals(), logit.rank_intervals()
    ri_e, ri_l = ri_e.set_index("model").loc[sc_e.model], ri_l.set_index("model").loc[sc_e.model]
    np.testing.assert_allclose(ri_e["estimate"], sc_e["estimate"])
    np.testing.assert_array_equal(ri_e["rank_lower"], ri_l["rank_lower"])
    c_e, c_l = elo.contrasts(), logit.contrasts()
    np.testing.assert_allclose(c_e["estimate"], 400 / np.log(10) * c_l["estimate"])
    for t in (sc_e, c_e, elo.rank_intervals()):
        assert t.attrs["mixrank"]["scale"] == "elo"
