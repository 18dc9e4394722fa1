"""mixrank's CR2 sandwiches and Bell-McCaffrey df vs R's clubSandwich (docs/methods.md §9,
"CR2 and clubSandwich").

The stored reference (``tests/reference/clubsandwich.R`` -> ``clubsandwich.json``, three
unbalanced designs per kind, inputs in ``clubsandwich_cases.json`` from
``tests/reference/make_clubsandwich_cases.py``) is checked on every run; a live check
(marker ``r``) runs the same R script on fresh seeds.  Skipped when R or clubSandwich is
missing, unless ``MIXRANK_REQUIRE_R=1``.

What each sandwich equals (SE to 1e-8 and df to 1e-6, relative):

* ``fit(..., df="cr2")``, estimand ``gls``: clubSandwich's ``target =`` the fitted working
  covariance (which there equals its ``inverse_var`` mode): SE and df.
* estimands ``cells`` / ``units``: the SE of ``vcovCR(lm(d ~ 1, weights = w), type = "CR2",
  inverse_var = TRUE)`` (for ``cells`` clubSandwich's default, the identity); the df are
  clubSandwich's Satterthwaite df of that estimator under the fitted working covariance
  ("mix"), capped at units - 1.  Both pure modes' numbers are stored beside it.
* the arena's CR2: the CR2 of the whitened GLM working regression, equal to its dense
  definition computed in R; clubSandwich's ``vcovCR(glm)`` takes another square root
  (measured: SE within 2e-3, df within 1e-4, relative).
* the judge correction at one unit: clubSandwich's ``target =`` each part's variance.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.reference.live_r import require_rscript, run_live
from tests.reference.make_clubsandwich_cases import SEED, cases

REF = Path(__file__).resolve().parents[1] / "reference"
SCRIPT = REF / "clubsandwich.R"
SE_REL, DF_REL = 1e-8, 1e-6
#: clubSandwich's vcovCR(glm) against the arena's whitened CR2 (another square root).
GLM_SE_REL, GLM_DF_REL = 2e-3, 1e-4


def _close(a: float, b: float, rel: float) -> bool:
    return abs(a - b) <= rel * abs(b)


def _check(ours: list[dict], ref: list[dict]) -> None:
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        assert o["kind"] == r["kind"] and o["design"] == r["design"]
        m = o["mixrank"]
        if o["kind"] == "lm":
            what = (o["design"], o["estimand"], o["pair"])
            assert r["pair"] == o["pair"] and r["estimand"] == o["estimand"]
            T = int(max(o["cluster"])) + 1
            assert _close(m["se"], r["weights"]["se"], SE_REL), (what, m, r["weights"])
            assert _close(m["se"], r["mix"]["se"], SE_REL), (what, m, r["mix"])
            assert _close(m["df"], min(r["mix"]["df"], T - 1), DF_REL), (what, m, r["mix"])
            if o["estimand"] == "gls":     # the GLS weights: clubSandwich's target mode itself
                assert _close(m["se"], r["target"]["se"], SE_REL), (what, m, r["target"])
                assert _close(m["df"], min(r["target"]["df"], T - 1), DF_REL), (what, r)
            if o["estimand"] == "cells":   # the weights' own model is clubSandwich's default
                assert _close(m["se"], r["identity"]["se"], SE_REL), (what, m, r["identity"])
            # the df sit nearer clubSandwich's fitted-covariance df than the weights' model's
            assert abs(r["mix"]["df"] - r["target"]["df"]) <= \
                abs(r["mix"]["df"] - r["weights"]["df"]) + 1e-9, (what, r)
        elif o["kind"] == "glm":
            assert r["pairs"] == o["pairs"]
            for k, pair in enumerate(o["pairs"]):
                what = (o["design"], pair)
                assert _close(m["se"][k], r["whitened"]["se"][k], SE_REL), what
                assert _close(m["df"][k], r["whitened"]["df"][k], DF_REL), what
                assert _close(m["se"][k], r["target"]["se"][k], GLM_SE_REL), what
                assert _close(m["df"][k], r["target"]["df"][k], GLM_DF_REL), what
        else:
            what = o["design"]
            assert r["target"]["df"] < o["units"] - 1, what       # the cap does not bind
            assert _close(m["se"], r["target"]["se"], SE_REL), (what, m, r["target"])
            assert _close(m["df"], r["target"]["df"], DF_REL), (what, m, r["target"])
            assert _close(m["se"], r["identity"]["se"], SE_REL), (what, m, r["identity"])


@pytest.fixture(scope="module")
def stored_cases() -> list[dict]:
    return cases(SEED)


def test_inputs_are_the_stored_ones(stored_cases):
    """The designs regenerate the inputs clubsandwich.R was run on (data exactly; the
    fitted working model to 1e-9)."""
    stored = json.loads((REF / "clubsandwich_cases.json").read_text())
    assert stored["seed"] == SEED
    assert len(stored["cases"]) == len(stored_cases)
    for s, o in zip(stored["cases"], stored_cases):
        assert s["kind"] == o["kind"] and s["design"] == o["design"]
        for key in ("d", "cluster", "a", "b", "y", "labelled"):
            if key in s:
                assert s[key] == o[key], (s["design"], key)
        for key in ("w", "z"):
            if key in s:
                np.testing.assert_allclose(o[key], s[key], rtol=1e-9, atol=1e-12)
        for key in ("ratio", "var_labelled", "var_unlabelled"):
            if key in s:
                assert _close(o[key], s[key], 1e-9), (s["design"], key)


def test_cr2_matches_stored_clubsandwich(stored_cases):
    ref = json.loads((REF / "clubsandwich.json").read_text())
    _check(stored_cases, ref["cases"])


@pytest.mark.r
def test_cr2_matches_live_clubsandwich(tmp_path):
    rscript = require_rscript("clubSandwich", "jsonlite", debian="r-cran-clubsandwich")
    ours = cases(SEED + 1000)
    _check(ours, run_live(rscript, SCRIPT, dict(seed=SEED + 1000, cases=ours), tmp_path)["cases"])
