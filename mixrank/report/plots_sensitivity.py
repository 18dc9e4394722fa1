"""Stage report: plot of the clustered verdict's stability across sensitivity checks.

Inputs: the per-pair stability table of
:func:`mixrank.design.sensitivity.stability` (``FitResult.sensitivity(...,
summary=True)``): columns ``kind, grouping, model_a, model_b, stability,
resolved_cluster``.
Outputs: a matplotlib Axes in the shared look of :mod:`mixrank.report.style`.
Contents: :func:`plot_sensitivity`.  Draws only; the shares come from the
design stage.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mixrank.errors import DataError
from mixrank.report import style

__all__ = ["plot_sensitivity", "STABILITY_COLUMNS"]

#: Columns of the stability table the HTML report shows (when present).
STABILITY_COLUMNS = ("kind", "grouping", "model_a", "model_b", "replicates", "stability",
                     "share_resolved_cluster", "ci_lower", "ci_upper", "n_star_cluster",
                     "n_star_bootstrap", "p_value")

_MARKERS = {"loso": "o", "bootstrap": "s", "clusterings": "D"}


def plot_sensitivity(table: pd.DataFrame, *, ax: Any = None, title: str | None = None) -> Any:
    """Per pair, the share of replicates that keep the clustered verdict, per check.

    Parameters
    ----------
    table : pandas.DataFrame
        A stability table (not modified).
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        One row per pair (first at the top, labelled with the full fit's
        verdict), x = stability in [0, 1], one marker per check (leave one
        out, cluster bootstrap, each named grouping, random clusterings).
        A dashed line at 1: every replicate agrees with the full fit.

    Raises
    ------
    DataError
        Not a stability table, or empty.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import mixrank
    >>> from mixrank.report.plots_sensitivity import plot_sensitivity
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> ax = plot_sensitivity(res.sensitivity("loso,bootstrap", draws=200, rng=1, summary=True))
    >>> ax.get_xlabel()
    'share of replicates keeping the clustered verdict'
    """
    need = ["kind", "grouping", "model_a", "model_b", "stability", "resolved_cluster"]
    if not isinstance(table, pd.DataFrame) or any(c not in table.columns for c in need):
        raise DataError(f"plot_sensitivity needs the stability table of "
                        f"FitResult.sensitivity(..., summary=True) with columns {need}")
    if len(table) == 0:
        raise DataError("stability table is empty; nothing to plot")
    pairs = list(dict.fromkeys(zip(table["model_a"], table["model_b"])))
    checks = list(dict.fromkeys(zip(table["kind"], table["grouping"])))
    y_of = {p: float(len(pairs) - 1 - i) for i, p in enumerate(pairs)}
    with style.style_context():
        if ax is None:
            ax = style.new_axes(len(pairs), width=8.0)
        k = len(checks)
        offsets = (np.arange(k) - (k - 1) / 2) * (0.5 / max(k, 1))
        for (kind, grouping), off, color in zip(checks, offsets, style.COMPONENT_COLORS * 4):
            g = table[(table["kind"] == kind) & (table["grouping"] == grouping)]
            y = np.array([y_of[(a, b)] for a, b in zip(g["model_a"], g["model_b"])])
            label = {"loso": f"leave one {grouping} out", "bootstrap": f"{grouping} bootstrap"
                     }.get(kind, f"clustering: {grouping}")
            ax.plot(g["stability"].to_numpy(float), y + off, _MARKERS.get(kind, "o"),
                    color=color, label=label, linestyle="none", markersize=6, zorder=3)
        ax.axvline(1.0, color=style.COLORS["reference"], linestyle="--", linewidth=1)
        verdict = {(a, b): bool(v) for a, b, v in zip(table["model_a"], table["model_b"],
                                                      table["resolved_cluster"])}
        ax.set_yticks([y_of[p] for p in pairs])
        ax.set_yticklabels([f"{a} vs {b} ({'resolved' if verdict[(a, b)] else 'unresolved'})"
                            for a, b in pairs])
        ax.set_xlim(-0.03, 1.08)
        ax.set_xlabel("share of replicates keeping the clustered verdict")
        ax.legend(loc="lower left", fontsize="small", frameon=False)
        if title:
            ax.set_title(title)
    return style.fit_figure(ax)
