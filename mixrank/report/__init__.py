"""Stage report: tables and plots only; never computes statistics.

Inputs: a :class:`~mixrank.results.FitResult` or the tidy tables it returns.
Outputs: matplotlib Axes and a self-contained HTML page.
Contents: :mod:`~mixrank.report.style` (the shared look),
:mod:`~mixrank.report.plots` (:func:`plot_contrasts`, :func:`plot_components`),
:mod:`~mixrank.report.plots_ranks` (rank intervals),
:mod:`~mixrank.report.html` (:func:`write_report`, :func:`render_report`).
matplotlib is imported only when a plot is drawn.
"""

from .html import render_report, write_report
from .plots import plot_components, plot_contrasts

__all__ = ["plot_contrasts", "plot_components", "render_report", "write_report"]
