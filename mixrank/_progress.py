"""Progress reporting for the long steps (no stage): the ``progress=`` argument of the API.

Inputs: what the user passed as ``progress=`` (None / False, True, or a
callable) and a label.  Outputs: a :class:`Reporter` the step calls as
``reporter(done, total)``, or None (nothing to report).  Contents:
:func:`as_progress`, :class:`Reporter`, :class:`TextBar` (the one-line bar
the command line draws on a terminal).

``progress=True`` draws a ``tqdm`` bar when tqdm is installed (it stays an
optional dependency) and otherwise :class:`TextBar` on stderr; a callable
receives ``(done, total)`` after each chunk of work.  Nothing here imports
numpy or pandas: the command line's start-up imports this module.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from .errors import DesignError

__all__ = ["as_progress", "Reporter", "TextBar", "progress_enabled"]


def progress_enabled(stream: Any = None) -> bool:
    """True when progress bars should be drawn on ``stream`` (default stderr).

    ``MIXRANK_PROGRESS=0`` / ``1`` overrides; otherwise only on a terminal.
    """
    env = os.environ.get("MIXRANK_PROGRESS")
    if env in ("0", "1"):
        return env == "1"
    s = sys.stderr if stream is None else stream
    try:
        return bool(s.isatty())
    except (AttributeError, ValueError):
        return False


class TextBar:
    """A one-line progress bar on a terminal; silent when the stream is not a terminal.

    Parameters
    ----------
    total : int
        Number of steps.
    label : str
        Text before the bar.
    stream : file-like, optional
        Default ``sys.stderr``.
    enabled : bool, optional
        Default: ``stream.isatty()``; ``MIXRANK_PROGRESS=0`` / ``1`` overrides.

    Examples
    --------
    >>> with TextBar(3, "fitting") as bar:     # silent unless stderr is a terminal
    ...     for _ in range(3):
    ...         bar.update()
    """

    width = 28

    def __init__(self, total: int, label: str, *, stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        self.total, self.label, self.done = max(int(total), 0), label, 0
        self.stream = sys.stderr if stream is None else stream
        self.enabled = progress_enabled(self.stream) if enabled is None else bool(enabled)

    def __enter__(self) -> TextBar:
        self._draw()
        return self

    def update(self, k: int = 1) -> None:
        self.done = min(self.total, self.done + k)
        self._draw()

    def _draw(self) -> None:
        if not self.enabled or self.total == 0:
            return
        filled = self.width * self.done // self.total
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] "
                          f"{self.done}/{self.total}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.total:
            self.stream.write("\r" + " " * (len(self.label) + self.width + 24) + "\r")
            self.stream.flush()

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Reporter:
    """``reporter(done, total)`` after each chunk of a long step; :meth:`close` at its end.

    Wraps a user callable (called as is), or draws a bar (``tqdm`` when
    installed, else :class:`TextBar`) labelled ``label``; a bar is opened on
    the first call and closed when ``done`` reaches ``total`` or at
    :meth:`close`.
    """

    def __init__(self, target: Callable[[int, int], Any] | None, label: str, *,
                 stream: TextIO | None = None) -> None:
        self.target, self.label, self.stream = target, label, stream
        self.bar: Any = None
        self.done = 0

    def __call__(self, done: int, total: int) -> None:
        if self.target is not None:
            self.target(done, total)
            return
        if self.bar is None:
            self.bar, self.done = _open_bar(total, self.label, self.stream), 0
        self.bar.update(max(0, done - self.done))
        self.done = done
        if done >= total:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _open_bar(total: int, label: str, stream: TextIO | None) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        bar = TextBar(total, label, stream=stream, enabled=True)
        bar.__enter__()
        return bar
    return tqdm(total=total, desc=label, file=sys.stderr if stream is None else stream,
                leave=False)


def as_progress(progress: Any, label: str, *, argument: str = "progress"
                ) -> Reporter | None:
    """The ``progress=`` argument as a :class:`Reporter` (None: report nothing).

    Parameters
    ----------
    progress : None, bool or callable
        None / False: silent; True: a bar on stderr (``tqdm`` when
        installed, else a plain text bar); a callable: called as
        ``progress(done, total)``.
    label : str
        What the bar says, e.g. ``"leave-one-out"``.

    Raises
    ------
    DesignError
        Anything else, naming the argument and what it accepts.
    """
    if progress is None or progress is False:
        return None
    if progress is True:
        return Reporter(None, label)
    if callable(progress):
        return Reporter(progress, label)
    raise DesignError(f"{argument}={progress!r} is not callable; expected True (a bar on "
                      f"stderr), a function {argument}(done, total), or None")
