"""Stage report: tables and plots only; never computes statistics.

Inputs: a :class:`~mixrank.results.FitResult`, a
:class:`~mixrank.change.result.ReliableChange` or the tidy tables they return.
Outputs: matplotlib Axes and a self-contained HTML page.
Contents: :mod:`~mixrank.report.style` (the shared look),
:mod:`~mixrank.report.plots` (:func:`plot_contrasts`, :func:`plot_components`),
:mod:`~mixrank.report.plots_ranks` (:func:`plot_rank_intervals`),
:mod:`~mixrank.report.plots_resolution` (:func:`plot_resolution`,
:func:`plot_power_curve`), :mod:`~mixrank.report.plots_rci` (:func:`plot_rci`,
:func:`plot_rci_subjects`), :mod:`~mixrank.report.html` (:func:`write_report`,
:func:`render_report`: the one page builder, whose catalogue of sections shows each
section a result supports -- linear, judge-corrected, binomial GLMM or arena fits).
The section builders: :mod:`~mixrank.report.html_sections` (a linear fit),
:mod:`~mixrank.report.html_glmm` (a binomial GLMM, its plot in
:mod:`~mixrank.report.plots_glmm`), :mod:`~mixrank.report.html_arena` (an arena
fit; its judge-correction plot in :mod:`~mixrank.report.plots_arena`), :mod:`~mixrank.report.html_judge` (the judge section, its plot in
:mod:`~mixrank.report.plots_judge`), :mod:`~mixrank.report.html_items` (the item
diagnostics section of :func:`mixrank.item_diagnostics`, with its plot), with the HTML building blocks in
:mod:`~mixrank.report.html_format` and the part built in a forked child meanwhile (the
verdict-stability checks) in :mod:`~mixrank.report.background`; further plots:
:mod:`~mixrank.report.plots_scores` (the leaderboard),
:mod:`~mixrank.report.plots_gaps` (where the gaps live, per covariate level),
:mod:`~mixrank.report.plots_sensitivity` (stability of the clustered verdict).
matplotlib is imported only when a plot is drawn.
"""

from .html import render_report, write_report
from .plots import plot_components, plot_contrasts
from .plots_ranks import plot_rank_intervals
from .plots_rci import plot_rci, plot_rci_subjects
from .plots_resolution import plot_power_curve, plot_resolution

__all__ = ["plot_contrasts", "plot_components", "plot_rank_intervals", "plot_resolution",
           "plot_power_curve", "plot_rci", "plot_rci_subjects", "render_report", "write_report"]
