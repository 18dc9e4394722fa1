"""Model scores vs a live R lme4 + lmerTest fit on fresh simulations.

Runs ``Rscript tests/reference/model_scores.R --live`` (the script that wrote
the stored reference) on seeded simulated designs and compares every model's
``y ~ 1 + (random terms)`` fit under the ``LME4`` tolerances.  Skipped when R
or its packages are missing, unless ``MIXRANK_REQUIRE_R=1``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import mixrank
from mixrank.engine.crosscheck.lme4_engine import check_lme4
from mixrank.results.scores import model_fits
from tests.reference.tolerances import LME4, discrepancies

SCRIPT = Path(__file__).resolve().parents[1] / "reference" / "model_scores.R"
DESIGNS = {
    "unbalanced_binary": ("correct ~ model + (1|subject) + (1|prompt)", dict(
        models=3, subjects=9, questions=[4, 9, 6, 12, 5, 8, 10, 7, 6], prompts=3,
        family="binomial", sd_model_subject=0.7, sd_model_question=1.0, sd_model_prompt=0.5,
        missing=0.15)),
    "crossed_gaussian": ("correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)",
                         dict(models=3, subjects=7, questions=6, prompts=4, family="gaussian",
                              sd_model_subject=0.5, sd_model_question=0.6, sd_model_prompt=0.3,
                              sd_residual=1.0, missing=0.1)),
}
SEED = 20261130


def _require_r() -> str:
    try:
        check_lme4()
    except mixrank.MissingDependencyError as exc:
        if os.environ.get("MIXRANK_REQUIRE_R") == "1":
            pytest.fail(f"{exc} (MIXRANK_REQUIRE_R=1)")
        pytest.skip(str(exc))
    return os.environ.get("MIXRANK_RSCRIPT") or shutil.which("Rscript") or "Rscript"


@pytest.mark.r
@pytest.mark.parametrize("name", list(DESIGNS))
def test_model_scores_match_live_lme4(name, tmp_path):
    rscript = _require_r()
    formula, kw = DESIGNS[name]
    df = mixrank.simulate(**kw, rng=np.random.default_rng(SEED + list(DESIGNS).index(name)))
    keys = ["subject", "question", "prompt"]
    df.to_csv(tmp_path / "d.csv", index=False)
    subprocess.run([rscript, "--vanilla", str(SCRIPT), "--live", str(tmp_path / "d.csv"),
                    formula, ",".join(keys), str(tmp_path / "out.json")], check=True,
                   capture_output=True, timeout=300)
    ref = json.loads((tmp_path / "out.json").read_text())["case"]["models"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        fit = mixrank.fit(formula, df, pair_by=keys)
    fits = {m.model: m for m in model_fits(fit, "gls")}
    assert sorted(fits) == sorted(r["model"] for r in ref)
    for r in ref:
        mf = fits[r["model"]]
        assert mf.n == r["n"], r["model"]
        d = discrepancies(mf, r)
        for key in ("criterion_excess", "component_of_total", "estimate_rel", "std_error_rel"):
            assert d[key] <= LME4[key], (name, r["model"], key, d)
        if not r["isSingular"]:
            assert d["df_rel"] <= LME4["df_rel"], (name, r["model"], d)
