"""Reliable-change plots (mixrank.report.plots_rci): draw the table's numbers, compute none.

Exact checks use small hand-made tables whose expected markers, areas, bars and
legend counts are written out by hand; one smoke test runs on the llm_stability
re-runs of gpt-4o (samples 0-1 against 2-3, as in tests/change/test_rci.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

import mixrank  # noqa: E402
from mixrank.errors import DataError, DesignError  # noqa: E402
from mixrank.report import (  # noqa: E402
    plot_rank_intervals,
    plot_rci,
    plot_rci_subjects,
    plot_resolution,
    style,
)
from mixrank.report.plots_rci import CLASS_COLORS, MAX_MARKER_AREA  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


# --------------------------------------------------------------------------- hand-made items
#: (p_before, p_after, class, number of items at that point); 13 items, K = 4 grid.
POINTS = [
    (0.25, 0.75, "improved", 2),
    (0.50, 1.00, "improved", 1),
    (0.75, 0.25, "deteriorated", 1),
    (0.50, 0.50, "no_change", 3),
    (0.50, 0.75, "no_change", 1),
    (1.00, 1.00, "floor_ceiling", 4),
    (0.00, 0.00, "floor_ceiling", 1),
]
LEGEND = ["improved (3)", "deteriorated (1)", "no reliable change (4)", "floor/ceiling in both (5)"]


def _items(shuffle: bool = True) -> pd.DataFrame:
    rows = [{"subject": "s", "question": f"q{i}_{j}", "p_before": pb, "p_after": pa, "class": c}
            for i, (pb, pa, c, n) in enumerate(POINTS) for j in range(n)]
    t = pd.DataFrame(rows)
    t["delta"] = t["p_after"] - t["p_before"]
    if shuffle:
        t = t.sample(frac=1.0, random_state=3).reset_index(drop=True)
    t.attrs["mixrank"] = {"before": "v1", "after": "v2", "s_diff": 0.2, "threshold": 2.0, "sem": "pooled"}
    return t


def _markers(ax) -> dict[str, dict[tuple[float, float], float]]:
    """Per class (by colour), marker position -> marker area, for every scatter collection."""
    by_color = {mcolors.to_hex(c): k for k, c in CLASS_COLORS.items()}
    out: dict[str, dict[tuple[float, float], float]] = {}
    for coll in ax.collections:
        k = by_color[mcolors.to_hex(coll.get_facecolors()[0][:3])]
        offs, sizes = coll.get_offsets(), coll.get_sizes()
        assert k not in out and len(offs) == len(sizes)
        out[k] = {(float(x), float(y)): float(s) for (x, y), s in zip(offs, sizes)}
    return out


def test_plot_rci_markers_are_the_aggregated_items():
    t = _items()
    before = t.copy()
    ax = plot_rci(t, title="hand")
    unit = MAX_MARKER_AREA / 4                       # largest point: 4 items at (1, 1)
    expect: dict[str, dict] = {}
    for pb, pa, c, n in POINTS:
        expect.setdefault(c, {})[(pb, pa)] = unit * n
    got = _markers(ax)
    assert got.keys() == expect.keys()
    for k in expect:
        assert got[k].keys() == expect[k].keys()
        np.testing.assert_allclose([got[k][p] for p in expect[k]], list(expect[k].values()), rtol=1e-12)
    # areas in units of one item add up to the item count, class by class and overall
    assert sum(sum(v.values()) for v in got.values()) / unit == pytest.approx(len(t))
    assert sum(got["no_change"].values()) / unit == pytest.approx(4)
    assert ax.get_title() == "hand"
    pd.testing.assert_frame_equal(t, before)         # input not modified


def test_plot_rci_legend_counts_and_reference_lines():
    ax = plot_rci(_items())
    assert [x.get_text() for x in ax.get_legend().get_texts()] == LEGEND
    lines = {(tuple(ln.get_xdata()), tuple(ln.get_ydata())) for ln in ax.get_lines()}
    assert ((0.0, 1.0), (0.0, 1.0)) in lines                          # no-change diagonal
    w = 0.2 * 2.0                                                     # S_diff * threshold
    assert ((0.0, 1.0), (w, 1.0 + w)) in lines and ((0.0, 1.0), (-w, 1.0 - w)) in lines
    assert "v1" in ax.get_xlabel() and "v2" in ax.get_ylabel()
    # without metadata: only the diagonal; a class absent from the table still has a legend entry
    t = _items()
    t = t[t["class"] != "deteriorated"]
    t.attrs = {}
    fig, ax2 = plt.subplots()
    assert plot_rci(t, ax=ax2) is ax2
    assert len(ax2.get_lines()) == 1
    assert [x.get_text() for x in ax2.get_legend().get_texts()][1] == "deteriorated (0)"
    assert "deteriorated" not in _markers(ax2)
    # sem="item": per-item cut-offs, so no S_diff band
    t = _items()
    t.attrs["mixrank"]["sem"] = "item"
    fig, ax3 = plt.subplots()
    assert len(plot_rci(t, ax=ax3).get_lines()) == 1


@pytest.mark.parametrize("table, match", [
    (pd.DataFrame({"p_before": [0.5]}), r"lacks columns \['p_after', 'class'\]"),
    (pd.DataFrame({"p_before": [0.5], "p_after": [0.5], "cls": ["no_change"]}), r"\['class'\]"),
    (pd.DataFrame(columns=["p_before", "p_after", "class"]), "empty"),
    (pd.DataFrame({"p_before": [0.5], "p_after": [1.5], "class": ["improved"]}), r"outside \[0, 1\]"),
    (pd.DataFrame({"p_before": [0.5], "p_after": [np.nan], "class": ["improved"]}), "missing"),
    (pd.DataFrame({"p_before": [0.5], "p_after": [1.0], "class": ["better"]}), "unknown classes"),
    ([1, 2, 3], "ReliableChange"),
])
def test_plot_rci_bad_input(table, match):
    with pytest.raises(DataError, match=match):
        plot_rci(table)


def test_plot_rci_method_eb_needs_eb_class():
    with pytest.raises(DataError, match=r"lacks columns \['eb_class'\]"):
        plot_rci(_items(), method="eb")
    with pytest.raises(DataError, match="method='bayes'"):
        plot_rci(_items(), method="bayes")


# --------------------------------------------------------------------------- hand-made subjects
def _subjects() -> pd.DataFrame:
    t = pd.DataFrame({
        "subject": ["a", "b", "c", "d", "a", "b"],
        "method": ["rci"] * 4 + ["eb"] * 2,
        "n": [10, 10, 5, 3, 10, 10],
        "churn": [0.7, 0.4, 0.0, np.nan, 0.1, 0.0],
        "net_change": [0.5, -0.2, 0.0, np.nan, 0.1, 0.0],
        "reversal": [False, True, False, False, False, False],
    })
    t.attrs["mixrank"] = {"by": "subject", "before": "v1", "after": "v2"}
    return t


def _rows(ax) -> list[tuple[str, float, float, float, str]]:
    """(label, churn left, churn right, net width, net colour), top row first."""
    labels = [x.get_text() for x in ax.get_yticklabels()]
    ticks = list(ax.get_yticks())
    churn, net = ax.containers[0], ax.containers[1]
    rows = []
    for lab, y, pc, pn in zip(labels, ticks, churn.patches, net.patches, strict=True):
        assert pc.get_y() + pc.get_height() / 2 == pytest.approx(y) == pn.get_y() + pn.get_height() / 2
        assert pn.get_x() == 0.0
        rows.append((y, lab, pc.get_x(), pc.get_x() + pc.get_width(), pn.get_width(),
                     mcolors.to_hex(pn.get_facecolor()[:3])))
    return [r[1:] for r in sorted(rows, reverse=True)]


def test_plot_rci_subjects_bars_are_the_table_values():
    t = _subjects()
    before = t.copy()
    ax = plot_rci_subjects(t, title="subjects")
    prim, acc = style.COLORS["primary"].lower(), style.COLORS["accent"].lower()
    # hand-worked: a improves 60% and deteriorates 10% of its analysable items, b 10% and 30%
    expect = [("a", -0.1, 0.6, 0.5, prim), ("c", 0.0, 0.0, 0.0, prim), ("b", -0.3, 0.1, -0.2, acc),
              ("d (none analysable)", 0.0, 0.0, 0.0, prim)]
    got = _rows(ax)
    assert [r[0] for r in got] == [e[0] for e in expect]
    for g, e in zip(got, expect):
        np.testing.assert_allclose(g[1:4], e[1:4], atol=1e-12)
        assert g[4] == e[4]
    bold = {x.get_text(): x.get_fontweight() for x in ax.get_yticklabels()}
    assert bold["b"] == "bold" and bold["a"] != "bold"
    assert ax.get_title() == "subjects" and "v1" in ax.get_xlabel()
    pd.testing.assert_frame_equal(t, before)


def test_plot_rci_subjects_method_and_grouping_column():
    fig, ax = plt.subplots()
    assert plot_rci_subjects(_subjects(), ax=ax, method="eb") is ax
    got = _rows(ax)
    assert [r[0] for r in got] == ["a", "b"]
    np.testing.assert_allclose([r[3] for r in got], [0.1, 0.0])
    t = _subjects().query("method == 'rci'").drop(columns="method").rename(columns={"subject": "domain"})
    t.attrs["mixrank"] = {"by": "domain"}
    assert [r[0] for r in _rows(plot_rci_subjects(t))][0] == "a"


@pytest.mark.parametrize("table, kwargs, match", [
    (pd.DataFrame({"subject": ["a"], "churn": [0.1]}), {}, r"lacks columns \['net_change', 'reversal'\]"),
    (pd.DataFrame({"domain": ["a"], "churn": [0.1], "net_change": [0.1], "reversal": [False]}), {},
     r"lacks columns \['subject'\]"),
    (_subjects().iloc[:0], {}, "empty"),
    (_subjects(), {"method": "bayes"}, "method='bayes'"),
    (_subjects().query("method == 'rci'"), {"method": "eb"}, r"no rows with method == 'eb'.*\['rci'\]"),
    (_subjects().drop(columns="method"), {}, "repeat"),
    ("table", {}, "ReliableChange"),
])
def test_plot_rci_subjects_bad_input(table, kwargs, match):
    with pytest.raises(DataError, match=match):
        plot_rci_subjects(table, **kwargs)


def test_results_are_accepted_and_by_none_is_reported():
    ex = mixrank.load_example()
    res = mixrank.reliable_change(ex, before="m01", after="m02", sample="prompt")
    it = res.items()
    counts = it["class"].value_counts()
    ax = plot_rci(res)
    assert [x.get_text() for x in ax.get_legend().get_texts()] == [
        f"{lab} ({int(counts.get(k, 0))})" for k, lab in
        zip(("improved", "deteriorated", "no_change", "floor_ceiling"), ("improved", "deteriorated",
            "no reliable change", "floor/ceiling in both"))]
    assert len(_rows(plot_rci_subjects(res))) == it["subject"].nunique()
    res_none = mixrank.reliable_change(ex, before="m01", after="m02", sample="prompt", by=None)
    with pytest.raises(DesignError, match="by=None"):
        plot_rci_subjects(res_none)


# --------------------------------------------------------------------------- real data
def test_llm_stability_smoke(shared_data):
    d = shared_data("llm_stability")
    # the classical RCI, so that the scatter has all four classes (the per-item default calls none at K = 2)
    res = mixrank.reliable_change(d, before={"sample": [0, 1]}, after={"sample": [2, 3]}, method="eb",
                                  sem="pooled")
    it = res.items()
    for method, col in (("rci", "class"), ("eb", "eb_class")):
        ax = plot_rci(res, method=method, title=method)
        got = _markers(ax)
        unit = MAX_MARKER_AREA / it.groupby([col, "p_before", "p_after"]).size().max()
        assert sum(sum(v.values()) for v in got.values()) / unit == pytest.approx(len(it))
        for k, pts in got.items():
            sub = it[it[col] == k]
            assert set(pts) == set(zip(sub["p_before"].astype(float), sub["p_after"].astype(float)))
            assert sum(pts.values()) / unit == pytest.approx(len(sub))
        counts = it[col].value_counts()
        legend = [x.get_text() for x in ax.get_legend().get_texts()]
        assert [int(s.rsplit("(", 1)[1].rstrip(")")) for s in legend] == [
            int(counts.get(k, 0)) for k in ("improved", "deteriorated", "no_change", "floor_ceiling")]
    bs = res.by_subject().query("method == 'rci'").set_index("subject")
    rows = _rows(plot_rci_subjects(res))
    assert {r[0] for r in rows} == set(bs.index) and len(rows) == 7
    for lab, left, right, net, color in rows:
        assert right - left == pytest.approx(bs.loc[lab, "churn"])
        assert net == pytest.approx(bs.loc[lab, "net_change"])
        assert (color == style.COLORS["accent"].lower()) == bool(bs.loc[lab, "reversal"])
    assert [r[3] for r in rows] == sorted(bs["net_change"], reverse=True)


# --------------------------------------------------------------------------- shared look
def test_rank_and_resolution_plots_use_the_shared_look():
    ex = mixrank.load_example()
    fit = mixrank.fit("correct ~ model + (1|subject)", ex)
    tab = fit.rank_intervals()
    ax = plot_rank_intervals(tab)
    assert mcolors.to_hex(ax.collections[0].get_colors()[0][:3]) == style.COLORS["primary"].lower()
    assert mcolors.to_hex(ax.lines[0].get_color()) == style.COLORS["accent"].lower()
    h = ax.figure.get_size_inches()[1]
    assert h == pytest.approx(min(style.MAX_HEIGHT, style.BASE_HEIGHT + style.ROW_HEIGHT * len(tab)))
    ax = plot_resolution(fit.resolution(columns="all"))
    fixed = [ln for ln in ax.get_lines() if ln.get_label() == "fixed n"][0]
    assert mcolors.to_hex(fixed.get_color()) == style.COMPONENT_COLORS[0].lower()
    assert not ax.spines["top"].get_visible()
