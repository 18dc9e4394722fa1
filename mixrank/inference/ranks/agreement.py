"""Inference stage: which comparisons a rank interval is adjusted over, and where the rank
intervals and the contrasts table answer one pair differently.

Inputs: the coverage, the number of models and the adjustment of a rank table; a rank table
and a contrasts table of one fit.  Outputs: the ``comparisons`` / ``n_comparisons`` entries
of a rank table's ``attrs["mixrank"]`` (:func:`comparisons_meta`), and the pairs answered
differently with one sentence saying why (:func:`rank_contrast_note`).

A marginal rank interval holds the model's rank with its own M - 1 comparisons adjusted
together (the model against each other model); a simultaneous one holds jointly, with all
M (M - 1) / 2 pairs adjusted together; the contrasts' ``p_adjusted`` is adjusted over all the
pairs of its table.  So two marginal intervals can be disjoint while the pair's family-wise
``p_adjusted`` is above 1 - level: each answer is right about its own family.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["comparisons_meta", "rank_contrast_disagreements", "rank_contrast_note"]


def comparisons_meta(coverage: str, n_models: int, method: Any = None) -> dict[str, Any]:
    """``comparisons`` (a sentence) and ``n_comparisons`` for a rank table's attrs."""
    own, pairs = max(n_models - 1, 0), n_models * (n_models - 1) // 2
    how = f" ({method})" if method else ""
    if coverage == "simultaneous":
        return dict(comparisons=f"simultaneous: the intervals hold jointly, adjusted{how} over "
                                f"all {pairs} pairs of the {n_models} models",
                    n_comparisons=pairs)
    return dict(comparisons=f"marginal: each model's interval is adjusted{how} over its own "
                            f"{own} comparisons (the model against each other model), not "
                            f"over all {pairs} pairs",
                n_comparisons=own)


def rank_contrast_disagreements(ranks: pd.DataFrame, contrasts: pd.DataFrame,
                                level: float) -> pd.DataFrame:
    """The pairs whose rank intervals are disjoint while their contrast's ``p_adjusted`` is
    at least ``1 - level`` (``kind`` "ranks_only"), or whose contrast rejects while the
    intervals overlap (``kind`` "contrast_only"); columns ``model_a, model_b, p_adjusted,
    kind``.  Empty for tables per group or term (``group``, ``term``, a ``by`` column)."""
    cols = ["model_a", "model_b", "p_adjusted", "kind"]
    meta = ranks.attrs.get("mixrank", {})
    if (meta.get("by") or {"group", "term"} & (set(ranks.columns) | set(contrasts.columns))
            or not {"model_a", "model_b", "p_adjusted"} <= set(contrasts.columns)):
        return pd.DataFrame(columns=cols)
    lo = dict(zip(ranks["model"].astype(str), ranks["rank_lower"]))
    hi = dict(zip(ranks["model"].astype(str), ranks["rank_upper"]))
    alpha = 1.0 - level
    rows = []
    for r in contrasts.itertuples(index=False):
        a, b, p = str(r.model_a), str(r.model_b), float(r.p_adjusted)
        if a not in lo or b not in lo or not np.isfinite(p) or not all(
                np.isfinite([lo[a], hi[a], lo[b], hi[b]])):
            continue
        apart = hi[a] < lo[b] or hi[b] < lo[a]
        rejects = p < alpha
        if apart and not rejects:
            rows.append((a, b, p, "ranks_only"))
        elif rejects and not apart:
            rows.append((a, b, p, "contrast_only"))
    return pd.DataFrame(rows, columns=cols)


def rank_contrast_note(ranks: pd.DataFrame, contrasts: pd.DataFrame,
                       level: float | None = None) -> str:
    """One sentence per kind of disagreement between the two tables ('' when they agree).

    ``level``: default the rank table's.
    """
    meta = ranks.attrs.get("mixrank", {})
    level = float(meta.get("level", 0.95)) if level is None else level
    diff = rank_contrast_disagreements(ranks, contrasts, level)
    if diff.empty:
        return ""
    n_pairs = len(contrasts)
    own = meta.get("n_comparisons")
    out = []
    some = diff[diff["kind"] == "ranks_only"]
    if len(some):
        ex = "; ".join(f"{a} and {b} (p_adjusted {p:.2g})" for a, b, p, _ in
                       some.head(3).itertuples(index=False))
        over = (f"its own {own} comparisons" if meta.get("coverage") != "simultaneous"
                else f"the {own} pairs of the rank family")
        out.append(f"note: {len(some)} pair(s) have disjoint rank intervals but a contrast "
                   f"p_adjusted >= {1 - level:.2g} (e.g. {ex}), because each rank interval is "
                   f"adjusted over {over} while the contrasts' p_adjusted is adjusted over all "
                   f"{n_pairs} pairs of the table.")
    some = diff[diff["kind"] == "contrast_only"]
    if len(some):
        ex = "; ".join(f"{a} and {b}" for a, b, _, _ in some.head(3).itertuples(index=False))
        out.append(f"note: {len(some)} pair(s) are rejected by their contrast but have "
                   f"overlapping rank intervals (e.g. {ex}), because a rank "
                   "interval is widened by every model it is not separated from, while the "
                   "contrast tests the pair alone.")
    return "\n".join(out)
