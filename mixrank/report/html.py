"""Stage report: one self-contained HTML page for a fit.

Inputs: a :class:`~mixrank.results.FitResult`.
Outputs: an HTML document (a string, or a file) with inline CSS and the plots
embedded as base64 PNG (matplotlib, no GUI backend needed): no scripts, no
external resources, so the page opens offline and can be mailed as one file.
Contents: :func:`render_report` (the HTML text) and :func:`write_report` (the
same, written to a file).  Sections: design and balance, leaderboard (model
scores with intervals), variance components, contrasts (forest plot) and
design effect, rank intervals, resolution verdicts, planning, diagnostics,
and (given :func:`mixrank.reliable_change` results) item-level reliable
change.  A section whose backend is not available (or raises a mixrank
error) is replaced by a visible note saying why; nothing is dropped silently.
Only calls the public API and formats its tables: computes no statistics.
The HTML building blocks (tables, figures, notes) are in
:mod:`mixrank.report.html_format`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mixrank._progress import as_progress
from mixrank._util import MIXRANK_VERSION
from mixrank.engine.records import pair_key, pair_lookup
from mixrank.errors import DataError
from mixrank.report import style
from mixrank.report.html_format import (
    figure_html,
    fmt,
    format_table_html,
    guard,
    html_page,
    paragraph,
)
from mixrank.report.html_judge import is_judge_fit, judge_section
from mixrank.report.plots import select_pairs
from mixrank.report.plots_gaps import gaps_section
from mixrank.report.plots_scores import plot_model_scores

__all__ = ["render_report", "write_report", "format_table_html", "SECTIONS"]

#: Section ids, in page order.
SECTIONS = ("design", "leaderboard", "components", "contrasts", "ranks", "resolution", "plan", "diagnostics")


_TITLES = {
    "design": "Design and balance",
    "leaderboard": "Leaderboard",
    "components": "Variance components",
    "contrasts": "Contrasts and design effect",
    "ranks": "Rank intervals",
    "resolution": "Resolution verdicts",
    "plan": "Planning",
    "diagnostics": "Fit diagnostics",
    "reliable_change": "Item-level reliable change",
    "gaps": "Where the gaps live",
    "judge": "Judge",
}


# ----------------------------------------------------------------- pair choice

def _shown_pairs(fit: Any, max_pairs: int) -> tuple[list[tuple[str, str]] | None, str | None]:
    """All pairs when few; otherwise the pairs adjacent in the order of the mean scores."""
    if len(fit.pairs) <= max_pairs:
        return None, None
    scores = fit.model_scores()
    order = scores.sort_values(["estimate", "model"], ascending=[False, True], kind="stable")
    models = order["model"].astype(str).tolist()
    fitted = pair_lookup(fit.pairs)
    adj = [(a, b) for a, b in zip(models[:-1], models[1:]) if pair_key(a, b) in fitted]
    note = (f"{len(fit.pairs)} pairs were fitted; plots and tables below show the "
            f"{len(adj)} pairs of models adjacent in the order of their mean scores "
            f"(best first). The full tables: mixrank contrasts / components ... --format csv.")
    return adj[:max_pairs], note


def _pair_rows(table: pd.DataFrame, pairs: list[tuple[str, str]] | None) -> pd.DataFrame:
    return select_pairs(table, pairs).reset_index(drop=True)


# ----------------------------------------------------------------- sections

def _design(fit: Any, ctx: dict) -> str:
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
                        "each pair is analysed on the cells both models share."))
        parts.append(format_table_html(incomplete.sort_values("n", kind="stable"), max_rows=30))
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


def _leaderboard(fit: Any, ctx: dict) -> str:
    tab = fit.model_scores(level=ctx["level"])
    cap = (f"Each model's own scores fitted by {tab.attrs['mixrank']['model']} (estimand "
           f"{tab.attrs['mixrank']['estimand']}); iid: cells independent.")
    notes = _notes(tab.attrs["mixrank"].get("groups_note", ""), _weak_note(fit))
    if "group" in tab.columns:
        tab = tab.sort_values(["group", "estimate"], ascending=[True, False], kind="stable")
    else:
        tab = tab.sort_values("estimate", ascending=False, kind="stable")  # best first
    return notes + guard("Leaderboard plot", lambda: figure_html(
        plot_model_scores(tab, ax=style.new_axes(len(tab), pyplot=False)), name="scores",
        alt="model scores with intervals", caption="Score \u00b1 CI at the formula's unit; thin: iid.")
    ) + format_table_html(tab, caption=cap)


def _components(fit: Any, ctx: dict) -> str:
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
    return plot_contrasts(fit.contrasts(level=ctx["level"]), ax, pairs=ctx["pairs"],
                          title="Contrasts")


def _contrasts(fit: Any, ctx: dict) -> str:
    full = fit.contrasts(level=ctx["level"])
    con, de, meta = (_pair_rows(full, ctx["pairs"]), _pair_rows(fit.design_effect(), ctx["pairs"]),
                     full.attrs.get("mixrank", {}))
    parts = [paragraph(f"Estimate = mean of model_a \u2212 model_b (estimand {fit.estimand}); t-tests "
                f"with {meta.get('df_method', 'Satterthwaite')} degrees of freedom; p_adjusted: "
                f"{meta.get('adjust')} across all {meta.get('family_size')} pairs.")]
    ne = meta.get("not_estimable") or []
    parts.append(_notes(_weak_note(fit), f"{len(ne)} pair(s) cannot be estimated under the "
                        "formula; their rows have NaN estimates and the reason in 'note' "
                        "(docs/messy.md §3)." if ne else ""))
    parts.append(guard("Forest plot", lambda: figure_html(
        _plot("contrasts", fit, ctx), name="contrasts", alt="forest plot of the contrasts",
        caption="Estimates with confidence intervals; blue intervals exclude 0.")))
    parts.append(format_table_html(con))
    parts.append("<h3>Design effect</h3>")
    parts.append(paragraph("Variance of the estimate under the fitted model relative to treating "
                    "the cells as independent; n_eff = n / design_effect."))
    parts.append(format_table_html(de))
    return "".join(parts)


def _ranks(fit: Any, ctx: dict) -> str:
    tab = fit.rank_intervals(**ctx["rank_kwargs"])
    meta = tab.attrs.get("mixrank", {})
    parts = [paragraph(f"Rank 1 is the best. Coverage {meta.get('coverage', '?')}, "
                f"method {meta.get('method', '?')}, unit of inference {meta.get('unit', '?')}.")]
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


_RESOLUTION_COLUMNS = ("model_a", "model_b", "estimate", "n", "n_star", "q", "resolved",
                       "resolved_multiplicity", "resolved_anytime", "design_effect",
                       "n_star_cluster", "resolved_cluster", "resolved_all",
                       "n_labelled", "n_labels_star")   # the last two: judge-corrected fits


def _resolution(fit: Any, ctx: dict) -> str:
    tab = fit.resolution(**ctx["resolution_kwargs"])
    meta = tab.attrs.get("mixrank", {})
    parts = [paragraph("Is each comparison resolved, i.e. is the benchmark large enough to detect "
                "the observed difference with the target power (q = N / N* \u2265 1)? Each "
                "paradigm is stricter than the one before: fixed n, multiplicity-adjusted, "
                "anytime-valid, clustered (the formula's unit of inference).")]
    parts.append(_notes(_left_out_note(tab, "The verdicts")))
    counts = meta.get("unresolved")
    if isinstance(counts, Mapping) and counts:
        parts.append(format_table_html(pd.DataFrame(
            {"paradigm": list(counts), "verdict": [str(v) for v in counts.values()]}),
            caption=f"Family: {meta.get('pairs', '?')} pairs; alpha {meta.get('alpha', '?')}, "
                    f"power {meta.get('power', '?')}, multiplicity "
                    f"{meta.get('multiplicity', '?')}."))
    plot = ctx.get("resolution_plot")
    if plot is not None:
        def fig() -> str:
            ax = style.new_axes(min(len(tab), 40), pyplot=False)
            with style.style_context():
                plot(tab, ax=ax)
            return figure_html(ax, name="resolution", alt="resolution verdicts",
                                caption="Resolution verdicts per pair.")
        parts.append(guard("Resolution plot", fig))
    cols = [c for c in _RESOLUTION_COLUMNS if c in tab.columns]
    parts.append(format_table_html(tab[cols], max_rows=ctx["max_pairs"],
                                   caption=f"Estimand {meta.get('estimand', '?')} in every "
                                           "column. Main columns; all of them (MDE, levels, q per "
                                           "paradigm): mixrank resolution ... --format csv."))
    if ctx.get("sensitivity"):
        parts.append(guard("Verdict sensitivity", lambda: _sensitivity(fit, ctx)))
    return "".join(parts)


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
            + format_table_html(summ[cols], max_rows=ctx["max_pairs"] * 4,
                                caption="Stability per check and pair (seed 0)."))


def _plan(fit: Any, ctx: dict) -> str:
    delta = ctx["plan_delta"]
    tab = fit.plan(delta, **ctx["plan_kwargs"])
    meta = tab.attrs.get("mixrank", {})
    who = ""
    if meta.get("model_a") is not None:
        who = (f" Variance components of the pair {meta.get('model_a')} \u2212 "
               f"{meta.get('model_b')} ({meta.get('pair_choice', 'chosen pair')}).")
    return (paragraph(f"Balanced designs and whether each resolves a difference of {fmt(delta)} "
               f"given the fitted variance components.{who} 'unreachable': no number of the "
               "varied factor alone can resolve it (the other factors' variance stays).")
            + format_table_html(tab, max_rows=ctx["max_pairs"] * 4))


def _diagnostics(fit: Any, ctx: dict) -> str:
    d = fit.diagnostics()
    bad = d[(~d["converged"].astype(bool)) | (d["boundary"].astype(str) != "")]
    parts = [paragraph(f"Engine {fit.engine}, method {fit.method}, estimand {fit.estimand}. "
                f"{int(d['converged'].astype(bool).sum())} of {len(d)} pair fits converged; "
                f"{int((d['boundary'].astype(str) != '').sum())} have a variance component "
                "on the boundary (estimated at 0, a legal result).")]
    if len(bad):
        parts.append(format_table_html(bad, max_rows=30))
    return "".join(parts)


def _reliable_change(fit: Any, ctx: dict) -> str:
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


_BUILDERS: dict[str, Callable[[Any, dict], str]] = {
    "design": _design, "leaderboard": _leaderboard, "components": _components,
    "contrasts": _contrasts, "ranks": _ranks,
    "resolution": _resolution, "plan": _plan, "diagnostics": _diagnostics,
    "reliable_change": _reliable_change,
    "gaps": lambda fit, ctx: gaps_section(fit, ctx, figure=figure_html, table=format_table_html,
                                          para=paragraph, guard=guard),   # model x covariate fits
    "judge": judge_section,   # judge-corrected fits (gold=): mixrank.report.html_judge
}


# ----------------------------------------------------------------- public API

def render_report(fit: Any, *, title: str | None = None, level: float | None = None,
                  plan_delta: float = 0.02, sections: Sequence[str] = SECTIONS,
                  rank_kwargs: Mapping[str, Any] | None = None,
                  resolution_kwargs: Mapping[str, Any] | None = None,
                  plan_kwargs: Mapping[str, Any] | None = None, max_pairs: int = 40,
                  reliable_change: Any = None, sensitivity: Any = None,
                  progress: Any = None) -> str:
    """The HTML text of the report of a fit.

    Parameters
    ----------
    fit : FitResult
        From :func:`mixrank.fit`.
    title : str, optional
        Page title; default ``"mixrank report: <formula>"``.
    level : float, optional
        Confidence level of the contrasts; default the fit's.
    plan_delta : float, default 0.02
        Target difference of the planning table (2 points on a 0-1 score).
    sections : sequence of str, default all of :data:`SECTIONS`
        Sections to include, in page order.
    rank_kwargs, resolution_kwargs, plan_kwargs : mapping, optional
        Passed to ``FitResult.rank_intervals``, ``FitResult.resolution`` and
        ``FitResult.plan``.
    max_pairs : int, default 40
        With more fitted pairs, plots and pairwise tables show the pairs of
        models adjacent in the order of their mean scores (a note says so).
    reliable_change : ReliableChange or sequence of them, optional
        Results of :func:`mixrank.reliable_change`; when given, a section
        ``"reliable_change"`` (scatter and per-subject plots, churn and
        reliability tables) is added after the others (or where
        ``sections`` names it).
    sensitivity : str or sequence of str, optional
        Checks of :meth:`FitResult.sensitivity` (e.g. ``"loso,bootstrap"``): a stability
        plot and table in the resolution section (default none: they refit the model).
    progress : callable or bool, optional
        ``progress(done, total)`` after each section (and passed to the
        sensitivity checks); ``True`` draws a bar on stderr (tqdm when
        installed).

    Returns
    -------
    str
        A complete HTML5 document: inline CSS, PNG plots as ``data:`` URIs,
        no scripts and no external resources.  Each plot is a ``<figure
        class="plot" data-plot="...">``; a section or plot whose backend is
        missing, or whose computation raises a :class:`MixrankError`, is
        replaced by a ``<div class="omitted">`` note with the reason.

    Raises
    ------
    DataError
        ``fit`` is not a FitResult, an unknown section name, a
        ``reliable_change`` that is not a ReliableChange, or the section
        ``"reliable_change"`` asked for without results.
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).

    Notes
    -----
    Only calls the public API (``FitResult`` accessors, ``Frame.balance``,
    ``Frame.describe``, the plot functions) and formats the tables; numbers
    are rounded for display only.
    """
    from mixrank.arena import ArenaResult
    from mixrank.change.result import ReliableChange
    from mixrank.errors import require
    from mixrank.report.plots_resolution import plot_resolution
    from mixrank.results import FitResult

    if isinstance(fit, ArenaResult):  # an arena fit has its own page (html_arena.py)
        from mixrank.report.html_arena import render_arena_report
        return render_arena_report(fit, title=title, level=level)
    if not isinstance(fit, FitResult):  # a binomial GLMM fit has its own page (html_glmm.py)
        from mixrank.report.html_glmm import glmm_or_error
        return glmm_or_error(fit, title=title, level=level, table=format_table_html)
    rcs = [] if reliable_change is None else (
        [reliable_change] if isinstance(reliable_change, ReliableChange) else list(reliable_change))
    wrong = [type(r).__name__ for r in rcs if not isinstance(r, ReliableChange)]
    if wrong:
        raise DataError(f"reliable_change= takes results of mixrank.reliable_change(...); got {wrong}")
    sections = list(sections)
    if rcs and "reliable_change" not in sections:
        sections.append("reliable_change")
    if "reliable_change" in sections and not rcs:
        raise DataError("section 'reliable_change' needs results: pass "
                        "reliable_change=mixrank.reliable_change(data, before=..., after=...)")
    if getattr(fit.frame.spec, "covariates", ()) and "gaps" not in sections:
        sections.insert(sections.index("contrasts") + 1 if "contrasts" in sections else 0, "gaps")
    if is_judge_fit(fit):   # PPI++ fits: a Judge section, no variance components
        sections = [s for s in sections if s != "components"]
        if "judge" not in sections:
            sections.insert(sections.index("leaderboard") + 1 if "leaderboard" in sections
                            else 0, "judge")
    unknown = [s for s in sections if s not in _BUILDERS]
    if unknown:
        raise DataError(f"unknown report section(s) {unknown}; expected a subset of "
                        f"{list(SECTIONS) + ['reliable_change']}")
    if not isinstance(max_pairs, (int, np.integer)) or max_pairs < 1:
        raise DataError(f"max_pairs={max_pairs!r}; expected a positive integer such as 40")
    require("matplotlib", "plot", "the HTML report")
    pairs, pair_note = _shown_pairs(fit, int(max_pairs))
    ctx = dict(pairs=pairs, level=level, plan_delta=plan_delta, max_pairs=int(max_pairs),
               rank_kwargs=dict(rank_kwargs or {}), resolution_kwargs=dict(resolution_kwargs or {}),
               plan_kwargs=dict(plan_kwargs or {}), resolution_plot=plot_resolution,
               reliable_change=rcs, sensitivity=sensitivity, progress=progress)
    rep = as_progress(progress, "report sections")
    spec = fit.frame.spec
    page_title = title or f"mixrank report: {spec.formula}"
    meta = (f"Formula <code>{html.escape(spec.formula)}</code> \u00b7 "
            f"{len(fit.models)} models \u00b7 {len(fit.pairs)} pairs \u00b7 method "
            f"{html.escape(fit.method)} \u00b7 engine {html.escape(fit.engine)} \u00b7 "
            f"estimand {html.escape(fit.estimand)} \u00b7 mixrank {MIXRANK_VERSION}")
    return html_page(page_title, meta, [(s, _TITLES[s]) for s in sections],
                     lambda s: _BUILDERS[s](fit, ctx), notes=[pair_note] if pair_note else [],
                     progress=rep)


def write_report(fit: Any, path: str | Path, *, title: str | None = None,
                 level: float | None = None, plan_delta: float = 0.02,
                 sections: Sequence[str] = SECTIONS, rank_kwargs: Mapping[str, Any] | None = None,
                 resolution_kwargs: Mapping[str, Any] | None = None,
                 plan_kwargs: Mapping[str, Any] | None = None, max_pairs: int = 40,
                 reliable_change: Any = None, sensitivity: Any = None,
                 progress: Any = None) -> Path:
    """Write the self-contained HTML report of a fit to ``path``.

    Parameters
    ----------
    fit : FitResult
        From :func:`mixrank.fit`.
    path : str or Path
        Output file (``.html``); its folder must exist.
    title, level, plan_delta, sections, rank_kwargs, resolution_kwargs, plan_kwargs, max_pairs
        As in :func:`render_report`.
    reliable_change, sensitivity, progress : optional
        As in :func:`render_report`.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    DataError
        As :func:`render_report`, the folder of ``path`` does not exist, or the
        file cannot be written (the message names the path and the reason).
    MissingDependencyError
        matplotlib is not installed.

    Notes
    -----
    See :func:`render_report`; the page is UTF-8 and opens offline.

    Examples
    --------
    >>> import mixrank, tempfile, pathlib
    >>> from mixrank.report.html import write_report
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> out = write_report(res, pathlib.Path(tempfile.mkdtemp()) / "report.html")
    >>> out.read_text().startswith("<!DOCTYPE html>")
    True
    """
    p = Path(path)
    if not p.parent.exists():
        raise DataError(f"cannot write the report to {str(p)!r}: folder {str(p.parent)!r} does "
                        "not exist; create it or choose another path")
    text = render_report(fit, title=title, level=level, plan_delta=plan_delta, sections=sections,
                         rank_kwargs=rank_kwargs, resolution_kwargs=resolution_kwargs,
                         plan_kwargs=plan_kwargs, max_pairs=max_pairs, reliable_change=reliable_change,
                         sensitivity=sensitivity, progress=progress)
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as exc:   # a full disk, no permission, a folder of that name
        raise DataError(f"cannot write the report to {str(p)!r}: {exc.strerror or exc}; free "
                        "space or choose another path (-o/--output)") from None
    return p
