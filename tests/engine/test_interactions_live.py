"""Model x covariate engine vs a live lme4 + lmerTest run on fresh simulations (marker ``r``).

Runs ``tests/reference/interactions.R`` on freshly simulated designs (the
generators of ``make_interaction_cases.py`` with new seeds) written to a
temporary folder, and compares under the stored reference suite's checks and
tolerances.  Skipped without R (lme4, lmerTest, jsonlite) unless
``MIXRANK_REQUIRE_R=1``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import warnings
from itertools import combinations
from pathlib import Path

import pytest

import mixrank
from tests.engine.test_interactions_reference import (
    check_anova,
    check_contrasts,
    check_fit,
    check_model_scores,
)
from tests.reference.make_interaction_cases import CASES, simulate

SCRIPT = Path(__file__).resolve().parents[1] / "reference" / "interactions.R"


def _require_r() -> None:
    ok = shutil.which("Rscript") is not None and subprocess.run(
        ["Rscript", "-e", "suppressMessages({library(lme4); library(lmerTest); library(jsonlite)})"],
        capture_output=True).returncode == 0
    if not ok:
        if os.environ.get("MIXRANK_REQUIRE_R") == "1":
            pytest.fail("R with lme4, lmerTest and jsonlite is needed (MIXRANK_REQUIRE_R=1)")
        pytest.skip("R with lme4, lmerTest and jsonlite is not available")


@pytest.mark.r
def test_fresh_simulations_match_live_lme4(tmp_path):
    _require_r()
    manifest = []
    frames = {}
    for i, (name, (formula, kw, by)) in enumerate(CASES.items()):
        df = simulate(**dict(kw, seed=kw["seed"] + 1000 + i))
        df.to_csv(tmp_path / f"{name}.csv.gz", index=False)
        frames[name] = df
        pairs = [list(p) for p in combinations(sorted(df["model"].unique()), 2)]
        manifest.append(dict(name=name, file=f"{name}.csv.gz", formula=formula, pairs=pairs, by=by))
    (tmp_path / "cases.json").write_text(json.dumps(manifest))
    out = tmp_path / "out.json"
    env = dict(os.environ, MIXRANK_INTERACTION_CASES=str(tmp_path),
               MIXRANK_INTERACTION_OUT=str(out), MIXRANK_INTERACTION_SKIP_REAL="1")
    subprocess.run(["Rscript", str(SCRIPT)], env=env, check=True, capture_output=True)
    ref = json.loads(out.read_text())
    for case in ref["cases"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.SingularFitWarning)
            res = mixrank.fit(case["formula"], frames[case["name"]])
        for p, r in zip(res.pairs, case["pairs"]):
            assert (p.model_a, p.model_b) == (r["model_a"], r["model_b"])
            check_fit(p, r)
            check_anova(res, p, r)
            check_contrasts(res, p, r, case["by"])
        check_model_scores(res, case)
