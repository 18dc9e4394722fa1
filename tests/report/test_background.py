"""The page part built in a forked child equals the one built in process."""

from __future__ import annotations

import os
import warnings

import matplotlib
import pytest

import mixrank
from mixrank.errors import DataError
from mixrank.report import background
from mixrank.report.background import Background
from mixrank.report.html import render_report

matplotlib.use("Agg")

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


@pytest.fixture(scope="module")
def fit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())


@needs_fork
def test_forked_sensitivity_part_is_the_in_process_page(fit, monkeypatch):
    kw = dict(sections=["leaderboard", "resolution"], sensitivity="loso,bootstrap")
    forked = render_report(fit, **kw)
    monkeypatch.setattr(background, "FORK", False)
    in_process = render_report(fit, **kw)
    assert "How robust is the clustered verdict?" in forked
    assert forked == in_process                       # tables and PNG bytes alike


@needs_fork
def test_child_answer_error_and_warning_reach_the_parent():
    parent = os.getpid()
    assert Background(lambda: f"pid {os.getpid()}").start().result() != f"pid {parent}"

    def bad() -> str:
        raise DataError("bad input in the child")

    with pytest.raises(DataError, match="bad input in the child"):
        Background(bad).start().result()

    def warns() -> str:
        warnings.warn("careful: from the child", UserWarning, stacklevel=1)
        return "done"

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert Background(warns).start().result() == "done"
    assert [str(w.message) for w in caught] == ["careful: from the child"]


@needs_fork
def test_a_child_that_dies_is_replaced_by_the_builder_in_process():
    calls = []

    def build() -> str:
        calls.append(os.getpid())
        if len(calls) == 1 and os.getpid() != parent:
            os._exit(3)                               # the child dies without an answer
        return "built"

    parent = os.getpid()
    assert Background(build).start().result() == "built"
    assert calls == [parent]                          # the child's call is not the parent's


def test_without_fork_the_builder_runs_in_process(monkeypatch):
    monkeypatch.setattr(background, "FORK", False)
    job = Background(lambda: str(os.getpid())).start()
    assert job.result() == str(os.getpid())
    job.cancel()                                      # nothing to stop: a no-op


@needs_fork
def test_cancel_reaps_an_unused_child():
    job = Background(lambda: "never taken").start()
    pid = job._pid
    job.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
