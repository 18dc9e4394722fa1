"""``model * x`` with family="binomial" against lme4's glmer (tests/reference/glmer_by.R ->
glmer_by.json; designs by make_glmm_by_cases.py): fixed effects in glmer's treatment coding,
per-level log-odds contrasts and SEs, per-level average marginal effects against a
delta-method computation in R, and the per-pair Wald chi-square of the interaction, at
nAGQ = 1 and 0, within the GLMM tolerances of tests/reference/tolerances.py (``GLMER``)."""

from __future__ import annotations

import json
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixrank
from tests.reference.tolerances import GLMER

REF = Path(__file__).resolve().parents[1] / "reference"
CASES = json.loads((REF / "glmm_by_cases" / "cases.json").read_text())
GLMER_BY = json.loads((REF / "glmer_by.json").read_text())
PARAMS = [(c, q) for c in CASES for q in (1, 0)]


@cache
def fit(name: str, nagq: int):
    df = pd.read_csv(REF / "glmm_by_cases" / f"{name}.csv.gz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit(CASES[name]["formula"], df, family="binomial", nagq=nagq)


def test_provenance():
    assert "lme4" in GLMER_BY["versions"]
    assert set(CASES) <= set(GLMER_BY)


@pytest.mark.parametrize("name, nagq", PARAMS)
def test_fixed_effects_in_glmer_coding(name, nagq):
    ref = GLMER_BY[name][f"nagq{nagq}"]
    fe = fit(name, nagq).fixed_effects()
    assert fe["term"].tolist() == list(ref["fixef"])
    np.testing.assert_allclose(fe["estimate"], list(ref["fixef"].values()), rtol=0,
                               atol=GLMER["fixef_abs"])
    se = np.sqrt(np.diag(np.array(ref["vcov"])))
    assert np.max(np.abs(fe["std_error"].to_numpy() / se - 1)) <= GLMER["std_error_rel"]
    assert fit(name, nagq).fit.deviance <= ref["deviance"] + GLMER["deviance_excess"]


@pytest.mark.parametrize("name, nagq", PARAMS)
@pytest.mark.parametrize("scale, est, se", [("logit", "logit", "logit_se"),
                                            ("response", "ame", "ame_se")])
def test_per_level_contrasts(name, nagq, scale, est, se):
    ref = pd.DataFrame(GLMER_BY[name][f"nagq{nagq}"]["contrasts"])
    by = CASES[name]["by"]
    got = fit(name, nagq).contrasts(by=by, scale=scale)
    assert got.attrs["mixrank"]["by"] == by and got.attrs["mixrank"]["scale"] == scale
    m = got.merge(ref, left_on=["model_a", "model_b", by],
                  right_on=["model_a", "model_b", "level"], validate="one_to_one")
    assert len(m) == len(ref) == len(got)
    # the log-odds contrast inherits the fixed effects' tolerance; the AME is a smooth
    # function of them with slope <= 1/4, so the same absolute tolerance bounds it
    np.testing.assert_allclose(m["estimate"], m[est], rtol=0, atol=2 * GLMER["fixef_abs"])
    assert np.max(np.abs(m["std_error"] / m[se] - 1)) <= GLMER["std_error_rel"]


@pytest.mark.parametrize("name, nagq", PARAMS)
def test_interaction_wald_test(name, nagq):
    ref = pd.DataFrame(GLMER_BY[name][f"nagq{nagq}"]["wald"])
    got = fit(name, nagq).anova()
    pairs = got[got.model_a != "(all)"].merge(ref, on=["model_a", "model_b"])
    assert len(pairs) == len(ref)
    assert (pairs["df_x"] == pairs["df_y"]).all()
    # chi-square = d' (L V L')^-1 d: relative error about twice the SE tolerance
    np.testing.assert_allclose(pairs["statistic"], pairs["chisq"], rtol=3 * GLMER["std_error_rel"],
                               atol=1e-4)
    joint = got[got.model_a == "(all)"].iloc[0]
    M, L = len(GLMER_BY[name]["models"]), len(GLMER_BY[name]["levels"])
    assert joint["df"] == (M - 1) * (L - 1)
