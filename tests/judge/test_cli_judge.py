"""CLI ``--gold`` / ``--lam`` and ``mixrank judge``: the API's judge-corrected tables, verbatim."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank._display import format_at, se_decimals
from tests.cli.test_cli import run
from tests.judge.simdata import simulate

F = "score ~ model + (1|subject)"


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("MIXRANK_PROGRESS", "0")


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = tmp_path_factory.mktemp("judge") / "judge.csv"
    simulate(1, models=3, subjects=12, questions=10, frac=0.3)[0].to_csv(p, index=False)
    return p


def test_scores_and_contrasts_with_gold_are_the_api_tables(capsys, path):
    res = mixrank.fit(F, pd.read_csv(path), gold="human", lam=0.5)
    code, out, _ = run(capsys, "scores", str(path), "-f", F, "--gold", "human", "--lam", "0.5",
                       "--format", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out)).set_index("model")
    want = res.model_scores().set_index("model")
    for c in ("estimate", "std_error", "df", "ci_lower", "ci_upper", "lam", "n_labelled"):
        np.testing.assert_allclose(got.loc[want.index, c], want[c], rtol=1e-12, err_msg=c)
    code, out, _ = run(capsys, "contrasts", str(path), "-f", F, "--gold", "human", "--lam", "0.5",
                       "--format", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out))
    np.testing.assert_allclose(got["estimate"], res.contrasts()["estimate"], rtol=1e-12)


def test_lam_unit_on_the_command_line(capsys, path):
    res = mixrank.fit(F, pd.read_csv(path), gold="human", lam="unit")
    code, out, _ = run(capsys, "contrasts", str(path), "-f", F, "--gold", "human", "--lam",
                       "unit", "--format", "csv")
    assert code == 0
    np.testing.assert_allclose(pd.read_csv(io.StringIO(out))["std_error"],
                               res.contrasts()["std_error"], rtol=1e-12)


def test_judge_subcommand(capsys, path):
    res = mixrank.fit(F, pd.read_csv(path), gold="human")
    code, out, _ = run(capsys, "judge", str(path), "-f", F, "--gold", "human", "--plan", "0.3")
    assert code == 0
    assert "== judge ==" in out and "== differential_bias ==" in out and "== label_plan ==" in out
    tab = res.judge().set_index("model")
    # printed at the decimal place its SE supports (mixrank/_display.py)
    assert format_at(tab.loc["m1", "bias"], se_decimals(tab.loc["m1", "std_error"])) in out


@pytest.mark.parametrize("argv, match", [
    (["judge", "{p}", "-f", F], "needs --gold COLUMN"),
    (["scores", "{p}", "-f", F, "--gold", "humn"], "did you mean 'human'"),
    (["scores", "{p}", "-f", F, "--lam", "0.3"], "--lam 0.3 needs --gold"),
    (["scores", "{p}", "-f", F, "--gold", "human", "--lam", "best"],
     "expected a number in [0, 1] or 'unit'"),
    (["components", "{p}", "-f", F, "--gold", "human"], "has no variance components"),
    # --power only shapes --plan; without it it was silently ignored (hrev review); --level
    # (former --alpha) is the fit's level and shapes every interval
    (["judge", "{p}", "-f", F, "--gold", "human", "--power", "0.9"],
     "--power sets the label budget of --plan DELTA"),
    (["judge", "{p}", "-f", F, "--gold", "human", "--power", "0.9"],
     "without --plan it would be ignored"),
    (["scores", "{p}", "-f", F, "--gold", "human", "--family", "binomial"],
     "--gold (judge correction, PPI++) does not take --family binomial"),
])
def test_cli_errors(capsys, path, argv, match):
    code, _, err = run(capsys, *[a.format(p=path) for a in argv])
    assert code == 2 and match in err and "Traceback" not in err


def test_report_with_gold(capsys, path, tmp_path):
    pytest.importorskip("matplotlib")
    out_file = tmp_path / "judge.html"
    code, _, err = run(capsys, "report", str(path), "-f", F, "--gold", "human", "-o",
                       str(out_file))
    assert code == 0, err
    page = out_file.read_text(encoding="utf-8")
    assert '<section id="judge">' in page and 'class="omitted"' not in page
