"""Small shared helpers (no stage): random generators, table metadata, message lists."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ._version import MIXRANK_VERSION

__all__ = ["as_rng", "tidy", "check_level", "listed", "MIXRANK_VERSION"]


def as_rng(rng: Any = None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` from a seed, a Generator or None."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def tidy(rows: list[dict] | pd.DataFrame, **meta: Any) -> pd.DataFrame:
    """Build a tidy table (RangeIndex) and store ``meta`` in ``attrs['mixrank']``."""
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    df = df.reset_index(drop=True)
    info = {"version": MIXRANK_VERSION}
    info.update(meta)
    df.attrs["mixrank"] = info
    return df


def check_level(level: Any, error: type[Exception]) -> float:
    """Return ``level`` as a float in (0, 1) or raise ``error`` saying what is expected."""
    numeric = isinstance(level, (int, float, np.integer, np.floating)) and not isinstance(
        level, (bool, np.bool_))
    ok = numeric and 0.0 < float(level) < 1.0
    if not ok:
        raise error(f"level={level!r} is not a confidence level; expected a number strictly "
                    "between 0 and 1, e.g. 0.95")
    return float(level)


def listed(items: Iterable, limit: int = 10) -> str:
    """``repr`` of the first ``limit`` items joined by commas, for error messages."""
    items = list(items)
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(repr(i) for i in items[:limit]) + more
