"""The command line for model x covariate formulas: ``contrasts --by``, ``ranks --by``,
``anova``, each against the public API it wraps; ``--by`` on a formula without
covariates is an error (exit 2, message, no traceback)."""

from __future__ import annotations

import json
import warnings

import pandas as pd

import mixrank
from tests.cli.test_cli import run

F = "correct ~ model * prompt + (1|subject)"


def api():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(F, mixrank.load_example())


def test_contrasts_by(capsys):
    code, out, _ = run(capsys, "contrasts", "example", "-f", F, "--by", "prompt", "--format", "json")
    assert code == 0
    got = pd.DataFrame(json.loads(out))
    want = api().contrasts(by="prompt")
    assert list(got.columns) == list(want.columns)
    assert got["estimate"].round(12).tolist() == want["estimate"].round(12).tolist()


def test_anova_and_ranks_by(capsys):
    code, out, _ = run(capsys, "anova", "example", "-f", F, "--adjust", "holm", "--format", "json")
    assert code == 0
    got = pd.DataFrame(json.loads(out))
    assert got["F"].round(10).tolist() == api().anova(adjust="holm")["F"].round(10).tolist()
    code, out, _ = run(capsys, "ranks", "example", "-f", F, "--by", "prompt", "--format", "json")
    assert code == 0
    assert set(pd.DataFrame(json.loads(out))["prompt"]) == {"p1", "p2", "p3", "p4"}


def test_by_on_a_plain_formula_is_an_error(capsys):
    code, _, err = run(capsys, "contrasts", "example", "-f", "correct ~ model + (1|subject)",
                       "--by", "prompt")
    assert code == 2 and "no covariate" in err


def test_scores_by(capsys):
    code, out, _ = run(capsys, "scores", "example", "-f", F, "--by", "prompt", "--format", "json")
    assert code == 0
    got = pd.DataFrame(json.loads(out))
    want = api().model_scores(by="prompt")
    assert got["estimate"].round(12).tolist() == want["estimate"].round(12).tolist()
