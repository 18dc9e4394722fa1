"""Stage results: the leaderboard table for a paper (``res.table()``: LaTeX, Markdown, HTML).

Inputs: a pairwise result (:class:`~mixrank.results.pairwise_result.PairwiseResult`):
its ``model_scores()``, ``rank_intervals()`` and ``letters()`` at one level.
Outputs: :func:`leaderboard_rows` (the rows, full precision, best first) and
:func:`render_table` (the text): one row per model with its score and
confidence interval (``[lower, upper]`` or ``score +/- half-width``), rank
interval, compact letters and ``n``, under a caption stating the unit of
inference, the SE/df method, the adjustment and the level.  LaTeX is a
booktabs ``table`` whose text (model names, caption) is escaped; Markdown a
pipe table with a ``Table:`` caption (pandoc); HTML a ``<table>`` with a
``<caption>``.  Printing only: every number is the API's, rounded to
``digits`` decimals here (as ``summary()`` formats in this stage; ``report``
cannot be imported by results, tests/test_import_graph.py).
"""

from __future__ import annotations

import html
import math
import re
from typing import Any

import pandas as pd

from ..errors import OptionError

__all__ = ["PaperTableMixin", "FORMATS", "INTERVALS", "leaderboard_rows", "render_table",
           "latex_escape"]

#: ``table(format=)`` values.
FORMATS: tuple[str, ...] = ("latex", "markdown", "html")
#: ``table(interval=)`` values: ``[lower, upper]`` or ``estimate +/- half-width``.
INTERVALS: tuple[str, ...] = ("bounds", "pm")

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
          "^": r"\textasciicircum{}", "|": r"\textbar{}", "<": r"\textless{}",
          ">": r"\textgreater{}"}


def latex_escape(text: str) -> str:
    """``text`` safe in LaTeX text mode (``\\ & % $ # _ { } ~ ^ | < >`` escaped)."""
    return "".join(_LATEX.get(c, c) for c in str(text))


def _md_escape(text: str) -> str:
    """``text`` safe in a Markdown table cell (``\\ | * _ ` < > [ ]`` escaped)."""
    return re.sub(r"([\\|*_`<>\[\]])", r"\\\1", str(text))


def check_digits(digits: Any) -> int:
    """``digits`` as an int >= 0, else the :class:`OptionError`."""
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise OptionError(f"digits={digits!r} is not a number of decimals; expected an integer "
                          ">= 0, e.g. digits=3")
    return digits


def leaderboard_rows(res: Any, *, level: float | None = None,
                     adjust: Any = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The rows of the paper table at full precision, best first, and what the caption says.

    Columns: ``model, estimate, ci_lower, ci_upper, rank_lower, rank_upper,
    letters, n``; each number is that of ``model_scores(level)``,
    ``rank_intervals(level)`` and ``letters(adjust, level)``.
    """
    lev = res._level(level)
    sc = res.model_scores(lev)
    ri = res.rank_intervals(lev)
    cld = res.letters(adjust, lev)
    cols = ["model", "estimate", "ci_lower", "ci_upper", "n"]
    rows = cld[["model", "letters"]].merge(sc[cols], on="model", how="left", validate="1:1")
    rows = rows.merge(ri[["model", "rank_lower", "rank_upper"]], on="model", how="left",
                      validate="1:1")
    rows = rows[["model", "estimate", "ci_lower", "ci_upper", "rank_lower", "rank_upper",
                 "letters", "n"]]
    sm, rm, lm = (t.attrs.get("mixrank", {}) for t in (sc, ri, cld))
    unit = sm.get("unit") or rm.get("unit")
    if unit:                  # the GLMM's sentence: its first clause ("cells", "subject")
        unit = re.sub(r"^unit of inference for model contrasts: ", "", str(unit))
        unit = re.split(r" \(|;", unit)[0]
    if not unit and sm.get("cluster"):
        unit = f"battles, clustered by {sm['cluster']}"
    info = dict(level=lev, unit=unit or "cells", formula=sm.get("formula", ""),
                score_se=sm.get("df_method") or "Wald z (normal)",
                contrast_se=lm.get("df_method") or "", adjust=lm.get("adjust"),
                family_size=lm.get("family_size"), rank_coverage=rm.get("coverage"),
                rank_adjust=rm.get("method"), scale=sm.get("scale"), n_models=len(rows))
    return rows.reset_index(drop=True), info


def _num(x: Any, digits: int, minus: str) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "NA"
    s = f"{round(float(x), digits):.{digits}f}"
    if s.startswith("-") and float(s) == 0:      # -0.000 prints as 0.000
        s = s[1:]
    return minus + s[1:] if s.startswith("-") else s


def caption_text(info: dict[str, Any]) -> str:
    """The caption: the models, the score's SE/df and unit, the rank intervals, the letters."""
    lev = f"{100 * info['level']:g}%"
    scale = f" ({info['scale']} scale)" if info.get("scale") else ""
    formula = f"; fit {info['formula']}" if info.get("formula") else ""
    same = info["contrast_se"] in ("", info["score_se"])
    return (f"{info['n_models']} models, best first{formula}. Score{scale} with its {lev} "
            f"confidence interval; SE and df: {info['score_se']}; unit of inference: "
            f"{info['unit']}. Rank: {lev} {info['rank_coverage']} rank interval "
            f"({info['rank_adjust']} adjustment). Letters: models sharing a letter are not told apart by "
            f"the {info['adjust']}-adjusted pairwise tests over all {info['family_size']} pairs "
            f"at level {info['level']:g}" + ("" if same else
                                              f" (SE and df: {info['contrast_se']})") + ".")


def render_table(rows: pd.DataFrame, info: dict[str, Any], fmt: str, *, digits: int = 3,
                 interval: str = "bounds", caption: str | None = None,
                 label: str | None = None) -> str:
    """The table text in ``fmt`` (one of :data:`FORMATS`) from :func:`leaderboard_rows`."""
    latex, md = fmt == "latex", fmt == "markdown"
    esc = latex_escape if latex else _md_escape if md else html.escape
    minus = "$-$" if latex else "\u2212" if fmt == "html" else "-"
    dash = "--" if latex else "\u2013"
    lev = f"{100 * info['level']:g}"
    head = ["Model", "Score", (lev + r"\% CI") if latex else f"{lev}% CI", "Rank", "Letters",
            "$n$" if latex else "n"]
    if interval == "pm":
        head = [head[0], "Score " + (r"$\pm$" if latex else "\u00b1") + " CI", *head[3:]]
    body = []
    for r in rows.itertuples(index=False):
        score = _num(r.estimate, digits, minus)
        lo, hi = _num(r.ci_lower, digits, minus), _num(r.ci_upper, digits, minus)
        if interval == "pm":
            half = _num((r.ci_upper - r.ci_lower) / 2, digits, minus)
            cells = [f"{score} " + (r"$\pm$" if latex else "\u00b1") + f" {half}"]
        else:
            cells = [score, f"[{lo}, {hi}]"]
        rank = ("NA" if pd.isna(r.rank_lower) else str(int(r.rank_lower)) if
                r.rank_lower == r.rank_upper else f"{int(r.rank_lower)}{dash}{int(r.rank_upper)}")
        n = "NA" if pd.isna(r.n) else f"{int(r.n)}"
        body.append([esc(r.model), *cells, rank, r.letters, n])
    if caption and not caption.rstrip().endswith((".", "!", "?", ":")):
        caption = caption.rstrip() + "."
    cap = " ".join(x for x in (caption, caption_text(info)) if x)
    if latex:
        spec = "l" + "r" * (len(head) - 4) + "ccr"
        out = [r"\begin{table}[htbp]", r"\centering", r"\caption{" + esc(cap) + "}"]
        if label:
            out.append(r"\label{" + label + "}")
        out += [r"\begin{tabular}{" + spec + "}", r"\toprule", " & ".join(head) + r" \\",
                r"\midrule", *(" & ".join(b) + r" \\" for b in body), r"\bottomrule",
                r"\end{tabular}", r"\end{table}"]
        return "\n".join(out) + "\n"
    if md:
        align = [":--", *["--:"] * (len(head) - 4), ":-:", ":-:", "--:"]
        out = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |",
               *("| " + " | ".join(b) + " |" for b in body), "", "Table: " + esc(cap)]
        return "\n".join(out) + "\n"
    ident = f' id="{html.escape(label)}"' if label else ""
    out = [f'<table class="mixrank-table"{ident}>', f"<caption>{esc(cap)}</caption>",
           "<thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead>", "<tbody>",
           *("<tr>" + "".join(f"<td>{c}</td>" for c in b) + "</tr>" for b in body),
           "</tbody>", "</table>"]
    return "\n".join(out) + "\n"


class PaperTableMixin:
    """``table()`` of every pairwise result (a base of
    :class:`~mixrank.results.pairwise_result.PairwiseResult`)."""

    def table(self, format: str = "latex", digits: int = 3, *, level: float | None = None,
              adjust: Any = None, interval: str = "bounds", caption: str | None = None,
              label: str | None = None) -> str:
        """The leaderboard as a table for a paper: LaTeX (booktabs), Markdown or HTML.

        Parameters
        ----------
        format : {"latex", "markdown", "html"}, default "latex"
        digits : int, default 3
            Decimals of the scores and interval bounds (an integer >= 0).
        level : float, optional
            Level of the intervals and of the letters' tests; default the fit's.
        adjust : str, optional
            The letters' adjustment (:meth:`letters`); default the fit's.
        interval : {"bounds", "pm"}, default "bounds"
            ``[lower, upper]`` in its own column, or ``score +/- half-width``
            (the half-width of the interval, symmetric for t and Wald
            intervals).
        caption : str, optional
            Text put before the generated caption (escaped as the names are).
        label : str, optional
            LaTeX ``\\label`` (HTML: the table's ``id``); not escaped.

        Returns
        -------
        str
            One row per model, best first: model, score, interval, rank
            interval (``lower--upper``), letters, ``n``; a caption stating the
            unit of inference, the SE/df method, the adjustment and the level.
            Each number is ``model_scores()``, ``rank_intervals()`` or
            ``letters()`` at ``level``, rounded to ``digits`` decimals.

        Raises
        ------
        OptionError
            An unknown ``format`` or ``interval`` (the accepted values named),
            ``digits`` not an integer >= 0.
        DesignError
            Fewer than 3 models (the letters need them).

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> print(res.table("markdown").splitlines()[0])
        | Model | Score | 95% CI | Rank | Letters | n |
        """
        fmt = format.lower() if isinstance(format, str) else format
        if fmt not in FORMATS:
            raise OptionError(f"format={format!r} is not a table format; expected one of "
                              f"{', '.join(map(repr, FORMATS))}")
        if interval not in INTERVALS:
            raise OptionError(f"interval={interval!r}; expected one of "
                              f"{', '.join(map(repr, INTERVALS))}")
        digits = check_digits(digits)
        rows, info = leaderboard_rows(self, level=level, adjust=adjust)
        if interval == "pm":
            up, down = rows["ci_upper"] - rows["estimate"], rows["estimate"] - rows["ci_lower"]
            skew = ((up - down).abs() > 1e-9 * (up.abs() + down.abs() + 1)).to_numpy()
            if skew.any():
                raise OptionError(
                    f"interval='pm' needs symmetric intervals; {int(skew.sum())} model(s) have "
                    f"an asymmetric one (e.g. {rows['model'][skew].iloc[0]!r}: bootstrap "
                    "percentiles or a transformed scale): use interval='bounds'")
        return render_table(rows, info, fmt, digits=digits, interval=interval, caption=caption,
                            label=label)
