"""Stage report: the one page builder -- a self-contained HTML page for any result.

Inputs: a result of :func:`mixrank.fit` (a :class:`~mixrank.results.FitResult`,
a judge-corrected :class:`~mixrank.judge.result.JudgeResult`, a binomial
:class:`~mixrank.results.glmm.result.GlmmResult`) or of :func:`mixrank.arena`
(an :class:`~mixrank.arena.ArenaResult`).
Outputs: an HTML document (a string, or a file) with inline CSS and the plots
embedded as base64 PNG (matplotlib, no GUI backend needed): no scripts, no
external resources, so the page opens offline and can be mailed as one file.
Contents: :data:`CATALOGUE` (every section, in page order, each with the
capability a result needs to show it), :func:`render_report` (the HTML text)
and :func:`write_report` (the same, written to a file).  A section whose
backend is not available (or raises a mixrank error) is replaced by a visible
note saying why; nothing is dropped silently.  Only calls the public API and
formats its tables: computes no statistics.  The section builders are in
:mod:`~mixrank.report.html_sections` (linear fits), :mod:`~mixrank.report.html_glmm`
(binomial GLMM), :mod:`~mixrank.report.html_arena` (Bradley-Terry) and
:mod:`~mixrank.report.html_judge`; the HTML building blocks (tables, figures,
notes, the page frame) in :mod:`~mixrank.report.html_format`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mixrank._progress import as_progress
from mixrank._util import MIXRANK_VERSION
from mixrank._warned import raised
from mixrank.errors import DataError
from mixrank.report import html_arena as arena
from mixrank.report import html_glmm as glmm
from mixrank.report import html_sections as linear
from mixrank.report.background import Background
from mixrank.report.html_format import format_table_html, html_page
from mixrank.report.html_items import check_items, items_section
from mixrank.report.html_judge import is_judge_fit, judge_section
from mixrank.report.plots_gaps import gaps_section

__all__ = ["render_report", "write_report", "format_table_html", "SECTIONS", "CATALOGUE",
           "Section"]

#: Section ids of a linear fit's page, in page order (the default of ``sections=``).
SECTIONS = ("design", "leaderboard", "components", "contrasts", "ranks", "resolution", "plan",
            "diagnostics")


@dataclass(frozen=True)
class Section:
    """One section of the page: shown when the result has the capability ``when`` tests.

    ``auto``: shown whenever the result has it, also when ``sections=`` does
    not name it (the Judge section of a judge-corrected fit, Where the gaps
    live of a ``model * x`` fit, the reliable-change results passed in).
    """

    id: str
    title: str | Callable[[Any], str]
    build: Callable[[Any, dict], str]
    when: Callable[[Any, dict], bool]
    auto: bool = False

    def heading(self, fit: Any) -> str:
        return self.title(fit) if callable(self.title) else self.title


def _kind(fit: Any) -> str:
    """``"fit"`` (linear and judge-corrected), ``"glmm"`` or ``"arena"``; DataError otherwise."""
    from mixrank.arena import ArenaResult
    from mixrank.results import FitResult
    from mixrank.results.glmm.result import GlmmResult

    if isinstance(fit, FitResult):
        return "fit"
    if isinstance(fit, GlmmResult):
        return "glmm"
    if isinstance(fit, ArenaResult):
        return "arena"
    raise DataError(f"render_report needs a FitResult or GlmmResult from mixrank.fit(...) (or "
                    f"an ArenaResult from mixrank.arena(...)); got {type(fit).__name__}")


def _is(kind: str) -> Callable[[Any, dict], bool]:
    return lambda fit, ctx: ctx["kind"] == kind


def _linear_gaps(fit: Any, ctx: dict) -> str:
    from mixrank.report.html_format import figure_html, guard, paragraph

    return gaps_section(fit, ctx, figure=figure_html, table=format_table_html, para=paragraph,
                        guard=guard)


#: Every section, in page order; each names the capability (result kind or accessor) it needs.
def _warnings_section(fit: Any, ctx: dict) -> str:
    """Every warning the fit raised, in words, before anything else."""
    items = "".join(f"<li><b>{html.escape(cat)}</b>: {html.escape(msg)}</li>"
                    for cat, msg in raised(fit))
    return ('<div class="warnbox"><p>Read these before the tables: each names a way the '
            f'numbers below can mislead.</p><ul class="warnings">{items}</ul></div>')


#: The planning section's target gap when ``plan_delta`` is not given (the page says so).
DEFAULT_PLAN_DELTA = 0.02

CATALOGUE: tuple[Section, ...] = (
    Section("warnings", "Warnings the fit raised", _warnings_section,
            lambda fit, ctx: bool(raised(fit)), auto=True),
    Section("battles", "Battles", arena.battles, _is("arena")),
    Section("design", "Design and balance", linear.design, _is("fit")),
    Section("leaderboard", "Leaderboard", linear.leaderboard, _is("fit")),
    Section("leaderboard", "Leaderboard (Elo display scale)", arena.leaderboard, _is("arena")),
    Section("scores", "Model scores (response scale: probability)", glmm.scores, _is("glmm")),
    Section("judge", "Judge", judge_section, lambda fit, ctx: is_judge_fit(fit), auto=True),
    Section("components", "Variance components", linear.components,
            lambda fit, ctx: ctx["kind"] == "fit" and not is_judge_fit(fit)),
    Section("components", "Variance components (logit scale)", glmm.components, _is("glmm")),
    Section("arena_judges", "Judge correction", arena.judges,
            lambda fit, ctx: ctx["kind"] == "arena" and fit.judge is not None, auto=True),
    Section("covariates", "Style covariates", arena.covariates, _is("arena")),
    Section("contrasts", "Contrasts and design effect", linear.contrasts, _is("fit")),
    Section("contrasts", "Contrasts", arena.contrasts, _is("arena")),
    Section("contrasts_logit", "Contrasts, logit scale", glmm.contrasts_logit, _is("glmm")),
    Section("contrasts_response", "Contrasts, response scale (probability)",
            glmm.contrasts_response, _is("glmm")),
    Section("fixed_effects", "Fixed effects (glmer's coding)", glmm.fixed_effects, _is("glmm")),
    Section("gaps", "Where the gaps live", _linear_gaps,
            lambda fit, ctx: ctx["kind"] == "fit" and bool(
                getattr(fit.frame.spec, "covariates", ())), auto=True),
    Section("gaps", lambda fit: f"Where the gaps live (model \u00d7 {fit.by})", glmm.gaps,
            lambda fit, ctx: ctx["kind"] == "glmm" and bool(getattr(fit, "by", None)),
            auto=True),
    Section("ranks", "Rank intervals", linear.ranks, _is("fit")),
    Section("ranks", "Rank intervals (logit scale: ranks and intervals from the log-odds)",
            glmm.ranks, _is("glmm")),
    Section("ranks", "Rank intervals", arena.ranks, _is("arena")),
    Section("resolution", "Resolution verdicts", linear.resolution, _is("fit")),
    Section("resolution", "Resolution verdicts (logit-scale Wald N*)", glmm.resolution,
            _is("glmm")),
    Section("resolution", "Resolution verdicts", arena.resolution, _is("arena")),
    Section("plan", "Planning", linear.plan, _is("fit")),
    Section("diagnostics", "Fit diagnostics", linear.diagnostics, _is("fit")),
    Section("diagnostics", "Fit diagnostics", glmm.diagnostics, _is("glmm")),
    Section("reliable_change", "Item-level reliable change", linear.reliable_change,
            lambda fit, ctx: bool(ctx["reliable_change"]), auto=True),
    Section("items", "Item diagnostics", items_section,
            lambda fit, ctx: ctx.get("items") is not None, auto=True),
)


def _page_sections(fit: Any, ctx: dict, sections: Sequence[str] | None) -> list[Section]:
    """The sections the result supports: all of them, or those ``sections`` names (in its
    order) plus the ``auto`` ones, each after the nearest section before it in the catalogue."""
    have = [s for s in CATALOGUE if s.when(fit, ctx)]
    if sections is None:
        return have
    known = {s.id for s in CATALOGUE}
    unknown = [s for s in sections if s not in known]
    if unknown:
        raise DataError(f"unknown report section(s) {unknown}; expected a subset of "
                        f"{list(dict.fromkeys(s.id for s in CATALOGUE))}")
    if "reliable_change" in sections and not ctx["reliable_change"]:
        raise DataError("section 'reliable_change' needs results: pass "
                        "reliable_change=mixrank.reliable_change(data, before=..., after=...)")
    by_id = {s.id: s for s in have}
    out = [by_id[s] for s in dict.fromkeys(sections) if s in by_id]
    for s in have:
        if not s.auto or s in out:
            continue
        before = [t.id for t in have[:have.index(s)]]
        at = max((out.index(by_id[b]) + 1 for b in before if by_id.get(b) in out), default=0)
        out.insert(at, s)
    return out


def _head(fit: Any, kind: str, title: str | None) -> tuple[str, str, str]:
    """(page title, meta line, preamble HTML) of the page."""
    if kind == "arena":
        return (title or f"mixrank arena report: {fit.formula}",
                f"{arena.meta_line(fit)} \u00b7 mixrank {MIXRANK_VERSION}", "")
    if kind == "glmm":
        return (title or f"mixrank report: {fit.formula.formula}",
                f"{glmm.meta_line(fit)} \u00b7 mixrank {MIXRANK_VERSION}", glmm.preamble(fit))
    spec = fit.frame.spec
    return (title or f"mixrank report: {spec.formula}",
            f"Formula <code>{html.escape(spec.formula)}</code> \u00b7 "
            f"{len(fit.models)} models \u00b7 {len(fit.pairs)} pairs \u00b7 method "
            f"{html.escape(fit.method)} \u00b7 engine {html.escape(fit.engine)} \u00b7 "
            f"estimand {html.escape(fit.estimand)} \u00b7 mixrank {MIXRANK_VERSION}", "")


# ----------------------------------------------------------------- public API

def render_report(fit: Any, *, title: str | None = None, level: float | None = None,
                  plan_delta: float | None = None, sections: Sequence[str] | None = None,
                  rank_kwargs: Mapping[str, Any] | None = None,
                  resolution_kwargs: Mapping[str, Any] | None = None,
                  plan_kwargs: Mapping[str, Any] | None = None, max_pairs: int = 40,
                  reliable_change: Any = None, sensitivity: Any = None,
                  progress: Any = None, items: Any = None) -> str:
    """The HTML text of the report of a fit.

    One page builder for every result: each section of :data:`CATALOGUE`
    is shown when the result supports it (a linear fit: design and balance,
    leaderboard, variance components, contrasts and design effect, rank
    intervals, resolution verdicts, planning, diagnostics; a binomial GLMM:
    scores and both scales' contrasts, logit-scale components, glmer's fixed
    effects, rank intervals, verdicts, diagnostics; an arena fit: battles,
    leaderboard, covariates, contrasts, rank intervals, verdicts).

    Parameters
    ----------
    fit : FitResult, GlmmResult or ArenaResult
        From :func:`mixrank.fit` or :func:`mixrank.arena`.
    title : str, optional
        Page title; default ``"mixrank report: <formula>"``.
    level : float, optional
        Confidence level of the contrasts and scores; default the fit's.
    plan_delta : float, optional
        Target difference of the planning table; default 0.02 (2 points on a 0-1
        score), which the section then says is a default.
    sections : sequence of str, optional
        Sections to include, in page order (ids of :data:`CATALOGUE`, e.g.
        :data:`SECTIONS` for a linear fit); default every section the result
        supports.  Sections the result does not support are left out.
    rank_kwargs, resolution_kwargs, plan_kwargs : mapping, optional
        Passed to the result's ``rank_intervals``, ``resolution`` and
        ``plan`` (an option a result type does not support raises its
        :class:`~mixrank.OptionError`, shown as the section's note).
    max_pairs : int, default 40
        With more fitted pairs, plots and pairwise tables of a linear fit show
        the pairs of models adjacent in the order of their mean scores (a note
        says so).
    reliable_change : ReliableChange or sequence of them, optional
        Results of :func:`mixrank.reliable_change`; when given, a section
        ``"reliable_change"`` (scatter and per-subject plots, churn and
        reliability tables) is added after the others (or where
        ``sections`` names it).
    sensitivity : str or sequence of str, optional
        Checks of :meth:`FitResult.sensitivity` (e.g. ``"loso,bootstrap"``): a
        stability plot and table in the resolution section (default none:
        they refit the model).  Only results with ``sensitivity()``.
    progress : callable or bool, optional
        ``progress(done, total)`` after each section (and passed to the
        sensitivity checks); ``True`` draws a bar on stderr (tqdm when
        installed).
    items : pandas.DataFrame, optional
        The table of :func:`mixrank.item_diagnostics`; when given, a section
        ``"items"`` (flag counts, difficulty-discrimination plot, the items
        with a likely wrong answer key) is added.

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
        ``fit`` is not one of the results above, an unknown section name, a
        ``reliable_change`` that is not a ReliableChange, the section
        ``"reliable_change"`` asked for without results, ``sensitivity=``
        for a result without ``sensitivity()``.
    MissingDependencyError
        matplotlib is not installed (``pip install 'mixrank[plot]'``).

    Notes
    -----
    Only calls the public API (the result's accessors, ``Frame.balance``,
    ``Frame.describe``, the plot functions) and formats the tables; numbers
    are rounded for display only.

    Examples
    --------
    >>> import re
    >>> import mixrank
    >>> from mixrank.report import render_report
    >>> df = mixrank.load_example().query("model in ['m01', 'm02', 'm03']")
    >>> html = render_report(mixrank.fit("correct ~ model + (1|subject)", df),
    ...                      sections=["leaderboard"])
    >>> html.startswith("<!DOCTYPE html>"), re.findall("<h2[^>]*>(.*?)</h2>", html)
    (True, ['Leaderboard'])
    """
    from mixrank.change.result import ReliableChange
    from mixrank.errors import require

    kind = _kind(fit)
    rcs = [] if reliable_change is None else (
        [reliable_change] if isinstance(reliable_change, ReliableChange) else list(reliable_change))
    wrong = [type(r).__name__ for r in rcs if not isinstance(r, ReliableChange)]
    if wrong:
        raise DataError(f"reliable_change= takes results of mixrank.reliable_change(...); got {wrong}")
    if sensitivity and not callable(getattr(fit, "sensitivity", None)):
        raise DataError(f"sensitivity={sensitivity!r}: a {type(fit).__name__} has no "
                        "sensitivity() (verdict stability refits the linear model); drop it")
    if not isinstance(max_pairs, (int, np.integer)) or max_pairs < 1:
        raise DataError(f"max_pairs={max_pairs!r}; expected a positive integer such as 40")
    if kind != "fit" and max_pairs != 40:
        raise DataError(f"max_pairs={max_pairs!r} shapes the pairwise tables of a linear fit's "
                        f"page; a {type(fit).__name__}'s page shows every pair: drop it")
    ctx = dict(kind=kind, pairs=None, level=level,
               plan_delta=DEFAULT_PLAN_DELTA if plan_delta is None else plan_delta,
               plan_delta_given=plan_delta is not None,
               max_pairs=int(max_pairs), rank_kwargs=dict(rank_kwargs or {}),
               resolution_kwargs=dict(resolution_kwargs or {}), plan_kwargs=dict(plan_kwargs or {}),
               reliable_change=rcs, sensitivity=sensitivity, progress=progress, items=items)
    check_items(items)
    shown = _page_sections(fit, ctx, sections)
    require("matplotlib", "plot", "the HTML report")
    notes: list[str] = []
    if kind == "fit":
        ctx["pairs"], pair_note = linear.shown_pairs(fit, int(max_pairs), ctx)
        notes = [pair_note] if pair_note else []
    page_title, meta, preamble = _head(fit, kind, title)
    builders = {s.id: s.build for s in shown}
    # the stability checks refit the model for seconds: in a child while the page is built
    # (not while a bar is drawn: it reports from one process)
    job = None
    if sensitivity and not progress and builders.get("resolution") is linear.resolution:
        import matplotlib.backends.backend_agg  # noqa: F401 - imported once, before the fork
        import matplotlib.figure  # noqa: F401

        import mixrank.report.plots_sensitivity  # noqa: F401
        job = Background(lambda: linear.sensitivity_part(fit, ctx)).start()
    ctx["sensitivity_job"] = job
    try:
        return html_page(page_title, meta, [(s.id, s.heading(fit)) for s in shown],
                         lambda sid: builders[sid](fit, ctx), notes=notes, preamble=preamble,
                         csv_command="mixrank arena ..." if kind == "arena" else "mixrank ...",
                         progress=as_progress(progress, "report sections"))
    finally:
        if job is not None:
            job.cancel()        # a no-op once the resolution section took the fragment


def write_report(fit: Any, path: str | Path, *, title: str | None = None,
                 level: float | None = None, plan_delta: float | None = None,
                 sections: Sequence[str] | None = None,
                 rank_kwargs: Mapping[str, Any] | None = None,
                 resolution_kwargs: Mapping[str, Any] | None = None,
                 plan_kwargs: Mapping[str, Any] | None = None, max_pairs: int = 40,
                 reliable_change: Any = None, sensitivity: Any = None,
                 progress: Any = None, items: Any = None) -> Path:
    """Write the self-contained HTML report of a fit to ``path``.

    Parameters
    ----------
    fit : FitResult, GlmmResult or ArenaResult
        From :func:`mixrank.fit` or :func:`mixrank.arena`.
    path : str or Path
        Output file (``.html``); its folder must exist.
    title, level, plan_delta, sections, rank_kwargs, resolution_kwargs, plan_kwargs, max_pairs
        As in :func:`render_report`.
    reliable_change, sensitivity, progress, items : optional
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
                         sensitivity=sensitivity, progress=progress, items=items)
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as exc:   # a full disk, no permission, a folder of that name
        raise DataError(f"cannot write the report to {str(p)!r}: {exc.strerror or exc}; free "
                        "space or choose another path (-o/--output)") from None
    return p
