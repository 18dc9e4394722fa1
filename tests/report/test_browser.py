"""The HTML report in a real browser: Debian's headless Chromium.

How it works (two Chromium runs per report, no browser driver needed):

1. *Probe run* (``--dump-dom``).  A copy of the report gets a small script
   injected as the first element of ``<head>``: it records uncaught errors and
   failed resource loads (a capturing ``error`` listener on ``window``) and
   every ``console.error`` call, and on the ``load`` event writes a JSON
   summary into a ``<pre id="mixrank-probe">`` element: per ``<img>`` its
   ``complete`` flag, ``naturalWidth``/``naturalHeight``, the page box and
   the ``data-plot`` name of its figure; the resources fetched
   (``performance.getEntriesByType("resource")``) and the page height.
   ``--dump-dom`` prints the DOM after the load event, so the JSON is read
   back from stdout.  Chromium also runs with ``--enable-logging=stderr
   --v=0``, which logs every console message as ``CONSOLE``; the report has
   no scripts, so any such line is a failure.
2. *Screenshot run* of the unmodified report with a window as tall as the
   page (``--window-size=1200,<height>``, device scale 1), read back with
   matplotlib; each plot's box (from the probe) must contain a non-blank
   image: pixel standard deviation above 0.05 and at least 1% non-white
   pixels.

A negative control (a page with a broken image and a script error) checks
that the probe does detect problems, so that the tests can fail.  The tests
skip when Chromium is absent, unless ``MIXRANK_REQUIRE_BROWSER=1`` (then
they fail).  CI needs the Debian package ``chromium`` (its dependencies
bring the fonts).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import mixrank

pytestmark = pytest.mark.browser

_PROBE = """<script>
window.__mx={errors:[],consoleErrors:[]};
window.addEventListener('error',function(e){var t=e.target;
 window.__mx.errors.push(String(e.message||(t&&(t.src||t.href))||'error').slice(0,200));},true);
(function(){var ce=console.error;console.error=function(){
 window.__mx.consoleErrors.push(Array.prototype.join.call(arguments,' '));ce.apply(console,arguments);};})();
window.addEventListener('load',function(){
 var imgs=Array.prototype.map.call(document.images,function(im){var r=im.getBoundingClientRect();
  var f=im.closest('figure');return {plot:f?f.getAttribute('data-plot'):null,complete:im.complete,
  w:im.naturalWidth,h:im.naturalHeight,x:r.left+window.scrollX,y:r.top+window.scrollY,
  cw:r.width,ch:r.height};});
 var pre=document.createElement('pre');pre.id='mixrank-probe';
 pre.textContent=JSON.stringify({images:imgs,errors:window.__mx.errors,
  consoleErrors:window.__mx.consoleErrors,
  resources:performance.getEntriesByType('resource').map(function(e){return e.name;}),
  height:document.documentElement.scrollHeight});
 document.body.appendChild(pre);});
</script>"""

WIDTH = 1200


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None


@pytest.fixture(scope="module")
def chromium():
    path = _chromium()
    if path is None:
        msg = "headless Chromium not found (Debian package 'chromium')"
        if os.environ.get("MIXRANK_REQUIRE_BROWSER") == "1":
            pytest.fail(msg + " and MIXRANK_REQUIRE_BROWSER=1")
        pytest.skip(msg)
    return path


def _run(chromium: str, url: str, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--hide-scrollbars", "--force-device-scale-factor=1",
            f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr", "--v=0", *extra, url]
    return subprocess.run(args, capture_output=True, text=True, timeout=180, cwd=tmp)


def _probe(chromium: str, page: Path, tmp: Path) -> tuple[dict, str]:
    text = page.read_text(encoding="utf-8")
    probed = tmp / f"probe_{page.name}"
    probed.write_text(text.replace("<head>", "<head>" + _PROBE, 1), encoding="utf-8")
    out = _run(chromium, probed.as_uri(), tmp, f"--window-size={WIDTH},1000", "--dump-dom")
    m = re.search(r'<pre id="mixrank-probe">(.*?)</pre>', out.stdout, re.S)
    assert m, f"probe output missing; chromium exit {out.returncode}, stderr tail:\n{out.stderr[-2000:]}"
    raw = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
    return json.loads(raw.replace("&amp;", "&")), out.stderr


def _console_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "CONSOLE" in ln]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("correct ~ model + (1|subject) + (1|prompt)", mixrank.load_example())
        rc = mixrank.reliable_change(mixrank.load_example(), before="m01", after="m02", sample="prompt")
    from mixrank.report import write_report

    return write_report(res, tmp_path_factory.mktemp("report") / "report.html", reliable_change=rc)


@pytest.fixture(scope="module")
def probed(chromium, report, tmp_path_factory):
    return _probe(chromium, report, tmp_path_factory.mktemp("probe"))


def assert_loads_clean(info: dict, stderr: str) -> None:
    """No page or console error, nothing on Chromium's console, every resource inline."""
    assert info["errors"] == [] and info["consoleErrors"] == []
    assert _console_lines(stderr) == []
    assert all(r.startswith("data:") for r in info["resources"]), info["resources"]


def test_report_loads_without_errors(probed):
    assert_loads_clean(*probed)


def test_every_plot_image_decodes(probed):
    info, _ = probed
    plots = {im["plot"]: im for im in info["images"]}
    assert set(plots) == {"scores", "components", "contrasts", "ranks", "resolution", "rci",
                           "rci_subjects"}
    for name, im in plots.items():
        assert im["complete"] and im["w"] > 100 and im["h"] > 100, (name, im)
        assert im["cw"] > 100 and im["ch"] > 50, (name, im)


def test_plots_are_visible_in_a_screenshot(chromium, report, probed, tmp_path):
    import matplotlib.image as mpimg

    info, _ = probed
    height = int(min(info["height"] + 50, 16000))
    shot = tmp_path / "shot.png"
    out = _run(chromium, report.as_uri(), tmp_path, f"--window-size={WIDTH},{height}",
               f"--screenshot={shot}")
    assert shot.exists(), out.stderr[-2000:]
    assert _console_lines(out.stderr) == []
    img = mpimg.imread(shot)[..., :3]
    assert img.shape[1] == WIDTH and img.shape[0] >= info["height"] - 5
    for im in info["images"]:
        x0, y0 = int(im["x"]), int(im["y"])
        box = img[y0:y0 + int(im["ch"]), x0:x0 + int(im["cw"])]
        assert box.size, im
        gray = box.mean(axis=2)
        assert gray.std() > 0.05, f"plot {im['plot']} looks blank in the screenshot"
        assert (gray < 0.9).mean() > 0.01, f"plot {im['plot']} is almost all white"
    # outside the plots, the page background is white
    assert np.allclose(img[2:10, 2:10], 1.0, atol=0.02)


def test_probe_detects_a_broken_page(chromium, tmp_path):
    """Negative control: a broken image and a script error are caught."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
                   '<figure class="plot" data-plot="x"><img src="data:image/png;base64,AAAA">'
                   '</figure><script>console.error("boom"); missingFunction();</script>'
                   "</body></html>", encoding="utf-8")
    info, stderr = _probe(chromium, bad, tmp_path)
    assert info["images"][0]["w"] == 0
    assert info["consoleErrors"] == ["boom"]
    assert any("missingFunction" in e for e in info["errors"])
    assert len(_console_lines(stderr)) >= 1
