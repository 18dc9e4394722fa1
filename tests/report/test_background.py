"""The page part built in a forked child equals the one built in process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import matplotlib
import pytest

from mixrank.report import background
from mixrank.report.background import Background

matplotlib.use("Agg")

needs_fork = pytest.mark.skipif(not background.FORK, reason="no os.fork on this platform")


def _fresh(code: str) -> None:
    """Run ``code`` in a fresh interpreter: Background forks only while no other thread
    runs, and earlier tests of a session (a Dask client, a progress monitor) may leave
    threads behind, so the forking paths are checked where none can be."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=300, env={**os.environ, "MPLBACKEND": "Agg"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip().endswith("ok"), p.stdout[-2000:]


@needs_fork
def test_forked_sensitivity_part_is_the_in_process_page():
    _fresh("""
        import warnings
        import mixrank
        from mixrank.report import background
        from mixrank.report.html import render_report
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
            kw = dict(sections=["leaderboard", "resolution"], sensitivity="loso,bootstrap")
            started = []
            real = background.Background.start
            def spy(self):
                out = real(self)
                started.append(self._pid)
                return out
            background.Background.start = spy
            forked = render_report(fit, **kw)
            assert started and all(pid is not None for pid in started), started
            background.FORK = False
            in_process = render_report(fit, **kw)
        assert "How robust is the clustered verdict?" in forked
        assert forked == in_process                       # tables and PNG bytes alike
        print("ok")
    """)


@needs_fork
def test_child_answer_error_and_warning_reach_the_parent():
    _fresh("""
        import os, warnings
        import pytest
        from mixrank.errors import DataError
        from mixrank.report.background import Background
        parent = os.getpid()
        assert Background(lambda: f"pid {os.getpid()}").start().result() != f"pid {parent}"
        def bad():
            raise DataError("bad input in the child")
        with pytest.raises(DataError, match="bad input in the child"):
            Background(bad).start().result()
        def warns():
            warnings.warn("careful: from the child", UserWarning, stacklevel=1)
            return "done"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert Background(warns).start().result() == "done"
        assert [str(w.message) for w in caught] == ["careful: from the child"]
        print("ok")
    """)


@needs_fork
def test_a_child_that_dies_is_replaced_by_the_builder_in_process():
    _fresh("""
        import os
        from mixrank.report.background import Background
        calls = []
        parent = os.getpid()
        def build():
            calls.append(os.getpid())
            if os.getpid() != parent:
                os._exit(3)                               # the child dies without an answer
            return "built"
        job = Background(build).start()
        assert job._pid is not None                       # a child was forked
        assert job.result() == "built"
        assert calls == [parent]                          # the child's call is not the parent's
        print("ok")
    """)


def test_without_fork_the_builder_runs_in_process(monkeypatch):
    monkeypatch.setattr(background, "FORK", False)
    job = Background(lambda: str(os.getpid())).start()
    assert job.result() == str(os.getpid())
    job.cancel()                                      # nothing to stop: a no-op


@needs_fork
def test_cancel_reaps_an_unused_child():
    _fresh("""
        import os
        import pytest
        from mixrank.report.background import Background
        job = Background(lambda: "never taken").start()
        pid = job._pid
        assert pid is not None
        job.cancel()
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        print("ok")
    """)


def test_with_another_thread_running_the_builder_runs_in_process():
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        job = Background(lambda: str(os.getpid())).start()
        assert job._pid is None                           # no fork beside a running thread
        assert job.result() == str(os.getpid())
    finally:
        stop.set()
        t.join()
