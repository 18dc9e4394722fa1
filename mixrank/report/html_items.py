"""Stage report: the "Item diagnostics" section of the HTML report (docs/subset.md §6).

Inputs: the table of :func:`mixrank.item_diagnostics` (passed to
:func:`~mixrank.report.html.render_report` as ``items=``) and the report
context.  Outputs: :func:`items_section` -- HTML: the counts of flagged
items, a scatter of the items' difficulty against their discrimination with
the flagged ones marked, and the table of items with a likely wrong answer
key (negative discrimination), most significant first.  :func:`check_items`
refuses anything but such a table.  Formats the public table only; computes
no statistics.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mixrank.errors import DataError
from mixrank.report import style
from mixrank.report.html_format import figure_html, format_table_html, guard, paragraph

__all__ = ["items_section", "check_items", "plot_item_diagnostics"]

#: The columns of mixrank.item_diagnostics the section reads.
NEEDED = ("difficulty", "discrimination", "item_rest_r", "p_value", "negative_discrimination",
          "nobody_solves", "everybody_solves", "reference_mean")
#: At most this many flagged items are listed.
MAX_ROWS = 30


def check_items(items: Any) -> None:
    """A :class:`DataError` unless ``items`` is None or a table of ``item_diagnostics``."""
    if items is None:
        return
    if not isinstance(items, pd.DataFrame) or any(c not in items.columns for c in NEEDED):
        raise DataError("items= takes the table of mixrank.item_diagnostics(reference) (columns "
                        f"{', '.join(NEEDED)}); got {type(items).__name__}")


def plot_item_diagnostics(items: pd.DataFrame, ax: Any = None) -> Any:
    """Difficulty (x) against discrimination (y), negative-discrimination items marked."""
    ax = ax if ax is not None else style.new_axes(14, pyplot=False)
    bad = items["negative_discrimination"].to_numpy(bool)
    ax.scatter(items["difficulty"][~bad], items["discrimination"][~bad], s=6, alpha=0.35,
               color=style.COLORS["neutral"], label="items", linewidths=0)
    ax.scatter(items["difficulty"][bad], items["discrimination"][bad], s=16,
               color=style.COLORS["accent"], label="negative discrimination", linewidths=0)
    ax.axhline(0, color=style.COLORS["reference"], linewidth=0.8)
    ax.set_ylabel("discrimination (logit slope on ability)")
    ax.legend(loc="best", fontsize=style.FONT_SIZE - 1, frameon=False)
    return style.fit_figure(style.finish_axes(ax, xlabel="difficulty (logit, higher is harder)", grid_axis="both"))


def items_section(fit: Any, ctx: dict) -> str:
    """The Item diagnostics section: counts, the scatter, the likely wrong answer keys."""
    items: pd.DataFrame = ctx["items"]
    meta = items.attrs.get("mixrank", {})
    neg = items[items["negative_discrimination"].to_numpy(bool)]
    n = len(items)
    models = meta.get("n_models", int(items["n"].max()) if "n" in items else "several")
    parts = [paragraph(
        f"{n:,} items answered by {models} reference models. {len(neg):,} show negative "
        "discrimination (stronger models get them wrong more often -- the typical sign of a "
        f"wrong answer key; one-sided test at {1 - meta.get('level', 0.95):.2g}); "
        f"{int(items['nobody_solves'].sum()):,} are solved by no model and "
        f"{int(items['everybody_solves'].sum()):,} by every model (they cannot separate "
        "models). Check the flagged items' keys before trusting gaps they touch.")]
    parts.append(guard("Item plot", lambda: figure_html(
        plot_item_diagnostics(items), name="items", alt="item difficulty and discrimination",
        caption="Each dot an item; orange: negative discrimination.")))
    if len(neg):
        keys = [c for c in items.columns if c not in NEEDED and c not in ("n", "flag")]
        order = np.argsort(neg["p_value"].to_numpy(float), kind="stable")
        shown = neg.iloc[order[:MAX_ROWS]][keys + ["reference_mean", "item_rest_r", "p_value"]]
        parts.append(format_table_html(
            shown.reset_index(drop=True),
            caption=f"Items with negative discrimination, most significant first"
                    f"{f' (first {MAX_ROWS} of {len(neg)})' if len(neg) > MAX_ROWS else ''}: "
                    "item_rest_r is the correlation over models of the item's score with the "
                    "model's score on the other items."))
    return "".join(parts)
