"""Stage report: plot of rank confidence intervals.

Inputs: a rank-interval table from :func:`mixrank.inference.ranks.rank_intervals`,
:func:`~mixrank.inference.ranks.rank_intervals_of` or
``FitResult.rank_intervals`` (columns ``model, estimate, rank, rank_lower,
rank_upper``).  Outputs: a matplotlib Axes in the shared look of :mod:`mixrank.report.style`.  Contents:
:func:`plot_rank_intervals`.  Draws only; computes no statistics.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from mixrank.report import style
from mixrank.report.plots import checked_table

__all__ = ["plot_rank_intervals"]

_COLUMNS = ("model", "estimate", "rank", "rank_lower", "rank_upper")


def plot_rank_intervals(table: pd.DataFrame, *, ax: Any = None, title: str | None = None) -> Any:
    """Plot each model's point rank and rank confidence interval.

    Parameters
    ----------
    table : pandas.DataFrame
        A rank-interval table (``model, estimate, rank, rank_lower,
        rank_upper``; ``level`` and ``attrs["mixrank"]`` are used for the
        axis label when present).
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure is created when None.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
        One row per model, best score at the top: a horizontal segment from
        ``rank_lower`` to ``rank_upper`` and a marker at the point ``rank``;
        the x axis is the rank (1 = best, on the left).

    Raises
    ------
    DataError
        Missing columns or an empty table.
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).

    Notes
    -----
    Models are ordered by ``estimate`` (descending), ties by model name, so
    the row order is the leaderboard order.  The table is not modified.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import mixrank
    >>> from mixrank.report.plots_ranks import plot_rank_intervals
    >>> tab = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example()).rank_intervals()
    >>> ax = plot_rank_intervals(tab, title="Example")
    >>> ax.get_title()
    'Example'
    """
    table = checked_table(table, "rank_intervals", _COLUMNS, "plot_rank_intervals")
    t = table.assign(_name=table["model"].astype(str)).sort_values(
        ["estimate", "_name"], ascending=[False, True], kind="stable")
    n = len(t)
    meta = table.attrs.get("mixrank", {}) if hasattr(table, "attrs") else {}
    lev = table["level"].iloc[0] if "level" in table.columns else meta.get("level")
    parts = []
    if lev is not None:
        parts.append(f"{100 * float(lev):g}%")
    if meta.get("coverage"):
        parts.append(str(meta["coverage"]))
    if meta.get("method"):
        parts.append(str(meta["method"]))
    with style.style_context():
        if ax is None:
            ax = style.new_axes(n, width=6.0)
        y = list(range(n))[::-1]                      # best at the top
        ax.hlines(y, t["rank_lower"], t["rank_upper"], color=style.COLORS["primary"], linewidth=2.5,
                  alpha=0.8, label="rank interval", zorder=2)
        ax.plot(t["rank"], y, "o", color=style.COLORS["accent"], markersize=5,
                markeredgecolor="white", markeredgewidth=0.5, label="point rank", zorder=3)
        ax.set_yticks(y)
        ax.set_yticklabels(t["_name"].tolist())
        M = int(max(t["rank_upper"].max(), n))
        ax.set_xlim(0.5, M + 0.5)
        ax.set_ylim(-0.7, n - 0.3)
        style.finish_axes(ax, title=title,
                          xlabel="rank (1 = best)" + (f"; {', '.join(parts)} interval" if parts else ""))
    return style.fit_figure(ax)
