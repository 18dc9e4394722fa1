"""The leaderboard plot (report/plots_scores.py): intervals drawn from the table."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import mixrank  # noqa: E402
from mixrank.report.plots_scores import plot_model_scores  # noqa: E402


@pytest.fixture(scope="module")
def scores():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example()).model_scores()


def test_segments_are_the_table_intervals(scores):
    ax = plot_model_scores(scores, title="t")
    order = scores.sort_values("estimate", ascending=False)
    assert [t.get_text() for t in ax.get_yticklabels()] == order["model"].tolist()
    segs = ax.collections[0].get_segments()          # the CI at the formula's unit
    got = sorted((float(s[0][0]), float(s[1][0])) for s in segs)
    want = sorted(zip(scores["ci_lower"], scores["ci_upper"]))
    np.testing.assert_allclose(got, want)
    iid = ax.collections[1].get_segments()             # the iid interval is narrower here
    width_iid = np.array([s[1][0] - s[0][0] for s in iid])
    assert np.all(width_iid < (scores["ci_upper"] - scores["ci_lower"]).min())


def test_errors(scores):
    with pytest.raises(mixrank.DataError, match="model_scores"):
        plot_model_scores(scores.drop(columns="ci_lower"))
    with pytest.raises(mixrank.DataError, match="empty"):
        plot_model_scores(scores.iloc[:0])
    with pytest.raises(mixrank.DataError, match="DataFrame"):
        plot_model_scores([1, 2])
