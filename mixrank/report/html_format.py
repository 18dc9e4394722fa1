"""Stage report: the HTML building blocks of the report page.

Inputs: tidy tables, matplotlib axes, section builders.
Outputs: HTML fragments: a formatted table (:func:`format_table_html`), an
embedded PNG figure (:func:`figure_html`), a paragraph, and the visible
"omitted" note that replaces a section whose backend is missing or whose
computation raised a mixrank error (:func:`guard`).
Contents: :func:`fmt` (one cell value as text), :func:`format_table_html`,
:func:`figure_html`, :func:`pyplot_if_loaded`, :func:`paragraph`,
:func:`omitted_note`, :func:`guard`, :func:`with_letters` (a leaderboard table with the
column of ``res.letters()``), :func:`html_page` (the page shell: title,
meta line, table of contents, guarded sections, footer) -- used only by the one page
builder, :func:`mixrank.report.html.render_report`; the section modules use the rest.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from mixrank._util import MIXRANK_VERSION
from mixrank.errors import MixrankError
from mixrank.report import style

__all__ = ["fmt", "format_table_html", "figure_html", "pyplot_if_loaded", "paragraph",
           "omitted_note", "guard", "html_page", "with_letters"]


def fmt(v: Any) -> str:
    """Display text of one cell of the HTML report (the report's rounding; printed text --
    CLI, ``summary()``, the demo -- rounds through :mod:`mixrank._display`)."""
    if v is None:
        return "NA"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if math.isnan(x):
            return "NA"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if x == 0:
            return "0"
        if x == int(x) and abs(x) < 1e9:
            return str(int(x))
        if abs(x) >= 1e5 or abs(x) < 1e-3:
            return f"{x:.3g}"
        return f"{x:.4g}"
    if isinstance(v, (tuple, list)):
        return ", ".join(fmt(u) for u in v)
    try:
        if pd.isna(v):
            return "NA"
    except (TypeError, ValueError):
        pass
    return str(v)


def format_table_html(df: pd.DataFrame, *, caption: str | None = None) -> str:
    """An HTML ``<table>`` of a tidy table, numbers rounded for display.

    Parameters
    ----------
    df : pandas.DataFrame
        Any table; it is not modified.
    caption : str, optional
        Text shown under the table.

    Returns
    -------
    str
        HTML (escaped); floats with 4 significant digits (3 in scientific
        notation below 1e-3 or above 1e5), booleans as yes/no, NaN as NA.  Every
        row and column is shown (no scroll box hides them; the print stylesheet keeps
        them on paper).  Columns kept one release under a former name
        (``attrs["mixrank"]["deprecated_columns"]``) are not shown twice: only the new name.
    """
    former = (df.attrs.get("mixrank") or {}).get("deprecated_columns") or {}
    shown = df.drop(columns=[c for c in former if c in df.columns])
    # a long column name may break after its underscores (<wbr>: narrow numeric columns);
    # the title keeps the name whole (hover, search)
    head = "".join(f'<th title="{html.escape(str(c))}">'
                   f"{html.escape(str(c)).replace('_', '_<wbr>')}</th>" for c in shown.columns)
    bounds = [i for i, c in enumerate(shown.columns) if _is_bound(str(c))]
    scale_cols = bounds + [i for i, c in enumerate(shown.columns)
                           if str(c) in ("estimate", "std_error")]
    body = []
    for row in shown.itertuples(index=False):
        cells = []
        scale = max((abs(float(row[i])) for i in scale_cols if _finite(row[i])), default=0.0)
        for i, v in enumerate(row):
            cls = ' class="txt"' if isinstance(v, str) else ""
            text = fmt(v)
            if i in bounds and _finite(v) and abs(float(v)) <= 1e-9 * scale:
                text = "0"      # an interval that touches 0 (statistic at the critical value)
            cells.append(f"<td{cls}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    out = [f'<div class="scroll"><table class="mx"><thead><tr>{head}</tr></thead><tbody>',
           "\n".join(body), "</tbody></table></div>"]
    if caption:
        out.append(f'<p class="meta">{html.escape(caption)}</p>')
    return "".join(out)


def _is_bound(col: str) -> bool:
    """An interval bound column (``ci_lower``, ``lower``, ``rank_upper``, ...)."""
    return col in ("lower", "upper") or col.endswith(("_lower", "_upper"))


def _finite(v: Any) -> bool:
    return isinstance(v, (float, np.floating)) and math.isfinite(float(v))


def figure_html(ax: Any, *, name: str, alt: str, caption: str | None = None) -> str:
    """Embed the figure of ``ax`` as a base64 PNG."""
    fig = ax.figure
    buf = io.BytesIO()
    with style.style_context():
        fig.savefig(buf, format="png", dpi=style.DPI, bbox_inches="tight",
                    facecolor=style.COLORS["background"])
    plt = pyplot_if_loaded()
    if plt is not None:
        plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return (f'<figure class="plot" data-plot="{html.escape(name)}"><img alt="{html.escape(alt)}" '
            f'src="data:image/png;base64,{data}">{cap}</figure>')


def pyplot_if_loaded() -> Any:
    """``matplotlib.pyplot`` when something already imported it, else None."""
    import sys

    return sys.modules.get("matplotlib.pyplot")


def paragraph(text: str, cls: str | None = None) -> str:
    """An escaped ``<p>``, with ``class=cls`` when given."""
    c = f' class="{cls}"' if cls else ""
    return f"<p{c}>{html.escape(text)}</p>"


def omitted_note(what: str, exc: BaseException) -> str:
    """The visible note that replaces ``what``: a missing backend or the error's message."""
    if isinstance(exc, ImportError) and not isinstance(exc, MixrankError):
        mod = getattr(exc, "name", None) or str(exc)
        why = (f"its backend ({mod}) is not available in this installation of mixrank "
               f"{MIXRANK_VERSION}")
    else:
        why = f"{type(exc).__name__}: {str(exc).rstrip('.')}"
    return f'<div class="omitted"><strong>{html.escape(what)} omitted</strong>: {html.escape(why)}.</div>'


def with_letters(res: Any, tab: pd.DataFrame, level: float | None) -> tuple[pd.DataFrame, str]:
    """``tab`` (one row per model) with the column of ``res.letters(level=level)`` after
    ``ci_upper``, and a caption sentence saying what the letters mean; ``tab`` and "" when the
    result has no letters (fewer than 3 models, a fit restricted to some pairs)."""
    try:
        cld = res.letters(level=level)
    except MixrankError:
        return tab, ""
    out = tab.merge(cld[["model", "letters"]], on="model", how="left")
    out.index = tab.index
    out.attrs = dict(tab.attrs)
    cols = [c for c in out.columns if c != "letters"]
    at = cols.index("ci_upper") + 1 if "ci_upper" in cols else len(cols)
    meta = cld.attrs["mixrank"]
    return out[[*cols[:at], "letters", *cols[at:]]], (
        f" Letters: models sharing a letter are not told apart by the {meta['adjust']}-adjusted "
        f"pairwise tests over all {meta['family_size']} pairs at level {meta['level']:g}.")


def guard(what: str, build: Callable[[], str]) -> str:
    """Run a section (or part) builder; a missing backend or a mixrank error becomes a note."""
    try:
        return build()
    except (ImportError, MixrankError, NotImplementedError) as exc:
        return omitted_note(what, exc)


def html_page(page_title: str, meta: str, sections: Sequence[tuple[str, str]],
              build: Callable[[str], str], *, notes: Sequence[str] = (),
              preamble: str = "", csv_command: str = "mixrank ...",
              progress: Callable[[int, int], Any] | None = None) -> str:
    """A complete self-contained HTML5 report page.

    Parameters
    ----------
    page_title : str
        Heading and ``<title>`` (escaped here).
    meta : str
        The meta line under the heading, already HTML.
    sections : sequence of (id, title)
        Sections in page order; each gets a table-of-contents entry and a
        ``<section id=...>`` whose content is ``build(id)`` run through
        :func:`guard` (so a mixrank error or a missing backend becomes a note).
    build : callable
        Section id -> HTML fragment.
    notes : sequence of str
        Plain-text notes shown (escaped) between the contents and the first section.
    preamble : str
        HTML shown (as given) under the meta line, e.g. the binomial GLMM's
        scale line and unit-of-inference sentence.
    csv_command : str
        The command named in the footer for exact values (``--format csv``).
    progress : callable, optional
        Called ``progress(done, total)`` after each section.

    Returns
    -------
    str
        The document, ending in a newline.
    """
    body = [f"<h1>{html.escape(page_title)}</h1>", f'<p class="meta">{meta}</p>', preamble,
            "<nav><ul>" + "".join(f'<li><a href="#{sid}">{html.escape(t)}</a></li>'
                                  for sid, t in sections) + "</ul></nav>"]
    body += [f'<div class="note">{html.escape(n)}</div>' for n in notes]
    for i, (sid, t) in enumerate(sections):
        def one(sid: str = sid) -> str:
            return build(sid)
        content = guard(f"Section '{t}'", one)
        body.append(f'<section id="{sid}"><h2>{html.escape(t)}</h2>{content}</section>')
        if progress is not None:
            progress(i + 1, len(sections))
    body.append(f"<footer>Generated by mixrank {MIXRANK_VERSION}. Numbers are rounded for "
                "display; exact values via the Python API or "
                f"<code>{html.escape(csv_command)} --format csv</code>.</footer>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"generator\" content=\"mixrank {MIXRANK_VERSION}\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(page_title)}</title><style>{style.CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
