"""The binomial GLMM's HTML report in headless Chromium (same probe and screenshot checks as
tests/report/test_browser.py, whose helpers and negative control are reused): the page loads
without errors and at least five figures decode and are visible."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import mixrank
from tests.report.test_browser import WIDTH, _probe, _run, assert_loads_clean
from tests.report.test_browser import chromium as chromium  # noqa: F401  (fixture)

pytestmark = pytest.mark.browser

PLOTS = {"scores", "contrasts_logit", "contrasts_response", "components", "ranks", "resolution"}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("correct ~ model + (1|subject:question:prompt) + (1|subject:model)",
                          mixrank.load_example(), family="binomial", nagq=0)
    from mixrank.report import write_report

    return write_report(res, tmp_path_factory.mktemp("glmm_report") / "report.html")


@pytest.fixture(scope="module")
def probed(chromium, report, tmp_path_factory):  # noqa: F811
    return _probe(chromium, report, tmp_path_factory.mktemp("glmm_probe"))


def test_glmm_report_loads_and_its_figures_decode(probed):
    info, stderr = probed
    assert_loads_clean(info, stderr)
    plots = {im["plot"]: im for im in info["images"]}
    assert set(plots) == PLOTS and len(plots) >= 5
    for name, im in plots.items():
        assert im["complete"] and im["w"] > 100 and im["h"] > 100, (name, im)
        assert im["cw"] > 100 and im["ch"] > 50, (name, im)


def test_glmm_plots_are_visible_in_a_screenshot(chromium, report, probed, tmp_path):  # noqa: F811
    import matplotlib.image as mpimg

    info, _ = probed
    height = int(min(info["height"] + 50, 16000))
    shot = tmp_path / "shot.png"
    out = _run(chromium, report.as_uri(), tmp_path, f"--window-size={WIDTH},{height}",
               f"--screenshot={shot}")
    assert shot.exists(), out.stderr[-2000:]
    img = mpimg.imread(shot)[..., :3]
    for im in info["images"]:
        x0, y0 = int(im["x"]), int(im["y"])
        box = img[y0:y0 + int(im["ch"]), x0:x0 + int(im["cw"])]
        assert box.size, im
        gray = box.mean(axis=2)
        assert gray.std() > 0.05, f"plot {im['plot']} looks blank in the screenshot"
        assert (gray < 0.9).mean() > 0.01, f"plot {im['plot']} is almost all white"
