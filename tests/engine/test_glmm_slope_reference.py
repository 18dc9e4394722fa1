"""``model * x`` with a NUMERIC covariate and family="binomial" against lme4's glmer
(tests/reference/glmer_slope.R -> glmer_slope.json; designs by make_glmm_slope_cases.py):
fixed effects in glmer's treatment coding, the log-odds contrasts and the average marginal
effects (delta method in R) at the mean and the quartiles of x, and the per-pair Wald
chi-square of the slope difference, at nAGQ = 1 and 0, within the GLMM tolerances of
tests/reference/tolerances.py (``GLMER``)."""

from __future__ import annotations

import json
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.results.glmm.slope import GlmmSlopeResult
from tests.reference.tolerances import GLMER

REF = Path(__file__).resolve().parents[1] / "reference"
CASES = json.loads((REF / "glmm_slope_cases" / "cases.json").read_text())
GLMER_SLOPE = json.loads((REF / "glmer_slope.json").read_text())
PARAMS = [(c, q) for c in CASES for q in (1, 0)]


def data(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "glmm_slope_cases" / f"{name}.csv.gz")


@cache
def fit(name: str, nagq: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit(CASES[name]["formula"], data(name), family="binomial", nagq=nagq)


def test_provenance():
    assert "lme4" in GLMER_SLOPE["versions"]
    assert set(CASES) <= set(GLMER_SLOPE)


@pytest.mark.parametrize("name, nagq", PARAMS)
def test_fixed_effects_in_glmer_coding(name, nagq):
    ref = GLMER_SLOPE[name][f"nagq{nagq}"]
    res = fit(name, nagq)
    assert isinstance(res, GlmmSlopeResult)
    fe = res.fixed_effects()
    assert fe["term"].tolist() == list(ref["fixef"])
    np.testing.assert_allclose(fe["estimate"], list(ref["fixef"].values()), rtol=0,
                               atol=GLMER["fixef_abs"])
    se = np.sqrt(np.diag(np.array(ref["vcov"])))
    assert np.max(np.abs(fe["std_error"].to_numpy() / se - 1)) <= GLMER["std_error_rel"]
    # lme4 orders the terms by their number of levels, as the engine does internally
    var = np.sort(res.variance_components()["variance"].to_numpy())
    rvar = np.sort(np.atleast_1d(ref["theta"]) ** 2)
    assert np.all(np.abs(var - rvar) <= GLMER["variance_rel"] * rvar)
    # -2 loglik no worse than glmer's (the binomial coefficients are in both)
    assert -2 * res.fit.loglik <= -2 * ref["loglik"] + GLMER["deviance_excess"]


@pytest.mark.parametrize("name, nagq", PARAMS)
@pytest.mark.parametrize("scale, est, se", [("logit", "logit", "logit_se"),
                                            ("response", "ame", "ame_se")])
def test_contrasts_at_mean_and_quartiles(name, nagq, scale, est, se):
    ref = pd.DataFrame(GLMER_SLOPE[name][f"nagq{nagq}"]["contrasts"])
    res, by = fit(name, nagq), CASES[name]["by"]
    at = GLMER_SLOPE[name][f"nagq{nagq}"]["at"]
    mean = res.contrasts(scale=scale, adjust="none")            # default: at the mean of x
    quart = res.contrasts(scale=scale, by=by, adjust="none")    # default with by: quartiles
    assert mean.attrs["mixrank"]["at"] == pytest.approx(at[:1], abs=1e-12)
    assert quart.attrs["mixrank"]["at"] == pytest.approx(at[1:], abs=1e-12)
    got = pd.concat([mean, quart], ignore_index=True)
    assert len(got) == len(ref)
    np.testing.assert_allclose(got[by], ref["x"], rtol=0, atol=1e-12)
    assert (got["model_a"] == ref["model_a"]).all() and (got["model_b"] == ref["model_b"]).all()
    # a contrast at x0 sums two fixed effects with weights 1 and x0
    tol = GLMER["fixef_abs"] * (1 + np.abs(ref["x"].to_numpy()))
    assert np.all(np.abs(got["estimate"].to_numpy() - ref[est].to_numpy()) <= tol)
    assert np.max(np.abs(got["std_error"].to_numpy() / ref[se].to_numpy() - 1)) \
        <= GLMER["std_error_rel"]
    # at= explicitly gives the same rows
    again = res.contrasts(scale=scale, at=at[1:], adjust="none")
    np.testing.assert_allclose(again["estimate"], quart["estimate"], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name, nagq", PARAMS)
def test_anova_slope_difference(name, nagq):
    ref = pd.DataFrame(GLMER_SLOPE[name][f"nagq{nagq}"]["wald"])
    av = fit(name, nagq).anova()
    pairs = av[av.model_a != "(all)"].reset_index(drop=True)
    assert (pairs["df"] == 1).all() and (pairs["model_a"] == ref["model_a"]).all()
    # z = est / se: |dz| <= d est / se + |z| d se / se, from the GLMER tolerances
    z, zr = np.sqrt(pairs["statistic"].to_numpy()), np.sqrt(ref["chisq"].to_numpy())
    bound = 2 * GLMER["fixef_abs"] / pairs["std_error"].to_numpy() + 2 * GLMER["std_error_rel"] * zr
    assert np.all(np.abs(z - zr) <= bound)
    joint = av[av.model_a == "(all)"].iloc[0]
    assert joint["df"] == len(fit(name, nagq).models) - 1


def test_model_scores_response_interval_contains_estimate():
    res = fit("counts", 1)
    ms = res.model_scores(scale="response", at=[-1.0, 1.0])
    assert len(ms) == 2 * len(res.models)
    assert (ms["ci_lower"] < ms["estimate"]).all() and (ms["estimate"] < ms["ci_upper"]).all()
    # the probability decreases in difficulty for every model (all slopes < 0 in the data)
    piv = ms.pivot(index="model", columns="difficulty", values="estimate")
    assert (piv[-1.0] > piv[1.0]).all()


def test_refusals():
    res = fit("binary", 0)
    with pytest.raises(mixrank.DesignError, match="use by='length'"):
        res.contrasts(by="model")
    with pytest.raises(mixrank.DesignError, match="at='a'"):
        res.contrasts(at="a")
    with pytest.raises(mixrank.DesignError, match="finite"):
        res.model_scores(at=[np.nan])
    with pytest.raises(mixrank.DesignError, match="pass_at_k"):
        res.pass_at_k(2)
    df = data("binary").assign(length=3)
    with pytest.raises(mixrank.DataError, match="'length' takes a single value"):
        mixrank.fit(CASES["binary"]["formula"], df, family="binomial")


def test_rank_intervals_and_report(tmp_path):
    """Ranks at each value of x from the scores and tests at that value; the HTML report's
    "Where the gaps live" section renders for a slope fit."""
    res = fit("counts", 0)
    ri = res.rank_intervals(by="difficulty", scale="response")
    at = res.contrasts(by="difficulty").attrs["mixrank"]["at"]
    assert sorted(set(ri["difficulty"])) == sorted(at)
    for x0, part in ri.groupby("difficulty"):
        ms = res.model_scores(scale="response", at=[x0]).set_index("model")["estimate"]
        best = part.loc[part["rank"] == 1, "model"].item()
        assert best == ms.idxmax()
        assert ((part.rank_lower <= part["rank"]) & (part["rank"] <= part.rank_upper)).all()
    assert len(res.rank_intervals()) == len(res.models)        # at the mean
    from mixrank.report.html import write_report

    out = tmp_path / "r.html"
    write_report(res, out)
    text = out.read_text()
    assert "Where the gaps live" in text and "difficulty" in text


def test_fixed_effects_name_the_comparison_column():
    df = data("binary").rename(columns={"model": "system"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        res = mixrank.fit("correct ~ system * length + (1|question)", df, family="binomial",
                          nagq=0)
    ref = GLMER_SLOPE["binary"]["nagq0"]["fixef"]
    assert res.fixed_effects()["term"].tolist() == [t.replace("model", "system") for t in ref]


@pytest.mark.parametrize("name", list(CASES))
def test_planned_and_general_assembly_agree(name):
    """The slope columns in both assemblies of the PIRLS system (docs/glmm.md §3, §11)."""
    from mixrank.engine.glmm.problem import build_problem
    from mixrank.engine.glmm.system import assemble
    from mixrank.formula.glmm_terms import parse_glmm
    from mixrank.frame.glmm import binomial_frame
    from mixrank.routes.binomial import covariate_levels

    gf = parse_glmm(CASES[name]["formula"])
    df = data(name)
    frame = binomial_frame(gf, df)[0]
    x = covariate_levels(frame, gf, df)[0]
    prob = build_problem(frame, gf)
    prob.slope = x[prob.cell]
    assert prob.plan() is not None
    rng = np.random.default_rng(5)
    w = rng.uniform(0.1, 2.5, prob.n_obs)
    theta = rng.uniform(0.3, 1.5, len(prob.levels))
    planned = assemble(prob, theta, w)
    prob._cache["plan"] = None
    general = assemble(prob, theta, w)
    for a, b in ((planned.L, general.L), (planned.Bs, general.Bs), (planned.a0, general.a0)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
