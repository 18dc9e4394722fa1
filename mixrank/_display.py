"""Stage 0 (no statistics): the one display format of every printed table and summary.

Inputs: a tidy DataFrame (its ``attrs["mixrank"]["table"]`` names it) or prose.
Outputs: text of at most :data:`WIDTH` characters a line, rounded for reading
as lme4 and emmeans print: each estimate (and interval end) to the decimal
place its standard error supports, standard errors to 2 significant digits
(3 when the first is 1), p-values as R's ``format.pval(p, digits = 2, eps =
0.001)`` and every other number to 4 significant digits.  A table too wide for
the line is printed in blocks of columns, its key columns (model, pair,
group) repeated in each block, as R prints a wide data frame; long notes are
footnotes below the table.  The returned DataFrames are never touched: only
this text is rounded (design.md "Returned tables").

Used by the CLI (:mod:`mixrank.cli.common`), ``summary()`` and every
result's printing.  Contents: :data:`COMPACT` (the default column set of
each table; the rest behind ``--wide`` / the API's full table),
:func:`format_table`, :func:`wrap`, and the number formats
:func:`format_p`, :func:`format_se`, :func:`format_at`, :func:`format_signif`,
:func:`se_decimals`.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["WIDTH", "COMPACT", "format_table", "format_markdown", "wrap", "format_p", "format_se", "format_at",
           "format_signif", "se_decimals", "format_value"]

#: Characters a printed line may hold (design.md "Returned tables").
WIDTH = 100
#: Significant digits of a number that has no standard error beside it (lme4's print).
DIGITS = 4
#: Below this a p-value prints as ``<0.001`` (R's ``format.pval`` ``eps``).
P_EPS = 0.001
#: A text cell longer than this is shortened in the middle (``--format csv`` keeps it whole).
MAX_CELL = 40

#: Columns whose values are p-values (printed as R's ``format.pval``).
_P = re.compile(r"^(p_value|p_adjusted|p_greater|p_less)(_\w+)?$|_p_value$")
#: Columns holding standard errors (2-3 significant digits).
_SE = re.compile(r"^(\w+_)?std_error(_\w+)?$")
#: Degrees of freedom (3 significant digits, as lmerTest prints them).
_DF = re.compile(r"^(df|df\d|df_\w+|\w+_df)$")
#: Columns printed at the decimal place of the row's ``std_error``.
_ON_SE = re.compile(r"^(estimate|bias|ci_lower|ci_upper)(_\w+)?$")
#: Key columns repeated in every block of a wide table.
_KEYS = ("model", "model_a", "model_b", "group", "term", "kind", "vary", "grouping", "judge",
         "subject", "question", "by")
#: Text columns printed as footnotes below the table.
_FOOTNOTES = ("note", "basis")
#: Columns moved to a caption line when constant (compact view only).
_CAPTION = ("level",)

#: The default (compact) columns of each table, by ``attrs["mixrank"]["table"]``; a table not
#: named here shows all its columns.  ``--wide`` (CLI) and the returned DataFrame have all.
COMPACT: dict[str, tuple[str, ...]] = {
    "contrasts": ("model_a", "model_b", "group", "term", "estimate", "std_error", "df",
                  "statistic", "p_value", "p_adjusted", "ci_lower", "ci_upper", "n",
                  "odds_ratio", "note"),
    "model_scores": ("model", "group", "estimate", "std_error", "df", "ci_lower", "ci_upper",
                     "n", "iid_std_error", "letters", "note"),
    "rank_intervals": ("model", "group", "estimate", "std_error", "rank", "rank_lower",
                       "rank_upper", "n", "letters", "note"),
    "plan": ("kind", "vary", "subjects", "questions", "prompts", "n", "std_error", "mde", "q",
             "resolved", "delta"),
    "sensitivity": ("kind", "grouping", "model_a", "model_b", "replicates", "resolved_cluster",
                    "stability", "ci_lower", "ci_upper", "n_star_cluster", "n_star_bootstrap",
                    "p_value"),
}


# --------------------------------------------------------------------------- numbers

def _finite(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_)) and math.isfinite(float(x))


def format_p(p: Any) -> str:
    """A p-value as R's ``format.pval(p, digits = 2, eps = 0.001)``: ``0.023``, ``<0.001``."""
    if not _finite(p):
        return "NaN" if p is None or p != p else str(p)
    p = float(p)
    return f"<{P_EPS:g}" if p < P_EPS else f"{p:.2g}"


def se_decimals(se: Any) -> int | None:
    """Decimal places at which a standard error is shown: 2 significant digits, 3 when the
    first is 1 (``0.0346`` -> 3, ``0.0148`` -> 4, ``12.3`` -> 1); None for 0 or NaN."""
    if not _finite(se) or float(se) == 0.0:
        return None
    se = abs(float(se))
    exp = math.floor(math.log10(se))
    lead = int(round(se / 10.0 ** exp, 6))
    return 1 - exp + (1 if lead == 1 else 0)


def format_at(x: Any, decimals: int | None) -> str:
    """``x`` rounded at ``decimals`` places (negative: to tens, hundreds); 4 significant
    digits when ``decimals`` is None."""
    if not _finite(x):
        return _special(x)
    if decimals is None:
        return format_signif(x)
    x = float(x)
    if decimals <= 0:
        text = f"{round(x, decimals):.0f}"
    else:
        text = f"{x:.{decimals}f}"
    return "0" if re.fullmatch(r"-?0(\.0*)?", text) and decimals <= 0 else _no_neg_zero(text)


def format_se(se: Any) -> str:
    """A standard error to 2 significant digits (3 when the first is 1)."""
    return format_at(se, se_decimals(se))


def format_signif(x: Any, digits: int = DIGITS) -> str:
    """``x`` to ``digits`` significant digits without trailing zeros (``0.95``, ``4335``,
    ``1.477e+07``); whole numbers below 10^6 print whole."""
    if not _finite(x):
        return _special(x)
    x = float(x)
    if x == 0.0:
        return "0"
    if x == round(x) and abs(x) < 1e6:           # a whole number (a count) prints whole
        return f"{x:.0f}"
    if 1e-4 <= abs(x) < 1e6:
        x = float(f"{x:.{digits}g}")
        exp = math.floor(math.log10(abs(x)))
        dec = max(0, digits - 1 - exp)
        text = f"{x:.{dec}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return _no_neg_zero(text)
    mant, _, exp_s = f"{x:.{digits - 1}e}".partition("e")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return f"{mant}e{exp_s}"


def _no_neg_zero(text: str) -> str:
    return text[1:] if text.startswith("-") and set(text[1:]) <= set("0.") else text


def _special(x: Any) -> str:
    if x is None:
        return "NaN"
    if isinstance(x, (float, np.floating)):
        return "NaN" if x != x else ("inf" if x > 0 else "-inf")
    return str(x)


def format_value(x: Any) -> str:
    """One cell of a column without a role: booleans, whole numbers, 4 significant digits."""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return format_signif(x)
    if x is None or (isinstance(x, float) and x != x):
        return "NaN"
    return str(x)


# --------------------------------------------------------------------------- tables

def _shorten(text: str, limit: int = MAX_CELL) -> str:
    if len(text) <= limit:
        return text
    keep = limit - 3
    return text[: (keep + 1) // 2] + "..." + text[len(text) - keep // 2:]


def _column_cells(df: pd.DataFrame, col: str, se: Sequence[int | None] | None) -> list[str]:
    values = df[col].tolist()
    if _P.search(col):
        return [format_p(v) if _finite(v) or v != v else str(v) for v in values]
    if _SE.match(col):
        return [format_se(v) if _finite(v) else format_value(v) for v in values]
    if _DF.match(col):
        return [format_signif(v, 3) if _finite(v) else format_value(v) for v in values]
    if se is not None and _ON_SE.match(col):
        return [format_at(v, d) if _finite(v) else format_value(v) for v, d in zip(values, se)]
    return [_shorten(format_value(v)) for v in values]


def _select(df: pd.DataFrame, columns: Sequence[str] | None) -> tuple[pd.DataFrame, list[str]]:
    """The shown columns and the caption lines of the columns moved out of the table."""
    if columns is None:
        return df, []
    keep = [c for c in columns if c in df.columns]
    caption = []
    for c in _CAPTION:
        if c in df.columns and c not in keep and len(df) and df[c].nunique(dropna=False) == 1:
            caption.append(f"{c}: {format_value(df[c].iloc[0])}")
    return df[keep], caption


def _footnotes(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Long text columns (``note``) as markers ``[1]`` with the text below the table."""
    notes: dict[str, int] = {}
    out = df
    for col in _FOOTNOTES:
        if col not in df.columns:
            continue
        texts = ["" if v is None or (isinstance(v, float) and v != v) else str(v)
                 for v in df[col].tolist()]
        if not any(texts):
            out = out.drop(columns=col)
            continue
        marks = []
        for t in texts:
            if t and t not in notes:
                notes[t] = len(notes) + 1
            marks.append(f"[{notes[t]}]" if t else "")
        out = out.assign(**{col: marks})
    lines = [wrap(f"[{k}] {t}", indent="    ") for t, k in notes.items()]
    return out, lines


def _prepare(df: pd.DataFrame, columns: Sequence[str] | None | str
             ) -> tuple[pd.DataFrame, dict[str, list[str]], list[str], list[str]]:
    """The shown columns, their cells as text, the caption lines and the footnotes."""
    if isinstance(columns, str):
        name = df.attrs.get("mixrank", {}).get("table") if columns == "compact" else None
        columns = COMPACT.get(name) if isinstance(name, str) else None
    shown, caption = _select(df, columns)
    meta = df.attrs.get("mixrank", {})
    if meta.get("table") == "rank_intervals" and meta.get("comparisons"):
        caption.insert(0, wrap(str(meta["comparisons"])))
    shown, notes = _footnotes(shown)
    se = None
    if "std_error" in df.columns:
        se = [se_decimals(v) for v in df["std_error"].tolist()]
    return shown, {c: _column_cells(shown, c, se) for c in shown.columns}, caption, notes


def format_markdown(df: pd.DataFrame, *, columns: Sequence[str] | None | str = "compact") -> str:
    """``df`` as a Markdown table, rounded and with the columns of :func:`format_table`."""
    shown, cells, caption, notes = _prepare(df, columns)
    cols = list(shown.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cells[c][i] for c in cols) + " |" for i in range(len(shown))]
    return "\n".join(caption + [""] * bool(caption) + lines + [""] * bool(notes) + notes) + "\n"


def format_table(df: pd.DataFrame, *, columns: Sequence[str] | None | str = "compact",
                 width: int = WIDTH, index: bool = False) -> str:
    """``df`` as aligned text of at most ``width`` characters a line, rounded for reading.

    Parameters
    ----------
    df : pandas.DataFrame
        Any tidy table; it is not modified.
    columns : "compact", "all" or a list of column names
        ``"compact"``: the table's default columns (:data:`COMPACT`, by
        ``attrs["mixrank"]["table"]``; all columns for a table not listed);
        ``"all"``: every column (``--wide``).
    width : int
        The longest line; a wider table is printed in blocks of columns, its
        key columns repeated in each.
    index : bool
        Print the index as a first column (for tables whose index is a key).
    """
    if index:
        df = df.reset_index()
    shown, cells, caption, notes = _prepare(df, columns)
    if shown.shape[1] == 0:
        return "\n".join(caption + notes + ["(no columns)"]) + "\n"
    widths = {c: max([len(str(c))] + [len(v) for v in cells[c]]) for c in shown.columns}
    keys: list[str] = []
    for c in shown.columns:
        if c in _KEYS and not pd.api.types.is_numeric_dtype(shown[c]):
            keys.append(c)
        else:
            break
    rest = [c for c in shown.columns if c not in keys]
    while keys and sum(widths[k] + 1 for k in keys) > 0.6 * width:   # keys too wide: shorten
        k = max(keys, key=lambda c: widths[c])
        if widths[k] <= 12:
            break
        cells[k] = [_shorten(v, max(12, widths[k] - 4)) for v in cells[k]]
        widths[k] = max([len(k)] + [len(v) for v in cells[k]])
    blocks: list[list[str]] = []
    cur: list[str] = []
    used = sum(widths[k] + 1 for k in keys) - 1 if keys else -1
    for c in rest:
        if cur and used + 1 + widths[c] > width:
            blocks.append(cur)
            cur, used = [], sum(widths[k] + 1 for k in keys) - 1 if keys else -1
        cur.append(c)
        used += 1 + widths[c]
    if cur or not blocks:
        blocks.append(cur)
    if any("..." in v and "..." not in str(x) for c in shown.columns
           for v, x in zip(cells[c], shown[c].tolist()) if isinstance(x, str)):
        notes.append("(names longer than the line allows are shortened with '...'; "
                     "--format csv writes them whole)")
    parts = []
    for block in blocks:
        cols = keys + block
        lines = [" ".join(f"{c:>{widths[c]}}" for c in cols)]
        for i in range(len(shown)):
            lines.append(" ".join(f"{cells[c][i]:>{widths[c]}}" for c in cols))
        parts.append("\n".join(line[:width] if len(line) > width else line for line in lines))
    text = "\n\n".join(parts)
    return "\n".join(caption + [text] + notes) + "\n"


# --------------------------------------------------------------------------- prose

def wrap(text: str, width: int = WIDTH, indent: str = "  ") -> str:
    """Each line of ``text`` longer than ``width`` wrapped at spaces, continued with ``indent``."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip(" "))]
        out.extend(textwrap.wrap(line, width=width, initial_indent="",
                                 subsequent_indent=lead + indent, break_long_words=True,
                                 break_on_hyphens=False, drop_whitespace=True)
                   if line.strip() else [""])
    return "\n".join(out)
