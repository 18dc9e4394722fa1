"""Command-line findings of the hardening pass (docs/hardening.md): standard input,
output paths, quoted pair names, input folders, power edge cases, the score
type on table output.  Each test failed before its fix."""

from __future__ import annotations

import io
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.cli import main
from tests.cli.test_cli import run

F1 = "correct ~ model + (1|subject)"


def api(data, **kw) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(F1, data, **kw).contrasts()


def same(got_csv: str, want: pd.DataFrame) -> None:
    got = pd.read_csv(io.StringIO(got_csv))
    assert list(got.model_a) == list(want.model_a) and list(got.model_b) == list(want.model_b)
    np.testing.assert_allclose(got.estimate, want.estimate, rtol=1e-12)
    np.testing.assert_allclose(got.std_error, want.std_error, rtol=1e-10)


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("MIXRANK_PROGRESS", "0")


@pytest.fixture
def other() -> pd.DataFrame:
    """Not the bundled example: three models only."""
    return mixrank.simulate(3, 6, 8, 1, rng=9)


# ------------------------------------------------------------ finding 1: '-'
def test_dash_reads_standard_input(capsys, monkeypatch, other):
    monkeypatch.setattr(sys, "stdin", io.StringIO(other.to_csv(index=False)))
    code, out, _ = run(capsys, "contrasts", "-", "-f", F1, "--format", "csv")
    assert code == 0
    same(out, api(other))       # the piped data, not the bundled example (15 pairs)


def test_dash_jsonl_and_wide(capsys, monkeypatch, other):
    monkeypatch.setattr(sys, "stdin", io.StringIO(other.to_json(orient="records", lines=True)))
    code, out, _ = run(capsys, "contrasts", "-", "-f", F1, "--format", "csv",
                       "--input-format", "jsonl")
    assert code == 0
    same(out, api(other))
    wide = other.pivot_table(index=["subject", "question"], columns="model",
                             values="correct").reset_index()
    monkeypatch.setattr(sys, "stdin", io.StringIO(wide.to_csv(index=False)))
    code, out, _ = run(capsys, "contrasts", "-", "-f", F1, "--format", "csv",
                       "--input-format", "wide")
    assert code == 0
    same(out, api(other))


def test_dash_in_a_subprocess(other):
    out = subprocess.run([sys.executable, "-m", "mixrank", "contrasts", "-", "-f", F1,
                          "--format", "csv"], input=other.to_csv(index=False),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    same(out.stdout, api(other))


@pytest.mark.parametrize("stdin, extra, msg", [
    ("", [], "standard input ('-') is empty"),
    ("a,b\n1,2\n3,4,5,6,7\n", [], "could not read standard input as CSV"),
    ("x", ["--input-format", "lm-eval"], "not standard input"),
])
def test_dash_errors(capsys, monkeypatch, stdin, extra, msg):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code, out, err = run(capsys, "contrasts", "-", "-f", F1, *extra)
    assert code == 2 and out == "" and msg in err


# ------------------------------------------------------------ finding 7d: -o
@pytest.mark.parametrize("target, msg", [
    ("/proc/mixrank_no_such/x.csv", "cannot write the output file '/proc/mixrank_no_such/x.csv'"),
    ("/no/such/dir/x.csv", "cannot write the output file '/no/such/dir/x.csv'"),
    ("DIR", "is a folder"),
])
def test_unwritable_output_is_refused_before_the_fit(capsys, monkeypatch, tmp_path, target, msg):
    calls = []
    monkeypatch.setattr(sys.modules["mixrank.fit"], "fit", lambda *a, **k: calls.append(1))
    target = str(tmp_path) if target == "DIR" else target
    code, out, err = run(capsys, "contrasts", "example", "-f", F1, "-o", target)
    assert code == 2 and out == "" and msg.replace("DIR", str(tmp_path)) in err
    assert calls == []                                   # refused before any fitting


def test_full_device_names_the_output(capsys):
    code, _, err = run(capsys, "power", "--sigma-d", "0.5", "--delta", "0.1", "-o", "/dev/full")
    assert code == 2 and "'/dev/full'" in err and "No space left" in err


def test_output_check_leaves_no_file(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules["mixrank.fit"], "fit", lambda *a, **k: 1 / 0)
    target = tmp_path / "x.csv"
    with pytest.raises(ZeroDivisionError):
        main(["contrasts", "example", "-f", F1, "-o", str(target)])
    assert not target.exists()


# ------------------------------------------------------------ finding 7b: --pair
def test_pair_names_with_commas_and_spaces(capsys, tmp_path):
    d = mixrank.simulate(3, 5, 6, 1, rng=4)
    d["model"] = d["model"].map({"m01": "Acme, v2", "m02": " padded ", "m03": "m03"})
    f = tmp_path / "d.csv"
    d.to_csv(f, index=False)
    code, out, _ = run(capsys, "contrasts", str(f), "-f", F1, "--format", "csv",
                       "--pair", '"Acme, v2"," padded "')
    assert code == 0
    same(out, api(d, pairs=[("Acme, v2", " padded ")]))
    code, _, err = run(capsys, "contrasts", str(f), "-f", F1, "--pair", "Acme, v2,m03")
    assert code == 2 and "quote a name that holds a comma" in err
    code, _, err = run(capsys, "contrasts", str(f), "-f", F1, "--pair", '"Acme,m03')
    assert code == 2 and "unbalanced double quote" in err


# ------------------------------------------------------------ finding 7c: folders
def test_parquet_folder_is_long_input(capsys, tmp_path, other):
    folder = tmp_path / "runs"
    folder.mkdir()
    for i, (_, part) in enumerate(other.groupby("model")):
        part.to_parquet(folder / f"p{i}.parquet")
    code, out, _ = run(capsys, "contrasts", str(folder), "-f", F1, "--format", "csv")
    assert code == 0
    same(out, api(other))
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run(capsys, "contrasts", str(empty), "-f", F1)
    assert code == 2 and "--input-format" in err


# ------------------------------------------------------------ findings 4b and 5: power
def test_power_vanishing_delta_is_infinite_not_a_traceback(capsys):
    code, out, _ = run(capsys, "power", "--sigma-d", ".5", "--delta", "1e-300")
    assert code == 0 and "n_star = inf" in out and "no finite number of cells" in out


def test_power_connor_needs_marginals(capsys):
    code, out, err = run(capsys, "power", "--sigma-d", ".5", "--delta", "0.1", "--test", "connor")
    assert code == 2 and out == "" and "needs the discordance" in err


def test_power_summary_is_what_the_cli_prints(capsys):
    tab = mixrank.power_summary(sigma_d=0.5, delta=0.03, n=2000, alpha=0.01)
    code, out, _ = run(capsys, "power", "--sigma-d", "0.5", "--delta", "0.03", "--n", "2000",
                       "--level", "0.99", "--format", "csv")
    got = pd.read_csv(io.StringIO(out))
    assert code == 0 and got.quantity.tolist() == tab.quantity.tolist()
    np.testing.assert_allclose(got.value, tab.value, rtol=1e-12)


# ------------------------------------------------------------ finding 6c, 8
def test_table_output_names_the_score_type(capsys):
    for cmd in ("fit", "contrasts", "components", "ranks"):
        code, out, _ = run(capsys, cmd, "example", "-f", F1, *(["--pair", "m01,m02"]
                                                               if cmd == "fit" else []))
        assert code == 0 and out.startswith("scores: binary (0/1), 6 models, 960 cells"), cmd
    code, out, _ = run(capsys, "contrasts", "example", "-f", F1, "--format", "csv")
    assert out.startswith("model_a,")      # machine formats stay parseable


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"mixrank {mixrank.__version__}"


def test_lm_eval_with_invalid_utf8_exits_2(capsys, tmp_path):
    import shutil
    from pathlib import Path

    src = Path(__file__).parents[1] / "io" / "fixtures" / "lm_eval"
    dst = tmp_path / "lm"
    shutil.copytree(src, dst)
    f = sorted(dst.rglob("samples_arc_easy_*.jsonl"))[0]
    f.write_bytes(b"\xff" + f.read_bytes())
    code, out, err = run(capsys, "contrasts", str(dst), "-f", F1)
    assert code == 2 and out == "" and "not valid UTF-8" in err


# ------------------------------------------------------------ finding 5: options never ignored
@pytest.mark.parametrize("argv, msg", [
    (["ranks", "example", "-f", F1, "--draws", "500"], "--draws and --seed set the Gaussian"),
    (["ranks", "example", "-f", F1, "--seed", "1"], "--adjust maxt"),
    (["resolution", "example", "-f", F1, "--draws", "50"], "without --sensitivity"),
    (["resolution", "example", "-f", F1, "--no-anytime", "--anytime", "normal"], "contradict"),
    (["contrasts", "example", "-f", F1, "--items", "subject"], "--items applies to wide input"),
    (["contrasts", "example", "-f", F1, "--metric", "acc"], "--metric applies to harness"),
    (["report", "example", "-f", F1, "--rci-sem", "pooled"], "give --rci-before"),
])
def test_options_that_would_be_ignored_are_refused(capsys, argv, msg):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and msg in err


def test_rci_greedy_options_need_the_vs_greedy_table(capsys, tmp_path):
    d = mixrank.simulate(2, 4, 5, 3, rng=2)
    f = tmp_path / "d.csv"
    d.to_csv(f, index=False)
    code, _, err = run(capsys, "rci", str(f), "--before", "m01", "--after", "m02", "--sample",
                       "prompt", "--greedy-sample", "p1")
    assert code == 2 and "applies to --table vs-greedy" in err


def test_maxt_draws_still_work(capsys):
    code, out, _ = run(capsys, "ranks", "example", "-f", F1, "--adjust", "maxt",
                       "--draws", "300", "--seed", "2", "--format", "csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = mixrank.fit(F1, mixrank.load_example()).rank_intervals(adjust="maxt", draws=300, rng=2)
    got = pd.read_csv(io.StringIO(out))
    assert code == 0 and got["rank_lower"].tolist() == want["rank_lower"].tolist()


# ------------------------------------------------------------ finding 3: no hang
def test_plan_with_a_vanishing_delta_returns(capsys):
    code, out, _ = run(capsys, "plan", "example", "-f", F1, "--delta", "1e-12", "--format", "csv")
    tab = pd.read_csv(io.StringIO(out))
    assert code == 0 and tab.loc[tab.kind == "minimal", "unreachable"].all()
