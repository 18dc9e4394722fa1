"""Render the percent-format vignettes to self-contained HTML pages.

Usage (from the repository root)::

    python vignettes/render.py                      # all, into build/vignettes/
    python vignettes/render.py vignettes/01_getting_started.py --out /tmp/site

Each vignette is a plain Python script in jupytext's "percent" format:
``# %% [markdown]`` cells hold Markdown as ``#``-comments, ``# %%`` cells hold
code.  The script runs top to bottom in one namespace (with matplotlib's Agg
backend); the page shows each Markdown cell, each code cell, what it printed
(stdout and warnings), the value of a final bare expression (tables rendered
as HTML) and every matplotlib figure it left open (embedded PNG).  No
dependency beyond mixrank's own (matplotlib).  A failing cell stops the
render with exit code 1 and names the cell, unless ``--keep-going``.
"""

from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import html
import io
import os
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent

CSS = """
body{font-family:"DejaVu Sans","Liberation Sans",Arial,sans-serif;color:#222;max-width:980px;
margin:0 auto;padding:1em 2em 4em;line-height:1.5;font-size:15px}
h1{font-size:1.7em}h2{font-size:1.3em;margin-top:1.8em;border-bottom:2px solid #0072B2}
h3{font-size:1.1em}code{background:#f3f3f3;padding:0 .2em;font-size:.92em}
pre{padding:.6em 1em;overflow-x:auto;font-size:.84em;line-height:1.35}
pre.code{background:#f5f8fb;border-left:3px solid #0072B2}
pre.out{background:#fafafa;border-left:3px solid #bbb;color:#333}
pre.err{background:#fdecea;border-left:3px solid #D55E00}
table.mx{border-collapse:collapse;font-size:.84em;margin:.4em 0 1em}
table.mx th{background:#f0f4f8;text-align:left;padding:.2em .5em;border-bottom:1px solid #999}
table.mx td{padding:.15em .5em;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}
table.mx td.txt{text-align:left}.scroll{overflow-x:auto;max-height:30em;overflow-y:auto}
img.fig{max-width:100%;display:block;margin:.6em 0}.meta{color:#666;font-size:.88em}
"""


@dataclass
class Cell:
    kind: str       # "markdown" or "code"
    source: str
    line: int       # first line in the file (1-based)


def parse(text: str) -> list[Cell]:
    """Split a percent-format script into Markdown and code cells."""
    cells: list[Cell] = []
    kind, buf, start = "code", [], 1
    for i, line in enumerate(text.splitlines(), start=1):
        m = re.match(r"^# %%(.*)$", line)
        if m:
            cells.append(Cell(kind, "\n".join(buf), start))
            kind = "markdown" if "[markdown]" in m.group(1) else "code"
            buf, start = [], i + 1
            continue
        if kind == "markdown":
            line = re.sub(r"^# ?", "", line) if line.startswith("#") else line
        buf.append(line)
    cells.append(Cell(kind, "\n".join(buf), start))
    return [c for c in cells if c.source.strip()]


# ---------------------------------------------------------------- markdown

def _inline(text: str) -> str:
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for p in parts:
        if p.startswith("`") and p.endswith("`") and len(p) > 1:
            out.append(f"<code>{html.escape(p[1:-1])}</code>")
            continue
        s = html.escape(p, quote=False)
        s = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', s)
        s = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", s)
        s = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?!\w)", r"<em>\1</em>", s)
        out.append(s)
    return "".join(out)


def markdown(text: str) -> str:
    """A small Markdown subset: headings, paragraphs, lists, fenced code, inline marks."""
    out: list[str] = []
    para: list[str] = []
    lst: list[str] = []
    ltype = ""
    lines = text.splitlines()

    def flush() -> None:
        nonlocal para, lst, ltype
        if para:
            out.append(f"<p>{_inline(' '.join(para))}</p>")
            para = []
        if lst:
            out.append(f"<{ltype}>" + "".join(f"<li>{_inline(x)}</li>" for x in lst) + f"</{ltype}>")
            lst, ltype = [], ""

    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("```"):
            flush()
            j = i + 1
            code = []
            while j < len(lines) and not lines[j].strip().startswith("```"):
                code.append(lines[j])
                j += 1
            out.append(f'<pre class="code">{html.escape(chr(10).join(code))}</pre>')
            i = j + 1
            continue
        h = re.match(r"^(#{1,4})\s+(.*)$", line)
        ul = re.match(r"^\s*[-*]\s+(.*)$", line)
        ol = re.match(r"^\s*\d+[.)]\s+(.*)$", line)
        if h:
            flush()
            n = len(h.group(1))
            out.append(f"<h{n}>{_inline(h.group(2))}</h{n}>")
        elif ul or ol:
            kind = "ul" if ul else "ol"
            if para or (lst and ltype != kind):
                flush()
            ltype = kind
            lst.append((ul or ol).group(1))
        elif not line.strip():
            flush()
        elif lst and line.startswith("  "):
            lst[-1] += " " + line.strip()
        else:
            if lst:
                flush()
            para.append(line.strip())
        i += 1
    flush()
    return "\n".join(out)


# ---------------------------------------------------------------- execution

def _display(value: object) -> str:
    try:
        import pandas as pd

        if isinstance(value, pd.DataFrame):
            from mixrank.report.html import format_table_html

            if not isinstance(value.index, pd.RangeIndex):
                value = value.reset_index()  # a pivot's row labels are data here
            return format_table_html(value, max_rows=60)
    except ImportError:  # pragma: no cover
        pass
    return f'<pre class="out">{html.escape(repr(value))}</pre>'


def _figures() -> list[str]:
    import matplotlib.pyplot as plt

    out = []
    for num in plt.get_fignums():
        fig = plt.figure(num)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
        out.append('<img class="fig" alt="figure" src="data:image/png;base64,'
                   + base64.b64encode(buf.getvalue()).decode("ascii") + '">')
    plt.close("all")
    return out


def run_cell(source: str, namespace: dict, filename: str, line: int) -> tuple[str, object, bool]:
    """Execute one code cell: (captured text, value of a final expression, ok)."""
    tree = ast.parse(source, filename=filename)
    ast.increment_lineno(tree, line - 1)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    buf = io.StringIO()
    value, ok = None, True
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            exec(compile(tree, filename, "exec"), namespace)
            if last is not None:
                value = eval(compile(last, filename, "eval"), namespace)
        except Exception:
            traceback.print_exc(file=buf)
            ok = False
    return buf.getvalue(), value, ok


def render(path: Path, *, keep_going: bool = False) -> tuple[str, list[str]]:
    """HTML of one vignette and the list of failing cells (``file:line``)."""
    import matplotlib

    matplotlib.use("Agg")
    import warnings

    import matplotlib.pyplot as plt

    plt.close("all")  # figures left open by the caller are not the vignette's

    cells = parse(path.read_text(encoding="utf-8"))
    ns: dict = {"__name__": "__main__", "__file__": str(path)}
    body, failed = [], []
    title = path.stem
    old_cwd = os.getcwd()
    sys.path.insert(0, str(path.parent))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            for cell in cells:
                if cell.kind == "markdown":
                    if title == path.stem:
                        m = re.search(r"^#\s+(.+)$", cell.source, re.M)
                        title = m.group(1).strip() if m else title
                    body.append(markdown(cell.source))
                    continue
                body.append(f'<pre class="code">{html.escape(cell.source.strip())}</pre>')
                text, value, ok = run_cell(cell.source, ns, str(path), cell.line)
                if text.strip():
                    body.append(f'<pre class="{"out" if ok else "err"}">{html.escape(text.rstrip())}</pre>')
                if value is not None:
                    body.append(_display(value))
                body += _figures()
                if not ok:
                    failed.append(f"{path.name}:{cell.line}")
                    if not keep_going:
                        break
    finally:
        os.chdir(old_cwd)
        sys.path.remove(str(path.parent))
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body)
            + f'\n<p class="meta">Rendered from {html.escape(path.name)} by vignettes/render.py.</p>'
            + "\n</body></html>\n")
    return page, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, help="vignettes (default: all)")
    ap.add_argument("--out", type=Path, default=HERE.parent / "build" / "vignettes",
                    help="output folder (default build/vignettes, git-ignored)")
    ap.add_argument("--keep-going", action="store_true", help="render past failing cells")
    args = ap.parse_args(argv)
    files = args.files or sorted(HERE.glob("[0-9][0-9]_*.py"))
    args.out.mkdir(parents=True, exist_ok=True)
    links, failures = [], []
    for f in files:
        page, failed = render(f.resolve(), keep_going=args.keep_going)
        target = args.out / (f.stem + ".html")
        target.write_text(page, encoding="utf-8")
        failures += failed
        links.append(f'<li><a href="{html.escape(target.name)}">{html.escape(f.stem)}</a>'
                     + (" (failed)" if failed else "") + "</li>")
        print(f"{'FAILED' if failed else 'ok':6} {f.name} -> {target}", file=sys.stderr)
    (args.out / "index.html").write_text(
        f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>mixrank vignettes</title>"
        f"<style>{CSS}</style></head><body><h1>mixrank vignettes</h1><ul>{''.join(links)}</ul>"
        "</body></html>\n", encoding="utf-8")
    if failures:
        print("failing cells: " + ", ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
