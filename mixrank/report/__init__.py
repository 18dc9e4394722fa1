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
section a result supports -- linear, judge-corrected, binomial GLMM or arena fits;
the section builders in ``html_sections``, ``html_glmm``, ``html_arena``, ``html_judge``).
matplotlib is imported only when a plot is drawn.
"""

from .html import render_report, write_report
from .plots import plot_components, plot_contrasts
from .plots_ranks import plot_rank_intervals
from .plots_rci import plot_rci, plot_rci_subjects
from .plots_resolution import plot_power_curve, plot_resolution

__all__ = ["plot_contrasts", "plot_components", "plot_rank_intervals", "plot_resolution",
           "plot_power_curve", "plot_rci", "plot_rci_subjects", "render_report", "write_report"]
