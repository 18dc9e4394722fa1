"""The report of a judge-corrected fit: a Judge section, corrected tables, nothing omitted."""

from __future__ import annotations

import re

import pytest

import mixrank
from mixrank.report.html import render_report
from tests.judge.simdata import simulate

pytest.importorskip("matplotlib")


def test_report_has_judge_section_and_corrected_tables():
    df, _ = simulate(1, models=3, subjects=12, questions=10, frac=0.3)
    res = mixrank.fit("score ~ model + (1|subject)", df, gold="human")
    page = render_report(res, plan_delta=0.3)
    ids = re.findall(r'<section id="(\w+)"', page)
    assert ids[:3] == ["design", "leaderboard", "judge"] and "components" not in ids
    assert 'class="omitted"' not in page
    assert 'data-plot="judge"' in page
    judge = page[page.index('<section id="judge"'):page.index('<section id="contrasts"')]
    test = res.judge().attrs["mixrank"]["differential_bias"]
    assert f"over {test['units']} units" in judge and "Differential bias" in judge
    # the plan section is the label budget
    plan = page[page.index('<section id="plan"'):]
    assert "n_labels_star" in plan
    res_tab = page[page.index('<section id="resolution"'):page.index('<section id="plan"')]
    assert "n_labels_star" in res_tab
