"""The ``mixrank`` command line: every subcommand's output against the public
API it wraps, exit codes (0 success, 2 usage or data error, message on stderr
and no traceback), input formats and the progress bar."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixrank
import mixrank.io
from mixrank import cli
from mixrank._display import format_signif
from mixrank.cli import Progress, main
from mixrank.errors import MixrankWarning

F1 = "correct ~ model + (1|subject)"
F2 = "correct ~ model + (1|subject) + (1|prompt)"
IO_FIXTURES = Path(__file__).parents[1] / "io" / "fixtures"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def api_fit(formula: str = F1, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(formula, mixrank.load_example(), **kw)


def csv_of(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))


def assert_same(got: pd.DataFrame, want: pd.DataFrame, *, rtol: float = 1e-12,
                atol: float = 1e-15) -> None:
    """A table printed as CSV equals the API's table (numbers to ``rtol``/``atol``)."""
    want = want.reset_index(drop=True)
    assert list(got.columns) == list(want.columns)
    for c in want.columns:
        if pd.api.types.is_numeric_dtype(want[c]) and not pd.api.types.is_bool_dtype(want[c]):
            np.testing.assert_allclose(got[c].to_numpy(float), want[c].to_numpy(float),
                                       rtol=rtol, atol=atol, err_msg=c)
        elif c == "note":     # empty notes are read back from CSV as missing
            assert got[c].fillna("").astype(str).tolist() == want[c].astype(str).tolist(), c
        else:
            assert got[c].astype(str).tolist() == want[c].astype(str).tolist(), c


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("MIXRANK_PROGRESS", "0")


# ------------------------------------------------------------------ existing commands

def test_demo_in_a_subprocess():
    out = subprocess.run([sys.executable, "-m", "mixrank", "demo"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "== Contrasts (model_a - model_b) ==" in out.stdout
    assert "== Rank intervals (95%, marginal) ==" in out.stdout
    assert "Traceback" not in out.stderr


def test_fit_table_and_csv(capsys):
    code, out, _ = run(capsys, "fit", "example", "-f", F1, "--pair", "m01,m02")
    assert code == 0 and "REML criterion at convergence" in out
    code, out, _ = run(capsys, "fit", "example", "-f", F1, "--format", "csv")
    assert code == 0
    assert_same(csv_of(out), api_fit().contrasts())


def test_contrasts_json_and_components_markdown(capsys):
    code, out, _ = run(capsys, "contrasts", "example", "-f", F1, "--format", "json",
                       "--estimand", "cells", "--level", "0.9")
    assert code == 0
    assert_same(pd.DataFrame(json.loads(out)),
                api_fit(estimand="cells", level=0.9).contrasts())
    code, out, _ = run(capsys, "components", "example", "-f", F2, "--format", "markdown")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "| model_a | model_b | group | variance | std_dev | share |"
    assert len(lines) == 2 + len(api_fit(F2).variance_components())


def test_output_file(capsys, tmp_path):
    target = tmp_path / "c.csv"
    code, out, _ = run(capsys, "contrasts", "example", "-f", F1, "--format", "csv", "-o", str(target))
    assert code == 0 and out == ""
    assert_same(pd.read_csv(target), api_fit().contrasts())


# ------------------------------------------------------------------ new commands

def test_ranks(capsys):
    code, out, _ = run(capsys, "ranks", "example", "-f", F1, "--format", "csv")
    assert code == 0
    assert_same(csv_of(out), api_fit().rank_intervals())
    code, out, _ = run(capsys, "ranks", "example", "-f", F1, "--format", "csv", "--coverage",
                       "simultaneous", "--adjust", "maxt", "--draws", "500", "--seed", "3",
                       "--level", "0.9")
    assert code == 0
    want = api_fit(level=0.9).rank_intervals(level=0.9, coverage="simultaneous", adjust="maxt",
                                             draws=500, rng=3)
    assert_same(csv_of(out), want)


def test_ranks_rejects_pair(capsys):
    code, _, err = run(capsys, "ranks", "example", "-f", F1, "--pair", "m01,m02")
    assert code == 2 and "drop --pair" in err


def test_resolution(capsys):
    code, out, _ = run(capsys, "resolution", "example", "-f", F1, "--format", "csv")
    assert code == 0
    assert_same(csv_of(out), api_fit().resolution(columns="all"))
    code, out, _ = run(capsys, "resolution", "example", "-f", F1)
    tab = api_fit().resolution(columns="all")
    assert code == 0
    for k, v in tab.attrs["mixrank"]["unresolved"].items():
        assert f"{k}: {v}" in out
    code, out, _ = run(capsys, "resolution", "example", "-f", F1, "--format", "csv", "--pairs",
                       "all", "--adjust", "none", "--no-anytime", "--level", "0.99")
    assert code == 0
    want = api_fit().resolution(columns="all", pairs="all", adjust=None, anytime=False, level=0.99)
    assert_same(csv_of(out), want)
    assert "q_anytime" not in out


def test_resolution_explicit_pairs(capsys):
    code, out, _ = run(capsys, "resolution", "example", "-f", F1, "--format", "csv",
                       "--pair", "m02,m01", "--pair", "m03,m04")
    assert code == 0
    want = api_fit(pairs=[("m02", "m01"), ("m03", "m04")]).resolution(columns="all",
        pairs=[("m02", "m01"), ("m03", "m04")])
    assert_same(csv_of(out), want)


def test_plan(capsys):
    code, out, _ = run(capsys, "plan", "example", "-f", F2, "--delta", "0.05", "--format", "csv",
                       "--subjects", "20")
    assert code == 0
    want = api_fit(F2).plan(0.05, subjects=20).assign(delta=0.05)
    assert_same(csv_of(out), want)
    code, out, _ = run(capsys, "plan", "example", "-f", F2, "--delta", "0.05", "--delta", "0.1",
                       "--format", "csv", "--plan-pair", "m01,m02")
    assert code == 0
    got = csv_of(out)
    assert sorted(set(got["delta"])) == [0.05, 0.1]
    assert_same(got[got["delta"] == 0.1].drop(columns="delta"),
                api_fit(F2).plan(0.1, pair=("m01", "m02")))


def test_plan_needs_delta(capsys):
    code, _, err = run(capsys, "plan", "example", "-f", F2)
    assert code == 2 and "--delta" in err


def test_power_marginals(capsys):
    from mixrank.design.power import n_star
    from mixrank.design.power.audit import calculator_audit, shortcut_n

    code, out, _ = run(capsys, "power", "--p-a", "0.65", "--p-b", "0.60", "--rho", "0.3")
    assert code == 0
    ns = n_star(p_a=0.65, p_b=0.60, rho=0.3)
    # printed to 4 significant digits (mixrank/_display.py); the plan is the whole number
    assert f"n_star = {format_signif(ns)}" in out and f"plan {int(np.ceil(ns))} cells" in out
    assert f"shortcut_n = {format_signif(shortcut_n(0.65, 0.60, rho=0.3))}" in out
    assert "== Calculator audit ==" in out and "statsmodels_normal_ind" in out
    code, out, _ = run(capsys, "power", "--p-a", "0.65", "--p-b", "0.60", "--rho", "0.3",
                       "--format", "csv", "--table", "audit")
    assert code == 0
    assert_same(csv_of(out), calculator_audit(0.65, 0.60, rho=0.3))
    code, out, _ = run(capsys, "power", "--p-a", "0.65", "--p-b", "0.60", "--rho", "0.3",
                       "--format", "json", "--n", "500")
    assert code == 0
    obj = json.loads(out)
    q = {r["quantity"]: r["value"] for r in obj["quantities"]}
    assert q["n_star"] == pytest.approx(ns, rel=1e-12)
    assert q["q"] == pytest.approx(500 / ns, rel=1e-12)
    assert len(obj["audit"]) == 6


def test_power_sigma_d(capsys):
    from mixrank.design.power import mde, n_star, power

    code, out, _ = run(capsys, "power", "--sigma-d", "0.5", "--delta", "0.03", "--n", "2000",
                       "--format", "csv", "--level", "0.99")
    assert code == 0
    q = csv_of(out).set_index("quantity")["value"]
    assert q["n_star"] == pytest.approx(n_star(0.03, sigma_d=0.5, alpha=0.01), rel=1e-12)
    assert q["mde"] == pytest.approx(mde(2000, sigma_d=0.5, alpha=0.01), rel=1e-12)
    assert q["power"] == pytest.approx(power(0.03, 2000, sigma_d=0.5, alpha=0.01), rel=1e-12)


@pytest.mark.parametrize("argv, msg", [
    (["--p-a", "0.6"], "all three"),
    ([], "describe the comparison"),
    (["--sigma-d", "0.5"], "--delta"),
    (["--p-a", "1.5", "--p-b", "0.6", "--rho", "0.1"], "p_a"),
    (["--sigma-d", "0.5", "--delta", "0.1", "--power", "0.01"], "power"),
])
def test_power_errors(capsys, argv, msg):
    code, _, err = run(capsys, "power", *argv)
    assert code == 2 and msg in err and err.startswith("error:")


@pytest.fixture
def reruns(tmp_path) -> Path:
    """Two 'versions' of one model as samples 0-1 and 2-3 of 40 items (seeded)."""
    rng = np.random.default_rng(7)
    p = rng.uniform(0.05, 0.95, 40)
    rows = [dict(model="m", subject=f"s{i % 4}", question=f"q{i}", prompt="p", sample=k,
                 correct=int(rng.random() < p[i])) for i in range(40) for k in range(4)]
    path = tmp_path / "reruns.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_rci(capsys, reruns):
    from mixrank.change.rci import reliable_change

    data = pd.read_csv(reruns)
    with pytest.warns(MixrankWarning, match="no item can show a reliable change"):  # K = 2 per version
        want = reliable_change(data, before={"sample": [0, 1]}, after={"sample": [2, 3]})
    code, out, _ = run(capsys, "rci", str(reruns), "--before", "sample=0,1", "--after", "sample=2,3")
    assert code == 0 and "Reliable change: sample in [0, 1] -> sample in [2, 3]" in out
    code, out, _ = run(capsys, "rci", str(reruns), "--before", "sample=0,1", "--after",
                       "sample=2,3", "--format", "csv")
    assert_same(csv_of(out), want.summary().classes)
    code, out, _ = run(capsys, "rci", str(reruns), "--before", "sample=0,1", "--after",
                       "sample=2,3", "--format", "csv", "--table", "items")
    assert code == 0
    assert_same(csv_of(out).astype({"question": str}), want.items())
    code, out, _ = run(capsys, "rci", str(reruns), "--before", "sample=0,1", "--after",
                       "sample=2,3", "--format", "csv", "--table", "vs-greedy",
                       "--greedy-before", "sample=0", "--greedy-after", "sample=2")
    assert code == 0
    assert_same(csv_of(out), want.vs_greedy(data, before={"sample": [0]}, after={"sample": [2]}))
    classical = reliable_change(data, before={"sample": [0, 1]}, after={"sample": [2, 3]}, sem="pooled")
    code, out, _ = run(capsys, "rci", str(reruns), "--before", "sample=0,1", "--after",
                       "sample=2,3", "--format", "csv", "--table", "items", "--sem", "pooled")
    assert code == 0
    assert_same(csv_of(out).astype({"question": str}), classical.items())


@pytest.mark.parametrize("argv, msg", [
    (["--before", "sample=0,1", "--after", "sample=2,3", "--table", "vs-greedy"], "--greedy"),
    (["--before", "smple=0", "--after", "sample=2"], "'smple' is not in the data"),
    (["--before", "sample=0,1", "--after", "sample=1,2"], "disjoint"),
    (["--before", "sample=9", "--after", "sample=2"], "do not occur"),
])
def test_rci_errors(capsys, reruns, argv, msg):
    code, _, err = run(capsys, "rci", str(reruns), *argv)
    assert code == 2 and msg in err


def test_report(capsys, tmp_path, monkeypatch):
    target = tmp_path / "r.html"
    code, _, err = run(capsys, "report", "example", "-f", F2, "-o", str(target), "--title", "T",
                       "--delta", "0.1")
    assert code == 0 and "wrote" in err
    text = target.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "<title>T</title>" in text
    assert 'class="omitted"' not in text
    monkeypatch.chdir(tmp_path)  # without -o: mixrank-report.html in the current folder
    code, _, err = run(capsys, "report", "example", "-f", F2)
    assert code == 0 and (tmp_path / "mixrank-report.html").is_file()
    code, _, err = run(capsys, "report", "example")
    assert code == 2 and "report needs -f/--formula" in err
    # a reliable-change section for two models, prompts as the repeated samples
    code, _, err = run(capsys, "report", "example", "-f", F2, "-o", str(target), "--rci-before", "m01",
                       "--rci-after", "m02", "--rci-sample", "prompt", "--rci-sem", "pooled")
    assert code == 0
    text = target.read_text(encoding="utf-8")
    want = mixrank.reliable_change(mixrank.load_example(), before="m01", after="m02", sample="prompt",
                                   sem="pooled")
    assert 'id="reliable_change"' in text and 'class="omitted"' not in text
    assert f"S_diff = {want.summary().s_diff:.4g}" in text
    code, _, err = run(capsys, "report", "example", "-f", F2, "-o", str(target), "--rci-before", "m01")
    assert code == 2 and "--rci-after" in err


# ------------------------------------------------------------------ input formats

def test_lm_eval_folder(capsys):
    code, out, _ = run(capsys, "contrasts", str(IO_FIXTURES / "lm_eval"), "-f", F1, "--format",
                       "csv", "--metric", "arc_easy=acc,gsm8k=exact_match,mmlu_stem_mini=acc",
                       "--filter", "gsm8k=strict-match", "--prompt-label", "default")
    assert code == 0
    data = mixrank.io.read_lm_eval(IO_FIXTURES / "lm_eval",
                                metric={"arc_easy": "acc", "gsm8k": "exact_match",
                                        "mmlu_stem_mini": "acc"},
                                filter={"gsm8k": "strict-match"}, prompt="default")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(csv_of(out), mixrank.fit(F1, data).contrasts())


def test_wide_and_parquet_and_jsonl(capsys, tmp_path):
    code, out, _ = run(capsys, "contrasts", str(IO_FIXTURES / "wide" / "scores.csv"), "-f", F1,
                       "--input-format", "wide", "--format", "csv", "--na", "drop")
    assert code == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = mixrank.fit(F1, mixrank.read_wide(IO_FIXTURES / "wide" / "scores.csv",
                                                 na="drop")).contrasts()
    assert_same(csv_of(out), want)
    df = mixrank.load_example()
    df.to_parquet(tmp_path / "d.parquet")
    df.to_json(tmp_path / "d.jsonl", orient="records", lines=True)
    for name in ("d.parquet", "d.jsonl"):
        code, out, _ = run(capsys, "contrasts", str(tmp_path / name), "-f", F1, "--format", "csv")
        assert code == 0
        assert_same(csv_of(out), api_fit().contrasts())


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("argv, msg", [
    (["fit", "no_such_file.csv", "-f", F1], "does not exist"),
    (["fit", "example", "-f", "correct ~ model + (1|subject"], "^"),
    (["fit", "example", "-f", "correct ~ model + (1|subjct)"], "Did you mean 'subject'"),
    (["contrasts", "example", "-f", F1, "--pair", "m01,zz"], "'zz' is not a level"),
    (["contrasts", "example", "-f", F1, "--pair", "m01"], "expected MODEL_A,MODEL_B"),
    (["contrasts", "example", "-f", F1, "--level", "1.5"], "level"),
    (["contrasts", "example"], "--formula"),
    (["bogus"], "invalid choice"),
    (["ranks", "shared:nope", "-f", F1], "unknown dataset"),
    (["contrasts", "example", "-f", F1, "-o", "/no/such/dir/x.csv"], "No such file"),
])
def test_errors_exit_2(capsys, argv, msg):
    code, out, err = run(capsys, *argv)
    assert code == 2 and msg in err and err.startswith("error:")


def test_bad_formula_has_a_caret(capsys):
    code, _, err = run(capsys, "fit", "example", "-f", "correct ~ model + (1|subject")
    lines = err.splitlines()
    caret = [ln for ln in lines if ln.strip() == "^"]
    assert code == 2 and caret
    formula_line = lines[lines.index(caret[0]) - 1]
    assert formula_line[caret[0].index("^")] == "("


def test_no_command_and_help(capsys):
    assert main([]) == 2
    assert "usage" in capsys.readouterr().err
    assert main(["--help"]) == 0
    assert "ranks" in capsys.readouterr().out


def test_missing_backend_exits_2(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "mixrank.report.html", None)
    code, _, err = run(capsys, "report", "example", "-f", F1, "-o", str(tmp_path / "r.html"))
    assert code == 2 and "not available" in err


# ------------------------------------------------------------------ progress

class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal(monkeypatch):
    monkeypatch.delenv("MIXRANK_PROGRESS", raising=False)
    tty, pipe = _Tty(), io.StringIO()
    for stream in (tty, pipe):
        with Progress(4, "work", stream=stream) as bar:
            for _ in range(4):
                bar.update()
    assert "work [" in tty.getvalue() and "4/4" in tty.getvalue()
    assert pipe.getvalue() == ""
    monkeypatch.setenv("MIXRANK_PROGRESS", "1")
    assert cli.progress_enabled(io.StringIO())


def test_chunked_fit_with_progress_equals_plain_fit(capsys, monkeypatch):
    monkeypatch.setenv("MIXRANK_PROGRESS", "1")
    monkeypatch.setattr(cli.common, "PROGRESS_MIN_PAIRS", 2)
    code, out, err = run(capsys, "contrasts", "example", "-f", F2, "--format", "csv")
    assert code == 0 and "fitting 15 pairs [" in err and "15/15" in err
    assert err.count("boundary (singular) fit") == 1
    assert_same(csv_of(out), api_fit(F2).contrasts())


# ------------------------------------------------------------------ package layout

def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"mixrank {mixrank.__version__}"


def test_every_registered_module_adds_its_subcommands():
    import importlib

    parser = cli.build_parser()
    names = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert {"demo", "fit", "contrasts", "components", "ranks", "resolution", "plan", "power",
            "rci", "report"} <= names
    for mod in cli.SUBCOMMANDS:
        assert callable(importlib.import_module(f"mixrank.cli.{mod}").register)


@pytest.mark.parametrize("ci", [None, "t", "randomization"])
def test_contrasts_ci_is_the_api_keyword(capsys, ci):
    """``--ci`` is ``contrasts(ci=)``: each pair's test and interval (the unit sign flips by
    default on the example's step-down path, the t with ``--ci t``)."""
    argv = ["contrasts", "example", "-f", F1, "--format", "csv"] + (["--ci", ci] if ci else [])
    code, out, _ = run(capsys, *argv)
    assert code == 0
    want = api_fit().contrasts(**({"ci": ci} if ci else {}))
    assert_same(csv_of(out), want)
    flips = want.attrs["mixrank"].get("ci_method") == "randomization"
    assert flips == (ci != "t")


def test_contrasts_ci_refused_where_the_flips_cannot_give_it(capsys):
    code, _, err = run(capsys, "contrasts", "example", "-f", F1, "--df", "satterthwaite",
                       "--ci", "randomization")
    assert code == 2 and "--ci randomization" in err and "--df cr2" in err


def test_the_table_format_says_which_test_the_p_values_are(capsys):
    """Beside a t statistic and df, p-values from the unit sign flips are named (table
    format: the contrasts command and the demo); CSV stays a plain table."""
    code, out, _ = run(capsys, "contrasts", "example", "-f", F1)
    assert code == 0
    assert ("p_value, ci: each pair's unit sign-flip test of the pair's total (all 2048 sign "
            "flips of 'subject' and their mirror images) (statistic, df: its t); p_adjusted: "
            "stepdown") in " ".join(out.split())     # wrapped at 100 characters
    code, out, _ = run(capsys, "contrasts", "example", "-f", F1, "--ci", "t")
    assert code == 0 and "p_value, ci:" not in out
    code, out, _ = run(capsys, "contrasts", "example", "-f", F1, "--format", "csv")
    assert code == 0 and out.startswith("model_a,")
    code, out, _ = run(capsys, "demo")
    assert code == 0 and "p_value, ci: each pair's unit sign-flip test" in out
