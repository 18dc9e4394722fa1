"""The resolution section's sensitivity part and plot."""

from __future__ import annotations

import warnings

import matplotlib
import pandas as pd
import pytest

import mixrank
from mixrank.errors import DataError
from mixrank.report.html import render_report
from mixrank.report.plots_sensitivity import plot_sensitivity

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def fit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())


def test_plot_has_one_row_per_pair_and_one_series_per_check(fit):
    summ = fit.sensitivity("loso,bootstrap,clusterings", draws=100, n_random=20, rng=1,
                           summary=True)
    ax = plot_sensitivity(summ, title="t")
    pairs = summ[["model_a", "model_b"]].drop_duplicates()
    assert len(ax.get_yticks()) == len(pairs)
    assert len(ax.get_lines()) == 3 + 1  # three checks + the reference line
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert all(("resolved" in s) for s in labels)
    with pytest.raises(DataError, match="stability table"):
        plot_sensitivity(pd.DataFrame({"x": [1]}))


def test_report_shows_the_sensitivity_part_only_when_asked(fit):
    plain = render_report(fit, sections=["resolution"])
    assert "How robust is the clustered verdict?" not in plain
    html = render_report(fit, sections=["resolution"], sensitivity="loso,bootstrap")
    assert "How robust is the clustered verdict?" in html
    assert 'data-plot="sensitivity"' in html
    assert "Estimand cells in every column" in html
