"""Stage results: printable summaries (an object; printing is separate).

Inputs: :class:`~mixrank.results.FitResult`.  Outputs: :class:`Summary`,
whose ``str()`` reads like lme4's ``summary(lmer)`` for one pair and is a
compact table for many pairs (``repr`` and ``_repr_html_``: :class:`mixrank._util.TextDisplay`).
"""

from __future__ import annotations

import numpy as np

from .._display import (
    format_at,
    format_p,
    format_se,
    format_signif,
    format_table,
    se_decimals,
    wrap,
)
from .._util import TextDisplay
from ..errors import MixrankError
from .interactions import coefficient_rows

__all__ = ["Summary"]


def _stars(p: float) -> str:
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "." if p < 0.1 else ""


class Summary(TextDisplay):
    """Summary of a :class:`FitResult`.

    What :meth:`FitResult.summary` returns, built as ``Summary(fit)``: ``str()`` reads like
    lme4's ``summary(lmer)`` for one pair and is a compact table for many pairs.

    Attributes
    ----------
    contrasts, variance_components, diagnostics : pandas.DataFrame
        The fit's ``contrasts()``, ``variance_components()`` and ``diagnostics()``.
    model_scores : pandas.DataFrame or None
        ``FitResult.model_scores()``; None (with the reason in
        ``model_scores_error``) when a model's own fit is impossible.
    model_scores_error : str
        Empty when ``model_scores`` is a table.

    Examples
    --------
    >>> import mixrank
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> s = mixrank.Summary(res)   # as res.summary()
    >>> str(s).splitlines()[:3]
    ['Paired mixed models (reml, native engine, estimand cells)', 'Formula: correct ~ model + (1|subject)', '15 pairs of 6 models; 960 cells']
    >>> s.contrasts.shape, s.variance_components.shape, len(s.model_scores), s.model_scores_error
    ((15, 14), (30, 6), 6, '')
    """

    def __init__(self, fit) -> None:
        self.fit = fit
        self.contrasts = fit.contrasts()
        self.variance_components = fit.variance_components()
        self.diagnostics = fit.diagnostics()
        self.model_scores, self.model_scores_error = None, ""
        try:
            self.model_scores = fit.model_scores()
        except MixrankError as exc:
            self.model_scores_error = str(exc)

    def _scores(self) -> list[str]:
        if self.model_scores is None:
            return ["", f"Model scores: not available ({self.model_scores_error})"]
        sc = self.model_scores.sort_values("estimate", ascending=False, kind="stable")
        meta = sc.attrs["mixrank"]
        cols = ["model", "estimate", "std_error", "df", "ci_lower", "ci_upper", "n",
                "iid_std_error", "note"]
        return ["", f"Model scores ({meta['model']}, estimand {meta['estimand']}, unit {meta['unit']}, "
                f"{100 * sc['level'].iloc[0]:g}% CI):",
                format_table(sc.drop(columns="level"), columns=cols).rstrip()]

    def _one(self) -> str:
        fit = self.fit
        p = fit.pairs[0]
        c = self.contrasts.iloc[0]
        spec = fit.frame.spec
        lines = []
        if fit.method == "reml":
            lines.append("Linear mixed model fit by REML. t-tests use "
                         + ("Satterthwaite's method" if fit.df_method == "satterthwaite"
                            else f"SE and df: {fit.df_label}") + f" [{fit.engine} engine]")
        else:
            lines.append("Aggregate paired t-test over the top unit [mixrank]")
        lines.append(f"Formula: {spec.formula}")
        lines.append(f"Pair: d = {p.model_a} - {p.model_b} over {p.n:,} common cells"
                     + (f" ({p.only_a:,} only {p.model_a}, {p.only_b:,} only {p.model_b})"
                        if p.only_a or p.only_b else ""))
        lines.append(f"Estimand: {fit.estimand}"
                     + (" (plain mean difference over the common cells)" if fit.estimand == "cells"
                        else ""))
        lines.append("")
        if fit.method == "reml":
            lines.append(f"REML criterion at convergence: {format_signif(p.criterion)}")
            lines.append("")
            lines.append("Random effects:")
            w = max([len("Groups")] + [len(g) for g in p.components])
            lines.append(f" {'Groups':<{w}} {'Name':<12}{'Variance':>12}{'Std.Dev.':>12}")
            for g, v in p.components.items():
                name = "" if g == "residual" else "(Intercept)"
                label = "Residual" if g == "residual" else g
                lines.append(f" {label:<{w}} {name:<12}{format_signif(v):>12}"
                             f"{format_signif(np.sqrt(v)):>12}")
            groups = ", ".join(f"{t}, {fit.frame.term_levels[t]}" for t in spec.term_names)
            lines.append(f"Number of obs: {p.n}" + (f", groups:  {groups}" if groups else ""))
            if p.boundary:
                lines.append(f"boundary (singular) fit: {', '.join(p.boundary)} estimated at 0")
            lines.append("")
        rows = ([("(Intercept)", c.estimate, c.std_error, c.df, c.statistic, c.p_value)]
                if p.fixed is None else coefficient_rows(p.fixed))   # d ~ 1 + x: each column
        w = max(12, max(len(r[0]) for r in rows) + 1)
        lines.append("Fixed effects:")
        lines.append(f"{'':{w}}{'Estimate':>12}{'Std. Error':>12}{'df':>10}{'t value':>10}"
                     f"{'Pr(>|t|)':>12}")
        for name, est, se, df, t, pv in rows:
            lines.append(f"{name:{w}}{format_at(est, se_decimals(se)):>12}{format_se(se):>12}"
                         f"{format_signif(df, 3):>10}{format_signif(t):>10}"
                         f"{format_p(pv):>12} {_stars(pv)}")
        if p.fixed is not None:
            lines.append(f"Overall gap (estimand {fit.estimand}): "
                         f"{format_at(c.estimate, se_decimals(c.std_error))} "
                         f"(SE {format_se(c.std_error)}, df {format_signif(c.df, 3)}); by level: "
                         "contrasts(by=...)")
        lines.append("---")
        lines.append("Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1")
        if not p.converged:
            lines.append(f"Warning: convergence check failed: {p.message}")
        return wrap("\n".join(lines + self._scores()))

    def _many(self) -> str:
        fit = self.fit
        c = self.contrasts
        lines = [f"Paired mixed models ({fit.method}, {fit.engine} engine, estimand {fit.estimand})",
                 f"Formula: {fit.frame.spec.formula}",
                 f"{len(fit.pairs)} pairs of {len(fit.models)} models; {fit.frame.n_cells:,} cells",
                 f"SE and df: {fit.df_label}", ""]
        lines.append(format_table(c, columns=["model_a", "model_b", "estimate", "std_error", "df",
                                              "statistic", "p_value", "p_adjusted", "n",
                                              "note"]).rstrip())
        meta = c.attrs["mixrank"]
        if meta.get("ci_method") == "randomization":
            lines.append(f"p_value: each pair's {meta['p_value']}; statistic and df: its t")
        lines.append(f"p_adjusted: {meta['adjust']} across the {meta['family_size']} pairs")
        bad = self.diagnostics[~self.diagnostics["converged"]]
        nb = int((self.diagnostics["boundary"] != "").sum())
        lines.append("")
        lines.append(f"Boundary (singular) fits: {nb}; convergence warnings: {len(bad)}")
        return wrap("\n".join(lines + self._scores()))

    def __str__(self) -> str:
        return self._one() if len(self.fit.pairs) == 1 else self._many()

