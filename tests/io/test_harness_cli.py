"""The command line on harness output: detection, the printed mapping, options, reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mixrank.cli import main

GEN = Path(__file__).resolve().parent / "fixtures" / "generated"

pytestmark = pytest.mark.filterwarnings("ignore::mixrank.SingularFitWarning")


@pytest.mark.parametrize("folder,extra,models", [
    ("lm_eval", [], ["model-a", "model-b"]),
    ("inspect_json", [], ["mxoffline/model-a", "mxoffline/model-b"]),
    ("helm", ["--metric", "exact_match"], ["mx/model-a", "mx/model-b"]),
    ("lighteval", ["--metric", "acc"], ["model-a", "model-b"]),
])
def test_report_on_each_harness_folder(folder, extra, models, tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", str(GEN / folder), "-o", str(out), *extra]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") or page.lstrip().lower().startswith("<!doctype")
    for m in models:
        assert m in page
    assert f"<title>{folder} (" in page
    err = capsys.readouterr().err
    assert "rows per subject:" in err and "question <-" in err and f"wrote {out}" in err


def test_report_default_output_in_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(GEN / "helm")]) == 0
    assert (tmp_path / "mixrank-report.html").is_file()


def test_metric_option_and_formula_left_side_agree(capsys):
    assert main(["contrasts", str(GEN / "lm_eval"), "-f", "acc_norm ~ model + (1|subject)",
                 "--format", "json"]) == 0
    by_formula = json.loads(capsys.readouterr().out)
    assert main(["contrasts", str(GEN / "lm_eval"), "-f", "correct ~ model + (1|subject)",
                 "--metric", "acc_norm", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == by_formula
    assert "metric: mx_arith=acc_norm" in captured.err


def test_subject_and_prompt_fields(capsys):
    assert main(["contrasts", str(GEN / "inspect_json"), "-f",
                 "correct ~ model + (1|subject)", "--replicate", "sample",
                 "--subject-field", "level", "--prompt-field", "level"]) == 0
    err = capsys.readouterr().err
    assert "subject  <- metadata.level" in err and "rows per subject: easy" in err


def test_bad_metric_exits_2(capsys):
    assert main(["contrasts", str(GEN / "helm"), "-f", "correct ~ model",
                 "--metric", "nope"]) == 2
    assert "metric 'nope' not found; metrics present: ['exact_match']" in capsys.readouterr().err
