"""Stage change: reliable change by item difficulty, and the attainable p-value (docs/sensitivity.md §5).

Inputs: the per-item table of a :class:`~mixrank.change.ReliableChange`
(``p_before``, ``delta``, classes) and its K per version.
Outputs: a tidy table by difficulty bin (:func:`change_by_difficulty`) and
the smallest p-value an item can reach (:func:`smallest_item_p`).
Contents: :func:`change_by_difficulty`, :func:`smallest_item_p`,
:data:`DIFFICULTY_EDGES`.

Regression to the middle: an item the model always solved before
(``p_before = 1``) can only stay or get worse, one it never solved can only
stay or improve.  Splitting the changes by ``p_before`` shows how much of a
version's churn is this one-way movement at the extremes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from mixrank.change.eb import smallest_fisher_p
from mixrank.errors import DesignError

__all__ = ["change_by_difficulty", "smallest_item_p", "DIFFICULTY_EDGES"]

#: Default bins of p_before: exactly 0, (0, 0.25], (0.25, 0.5], (0.5, 0.75], (0.75, 1), exactly 1.
DIFFICULTY_EDGES = (0.25, 0.5, 0.75)


def change_by_difficulty(items: pd.DataFrame, *, class_column: str = "class",
                         edges: Sequence[float] = DIFFICULTY_EDGES) -> pd.DataFrame:
    """Change per bin of ``p_before`` (item difficulty before the change).

    Parameters
    ----------
    items : pandas.DataFrame
        ``ReliableChange.items()`` (not modified).
    class_column : str, default "class"
        ``"class"`` (RCI) or ``"eb_class"``.
    edges : sequence of float
        Inner bin edges in (0, 1), increasing; the bins are ``p = 0``,
        ``(0, e_1]``, ..., ``(e_last, 1)`` and ``p = 1``.

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``p_lower, p_upper`` (``0, 0`` and ``1, 1`` for the
        exact extremes), ``n`` (items), ``mean_p_before``, ``mean_delta``,
        ``headroom_up`` (mean ``1 - p_before``: the most the bin can
        improve), ``headroom_down`` (mean ``p_before``), ``n_improved``,
        ``n_deteriorated``, ``n_no_change``, ``n_floor_ceiling``,
        ``share_improved``, ``share_deteriorated`` (of the bin's items).

    Raises
    ------
    DesignError
        Bad edges; an unknown class column.
    """
    e = np.asarray(edges, dtype=float)
    if e.ndim != 1 or np.any(np.diff(e) <= 0) or np.any((e <= 0) | (e >= 1)):
        raise DesignError(f"edges must be increasing numbers strictly between 0 and 1 (inner "
                          f"bounds of the p_before bins); received {list(edges)!r}.")
    if class_column not in items.columns:
        raise DesignError(f"class_column={class_column!r} is not a column of the items table; "
                          "expected 'class' or (method='eb') 'eb_class'.")
    p = items["p_before"].to_numpy(float)
    d = items["delta"].to_numpy(float)
    c = items[class_column].to_numpy()
    bounds = [(0.0, 0.0)] + list(zip(np.r_[0.0, e], np.r_[e, 1.0])) + [(1.0, 1.0)]
    rows = []
    for lo, hi in bounds:
        if lo == hi:
            inb = p == lo
        elif hi == 1.0:
            inb = (p > lo) & (p < 1.0)
        else:
            inb = (p > lo) & (p <= hi)
        n = int(inb.sum())
        cnt = {k: int(np.sum(c[inb] == k)) for k in ("improved", "deteriorated", "no_change",
                                                     "floor_ceiling")}
        rows.append(dict(p_lower=float(lo), p_upper=float(hi), n=n,
                         mean_p_before=float(p[inb].mean()) if n else float("nan"),
                         mean_delta=float(d[inb].mean()) if n else float("nan"),
                         headroom_up=float(1 - p[inb].mean()) if n else float("nan"),
                         headroom_down=float(p[inb].mean()) if n else float("nan"),
                         **{f"n_{k}": v for k, v in cnt.items()},
                         share_improved=cnt["improved"] / n if n else float("nan"),
                         share_deteriorated=cnt["deteriorated"] / n if n else float("nan")))
    return pd.DataFrame(rows)


def smallest_item_p(k_before: int, k_after: int, *, binary: bool) -> float:
    """The smallest p-value the per-item test (``sem="item"``) can reach.

    0/1 scores: Fisher's exact test at complete separation
    (:func:`mixrank.change.eb.smallest_fisher_p`; 1/3 at K = 2 + 2, 0.1 at
    3 + 3, 2/70 at 4 + 4).  Continuous scores: the t test can reach any
    p > 0, so 0.0.
    """
    if not binary:
        return 0.0
    return smallest_fisher_p(int(k_before), int(k_after))
