"""Hostile command lines: every option has help text, ``--pair``
repeats and spaces, ``--draws`` above its bound, ``report -o`` on a full device,
``anova`` refused before any fit.  Each failed before its fix."""

from __future__ import annotations

import argparse
import io
import os
import warnings

import pandas as pd
import pytest

import mixrank
from mixrank._util import MAX_DRAWS
from mixrank.cli import build_parser
from tests.cli.test_cli import run

F1 = "correct ~ model + (1|subject)"


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("MIXRANK_PROGRESS", "0")


def _options(parser: argparse.ArgumentParser, where: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{where} {name}")
        else:
            yield where, action


def test_every_cli_option_has_help_text():
    from mixrank.cli.options import FORMER_FLAGS

    # former flags (docs/vocabulary.md) are hidden from --help on purpose
    missing = [f"{where} {'/'.join(a.option_strings) or a.dest}"
               for where, a in _options(build_parser(), "mixrank")
               if (not a.help or a.help == argparse.SUPPRESS or not a.help.strip())
               and not set(a.option_strings) <= set(FORMER_FLAGS)]
    assert not missing, f"options without help text: {missing}"
    # the walk reaches every subcommand and option (guards against a walk that sees nothing)
    seen = {w for w, _ in _options(build_parser(), "mixrank")}
    assert {"mixrank fit", "mixrank report", "mixrank rci", "mixrank plan"} <= seen


def test_help_mentions_the_documented_options(capsys):
    code, out, _ = run(capsys, "fit", "--help")
    assert code == 0
    for opt in ("--method", "--estimand", "--na", "--level"):
        block = out.split(opt, 2)[-1][:200]
        assert len(block.split()) > 3, (opt, block)


def test_pair_with_surrounding_spaces_is_matched_with_a_note(capsys):
    code, out, err = run(capsys, "contrasts", "example", "-f", F1, "--pair", " m01 ,m02",
                         "--format", "csv")
    assert code == 0
    assert "spaces around ' m01 ' were removed (matched as 'm01')" in err
    assert pd.read_csv(io.StringIO(out))[["model_a", "model_b"]].values.tolist() == [["m01", "m02"]]
    # no note when nothing was stripped
    code, _, err = run(capsys, "contrasts", "example", "-f", F1, "--pair", "m01,m02")
    assert code == 0 and "spaces" not in err


def test_repeated_and_reversed_pairs_merged_and_counted_once(capsys):
    ex = mixrank.load_example()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        once = mixrank.fit(F1, ex, pairs=[("m01", "m02"), ("m01", "m03")]).contrasts()
    with pytest.warns(mixrank.MixrankWarning, match=r"names 2 pair\(s\) twice"):
        twice = mixrank.fit(F1, ex, pairs=[("m01", "m02"), ("m02", "m01"), ("m01", "m03"),
                                           ("m01", "m02")]).contrasts()
    pd.testing.assert_frame_equal(once, twice)         # Holm family of 2, not 4
    assert twice.attrs["mixrank"]["family_size"] == 2
    code, out, err = run(capsys, "contrasts", "example", "-f", F1, "--pair", "m01,m02",
                         "--pair", "m02,m01", "--pair", "m01,m03", "--format", "csv")
    assert code == 0 and "twice" in err
    got = pd.read_csv(io.StringIO(out))
    assert len(got) == 2
    assert got["p_adjusted"].tolist() == pytest.approx(once["p_adjusted"].tolist(), rel=1e-9)


def test_draws_above_the_bound_refused_before_drawing(capsys):
    code, _, err = run(capsys, "ranks", "example", "-f", F1, "--adjust", "maxt",
                       "--draws", str(10 ** 12))
    assert code == 2 and f"upper bound {MAX_DRAWS}" in err and "--draws" in err
    ex = mixrank.load_example()
    res = mixrank.fit(F1, ex[ex["model"].isin(["m01", "m02", "m03"])])
    for call in (lambda: res.rank_intervals(adjust="maxt", draws=10 ** 12),
                 lambda: res.contrasts(adjust="maxt", draws=10 ** 12),
                 lambda: res.rank_probabilities(draws=MAX_DRAWS + 1),
                 lambda: res.sensitivity("bootstrap", draws=10 ** 9),
                 lambda: mixrank.paired_bootstrap([1, 0, 1, 1], [0, 0, 1, 0], draws=10 ** 12)):
        with pytest.raises(mixrank.MixrankError, match="upper bound 1,000,000"):
            call()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_report_output_write_error_names_the_path(capsys):
    pytest.importorskip("matplotlib")
    code, _, err = run(capsys, "report", "example", "-f", F1, "--pair", "m01,m02",
                       "-o", "/dev/full")
    assert code == 2
    assert "/dev/full" in err and "Traceback" not in err


def test_anova_without_covariate_refused_before_fitting(capsys, monkeypatch):
    import mixrank.cli.fitting as fitting

    def boom(*a, **k):  # pragma: no cover - must not be reached
        raise AssertionError("anova fitted before refusing")

    monkeypatch.setattr(fitting, "fit_from_args", boom)
    code, _, err = run(capsys, "anova", "example", "-f", F1)
    assert code == 2 and "no covariate" in err and "model * x" in err
