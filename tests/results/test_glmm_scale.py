"""The binomial GLMM's ranked tables take point ranks and intervals from one quantity on one
scale (docs/glmm.md §5), say which in attrs, and keep a requested pair's order and sign.

The estimates themselves are checked against glmer in tests/engine/test_glmm_reference.py;
here: ``model_scores(scale=)`` against the fit's ``beta``/``vcov`` and cell effects by direct
computation, ``rank_intervals`` against the ordering of that same quantity and against the
contrasts on the same scale.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from scipy.stats import norm

import mixrank

FU = "correct ~ model + (1|subject:question:prompt) + (1|subject:model)"


def fit(**kw):
    df = mixrank.load_example()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit(FU, df, family="binomial", nagq=0, **kw)


@pytest.fixture(scope="module")
def res():
    return fit()


def test_model_scores_on_each_scale(res):
    f = res.fit
    se = np.sqrt(np.diag(f.vcov))
    q = norm.ppf(0.975)
    lg = res.model_scores()
    assert lg.attrs["mixrank"]["scale"] == "logit"
    np.testing.assert_allclose(lg.estimate, f.beta, rtol=0, atol=0)
    np.testing.assert_allclose(lg.ci_lower, f.beta - q * se, rtol=1e-14)
    np.testing.assert_allclose(lg.probability_at_zero, expit(f.beta), rtol=1e-14)
    rs = res.model_scores(scale="response")
    assert rs.attrs["mixrank"]["scale"] == "response"
    P = expit(f.beta[None, :] + f.cell_effects[:, None])
    np.testing.assert_allclose(rs.estimate, P.mean(0), rtol=1e-14)
    np.testing.assert_allclose(rs.probability, P.mean(0), rtol=1e-14)
    np.testing.assert_allclose(rs.std_error, (P * (1 - P)).mean(0) * se, rtol=1e-12)
    up = expit((f.beta + q * se)[None, :] + f.cell_effects[:, None]).mean(0)
    np.testing.assert_allclose(rs.ci_upper, up, rtol=1e-14)
    assert (rs.ci_lower < rs.estimate).all() and (rs.estimate < rs.ci_upper).all()
    # n counts cells (960 per model in the example), trials beside it; observed = raw share
    assert (rs.n == 960).all() and (rs.trials == 960).all()
    df = mixrank.load_example()
    share = df.groupby("model")["correct"].mean()
    np.testing.assert_allclose(rs.set_index("model").observed, share, rtol=1e-14)
    meta = rs.attrs["mixrank"]
    assert "conditional at zero random effects" in meta["probability_at_zero"]
    assert "averaged over the frame's cells" in meta["probability"]


@pytest.mark.parametrize("scale", ["logit", "response"])
def test_rank_points_and_intervals_come_from_one_scale(res, scale):
    ranks = res.rank_intervals(scale=scale)
    assert ranks.attrs["mixrank"]["scale"] == scale
    assert ranks.attrs["mixrank"]["score"].startswith(
        "log-odds" if scale == "logit" else "probability")
    scores = res.model_scores(scale=scale).set_index("model")
    r = ranks.set_index("model")
    np.testing.assert_array_equal(r.estimate, scores.estimate.loc[r.index])
    # point ranks are the ordering of that estimate
    order = scores.estimate.rank(ascending=False, method="min").astype(int)
    assert (r["rank"] == order.loc[r.index]).all()
    assert ((r.rank_lower <= r["rank"]) & (r["rank"] <= r.rank_upper)).all()
    # the interval's tests compare the same quantity: contrast = difference of the scores
    con = res.contrasts(scale=scale)
    diff = scores.estimate.loc[con.model_a].to_numpy() - scores.estimate.loc[con.model_b].to_numpy()
    np.testing.assert_allclose(con.estimate, diff, rtol=1e-12, atol=1e-15)




def test_requested_pair_keeps_its_order_and_sign(res):
    one = fit(pairs=[("m02", "m01"), ("m03", "m05"), ("m01", "m02")])
    con = one.contrasts()
    assert con[["model_a", "model_b"]].values.tolist() == [["m02", "m01"], ["m03", "m05"]]
    full = res.contrasts().set_index(["model_a", "model_b"])
    assert con.estimate.iloc[0] == pytest.approx(-full.loc[("m01", "m02"), "estimate"], abs=1e-6)
    rc = one.contrasts(scale="response")
    assert rc[["model_a", "model_b"]].values.tolist() == [["m02", "m01"], ["m03", "m05"]]
    fr = res.contrasts(scale="response").set_index(["model_a", "model_b"])
    assert rc.estimate.iloc[0] == pytest.approx(-fr.loc[("m01", "m02"), "estimate"], abs=1e-6)
    # resolution of a restricted fit still ranks every model (the joint fit has all pairs)
    rv = one.resolution(columns="all", pairs=[("m02", "m01")])
    assert rv[["model_a", "model_b"]].values.tolist() == [["m02", "m01"]]
    assert len(one.resolution(columns="all")) == 5
    with pytest.raises(mixrank.DesignError, match="'zz' is not a model of the fit"):
        one.resolution(columns="all", pairs=[("zz", "m01")])


def test_bad_scale_is_refused(res):
    with pytest.raises(mixrank.DesignError, match="scale='prob'"):
        res.model_scores(scale="prob")
    with pytest.raises(mixrank.DesignError, match="scale='prob'"):
        res.rank_intervals(scale="prob")


def test_unbalanced_design_where_raw_share_and_logit_disagree():
    # model "a" answers only the easy half of the items: its raw share is the highest, its
    # log-odds (adjusted for item difficulty by the shared item effects) is not
    rng = np.random.default_rng(7)
    items = np.arange(400)
    ease = np.where(items < 200, 1.5, -1.5) + rng.normal(0, 0.3, items.size)
    rows = []
    for m, b in (("a", 0.0), ("b", 0.6), ("c", 0.3)):
        seen = items[items < 200] if m == "a" else items
        k = rng.binomial(10, expit(b + ease[seen]))
        rows += [(m, f"q{i}", int(v), 10) for i, v in zip(seen, k)]
    d = pd.DataFrame(rows, columns=["model", "question", "k", "n"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        r = mixrank.fit("cbind(k, n - k) ~ model + (1|question)", d, family="binomial", nagq=0)
    sc = r.model_scores().set_index("model")
    assert sc.observed.idxmax() == "a" and sc.estimate.idxmax() == "b"
    assert sc.loc["a", "n"] == 200 and sc.loc["b", "n"] == 400 and sc.loc["b", "trials"] == 4000
    ranks = r.rank_intervals().set_index("model")
    assert ranks.loc["b", "rank"] == 1 and ranks.loc["a", "rank"] == 3


def test_contrasts_name_cells_and_trials(res):
    con = res.contrasts()
    assert (con.n == 960).all() and (con.trials == 2 * 960).all()
    cols = list(con.columns)
    assert cols.index("trials") == cols.index("n") + 1
