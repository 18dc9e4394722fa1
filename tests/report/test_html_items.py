"""The "Item diagnostics" section of the HTML report (mixrank.report.html_items)."""

from __future__ import annotations

import pytest

import mixrank
from mixrank.errors import DataError
from mixrank.report.html import render_report, write_report
from tests.subset.sim import board


@pytest.fixture(scope="module")
def fitted():
    data, bad = board(models=8, items=120, subjects=3, seed=5, flipped=6, spread=2.0)
    res = mixrank.fit("correct ~ model + (1|subject)", data)
    return res, mixrank.item_diagnostics(data), bad


def test_section_shows_counts_plot_and_flagged_items(fitted, tmp_path):
    res, diag, _ = fitted
    page = render_report(res, sections=["leaderboard"], items=diag)
    assert "Item diagnostics" in page
    assert 'data-plot="items"' in page
    n_neg = int(diag["negative_discrimination"].sum())
    assert f"{n_neg:,} show negative discrimination" in page
    worst = diag[diag["negative_discrimination"]].sort_values("p_value")["question"].iloc[0]
    assert worst in page
    out = write_report(res, tmp_path / "r.html", sections=["leaderboard"], items=diag)
    assert "Item diagnostics" in out.read_text()


def test_without_items_no_section_and_bad_items_refused(fitted):
    res, diag, _ = fitted
    assert "Item diagnostics" not in render_report(res, sections=["leaderboard"])
    with pytest.raises(DataError, match="items= takes the table of mixrank.item_diagnostics"):
        render_report(res, sections=["leaderboard"], items=diag[["question"]])
