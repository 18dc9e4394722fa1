"""Stage report: the plot specific to the binomial GLMM page (its variance components).

Inputs: ``GlmmResult.variance_components()`` (columns ``group, variance,
std_dev``; one row per random term, logit scale).  Outputs: a matplotlib
Axes in the shared look of :mod:`mixrank.report.style`.  Contents:
:func:`plot_glmm_components`.  The other plots of the binomial page reuse
the linear report's (:mod:`mixrank.report.plots`,
:mod:`~mixrank.report.plots_scores`, :mod:`~mixrank.report.plots_ranks`,
:mod:`~mixrank.report.plots_resolution`).  Draws only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mixrank.report import style
from mixrank.report.plots import checked_table

__all__ = ["plot_glmm_components"]


def plot_glmm_components(table: pd.DataFrame, *, ax: Any = None, title: str | None = None) -> Any:
    """One bar per random term: its standard deviation on the logit scale.

    Parameters
    ----------
    table : pandas.DataFrame
        ``GlmmResult.variance_components()`` (``group, variance, std_dev``).
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Terms in the table's (formula) order, first at the top; bars of
        ``std_dev`` labelled with the variance; singular terms (``singular``
        True) hatched.

    Raises
    ------
    DataError
        Not a DataFrame, missing columns, an empty table.
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).
    """
    t = checked_table(table, "variance_components", ("group", "variance", "std_dev"),
                      "plot_glmm_components").reset_index(drop=True)
    n = len(t)
    groups = t["group"].astype(str).tolist()
    with style.style_context():
        if ax is None:
            ax = style.new_axes(n)
        y = np.arange(n)[::-1].astype(float)
        sd = t["std_dev"].to_numpy(dtype=float)
        sing = t["singular"].to_numpy(dtype=bool) if "singular" in t.columns else np.zeros(n, bool)
        for i, g in enumerate(groups):
            ax.barh(y[i], sd[i], height=0.62, color=style.component_color(g, groups),
                    edgecolor="white", hatch="//" if sing[i] else None)
            ax.text(sd[i], y[i], f"  var {t['variance'].iloc[i]:.3g}", va="center",
                    fontsize="small")
        ax.set_yticks(y)
        ax.set_yticklabels(groups)
        ax.set_ylim(-0.7, n - 0.3)
        ax.set_xlim(0, max(float(sd.max()), 1e-3) * 1.35)
        style.finish_axes(ax, title=title, xlabel="standard deviation of the random intercepts "
                                                  "(logit scale)")
    return style.fit_figure(ax)
