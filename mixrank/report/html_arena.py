"""Stage report: the HTML page of an arena (Bradley-Terry) fit.

Inputs: an :class:`~mixrank.arena.ArenaResult`.  Outputs: a self-contained
HTML document (inline CSS, PNG plots as ``data:`` URIs, no scripts) with the
battle counts, the leaderboard on the Elo display scale with its plot,
covariate (style) coefficients, the contrasts (logit scale and win
probability), rank intervals with their plot and the resolution verdicts
per adjacent pair (N* in battles).  :func:`mixrank.report.html.render_report`
hands an ArenaResult here.  Computes no statistics: it formats the tables
of the result's accessors.
"""

from __future__ import annotations

import html
from typing import Any

from mixrank._util import MIXRANK_VERSION
from mixrank.report.html_format import figure_html, format_table_html, guard, html_page, paragraph

__all__ = ["render_arena_report", "ARENA_SECTIONS"]

#: Section ids and titles, in page order.
ARENA_SECTIONS = (("battles", "Battles"), ("leaderboard", "Leaderboard (Elo display scale)"),
                  ("covariates", "Style covariates"), ("contrasts", "Contrasts"),
                  ("ranks", "Rank intervals"), ("resolution", "Resolution verdicts"))


def _battles(res: Any, level: float | None) -> str:
    s = res.summary()
    text = str(s).split("\n\n")[0]
    return "<pre>" + html.escape(text) + "</pre>"


def _leaderboard(res: Any, level: float | None) -> str:
    from mixrank.report.plots_scores import plot_model_scores

    tab = res.model_scores(level).sort_values(["estimate", "model"], ascending=[False, True],
                                              kind="stable").reset_index(drop=True)
    fig = guard("Leaderboard plot", lambda: figure_html(
        plot_model_scores(tab, title="Bradley-Terry scores (Elo scale)"), name="scores",
        alt="scores with intervals"))
    return fig + format_table_html(tab, max_rows=60)


def _covariates(res: Any, level: float | None) -> str:
    tab = res.covariates(level)
    if not len(tab):
        return paragraph("No covariates: the formula is 'winner ~ 1' and ties are not modelled "
                         "by Davidson's parameter.")
    return (paragraph("Log-odds of a win per unit of the side difference; the scores above "
                      "hold every covariate at zero (equal style on both sides).")
            + format_table_html(tab))


def _contrasts(res: Any, level: float | None) -> str:
    lo = res.contrasts(level)
    pr = res.contrasts(level, scale="probability")[["model_a", "model_b", "estimate",
                                                    "ci_lower", "ci_upper"]]
    return (format_table_html(lo, max_rows=60)
            + paragraph("The same contrasts as P(model_a beats model_b) in a decisive battle:")
            + format_table_html(pr, max_rows=60))


def _ranks(res: Any, level: float | None) -> str:
    from mixrank.report.plots_ranks import plot_rank_intervals

    tab = res.rank_intervals(level)
    fig = guard("Rank plot", lambda: figure_html(plot_rank_intervals(tab, title="Rank intervals"),
                                                 name="ranks", alt="rank intervals"))
    return fig + format_table_html(tab, max_rows=60)


def _resolution(res: Any, level: float | None) -> str:
    tab = res.resolution()
    cols = [c for c in ("model_a", "model_b", "estimate", "n_pair", "n_star", "q", "resolved",
                        "resolved_multiplicity", "resolved_anytime", "n_star_pair")
            if c in tab.columns]
    un = tab.attrs["mixrank"].get("unresolved", {})
    return (paragraph("Adjacent pairs by score. n_star: battles overall (at the current mix of "
                      "pairs) that resolve the gap; n_star_pair: battles between the two "
                      "alone. " + "; ".join(f"{k}: {v}" for k, v in un.items()))
            + format_table_html(tab[cols], max_rows=60))


_BUILD = {"battles": _battles, "leaderboard": _leaderboard, "covariates": _covariates,
          "contrasts": _contrasts, "ranks": _ranks, "resolution": _resolution}


def render_arena_report(res: Any, *, title: str | None = None, level: float | None = None) -> str:
    """The HTML text of the report of an arena fit.

    Parameters
    ----------
    res : ArenaResult
        From :func:`mixrank.arena`.
    title : str, optional
        Default ``"mixrank arena report: <formula>"``.
    level : float, optional
        Confidence level; default the fit's.

    Returns
    -------
    str
        A complete HTML5 document with sections ``battles, leaderboard,
        covariates, contrasts, ranks, resolution``; a section that raises a
        mixrank error (or lacks matplotlib) becomes a visible note.
    """
    page_title = title or f"mixrank arena report: {res.formula}"
    meta = (f"Formula <code>{html.escape(res.formula)}</code> \u00b7 "
            f"{len(res.models)} models \u00b7 {res.n_battles:,} battles \u00b7 ties "
            f"{html.escape(res.ties)} \u00b7 standard errors {html.escape(res.se)} \u00b7 "
            f"mixrank {MIXRANK_VERSION}")
    return html_page(page_title, meta, ARENA_SECTIONS, lambda sid: _BUILD[sid](res, level),
                     csv_command="mixrank arena ...")
