"""Small shared helpers (no stage): random generators, table metadata, message lists, and
:class:`TextDisplay`, the one way a result or summary shows itself (``repr`` and HTML)."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ._version import MAX_DRAWS, MIXRANK_VERSION

__all__ = ["as_rng", "check_draws", "did_you_mean", "tidy", "check_level", "listed", "MIXRANK_VERSION", "MAX_DRAWS",
           "check_max_draws", "exact_sum", "exact_mean", "exact_group_sums", "TextDisplay"]


class TextDisplay:
    """Mixin of every result and summary: ``str()`` is its text, ``repr()`` the same
    text and ``_repr_html_()`` (notebooks) that text escaped in a ``<pre>`` block."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return "<pre>" + html.escape(str(self), quote=False) + "</pre>"



def _integral(x: np.ndarray) -> bool:
    """Whole numbers whose every partial sum is exact in binary64 (0/1 scores, counts)."""
    return bool(np.all(x == np.rint(x))) and float(np.abs(x).sum()) < 2.0 ** 52


def exact_sum(x: Any, whole: bool | None = None) -> float:
    """The sum of ``x`` correctly rounded, whatever the order of its values.

    Whole numbers (0/1 scores, counts, their differences) are summed exactly by
    numpy; other values by :func:`math.fsum`.  So identical multisets of
    values give bit-identical sums, and a sum that is exactly 0 is 0
    (docs/hardening.md §9: exact ties stay exact).  ``whole=True``: the caller
    knows the values are such whole numbers (differences of 0/1 cell scores),
    so they are not checked again.
    """
    a = np.asarray(x, dtype=float).ravel()
    if a.size == 0:
        return 0.0
    return float(a.sum()) if whole or _integral(a) else math.fsum(a.tolist())


def exact_mean(x: Any, whole: bool | None = None) -> float:
    """:func:`exact_sum` divided by the count (NaN for no values)."""
    a = np.asarray(x, dtype=float).ravel()
    return exact_sum(a, whole) / a.size if a.size else float("nan")


def exact_group_sums(codes: np.ndarray, x: np.ndarray, minlength: int = 0,
                     whole: bool | None = None) -> np.ndarray:
    """Per-code sums of ``x`` (as ``np.bincount(codes, weights=x)``), each correctly rounded
    (``whole=True``: as in :func:`exact_sum`, the values are known to be whole numbers)."""
    a = np.asarray(x, dtype=float)
    L = max(int(minlength), int(codes.max()) + 1 if codes.size else 0)
    if a.size == 0 or whole or _integral(a):
        return np.bincount(codes, weights=a, minlength=L)
    order = np.argsort(codes, kind="stable")
    cuts = np.flatnonzero(np.diff(codes[order])) + 1
    out = np.zeros(L)
    for part in np.split(order, cuts):
        out[codes[part[0]]] = math.fsum(a[part].tolist())
    return out


def check_max_draws(name: str, value: Any, error: type[Exception]) -> None:
    """Raise ``error`` when the count ``value`` of argument ``name`` exceeds :data:`MAX_DRAWS`."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) \
            and int(value) > MAX_DRAWS:
        raise error(f"{name}={int(value)} draws exceed the upper bound {MAX_DRAWS:,}; a Monte "
                    f"Carlo p-value from {MAX_DRAWS:,} draws has an error of about 2e-4 near "
                    f"0.05 (docs/hardening.md §8): use {name} <= {MAX_DRAWS}")


def did_you_mean(value: Any, choices: Iterable[Any]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices`` to a misspelled ``value``, else ''."""
    import difflib

    if not isinstance(value, str):
        return ""
    names = [str(c) for c in choices if isinstance(c, str)]
    close = difflib.get_close_matches(value.lower(), names, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def invalid_choice_hint(message: str) -> str:
    """:func:`did_you_mean` for argparse's "invalid choice: 'fitt' (choose from 'fit', ...)"."""
    import re

    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if m is None:
        return ""
    return did_you_mean(m.group(1), [c.strip().strip("'\"") for c in m.group(2).split(",")])


def check_draws(value: Any, name: str = "draws", minimum: int = 100,
                error: type[Exception] | None = None) -> int:
    """``value`` as a whole number of draws in ``[minimum, MAX_DRAWS]``, else ``error``.

    Used wherever draws set a Monte Carlo or an exact enumeration (a
    randomization test enumerates every sign flip when there are fewer than
    ``draws`` of them), so ``draws=0`` or ``-5`` is refused instead of
    silently raised to the minimum.  ``error`` defaults to OptionError.
    """
    if error is None:
        from .errors import OptionError
        error = OptionError
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and value == int(value):
        value, ok = int(value), True
    if not ok or int(value) < minimum:
        raise error(f"{name}={value!r}: expected a whole number of draws >= {minimum} "
                    f"(default 2000; at most {MAX_DRAWS:,})")
    check_max_draws(name, value, error)
    return int(value)


def as_rng(rng: Any = None, name: str = "rng") -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` from a seed, a Generator or None.

    The one validation of ``rng=`` for every entry point that draws (max-t,
    rank probabilities, bootstraps, simulations): anything but None, a
    non-negative integer seed, a sequence of them, a ``SeedSequence``, a
    ``BitGenerator`` or a ``Generator`` raises :class:`~mixrank.errors.OptionError`
    naming the argument, instead of numpy's raw ``TypeError``/``ValueError``.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    ok = False
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        ok = int(rng) >= 0
    elif isinstance(rng, (list, tuple, np.ndarray)):
        seq = np.asarray(rng, dtype=object).ravel()
        ok = len(seq) > 0 and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                                  and int(x) >= 0 for x in seq)
    if not ok:
        from .errors import OptionError
        raise OptionError(f"{name}={rng!r}: expected None, a non-negative integer seed (e.g. "
                          f"{name}=1) or a numpy.random.Generator")
    return np.random.default_rng(rng)


def _typed_column(values: list) -> Any:
    """``values`` (one column of a table's rows) as the array pandas would infer from them when
    they are all text, all floats or all 64-bit integers (bools excluded); else the list itself,
    for pandas to infer as from rows."""
    kinds = {type(v) for v in values}
    if kinds <= {float, np.float64}:
        return np.array(values, dtype=np.float64)
    if kinds <= {int, np.int64} and all(-2 ** 63 <= v < 2 ** 63 for v in values):
        return np.array(values, dtype=np.int64)
    if kinds == {str}:
        return np.array(values, dtype=object)
    return values


def _frame_of_rows(rows: list[dict]) -> pd.DataFrame:
    """``pd.DataFrame(rows)``, built column by column when every row has the same keys in the
    same order (the same table, without pandas' per-value inference over the rows)."""
    if not rows or not isinstance(rows[0], dict):
        return pd.DataFrame(rows)
    keys = tuple(rows[0])
    if any(tuple(r) != keys for r in rows):
        return pd.DataFrame(rows)
    return pd.DataFrame({k: _typed_column([r[k] for r in rows]) for k in keys}, copy=False)


def tidy(rows: list[dict] | pd.DataFrame, **meta: Any) -> pd.DataFrame:
    """Build a tidy table (RangeIndex) and store ``meta`` in ``attrs['mixrank']``."""
    if isinstance(rows, pd.DataFrame):
        df = rows.reset_index(drop=True)      # a new frame: the caller's attrs stay as they were
    else:
        df = _frame_of_rows(rows)             # built here: already on a RangeIndex
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
