"""Coverage of arena intervals on battles simulated from known strengths (seeded, slow).

Scenarios (K = 8 models, 3000 battles per replicate, pairs drawn uniformly):

* BT without ties, information SEs -- target the true ``beta_a - beta_b``;
* Davidson ties (nu = 0.6) fitted with ``ties="davidson"`` -- the true contrasts;
* the same data fitted with ``ties="half"`` and per-battle sandwich SEs --
  target the pseudo-true half-tie BT contrast (the population fit on the
  expected counts, computed exactly: no Monte Carlo);
* prompt clustering: 150 prompts per replicate, each shifting every model's
  logit by N(0, 0.6^2); clustered sandwich SEs -- target the population BT
  fit on the marginal win probabilities (Gauss-Hermite quadrature).

Pass bands: the mean coverage over the 28 contrasts of R replicates has MC
SE at most ``sqrt(.95 * .05 / R)`` (averaging correlated indicators never
increases the variance beyond one indicator's); the band is 3.5 MC SEs.
Rank intervals (marginal, Holm): each model's true rank must be covered at
least at the nominal level minus 3.5 MC SEs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.arena.data import Patterns
from mixrank.arena.estimate import fit_bt

from .conftest import simulate_battles

BETA = np.array([0.0, 0.35, -0.25, 0.7, 0.15, -0.6, 0.45, -0.1])
K = BETA.size
IA, IB = np.triu_indices(K, 1)
R = 500
N = 3000
BAND = 3.5 * np.sqrt(0.95 * 0.05 / R)


def _expected_fit(pa: np.ndarray, pb: np.ndarray, pt: np.ndarray) -> np.ndarray:
    """Population half-tie BT fit on expected counts per pair (uniform pair sampling)."""
    m = IA.size
    pat = Patterns(a=IA, b=IB, x=np.zeros((m, 0)), win=1e4 * pa, loss=1e4 * pb, tie=1e4 * pt,
                   index=np.zeros(0, dtype=np.intp), flip=np.zeros(0, dtype=bool))
    return fit_bt(pat, K, ties="half").beta


def _coverage(fits, target) -> float:
    hits = []
    for res in fits:
        c = res.contrasts(adjust="none", scale="logit")
        # models are named m00..m07, sorted: the table's pairs are (IA, IB) in order
        t = target[IA] - target[IB]
        hits.append((c["ci_lower"] <= t) & (t <= c["ci_upper"]))
    return float(np.mean(hits))


def _rank_coverage(fits, target) -> float:
    true_rank = 1 + np.argsort(np.argsort(-target))
    hits = []
    for res in fits:
        ri = res.rank_intervals().sort_values("model")
        hits.append((ri["rank_lower"].to_numpy() <= true_rank)
                    & (true_rank <= ri["rank_upper"].to_numpy()))
    return float(np.mean(hits))


@pytest.mark.slow
def test_bt_without_ties_contrasts_and_ranks():
    fits = [mixrank.arena(simulate_battles(N, BETA, rng=1000 + r), ties="drop")
            for r in range(R)]
    assert abs(_coverage(fits, BETA) - 0.95) <= BAND
    assert _rank_coverage(fits, BETA) >= 0.95 - BAND


@pytest.mark.slow
def test_davidson_ties_and_half_ties_with_sandwich():
    nu = 0.6
    logs = [simulate_battles(N, BETA, rng=2000 + r, nu=nu) for r in range(R)]
    dav = [mixrank.arena(log, ties="davidson") for log in logs]
    assert abs(_coverage(dav, BETA) - 0.95) <= BAND
    d = BETA[IA] - BETA[IB]
    z = np.exp(d / 2) + np.exp(-d / 2) + nu
    target = _expected_fit(np.exp(d / 2) / z, np.exp(-d / 2) / z, nu / z)
    half = [mixrank.arena(log, ties="half", se="sandwich") for log in logs]
    assert abs(_coverage(half, target) - 0.95) <= BAND
    assert _rank_coverage(half, target) >= 0.95 - BAND


@pytest.mark.slow
def test_prompt_clustering_with_clustered_sandwich():
    sd = 0.6
    x, w = np.polynomial.hermite_e.hermegauss(60)
    d = BETA[IA] - BETA[IB]
    p = (w[None, :] / w.sum() / (1 + np.exp(-(d[:, None] + np.sqrt(2) * sd * x[None, :])))
         ).sum(axis=1)
    target = _expected_fit(p, 1 - p, 0 * p)
    logs = [simulate_battles(N, BETA, rng=3000 + r, n_prompts=150, prompt_sd=sd)
            for r in range(R)]
    clustered = [mixrank.arena(log, cluster="prompt", ties="drop") for log in logs]
    cov_cl = _coverage(clustered, target)
    assert abs(cov_cl - 0.95) <= BAND
    assert _rank_coverage(clustered, target) >= 0.95 - BAND
    naive = [mixrank.arena(log, ties="drop", cluster=False) for log in logs[:100]]
    assert _coverage(naive, target) < cov_cl      # ignoring the prompts under-covers


@pytest.mark.slow
def test_power_at_n_star_battles_is_the_target():
    # N* from the exact information per battle (expected counts at the current mix of
    # pairs), then battles simulated at N*: the z test of the pair rejects with
    # probability ~ 0.8.  MC SE sqrt(.8 * .2 / R) = 0.018 at R = 500; band 3.5 SEs
    # (plus the O(1/N*) gap between the Wald approximation and the finite-N power).
    beta = np.array([0.0, 0.12, -0.4, 0.5])
    k = beta.size
    ia, ib = np.triu_indices(k, 1)
    d = beta[ia] - beta[ib]
    p = 1 / (1 + np.exp(-d))
    n0 = 1e4                       # uniform pairs: n0 battles, n0 / 6 per pair
    pat = Patterns(a=ia, b=ib, x=np.zeros((ia.size, 0)), win=n0 / ia.size * p,
                   loss=n0 / ia.size * (1 - p), tie=0 * p, index=np.zeros(0, dtype=np.intp),
                   flip=np.zeros(0, dtype=bool))
    fit = fit_bt(pat, k, ties="drop")
    cov = fit.covariance()
    var1 = (cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]) * n0       # one battle's variance
    zsum = 1.959964 + 0.841621
    n_star = int(np.ceil(zsum ** 2 * var1 / 0.12 ** 2))
    hits = []
    for r in range(R):
        g = np.random.default_rng(5000 + r)
        a = g.integers(0, k, n_star)
        b = (a + g.integers(1, k, n_star)) % k
        win = g.random(n_star) < 1 / (1 + np.exp(-(beta[a] - beta[b])))
        log = {"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b],
               "winner": np.where(win, "model_a", "model_b")}
        c = mixrank.arena(pd.DataFrame(log)).contrasts(adjust="none")
        hits.append(bool(c.loc[0, "p_value"] < 0.05))
    assert abs(np.mean(hits) - 0.8) <= 3.5 * np.sqrt(0.16 / R) + 0.01
    # and resolution() reports that N* from a fit at this size (within sampling error)
    big = mixrank.arena(pd.DataFrame(log)).resolution(columns="all", pairs=[("m1", "m0")])
    assert big["n_star"].iloc[0] == pytest.approx(
        zsum ** 2 * var1 / big["estimate"].iloc[0] ** 2, rel=0.15)
