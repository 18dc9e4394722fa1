"""Stage design: the verdict table's views (``resolution(columns=)``).

Inputs: the full verdict table of :func:`mixrank.design.resolution.resolution_of` (or of any
result type's ``resolution()``).  Outputs: the same table, its columns cut to the view asked.
Contents: :data:`DEFAULT_COLUMNS` (the seed paper's table) and :func:`verdict_columns`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from mixrank._util import did_you_mean
from mixrank.errors import OptionError

__all__ = ["DEFAULT_COLUMNS", "VIEWS", "verdict_columns"]

#: ``resolution()``'s default view (at most 14 columns): per pair its estimate, n, N*, q, the
#: verdict under each paradigm (fixed-n ``resolved``, multiplicity, anytime, clustered),
#: ``resolved_all`` and the family-wise ``p_adjusted``; a judge-corrected fit adds its label
#: budget ``n_labels_star``, a pair left out of the fit its ``note``.  A paradigm the table
#: lacks is left out.
DEFAULT_COLUMNS = ("model_a", "model_b", "estimate", "n", "n_star", "q", "resolved",
                   "resolved_multiplicity", "resolved_anytime", "resolved_cluster",
                   "resolved_all", "p_adjusted", "n_labels_star", "note")
#: The named views of ``resolution(columns=)``.
VIEWS = ("default", "all")


def verdict_columns(table: pd.DataFrame, columns: Any = "default") -> pd.DataFrame:
    """``table`` cut to ``columns``: ``"default"`` (:data:`DEFAULT_COLUMNS`), ``"all"`` (every
    column, as computed) or a list of its column names, in that order.

    The metadata (``attrs["mixrank"]``) is kept, with ``view`` naming the columns shown.

    Raises
    ------
    OptionError
        ``columns`` is neither a view nor a list of the table's columns (the unknown names
        and the views listed).
    """
    if isinstance(columns, str):
        if columns not in VIEWS:
            raise OptionError(f"columns={columns!r}{did_you_mean(columns, VIEWS)}; expected "
                              f"one of {list(VIEWS)} or a list of the table's column names "
                              "(docs/vocabulary.md, 'Verdict table')")
        keep = (list(table.columns) if columns == "all"
                else [c for c in DEFAULT_COLUMNS if c in table.columns])
    elif isinstance(columns, Sequence) and columns and all(isinstance(c, str) for c in columns):
        unknown = [c for c in columns if c not in table.columns]
        if unknown:
            raise OptionError(f"columns={list(columns)!r}: {unknown} are not columns of the "
                              f"verdict table{did_you_mean(unknown[0], table.columns)}; its "
                              f"columns are {list(table.columns)}, or pass 'default' or 'all'")
        keep = list(columns)
    else:
        raise OptionError(f"columns={columns!r}; expected one of {list(VIEWS)} or a non-empty "
                          "list of the verdict table's column names")
    out = table[keep].copy()
    out.attrs["mixrank"] = dict(table.attrs.get("mixrank", {}),
                                view=columns if isinstance(columns, str) else "explicit")
    return out
