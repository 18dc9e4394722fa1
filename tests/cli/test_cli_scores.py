"""CLI ``mixrank scores`` and ``mixrank contrasts --adjust``: the API's tables, verbatim."""

from __future__ import annotations

import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from tests.cli.test_cli import run

F1 = "correct ~ model + (1|subject)"


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("MIXRANK_PROGRESS", "0")


@pytest.fixture(scope="module")
def api():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(F1, mixrank.load_example())


def test_scores_csv_is_the_api_table(capsys, api):
    code, out, _ = run(capsys, "scores", "example", "-f", F1, "--format", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out))
    want = api.model_scores().sort_values(["estimate", "model"], ascending=[False, True])
    assert list(got.columns) == list(want.columns)
    assert got["model"].tolist() == want["model"].tolist()
    for c in ("estimate", "std_error", "df", "ci_lower", "ci_upper", "iid_std_error",
              "variance_ratio", "design_effect"):
        np.testing.assert_allclose(got[c], want[c], rtol=1e-12, err_msg=c)


def test_scores_table_estimand_and_probabilities(capsys, api):
    code, out, _ = run(capsys, "scores", "example", "-f", F1, "--score-estimand", "cells")
    assert code == 0 and out.startswith("scores: binary (0/1)") and "iid_std_error" in out
    code, out, _ = run(capsys, "scores", "example", "-f", F1, "--probabilities", "--seed", "1",
                       "--draws", "2000", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    rp = pd.DataFrame(doc["rank_probabilities"])
    want = api.rank_probabilities(draws=2000, rng=1)
    np.testing.assert_allclose(rp["probability"], want["probability"], rtol=1e-12)


def test_contrasts_adjust(capsys, api):
    code, out, _ = run(capsys, "contrasts", "example", "-f", F1, "--format", "csv")
    got = pd.read_csv(io.StringIO(out))
    np.testing.assert_allclose(got["p_adjusted"], api.contrasts()["p_adjusted"], rtol=1e-12)
    code, out, _ = run(capsys, "contrasts", "example", "-f", F1, "--format", "csv",
                       "--adjust", "maxt", "--seed", "3", "--draws", "2000")
    got = pd.read_csv(io.StringIO(out))
    want = api.contrasts(adjust="maxt", draws=2000, rng=3)
    np.testing.assert_allclose(got["ci_lower"], want["ci_lower"], rtol=1e-12)
    np.testing.assert_allclose(got["p_adjusted"], want["p_adjusted"], rtol=1e-12)


@pytest.mark.parametrize("argv,match", [
    (["contrasts", "example", "-f", F1, "--adjust", "bonf"], "'holm', 'none', 'bonferroni', 'bh', 'maxt', 'stepdown'"),
    (["scores", "example", "-f", F1, "--score-estimand", "micro"], "'gls', 'cells', 'units'"),
    (["scores", "example", "-f", F1, "--probabilities", "--draws", "10"],
     "10 is not a usable number of draws"),
])
def test_bad_options_exit_2(capsys, argv, match):
    code, _, err = run(capsys, *argv)
    assert code == 2 and match in err
