"""Stage report: the sections of the report of an arena (Bradley-Terry) fit.

Inputs: an :class:`~mixrank.arena.ArenaResult` and the page context of
:func:`mixrank.report.html.render_report` (the one page builder, which
declares which result shows which section).  Outputs: HTML fragments: the
battle counts, the leaderboard on the Elo display scale with its plot,
covariate (style) coefficients, the contrasts (logit scale and win
probability), rank intervals with their plot and the resolution verdicts
per adjacent pair (N* in battles).  Computes no statistics: it formats the
tables of the result's accessors.
"""

from __future__ import annotations

import html
from typing import Any

from mixrank.report.html_format import (
    figure_html,
    format_table_html,
    guard,
    paragraph,
    with_letters,
)

__all__ = ["meta_line", "battles", "leaderboard", "covariates", "contrasts", "ranks",
           "resolution", "judges"]


def meta_line(res: Any) -> str:
    """The meta line under the page title (HTML)."""
    cl = res.battles.cluster_name
    judged = (f" ({res.judge.n_labelled:,} human-labelled, {res.judge.n_unlabelled:,} judged "
              "only)" if res.judge is not None else "")
    return (f"Formula <code>{html.escape(res.formula)}</code> \u00b7 "
            f"{len(res.models)} models \u00b7 {res.n_battles:,} battles{judged} \u00b7 ties "
            f"{html.escape(res.ties)} \u00b7 standard errors {html.escape(res.se)}"
            + (f", clustered by <code>{html.escape(str(cl))}</code>"
               + (" (detected)" if res.cluster_detected else "") if cl else ""))


def battles(res: Any, ctx: dict) -> str:
    s = res.summary()
    text = str(s).split("\n\n")[0]
    return "<pre>" + html.escape(text) + "</pre>"


def leaderboard(res: Any, ctx: dict) -> str:
    level = ctx["level"]
    from mixrank.report.plots_scores import plot_model_scores

    tab = res.model_scores(level).sort_values(["estimate", "model"], ascending=[False, True],
                                              kind="stable").reset_index(drop=True)
    name = {"elo": "Elo scale", "logit": "log-strength"}[res.scale]
    fig = guard("Leaderboard plot", lambda: figure_html(
        plot_model_scores(tab, title=f"Bradley-Terry scores ({name})"), name="scores",
        alt="scores with intervals"))
    shown, says = with_letters(res, tab, level)
    return fig + format_table_html(shown, caption=says.strip() or None)


def covariates(res: Any, ctx: dict) -> str:
    level = ctx["level"]
    tab = res.covariates(level)
    if not len(tab):
        return paragraph("No covariates: the formula is 'winner ~ 1' and ties are not modelled "
                         "by Davidson's parameter.")
    return (paragraph("Log-odds of a win per unit of the side difference; the scores above "
                      "hold every covariate at zero (equal style on both sides).")
            + format_table_html(tab))


def contrasts(res: Any, ctx: dict) -> str:
    level = ctx["level"]
    lo = res.contrasts(level)
    pr = res.contrasts(level, scale="probability")[["model_a", "model_b", "estimate",
                                                    "ci_lower", "ci_upper"]]
    return (format_table_html(lo)
            + paragraph("The same contrasts as P(model_a beats model_b) in a decisive battle:")
            + format_table_html(pr))


def ranks(res: Any, ctx: dict) -> str:
    level = ctx["level"]
    from mixrank.report.plots_ranks import plot_rank_intervals

    tab = res.rank_intervals(level, **ctx["rank_kwargs"])
    fig = guard("Rank plot", lambda: figure_html(plot_rank_intervals(tab, title="Rank intervals"),
                                                 name="ranks", alt="rank intervals"))
    shown, says = with_letters(res, tab, level)
    return fig + format_table_html(shown, caption=says.strip() or None)


def resolution(res: Any, ctx: dict) -> str:
    tab = res.resolution(**{"columns": "all", **ctx["resolution_kwargs"]})
    cols = [c for c in ("model_a", "model_b", "estimate", "n_pair", "n_star", "q", "resolved",
                        "resolved_multiplicity", "resolved_anytime", "n_star_pair")
            if c in tab.columns]
    un = tab.attrs["mixrank"].get("unresolved", {})
    return (paragraph("Adjacent pairs by score. n_star: battles overall (at the current mix of "
                      "pairs) that resolve the gap; n_star_pair: battles between the two "
                      "alone. " + "; ".join(f"{k}: {v}" for k, v in un.items()))
            + format_table_html(tab[cols].rename(columns={"resolved": "resolved (fixed n)"})))


def judges(res: Any, ctx: dict) -> str:
    """Judge correction: diagnostics, and human-only / judge-only / corrected boards."""
    from mixrank.report.plots_arena import plot_arena_boards

    diag = res.judges()
    board = res.leaderboards()
    lam = ", ".join(f"{j} {v:.2f}" for j, v in zip(res.judge.judges, res.judge.lam))
    fig = guard("Leaderboards plot", lambda: figure_html(
        plot_arena_boards(board, title="Human-only, judge-only and corrected scores",
                          scale=res.scale), name="boards", alt="leaderboards side by side"))
    return (paragraph(f"Prediction-powered Bradley-Terry (PPI++): {res.judge.n_labelled:,} "
                      f"human votes rectify the judges' verdicts on all "
                      f"{res.judge.n_labelled + res.judge.n_unlabelled:,} battles; power-"
                      f"tuning lam = {lam} (0: the judge is not used, 1: trusted as much as a "
                      "human vote). Judge-only boards carry the judges' biases (position, "
                      "style); the corrected board estimates the human one.")
            + format_table_html(diag)
            + paragraph("Position: log-odds that the answer shown first wins, strengths held "
                        "equal (a first-position term in the BT fit of each judge's verdicts); "
                        "agreement: share of labelled battles with the human's verdict.")
            + fig + format_table_html(board))
