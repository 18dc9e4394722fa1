"""Stage report: the HTML page of a binomial GLMM fit (``family="binomial"``).

Inputs: a :class:`~mixrank.results.glmm_result.GlmmResult`.  Outputs: a
self-contained HTML document (inline CSS, no scripts) with a "Scale" line
and the unit-of-inference sentence at the top, then the model scores, both
scales' contrasts (log-odds with odds ratios; probability differences
averaged over cells), variance components on the logit scale, glmer's
fixed-effect table, rank intervals, resolution verdicts (logit-scale Wald
N*) and the fit diagnostics, with the linear report's plots drawn on the
response scale where the page's readers compare accuracy (scores: the
logit interval transformed; contrasts: both scales' forest plots) and on
the logit scale where the tests live (rank intervals, resolution; the
variance components).  :func:`mixrank.report.html.render_report` hands a
GlmmResult to :func:`render_glmm_report` with its table formatter.
Computes no statistics.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from mixrank._util import MIXRANK_VERSION
from mixrank.errors import DataError, MixrankError
from mixrank.report import style
from mixrank.report.html_format import figure_html, guard

__all__ = ["render_glmm_report", "glmm_or_error"]

SCALE_LINE = ("Scale: binomial GLMM (glmer's literal reading, one joint fit over all models); "
              "contrasts on the logit scale (log-odds differences, odds ratios) and on the "
              "response scale (differences in probability averaged over the cells, delta-method "
              "SE); variance components on the logit scale. Every ranked table takes its point "
              "ranks and intervals from one quantity on the scale it names.")


def _section(sid: str, title: str, build: Any) -> str:
    try:
        content = build()
    except MixrankError as exc:
        content = f'<div class="omitted">{html.escape(title)} omitted: {html.escape(str(exc))}</div>'
    return f'<section id="{sid}"><h2>{html.escape(title)}</h2>{content}</section>'


def _figure(plot: Callable[[Any], Any], n_rows: int, *, name: str, alt: str,
            caption: str) -> str:
    """One figure (a plot of the linear report drawn on fresh Axes), or a visible note."""
    def build() -> str:
        ax = style.new_axes(n_rows, pyplot=False)
        return figure_html(plot(ax), name=name, alt=alt, caption=caption)

    return guard(f"{alt.capitalize()} plot", build)


def _scores(res: Any, table: Callable[..., str], level: float | None) -> str:
    from mixrank.report.plots_scores import plot_model_scores

    tab = res.model_scores(level, scale="response")
    tab = tab.sort_values(["estimate", "model"], ascending=[False, True], kind="stable")

    shown = tab.copy()   # the legend names the unit, not the whole sentence
    shown.attrs["mixrank"] = {**tab.attrs["mixrank"],
                              "unit": tab.attrs["mixrank"]["unit"].split(": ", 1)[-1]}

    def plot(ax: Any) -> Any:
        plot_model_scores(shown, ax=ax, title="Model scores (probability)")
        ax.set_xlabel("probability averaged over the cells (logit-scale CI transformed)")
        return ax

    return (_figure(plot, len(tab), name="scores", alt="model scores with intervals",
                    caption="Probability averaged over the cells ± the logit-scale "
                            "interval of β transformed to this scale.")
            + table(tab, caption="Scale: response. estimate = " + tab.attrs["mixrank"]["score"]
                    + "; logit, probability_at_zero (conditional at zero random effects) and "
                    "observed (raw share) beside it; n = cells, trials beside it."))


def _contrasts(res: Any, table: Callable[..., str], level: float | None, scale: str) -> str:
    from mixrank.report.plots import plot_contrasts

    con = res.contrasts(level, scale=scale)
    what = ("log-odds difference (odds ratio = exp)" if scale == "logit"
            else "difference in probability averaged over the cells (delta-method CI)")
    return (_figure(lambda ax: plot_contrasts(con, ax, title=f"Contrasts, {scale} scale"),
                    len(con), name=f"contrasts_{scale}", alt=f"forest plot, {scale} scale",
                    caption=f"model_a − model_b: {what}; blue intervals exclude 0.")
            + table(con, max_rows=60))


def _components(res: Any, table: Callable[..., str]) -> str:
    from mixrank.report.plots_glmm import plot_glmm_components

    vc = res.variance_components()
    return (_figure(lambda ax: plot_glmm_components(vc, ax=ax, title="Variance components"),
                    len(vc), name="components", alt="variance components",
                    caption="Standard deviation of each random term on the logit scale "
                            "(hatched: singular).")
            + table(vc))


def _ranks(res: Any, table: Callable[..., str]) -> str:
    from mixrank.report.plots_ranks import plot_rank_intervals

    tab = res.rank_intervals()
    meta = tab.attrs["mixrank"]

    def plot(ax: Any) -> Any:
        with style.style_context():
            return plot_rank_intervals(tab, ax=ax, title="Rank intervals (logit scale)")

    return (_figure(plot, len(tab), name="ranks", alt="rank intervals",
                    caption="Point rank and rank confidence interval per model, both from the "
                            "log-odds.")
            + table(tab, caption=f"Scale: {meta['scale']}. Point ranks order estimate = "
                    f"{meta['score']}; the intervals come from the pairwise z tests of the same "
                    "quantity."))


def _resolution(res: Any, table: Callable[..., str]) -> str:
    from mixrank.report.plots_resolution import plot_resolution

    tab = res.resolution()
    return (_figure(lambda ax: plot_resolution(tab, ax=ax, title="Resolution (q = N / N*)"),
                    len(tab), name="resolution", alt="resolution ratios",
                    caption="q per adjacent pair (models ordered by log-odds); right of 1: "
                            "resolved.")
            + table(tab, max_rows=60, caption=tab.attrs["mixrank"]["n_star"]))


def _gaps(res: Any, table: Callable[..., str], level: float | None) -> str:
    """"Where the gaps live" for ``model * x``: the interaction tests, the per-level gaps
    (probability scale, forest plot) and the rank intervals per level (logit scale)."""
    from mixrank.report.plots_gaps import plot_gaps_by, plot_ranks_by

    by = res.by
    av = res.anova(adjust="holm")
    con = res.contrasts(level, scale="response", by=by)
    ranks = res.rank_intervals(by=by)
    n_rows = len(con) + con[["model_a", "model_b"]].drop_duplicates().shape[0]

    def ranks_plot(ax: Any) -> Any:
        with style.style_context():
            return plot_ranks_by(ranks, by, ax=ax, title=f"Rank intervals by {by} (logit)")

    return "".join([
        "<p>" + html.escape(f"Is the gap the same at every level of {by}? Wald chi-square "
                            "tests of the log odds ratios per pair (Holm across pairs) and "
                            "of the whole interaction (last row).") + "</p>",
        table(av),
        _figure(lambda ax: plot_gaps_by(con, by, ax=ax,
                                        title=f"Gap per level of {by} (probability)"),
                n_rows, name="gaps", alt=f"gaps per level of {by}",
                caption="model_a \u2212 model_b per level: difference in probability averaged "
                        "over the level's cells (delta-method CI)."),
        table(con, max_rows=80),
        _figure(ranks_plot, len(ranks), name="ranks_by", alt=f"rank intervals by {by}",
                caption="Point rank and rank interval per level, both from the log-odds."),
        table(ranks, max_rows=80),
    ])


def render_glmm_report(res: Any, *, table: Callable[..., str], title: str | None = None,
                       level: float | None = None) -> str:
    """The HTML text of the report of a binomial GLMM fit.

    Parameters
    ----------
    res : GlmmResult
        From ``mixrank.fit(..., family="binomial")``.
    table : callable
        The report's table formatter
        (:func:`mixrank.report.html.format_table_html`, passed in by
        ``render_report`` so that the two modules do not import each other).
    title : str, optional
        Page title; default ``"mixrank report: <formula>"``.
    level : float, optional
        Confidence level of the contrasts; default the fit's.

    Returns
    -------
    str
        A complete HTML5 document; sections ``scores``, ``contrasts_logit``,
        ``contrasts_response``, ``components``, ``fixed_effects``, ``ranks``,
        ``resolution``, ``diagnostics`` (and ``gaps`` for ``model * x``:
        the interaction tests, the per-level gaps and rank intervals), each
        plot as an embedded PNG (``data-plot`` names ``scores,
        contrasts_logit, contrasts_response, components, ranks,
        resolution``; ``gaps, ranks_by`` for ``model * x``).
    """
    formula = res.formula.formula
    page_title = title or f"mixrank report: {formula}"
    sections = [
        ("scores", "Model scores (response scale: probability)",
         lambda: _scores(res, table, level)),
        ("contrasts_logit", "Contrasts, logit scale",
         lambda: _contrasts(res, table, level, "logit")),
        ("contrasts_response", "Contrasts, response scale (probability)",
         lambda: _contrasts(res, table, level, "response")),
        ("components", "Variance components (logit scale)", lambda: _components(res, table)),
        ("fixed_effects", "Fixed effects (glmer's coding)",
         lambda: table(res.fixed_effects())),
        ("ranks", "Rank intervals (logit scale: ranks and intervals from the log-odds)",
         lambda: _ranks(res, table)),
        ("resolution", "Resolution verdicts (logit-scale Wald N*)",
         lambda: _resolution(res, table)),
        ("diagnostics", "Fit diagnostics", lambda: table(res.diagnostics())),
    ]
    if getattr(res, "by", None):
        sections.insert(5, ("gaps", f"Where the gaps live (model \u00d7 {res.by})",
                            lambda: _gaps(res, table, level)))
    body = [f"<h1>{html.escape(page_title)}</h1>",
            f'<p class="meta">Formula <code>{html.escape(formula)}</code> \u00b7 '
            f"{len(res.models)} models \u00b7 family binomial \u00b7 nAGQ {res.fit.nagq} \u00b7 "
            f"response {html.escape(res.response_form)} \u00b7 "
            f"mixrank {MIXRANK_VERSION}</p>",
            f'<p class="scale">{html.escape(SCALE_LINE)}</p>',
            f'<div class="note">{html.escape(res.unit_of_inference)}.</div>',
            "<nav><ul>" + "".join(f'<li><a href="#{s}">{html.escape(t)}</a></li>'
                                  for s, t, _ in sections) + "</ul></nav>"]
    body += [_section(s, t, b) for s, t, b in sections]
    body.append(f"<footer>Generated by mixrank {MIXRANK_VERSION}. Numbers are rounded for "
                "display; exact values via the Python API.</footer>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"generator\" content=\"mixrank {MIXRANK_VERSION}\">"
            f"<title>{html.escape(page_title)}</title><style>{style.CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def glmm_or_error(fit: Any, *, table: Callable[..., str], title: str | None = None,
                  level: float | None = None) -> str:
    """The GLMM page for a GlmmResult; DataError naming what was received otherwise."""
    from mixrank.results.glmm_result import GlmmResult

    if isinstance(fit, GlmmResult):
        return render_glmm_report(fit, table=table, title=title, level=level)
    raise DataError(f"render_report needs a FitResult or GlmmResult from mixrank.fit(...); got "
                    f"{type(fit).__name__}")
