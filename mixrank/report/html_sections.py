"""Stage report: the sections of the report of a linear fit (FitResult, JudgeResult).

Inputs: a :class:`~mixrank.results.FitResult` and the page context ``ctx``
built by :func:`mixrank.report.html.render_report` (``level``, ``pairs``
shown, ``rank_kwargs``, ``resolution_kwargs``, ``plan_kwargs``,
``plan_delta``, ``max_pairs``, ``reliable_change``, ``sensitivity``,
``progress``).  Outputs: one HTML fragment per section -- design and
balance, leaderboard, variance components, contrasts and design effect,
rank intervals, resolution verdicts (with verdict stability), planning,
diagnostics, item-level reliable change.  :mod:`mixrank.report.html` (the
one page builder) declares which result shows which section.  Computes no
statistics: it formats the tables of the result's accessors.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from mixrank.engine.records import pair_key, pair_lookup
from mixrank.report import style
from mixrank.report.html_format import (
    figure_html,
    fmt,
    format_table_html,
    guard,
    paragraph,
    with_letters,
)
from mixrank.report.plots import select_pairs
from mixrank.report.plots_scores import plot_model_scores

__all__ = ["shown_pairs", "design", "leaderboard", "components", "contrasts", "ranks",
           "resolution", "plan", "diagnostics", "reliable_change"]


# ----------------------------------------------------------------- pair choice

def shown_pairs(fit: Any, max_pairs: int, ctx: dict | None = None
                ) -> tuple[list[tuple[str, str]] | None, str | None]:
    """All pairs when few; otherwise the pairs adjacent in the order of the mean scores.

    ``ctx``: the page context, whose scores table the leaderboard then reuses (the order
    uses only the estimates, which do not depend on the level)."""
    if len(fit.pairs) <= max_pairs:
        return None, None
    scores = fit.model_scores() if ctx is None else _scores(fit, ctx)
    order = scores.sort_values(["estimate", "model"], ascending=[False, True], kind="stable")
    models = order["model"].astype(str).tolist()
    fitted = pair_lookup(fit.pairs)
    adj = [(a, b) for a, b in zip(models[:-1], models[1:]) if pair_key(a, b) in fitted]
    note = (f"{len(fit.pairs)} pairs were fitted; plots and tables below show the "
            f"{len(adj)} pairs of models adjacent in the order of their mean scores "
            f"(best first). The full tables: mixrank contrasts / components ... --format csv.")
    return adj[:max_pairs], note


def _scores(fit: Any, ctx: dict) -> pd.DataFrame:
    """``fit.model_scores(level=...)`` once per page (the pair choice and the leaderboard)."""
    key = ("scores", ctx.get("level"))
    if key not in ctx:
        ctx[key] = fit.model_scores(level=ctx.get("level"))
    return ctx[key]


def _contrasts(fit: Any, ctx: dict) -> pd.DataFrame:
    """``fit.contrasts(level=...)`` once per page (the table and the forest plot)."""
    key = ("contrasts", ctx.get("level"))
    if key not in ctx:
        ctx[key] = fit.contrasts(level=ctx.get("level"))
    return ctx[key]


def _light(tab: pd.DataFrame, *drop: str) -> pd.DataFrame:
    """The same table (no copy of its columns) without the bulky ``attrs["mixrank"]`` entries
    ``drop``: pandas deep-copies ``attrs`` on every column access and sort."""
    meta = tab.attrs.get("mixrank", {})
    if not any(k in meta for k in drop):
        return tab
    out = tab.copy(deep=False)
    out.attrs = {**tab.attrs, "mixrank": {k: v for k, v in meta.items() if k not in drop}}
    return out


def _pair_rows(table: pd.DataFrame, pairs: list[tuple[str, str]] | None) -> pd.DataFrame:
    return select_pairs(table, pairs).reset_index(drop=True)


# ----------------------------------------------------------------- sections

def design(fit: Any, ctx: dict) -> str:
    f = fit.frame
    parts = [f"<pre>{html.escape(f.summary_text())}</pre>",
             "<h3>Groupings</h3>", format_table_html(f.describe())]
    bal = f.balance()
    incomplete = bal[~bal["complete"]]
    parts.append("<h3>Balance</h3>")
    if len(incomplete) == 0:
        parts.append(paragraph(f"Every pair of models is scored on all {f.n_cells:,} cells "
                        "(a fully paired design)."))
    else:
        parts.append(paragraph(f"{len(incomplete)} of {len(bal)} pairs are not scored on every cell; "
                        "each pair is analysed on the cells both models share (n; only_a and only_b: "
                        "cells one of the two lacks; neither: cells only other models were "
                        "scored on)."))
        parts.append(format_table_html(incomplete.sort_values("n", kind="stable")))
    return "".join(parts)


def _notes(*texts: str) -> str:
    """Warnings shown next to a table (weak design, models left out; docs/messy.md)."""
    return "".join(paragraph("\u26a0 " + t) for t in texts if t)


def _left_out_note(tab: pd.DataFrame, what: str) -> str:
    left = tab.attrs.get("mixrank", {}).get("left_out")
    return (f"{what} leave out {', '.join(map(str, left))}: their pairs cannot be estimated "
            "under the formula (docs/messy.md §3)." if left else "")


def _weak_note(fit: Any) -> str:
    weak = fit.weak_terms() if hasattr(fit, "weak_terms") else []
    return " ".join(f"Weak design: {w.message()}." for w in weak)


def leaderboard(fit: Any, ctx: dict) -> str:
    tab = _scores(fit, ctx)
    m = tab.attrs["mixrank"]
    n_adj = int(tab["adjusted"].sum()) if "adjusted" in tab.columns else 0
    how = (f"{len(tab) - n_adj} of {len(tab)} scores are plain means of the model's own cells "
           f"and {n_adj} are adjusted to the union of cells (basis column)" if n_adj else
           "each score is the model's own estimate (working model "
           f"{m.get('model')})")
    cap = (f"Estimand {m.get('estimand')}; {how}. SE and df: {m.get('df_method')}"
           + (" (rows differ: see note)" if m.get("mixed_methods") else "")
           + "; iid: cells independent.")
    notes = _notes(tab.attrs["mixrank"].get("groups_note", ""), _weak_note(fit))
    if "group" in tab.columns:
        tab = tab.sort_values(["group", "estimate"], ascending=[True, False], kind="stable")
    else:
        tab = tab.sort_values("estimate", ascending=False, kind="stable")  # best first
    con = _contrasts(fit, ctx)
    meta = con.attrs.get("mixrank", {})
    return notes + guard("Leaderboard plot", lambda: figure_html(
        plot_model_scores(tab, ax=style.new_axes(len(tab), pyplot=False), contrasts=con),
        name="scores", alt="model scores with intervals",
        caption="Score \u00b1 CI at the formula's unit; thin: iid. Overlapping score intervals "
                "are not a test of the gap between two models: the paired contrasts are; a "
                f"star between two neighbours marks a gap whose {meta.get('adjust')}-adjusted "
                "contrast rejects.")
    ) + _lettered(fit, tab, cap, ctx)


def _lettered(fit: Any, tab: pd.DataFrame, cap: str, ctx: dict) -> str:
    """The leaderboard table with the column of ``fit.letters()`` (when it has letters)."""
    shown, says = with_letters(fit, tab, ctx.get("level"))
    return format_table_html(shown, caption=cap + says)


def components(fit: Any, ctx: dict) -> str:
    vc = fit.variance_components()
    sel = _pair_rows(vc, ctx["pairs"])
    wide = sel.pivot_table(index=["model_a", "model_b"], columns="group", values="variance",
                           aggfunc="first", sort=False)
    groups = list(dict.fromkeys(sel["group"]))
    wide = wide[[g for g in groups if g in wide.columns]].reset_index()
    wide.columns.name = None
    parts = [paragraph("Variance of the paired difference model_a \u2212 model_b split into the "
                "formula's random terms (the unit of inference) and the residual.")]
    parts.append(guard("Components plot", lambda: figure_html(
        _plot("components", fit, ctx), name="components",
        alt="variance components by pair", caption="Variance components by pair.")))
    parts.append(format_table_html(wide, caption="Variance per component and pair."))
    return "".join(parts)


def _plot(kind: str, fit: Any, ctx: dict) -> Any:
    from mixrank.report.plots import plot_components, plot_contrasts

    n = len(ctx["pairs"]) if ctx["pairs"] is not None else len(fit.pairs)
    ax = style.new_axes(n, pyplot=False)
    if kind == "components":
        return plot_components(fit, ax, pairs=ctx["pairs"], title="Variance components")
    return plot_contrasts(_contrasts(fit, ctx), ax, pairs=ctx["pairs"], orient=False,
                          title="Contrasts")   # each pair labelled as the table's row


def contrasts(fit: Any, ctx: dict) -> str:
    full = _contrasts(fit, ctx)
    con, de, meta = (_pair_rows(full, ctx["pairs"]), _pair_rows(_contrast_de(fit, full),
                                                                ctx["pairs"]),
                     full.attrs.get("mixrank", {}))
    tests = (f"p_value and interval: each pair's own {meta['p_value']}, the interval its "
             f"inversion (SE and df by {meta.get('df_method')} shown beside them)"
             if meta.get("ci_method") == "randomization" else
             f"t-tests with SE and df by {meta.get('df_method', 'satterthwaite')}")
    parts = [paragraph(f"Estimate = mean of model_a \u2212 model_b (estimand {fit.estimand}); "
                       f"{tests}; p_adjusted: {meta.get('adjust')} across all "
                       f"{meta.get('family_size')} pairs.")]
    if meta.get("adjust") == "stepdown" and meta.get("exact"):   # what few units cost (issue 37)
        won = full.loc[full["p_adjusted"] < 1 - fit.level, "estimate"].abs()
        parts.append(paragraph(
            f"{meta.get('n_units')} levels of {meta.get('unit')!r}: the smallest family-wise p "
            f"possible is {1 / meta.get('flips', 1):.2g} (all {meta.get('flips')} sign flips of "
            "the unit), whatever the number of pairs; " + (
                f"the smallest gap resolved family-wise here is {won.min():.3g} (no smaller "
                "gap is resolved at this unit)." if len(won) else
                "no gap is resolved family-wise at this unit.")))
    ne = meta.get("not_estimable") or []
    parts.append(_notes(_weak_note(fit), f"{len(ne)} pair(s) cannot be estimated under the "
                        "formula; their rows have NaN estimates and the reason in 'note' "
                        "(docs/messy.md §3)." if ne else ""))
    parts.append(guard("Forest plot", lambda: figure_html(
        _plot("contrasts", fit, ctx), name="contrasts", alt="forest plot of the contrasts",
        caption=f"Estimates with {'simultaneous' if meta.get('adjust') == 'maxt' else 'marginal'} "
                f"confidence intervals; blue: the {meta.get('adjust')}-adjusted contrast "
                f"rejects (p_adjusted below 1 \u2212 level), grey: it does not, even where the "
                "marginal interval excludes 0.")))
    parts.append(format_table_html(con))
    parts.append("<h3>Design effect</h3>")
    parts.append(paragraph("Variance of the estimate (the contrast's squared SE, as in the table "
                    "above) relative to treating the cells as independent; n_eff = n / "
                    "design_effect."))
    parts.append(format_table_html(de))
    return "".join(parts)


def _contrast_de(fit: Any, con: pd.DataFrame) -> pd.DataFrame:
    """The design effect per pair from the contrasts' own SE (one SE per pair in every table):
    ``variance = std_error^2``, ``design_effect = variance / (sigma_d^2 / n)``."""
    de = fit.design_effect()
    se = {(str(a), str(b)): float(s) for a, b, s in
          zip(con["model_a"], con["model_b"], con["std_error"])}
    var = np.array([se.get((str(a), str(b)), np.nan) ** 2
                    for a, b in zip(de["model_a"], de["model_b"])])
    out = de.copy()
    out["variance"] = var
    iid = out["sigma_d"].to_numpy(dtype=float) ** 2 / out["n"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["design_effect"] = np.where(iid > 0, var / iid, np.nan)
        out["n_eff"] = out["n"].to_numpy(dtype=float) / out["design_effect"].to_numpy()
    return out


def ranks(fit: Any, ctx: dict) -> str:
    tab = _light(fit.rank_intervals(**ctx["rank_kwargs"]), "pairwise")
    meta = tab.attrs.get("mixrank", {})
    family = meta.get("family")      # which comparisons each interval is adjusted over
    parts = [paragraph(f"Rank 1 is the best. Coverage {meta.get('coverage', '?')}, "
                f"method {meta.get('method', '?')}, unit of inference {meta.get('unit', '?')}."
                + (f" Each interval is adjusted over {family}." if family else ""))]
    parts.append(_notes(_left_out_note(tab, "The rank intervals"),
                        "Models fall in groups that share no cells: one ranking per group "
                        "('group' column; docs/messy.md §4)." if "group" in tab.columns else ""))

    def plot() -> str:
        from mixrank.report.plots_ranks import plot_rank_intervals

        ax = style.new_axes(len(tab), pyplot=False)
        with style.style_context():
            plot_rank_intervals(tab, ax=ax, title="Rank intervals")
        return figure_html(ax, name="ranks", alt="rank intervals",
                            caption="Point rank and rank confidence interval per model.")

    parts.append(guard("Rank-interval plot", plot))
    parts.append(format_table_html(tab))
    return "".join(parts)


_RESOLUTION_COLUMNS = ("model_a", "model_b", "estimate", "std_error", "df", "p_adjusted",
                       "rejected", "resolved_all", "n", "n_star", "q",
                       "resolved", "resolved_multiplicity", "resolved_anytime", "variance_ratio",
                       "n_star_cluster", "resolved_cluster",
                       "n_labelled", "n_labels_star")   # the last two: judge-corrected fits


def resolution(fit: Any, ctx: dict) -> str:
    tab = fit.resolution(**{"columns": "all", **ctx["resolution_kwargs"]})
    meta = tab.attrs.get("mixrank", {})
    parts = [paragraph("Is each comparison resolved, i.e. is the benchmark large enough to detect "
                "the observed difference with the target power (q = N / N* \u2265 1)? The "
                "verdict is resolved_all, the family-wise answer (beside p_adjusted and "
                "rejected); the plot's pair labels say it in words. The 'resolved (fixed n)' "
                "column treats the cells as independent; each further column is a "
                "separate stress test of that verdict: multiplicity-adjusted levels, an "
                "anytime-valid boundary, and clustering at the formula's unit (the default "
                "contrast's own estimate, SE and df, as in the contrasts table). "
                "resolved_all is their conjunction together with 'rejected' (the default "
                "adjusted contrast rejects at this level).")]
    parts.append(_notes(_left_out_note(tab, "The verdicts")))
    counts = meta.get("unresolved")
    if isinstance(counts, Mapping) and counts:
        parts.append(format_table_html(pd.DataFrame(
            {"paradigm": list(counts), "verdict": [str(v) for v in counts.values()]}),
            caption=f"Family: {meta.get('pairs', '?')} pairs; alpha {meta.get('alpha', '?')}, "
                    f"power {meta.get('power', '?')}, multiplicity "
                    f"{meta.get('multiplicity', '?')}" + (
                        " (per-step levels of the unit sign-flip step-down over these pairs, "
                        "the contrasts' method)" if meta.get("multiplicity") == "stepdown"
                        else "") + "."))
    def fig() -> str:
        from mixrank.report.plots_resolution import plot_resolution

        ax = style.new_axes(min(len(tab), 40), pyplot=False)
        with style.style_context():
            plot_resolution(tab, ax=ax)
        return figure_html(ax, name="resolution", alt="resolution verdicts",
                           caption="Resolution verdicts per pair.")
    parts.append(guard("Resolution plot", fig))
    cols = [c for c in _RESOLUTION_COLUMNS if c in tab.columns]
    # the verdict: resolved_all (family-wise); the fixed-n column labelled as such
    parts.append(format_table_html(tab[cols].rename(columns={"resolved": "resolved (fixed n)"}),
                                   caption=f"Estimand {meta.get('estimand', '?')} in every "
                                           "column. Main columns; all of them (MDE, levels, q per "
                                           "paradigm): mixrank resolution ... --format csv."))
    if ctx.get("sensitivity"):
        job = ctx.get("sensitivity_job")
        parts.append(job.result() if job is not None else sensitivity_part(fit, ctx))
    return "".join(parts)


def sensitivity_part(fit: Any, ctx: dict) -> str:
    """The verdict-stability part of the resolution section (guarded: a note on error)."""
    return guard("Verdict sensitivity", lambda: _sensitivity(fit, ctx))


def _sensitivity(fit: Any, ctx: dict) -> str:
    from mixrank.report.plots_sensitivity import STABILITY_COLUMNS, plot_sensitivity

    kw = {k: v for k, v in ctx["resolution_kwargs"].items() if k in ("pairs", "models", "top")}
    summ = fit.sensitivity(ctx["sensitivity"], summary=True, rng=0,
                           progress=ctx.get("progress"), **kw)

    def fig() -> str:
        ax = style.new_axes(min(len(summ.groupby(["model_a", "model_b"])), 40), pyplot=False)
        with style.style_context():
            plot_sensitivity(summ, ax=ax)
        return figure_html(ax, name="sensitivity", alt="verdict stability", caption=(
            "Share of replicates keeping each pair's clustered verdict, per check."))
    cols = [c for c in STABILITY_COLUMNS if c in summ.columns]
    meta = summ.attrs.get("mixrank", {})
    reason = meta.get("unit_reason", "the first random term of the formula")
    why = paragraph(f"Resampled unit: {meta.get('unit', '?')} ({reason}).")
    return ("<h3>How robust is the clustered verdict?</h3>" + why + guard("Sensitivity plot", fig)
            + format_table_html(summ[cols],
                                caption="Stability per check and pair (seed 0)."))


def plan(fit: Any, ctx: dict) -> str:
    delta = ctx["plan_delta"]
    tab = fit.plan(delta, **ctx["plan_kwargs"])
    meta = tab.attrs.get("mixrank", {})
    who = ""
    if meta.get("model_a") is not None:
        who = (f" Variance components of the pair {meta.get('model_a')} \u2212 "
               f"{meta.get('model_b')} ({meta.get('pair_choice', 'chosen pair')}).")
    given = ctx.get("plan_delta_given")
    target = (f"Target gap: {fmt(delta)}, as given." if given else
              f"Target gap: {fmt(delta)}, the default (not chosen from these data).")
    target += (" Set it with render_report(fit, plan_delta=...) or mixrank report ... "
               "--delta.")
    return (paragraph(f"{target} Balanced designs and whether each resolves a difference of "
               f"{fmt(delta)} given the fitted variance components.{who} 'unreachable': no "
               "number of the varied factor alone can resolve it (the other factors' variance "
               "stays).")
            + format_table_html(tab))


def diagnostics(fit: Any, ctx: dict) -> str:
    d = fit.diagnostics()
    bad = d[(~d["converged"].astype(bool)) | (d["boundary"].astype(str) != "")]
    parts = [paragraph(f"Engine {fit.engine}, method {fit.method}, estimand {fit.estimand}. "
                f"{int(d['converged'].astype(bool).sum())} of {len(d)} pair fits converged; "
                f"{int((d['boundary'].astype(str) != '').sum())} have a variance component "
                "on the boundary (estimated at 0, a legal result).")]
    if len(bad):
        parts.append(format_table_html(bad))
    return "".join(parts)


def reliable_change(fit: Any, ctx: dict) -> str:
    parts = []
    for rc in ctx["reliable_change"]:
        s = rc.summary()
        parts.append(f"<h3>{html.escape(rc.before)} \u2192 {html.escape(rc.after)}</h3>")
        ks = " and ".join(str(k) for k in s.reliability["k"])
        if rc.sem == "item":
            how = (f"Each item is classed by its own exact test of no change (Fisher for 0/1 scores) at "
                   f"level {s.meta.get('alpha', 0.05):.3g}; r_xx, SEM and S_diff are descriptive.")
        else:
            how = (f"Classical RCI: |\u0394p| / S_diff > {rc.threshold:.3g} with one pooled SEM "
                   f"(S_diff = {s.s_diff:.4g}).")
        parts.append(paragraph(f"{s.n_items} items ({s.n_analysable} not at floor/ceiling in both "
                        f"versions), K = {ks} samples per item. {how}"
                        + (f" Empirical-Bayes classes at FDR {rc.fdr:g} alongside." if s.eb else "")))

        def scatter(rc: Any = rc) -> str:
            from mixrank.report.plots_rci import plot_rci

            ax = style.new_axes(16, width=5.4, pyplot=False)
            with style.style_context():
                plot_rci(rc, ax=ax, title=f"{rc.before} \u2192 {rc.after}")
            return figure_html(ax, name="rci", alt="item scores before and after by class",
                                caption="One marker per (p_before, p_after) point, area by item count.")

        parts.append(guard("Reliable-change scatter", scatter))
        if s.meta.get("by") is not None:
            def subjects(rc: Any = rc, by: str = s.meta["by"]) -> str:
                from mixrank.report.plots_rci import plot_rci_subjects

                n = int(rc.items()[by].nunique())
                ax = style.new_axes(n, pyplot=False)
                with style.style_context():
                    plot_rci_subjects(rc, ax=ax)
                return figure_html(ax, name="rci_subjects", alt="net change and churn per subject",
                                    caption="Net change and churn per subject; reversals highlighted.")

            parts.append(guard("Per-subject plot", subjects))
        parts.append(format_table_html(s.change))
        parts.append(format_table_html(s.reliability))
    return "".join(parts)
