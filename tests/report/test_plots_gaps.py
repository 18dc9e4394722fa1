"""Report: per-level forest plot, per-level rank intervals, the "Where the gaps live" section."""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.report import render_report
from mixrank.report.plots_gaps import plot_gaps_by, plot_ranks_by

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def fit():
    rng = np.random.default_rng(5)
    rows = []
    for m in ("a", "b", "c"):
        for s in range(6):
            u = rng.normal(0, 0.5)
            for q in range(6):
                if m == "a" and q % 3 == 1:
                    continue                    # model a has no 'hard' questions
                rows.append(dict(model=m, subject=f"s{s}", question=f"s{s}q{q}",
                                 difficulty=("easy", "hard", "mid")[q % 3],
                                 correct=float(u + rng.normal() + (m == "b"))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit("correct ~ model * difficulty + (1|subject)", pd.DataFrame(rows))


def test_forest_plot_has_one_row_per_pair_and_level(fit):
    tab = fit.contrasts(by="difficulty")
    ax = plot_gaps_by(tab, "difficulty", title="t")
    assert len(ax.get_yticklabels()) == len(tab) == 9
    assert sum("no cells" in t.get_text() for t in ax.texts) == int(tab["estimate"].isna().sum()) == 2


def test_rank_plot_rows_are_the_ranked_models(fit):
    tab = fit.rank_intervals(by="difficulty")
    ax = plot_ranks_by(tab, "difficulty")
    assert len(ax.get_yticklabels()) == int(tab["rank"].notna().sum())


def test_bad_tables_are_data_errors(fit):
    with pytest.raises(mixrank.DataError, match="lacks columns"):
        plot_gaps_by(fit.contrasts(), "difficulty")
    with pytest.raises(mixrank.DataError, match="DataFrame"):
        plot_ranks_by([1, 2], "difficulty")


def test_report_has_the_section_for_interaction_fits(fit):
    page = render_report(fit, sections=("design", "contrasts"))
    assert '<section id="gaps"><h2>Where the gaps live</h2>' in page
    assert 'class="omitted"' not in page
    assert page.count('data-plot="gaps_difficulty"') + page.count("gaps_difficulty") >= 1
    plain = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example(),
                        pairs=[("m01", "m02")])
    assert 'id="gaps"' not in render_report(plain, sections=("design",))
