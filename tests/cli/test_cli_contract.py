"""The command line's contract, for every subcommand the parser knows.

Every subcommand x (a good input, each malformed input of the hardening
pass) must exit 0 or 2, never print a traceback, and print nothing on
stdout when it fails (the message goes to stderr, starting ``error:``).
Subcommands are read from the parser, so a new one is covered as soon as it
is registered; its required options get values from :data:`REQUIRED` (add
one there if the test says so).

Most cases run :func:`mixrank.cli.main` in-process with captured streams; a
few run ``python -m mixrank`` as a subprocess to check the real exit code and
streams.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.cli import build_parser, main

F = "correct ~ model + (1|subject)"
LM_EVAL = Path(__file__).parents[1] / "io" / "fixtures" / "lm_eval"
SUBSET = Path(__file__).parent / "fixtures"   # make_subset_fixtures.py wrote them

#: Values for required options (a new subcommand's required option goes here).
REQUIRED = {"--formula": F, "--delta": "0.05", "--before": "m01", "--after": "m02",
            "--new": str(SUBSET / "subset_new.csv"),
            "--selection": str(SUBSET / "subset_selection.csv")}
#: Subcommands whose formula must differ (anova splits the gap by a covariate x).
FORMULA = {"anova": "correct ~ model * x + (1|subject)"}
#: Extra options some subcommands need to run on the test data.
EXTRA = {"rci": ["--sample", "prompt"], "report": ["--max-pairs", "3"],
         "arena": ["--from-scores"],
         "judge": ["--gold", "ref"], "select-items": ["--k", "8"]}
#: Commands that read no data argument (their inputs are options).
NO_DATA_INPUT = {"demo": [], "power": ["--sigma-d", "0.5", "--delta", "0.05"]}


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return dict(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]


def _options(sp) -> set[str]:
    return {o for a in sp._actions for o in a.option_strings}


def _argv(name: str, sp, data: str, tmp: Path) -> list[str]:
    argv = [name, data]
    for a in sp._actions:
        if a.required and a.option_strings:
            flag = a.option_strings[0]
            assert flag in REQUIRED, f"add a value for {name} {flag} to REQUIRED"
            value = FORMULA.get(name, REQUIRED[flag]) if flag == "--formula" else REQUIRED[flag]
            argv += [flag, value]
    if name == "report":
        argv += ["-f", F, "-o", str(tmp / "r.html")]
    return argv + EXTRA.get(name, [])


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    """Good and malformed inputs, as paths (or '-' with the text piped in)."""
    tmp = tmp_path_factory.mktemp("contract")
    good = mixrank.simulate(3, 4, 4, 2, rng=3)
    good["x"] = good["subject"].map(lambda v: "a" if v in ("s1", "s2") else "b")  # a covariate
    good["ref"] = good["correct"].astype(float)   # reference labels for `mixrank judge --gold ref`
    paths: dict[str, str] = {}

    def csv(name: str, df: pd.DataFrame) -> None:
        df.to_csv(tmp / f"{name}.csv", index=False)
        paths[name] = str(tmp / f"{name}.csv")

    csv("good", good)
    twin = good[good.model == "m01"].assign(model="m01copy")
    csv("degenerate", pd.concat([good, twin], ignore_index=True))
    stray = good.copy()
    stray.loc[0, "correct"] = 100
    csv("stray", stray)
    nan = good.astype({"correct": float})
    nan.loc[0, "correct"] = np.nan
    csv("nan_score", nan)
    csv("one_model", good[good.model == "m01"])
    csv("comma_names", good.assign(model=good.model.map({"m01": "A, v2", "m02": " B ",
                                                           "m03": "m03"})))
    (tmp / "dup.csv").write_text("model,subject,question,correct,correct\nm01,s,q,1,0\n")
    paths["duplicated_column"] = str(tmp / "dup.csv")
    (tmp / "bad.csv").write_bytes(b"model,subject,question,correct\nm\xff1,s,q,1\n")
    paths["invalid_utf8"] = str(tmp / "bad.csv")
    (tmp / "empty.csv").write_bytes(b"")
    paths["empty_file"] = str(tmp / "empty.csv")
    (tmp / "junk.bin").write_bytes(bytes(range(256)))
    paths["unknown_type"] = str(tmp / "junk.bin")
    paths["missing_file"] = str(tmp / "no_such.csv")
    folder = tmp / "parquet"
    folder.mkdir()
    for i, (_, part) in enumerate(good.groupby("model")):
        part.to_parquet(folder / f"p{i}.parquet")
    paths["parquet_folder"] = str(folder)
    (tmp / "empty_dir").mkdir()
    paths["empty_folder"] = str(tmp / "empty_dir")
    lm = tmp / "lm"
    shutil.copytree(LM_EVAL, lm)
    f = sorted(lm.rglob("samples_*.jsonl"))[0]
    f.write_bytes(b"\xff" + f.read_bytes())
    paths["lm_eval_invalid_utf8"] = str(lm)
    return paths


#: Input name -> may it succeed?  (False: must exit 2.)
EXPECT_OK = {"good": True, "degenerate": True, "stray": True, "comma_names": True,
             "parquet_folder": True, "nan_score": False, "one_model": False,
             "duplicated_column": False, "invalid_utf8": False, "empty_file": False,
             "unknown_type": False, "missing_file": False, "empty_folder": False,
             "lm_eval_invalid_utf8": False}

#: (subcommand, input) pairs where exit 0 and exit 2 are both right: rci's
#: selectors name m01/m02 (absent with other names), rci needs scores in [0, 1].
EITHER = {("rci", "comma_names"), ("rci", "stray"),
          # the item models need scores in [0, 1]: a stray 100 is refused
          ("select-items", "stray"), ("subset-score", "stray"),
          # a duplicated model makes the models' cluster-robust covariance singular
          ("omnibus", "degenerate")}

#: Malformed options: (extra argv, applies when the subcommand has this option).
BAD_OPTIONS = [
    (["--level", "2"], "--level"),
    (["--level", "abc"], "--level"),
    (["--pair", "m01"], "--pair"),
    (["--pair", '"m01,m02'], "--pair"),
    (["--format", "bogus"], "--format"),
    (["-o", "/proc/mixrank_no_such/x"], "--output"),
    (["--method", "bogus"], "--method"),
    (["--input-format", "lm-eval"], "--input-format"),
    (["--na", "maybe"], "--na"),
]


def check(capsys, argv: list[str], must_fail: bool | None = None) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        assert out == "", (argv, out[:200])
        assert "error:" in err, (argv, err)
    if must_fail is not None:
        assert (code == 2) == must_fail, (argv, code, err[-300:])
    return code


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("MIXRANK_PROGRESS", "0")


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_subcommand_with_every_input(capsys, tmp_path, inputs, name):
    sp = _subcommands()[name]
    if name in NO_DATA_INPUT:
        check(capsys, [name, *NO_DATA_INPUT[name]], must_fail=False)
        return
    shown = inputs if name != "report" else {k: inputs[k] for k in
                                             ("good", "degenerate", "nan_score", "missing_file")}
    for key, path in shown.items():
        must_fail = not EXPECT_OK[key]
        if (name, key) in EITHER:
            must_fail = None
        check(capsys, _argv(name, sp, path, tmp_path), must_fail=must_fail)


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_subcommand_with_every_bad_option(capsys, tmp_path, inputs, name):
    sp = _subcommands()[name]
    opts = _options(sp)
    base = [name, *NO_DATA_INPUT[name]] if name in NO_DATA_INPUT else \
        _argv(name, sp, inputs["good"], tmp_path)
    for extra, needs in BAD_OPTIONS:
        if needs in opts:
            check(capsys, base + extra, must_fail=True)
    check(capsys, [name, "--no-such-option"], must_fail=True)


@pytest.mark.parametrize("stdin, must_fail", [
    ("good", False), ("", True), ("a,b\n1,2\n3,4,5\n", True), ("\x00\x01garbage", True),
])
def test_standard_input(capsys, monkeypatch, inputs, stdin, must_fail):
    text = Path(inputs["good"]).read_text() if stdin == "good" else stdin
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    check(capsys, ["contrasts", "-", "-f", F], must_fail=must_fail)


def test_full_device(capsys):
    check(capsys, ["power", "--sigma-d", "0.5", "--delta", "0.05", "-o", "/dev/full"],
          must_fail=True)


def test_no_command_and_help(capsys):
    assert main([]) == 2
    assert main(["--help"]) == 0 and main(["--version"]) == 0
    for name in _subcommands():
        assert main([name, "--help"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("argv, code", [
    (["contrasts", "GOOD", "-f", F, "--format", "csv"], 0),
    (["contrasts", "MISSING", "-f", F], 2),
    (["power", "--sigma-d", ".5", "--delta", "1e-300"], 0),
    (["contrasts", "GOOD", "-f", "correct ~ model + (1|subject"], 2),
])
def test_in_a_subprocess(inputs, argv, code):
    argv = [inputs["good"] if a == "GOOD" else inputs["missing_file"] if a == "MISSING" else a
            for a in argv]
    out = subprocess.run([sys.executable, "-m", "mixrank", *argv], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == code, out.stderr
    assert "Traceback" not in out.stderr
    if code == 2:
        assert out.stdout == "" and out.stderr.startswith("error:")
