"""The HTML report, the shared plot style and the contrasts/components plots.

The report computes nothing itself: every number it shows is checked against
the public API (``FitResult`` accessors) formatted by ``_fmt``; plots are
checked artist by artist against the tables they draw.
"""

from __future__ import annotations

import base64
import io
import re
import sys
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import mixrank  # noqa: E402
from mixrank.errors import DataError  # noqa: E402
from mixrank.report import plot_components, plot_contrasts, render_report, style, write_report  # noqa: E402
from mixrank.report.html import SECTIONS, format_table_html  # noqa: E402
from mixrank.report.html_format import fmt as _fmt  # noqa: E402

FORMULA = "correct ~ model + (1|subject) + (1|prompt)"


@pytest.fixture(scope="module")
def res():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(FORMULA, mixrank.load_example())


@pytest.fixture(scope="module")
def page(res):
    return render_report(res)


def _images(text: str) -> list[tuple[str, np.ndarray]]:
    out = []
    for name, data in re.findall(r'<figure class="plot" data-plot="([^"]+)"><img alt="[^"]*" '
                                 r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text):
        raw = base64.b64decode(data)
        assert raw[:8] == b"\x89PNG\r\n\x1a\n"
        out.append((name, mpimg.imread(io.BytesIO(raw), format="png")))
    return out


def _section(text: str, sid: str) -> str:
    m = re.search(rf'<section id="{sid}">(.*?)</section>', text, re.S)
    assert m, f"section {sid} missing"
    return m.group(1)


# ------------------------------------------------------------------ the page

def test_page_is_self_contained(page):
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page and "<link" not in page and "@import" not in page
    # every src/href is inline data or an in-page anchor
    for attr in re.findall(r'(?:src|href)="([^"]*)"', page):
        assert attr.startswith(("data:image/png;base64,", "#")), attr
    assert "http://" not in page and "https://" not in page


def test_every_section_present_with_all_plots(page):
    for sid in SECTIONS:
        _section(page, sid)
    assert 'class="omitted"' not in page, re.findall(r'<div class="omitted">.*?</div>', page)
    imgs = dict(_images(page))
    assert set(imgs) == {"scores", "components", "contrasts", "ranks", "resolution"}
    for name, img in imgs.items():
        assert img.shape[0] > 100 and img.shape[1] > 200, name
        assert img[..., :3].std() > 0.05, f"plot {name} is blank"


def test_numbers_come_from_the_api(res, page):
    con = _section(page, "contrasts")
    for r in res.contrasts().itertuples():
        for v in (r.estimate, r.std_error, r.ci_lower, r.ci_upper, r.p_value):
            assert f"<td>{_fmt(v)}</td>" in con
    comp = _section(page, "components")
    for r in res.variance_components().itertuples():
        assert f"<td>{_fmt(r.variance)}</td>" in comp
    ranks = _section(page, "ranks")
    tab = res.rank_intervals()
    for r in tab.itertuples():
        assert f'<td class="txt">{r.model}</td><td>{_fmt(r.estimate)}</td><td>{r.rank}</td>' \
               f"<td>{r.rank_lower}</td><td>{r.rank_upper}</td>" in ranks
    reso = _section(page, "resolution")
    for k, v in res.resolution(columns="all").attrs["mixrank"]["unresolved"].items():
        assert f'<td class="txt">{k}</td><td class="txt">{v}</td>' in reso
    plan = _section(page, "plan")
    for v in res.plan(0.02)["std_error"]:
        if np.isfinite(v):
            assert f"<td>{_fmt(v)}</td>" in plan
    design = _section(page, "design")
    assert res.frame.summary_text().split("\n")[0] in design


def test_leaderboard_and_adjustment_from_the_api(res, page):
    lb = _section(page, "leaderboard")
    sc = res.model_scores()
    for r in sc.itertuples():
        for v in (r.estimate, r.std_error, r.ci_lower, r.ci_upper, r.iid_std_error):
            assert f"<td>{_fmt(v)}</td>" in lb
    best = sc.sort_values("estimate", ascending=False)["model"].iloc[0]
    assert lb.index(f'<td class="txt">{best}</td>') < min(
        lb.index(f'<td class="txt">{m}</td>') for m in sc["model"] if m != best)
    con = _section(page, "contrasts")
    assert "p_adjusted: holm across all 15 pairs" in con
    for v in res.contrasts()["p_adjusted"]:
        assert f"<td>{_fmt(v)}</td>" in con


def test_missing_backend_is_a_visible_note(res, monkeypatch):
    def unavailable(*args, **kwargs):
        raise ImportError("No module named 'mixrank.design.plan'", name="mixrank.design.plan")

    monkeypatch.setattr("mixrank.design.plan.plan_of", unavailable)  # backend missing
    text = render_report(res)
    plan = _section(text, "plan")
    assert 'class="omitted"' in plan and "mixrank.design.plan" in plan
    assert 'class="omitted"' not in _section(text, "contrasts")


def test_missing_plot_module_keeps_the_table(res, monkeypatch):
    monkeypatch.setitem(sys.modules, "mixrank.report.plots_ranks", None)
    ranks = _section(render_report(res), "ranks")
    assert "Rank-interval plot omitted" in ranks and "<table" in ranks
    assert "data-plot" not in ranks


def test_backend_error_is_a_visible_note():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        part = mixrank.fit(FORMULA, mixrank.load_example(), pairs=[("m01", "m02"), ("m03", "m04")])
    ranks = _section(render_report(part), "ranks")
    assert 'class="omitted"' in ranks and "not fitted" in ranks


def test_many_pairs_show_adjacent_pairs(res):
    text = render_report(res, max_pairs=3, sections=["contrasts"])
    assert "15 pairs were fitted" in text
    order = res.model_scores().sort_values("estimate", ascending=False)["model"].tolist()
    con = _section(text, "contrasts")
    rows = re.findall(r'<tr><td class="txt">(m\d\d)</td><td class="txt">(m\d\d)</td>', con)
    want = {frozenset(p) for p in zip(order[:3], order[1:4])}
    assert {frozenset(r) for r in rows} == want  # contrasts and design-effect tables


def test_write_report_and_errors(res, tmp_path):
    out = write_report(res, tmp_path / "r.html", title="My <title>", sections=["design"])
    text = out.read_text(encoding="utf-8")
    assert "<title>My &lt;title&gt;</title>" in text and 'id="contrasts"' not in text
    with pytest.raises(DataError, match="folder"):
        write_report(res, tmp_path / "nope" / "r.html")
    with pytest.raises(DataError, match="FitResult"):
        render_report(res.contrasts())
    with pytest.raises(DataError, match="unknown report section"):
        render_report(res, sections=["design", "bogus"])
    with pytest.raises(DataError, match="max_pairs"):
        render_report(res, max_pairs=0)


def test_reliable_change_section(res, tmp_path):
    ex = mixrank.load_example()
    rc = mixrank.reliable_change(ex, before="m01", after="m02", sample="prompt", method="eb")
    classical = mixrank.reliable_change(ex, before="m01", after="m03", sample="prompt", sem="pooled",
                                        by=None)
    text = render_report(res, sections=["design"], reliable_change=[rc, classical])
    assert '<a href="#reliable_change">' in text
    sec = _section(text, "reliable_change")
    assert 'class="omitted"' not in sec
    assert "<h3>m01 \u2192 m02</h3>" in sec and "<h3>m01 \u2192 m03</h3>" in sec
    # the tables are the API's, formatted; the mode is stated
    for r in (rc, classical):
        s = r.summary()
        assert format_table_html(s.change) in sec and format_table_html(s.reliability) in sec
    assert "own exact test" in sec and f"S_diff = {classical.summary().s_diff:.4g}" in sec
    assert "FDR 0.05" in sec
    # scatter for both, per-subject plot only where by= was set; all non-blank
    imgs = _images(sec)
    assert [n for n, _ in imgs] == ["rci", "rci_subjects", "rci"]
    for name, img in imgs:
        assert img[..., :3].std() > 0.05, f"plot {name} is blank"
    # a single result works, write_report passes it on
    out = write_report(res, tmp_path / "rc.html", sections=["design"], reliable_change=rc)
    assert _section(out.read_text(encoding="utf-8"), "reliable_change").count("<h3>") == 1
    with pytest.raises(DataError, match="reliable_change= takes results"):
        render_report(res, reliable_change=[rc, res])
    with pytest.raises(DataError, match="needs results"):
        render_report(res, sections=["design", "reliable_change"])


def test_format_table_html():
    df = pd.DataFrame({"a": ["<x>", "y"], "b": [np.nan, 0.000012345], "c": [True, False],
                       "d": [3, 4], "e": [1234567.8, 0.123456]})
    t = format_table_html(df, caption="cap")
    assert "&lt;x&gt;" in t and "<td>NA</td>" in t and "<td>yes</td>" in t
    assert "<td>1.23e+06</td>" in t and '<p class="meta">cap</p>' in t
    assert t.count("<tr>") == 3  # header + every row
    assert _fmt(0.000012345) == "1.23e-05" and _fmt(0.123456) == "0.1235" and _fmt(2.0) == "2"
    df2 = df.copy()
    format_table_html(df)
    pd.testing.assert_frame_equal(df, df2)


# ------------------------------------------------------------------ plots

def test_plot_contrasts_draws_the_table(res):
    tab = res.contrasts()
    ax = plot_contrasts(res, orient=False)      # the table's own orientation
    labels = [t.get_text() for t in ax.get_yticklabels()]
    order = tab.sort_values("estimate", ascending=False, kind="stable")
    assert labels == [f"{a} \u2212 {b}" for a, b in zip(order.model_a, order.model_b)]  # top first
    segs = ax.collections[0].get_segments()  # hlines: one segment per pair, top row first
    got = sorted((s[0][0], s[1][0]) for s in segs)
    want = sorted(zip(tab.ci_lower, tab.ci_upper))
    np.testing.assert_allclose(got, want)
    colors = ax.collections[0].get_colors()
    sig = matplotlib.colors.to_rgba(style.COLORS["significant"])
    # the colour is the adjusted verdict the caption names, not the marginal CI
    excl = (order.p_adjusted < 1 - order.level).to_numpy()
    assert [tuple(c) == sig for c in colors] == list(excl)
    plt.close("all")


def test_plot_contrasts_options_and_errors(res):
    tab = res.contrasts()
    ax = plot_contrasts(tab, pairs=[("m02", "m01"), ("m03", "m04")], sort=False, title="T")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["m01 \u2212 m02", "m03 \u2212 m04"]
    assert ax.get_title() == "T"
    with pytest.raises(DataError, match="not in the table"):
        plot_contrasts(tab, pairs=[("m01", "zz")])
    with pytest.raises(DataError, match="lacks columns"):
        plot_contrasts(tab.drop(columns="ci_lower"))
    with pytest.raises(DataError, match="empty"):
        plot_contrasts(tab.iloc[:0])
    with pytest.raises(DataError, match="FitResult"):
        plot_contrasts([1, 2])
    plt.close("all")


@pytest.mark.parametrize("value", ["variance", "share"])
def test_plot_components_stacks_the_components(res, value):
    vc = res.variance_components()
    ax = plot_components(vc, value=value)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["subject", "prompt", "residual"]
    widths = np.array([p.get_width() for p in ax.patches]).reshape(3, -1)  # group x pair
    totals = vc.groupby(["model_a", "model_b"], sort=False)[value].sum().to_numpy()
    np.testing.assert_allclose(widths.sum(axis=0), totals)
    if value == "share":
        np.testing.assert_allclose(widths.sum(axis=0), 1.0)
    assert ax.patches[-1].get_facecolor()[:3] == matplotlib.colors.to_rgb(style.RESIDUAL_COLOR)
    plt.close("all")


def test_plot_components_errors(res):
    with pytest.raises(DataError, match="value="):
        plot_components(res, value="sd")
    with pytest.raises(DataError, match="lacks columns"):
        plot_components(res.variance_components().drop(columns="group"))
    ax = plot_components(res, pairs=[("m01", "m02")])
    assert len(ax.get_yticklabels()) == 1
    plt.close("all")


def test_style_is_valid_matplotlib():
    with style.style_context():
        assert matplotlib.rcParams["font.size"] == style.FONT_SIZE
    ax = style.new_axes(10, pyplot=False)
    h = ax.figure.get_size_inches()[1]
    assert h == pytest.approx(style.BASE_HEIGHT + 10 * style.ROW_HEIGHT)
    assert style.component_color("residual", ["a", "residual"]) == style.RESIDUAL_COLOR
    assert style.component_color("b", ["a", "b"]) == style.COMPONENT_COLORS[1]
