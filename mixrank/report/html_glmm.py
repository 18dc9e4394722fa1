"""Stage report: the sections of the report of a binomial GLMM fit (``family="binomial"``).

Inputs: a :class:`~mixrank.results.glmm.result.GlmmResult` and the page
context of :func:`mixrank.report.html.render_report` (the one page builder,
which declares which result shows which section).  Outputs: HTML fragments:
the "Scale" line and the unit-of-inference sentence (:func:`preamble`), the model scores, both
scales' contrasts (log-odds with odds ratios; probability differences
averaged over cells), variance components on the logit scale, glmer's
fixed-effect table, rank intervals, resolution verdicts (logit-scale Wald
N*) and the fit diagnostics, with the linear report's plots drawn on the
response scale where the page's readers compare accuracy (scores: the
logit interval transformed; contrasts: both scales' forest plots) and on
the logit scale where the tests live (rank intervals, resolution; the
variance components).  Computes no statistics.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from mixrank.report import style
from mixrank.report.html_format import (
    figure_html,
    format_table_html,
    guard,
    paragraph,
    with_letters,
)

__all__ = ["preamble", "meta_line", "scores", "contrasts_logit", "contrasts_response",
           "components", "fixed_effects", "ranks", "resolution", "gaps", "diagnostics"]

SCALE_LINE = ("Scale: binomial GLMM (glmer's literal reading, one joint fit over all models); "
              "contrasts on the logit scale (log-odds differences, odds ratios) and on the "
              "response scale (differences in probability averaged over the cells, delta-method "
              "SE); variance components on the logit scale. Every ranked table takes its point "
              "ranks and intervals from one quantity on the scale it names.")


def _figure(plot: Callable[[Any], Any], n_rows: int, *, name: str, alt: str,
            caption: str) -> str:
    """One figure (a plot of the linear report drawn on fresh Axes), or a visible note."""
    def build() -> str:
        ax = style.new_axes(n_rows, pyplot=False)
        return figure_html(plot(ax), name=name, alt=alt, caption=caption)

    return guard(f"{alt.capitalize()} plot", build)


def preamble(res: Any) -> str:
    """The scale line and the unit-of-inference sentence shown above the sections."""
    return (f'<p class="scale">{html.escape(SCALE_LINE)}</p>'
            f'<div class="note">{html.escape(res.unit_of_inference)}.</div>')


def meta_line(res: Any) -> str:
    """The meta line under the page title (HTML)."""
    return (f"Formula <code>{html.escape(res.formula.formula)}</code> \u00b7 "
            f"{len(res.models)} models \u00b7 family binomial \u00b7 nAGQ {res.fit.nagq} \u00b7 "
            f"response {html.escape(res.response_form)}")


def scores(res: Any, ctx: dict) -> str:
    """Model scores on the response scale (probability averaged over the cells)."""
    from mixrank.report.plots_scores import plot_model_scores

    tab = res.model_scores(ctx["level"], scale="response")
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
            + _lettered(res, tab, ctx, "Scale: response. estimate = "
                        + tab.attrs["mixrank"]["score"] + "; logit, probability_at_zero "
                        "(conditional at zero random effects) and observed (raw share) "
                        "beside it; n = cells, trials beside it."))


def _lettered(res: Any, tab: Any, ctx: dict, cap: str) -> str:
    """The scores table with the column of ``res.letters()`` (when it has letters)."""
    shown, says = with_letters(res, tab, ctx["level"])
    return format_table_html(shown, caption=cap + says.replace(
        " Letters:", " Letters (logit-scale tests):"))


def _contrasts(res: Any, level: float | None, scale: str) -> str:
    from mixrank.report.plots import plot_contrasts

    table = format_table_html
    con = res.contrasts(level, scale=scale)
    what = ("log-odds difference (odds ratio = exp)" if scale == "logit"
            else "difference in probability averaged over the cells (delta-method CI)")
    return (_adjust_line(con, res.level if level is None else level) + _figure(lambda ax: plot_contrasts(con, ax, title=f"Contrasts, {scale} scale"),
                    len(con), name=f"contrasts_{scale}", alt=f"forest plot, {scale} scale",
                    caption=f"model_a − model_b: {what}; blue intervals exclude 0.")
            + table(con))


def _adjust_line(con: Any, level: float) -> str:
    """What ``p_adjusted`` is (the method used), and with the exact unit flips what few
    units cost (issue 37)."""
    meta = con.attrs.get("mixrank", {})
    how = meta.get("p_adjusted") or meta.get("adjust")
    text = f"p_adjusted: {how} across the {meta.get('family_size')} pairs."
    if meta.get("adjust") in ("stepdown", "maxt") and meta.get("exact"):
        won = con.loc[con["p_adjusted"] < 1 - level, "estimate"].abs()
        text += (f" {meta.get('n_units')} levels of {meta.get('flip_unit')!r}: the smallest "
                 f"family-wise p possible is {1 / meta.get('flips', 1):.2g} (all "
                 f"{meta.get('flips')} sign flips of the unit); " + (
                     f"the smallest gap resolved family-wise here is {won.min():.3g}."
                     if len(won) else "no gap is resolved family-wise at this unit."))
    return paragraph(text)


def contrasts_logit(res: Any, ctx: dict) -> str:
    """Contrasts as log-odds differences with odds ratios."""
    return _contrasts(res, ctx["level"], "logit")


def contrasts_response(res: Any, ctx: dict) -> str:
    """Contrasts as differences in probability averaged over the cells."""
    return _contrasts(res, ctx["level"], "response")


def fixed_effects(res: Any, ctx: dict) -> str:
    """glmer's fixed-effect table."""
    return format_table_html(res.fixed_effects())


def diagnostics(res: Any, ctx: dict) -> str:
    """The fit's diagnostics table."""
    return format_table_html(res.diagnostics())


def components(res: Any, ctx: dict) -> str:
    """Variance components on the logit scale."""
    from mixrank.report.plots_glmm import plot_glmm_components

    table = format_table_html
    vc = res.variance_components()
    return (_figure(lambda ax: plot_glmm_components(vc, ax=ax, title="Variance components"),
                    len(vc), name="components", alt="variance components",
                    caption="Standard deviation of each random term on the logit scale "
                            "(hatched: singular).")
            + table(vc))


def ranks(res: Any, ctx: dict) -> str:
    """Rank intervals on the logit scale (the report's rank options)."""
    from mixrank.report.plots_ranks import plot_rank_intervals

    table = format_table_html
    tab = res.rank_intervals(**ctx["rank_kwargs"])
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


def resolution(res: Any, ctx: dict) -> str:
    """Resolution verdicts (logit-scale Wald N*; the report's resolution options)."""
    from mixrank.report.plots_resolution import plot_resolution

    table = format_table_html
    tab = res.resolution(**{"columns": "all", **ctx["resolution_kwargs"]})
    return (_figure(lambda ax: plot_resolution(tab, ax=ax, title="Resolution (q = N / N*)"),
                    len(tab), name="resolution", alt="resolution ratios",
                    caption="q per adjacent pair (models ordered by log-odds); right of 1: "
                            "resolved.")
            + table(tab.rename(columns={"resolved": "resolved (fixed n)"}),
                    caption=tab.attrs["mixrank"]["n_star"]))


def gaps(res: Any, ctx: dict) -> str:
    """"Where the gaps live" for ``model * x``: the interaction tests, the per-level gaps
    (probability scale, forest plot) and the rank intervals per level (logit scale)."""
    from mixrank.report.plots_gaps import plot_gaps_by, plot_ranks_by

    table, level = format_table_html, ctx["level"]
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
        table(con),
        _figure(ranks_plot, len(ranks), name="ranks_by", alt=f"rank intervals by {by}",
                caption="Point rank and rank interval per level, both from the log-odds."),
        table(ranks),
    ])
