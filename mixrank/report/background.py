"""Stage report: one part of the page built in a forked child while the rest is built.

Inputs: a builder (no arguments, returns an HTML fragment) whose inputs exist
when the page starts -- the verdict-stability part of the resolution section
(:meth:`FitResult.sensitivity`, seconds of refits and resamples) -- and the
page it belongs to.  Outputs: the fragment, the same text the builder returns
in process (same code, same inputs, same seed), and the warnings it raised,
re-issued in the parent when the fragment is taken.

The child is a ``fork`` of the page's process (Linux): it inherits the fitted
result, runs the builder and sends the pickled fragment back through a pipe,
so the refits overlap the other sections' tables and plots on a machine with
a second core.  Without ``fork`` (or off Linux, where it is not the usual
start method), while other threads run (a notebook kernel), when progress is
being reported (a bar in one process only) or when the child fails for any
reason outside the builder (killed, out of memory, an unpicklable answer),
the builder runs in process instead: the page is the same either way.
Contents: :class:`Background`.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
import warnings
from collections.abc import Callable

__all__ = ["Background"]

#: False turns the child off (the builder then runs in process); tests compare both.
#: Linux only (fork is the platform's own multiprocessing start method there).
FORK = hasattr(os, "fork") and sys.platform.startswith("linux")


class Background:
    """``build()`` started in a forked child; :meth:`result` returns its fragment.

    Parameters
    ----------
    build : callable
        No arguments; returns a str.  Its mixrank errors are the builder's own
        business (wrap it in :func:`~mixrank.report.html_format.guard`);
        anything it raises is raised again by :meth:`result`.
    """

    def __init__(self, build: Callable[[], str]) -> None:
        self._build = build
        self._pid: int | None = None
        self._fd: int | None = None

    def start(self) -> Background:
        """Fork the child (no-op where fork is unavailable or fails)."""
        if not FORK or threading.active_count() > 1:   # other threads: a fork may deadlock
            return self
        r, w = os.pipe()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return self
        if pid == 0:                                   # the child: build, send, exit
            code = 1
            try:
                os.close(r)
                with warnings.catch_warnings(record=True) as caught:
                    try:
                        out: tuple = ("ok", self._build())
                    except BaseException as exc:       # noqa: BLE001 - sent to the parent
                        out = ("raise", exc)
                payload = [(str(c.message), c.category, c.filename, c.lineno) for c in caught]
                try:
                    data = pickle.dumps((out, payload))
                except Exception:                      # noqa: BLE001 - unpicklable: parent redoes
                    data = b""
                with os.fdopen(w, "wb") as f:
                    f.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        self._pid, self._fd = pid, r
        return self

    def result(self) -> str:
        """The fragment: the child's, or ``build()`` in process when there is no child's."""
        data = self._collect()
        if data:
            try:
                (kind, value), caught = pickle.loads(data)
            except Exception:                          # noqa: BLE001 - a torn message: redo
                kind = None
            if kind is not None:
                for message, category, filename, lineno in caught:
                    warnings.warn_explicit(message, category, filename, lineno,
                                           registry=_registry(filename))
                if kind == "raise":
                    raise value
                return value
        return self._build()

    def cancel(self) -> None:
        """Stop and reap the child if its fragment was never taken."""
        if self._pid is not None:
            try:
                os.kill(self._pid, 9)
            except OSError:
                pass
        self._collect()

    def _collect(self) -> bytes:
        if self._pid is None:
            return b""
        fd, pid = self._fd, self._pid
        self._fd = self._pid = None
        chunks = []
        try:
            with os.fdopen(fd, "rb") as f:             # type: ignore[arg-type]
                while chunk := f.read(1 << 20):
                    chunks.append(chunk)
        except OSError:
            chunks = []
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            status = 1
        return b"".join(chunks) if status == 0 else b""


def _registry(filename: str) -> dict | None:
    """The ``__warningregistry__`` of the module at ``filename`` (as ``warnings.warn`` uses)."""
    for mod in list(sys.modules.values()):
        if getattr(mod, "__file__", None) == filename:
            return mod.__dict__.setdefault("__warningregistry__", {})
    return None
