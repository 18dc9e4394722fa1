"""Resolution plots: mixrank.report.plots_resolution (draw only, numbers from design/)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from mixrank.design.power import power  # noqa: E402
from mixrank.design.resolution import resolution_table  # noqa: E402
from mixrank.errors import DataError, DesignError  # noqa: E402
from mixrank.report.plots_resolution import plot_power_curve, plot_resolution  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _verdicts():
    t = pd.DataFrame({"model_a": ["a", "b", "c"], "model_b": ["b", "c", "d"],
                      "estimate": [0.04, 0.0, 0.01], "n": [2000, 2000, 2000],
                      "sigma_d": [0.45, 0.4, 0.5], "variance_ratio": [3.0, 1.0, 1.5]})
    return resolution_table(t)


def test_plot_resolution_draws_q_per_paradigm_on_log_scale():
    tab = _verdicts()
    before = tab.copy()
    ax = plot_resolution(tab, title="t")
    assert ax.get_xscale() == "log" and ax.get_title() == "t"
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert [x.split(":")[0] for x in labels] == ["a vs b", "b vs c", "c vs d"]
    if "resolved_all" in tab.columns:       # each label ends with the family-wise verdict
        assert all(x.endswith(": resolved" if r else ": not resolved")
                   for x, r in zip(labels, tab["resolved_all"]))
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["fixed n", "multiplicity", "anytime-valid", "clustered", "q = 1"]
    # the q = 1 reference line
    vlines = [ln for ln in ax.get_lines() if list(ln.get_xdata()) == [1.0, 1.0]]
    assert len(vlines) == 1
    # finite positive q drawn at their values; q = 0 (zero estimate) at the left edge
    fixed = [ln for ln in ax.get_lines() if ln.get_label() == "fixed n"][0]
    expect = tab["q"].to_numpy()[tab["q"].to_numpy() > 0]
    np.testing.assert_allclose(sorted(fixed.get_xdata()), sorted(expect))
    lo, hi = ax.get_xlim()
    assert lo < min(expect) and hi > 1
    pd.testing.assert_frame_equal(tab, before)                # input not modified


def test_plot_resolution_subset_of_paradigms_and_given_axes():
    t = _verdicts()[["model_a", "model_b", "q", "q_cluster"]]
    fig, ax = plt.subplots()
    out = plot_resolution(t, ax=ax)
    assert out is ax
    legend = [x.get_text() for x in ax.get_legend().get_texts()]
    assert legend == ["fixed n", "clustered", "q = 1"]


def test_plot_resolution_errors():
    with pytest.raises(DataError, match="DataFrame"):
        plot_resolution([1, 2])
    with pytest.raises(DataError, match=r"lacks columns \['q'\]"):
        plot_resolution(pd.DataFrame({"model_a": ["a"], "model_b": ["b"]}))
    with pytest.raises(DataError, match="empty"):
        plot_resolution(_verdicts().iloc[:0])


def test_plot_power_curve_matches_power_function():
    ax = plot_power_curve([0.02, 0.05], sigma_d=0.5, n_observed=2000, title="p")
    curves = [ln for ln in ax.get_lines() if ln.get_label().startswith("delta")]
    assert [c.get_label() for c in curves] == ["delta = 0.02", "delta = 0.05"]
    for c, d in zip(curves, (0.02, 0.05)):
        n = np.asarray(c.get_xdata())
        np.testing.assert_allclose(c.get_ydata(), power(d, n, sigma_d=0.5), rtol=1e-12)
    # the default range covers the target power for every effect
    assert all(max(c.get_ydata()) > 0.8 > min(c.get_ydata()) for c in curves)
    assert ax.get_xscale() == "log"
    ax2 = plot_power_curve(0.03, sigma_d=0.4, n=[100, 1000, 10000], power=None)
    assert list(ax2.get_lines()[0].get_xdata()) == [100, 1000, 10000]


@pytest.mark.parametrize("kwargs, match", [
    (dict(delta=0.0, sigma_d=0.5), "non-zero"),
    (dict(delta=0.02, sigma_d=0.0), r"sigma_d must be > 0"),
    (dict(delta=0.02, sigma_d=0.5, alpha=2.0), r"alpha.*\(0, 1\)"),
    (dict(delta=0.02, sigma_d=0.5, n=[10, -5]), "n must be"),
    (dict(delta="big", sigma_d=0.5), "delta must be a number"),
    (dict(delta=0.02, sigma_d=0.5, n_observed=0), "n_observed"),
])
def test_plot_power_curve_errors(kwargs, match):
    with pytest.raises(DesignError, match=match):
        plot_power_curve(**kwargs)
