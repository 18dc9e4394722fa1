"""Everything downstream of the contrasts works on the corrected ones (docs/judge.md §6)."""

from __future__ import annotations

import numpy as np
import pytest

import mixrank
from tests.judge.simdata import simulate


@pytest.fixture(scope="module")
def data():
    return simulate(9, models=4, subjects=16, questions=15, frac=0.25)[0]


@pytest.mark.parametrize("formula", ["score ~ model + (1|subject)", "score ~ model"])
def test_joint_covariance_is_consistent_with_pair_variances(data, formula):
    """lambda = 0 and shared labels: d_02 = d_01 + d_12 on every cell, so the joint covariance
    must satisfy Var(02) = Var(01) + Var(12) + 2 Cov(01, 12) exactly; its diagonal is the
    reported variances."""
    res = mixrank.fit(formula, data, gold="human", lam=0)
    cov, info = res.contrast_covariance()
    idx = {(p.model_a, p.model_b): i for i, p in enumerate(res.pairs)}
    a, b, c = idx[("m0", "m1")], idx[("m1", "m2")], idx[("m0", "m2")]
    assert cov[c, c] == pytest.approx(cov[a, a] + cov[b, b] + 2 * cov[a, b], rel=1e-9)
    np.testing.assert_allclose(np.diag(cov), [p.variance for p in res.pairs], rtol=1e-12)


def test_two_models_maxt_equals_unadjusted(data):
    two = data[data["model"].isin(["m0", "m3"])]
    for f in ("score ~ model + (1|subject)", "score ~ model"):
        con = mixrank.fit(f, two, gold="human").contrasts(adjust="maxt", rng=0, draws=20000)
        assert con["p_adjusted"].iloc[0] == pytest.approx(con["p_value"].iloc[0], abs=0.01)


def test_rank_intervals_resolution_and_adjust_use_corrected_contrasts(data):
    res = mixrank.fit("score ~ model + (1|subject)", data, gold="human")
    con = res.contrasts(adjust="none")
    ranks = res.rank_intervals()
    pw = ranks.attrs["mixrank"]["pairwise"]
    assert len(pw) == 12
    sc = res.model_scores().set_index("model")["estimate"]
    np.testing.assert_allclose(ranks.set_index("model")["estimate"], sc[ranks["model"]].values)
    tab = res.resolution(columns="all", pairs="all")
    for _, r in tab.iterrows():
        row = con[((con["model_a"] == r["model_a"]) & (con["model_b"] == r["model_b"]))
                  | ((con["model_a"] == r["model_b"]) & (con["model_b"] == r["model_a"]))].iloc[0]
        assert abs(r["estimate"]) == pytest.approx(abs(row["estimate"]), rel=1e-12)
        assert r["std_error"] == pytest.approx(row["std_error"], rel=1e-12)
    holm = res.contrasts(adjust="holm")
    assert (holm["p_adjusted"] >= holm["p_value"] - 1e-15).all()
    assert res.rank_probabilities(rng=1)["p_best"].between(0, 1).all()
