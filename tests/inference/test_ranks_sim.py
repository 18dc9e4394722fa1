"""Seeded coverage simulations of the rank confidence intervals (docs/methods.md §7).

Guarantees checked: marginal intervals hold each model's true rank with
probability >= 1 - alpha; simultaneous intervals hold all true ranks jointly
with probability >= 1 - alpha; the max-t sets are on average no wider than
Holm's.  Pass bands are the nominal level minus 3 Monte Carlo standard
errors, ``3 sqrt(alpha (1 - alpha) / R)`` for R replicates.

Two generators: (1) unit-level Gaussian scores of M models over T units with
heterogeneous model SDs and a shared unit factor with model-specific
loadings (so the pairwise variances, and the correlations max-t uses,
differ across pairs); contrasts are the paired t-statistics on the units,
exact t with T - 1 df.  (2) End to end: ``mixrank.simulate(family="gaussian")``
fitted with ``mixrank.fit("correct ~ model + (1|subject)")``.

"Near null" configurations have strictly ordered true means with
negligible gaps, so that about half of the directed hypotheses are true
nulls at the boundary: the hardest case for coverage.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.errors import MixrankWarning
from mixrank.inference.ranks import rank_intervals_from_contrasts

ALPHA = 0.05
pytestmark = pytest.mark.slow


def _band(R: int) -> float:
    return 1 - ALPHA - 3 * np.sqrt(ALPHA * (1 - ALPHA) / R)


class UnitGenerator:
    """M models scored on T units: y_tm = mu_m + sig_m z_tm + lam_m f_t."""

    def __init__(self, mu, T: int, rng: np.random.Generator) -> None:
        self.mu = np.asarray(mu, dtype=float)
        self.M = len(self.mu)
        self.T = T
        self.rng = rng
        self.sig = np.linspace(0.8, 1.2, self.M)
        self.lam = np.linspace(0.0, 1.0, self.M)
        self.models = [f"m{i}" for i in range(self.M)]
        self.jj, self.kk = np.triu_indices(self.M, 1)
        # true ranks: 1 + number of strictly better models
        self.true_rank = 1 + np.sum(self.mu[None, :] > self.mu[:, None], axis=1)

    def draw(self) -> tuple[dict, pd.DataFrame]:
        z = self.rng.standard_normal((self.T, self.M))
        f = self.rng.standard_normal((self.T, 1))
        Y = self.mu + z * self.sig + f * self.lam
        D = Y[:, self.jj] - Y[:, self.kk]
        con = pd.DataFrame(dict(
            model_a=[self.models[j] for j in self.jj], model_b=[self.models[k] for k in self.kk],
            estimate=D.mean(axis=0), std_error=D.std(axis=0, ddof=1) / np.sqrt(self.T),
            df=float(self.T - 1)))
        return dict(zip(self.models, Y.mean(axis=0), strict=True)), con

    def covered(self, tab: pd.DataFrame) -> np.ndarray:
        t = tab.set_index("model").loc[self.models]
        r = self.true_rank
        return (t["rank_lower"].to_numpy() <= r) & (r <= t["rank_upper"].to_numpy())


def _run(gen: UnitGenerator, R: int, configs: dict[str, dict]) -> dict[str, dict]:
    out = {name: dict(cover=np.zeros((R, gen.M), dtype=bool), width=np.zeros((R, gen.M)))
           for name in configs}
    for r in range(R):
        scores, con = gen.draw()
        for name, kw in configs.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MixrankWarning)
                tab = rank_intervals_from_contrasts(scores, con, level=1 - ALPHA, rng=gen.rng,
                                                    **kw)
            out[name]["cover"][r] = gen.covered(tab)
            t = tab.set_index("model").loc[gen.models]
            out[name]["width"][r] = (t["rank_upper"] - t["rank_lower"]).to_numpy()
    return out


CONFIGS = {
    "holm_marginal": dict(coverage="marginal", method="holm"),
    "holm_simultaneous": dict(coverage="simultaneous", method="holm"),
    "maxt_marginal": dict(coverage="marginal", method="maxt", B=1000),
    "maxt_simultaneous": dict(coverage="simultaneous", method="maxt", B=1000),
}


def test_coverage_near_null():
    # M = 5 models, T = 30 units, mean gaps of 1e-4 SD, 1000 replicates (~30 s).
    R = 1000
    gen = UnitGenerator(np.arange(5) * 1e-4, T=30, rng=np.random.default_rng(20240607))
    out = _run(gen, R, CONFIGS)
    band = _band(R)
    for name in ("holm_marginal", "maxt_marginal"):
        cov = out[name]["cover"].mean(axis=0)
        assert (cov >= band).all(), f"{name}: per-model coverage {cov} below {band:.4f}"
    for name in ("holm_simultaneous", "maxt_simultaneous"):
        joint = out[name]["cover"].all(axis=1).mean()
        assert joint >= band, f"{name}: joint coverage {joint:.4f} below {band:.4f}"
    # simultaneous intervals also cover each model marginally
    assert (out["holm_simultaneous"]["cover"].mean(axis=0) >= band).all()


def test_near_null_design_detects_an_unadjusted_procedure():
    # The check above has teeth: with M = 8 near-null models, one-sided tests at alpha/2
    # without multiplicity correction leave the extreme models' true ranks uncovered far
    # more often than alpha (7 chances at 0.025 each).
    R = 600
    M = 8
    gen = UnitGenerator(np.arange(M) * 1e-4, T=30, rng=np.random.default_rng(11))
    cover = np.zeros((R, M), dtype=bool)
    for r in range(R):
        scores, con = gen.draw()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MixrankWarning)
            # Bonferroni over the M - 1 hypotheses of a side at alpha'/2 with
            # alpha' = (M - 1) alpha: every single test at alpha/2, i.e. no correction
            tab = rank_intervals_from_contrasts(scores, con, level=1 - (M - 1) * ALPHA,
                                                coverage="marginal", adjust="bonferroni")
        cover[r] = gen.covered(tab)
    assert cover.mean(axis=0).min() < _band(R)


def test_maxt_no_wider_than_holm_and_informative():
    # Three blocks of two close models (~25 s).
    R = 400
    mu = np.array([0.0, 0.1, 0.9, 1.0, 1.8, 1.9])
    gen = UnitGenerator(mu, T=30, rng=np.random.default_rng(99))
    out = _run(gen, R, CONFIGS)
    band = _band(R)
    for cov in ("marginal", "simultaneous"):
        wm = out[f"maxt_{cov}"]["width"].mean()
        wh = out[f"holm_{cov}"]["width"].mean()
        assert wm <= wh, f"{cov}: max-t mean width {wm:.3f} > Holm {wh:.3f}"
        assert (out[f"holm_{cov}"]["cover"].mean(axis=0) >= band).all()
        assert (out[f"maxt_{cov}"]["cover"].mean(axis=0) >= band).all()
    assert out["holm_simultaneous"]["cover"].all(axis=1).mean() >= band
    assert out["maxt_simultaneous"]["cover"].all(axis=1).mean() >= band
    # informative: the three separated blocks (gaps of about 3.5 standard errors) are
    # mostly resolved; the trivial interval [1, 6] has width 5
    assert out["holm_marginal"]["width"].mean() < 2.5


def _fit_run(R: int, effects, rng_seed: int) -> dict[str, np.ndarray]:
    effects = np.asarray(effects)
    M = len(effects)
    true_rank = 1 + np.sum(effects[None, :] > effects[:, None], axis=1)
    models = [f"m{i + 1:02d}" for i in range(M)]
    rng = np.random.default_rng(rng_seed)
    out = {c: np.zeros((R, M), dtype=bool) for c in ("marginal", "simultaneous")}
    for r in range(R):
        df = mixrank.simulate(M, 8, 5, family="gaussian", effects=effects, sd_model_subject=0.4,
                              sd_model_question=1.0, rng=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MixrankWarning)
            fit = mixrank.fit("correct ~ model + (1|subject)", df)
            for c in out:
                t = fit.rank_intervals(1 - ALPHA, coverage=c).set_index("model").loc[models]
                out[c][r] = ((t["rank_lower"].to_numpy() <= true_rank)
                             & (true_rank <= t["rank_upper"].to_numpy()))
    return out


def test_end_to_end_fit_coverage_near_null():
    # 4 models x 8 subjects x 5 questions, subject x model SD 0.4, residual SD 1:
    # the REML fit with Satterthwaite df at the subject unit (~25 s).
    R = 500
    out = _fit_run(R, effects=[0.0, 1e-4, 2e-4, 3e-4], rng_seed=31)
    band = _band(R)
    cov = out["marginal"].mean(axis=0)
    assert (cov >= band).all(), f"per-model coverage {cov} below {band:.4f}"
    joint = out["simultaneous"].all(axis=1).mean()
    assert joint >= band, f"joint coverage {joint:.4f} below {band:.4f}"
