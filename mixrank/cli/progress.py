"""CLI stage: a one-line progress bar on stderr, drawn only on a terminal.

Inputs: a step count; outputs: text on a stream.  Contents: :class:`Progress`,
:func:`progress_enabled`.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

__all__ = ["Progress", "progress_enabled"]


class Progress:
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
    >>> with Progress(3, "fitting") as bar:     # silent unless stderr is a terminal
    ...     for _ in range(3):
    ...         bar.update()
    """

    width = 28

    def __init__(self, total: int, label: str, *, stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        self.total, self.label, self.done = max(int(total), 0), label, 0
        self.stream = sys.stderr if stream is None else stream
        self.enabled = progress_enabled(self.stream) if enabled is None else bool(enabled)

    def __enter__(self) -> Progress:
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

    def __exit__(self, *exc: Any) -> None:
        if self.enabled and self.total:
            self.stream.write("\r" + " " * (len(self.label) + self.width + 24) + "\r")
            self.stream.flush()


def progress_enabled(stream: Any = None) -> bool:
    """True when progress bars should be drawn on ``stream`` (default stderr)."""
    env = os.environ.get("MIXRANK_PROGRESS")
    if env in ("0", "1"):
        return env == "1"
    s = sys.stderr if stream is None else stream
    try:
        return bool(s.isatty())
    except (AttributeError, ValueError):
        return False
