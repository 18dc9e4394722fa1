"""Stage report: plots of a fit's contrasts and variance components.

Inputs: a :class:`~mixrank.results.FitResult` or the tidy table it returns
(``FitResult.contrasts()`` / ``FitResult.variance_components()``).
Outputs: a matplotlib Axes in the shared look of :mod:`mixrank.report.style`.
Contents: :func:`plot_contrasts` (forest plot of the pairwise differences)
and :func:`plot_components` (variance components by pair, stacked bars).
Draws only; computes no statistics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from mixrank.engine.records import pair_key
from mixrank.errors import DataError
from mixrank.report import style

__all__ = ["plot_contrasts", "plot_components", "select_pairs"]

_CONTRAST_COLUMNS = ("model_a", "model_b", "estimate", "ci_lower", "ci_upper")
_COMPONENT_COLUMNS = ("model_a", "model_b", "group", "variance")


def checked_table(obj: Any, accessor: str, columns: Sequence[str], what: str,
                  owner: str = "FitResult", hint: str = "") -> pd.DataFrame:
    """The tidy table of ``obj`` (a result object or a DataFrame), checked for ``columns``.

    ``owner`` names the result class whose ``accessor`` returns the table;
    ``hint`` is appended to the type error (how to compute the result).
    """
    if isinstance(obj, pd.DataFrame):
        table = obj
    elif callable(getattr(obj, accessor, None)):
        table = getattr(obj, accessor)()
    else:
        raise DataError(f"{what} needs a {owner} or the DataFrame of {owner}.{accessor}(); "
                        f"got {type(obj).__name__}{hint}")
    miss = [c for c in columns if c not in table.columns]
    if miss:
        raise DataError(f"{what}: the table lacks columns {miss}; expected at least "
                        f"{list(columns)} (as {owner}.{accessor}() returns)"
                        + (". Pass that table or the result." if hint else ""))
    if len(table) == 0:
        raise DataError(f"{what}: the table is empty; nothing to plot")
    return table


def select_pairs(table: pd.DataFrame, pairs: Sequence[tuple[str, str]] | None) -> pd.DataFrame:
    """Rows of a pairwise table for the given unordered ``pairs`` (all when None).

    Parameters
    ----------
    table : pandas.DataFrame
        Has ``model_a`` and ``model_b`` columns.
    pairs : sequence of (str, str), optional
        Pairs in either orientation.

    Returns
    -------
    pandas.DataFrame
        The matching rows in the order of ``pairs`` (the table's own
        orientation is kept).

    Raises
    ------
    DataError
        A requested pair is not in the table.
    """
    if pairs is None:
        return table
    key = [pair_key(a, b) for a, b in zip(table["model_a"], table["model_b"])]
    pos: dict[frozenset, list[int]] = {}
    for i, k in enumerate(key):
        pos.setdefault(k, []).append(i)
    rows: list[int] = []
    for a, b in pairs:
        k = pair_key(a, b)
        if k not in pos:
            raise DataError(f"pair ({a!r}, {b!r}) is not in the table; it has "
                            f"{len(pos)} pair(s), e.g. {[tuple(sorted(p)) for p in list(pos)[:3]]}")
        rows += pos[k]
    return table.iloc[rows]


def oriented(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of a contrasts table with each negative-estimate row flipped to
    ``model_b - model_a`` (estimate and interval negated): better model first."""
    t = table.copy()
    neg = t["estimate"].to_numpy(dtype=float) < 0
    if neg.any():
        t.loc[neg, ["model_a", "model_b"]] = t.loc[neg, ["model_b", "model_a"]].to_numpy()
        lo, hi = t.loc[neg, "ci_lower"].to_numpy(dtype=float), t.loc[neg, "ci_upper"].to_numpy(dtype=float)
        t.loc[neg, "estimate"] = -t.loc[neg, "estimate"]
        t.loc[neg, "ci_lower"], t.loc[neg, "ci_upper"] = -hi, -lo
    return t


def plot_contrasts(fit_or_table: Any, ax: Any = None, *, pairs: Sequence[tuple[str, str]] | None = None,
                   sort: bool = True, title: str | None = None, orient: bool = True) -> Any:
    """Forest plot of the pairwise contrasts ``model_a - model_b``.

    Parameters
    ----------
    fit_or_table : FitResult or pandas.DataFrame
        A fit, or the table of ``FitResult.contrasts()`` (columns
        ``model_a, model_b, estimate, ci_lower, ci_upper``; ``level`` and
        ``attrs["mixrank"]`` label the axis when present).
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure sized for the number of rows when None.
    pairs : sequence of (str, str), optional
        Only these pairs (either orientation), in this order.
    sort : bool, default True
        Order the rows by estimate, largest at the top; False keeps the
        table's (or ``pairs``') order, first at the top.
    title : str, optional
        Axes title.
    orient : bool, default True
        Draw every pair from its better model to the worse one (the row of a
        negative estimate is drawn as ``model_b - model_a`` with the estimate
        and interval negated), so every gap reads with its sign; False draws
        the table's orientation.  Rows without an estimate (pairs the formula
        cannot estimate) are left out.

    Returns
    -------
    matplotlib.axes.Axes
        One row per pair labelled ``model_a - model_b``: the confidence
        interval as a segment and the estimate as a dot, coloured
        ``COLORS["significant"]`` when the table's adjusted verdict rejects
        (``p_adjusted < 1 - level``, the adjustment of ``attrs["mixrank"]
        ["adjust"]``; without ``p_adjusted``: when the interval excludes 0)
        and ``COLORS["neutral"]`` otherwise; a vertical line at 0.

    Raises
    ------
    DataError
        Not a fit or a contrasts table, missing columns, an empty table, or a
        pair not in the table.
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).

    Notes
    -----
    Draws the table's numbers as they are; the table is not modified.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import mixrank
    >>> from mixrank.report.plots import plot_contrasts
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> ax = plot_contrasts(res, title="Example")
    >>> len(ax.get_yticklabels())
    15
    """
    table = select_pairs(checked_table(fit_or_table, "contrasts", _CONTRAST_COLUMNS, "plot_contrasts"),
                         pairs)
    t = table.reset_index(drop=True)
    t = t[np.isfinite(t["estimate"].to_numpy(dtype=float))].reset_index(drop=True)
    if len(t) == 0:
        raise DataError("plot_contrasts: no pair has an estimate; nothing to plot")
    if orient:
        t = oriented(t)
    if sort:
        t = t.iloc[np.argsort(-t["estimate"].to_numpy(dtype=float), kind="stable")]
    n = len(t)
    with style.style_context():
        if ax is None:
            ax = style.new_axes(n)
        y = np.arange(n)[::-1]
        lo = t["ci_lower"].to_numpy(dtype=float)
        hi = t["ci_upper"].to_numpy(dtype=float)
        est = t["estimate"].to_numpy(dtype=float)
        meta = table.attrs.get("mixrank", {})
        lev = t["level"].iloc[0] if "level" in t.columns else meta.get("level")
        adjust = meta.get("adjust")
        if "p_adjusted" in t.columns and lev is not None:    # the verdict the caption names
            excl = t["p_adjusted"].to_numpy(dtype=float) < 1 - float(lev)
            yes = f"{adjust}-adjusted p < {1 - float(lev):g}" if adjust else "adjusted p < alpha"
            no = "not significant after adjustment"
        else:
            excl = (lo > 0) | (hi < 0)
            yes, no = "interval excludes 0", "interval covers 0"
        colors = [style.COLORS["significant"] if e else style.COLORS["neutral"] for e in excl]
        ax.axvline(0.0, color=style.COLORS["reference"], linewidth=0.9, zorder=1)
        ax.hlines(y, lo, hi, colors=colors, linewidth=2.0, zorder=2)
        ax.scatter(est, y, s=22, c=colors, edgecolors="white", linewidths=0.5, zorder=3)
        labels = [f"{a} \u2212 {b}" for a, b in zip(t["model_a"], t["model_b"])]
        ax.set_yticks(y)
        ax.set_yticklabels(labels)
        ax.set_ylim(-0.7, n - 0.3)
        parts = [f"{100 * float(lev):g}% CI" if lev is not None else "CI"]
        if meta.get("estimand"):
            parts.append(f"estimand {meta['estimand']}")
        style.finish_axes(ax, title=title,
                          xlabel=f"difference model_a \u2212 model_b ({', '.join(parts)})")
        from matplotlib.lines import Line2D

        handles = [Line2D([0], [0], color=style.COLORS["significant"], lw=2, marker="o",
                          label=yes),
                   Line2D([0], [0], color=style.COLORS["neutral"], lw=2, marker="o",
                          label=no)]
        ax.legend(handles=handles, loc="lower right" if n > 3 else "best")
    return style.fit_figure(ax)


def plot_components(fit_or_table: Any, ax: Any = None, *,
                    pairs: Sequence[tuple[str, str]] | None = None, value: str = "variance",
                    title: str | None = None) -> Any:
    """Variance components by pair, as stacked horizontal bars.

    Parameters
    ----------
    fit_or_table : FitResult or pandas.DataFrame
        A fit, or the table of ``FitResult.variance_components()`` (columns
        ``model_a, model_b, group, variance``; ``share`` for
        ``value="share"``).
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure sized for the number of pairs when None.
    pairs : sequence of (str, str), optional
        Only these pairs (either orientation), in this order; default all,
        in the table's order.
    value : {"variance", "share"}, default "variance"
        Bar length: the component's variance of the paired difference, or
        its share of the total.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
        One bar per pair (first pair at the top), one segment per component
        in the formula's order, the residual last in grey; a legend names the
        components as written in the formula.

    Raises
    ------
    DataError
        Not a fit or a components table, missing columns, an empty table,
        an unknown ``value`` or a pair not in the table.
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).

    Notes
    -----
    Draws the table's numbers as they are; the table is not modified.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import mixrank
    >>> from mixrank.report.plots import plot_components
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> ax = plot_components(res, value="share")
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['subject', 'residual']
    """
    if value not in ("variance", "share"):
        raise DataError(f"plot_components: value={value!r}; expected 'variance' or 'share'")
    cols = _COMPONENT_COLUMNS + (("share",) if value == "share" else ())
    table = checked_table(fit_or_table, "variance_components", cols, "plot_components")
    groups = list(dict.fromkeys(table["group"].astype(str)))
    if "residual" in groups:
        groups = [g for g in groups if g != "residual"] + ["residual"]
    pair_keys = list(dict.fromkeys(zip(table["model_a"].astype(str), table["model_b"].astype(str))))
    if pairs is not None:
        sel = select_pairs(table, pairs)
        pair_keys = list(dict.fromkeys(zip(sel["model_a"].astype(str), sel["model_b"].astype(str))))
    wide = (table.assign(_a=table["model_a"].astype(str), _b=table["model_b"].astype(str),
                         _g=table["group"].astype(str))
            .pivot_table(index=["_a", "_b"], columns="_g", values=value, aggfunc="first"))
    n = len(pair_keys)
    with style.style_context():
        if ax is None:
            ax = style.new_axes(n)
        y = np.arange(n)[::-1]
        left = np.zeros(n)
        for g in groups:
            vals = np.array([wide.loc[k, g] if k in wide.index and g in wide.columns else np.nan
                             for k in pair_keys], dtype=float)
            vals = np.nan_to_num(vals, nan=0.0)
            ax.barh(y, vals, left=left, height=0.72, color=style.component_color(g, groups),
                    edgecolor="white", linewidth=0.4, label=g)
            left = left + vals
        ax.set_yticks(y)
        ax.set_yticklabels([f"{a} \u2212 {b}" for a, b in pair_keys])
        ax.set_ylim(-0.7, n - 0.3)
        xlabel = ("variance of the paired difference" if value == "variance"
                  else "share of the variance of the paired difference")
        style.finish_axes(ax, title=title, xlabel=xlabel)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), title="component")
    return style.fit_figure(ax)
