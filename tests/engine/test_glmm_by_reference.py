"""``model * x`` with family="binomial" against lme4's glmer (tests/reference/glmer_by.R ->
glmer_by.json; designs by make_glmm_by_cases.py): fixed effects in glmer's treatment coding,
per-level log-odds contrasts and SEs, per-level average marginal effects against a
delta-method computation in R, and the per-pair Wald chi-square of the interaction, at
nAGQ = 1 and 0, within the GLMM tolerances of tests/reference/tolerances.py (``GLMER``).
A live check (marker ``r``) runs the same R script on two other seeded designs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
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


def _live_design(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(15):
        x = ("lo", "mid", "hi")[s % 3]
        bsm = rng.normal(0, 0.3, 3)
        for q in range(6):
            bq = rng.normal(0, 1.0)
            for m, b in enumerate({"lo": (0.0, 0.4, -0.2), "mid": (0.3, 0.0, 0.1),
                                   "hi": (-0.5, 0.2, 0.6)}[x]):
                if rng.random() < 0.15:
                    continue
                p = 1 / (1 + np.exp(-(b + bsm[m] + bq)))
                rows.append((f"m{m}", f"s{s:02d}", f"q{q}", x, int(rng.binomial(8, p)), 8))
    return pd.DataFrame(rows, columns=["model", "subject", "question", "x", "k", "n"])


@pytest.mark.r
@pytest.mark.parametrize("seed", [101, 202])
def test_live_against_glmer(tmp_path, seed):
    ok = shutil.which("Rscript") is not None and subprocess.run(
        ["Rscript", "-e", "library(lme4); library(jsonlite)"], capture_output=True).returncode == 0
    if not ok:
        if os.environ.get("MIXRANK_REQUIRE_R") == "1":
            pytest.fail("R with lme4 and jsonlite is needed (MIXRANK_REQUIRE_R=1)")
        pytest.skip("R with lme4 and jsonlite not available")
    df = _live_design(seed)
    formula = "cbind(k, n - k) ~ model * x + (1|subject:question) + (1|subject:model)"
    df.to_csv(tmp_path / "live.csv.gz", index=False)
    (tmp_path / "cases.json").write_text(json.dumps(
        {"live": dict(formula=formula, by="x", items=["subject", "question"])}))
    out = tmp_path / "out.json"
    subprocess.run(["Rscript", str(REF / "glmer_by.R"), str(tmp_path), str(out)], check=True,
                   capture_output=True, timeout=600)
    ref = json.loads(out.read_text())["live"]
    for nagq in (1, 0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.MixrankWarning)
            res = mixrank.fit(formula, df, family="binomial", nagq=nagq)
        r = ref[f"nagq{nagq}"]
        assert res.fit.deviance <= r["deviance"] + GLMER["deviance_excess"]
        rc = pd.DataFrame(r["contrasts"])
        for scale, est, se in (("logit", "logit", "logit_se"), ("response", "ame", "ame_se")):
            m = res.contrasts(by="x", scale=scale).merge(
                rc, left_on=["model_a", "model_b", "x"], right_on=["model_a", "model_b", "level"])
            assert len(m) == len(rc)
            np.testing.assert_allclose(m["estimate"], m[est], rtol=0, atol=2 * GLMER["fixef_abs"])
            assert np.max(np.abs(m["std_error"] / m[se] - 1)) <= GLMER["std_error_rel"]
