"""Stage report: where the gaps live — per-level forest plot, per-level rank intervals, the section.

Inputs: tables of a model x covariate fit: ``FitResult.contrasts(by=...)``
(``model_a, model_b, <by>, estimate, ci_lower, ci_upper, note``),
``FitResult.rank_intervals(by=...)`` (``model, <by>, rank, rank_lower,
rank_upper``) and ``FitResult.anova()``.  Outputs: matplotlib Axes in the
shared look of :mod:`mixrank.report.style` and the HTML of the report section
"Where the gaps live".  Draws and formats only; computes no statistics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from mixrank.errors import DataError
from mixrank.report import style
from mixrank.results.interactions import check_by

__all__ = ["plot_gaps_by", "plot_ranks_by", "gaps_section"]


def _check(table: Any, by: str, cols: tuple[str, ...], what: str) -> None:
    if not isinstance(table, pd.DataFrame):
        raise DataError(f"{what} needs a DataFrame; got {type(table).__name__}")
    miss = [c for c in (by,) + cols if c not in table.columns]
    if miss:
        raise DataError(f"{what}: the table lacks columns {miss}; expected {[by, *cols]} "
                        f"(as FitResult.{'contrasts' if 'model_a' in cols else 'rank_intervals'}"
                        f"(by={by!r}) returns)")
    if len(table) == 0:
        raise DataError(f"{what}: the table is empty; nothing to plot")


def plot_gaps_by(table: pd.DataFrame, by: str, *, ax: Any = None, title: str | None = None) -> Any:
    """Forest plot of the gap per level of ``by``, one block of rows per pair.

    Parameters
    ----------
    table : pandas.DataFrame
        ``FitResult.contrasts(by=by)``.
    by : str
        The covariate column.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        One row per (pair, level): the interval ``ci_lower .. ci_upper`` and
        a marker at ``estimate``; rows without common cells show "no cells".

    Raises
    ------
    DataError
        Not a DataFrame, missing columns, an empty table.
    """
    _check(table, by, ("model_a", "model_b", "estimate", "ci_lower", "ci_upper"), "plot_gaps_by")
    n = len(table)
    with style.style_context():
        if ax is None:
            ax = style.new_axes(n, width=7.0)
        labels = []
        for i, (_, r) in enumerate(table.iterrows()):
            y = n - 1 - i
            labels.append(f"{r['model_a']} \u2212 {r['model_b']} | {r[by]}")
            if np.isfinite(r["estimate"]):
                sig = r["ci_lower"] > 0 or r["ci_upper"] < 0
                color = "#0072B2" if sig else "#777777"
                ax.plot([r["ci_lower"], r["ci_upper"]], [y, y], color=color, lw=2)
                ax.plot([r["estimate"]], [y], "o", color=color, ms=4)
            else:
                ax.text(0, y, "no cells", va="center", ha="center", fontsize=7, color="#D55E00")
        ax.axvline(0, color="#999999", lw=0.8, ls="--")
        ax.set_yticks(range(n))
        ax.set_yticklabels(labels[::-1], fontsize=7)
        style.finish_axes(ax, title=title, xlabel="gap (model_a \u2212 model_b)")
    return style.fit_figure(ax)


def plot_ranks_by(table: pd.DataFrame, by: str, *, ax: Any = None, title: str | None = None) -> Any:
    """Rank intervals per level of ``by``: one block of rows (models) per level.

    Parameters
    ----------
    table : pandas.DataFrame
        ``FitResult.rank_intervals(by=by)``.
    by : str
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        One row per (level, model): the interval ``rank_lower .. rank_upper``
        and the point rank (rank 1 on the left).

    Raises
    ------
    DataError
        Not a DataFrame, missing columns, an empty table.
    """
    _check(table, by, ("model", "rank", "rank_lower", "rank_upper"), "plot_ranks_by")
    t = table[np.isfinite(table["rank"].to_numpy(dtype=float))]
    n = max(len(t), 1)
    with style.style_context():
        if ax is None:
            ax = style.new_axes(n, width=7.0)
        labels = []
        for i, (_, r) in enumerate(t.iterrows()):
            y = n - 1 - i
            labels.append(f"{r[by]} | {r['model']}")
            ax.plot([r["rank_lower"], r["rank_upper"]], [y, y], color="#0072B2", lw=2)
            ax.plot([r["rank"]], [y], "o", color="#0072B2", ms=4)
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels[::-1], fontsize=7)
        style.finish_axes(ax, title=title, xlabel="rank (1 = best)")
    return style.fit_figure(ax)


def gaps_section(fit: Any, ctx: dict, *, figure: Callable[..., str], table: Callable[..., str],
                 para: Callable[[str], str], guard: Callable[[str, Callable[[], str]], str]) -> str:
    """HTML of the report section "Where the gaps live" (the helpers come from
    :mod:`mixrank.report.html`, which registers this section for interaction fits)."""
    spec = fit.frame.spec
    parts = []
    an = fit.anova(adjust="holm")
    parts.append(para("Per pair, F test that the gap is the same at every level of each "
                      "covariate term (lmerTest type III, Satterthwaite denominator df; "
                      "p_adjusted: Holm across pairs, per term)."))
    parts.append(table(an))
    for by in spec.covariates:
        con = fit.contrasts(by=by, level=ctx["level"])
        if ctx["pairs"] is not None:
            keep = {frozenset(p) for p in ctx["pairs"]}
            con = con[[frozenset((a, b)) in keep for a, b in zip(con["model_a"], con["model_b"])]]
        parts.append(f"<h3>Gap by {by}</h3>")
        def forest(con: pd.DataFrame = con, by: str = by) -> str:
            return figure(plot_gaps_by(con, by, ax=style.new_axes(len(con), pyplot=False)),
                          name=f"gaps_{by}", alt=f"gap per level of {by}",
                          caption=f"Gap per level of {by} with confidence intervals; blue "
                                  "intervals exclude 0.")

        parts.append(guard(f"Forest plot by {by}", forest))
        parts.append(table(con))
        if by in check_by(fit, by).numeric:
            continue
        parts.append(f"<h3>Rank intervals by {by}</h3>")
        ranks = fit.rank_intervals(by=by, **ctx["rank_kwargs"])
        def rank_plot(ranks: pd.DataFrame = ranks, by: str = by) -> str:
            return figure(plot_ranks_by(ranks, by, ax=style.new_axes(len(ranks), pyplot=False)),
                          name=f"ranks_{by}", alt=f"rank intervals per level of {by}",
                          caption=f"Where the ranking changes: rank intervals at each level of "
                                  f"{by}.")

        parts.append(guard(f"Rank plot by {by}", rank_plot))
        parts.append(table(ranks))
    return "".join(parts)
