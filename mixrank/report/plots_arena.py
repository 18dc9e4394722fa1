"""Stage report: the judge-correction plot of an arena (leaderboards side by side).

Inputs: ``ArenaResult.leaderboards()`` of a ``judge=`` fit (``model`` and, per
board, ``<board>, <board>_lower, <board>_upper``).  Outputs: a matplotlib
Axes: one row per model (best corrected score at the top), each board's
score and interval drawn with a small vertical offset, in the shared look of
:mod:`mixrank.report.style`.  Contents: :func:`plot_arena_boards`.  Draws
only; computes no statistics.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mixrank.errors import DataError
from mixrank.report import style

__all__ = ["plot_arena_boards"]

_PALETTE = ("#999999", "#E69F00", "#56B4E9", "#CC79A7", "#0072B2")


def plot_arena_boards(table: pd.DataFrame, *, ax: Any = None, title: str | None = None,
                      scale: str = "elo") -> Any:
    """Human-only, judge-only and corrected scores of each model, side by side.

    Parameters
    ----------
    table : pandas.DataFrame
        ``ArenaResult.leaderboards()``.
    ax : matplotlib Axes, optional
    title : str, optional
    scale : {"elo", "logit"}
        The arena's scale (axis label).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    DataError
        A table without ``model`` or without a ``<board>_lower`` column.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixrank.report.plots_arena import plot_arena_boards
    >>> t = pd.DataFrame({"model": ["a", "b"], "human_only": [1010.0, 990.0],
    ...                   "human_only_lower": [990.0, 970.0], "human_only_upper": [1030.0, 1010.0],
    ...                   "corrected": [1012.0, 988.0], "corrected_lower": [1000.0, 976.0],
    ...                   "corrected_upper": [1024.0, 1000.0]})
    >>> plot_arena_boards(t, title="boards").get_title()
    'boards'
    """
    boards = [c[:-6] for c in table.columns if c.endswith("_lower")]
    if "model" not in table.columns or not boards:
        raise DataError("plot_arena_boards needs ArenaResult.leaderboards() (columns model, "
                        "<board>, <board>_lower, <board>_upper)")
    t = table.sort_values(boards[-1], ascending=True, kind="stable").reset_index(drop=True)
    with style.style_context():
        if ax is None:
            ax = style.new_axes(len(t))
        y = np.arange(len(t), dtype=float)
        step = 0.6 / max(len(boards), 1)
        for k, b in enumerate(boards):
            off = (k - (len(boards) - 1) / 2) * step
            color = "#000000" if b == "corrected" else _PALETTE[k % len(_PALETTE)]
            ax.hlines(y + off, t[f"{b}_lower"], t[f"{b}_upper"], color=color, linewidth=1.4,
                      zorder=2)
            ax.plot(t[b], y + off, "o", color=color, markersize=3.5, zorder=3,
                    label=b.replace("_", " "))
        ax.set_yticks(y)
        ax.set_yticklabels(t["model"])
        ax.legend(loc="best", fontsize="small", frameon=False)
        label = {"elo": "Elo scale", "logit": "log-strength"}.get(scale, scale)
        style.finish_axes(ax, title=title, xlabel=f"Bradley-Terry score ({label})")
    return style.fit_figure(ax)
