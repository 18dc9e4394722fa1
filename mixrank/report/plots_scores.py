"""Stage report: the leaderboard plot (each model's score with its interval).

Inputs: a model-score table from ``FitResult.model_scores()`` (columns
``model, estimate, ci_lower, ci_upper``; ``iid_std_error`` and ``level``
used when present; with a contrasts table, the neighbours whose adjusted
contrast rejects are marked).  Outputs: a matplotlib Axes in the shared look of
:mod:`mixrank.report.style`.  Contents: :func:`plot_model_scores`,
:func:`resolved_neighbours`, :func:`interval_rows` (the
one-row-per-model interval layout, shared with
:mod:`mixrank.report.plots_judge`).  Draws
only; computes no statistics (the iid interval is ``estimate +- z
iid_std_error`` with the normal quantile, as lm-evaluation-harness shows it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from mixrank.report import style
from mixrank.report.plots import checked_table

__all__ = ["plot_model_scores", "interval_rows", "resolved_neighbours"]

_COLUMNS = ("model", "estimate", "ci_lower", "ci_upper")


def plot_model_scores(table: pd.DataFrame, *, ax: Any = None, title: str | None = None,
                      contrasts: pd.DataFrame | None = None) -> Any:
    """Plot each model's score with its confidence interval, best at the top.

    Parameters
    ----------
    table : pandas.DataFrame
        ``FitResult.model_scores()`` (``model, estimate, ci_lower,
        ci_upper``; with ``iid_std_error`` the interval treating cells as
        independent is drawn beside it, thin).
    ax : matplotlib Axes, optional
    title : str, optional
    contrasts : pandas.DataFrame, optional
        ``FitResult.contrasts()``: between two neighbouring rows a ``*``
        marks a pair whose adjusted contrast rejects (``p_adjusted < 1 -
        level``) -- the test of the gap; overlapping score intervals are not
        one.

    Returns
    -------
    matplotlib.axes.Axes
        One row per model: a thick segment from ``ci_lower`` to
        ``ci_upper`` (the formula's unit of inference), a thin one for the
        iid interval, a marker at ``estimate``; with ``contrasts``, the
        resolved neighbours marked at the right edge.

    Raises
    ------
    DataError
        Not a DataFrame, missing columns, an empty table.
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import mixrank
    >>> from mixrank.report.plots_scores import plot_model_scores
    >>> tab = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example()).model_scores()
    >>> plot_model_scores(tab, title="Example").get_title()
    'Example'
    """
    table = checked_table(table, "model_scores", _COLUMNS, "plot_model_scores")
    lev = float(table["level"].iloc[0]) if "level" in table.columns else 0.95
    meta = table.attrs.get("mixrank", {})
    unit = meta.get("unit", meta.get("cluster") or "the formula's unit")
    with style.style_context():
        ax, t, y = interval_rows(table, ax, f"{100 * lev:g}% CI, unit: {unit}",
                                 markeredgecolor="white", markeredgewidth=0.5)
        if "iid_std_error" in t.columns:
            z = stats.norm.ppf(0.5 + lev / 2)
            half = z * t["iid_std_error"]
            ax.hlines(y - 0.22, t["estimate"] - half, t["estimate"] + half,
                      color=style.COLORS["neutral"], linewidth=1.2,
                      label=f"{100 * lev:g}% iid interval (cells independent)", zorder=2)
        if contrasts is not None:
            _mark_neighbours(ax, t, y, contrasts)
        ax.legend(loc="best", fontsize="small", frameon=False)
        arena_scale = {"elo": "Elo scale: 400/ln 10 per unit of log-odds",
                       "logit": "log-strength"}.get(meta.get("scale", ""))
        xlabel = (f"Bradley-Terry score ({arena_scale})" if "bradley_terry" in
                  str(meta.get("method", "")) and arena_scale
                  else f"score ({meta.get('estimand', 'gls')} estimand)")
        style.finish_axes(ax, title=title, xlabel=xlabel)
    return style.fit_figure(ax)


def resolved_neighbours(order: list[str], contrasts: pd.DataFrame) -> list[bool]:
    """For each pair of neighbours in ``order`` (best first): does its adjusted contrast reject
    at ``1 - level`` (``p_adjusted``, else ``p_value``)?  Missing pairs count as not."""
    col = "p_adjusted" if "p_adjusted" in contrasts.columns else "p_value"
    lev = (float(contrasts["level"].iloc[0]) if "level" in contrasts.columns and len(contrasts)
           else 0.95)
    p = {}
    for a, b, v in zip(contrasts["model_a"], contrasts["model_b"], contrasts[col]):
        p[(str(a), str(b))] = p[(str(b), str(a))] = float(v)
    return [p.get((a, b), np.nan) < 1 - lev for a, b in zip(order[:-1], order[1:])]


def _mark_neighbours(ax: Any, t: pd.DataFrame, y: np.ndarray, contrasts: pd.DataFrame) -> None:
    marks = resolved_neighbours(t["_name"].tolist(), contrasts)
    x = float(np.nanmax(t["ci_upper"].to_numpy(dtype=float)))
    first = True
    for i, hit in enumerate(marks):
        if hit:
            ax.plot([x], [(y[i] + y[i + 1]) / 2], marker="*", linestyle="none",
                    color=style.COLORS["significant"], markersize=8, zorder=4,
                    label="neighbours resolved (adjusted contrast)" if first else None)
            first = False


def interval_rows(table: pd.DataFrame, ax: Any, ci_label: str,
                  **dot: Any) -> tuple[Any, pd.DataFrame, np.ndarray]:
    """One row per model, best ``estimate`` at the top: thick interval and a dot.

    Call inside :func:`mixrank.report.style.style_context`.  Rows are sorted
    by ``estimate`` (descending, missing last), ties by model name.

    Parameters
    ----------
    table : pandas.DataFrame
        Checked table with ``model, estimate, ci_lower, ci_upper``.
    ax : matplotlib Axes or None
        None: a new axes sized for the rows.
    ci_label : str
        Legend label of the interval segments.
    **dot
        Extra keyword arguments of the estimate marker.

    Returns
    -------
    (Axes, pandas.DataFrame, numpy.ndarray)
        The axes, the sorted table (with ``_name``), and the rows' y positions.
    """
    t = table.assign(_name=table["model"].astype(str)).sort_values(
        ["estimate", "_name"], ascending=[False, True], kind="stable", na_position="last")
    n = len(t)
    if ax is None:
        ax = style.new_axes(n, width=6.0)
    y = np.arange(n)[::-1].astype(float)
    ax.hlines(y, t["ci_lower"], t["ci_upper"], color=style.COLORS["primary"], linewidth=3,
              alpha=0.8, label=ci_label, zorder=2)
    ax.plot(t["estimate"], y, "o", color=style.COLORS["accent"], markersize=5, zorder=3, **dot)
    ax.set_yticks(y)
    ax.set_yticklabels(t["_name"].tolist())
    ax.set_ylim(-0.7, n - 0.3)
    return ax, t, y
