"""The rank-interval plot: rows in leaderboard order, one segment and one marker per model."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mixrank.errors import DataError  # noqa: E402
from mixrank.inference.ranks import rank_intervals_from_tests  # noqa: E402
from mixrank.report.plots_ranks import plot_rank_intervals  # noqa: E402

SCORES = {"a": 0.90, "b": 0.70, "c": 0.65, "d": 0.70}
UPPER = {("a", "b"): 0.001, ("a", "c"): 0.0001, ("a", "d"): 0.002, ("b", "c"): 0.2,
         ("b", "d"): 0.5, ("d", "c"): 0.3}


@pytest.fixture
def table() -> pd.DataFrame:
    models = list(SCORES)
    pos = {m: i for i, m in enumerate(models)}
    P = np.full((4, 4), np.nan)
    for (x, y), p in UPPER.items():
        P[pos[x], pos[y]], P[pos[y], pos[x]] = p, 1 - p
    return rank_intervals_from_tests(SCORES, P)


def test_rows_follow_scores_and_intervals(table):
    ax = plot_rank_intervals(table, title="Leaderboard")
    try:
        labels = [t.get_text() for t in ax.get_yticklabels()]
        ticks = list(ax.get_yticks())
        # best at the top: highest y; ties in score (b, d) by name
        order = [lab for _, lab in sorted(zip(ticks, labels, strict=True), reverse=True)]
        assert order == ["a", "b", "d", "c"]
        assert ax.get_title() == "Leaderboard"
        seg = ax.collections[0].get_segments()
        assert len(seg) == 4
        by_y = {float(s[0][1]): (float(s[0][0]), float(s[1][0])) for s in seg}
        t = table.set_index("model")
        for y, lab in zip(ticks, labels, strict=True):
            assert by_y[float(y)] == (t.loc[lab, "rank_lower"], t.loc[lab, "rank_upper"])
        xs, ys = ax.lines[0].get_data()
        pts = dict(zip(ys.tolist(), xs.tolist(), strict=True))
        for y, lab in zip(ticks, labels, strict=True):
            assert pts[float(y)] == t.loc[lab, "rank"]
        assert "95%" in ax.get_xlabel() and "marginal" in ax.get_xlabel()
    finally:
        plt.close(ax.figure)


def test_draws_on_given_axes_and_keeps_input(table):
    before = table.copy()
    fig, ax = plt.subplots()
    try:
        out = plot_rank_intervals(table, ax=ax)
        assert out is ax
        pd.testing.assert_frame_equal(table, before)
    finally:
        plt.close(fig)


def test_bad_tables():
    with pytest.raises(DataError, match="lacks columns"):
        plot_rank_intervals(pd.DataFrame({"model": ["a"], "estimate": [1.0]}))
    with pytest.raises(DataError, match="empty"):
        plot_rank_intervals(pd.DataFrame(columns=["model", "estimate", "rank", "rank_lower",
                                                  "rank_upper"]))
    with pytest.raises(DataError, match="DataFrame"):
        plot_rank_intervals([1, 2, 3])
