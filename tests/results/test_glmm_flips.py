"""The binomial GLMM's unit sign-flip max-t and step-down (mixrank.results.glmm.flips,
mixrank.engine.glmm.scores; docs/glmm.md §12).

References (independent of the package's code paths):

* the per-unit score and information: an own Newton profile of each unit's penalised
  log-likelihood ``l_t(beta) = max_b sum_m [k eta - n log(1 + e^eta)] - |b|^2 / 2`` with
  ``eta_m = beta_m + theta_1 b_0 + theta_2 b_m``, differentiated numerically (central
  differences): ``U_t = grad l_t`` and ``I_t = -hess l_t`` (the logit is canonical);
* the flip distribution: a plain loop over every sign vector of the units, the CR2-type t of
  each pair recomputed from the flipped contributions, max-t and step-down p counted
  directly (as tests/inference/test_randomization.py for the linear fits).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.engine.glmm.scores import unit_scores
from mixrank.results import FitResult, GlmmByResult, GlmmResult, GlmmSlopeResult
from mixrank.results.glmm.flips import GlmmFlips

FORM = "correct ~ model + (1|subject) + (1|subject:model)"


def _data(T=5, M=4, seed=7, gap=0.8):
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(T):
        a = rng.normal(0, 0.7)
        for m in range(M):
            eta = a + rng.normal(0, 0.5) + gap * (m == 0)
            for q in range(int(rng.integers(8, 20))):
                rows.append(dict(model=f"m{m}", subject=f"s{t}", question=f"s{t}q{q}",
                                 correct=float(rng.random() < 1 / (1 + np.exp(-eta)))))
    # every question asked of every model: keep the questions all models answered
    d = pd.DataFrame(rows)
    keep = d.groupby("question")["model"].transform("nunique") == M
    return d[keep].reset_index(drop=True)


def _fit(d, formula=FORM, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(formula, d, family="binomial", **kw)


@pytest.fixture(scope="module")
def fit():
    return _fit(_data())


def _profile(k, n, beta, th):
    """Max over b of the unit's penalised log-likelihood (own Newton; b = (b_0, b_1..b_M))."""
    M = len(beta)
    Z = np.hstack([np.full((M, 1), th[0]), th[1] * np.eye(M)])
    b = np.zeros(M + 1)
    for _ in range(100):
        eta = beta + Z @ b
        mu = 1 / (1 + np.exp(-eta))
        g = Z.T @ (k - n * mu) - b
        H = Z.T @ (Z * (n * mu * (1 - mu))[:, None]) + np.eye(M + 1)
        step = np.linalg.solve(H, g)
        b = b + step
        if np.max(np.abs(step)) < 1e-13:
            break
    eta = beta + Z @ b
    return float(k @ eta - n @ np.logaddexp(0, eta) - b @ b / 2)


def test_unit_scores_equal_the_numerical_derivatives_of_each_units_profile(fit):
    d = _data()
    us = unit_scores(fit.frame, fit.formula, fit.fit)
    th = fit.fit.theta[[list(fit.fit.terms).index("subject"),
                        list(fit.fit.terms).index("subject:model")]]
    beta = fit.fit.beta
    models = list(fit.models)
    h = 1e-4
    for t, s in enumerate(sorted(d["subject"].unique())):
        sub = d[d["subject"] == s]
        k = np.array([sub.loc[sub.model == m, "correct"].sum() for m in models])
        n = np.array([float((sub.model == m).sum()) for m in models])

        def f(b, k=k, n=n):
            return _profile(k, n, b, th)

        E = np.eye(len(beta))
        grad = np.array([(f(beta + h * e) - f(beta - h * e)) / (2 * h) for e in E])
        hh = 1e-3
        hess = np.array([[(f(beta + hh * (ei + ej)) - f(beta + hh * (ei - ej))
                           - f(beta - hh * (ei - ej)) + f(beta - hh * (ei + ej))) / (4 * hh * hh)
                          for ej in E] for ei in E])
        np.testing.assert_allclose(us.score[t], grad, atol=1e-6)
        np.testing.assert_allclose(us.info[t], -hess, atol=2e-4)
    assert us.unit == "subject" and us.n_units == 5


def test_contributions_sum_to_the_estimate_and_weights_to_one(fit):
    for scale in ("logit", "response"):
        uc = GlmmFlips(fit, scale).unit_contributions()
        est = fit.contrasts(scale=scale, adjust="none")["estimate"].to_numpy()
        np.testing.assert_allclose(uc.D.sum(axis=0), est, atol=1e-12)
        np.testing.assert_allclose(uc.W.sum(axis=0), 1.0, atol=1e-12)
        assert (uc.W > 0).all() and uc.live.all()


def _brute(uc):
    """Every sign vector (both global signs): the CR2-type t of each pair, flips x pairs."""
    D, W = uc.D, uc.W
    rows = []
    for eps in itertools.product([1.0, -1.0], repeat=D.shape[0]):
        e = np.array(eps)[:, None]
        est = (e * D).sum(axis=0)
        r = e * D - W * est
        rows.append(est / np.sqrt((r * r / (1 - W)).sum(axis=0)))
    return np.array(rows)


@pytest.mark.parametrize("scale", ["logit", "response"])
def test_maxt_and_stepdown_equal_a_plain_loop_over_the_sign_vectors(fit, scale):
    S = np.abs(_brute(GlmmFlips(fit, scale).unit_contributions()))
    obs = S[0]
    single = np.array([np.mean(S.max(axis=1) >= o - 1e-9) for o in obs])
    order = np.argsort(-obs)
    sd = np.empty_like(obs)
    run = 0.0
    for i, j in enumerate(order):
        run = max(run, np.mean(S[:, order[i:]].max(axis=1) >= obs[j] - 1e-9))
        sd[j] = run
    raw = np.array([np.mean(S[:, j] >= obs[j] - 1e-9) for j in range(len(obs))])
    mt = fit.contrasts(adjust="maxt", scale=scale)
    st = fit.contrasts(adjust="stepdown", scale=scale)
    np.testing.assert_allclose(mt["p_adjusted"], single, atol=1e-12)
    np.testing.assert_allclose(st["p_adjusted"], sd, atol=1e-12)
    # adjusted p-values: at least the per-pair flip p, step-down at most single-step,
    # and monotone in |t|
    assert (st["p_adjusted"].to_numpy() >= raw - 1e-12).all()
    assert (st["p_adjusted"].to_numpy() <= mt["p_adjusted"].to_numpy() + 1e-12).all()
    srt = st["p_adjusted"].to_numpy()[order]
    assert (np.diff(srt) >= -1e-12).all()
    meta = mt.attrs["mixrank"]
    assert meta["exact"] and meta["flips"] == 2 ** 4 and meta["flip_unit"] == "subject"
    assert meta["unit"] == fit.unit_of_inference
    crit = np.quantile(S.max(axis=1), 0.95, method="higher")
    uc = GlmmFlips(fit, scale).unit_contributions()
    half = (mt["ci_upper"] - mt["ci_lower"]).to_numpy() / 2
    np.testing.assert_allclose(half, crit * uc.std_error, rtol=1e-9)
    if scale == "logit":
        np.testing.assert_allclose(mt["odds_ratio_lower"], np.exp(mt["ci_lower"]), rtol=1e-12)


@pytest.fixture(scope="module")
def six():
    return _fit(_data(T=6, seed=11))


def test_the_default_is_the_step_down_where_the_flips_apply(fit, six):
    c = six.contrasts()
    assert c.attrs["mixrank"]["adjust"] == "stepdown"
    assert c.attrs["mixrank"]["p_adjusted"].startswith("randomization step-down")
    # 6 units: the marginal rank families (each side at 0.025) cannot reach 2/32 -- Holm
    assert six.rank_intervals().attrs["mixrank"]["method"] == "holm"
    seven = _fit(_data(T=7, seed=12))
    assert seven.rank_intervals().attrs["mixrank"]["method"] == "maxt"
    assert seven.rank_intervals().attrs["mixrank"]["reference"].startswith("randomization")
    # 5 units: the smallest flip p, 1/16, cannot reach 0.05 -- Holm; at level 0.9 it can
    assert fit.contrasts().attrs["mixrank"]["adjust"] == "holm"
    assert _fit(_data(), level=0.9).contrasts().attrs["mixrank"]["adjust"] == "stepdown"
    d = _data()
    # no model-by-unit term: the unit of inference is the cell, Holm stays the default
    assert _fit(d, "correct ~ model + (1|subject)").contrasts().attrs["mixrank"]["adjust"] \
        == "holm"
    # more units than are enumerated: Holm by default, the flips on request (seeded draws)
    big = _fit(_data(T=16, seed=2))
    assert big.contrasts().attrs["mixrank"]["adjust"] == "holm"
    a = big.contrasts(adjust="stepdown", draws=2000, rng=4)
    b = big.contrasts(adjust="stepdown", draws=2000, rng=4)
    assert not a.attrs["mixrank"]["exact"]
    np.testing.assert_array_equal(a["p_adjusted"], b["p_adjusted"])


def test_crossed_terms_are_refused_with_the_reason():
    d = _data()
    d["prompt"] = np.where(d.index % 2 == 0, "p0", "p1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("correct ~ model + (1|subject:model) + (1|question) + (1|prompt)", d,
                          family="binomial", pair_by=["subject", "question", "prompt"])
    assert res.contrasts().attrs["mixrank"]["adjust"] == "holm"
    with pytest.raises(mixrank.DesignError, match=r"\(1\|prompt\) is not nested"):
        res.contrasts(adjust="stepdown")
    # the rank intervals' max-t keeps its Gaussian-copula path there
    r = res.rank_intervals(adjust="maxt", draws=500, rng=1)
    assert "randomization" not in str(r.attrs["mixrank"].get("reference", ""))


def test_the_unit_is_the_coarsest_grouping_that_nests_every_term():
    res = _fit(_data(), "correct ~ model + (1|subject) + (1|question:model)")
    us = unit_scores(res.frame, res.formula, res.fit)
    assert us.unit == "subject" and us.n_units == 5
    # the units' information adds up to the fit's (nAGQ = 0 form) for this nesting too
    assert np.all(np.isfinite(us.info)) and np.allclose(us.info, us.info.transpose(0, 2, 1))
    assert res.contrasts(adjust="maxt").attrs["mixrank"]["flip_unit"] == "subject"


def test_row_order_does_not_change_the_adjusted_p_values():
    d = _data()
    a = _fit(d, nagq=0).contrasts()
    b = _fit(d.sample(frac=1.0, random_state=3).reset_index(drop=True), nagq=0).contrasts()
    key = ["model_a", "model_b"]
    a, b = a.sort_values(key).reset_index(drop=True), b.sort_values(key).reset_index(drop=True)
    np.testing.assert_array_equal(a["p_adjusted"], b["p_adjusted"])


def test_every_adjust_one_family_takes_the_other_takes_or_says_why():
    kinds = (FitResult, GlmmResult, GlmmByResult, GlmmSlopeResult)
    values = set().union(*(k.supported_options("contrasts")["adjust"] for k in kinds))
    for k in kinds:
        taken = k.supported_options("contrasts")["adjust"]
        for v in sorted(values - set(taken)):
            why = k.REFUSED.get(("contrasts", "adjust", v), "")
            assert len(why) > 20, (k.__name__, v)
    assert {"maxt", "stepdown"} <= set(GlmmResult.supported_options("contrasts")["adjust"])
    with pytest.raises(mixrank.OptionError, match="unit sign flips"):
        GlmmByResult.check_option("contrasts", "adjust", "maxt")


def test_the_defaults_page_states_the_glmm_default(six):
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "defaults.md"
    row = next(line for line in page.read_text(encoding="utf-8").splitlines()
               if line.startswith("| the adjustment of a binomial GLMM"))
    assert f'adjust="{six.contrasts().attrs["mixrank"]["adjust"]}"' in row
    assert "**Holm** (`adjust=\"holm\"`) elsewhere" in row


def test_the_report_names_the_adjustment_and_what_few_units_cost(six):
    from mixrank.report.html_glmm import contrasts_logit

    text = contrasts_logit(six, {"level": None})
    assert "p_adjusted: randomization step-down max-t (Westfall-Young)" in text
    assert "6 levels of &#x27;subject&#x27;" in text or "6 levels of 'subject'" in text
    assert "smallest family-wise p possible is 0.031" in text
