"""Subset scoring when the new model is unlike the reference models: seeded simulation
(marker ``slow``; docs/subset.md §5).

A reference of 20 simulated models (2PL items in 4 subjects) fixes the item model;
the new model is unlike all of them: strong on one subject only (``boost``), or
equally good at every item whatever its difficulty (``flat``).  Its answers on all
1,500 items are drawn once per population (4 populations), and 250 stratified
selections of k = 100 items are scored per population -- the design-based setting:
the population is fixed, the selection is random.  The model-assisted interval must
cover the population mean at >= 0.95 - 2 MC SE; the model-based IRT estimate
(tinyBenchmarks' reading) is biased there, by more than 3 MC SE.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit, logit

import mixrank
from mixrank.subset.data import layout, matrix
from mixrank.subset.estimator import estimates
from mixrank.subset.irt import fit_items
from mixrank.subset.selection import design, draw
from tests.subset.sim import long_table, probabilities

pytestmark = pytest.mark.slow

POPULATIONS, REPS, K, LEVEL = 4, 250, 100, 0.95
LAY = layout("correct ~ model + (1|subject/question)")


def _new_model(P: np.ndarray, subj: np.ndarray, scenario: str) -> np.ndarray:
    if scenario == "boost":          # weak overall, strong on subject 0 only
        return expit(-1.5 + np.where(subj == 0, 4.0, 0.0) + 0.3 * logit(P[0]))
    return np.full(P.shape[1], 0.55)  # the same chance on every item: unlike any IRT model


def _run(scenario: str) -> dict[str, np.ndarray]:
    errors: dict[str, list] = {"model_assisted": [], "irt": []}
    covered: dict[str, list] = {"model_assisted": [], "irt": []}
    for pop in range(POPULATIONS):
        P, subj = probabilities(20, 1500, 4, 100 + pop)
        rng = np.random.default_rng(pop)
        Y = (rng.random(P.shape) < P).astype(float)
        y_new = (rng.random(P.shape[1]) < _new_model(P, subj, scenario)).astype(float)
        mat = matrix(long_table(Y, subj), LAY)
        im = fit_items(mat.Y, "rasch")
        des = design(mat, im, K)
        truth = y_new.mean()
        for _ in range(REPS):
            idx = draw(des, rng)
            found = estimates(im, y_new[idx], idx, des.stratum[idx], des.sizes.astype(float))
            for method in errors:
                e, v, df = found[method]
                crit = stats.t.ppf(0.975, df) if np.isfinite(df) else stats.norm.ppf(0.975)
                errors[method].append(e - truth)
                covered[method].append(abs(e - truth) <= crit * np.sqrt(v))
    return {**{f"err_{m}": np.array(v) for m, v in errors.items()},
            **{f"cov_{m}": np.array(v, float) for m, v in covered.items()}}


@pytest.mark.parametrize("scenario", ["boost", "flat"])
def test_model_assisted_interval_covers_where_irt_is_biased(scenario):
    res = _run(scenario)
    R = POPULATIONS * REPS
    mc_se = np.sqrt(LEVEL * (1 - LEVEL) / R)
    assert res["cov_model_assisted"].mean() >= LEVEL - 2 * mc_se
    # design-unbiased: the mean error is within 3 MC SE of 0
    e = res["err_model_assisted"]
    assert abs(e.mean()) <= 3 * e.std(ddof=1) / np.sqrt(R)
    # the model-based estimate is biased for a model unlike the reference
    b = res["err_irt"]
    assert abs(b.mean()) > 3 * b.std(ddof=1) / np.sqrt(R)


def test_the_public_api_gives_the_internal_estimates():
    P, subj = probabilities(20, 1500, 4, 100)
    rng = np.random.default_rng(0)
    Y = (rng.random(P.shape) < P).astype(float)
    y_new = (rng.random(P.shape[1]) < _new_model(P, subj, "boost")).astype(float)
    ref = long_table(Y, subj)
    sel = mixrank.select_items(ref, K, rng=11)
    new = long_table(y_new[None, :], subj, names=["new"])
    res = mixrank.subset_score(ref, new[new.question.isin(sel.question)], selection=sel)
    mat = matrix(ref, LAY)
    im = fit_items(mat.Y, "rasch")
    des = design(mat, im, K)
    idx = draw(des, np.random.default_rng(11))
    found = estimates(im, y_new[idx], idx, des.stratum[idx], des.sizes.astype(float))
    got = res.scores().set_index("method")
    for method, (e, v, _) in found.items():
        assert got.loc[method, "estimate"] == pytest.approx(e, abs=1e-10)
        assert got.loc[method, "std_error"] == pytest.approx(np.sqrt(v), abs=1e-10)
