"""``mixrank table`` (the paper table) and ``mixrank scores --letters``.

The command prints what the API's ``res.table()`` gives for the same fit, in
each format; ``scores --letters`` adds the column of ``res.letters()``; bad
``--format``, ``--digits``, ``--adjust`` and ``--letters --by`` exit 2 with
one ``error:`` line.
"""

from __future__ import annotations

import io
import warnings

import pandas as pd
import pytest

import mixrank
from mixrank.cli import main

F = "correct ~ model + (1|subject)"


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.fixture(scope="module")
def res():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(F, mixrank.load_example())


@pytest.mark.parametrize("fmt", ["latex", "markdown", "html"])
def test_table_prints_the_api_table(capsys, res, fmt):
    code, out, err = _run(capsys, "table", "example", "-f", F, "--format", fmt)
    assert code == 0, err
    assert out == res.table(fmt)


def test_table_options_and_output_file(capsys, res, tmp_path):
    path = tmp_path / "t.tex"
    code, out, err = _run(capsys, "table", "example", "-f", F, "--digits", "2", "--adjust",
                          "holm", "--interval", "pm", "--caption", "Our run_1", "--label",
                          "tab:x", "--level", "0.9", "-o", str(path))
    assert code == 0 and out == "", err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res90 = mixrank.fit(F, mixrank.load_example(), level=0.9)
    want = res90.table("latex", 2, adjust="holm", interval="pm", caption="Our run_1",
                       label="tab:x")
    assert path.read_text(encoding="utf-8") == want
    assert r"\caption{Our run\_1. " in want and r"\label{tab:x}" in want and "level 0.9" in want


@pytest.mark.parametrize("argv, message", [
    (["--format", "docx"], "invalid choice: 'docx'"),
    (["--digits", "-1"], "--digits: expected an integer >= 0"),
    (["--digits", "two"], "--digits: expected an integer >= 0"),
    (["--adjust", "bonferroni"], "--adjust bonferroni is not supported by FitResult.contrasts()"),
    (["--interval", "sd"], "invalid choice: 'sd'"),
])
def test_table_bad_options(capsys, argv, message):
    code, out, err = _run(capsys, "table", "example", "-f", F, *argv)
    assert code == 2 and out == ""
    assert err.startswith("error:") and message in err, err
    if "docx" in argv:                           # the formats named
        assert all(f in err for f in ("latex", "markdown", "html"))


def test_table_with_one_pair_exits_2(capsys, tmp_path):
    d = mixrank.load_example()
    d[d.model.isin(["m01", "m02"])].to_csv(tmp_path / "two.csv", index=False)
    code, out, err = _run(capsys, "table", str(tmp_path / "two.csv"), "-f", F)
    assert code == 2 and out == "" and "letters() needs at least 3 models" in err


def test_scores_letters(capsys, res):
    code, out, err = _run(capsys, "scores", "example", "-f", F, "--letters", "--format", "csv")
    assert code == 0, err
    tab = pd.read_csv(io.StringIO(out))
    cld = res.letters()
    assert dict(zip(tab["model"], tab["letters"])) == dict(zip(cld["model"], cld["letters"]))
    assert list(tab.columns).index("letters") == list(tab.columns).index("ci_upper") + 1
    code, out, _ = _run(capsys, "scores", "example", "-f", F, "--format", "csv")
    assert "letters" not in out.splitlines()[0]
    code, out, err = _run(capsys, "scores", "example", "-f", F, "--letters")
    header = next(line for line in out.splitlines() if line.lstrip().startswith("model "))
    assert code == 0 and header.split()[-1] == "letters" and " ab" in out
    code, out, err = _run(capsys, "scores", "example", "-f", "correct ~ model * prompt + "
                          "(1|subject)", "--by", "prompt", "--letters")
    assert code == 2 and "--letters" in err and "--by" in err


def test_the_parser_lists_the_formats_the_api_takes():
    from mixrank.cli import table as cli_table
    from mixrank.results import paper_table

    assert cli_table.FORMATS == paper_table.FORMATS
    assert cli_table.INTERVALS == paper_table.INTERVALS
