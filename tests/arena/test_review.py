"""Regressions from the review of the arena feature (hrev): options that used to be
silently ignored, a confusing formula error, help text that disagreed with behaviour,
and the clustering of derived battles on the command line."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.cli import build_parser, main
from mixrank.errors import DesignError, FormulaError

from .conftest import simulate_battles

BETA = np.array([0.0, 0.5, -0.4, 0.8])


@pytest.fixture(scope="module")
def log_path(tmp_path_factory):
    p = tmp_path_factory.mktemp("arena") / "b.csv"
    simulate_battles(800, BETA, rng=3, n_prompts=20, prompt_sd=0.3).to_csv(p, index=False)
    return p


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.mark.parametrize("extra, flag", [
    (["--scale", "elo"], "--scale"),                       # shapes contrasts only
    (["--adjust", "bh"], "--adjust"),
    (["--coverage", "simultaneous"], "--coverage"),        # shapes ranks only
    (["--table", "contrasts", "--anchor", "m00=1200"], "--anchor"),   # shapes scores only
    (["--table", "ranks", "--scale", "probability"], "--scale"),
])
def test_table_options_of_a_table_not_printed_are_refused(capsys, log_path, extra, flag):
    code, _, err = _run(capsys, "arena", log_path, *extra)
    assert code == 2 and flag in err and "would be ignored" in err


def test_table_options_are_used_where_they_apply(capsys, log_path):
    res = mixrank.arena(pd.read_csv(log_path))
    code, out, _ = _run(capsys, "arena", log_path, "--table", "contrasts", "--scale", "elo",
                        "--adjust", "bh", "--format", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out))
    want = res.contrasts(scale="elo", adjust="bh")
    np.testing.assert_allclose(got["p_adjusted"], want["p_adjusted"], rtol=1e-9)
    np.testing.assert_allclose(got["estimate"], want["estimate"], rtol=1e-9)
    code, _, _ = _run(capsys, "arena", log_path, "--table", "all", "--scale", "elo",
                      "--coverage", "simultaneous", "--anchor", "m00=1200")
    assert code == 0


def test_report_refuses_table_options(capsys, log_path, tmp_path):
    code, _, err = _run(capsys, "arena", log_path, "--report", tmp_path / "r.html",
                        "--adjust", "none")
    assert code == 2 and "--adjust" in err and not (tmp_path / "r.html").exists()
    code, _, err = _run(capsys, "arena", log_path, "--report", tmp_path / "r.html",
                        "--format", "csv")
    assert code == 2 and "--format" in err and not (tmp_path / "r.html").exists()


def test_bootstrap_arguments_without_bootstrap_are_refused():
    log = simulate_battles(300, BETA, rng=4)
    with pytest.raises(DesignError, match="draws= and rng= set the bootstrap"):
        mixrank.arena(log, draws=200)
    with pytest.raises(DesignError, match="would be ignored"):
        mixrank.arena(log, rng=1)
    mixrank.arena(log, se="bootstrap", draws=100, rng=1)   # used there


def test_model_is_not_a_covariate():
    log = simulate_battles(300, BETA, rng=4)
    with pytest.raises(FormulaError, match="'model' is not a covariate") as exc:
        mixrank.arena(log, "winner ~ model")
    assert "^^^^^" in str(exc.value)


def _scores(n_models=4, n_items=60, seed=0):
    g = np.random.default_rng(seed)
    ability = np.linspace(-0.6, 0.6, n_models)
    diff = g.normal(0, 1.5, n_items)
    rows = [(f"m{j}", f"s{i % 6}", f"q{i}", int(g.random() < 1 / (1 + np.exp(diff[i] - a))))
            for j, a in enumerate(ability) for i in range(n_items)]
    return pd.DataFrame(rows, columns=["model", "subject", "question", "correct"])


def test_from_scores_clusters_by_cell_by_default(capsys, tmp_path):
    df = _scores()
    df.to_csv(tmp_path / "s.csv", index=False)
    log = mixrank.battles_from_scores(df)
    clustered = mixrank.arena(log, cluster="cell").model_scores()
    naive = mixrank.arena(log).model_scores()
    code, out, _ = _run(capsys, "arena", tmp_path / "s.csv", "--from-scores", "--format", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out)).set_index("model").loc[clustered["model"]]
    np.testing.assert_allclose(got["std_error"], clustered["std_error"], rtol=1e-9)
    assert not np.allclose(got["std_error"], naive["std_error"], rtol=1e-3)
    # an explicit --se keeps its meaning (no clustering)
    code, out, _ = _run(capsys, "arena", tmp_path / "s.csv", "--from-scores", "--se",
                        "information", "--format", "csv")
    got = pd.read_csv(io.StringIO(out)).set_index("model").loc[naive["model"]]
    np.testing.assert_allclose(got["std_error"], naive["std_error"], rtol=1e-9)


def test_help_says_what_the_defaults_do():
    sub = dict(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    helps = {a.dest: a.help for a in sub["arena"]._actions}
    # battles_from_scores' default keys are the pairing keys present, not "all other columns"
    df = _scores().assign(extra="x")
    log = mixrank.battles_from_scores(df)
    assert log["cell"].iloc[0].count("|") == 1          # subject|question, not extra
    assert "subject, question, prompt" in helps["keys"]
    assert "dataset:NAME" in helps["data"]
    assert "'cell'" in helps["cluster"]


def test_tour_cli_row_lists_every_subcommand():
    # hrev review: the README's module table omitted `arena` and `judge`; the table moved
    # to docs/tour.md with the README's rewrite
    from pathlib import Path

    row = next(line for line in (Path(__file__).parents[2] / "docs" / "tour.md").read_text(
        encoding="utf-8").splitlines() if line.startswith("| cli |"))
    sub = dict(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert [name for name in sub if f"`{name}`" not in row] == []


def test_covariates_table_of_a_fit_without_covariates_is_an_error(capsys, log_path):
    # hrev review: it printed pandas' "Empty DataFrame" repr
    code, out, err = _run(capsys, "arena", log_path, "--table", "covariates")
    assert code == 2 and "has no covariates" in err and "Empty DataFrame" not in out
    tied = log_path.parent / "tied.csv"
    simulate_battles(800, BETA, rng=3, tie_rate=0.2).to_csv(tied, index=False)
    code, out, _ = _run(capsys, "arena", tied, "--table", "covariates", "--ties", "davidson")
    assert code == 0 and "log_nu" in out


def test_arena_former_B_keyword_still_works_with_a_deprecation_warning():
    log = pd.DataFrame({"model_a": ["x", "y", "z", "x", "y", "z"] * 5,
                        "model_b": ["y", "z", "x", "z", "x", "y"] * 5,
                        "winner": ["model_a", "model_a", "model_b", "tie", "model_b", "tie"] * 5})
    new = mixrank.arena(log, se="bootstrap", draws=100, rng=4).contrasts()
    with pytest.warns(mixrank.MixrankDeprecationWarning, match="B= is the former name of draws="):
        old = mixrank.arena(log, se="bootstrap", B=100, rng=4).contrasts()
    pd.testing.assert_frame_equal(new, old)
    with pytest.raises(mixrank.OptionError, match="unexpected keyword"):
        mixrank.arena(log, draw=100)
