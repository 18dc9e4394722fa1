"""The report shows everything it computes, and its verdicts follow the family-wise answer.

* no table hides rows (no scroll box, no row cap) and a print stylesheet keeps every
  row and column;
* the first section lists every warning the fit raised, in words (an
  ``OmittedKeyWarning`` on data with a model x prompt interaction left out);
* the contrast plot labels each pair as the table's row ``model_a - model_b``;
* the planning section states its target gap and whether it is the default;
* an interval bound at 0 (the statistic at the critical value) prints as 0;
* the scores caption names the SE/df method and does not claim one fitted model for
  every row when rows differ;
* the verdict table leads with the family-wise verdict and labels the fixed-n one.
"""

from __future__ import annotations

import re
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.report import html_sections as linear
from mixrank.report import render_report
from mixrank.report.html_format import format_table_html
from tests.design.test_omitted_keys import _data

matplotlib.use("Agg")


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


@pytest.fixture(scope="module")
def fit():
    return _quiet(mixrank.fit, "correct ~ model + (1|subject)", mixrank.load_example())


def _section(page: str, sid: str) -> str:
    m = re.search(rf'<section id="{sid}">(.*?)</section>', page, re.S)
    assert m, sid
    return m.group(1)


def test_tables_are_full_height_and_printable(fit):
    t = format_table_html(pd.DataFrame({"x": np.arange(500), "y": ["a"] * 500}))
    assert t.count("<tr>") == 501 and "Showing the first" not in t
    page = render_report(fit, sections=["leaderboard", "contrasts"])
    assert "max-height" not in page and "34em" not in page
    assert re.search(r"@media print\{[^@]*\.scroll\{overflow:visible\}", page)
    board = _section(page, "leaderboard")
    assert board.count("<tr>") == 1 + len(fit.models)
    con = _section(page, "contrasts")
    assert con.count("<tr>") >= 1 + len(fit.pairs)     # the contrasts table: every pair


def test_first_section_lists_every_warning_in_words():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = mixrank.fit("score ~ model + (1|subject)", _data(0.8, 1))
    names = {w.category.__name__ for w in rec}
    assert "OmittedKeyWarning" in names
    page = _quiet(render_report, res, sections=["leaderboard", "plan"])
    first = re.search(r'<section id="([^"]+)">', page).group(1)
    assert first == "warnings"
    box = _section(page, "warnings")
    for w in rec:
        assert w.category.__name__ in box
        assert str(w.message)[:60].replace("'", "&#x27;").replace('"', "&quot;") in box


def test_no_warning_no_warnings_section(fit):
    page = render_report(fit, sections=["leaderboard"])
    assert 'id="warnings"' not in page


def test_contrast_plot_labels_pairs_as_the_table(fit):
    ctx = dict(pairs=None, level=None)
    ax = linear._plot("contrasts", fit, ctx)
    labels = {t.get_text() for t in ax.get_yticklabels()}
    con = fit.contrasts()
    assert labels == {f"{a} \u2212 {b}" for a, b in zip(con["model_a"], con["model_b"])}
    assert (con["estimate"] < 0).any()        # some rows would have been drawn flipped


def test_planning_states_its_target_gap(fit):
    default = _section(render_report(fit, sections=["plan"]), "plan")
    assert "Target gap: 0.02, the default" in default and "plan_delta=" in default
    given = _section(render_report(fit, sections=["plan"], plan_delta=0.05), "plan")
    assert "Target gap: 0.05, as given" in given


def test_interval_bound_at_zero_prints_as_zero():
    df = pd.DataFrame({"estimate": [-0.118], "ci_lower": [-0.236], "ci_upper": [-2.8e-17],
                       "p_value": [1e-20]})
    t = format_table_html(df)
    cells = re.findall(r"<td>([^<]*)</td>", t)
    assert cells[1:3] == ["-0.236", "0"]
    assert cells[3] == "1e-20"                 # other columns keep their value
    assert "-0.0000" not in t and "e-17" not in t


def test_scores_caption_names_the_method_and_the_adjusted_rows():
    d = mixrank.load_example()
    d = d[~((d.model == "m02") & (d.question == "s01_q01"))]
    res = _quiet(mixrank.fit, "correct ~ model + (1|subject)", d)
    board = _section(_quiet(render_report, res, sections=["leaderboard"]), "leaderboard")
    assert "5 of 6 scores are plain means" in board and "1 are adjusted" in board
    assert "CR2 at &#x27;subject&#x27;, Bell-McCaffrey df" in board
    assert "Each model&#x27;s own scores fitted by" not in board
    mixed = _quiet(mixrank.fit, "correct ~ model + (1|subject)", d, df="satterthwaite")
    board = _section(_quiet(render_report, mixed, sections=["leaderboard"]), "leaderboard")
    assert "rows differ: see note" in board


def test_verdict_table_leads_with_the_family_wise_answer(fit):
    sec = _section(render_report(fit, sections=["resolution"]), "resolution")
    heads = re.findall(r'<th title="([^"]*)">', sec.split('<table class="mx">')[-1])
    assert heads.index("resolved_all") < heads.index("resolved (fixed n)")
    assert heads.index("p_adjusted") < heads.index("resolved (fixed n)")
    assert "resolved" not in heads


def test_resolution_plot_words_and_colour_follow_resolved_all(fit):
    from matplotlib.colors import to_hex

    from mixrank.report.plots_resolution import plot_resolution
    from mixrank.report.style import COLORS

    tab = fit.resolution()
    ax = plot_resolution(tab)
    labs = ax.get_yticklabels()
    assert len(labs) == len(tab)
    for lab, a, b, r in zip(labs, tab["model_a"], tab["model_b"], tab["resolved_all"]):
        assert lab.get_text() == f"{a} vs {b}: {'resolved' if r else 'not resolved'}"
        assert to_hex(lab.get_color()) == (COLORS["significant"] if r else COLORS["text"])
    assert (tab["resolved"] != tab["resolved_all"]).any()   # the fixed-n verdict would differ
    assert "resolved_all" in ax.get_xlabel()


def test_a_column_kept_under_its_former_name_is_shown_once():
    import mixrank
    from mixrank.report.html_format import format_table_html

    res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    sc = res.model_scores()
    assert "design_effect" in sc.attrs["mixrank"]["deprecated_columns"]   # kept one release
    page = format_table_html(sc)
    assert 'title="variance_ratio"' in page and 'title="design_effect"' not in page
