"""The lm-eval output read into the right design, on the command line.

On the committed fixtures (tests/io/fixtures), ``plan`` and the reader's
summary report the true number of cells and prompts (prompt = template, not
document), a superseded run is named on stderr, and every hint uses CLI
syntax (``--filter gsm8k=strict-match``, ``--control small_sample=ignore``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mixrank.cli import main

FIX = Path(__file__).resolve().parents[1] / "io" / "fixtures"
GEN = FIX / "generated" / "lm_eval"
LM = FIX / "lm_eval"

pytestmark = pytest.mark.filterwarnings("ignore::mixrank.SingularFitWarning")


def test_plan_and_describe_report_the_true_design(capsys):
    """15 documents run with one template: 15 cells and 1 prompt (it was n = 225)."""
    assert main(["plan", str(GEN), "-f", "acc ~ model + (1|subject)", "--delta", "0.1",
                 "--format", "csv"]) == 0
    cap = capsys.readouterr()
    assert "prompts: 1 (0-shot)" in cap.err
    current = [line for line in cap.out.splitlines() if line.startswith("current")]
    assert len(current) == 1
    # subjects, questions, prompts, n: 15 cells of 1 prompt
    assert [float(x) for x in current[0].split(",")[2:6]] == [3, 5, 1, 15]


def test_frame_summary_reports_the_true_design():
    import warnings

    import mixrank
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("correct ~ model + (1|subject)", mixrank.read(GEN))
    text = res.frame.summary_text()
    assert "Cells: 15 keyed by" in text
    df = mixrank.read(GEN)
    assert df["prompt"].nunique() == 1 and df["prompt_hash"].nunique() == 15
    design = res.frame.describe().set_index("term")
    assert design["n"].iloc[-1] == 15


def test_superseded_run_is_reported(capsys):
    assert main(["fit", str(GEN), "-f", "acc ~ model + (1|subject)"]) == 0
    err = capsys.readouterr().err
    assert "superseded by a later run of the same task (not read): 1 file(s)" in err
    assert "samples_mx_arith_2026-11-30T10-02-52.503619.jsonl" in err


def test_filter_hint_uses_cli_syntax(capsys):
    assert main(["fit", str(LM), "-f", "correct ~ model + (1|subject)", "--metric",
                 "arc_easy=acc,gsm8k=exact_match,mmlu_stem_mini=acc"]) == 2
    err = capsys.readouterr().err
    assert "--filter gsm8k=strict-match" in err
    assert "{" not in err.split("error:", 1)[1]


def test_weak_design_advice_names_the_cli_flag(capsys):
    args = ["fit", str(LM), "-f", "correct ~ model + (1|subject)", "--metric",
            "arc_easy=acc,gsm8k=exact_match,mmlu_stem_mini=acc", "--filter", "gsm8k=strict-match"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "weak design" in err and "--control small_sample=ignore" in err
    assert "Control(" not in err
    assert main([*args, "--control", "small_sample=ignore"]) == 0
    assert "weak design" not in capsys.readouterr().err


def test_bad_control_field(capsys):
    assert main(["fit", "example", "-f", "correct ~ model + (1|subject)", "--control",
                 "small_sampel=ignore"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'small_sample'" in err
