"""Stage report: plots of resolution diagnostics.

Inputs: a verdict table from :func:`mixrank.design.resolution.resolution_table`,
:func:`~mixrank.design.resolution.resolution_of` or ``FitResult.resolution``
(columns ``model_a, model_b, q`` and any of ``q_multiplicity, q_anytime,
q_cluster``); for the power curve, effects and a paired SD.
Outputs: matplotlib Axes in the shared look of :mod:`mixrank.report.style`.
Contents: :func:`plot_resolution` (q per pair and
paradigm on a log scale) and :func:`plot_power_curve` (power against n for a
few effects, from :func:`mixrank.design.power.power`).  Draws only; the
numbers come from the design stage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from mixrank.design.power.closed_form import n_star as _n_star
from mixrank.design.power.closed_form import power as _power
from mixrank.errors import DataError, DesignError
from mixrank.report import style
from mixrank.report.plots import checked_table

__all__ = ["plot_resolution", "plot_power_curve"]

#: (column, legend label, marker) for each paradigm, in drawing order.
_PARADIGMS = (
    ("q", "fixed n", "o"),
    ("q_multiplicity", "multiplicity", "s"),
    ("q_anytime", "anytime-valid", "^"),
    ("q_cluster", "clustered", "D"),
)
#: Colour of each paradigm (the shared categorical palette, fixed per paradigm).
_PARADIGM_COLORS = {col: style.COMPONENT_COLORS[i] for i, (col, _, _) in enumerate(_PARADIGMS)}


def plot_resolution(table: pd.DataFrame, *, ax: Any = None, title: str | None = None) -> Any:
    """Plot the resolution ratio q of each pair under each paradigm.

    Parameters
    ----------
    table : pandas.DataFrame
        A verdict table (``model_a, model_b, q`` and optionally
        ``q_multiplicity, q_anytime, q_cluster``).  Not modified.
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure is created when None.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
        One row per pair (table order, first at the top), x = q on a log
        scale, one marker per paradigm present and a vertical line at
        q = 1 (right of it: resolved under that paradigm).  With a
        ``resolved_all`` column each pair's label says "resolved" or "not
        resolved" by it (the family-wise verdict), coloured when resolved.  q = 0 (a zero estimate) and q = inf
        are drawn at the edges of the axis with open markers.

    Raises
    ------
    DataError
        Not a DataFrame, missing columns, or an empty table.
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).

    Notes
    -----
    ``q = n / N*``; a pair is resolved under a paradigm when its q >= 1
    (docs/methods.md §6).  The axis limits cover every finite positive q
    and the q = 1 line.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import mixrank
    >>> from mixrank.report.plots_resolution import plot_resolution
    >>> tab = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example()).resolution()
    >>> ax = plot_resolution(tab, title="Example")
    >>> ax.get_xscale()
    'log'
    """
    table = checked_table(table, "resolution", ("model_a", "model_b", "q"), "plot_resolution")
    present = [p for p in _PARADIGMS if p[0] in table.columns]
    vals = np.concatenate([table[c].to_numpy(dtype=float) for c, _, _ in present])
    if np.any(np.isnan(vals)) or np.any(vals < 0):
        raise DataError("verdict table has NaN or negative q values; expected q in [0, inf]")
    finite = vals[np.isfinite(vals) & (vals > 0)]
    lo = min(float(finite.min()) if finite.size else 1.0, 1.0) / 2.0
    hi = max(float(finite.max()) if finite.size else 1.0, 1.0) * 2.0
    n = len(table)
    meta = table.attrs.get("mixrank", {}) if hasattr(table, "attrs") else {}
    extra = []
    if meta.get("alpha") is not None:
        extra.append(f"alpha = {meta['alpha']:g}")
    if meta.get("power") is not None:
        extra.append(f"power = {meta['power']:g}")
    with style.style_context():
        if ax is None:
            ax = style.new_axes(n, width=8.0)
        y = np.arange(n)[::-1].astype(float)
        k = len(present)
        offsets = (np.arange(k) - (k - 1) / 2) * (0.5 / max(k, 1))
        for (col, label, marker), off in zip(present, offsets):
            q = table[col].to_numpy(dtype=float)
            clipped = np.clip(q, lo, hi)
            edge = (q <= 0) | ~np.isfinite(q)
            color = _PARADIGM_COLORS[col]
            ax.plot(clipped[~edge], y[~edge] + off, marker, color=color, label=label,
                    linestyle="none", markersize=6, markeredgecolor="white", markeredgewidth=0.5,
                    zorder=3)
            if np.any(edge):
                ax.plot(clipped[edge], y[edge] + off, marker, color=color, markerfacecolor="none",
                        linestyle="none", markersize=6, zorder=3)
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        ax.axvline(1.0, color=style.COLORS["reference"], linestyle="--", linewidth=1, label="q = 1")
        ax.set_yticks(y)
        pairs = [f"{a} vs {b}" for a, b in zip(table["model_a"], table["model_b"])]
        fw = table["resolved_all"].to_numpy(dtype=bool) if "resolved_all" in table.columns \
            else None
        if fw is not None:          # the verdict in words and colour: the family-wise answer
            pairs = [f"{p}: {'resolved' if r else 'not resolved'}" for p, r in zip(pairs, fw)]
            extra.append("pair labels: the family-wise verdict (resolved_all)")
        ax.set_yticklabels(pairs)
        ax.set_ylim(-0.7, n - 0.3)
        style.finish_axes(ax, title=title,
                          xlabel="resolution ratio q = n / N* (log scale; q >= 1: resolved "
                          "under that paradigm)" + (f"\n{', '.join(extra)}" if extra else ""))
        if fw is not None:          # after finish_axes, which sets every tick label's colour
            for lab, r in zip(ax.get_yticklabels(), fw):
                lab.set_color(style.COLORS["significant"] if r else style.COLORS["text"])
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
    return style.fit_figure(ax)


def plot_power_curve(delta: float | Sequence[float], *, sigma_d: float,
                     n: Sequence[float] | None = None, alpha: float = 0.05,
                     power: float | None = 0.8, n_observed: float | None = None,
                     ax: Any = None, title: str | None = None) -> Any:
    """Plot the power of the paired test against n for a few effects.

    Parameters
    ----------
    delta : float or sequence of float
        Effects (non-zero), one curve each.
    sigma_d : float
        Paired SD of the per-cell differences (> 0).
    n : sequence of float, optional
        Sample sizes at which to evaluate (all > 0).  Default: 200 points
        log-spaced from N*/20 of the largest effect to 5 N* of the smallest.
    alpha : float, default 0.05
        Two-sided level, in (0, 1).
    power : float or None, default 0.8
        Target power drawn as a horizontal line (None: no line).
    n_observed : float, optional
        The benchmark's N, drawn as a vertical line.
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure is created when None.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
        One line per effect, x = n on a log scale, y = power in [0, 1].

    Raises
    ------
    DesignError
        A zero or non-finite effect, ``sigma_d <= 0``, alpha outside (0, 1),
        a target power outside (alpha, 1), a non-positive n.
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).

    Notes
    -----
    The curves are :func:`mixrank.design.power.power` (exact two-sided
    normal power of the paired Wald test, docs/methods.md §6); the
    default range is built from :func:`mixrank.design.power.n_star`.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from mixrank.report.plots_resolution import plot_power_curve
    >>> ax = plot_power_curve([0.02, 0.05], sigma_d=0.5, n_observed=2000)
    >>> len(ax.get_lines()) >= 2
    True
    """
    try:
        deltas = np.atleast_1d(np.asarray(delta, dtype=float))
    except (TypeError, ValueError) as exc:
        raise DesignError(f"delta must be a number or a list of numbers; received "
                          f"{delta!r}.") from exc
    if deltas.ndim != 1 or deltas.size == 0:
        raise DesignError(f"delta must be a number or a list of numbers; received {delta!r}.")
    ns_each = np.atleast_1d(_n_star(deltas, sigma_d=sigma_d, alpha=alpha,
                                    power=0.8 if power is None else power))  # validates
    if n is None:
        grid = np.geomspace(float(ns_each.min()) / 20.0, float(ns_each.max()) * 5.0, 200)
    else:
        grid = np.asarray(n, dtype=float)
        if grid.ndim != 1 or grid.size < 2 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
            raise DesignError(f"n must be at least two finite sample sizes > 0; received {n!r}.")
        grid = np.sort(grid)
    if n_observed is not None and not (np.isfinite(n_observed) and n_observed > 0):
        raise DesignError(f"n_observed must be a positive number; received {n_observed!r}.")
    with style.style_context():
        if ax is None:
            ax = style.new_axes(12, width=6.0)
        for i, d in enumerate(deltas):
            pw = np.asarray(_power(d, grid, sigma_d=sigma_d, alpha=alpha), dtype=float)
            ax.plot(grid, pw, color=style.COMPONENT_COLORS[i % len(style.COMPONENT_COLORS)],
                    linewidth=1.6, label=f"delta = {d:g}")
        if power is not None:
            ax.axhline(power, color=style.COLORS["reference"], linestyle="--", linewidth=1,
                       label=f"power {power:g}")
        if n_observed is not None:
            ax.axvline(n_observed, color=style.COLORS["neutral"], linestyle=":", linewidth=1.2,
                       label=f"n = {n_observed:g}")
        ax.set_xscale("log")
        ax.set_ylim(0.0, 1.02)
        style.finish_axes(ax, title=title, grid_axis="both",
                          xlabel=f"paired cells n (log scale); sigma_d = {sigma_d:g}, alpha = {alpha:g}")
        ax.set_ylabel("power", fontsize=style.FONT_SIZE, color=style.COLORS["text"])
        ax.legend(loc="lower right")
    return style.fit_figure(ax)
