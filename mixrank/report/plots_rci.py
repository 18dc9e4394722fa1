"""Stage report: plots of item-level reliable change (docs/methods.md §8).

Inputs: a :class:`~mixrank.change.result.ReliableChange` or the tidy tables it
returns (``ReliableChange.items()`` for the item scatter,
``ReliableChange.by_subject()`` for the subject bars).
Outputs: a matplotlib Axes in the shared look of :mod:`mixrank.report.style`.
Contents: :func:`plot_rci` (p before against p after per item, coloured by
class, identical points aggregated and sized by their count) and
:func:`plot_rci_subjects` (net change and churn per subject, reversals
highlighted).  Draws only; every number comes from the design stage (the
only arithmetic is counting identical points and splitting a churn bar for
display).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mixrank.change.result import CLASSES
from mixrank.errors import DataError
from mixrank.report import style
from mixrank.report.plots import checked_table

__all__ = ["plot_rci", "plot_rci_subjects", "CLASS_COLORS", "MAX_MARKER_AREA"]

#: Colour of each reliable-change class (colour-blind safe, Okabe-Ito based).
CLASS_COLORS: dict[str, str] = {
    "improved": "#009E73",
    "deteriorated": style.COLORS["accent"],
    "no_change": style.COLORS["primary"],
    "floor_ceiling": style.COLORS["neutral"],
}
#: Marker area (points^2) of the most frequent (p_before, p_after, class) point.
MAX_MARKER_AREA = 600.0
_LABELS = {"improved": "improved", "deteriorated": "deteriorated", "no_change": "no reliable change",
           "floor_ceiling": "floor/ceiling in both"}
_METHOD_CLASS = {"rci": "class", "eb": "eb_class"}


def _table(obj: Any, accessor: str, columns: tuple[str, ...], what: str) -> pd.DataFrame:
    """The tidy table of ``obj`` (a ReliableChange or a DataFrame), checked for ``columns``."""
    return checked_table(obj, accessor, columns, what, owner="ReliableChange",
                          hint=". Compute it with mixrank.reliable_change(...).")


def _method(method: str, what: str) -> str:
    if method not in _METHOD_CLASS:
        raise DataError(f"{what}: method={method!r}; expected 'rci' or 'eb'")
    return method


def plot_rci(result_or_items: Any, *, ax: Any = None, title: str | None = None,
             method: str = "rci") -> Any:
    """Scatter of each item's score before against after, coloured by its reliable-change class.

    Parameters
    ----------
    result_or_items : ReliableChange or pandas.DataFrame
        A result of :func:`mixrank.reliable_change`, or the table of
        ``ReliableChange.items()`` (columns ``p_before, p_after, class``;
        ``eb_class`` for ``method="eb"``; ``attrs["mixrank"]`` with
        ``before``, ``after``, ``s_diff`` and ``threshold`` labels the axes
        and draws the reliable-change band when present).  Not modified.
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure when None.
    title : str, optional
        Axes title.
    method : {"rci", "eb"}, default "rci"
        Colour by the RCI classes (``class``) or the empirical-Bayes classes
        (``eb_class``, results of ``method="eb"``).

    Returns
    -------
    matplotlib.axes.Axes
        x = ``p_before``, y = ``p_after``, both on [0, 1] with equal aspect.
        Items with identical ``(p_before, p_after, class)`` are drawn as one
        marker whose area is proportional to their count (area = count x
        ``MAX_MARKER_AREA`` / largest count, points^2): with K samples the
        scores sit on a grid and jitter would hide the counts.  One scatter
        collection per class present, in the order improved, deteriorated,
        no_change, floor_ceiling; a dashed diagonal (no change); dotted lines
        ``p_after = p_before +/- threshold * S_diff`` (the classical RCI
        cut-off) when the table's metadata carry both, ``sem="pooled"`` and
        ``method="rci"`` (with ``sem="item"`` each item has its own cut-off,
        so no line is drawn); a legend
        naming all four classes with their item counts.

    Raises
    ------
    DataError
        Not a result or an items table, missing columns (named in the
        message), an empty table, a score outside [0, 1] or missing, an
        unknown class, or an unknown ``method``.
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).

    Notes
    -----
    Draws the table's numbers as they are; the only arithmetic is counting
    identical points.  Validated against hand-made tables (marker positions,
    areas and legend counts) and the llm_stability re-runs of gpt-4o.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import mixrank
    >>> from mixrank.report.plots_rci import plot_rci
    >>> res = mixrank.reliable_change(mixrank.load_example(), before="m01", after="m02",
    ...                               sample="prompt")
    >>> ax = plot_rci(res, title="m01 -> m02")
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['improved (0)', 'deteriorated (2)', 'no reliable change (185)', 'floor/ceiling in both (53)']
    """
    col = _METHOD_CLASS[_method(method, "plot_rci")]
    table = _table(result_or_items, "items", ("p_before", "p_after", col), "plot_rci")
    pb = pd.to_numeric(table["p_before"], errors="coerce").to_numpy(dtype=float)
    pa = pd.to_numeric(table["p_after"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(pb) | ~np.isfinite(pa) | (pb < 0) | (pb > 1) | (pa < 0) | (pa > 1)
    if bad.any():
        raise DataError(f"plot_rci: {int(bad.sum())} item(s) have p_before/p_after missing or outside "
                        "[0, 1]; expected shares of correct samples as ReliableChange.items() returns.")
    cls = table[col].astype(str).to_numpy()
    unknown = sorted(set(cls) - set(CLASSES))
    if unknown:
        raise DataError(f"plot_rci: column {col!r} has unknown classes {unknown}; expected "
                        f"{list(CLASSES)}.")
    points = (pd.DataFrame({"cls": cls, "pb": pb, "pa": pa})
              .groupby(["cls", "pb", "pa"], sort=True).size().rename("count").reset_index())
    unit = MAX_MARKER_AREA / float(points["count"].max())
    meta = table.attrs.get("mixrank", {})
    with style.style_context():
        if ax is None:
            ax = style.new_axes(16, width=5.4)
        ax.plot([0.0, 1.0], [0.0, 1.0], color=style.COLORS["reference"], linestyle="--",
                linewidth=0.9, zorder=1, label="_no change")
        s_diff, thr = meta.get("s_diff"), meta.get("threshold")
        pooled = meta.get("sem") == "pooled"
        if method == "rci" and pooled and s_diff is not None and thr is not None and np.isfinite(s_diff * thr):
            w = float(s_diff) * float(thr)
            for sign in (1.0, -1.0):
                ax.plot([0.0, 1.0], [sign * w, 1.0 + sign * w], color=style.COLORS["reference"],
                        linestyle=":", linewidth=0.8, zorder=1, label="_rci cut-off")
        counts = {k: int(np.sum(cls == k)) for k in CLASSES}
        for k in CLASSES:
            p = points[points["cls"] == k]
            if p.empty:
                continue
            ax.scatter(p["pb"].to_numpy(), p["pa"].to_numpy(), s=unit * p["count"].to_numpy(),
                       color=CLASS_COLORS[k], alpha=0.75, edgecolors=CLASS_COLORS[k], linewidths=0.6,
                       zorder=3, label=f"{_LABELS[k]} ({counts[k]})")
        pad = 0.06
        ax.set_xlim(-pad, 1.0 + pad)
        ax.set_ylim(-pad, 1.0 + pad)
        ax.set_aspect("equal", adjustable="box")
        before, after = meta.get("before"), meta.get("after")
        style.finish_axes(ax, title=title, grid_axis="both",
                          xlabel="p before" + (f" ({before})" if before else ""))
        ax.set_ylabel("p after" + (f" ({after})" if after else ""), fontsize=style.FONT_SIZE,
                      color=style.COLORS["text"])
        from matplotlib.lines import Line2D

        handles = [Line2D([0], [0], linestyle="none", marker="o", markersize=7, alpha=0.75,
                          color=CLASS_COLORS[k], label=f"{_LABELS[k]} ({counts[k]})") for k in CLASSES]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                  title=f"{'EB' if method == 'eb' else 'RCI'} class (items)",
                  title_fontsize=style.FONT_SIZE - 0.5)
        ax.text(1.02, 0.0, "marker area \u221d items\nat the same point", transform=ax.transAxes,
                fontsize=style.FONT_SIZE - 1.5, color=style.COLORS["neutral"], va="bottom")
    return style.fit_figure(ax)


def plot_rci_subjects(result_or_table: Any, *, ax: Any = None, title: str | None = None,
                      method: str = "rci") -> Any:
    """Net change and churn per subject, reversal subjects highlighted.

    Parameters
    ----------
    result_or_table : ReliableChange or pandas.DataFrame
        A result of :func:`mixrank.reliable_change` (computed with a ``by``
        column), or the table of ``ReliableChange.by_subject()`` (columns
        ``net_change, churn, reversal`` and the grouping column named by
        ``attrs["mixrank"]["by"]``, default ``subject``; rows of other
        methods are left out when a ``method`` column is present).  Not
        modified.
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure sized for the number of subjects when
        None.
    title : str, optional
        Axes title.
    method : {"rci", "eb"}, default "rci"
        Which method's rows to draw.

    Returns
    -------
    matplotlib.axes.Axes
        One row per subject, ordered by ``net_change`` (largest at the top;
        ties and subjects without analysable items, drawn empty and labelled
        "(none analysable)", by name at the bottom).  Per row: a pale bar
        of length ``churn`` from ``-(churn - net_change) / 2`` (share
        deteriorated) to ``(churn + net_change) / 2`` (share improved), and
        in front of it a narrow bar of ``net_change`` from 0, coloured
        ``COLORS["accent"]`` with a bold accent tick label for reversal
        subjects and ``COLORS["primary"]`` otherwise; a vertical line at 0.
        The containers are ``ax.containers[0]`` (churn) and
        ``ax.containers[1]`` (net change), in row order.

    Raises
    ------
    DataError
        Not a result or a by-subject table, missing columns (named in the
        message), an empty table, no rows for ``method``, repeated subjects,
        or an unknown ``method``.
    DesignError
        A result computed with ``by=None`` (from ``ReliableChange.by_subject``).
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).

    Notes
    -----
    ``churn = (improved + deteriorated) / analysable`` and ``net_change =
    (improved - deteriorated) / analysable`` (docs/methods.md §8), so the
    churn bar's two sides are the shares improved and deteriorated.  A
    reversal is a subject whose net change has the opposite sign of the
    overall net change.  Validated against hand-made tables and the
    llm_stability re-runs of gpt-4o.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import mixrank
    >>> from mixrank.report.plots_rci import plot_rci_subjects
    >>> res = mixrank.reliable_change(mixrank.load_example(), before="m01", after="m02",
    ...                               sample="prompt")
    >>> ax = plot_rci_subjects(res)
    >>> len(ax.get_yticklabels())
    12
    """
    _method(method, "plot_rci_subjects")
    table = _table(result_or_table, "by_subject", ("net_change", "churn", "reversal"),
                   "plot_rci_subjects")
    by = table.attrs.get("mixrank", {}).get("by") or "subject"
    if by not in table.columns:
        raise DataError(f"plot_rci_subjects: the table lacks columns {[by]}; expected the grouping "
                        "column named by attrs['mixrank']['by'] (default 'subject') as "
                        "ReliableChange.by_subject() returns.")
    if "method" in table.columns:
        methods = list(dict.fromkeys(table["method"].astype(str)))
        table = table[table["method"].astype(str) == method]
        if len(table) == 0:
            raise DataError(f"plot_rci_subjects: no rows with method == {method!r}; the table has "
                            f"{methods}. Pass method= one of those.")
    names = table[by].astype(str)
    if names.duplicated().any():
        raise DataError(f"plot_rci_subjects: {by} values repeat ({names[names.duplicated()].iloc[0]!r} "
                        f"first); expected one row per {by}. Filter the table to one method.")
    net = pd.to_numeric(table["net_change"], errors="coerce").to_numpy(dtype=float)
    churn = pd.to_numeric(table["churn"], errors="coerce").to_numpy(dtype=float)
    rev = np.array([bool(v) if pd.notna(v) else False for v in table["reversal"]], dtype=bool)
    empty = ~np.isfinite(net) | ~np.isfinite(churn)
    key = np.where(empty, -np.inf, net)
    order = np.lexsort((names.to_numpy(), -key))
    net, churn, rev, empty = net[order], churn[order], rev[order], empty[order]
    labels = [f"{s} (none analysable)" if e else s for s, e in zip(names.to_numpy()[order], empty)]
    net0, churn0 = np.where(empty, 0.0, net), np.where(empty, 0.0, churn)
    n = len(labels)
    with style.style_context():
        if ax is None:
            ax = style.new_axes(n)
        y = np.arange(n)[::-1].astype(float)
        ax.barh(y, churn0, left=-(churn0 - net0) / 2.0, height=0.72, color=style.COLORS["grid"],
                edgecolor="none", zorder=2, label="churn (left: deteriorated, right: improved)")
        colors = [style.COLORS["accent"] if r else style.COLORS["primary"] for r in rev]
        ax.barh(y, net0, left=0.0, height=0.32, color=colors, edgecolor="none", zorder=3,
                label="net change")
        ax.axvline(0.0, color=style.COLORS["reference"], linewidth=0.9, zorder=4)
        ax.set_yticks(y)
        ax.set_yticklabels(labels)
        for tick, r in zip(ax.get_yticklabels(), rev):
            if r:
                tick.set_color(style.COLORS["accent"])
                tick.set_fontweight("bold")
        ax.set_ylim(-0.7, n - 0.3)
        span = float(np.max(np.abs(np.concatenate([(churn0 + net0) / 2, (churn0 - net0) / 2, net0]))))
        span = max(span, 0.05) * 1.08
        ax.set_xlim(-span, span)
        meta = table.attrs.get("mixrank", {})
        change = (f"{meta['before']} \u2192 {meta['after']}" if meta.get("before") and meta.get("after")
                  else "before \u2192 after")
        style.finish_axes(ax, title=title, xlabel=f"share of analysable items ({method.upper()}, {change})")
        from matplotlib.patches import Patch

        handles = [Patch(color=style.COLORS["grid"], label="churn (\u2190 deteriorated | improved \u2192)"),
                   Patch(color=style.COLORS["primary"], label="net change"),
                   Patch(color=style.COLORS["accent"], label="net change, reversal (opposite to overall)")]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return style.fit_figure(ax)
