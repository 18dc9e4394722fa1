"""Stage report: the plot of a judge-corrected fit (docs/judge.md).

Inputs: ``JudgeResult.model_scores()`` (``model, estimate, ci_lower,
ci_upper, judge_estimate``).  Outputs: :func:`plot_judge_scores` -- per
model the judge-only mean beside the corrected score and its interval, on
one axis, so the judge's bias (and whether it reorders the models) is seen
at a glance.  Draws only; computes no statistics.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from mixrank.report import style
from mixrank.report.plots import checked_table
from mixrank.report.plots_scores import interval_rows

__all__ = ["plot_judge_scores"]


def plot_judge_scores(table: pd.DataFrame, *, ax: Any = None, title: str | None = None) -> Any:
    """Judge-only vs corrected score per model (best corrected score at the top).

    Parameters
    ----------
    table : pandas.DataFrame
        ``JudgeResult.model_scores()``.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Per model: the corrected score's interval (thick), its estimate
        (dot) and the judge-only mean (open square).  Models without a
        correction show the square only.

    Raises
    ------
    DataError
        Not a DataFrame, missing columns, an empty table.
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).
    """
    table = checked_table(table, "model_scores", ("model", "estimate", "ci_lower", "ci_upper",
                                                  "judge_estimate"), "plot_judge_scores")
    lev = float(table["level"].iloc[0]) if "level" in table.columns else 0.95
    with style.style_context():
        ax, t, y = interval_rows(table, ax, f"corrected, {100 * lev:g}% CI")
        ax.plot(t["judge_estimate"], y, "s", markerfacecolor="none",
                markeredgecolor=style.COLORS["neutral"], markersize=6, label="judge only",
                zorder=3)
        ax.legend(loc="best", fontsize="small", frameon=False)
        style.finish_axes(ax, title=title, xlabel="mean reference label (PPI++) vs judge mean")
    return style.fit_figure(ax)
