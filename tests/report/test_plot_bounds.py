"""Plots never clip: every public ``plot_*`` helper, drawn with a 40-character
model name on a figure it makes itself, keeps every text inside the figure.

The check renders the figure (Agg) and compares each visible text's window extent
(tick labels only for ticks inside the view limits: the others are not drawn) with the
figure's bounding box.  The list of helpers is every ``def plot_`` of the package, so a new
helper without a case here fails ``test_every_public_helper_is_checked``.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.report import (
    plot_components,
    plot_contrasts,
    plot_power_curve,
    plot_rank_intervals,
    plot_rci,
    plot_rci_subjects,
    plot_resolution,
)
from mixrank.report.html_items import plot_item_diagnostics
from mixrank.report.plots_arena import plot_arena_boards
from mixrank.report.plots_gaps import plot_gaps_by, plot_ranks_by
from mixrank.report.plots_glmm import plot_glmm_components
from mixrank.report.plots_judge import plot_judge_scores
from mixrank.report.plots_scores import plot_model_scores
from mixrank.report.plots_sensitivity import plot_sensitivity
from tests.report.test_plots_rci import _items

matplotlib.use("Agg")

LONG = "anthropic-claude-3.5-sonnet-react-agent-v2"[:40]
assert len(LONG) == 40
ROOT = Path(__file__).resolve().parents[2] / "mixrank"


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


@pytest.fixture(scope="module")
def fit():
    d = mixrank.load_example()
    d["model"] = d["model"].replace({"m01": LONG, "m04": LONG[::-1]})
    return _quiet(mixrank.fit, "correct ~ model + (1|subject)", d)


@pytest.fixture(scope="module")
def by_fit():
    rng = np.random.default_rng(5)
    rows = []
    for m in (LONG, "b", "c"):
        for s in range(6):
            u = rng.normal(0, 0.5)
            for q in range(6):
                rows.append(dict(model=m, subject=f"s{s}", question=f"s{s}q{q}",
                                 difficulty=("easy", "hard", "mid")[q % 3],
                                 correct=float(u + rng.normal() + (m == "b"))))
    return _quiet(mixrank.fit, "correct ~ model * difficulty + (1|subject)", pd.DataFrame(rows))


def _scores_like(models):
    n = len(models)
    est = np.linspace(0.4, 0.7, n)
    return pd.DataFrame({"model": models, "estimate": est, "ci_lower": est - 0.05,
                         "ci_upper": est + 0.05, "judge_estimate": est - 0.02,
                         "level": 0.95})


CASES = {
    "plot_contrasts": lambda fit, by: plot_contrasts(fit.contrasts()),
    "plot_contrasts (table order)": lambda fit, by: plot_contrasts(fit.contrasts(), orient=False),
    "plot_components": lambda fit, by: plot_components(fit),
    "plot_model_scores": lambda fit, by: plot_model_scores(fit.model_scores(),
                                                           contrasts=fit.contrasts()),
    "plot_rank_intervals": lambda fit, by: plot_rank_intervals(fit.rank_intervals()),
    "plot_resolution": lambda fit, by: plot_resolution(fit.resolution()),
    "plot_power_curve": lambda fit, by: plot_power_curve([0.02, 0.05], sigma_d=0.4,
                                                         n_observed=960, title=LONG),
    "plot_sensitivity": lambda fit, by: plot_sensitivity(fit.sensitivity(
        "loso", summary=True, rng=0, pairs=[(LONG, "m02"), (LONG[::-1], "m02")])),
    "plot_rci": lambda fit, by: plot_rci(_items(), title=f"{LONG} \u2192 {LONG[::-1]}"),
    "plot_rci_subjects": lambda fit, by: plot_rci_subjects(_subjects()),
    "plot_gaps_by": lambda fit, by: plot_gaps_by(by.contrasts(by="difficulty"), "difficulty"),
    "plot_ranks_by": lambda fit, by: plot_ranks_by(by.rank_intervals(by="difficulty"),
                                                   "difficulty"),
    "plot_judge_scores": lambda fit, by: plot_judge_scores(_scores_like([LONG, "b", "c"])),
    "plot_glmm_components": lambda fit, by: plot_glmm_components(pd.DataFrame(
        {"group": [LONG, "residual"], "variance": [0.5, 1.0], "std_dev": [0.71, 1.0]})),
    "plot_arena_boards": lambda fit, by: plot_arena_boards(pd.DataFrame(
        {"model": [LONG, "b"], "human_only": [1010.0, 990.0],
         "human_only_lower": [990.0, 970.0], "human_only_upper": [1030.0, 1010.0],
         "corrected": [1012.0, 988.0], "corrected_lower": [1000.0, 976.0],
         "corrected_upper": [1024.0, 1000.0]})),
    "plot_item_diagnostics": lambda fit, by: plot_item_diagnostics(pd.DataFrame(
        {"difficulty": [-1.0, 0.0, 1.0], "discrimination": [0.5, -0.2, 1.0],
         "negative_discrimination": [False, True, False]})),
}


def _subjects() -> pd.DataFrame:
    t = pd.DataFrame({"subject": [LONG, "b", "c"], "method": ["rci"] * 3, "n": [10, 10, 5],
                      "churn": [0.7, 0.4, 0.1], "net_change": [0.5, -0.2, 0.0],
                      "reversal": [False, True, False]})
    t.attrs["mixrank"] = {"by": "subject", "before": "v1", "after": "v2"}
    return t


def _outside(fig) -> list[str]:
    """The texts whose rendered box leaves the figure (more than half a pixel)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    hidden = set()
    for a in fig.axes:
        for axis in (a.xaxis, a.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            tol = 1e-9 * (hi - lo + 1)
            for t in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - tol <= t.get_loc() <= hi + tol:
                    hidden.update({id(t.label1), id(t.label2)})
    W, H = fig.bbox.width, fig.bbox.height
    out = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip() or id(t) in hidden:
            continue
        b = t.get_window_extent(r)
        if b.x0 < -0.5 or b.y0 < -0.5 or b.x1 > W + 0.5 or b.y1 > H + 0.5:
            out.append(f"{t.get_text()!r} at {b.bounds} in {W:.0f}x{H:.0f}")
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_no_text_leaves_the_figure(name, fit, by_fit):
    ax = _quiet(CASES[name], fit, by_fit)
    fig = ax.figure
    texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    assert any(LONG in s or LONG[::-1] in s for s in texts) or name in (
        "plot_item_diagnostics",), texts        # the long name is drawn
    assert _outside(fig) == []
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_the_check_catches_a_clipped_label():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))     # no layout: the long tick label sticks out
    ax.set_yticks([0])
    ax.set_yticklabels([LONG + " \u2212 " + LONG])
    assert _outside(fig)
    plt.close(fig)


def test_every_public_helper_is_checked():
    names = set()
    for p in ROOT.rglob("*.py"):
        names.update(re.findall(r"^def (plot_\w+)\(", p.read_text(encoding="utf-8"), re.M))
    assert names == {k.split(" ")[0] for k in CASES}
