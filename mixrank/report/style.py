"""Stage report: the one shared look of every mixrank plot.

Inputs: none (constants) or a matplotlib Axes to decorate.
Outputs: colours, fonts, figure sizes and small helpers that the plot
modules (``plots.py``, ``plots_ranks.py``, ``plots_resolution.py``) use so
that every figure of a report looks alike.
Contents: the palette (:data:`COLORS`, :data:`COMPONENT_COLORS`), font and
size constants, :func:`rc` (matplotlib rc parameters), :func:`style_context`
(a context manager applying them), :func:`new_axes` (a figure sized for a
number of rows), :func:`component_color` and :func:`finish_axes`.
Draws nothing by itself and computes no statistics.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from mixrank.errors import require

__all__ = ["COLORS", "COMPONENT_COLORS", "RESIDUAL_COLOR", "FONT_FAMILY", "FONT_SIZE", "TITLE_SIZE", "FIG_WIDTH",
           "ROW_HEIGHT", "BASE_HEIGHT", "MAX_HEIGHT", "DPI", "rc", "style_context", "new_axes",
           "component_color", "finish_axes"]

#: Named colours (colour-blind safe, Okabe-Ito based).
COLORS: dict[str, str] = {
    "primary": "#0072B2",      # estimates, intervals
    "accent": "#D55E00",       # point marks, highlights
    "significant": "#0072B2",  # an interval that excludes zero / a resolved verdict
    "neutral": "#8C8C8C",      # an interval that covers zero / an unresolved verdict
    "reference": "#404040",    # zero lines, reference lines
    "grid": "#D9D9D9",
    "text": "#222222",
    "background": "#FFFFFF",
}

#: Colours of variance components, in the order the formula names them.
COMPONENT_COLORS: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9",
                                     "#F0E442", "#D55E00")
#: The residual always gets the same light grey.
RESIDUAL_COLOR = "#BDBDBD"

FONT_FAMILY: tuple[str, ...] = ("DejaVu Sans", "Liberation Sans", "Arial", "sans-serif")
FONT_SIZE = 9.0
TITLE_SIZE = 10.5
FIG_WIDTH = 7.0      # inches
ROW_HEIGHT = 0.24    # inches per plotted row (pair or model)
BASE_HEIGHT = 1.1    # inches for axes labels and title
MAX_HEIGHT = 30.0    # inches; very long tables are cut by the caller, not squeezed
DPI = 110


def rc() -> dict[str, Any]:
    """Matplotlib rc parameters of the mixrank look.

    Returns
    -------
    dict
        Keys of :data:`matplotlib.rcParams`.
    """
    return {
        "font.family": "sans-serif",
        "font.sans-serif": list(FONT_FAMILY),
        "font.size": FONT_SIZE,
        "axes.titlesize": TITLE_SIZE,
        "axes.titleweight": "bold",
        "axes.labelsize": FONT_SIZE,
        "axes.edgecolor": COLORS["reference"],
        "axes.labelcolor": COLORS["text"],
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": False,
        "grid.color": COLORS["grid"],
        "grid.linewidth": 0.6,
        "xtick.labelsize": FONT_SIZE - 0.5,
        "ytick.labelsize": FONT_SIZE - 0.5,
        "xtick.color": COLORS["text"],
        "ytick.color": COLORS["text"],
        "legend.fontsize": FONT_SIZE - 0.5,
        "legend.frameon": False,
        "figure.dpi": DPI,
        "savefig.dpi": DPI,
        "figure.facecolor": COLORS["background"],
        "savefig.facecolor": COLORS["background"],
        "savefig.bbox": "tight",
    }


def style_context() -> AbstractContextManager:
    """A context manager applying :func:`rc` (``with style_context(): ...``).

    Raises
    ------
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).
    """
    mpl = require("matplotlib", "plot", "mixrank plots")
    return mpl.rc_context(rc())


def new_axes(n_rows: int, *, width: float = FIG_WIDTH, pyplot: bool = True) -> Any:
    """A new figure and Axes sized for ``n_rows`` horizontal rows.

    Parameters
    ----------
    n_rows : int
        Rows to be drawn (pairs, models, ...).
    width : float
        Figure width in inches.
    pyplot : bool, default True
        Create the figure through :mod:`matplotlib.pyplot` (shown by
        ``plt.show()``, closed by ``plt.close``).  False creates a bare
        :class:`matplotlib.figure.Figure` that no GUI backend manages (what
        the HTML report uses: it works under any backend).

    Returns
    -------
    matplotlib.axes.Axes
    """
    height = min(MAX_HEIGHT, BASE_HEIGHT + ROW_HEIGHT * max(int(n_rows), 1))
    with style_context():
        if pyplot:
            plt = require("matplotlib.pyplot", "plot", "mixrank plots")
            _, ax = plt.subplots(figsize=(width, height), layout="constrained")
        else:
            figure = require("matplotlib.figure", "plot", "mixrank plots")
            ax = figure.Figure(figsize=(width, height), layout="constrained").subplots()
    ax.figure._mixrank_fits = True     # fit_figure may grow it to hold every label
    return ax


def fit_figure(ax: Any) -> Any:
    """Make every text of the figure of ``ax`` lie inside it (plots never clip).

    A figure made by :func:`new_axes` is laid out by matplotlib's constrained layout; where
    its labels are wider than the figure can hold (a 40-character model name beside a
    pair's), the figure grows by what sticks out, measured on the rendered texts, and is
    laid out again.  A figure the caller made keeps its size.

    Returns
    -------
    matplotlib.axes.Axes
        The same Axes.
    """
    import warnings

    fig = ax.figure
    if not getattr(fig, "_mixrank_fits", False):
        return ax
    if not hasattr(fig.canvas, "get_renderer"):     # a bare Figure: measure with Agg
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    for _ in range(5):
        with warnings.catch_warnings():     # "axes sizes collapsed": the growth below fixes it
            warnings.simplefilter("ignore", UserWarning)
            fig.draw_without_rendering()
            r = fig.canvas.get_renderer()
            boxes = [t.get_window_extent(r) for t in _drawn_texts(fig)]
        W, H = fig.get_size_inches()
        dpi = fig.dpi
        x0 = min((b.x0 for b in boxes), default=0.0) / dpi
        x1 = max((b.x1 for b in boxes), default=0.0) / dpi
        y0 = min((b.y0 for b in boxes), default=0.0) / dpi
        y1 = max((b.y1 for b in boxes), default=0.0) / dpi
        grow_w = max(0.0, -x0) + max(0.0, x1 - W)
        grow_h = max(0.0, -y0) + max(0.0, y1 - H)
        if grow_w <= 0 and grow_h <= 0:
            break
        fig.set_size_inches(W + (grow_w + 0.15 if grow_w > 0 else 0.0),
                            H + (grow_h + 0.15 if grow_h > 0 else 0.0))
    return ax


def _drawn_texts(fig: Any) -> list[Any]:
    """The texts a draw of ``fig`` shows: visible, non-empty, and for tick labels only the
    ticks inside the view limits."""
    from matplotlib.text import Text

    ticks = set()
    for a in fig.axes:
        for axis in (a.xaxis, a.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for t in axis.get_major_ticks() + axis.get_minor_ticks():
                loc = t.get_loc()
                if loc is None or not (lo - 1e-9 * (abs(hi - lo) + 1) <= loc
                                       <= hi + 1e-9 * (abs(hi - lo) + 1)):
                    ticks.update({id(t.label1), id(t.label2)})
    return [t for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and id(t) not in ticks]


def component_color(name: str, order: list[str] | tuple[str, ...]) -> str:
    """Colour of a variance component: the residual is grey, others follow ``order``."""
    if name == "residual":
        return RESIDUAL_COLOR
    others = [g for g in order if g != "residual"]
    i = others.index(name) if name in others else len(others)
    return COMPONENT_COLORS[i % len(COMPONENT_COLORS)]


def finish_axes(ax: Any, *, title: str | None = None, xlabel: str | None = None,
                grid_axis: str = "x") -> Any:
    """Apply the shared decorations (spines, grid, fonts, title) to an Axes.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    title, xlabel : str, optional
    grid_axis : {"x", "y", "both"}

    Returns
    -------
    matplotlib.axes.Axes
        The same Axes.
    """
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.grid(axis=grid_axis, color=COLORS["grid"], linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=FONT_SIZE - 0.5, colors=COLORS["text"])
    if xlabel is not None:
        ax.set_xlabel(xlabel, fontsize=FONT_SIZE, color=COLORS["text"])
    if title is not None:
        ax.set_title(title, fontsize=TITLE_SIZE, fontweight="bold", color=COLORS["text"])
    return ax

#: Inline CSS of the HTML report (:mod:`mixrank.report.html`).
CSS = """
body{font-family:"DejaVu Sans","Liberation Sans",Arial,sans-serif;color:#222;background:#fff;
margin:0 auto;max-width:1100px;padding:1.2em 2em 3em;line-height:1.45;font-size:15px}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:2em;border-bottom:2px solid #0072B2;
padding-bottom:.15em}h3{font-size:1.05em;margin-top:1.4em}
.meta{color:#555;font-size:.92em}.meta code{font-size:1em}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.4em 1.2em}nav a{color:#0072B2}
table.mx{border-collapse:collapse;font-size:.86em;margin:.6em 0 1em;font-variant-numeric:tabular-nums}
table.mx th{background:#f0f4f8;text-align:left;padding:.25em .5em;border-bottom:1px solid #999;
vertical-align:bottom}
table.mx td{padding:.2em .5em;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}
table.mx td.txt{text-align:left;white-space:normal}
.scroll{overflow-x:auto}
.warnings li{margin:.2em 0}
.warnbox{background:#fdecea;border-left:4px solid #D55E00;padding:.5em 1em;margin:.8em 0}
pre{background:#f7f7f7;padding:.7em 1em;border-left:3px solid #0072B2;overflow-x:auto;font-size:.85em}
figure.plot{margin:1em 0}figure.plot img{max-width:100%;height:auto;display:block}
figcaption{color:#555;font-size:.88em;margin-top:.3em}
.note{background:#fff7e6;border-left:4px solid #E69F00;padding:.5em 1em;margin:.8em 0}
.omitted{background:#fdecea;border-left:4px solid #D55E00;padding:.5em 1em;margin:.8em 0}
footer{margin-top:3em;color:#777;font-size:.85em}
@media print{body{max-width:none;padding:0;font-size:11px}nav{display:none}
.scroll{overflow:visible}table.mx{font-size:.78em;page-break-inside:auto}
table.mx td,table.mx th{white-space:normal;word-break:break-word;padding:.1em .3em}
table.mx tr{page-break-inside:avoid}table.mx thead{display:table-header-group}
figure.plot{page-break-inside:avoid}}
"""
