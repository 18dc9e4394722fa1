"""Progress on the long steps: ``progress=`` in the API, bars in the CLI.

The API takes ``progress=`` on the fit, the sensitivity refits and the report:
a callable receives ``(done, total)`` after each chunk, ending at
``(total, total)``; ``True`` draws a bar on stderr (tqdm when installed, else
:class:`mixrank._progress.TextBar`).  The CLI draws bars on stderr only when it
is a terminal (``MIXRANK_PROGRESS=1`` forces one here) and ``--quiet``
silences them; the results are the same with or without progress.
"""

from __future__ import annotations

import io
import sys
import warnings

import pandas as pd
import pytest

import mixrank
from mixrank._progress import Reporter, TextBar, as_progress
from mixrank.cli import main
from mixrank.errors import DesignError

F1 = "correct ~ model + (1|subject)"
F2 = "correct ~ model + (1|subject) + (1|prompt)"


def _fit(formula: str = F2):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(formula, mixrank.load_example())


def _monotone_to_total(calls: list[tuple[int, int]], total: int) -> None:
    assert calls, "no progress reported"
    done = [d for d, _ in calls]
    assert all(t == total for _, t in calls)
    assert done == sorted(done) and done[-1] == total


def test_sensitivity_progress_callable_counts_replicates():
    res = _fit()
    calls: list[tuple[int, int]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tab = res.sensitivity("loso", top=3, progress=lambda d, t: calls.append((d, t)))
        plain = res.sensitivity("loso", top=3)
    n_levels = res.frame.term_levels[tab.attrs["mixrank"]["unit"]]
    _monotone_to_total(calls, n_levels)
    pd.testing.assert_frame_equal(tab, plain)


@pytest.mark.parametrize("formula,B", [(F2, 6), (F1, 20)])
def test_bootstrap_progress_several_terms_and_one_term(formula, B):
    res = _fit(formula)
    calls: list[tuple[int, int]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res.sensitivity("bootstrap", top=3, draws=B, rng=1,
                        progress=lambda d, t: calls.append((d, t)))
    _monotone_to_total(calls, B)


def test_report_progress_reports_each_section(tmp_path):
    from mixrank.report.html import SECTIONS, write_report

    res = _fit(F1)
    calls: list[tuple[int, int]] = []
    write_report(res, tmp_path / "r.html", progress=lambda d, t: calls.append((d, t)))
    _monotone_to_total(calls, len(SECTIONS))


def test_progress_true_draws_a_bar_on_stderr(capsys):
    res = _fit(F1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res.sensitivity("loso", top=2, progress=True)
        mixrank.fit(F1, mixrank.load_example(), progress=True)
    err = capsys.readouterr().err
    assert "leave-one-out" in err and "fitting pairs" in err


def test_text_bar_without_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)          # tqdm stays optional
    stream = io.StringIO()
    rep = Reporter(None, "work", stream=stream)
    for i in range(1, 5):
        rep(i, 4)
    assert "work [" in stream.getvalue() and "4/4" in stream.getvalue()
    assert rep.bar is None                                    # closed at the total


@pytest.mark.parametrize("bad", [3, "yes", 1.5])
def test_bad_progress_is_a_design_error(bad):
    with pytest.raises(DesignError, match=r"progress=.* is not callable; expected True"):
        as_progress(bad, "x")
    with pytest.raises(DesignError, match="is not callable"):
        _fit(F1).sensitivity("loso", top=2, progress=bad)


def test_silent_values():
    assert as_progress(None, "x") is None and as_progress(False, "x") is None
    bar = TextBar(3, "quiet", stream=io.StringIO(), enabled=False)
    bar.update()
    assert bar.stream.getvalue() == ""


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_sensitivity_and_report_bars_and_quiet(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("MIXRANK_PROGRESS", "1")               # as on a terminal
    args = ("resolution", "example", "-f", F1, "--sensitivity", "loso", "--top", "3",
            "--format", "csv")
    code, out, err = _cli(capsys, *args)
    assert code == 0 and "leave-one-out" in err
    code_q, out_q, err_q = _cli(capsys, *args, "--quiet")
    assert code_q == 0 and "leave-one-out" not in err_q and out_q == out
    rep = ("report", "example", "-f", F1, "-o", str(tmp_path / "r.html"))
    code, _, err = _cli(capsys, *rep)
    assert code == 0 and "report sections" in err
    code, _, err = _cli(capsys, *rep, "-q")
    assert code == 0 and "report sections" not in err and "wrote" in err


def test_cli_no_bars_off_a_terminal(capsys, monkeypatch):
    monkeypatch.delenv("MIXRANK_PROGRESS", raising=False)     # stderr captured: not a tty
    code, _, err = _cli(capsys, "resolution", "example", "-f", F1, "--sensitivity", "loso",
                        "--top", "3", "--format", "csv")
    assert code == 0 and "leave-one-out" not in err
