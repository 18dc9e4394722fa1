"""The report shows differences, not overlapping bars.

* The contrast plot colours a pair by the adjusted verdict its caption names
  (p_adjusted < 1 - level), not by its marginal interval.
* The leaderboard plot marks the neighbours whose adjusted contrast rejects,
  and the report says under it that overlapping score intervals are not a test.
"""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import mixrank  # noqa: E402
from mixrank.report import style  # noqa: E402
from mixrank.report.plots import plot_contrasts  # noqa: E402
from mixrank.report.plots_scores import plot_model_scores, resolved_neighbours  # noqa: E402

F = "correct ~ model + (1|subject)"


@pytest.fixture(scope="module")
def res():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(F, mixrank.load_example())


def test_contrast_colours_follow_the_adjusted_verdict(res):
    con = res.contrasts()
    marginal = (con["ci_lower"] > 0) | (con["ci_upper"] < 0)
    adjusted = con["p_adjusted"] < 0.05
    assert (marginal & ~adjusted).any()        # a pair where the two disagree
    ax = plot_contrasts(con, sort=False, orient=False)
    seg = ax.collections[0].get_colors()
    blue = np.array(matplotlib.colors.to_rgba(style.COLORS["significant"]))
    got = [bool(np.allclose(c, blue)) for c in seg]
    # rows are drawn top-down in table order: segment i is row i
    assert got == adjusted.tolist()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    how = con.attrs["mixrank"]["adjust"]       # the fit's default adjustment, whichever it is
    assert labels[0] == f"{how}-adjusted p < 0.05"


def test_leaderboard_marks_resolved_neighbours():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(F, mixrank.load_dataset("jailbreakbench"))
    sc = res.model_scores()
    con = res.contrasts()
    order = sc.sort_values("estimate", ascending=False)["model"].tolist()
    marks = resolved_neighbours(order, con)
    p = {(a, b): v for a, b, v in zip(con.model_a, con.model_b, con.p_adjusted)}
    p.update({(b, a): v for (a, b), v in list(p.items())})
    assert marks == [p[(a, b)] < 0.05 for a, b in zip(order[:-1], order[1:])]
    assert sum(marks) > 0
    ax = plot_model_scores(sc, contrasts=con)
    stars = [ln for ln in ax.get_lines() if ln.get_marker() == "*"]
    assert len(stars) == sum(marks)


def test_report_says_overlap_is_not_a_test(res):
    from mixrank.report.html import render_report
    page = render_report(res, sections=["leaderboard", "contrasts"])
    assert "Overlapping score intervals are not a test" in page
    how = res.contrasts().attrs["mixrank"]["adjust"]
    assert f"blue: the {how}-adjusted contrast rejects" in page
