"""CLI stage: the one-line progress bar on stderr, drawn only on a terminal.

Inputs: a step count; outputs: text on a stream.  Contents: :class:`Progress`
(:class:`mixrank._progress.TextBar`, shared with the API's ``progress=True``
when tqdm is not installed), :func:`progress_enabled`.
"""

from __future__ import annotations

from .._progress import TextBar as Progress
from .._progress import progress_enabled

__all__ = ["Progress", "progress_enabled"]
