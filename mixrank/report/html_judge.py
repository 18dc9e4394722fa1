"""Stage report: the "Judge" section of the HTML report of a judge-corrected fit.

Inputs: a :class:`~mixrank.judge.result.JudgeResult` and the report context.
Outputs: :func:`judge_section` -- HTML: the judge-only vs corrected
leaderboard plot, the judge's bias per model with its interval, agreement
(correlation, Cohen's kappa for 0/1 scores), lambda and the effective number
of labels, and the differential-bias test (docs/judge.md §4).  Formats the
public tables only; computes no statistics.
"""

from __future__ import annotations

from typing import Any

from mixrank.report import style
from mixrank.report.html_format import figure_html, fmt, format_table_html, guard, paragraph
from mixrank.report.plots_judge import plot_judge_scores

__all__ = ["judge_section", "is_judge_fit"]


def is_judge_fit(fit: Any) -> bool:
    """Whether ``fit`` is judge-corrected (has ``judge()`` diagnostics)."""
    return callable(getattr(fit, "judge", None)) and getattr(fit, "method", "") == "ppi"


def judge_section(fit: Any, ctx: dict) -> str:
    """The Judge section: judge-only vs corrected scores, bias, agreement, effective labels."""
    scores = fit.model_scores(level=ctx["level"])
    tab = fit.judge(level=ctx["level"])
    meta = tab.attrs["mixrank"]
    test = meta["differential_bias"]
    lab = int(tab["n_labelled"].sum())
    parts = [paragraph(
        f"The response is an LLM judge's score; {lab:,} (model, cell) scores carry a reference "
        f"label in column '{meta['gold']}'. Scores and contrasts in this report are the PPI++ "
        "corrected means of the reference labels (judge mean on the unlabelled cells plus the "
        "lambda-weighted rectifier on the labelled ones), uncertain at the unit "
        f"'{meta['unit']}'. Median effective labels of a contrast: "
        f"{fmt(fit.effective_labels())}.")]
    parts.append(guard("Judge plot", lambda: figure_html(
        plot_judge_scores(scores, ax=style.new_axes(len(scores), pyplot=False)),
        name="judge", alt="judge-only and corrected scores per model",
        caption="Square: judge-only mean; dot and bar: corrected score and its interval.")))
    cols = ["model", "n_labelled", "bias", "ci_lower", "ci_upper", "correlation", "kappa",
            "lam", "n_effective", "note"]
    parts.append(format_table_html(tab[cols], caption="Judge bias (judge \u2212 reference) on the "
                                   "labelled cells, with its interval at the unit; agreement; "
                                   "lambda and effective labels of each corrected score."))
    if test.get("note"):
        parts.append(paragraph(f"Differential bias: not tested ({test['note']})."))
    else:
        parts.append(paragraph(
            f"Differential bias (does the judge favour some models? model \u00d7 source "
            f"interaction on the labelled cells, cluster-robust over {test['units']} units): "
            f"F({fmt(test['df1'])}, {fmt(test['df2'])}) = {fmt(test['statistic'])}, "
            f"p = {fmt(test['p_value'])}."))
    return "".join(parts)
