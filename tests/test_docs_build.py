"""The documentation site builds with warnings as errors and covers everything public:
an API page for every name in ``mixrank.__all__`` (result classes with
every accessor), a gallery page with at least one figure for every vignette, a CLI
page for every subcommand, and every ``docs/*.md`` page in a toctree.

The build is ``python -m sphinx -W --keep-going -b html docs <out>`` (the command in the
README and CONTRIBUTING); it executes every vignette, so it is marked ``slow`` (it runs
once in CI, in the README's test command, which installs the ``docs`` extra).
"""

from __future__ import annotations

import argparse
import html as html_module
import importlib.util
import inspect
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import mixrank

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NEEDS = ("sphinx", "numpydoc", "sphinx_gallery", "myst_parser")


def _require_docs_tools() -> None:
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing and os.environ.get("CI"):
        pytest.fail(f"the docs extra is not installed ({missing}); pip install -e '.[docs]'")
    if missing:
        pytest.skip(f"the docs extra is not installed ({missing}); pip install -e '.[docs]'")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    _require_docs_tools()
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, MPLBACKEND="Agg", MIXRANK_PROGRESS="0", PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
                          "-q", str(DOCS), str(out)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1200)
    seconds = time.perf_counter() - start
    print(f"docs build: {seconds:.0f} s")
    assert run.returncode == 0, f"sphinx-build -W failed:\n{run.stderr[-6000:]}"
    return out


pytestmark = pytest.mark.slow


def test_every_public_name_has_an_api_page(site):
    index = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in mixrank.__all__:
        page = site / "api" / f"{name}.html"
        assert page.is_file(), name
        text = page.read_text(encoding="utf-8")
        assert re.search(rf'id="(module-)?mixrank\.{re.escape(name)}\b', text), name
        assert f'href="{name}.html"' in index, name


def test_every_result_class_lists_every_accessor(site):
    for name in mixrank.__all__:
        obj = getattr(mixrank, name)
        if not (inspect.isclass(obj) and name.endswith("Result")):
            continue
        text = (site / "api" / f"{name}.html").read_text(encoding="utf-8")
        public = [m for m, v in inspect.getmembers(obj)
                  if not m.startswith("_") and (inspect.isfunction(v) or isinstance(v, property))]
        assert public, name
        missing = [m for m in public if f'id="mixrank.{name}.{m}"' not in text]
        assert missing == [], f"{name}: accessors without documentation {missing}"


def test_every_vignette_has_a_gallery_page_with_a_figure(site):
    vignettes = sorted((ROOT / "vignettes").glob("[0-9][0-9]_*.py"))
    assert len(vignettes) >= 14
    for path in vignettes:
        page = site / "auto_examples" / f"{path.stem}.html"
        assert page.is_file(), path.name
        text = page.read_text(encoding="utf-8")
        assert re.search(r'<img[^>]+src="[^"]*_images/sphx_glr_' + re.escape(path.stem), text), \
            f"{path.name}: no figure on its gallery page"


def test_every_subcommand_has_a_cli_page(site):
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from mixrank_docs import subcommands
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    subs = subcommands()
    assert {"demo", "fit", "report"} <= set(subs)
    for name, (parser, _) in subs.items():
        text = (site / "cli" / f"{name}.html").read_text(encoding="utf-8")
        assert f"usage: mixrank {name}" in text, name
        for action in parser._actions:           # every flag of the subcommand is shown
            if action.help == argparse.SUPPRESS:  # former spellings, kept for one release
                continue
            for flag in action.option_strings:
                assert flag in text, (name, flag)


def test_every_docs_page_is_in_a_toctree(site):
    # the root page's toctrees list every page of docs/ (a glob picks up new ones)
    index = (site / "index.html").read_text(encoding="utf-8")
    for page in sorted(DOCS.glob("*.md")):
        if page.stem == "index":
            continue
        assert f'href="{page.stem}.html"' in index, f"docs/{page.name} is in no toctree"
    for part in ("start/install", "auto_examples/index", "api/index", "cli/index",
                 "project/validation", "project/benchmarks", "project/changelog"):
        assert f'href="{part}.html"' in index, part


def test_the_changelog_page_includes_the_changelog_when_there_is_one(site):
    text = (site / "project" / "changelog.html").read_text(encoding="utf-8")
    changelog = ROOT / "CHANGELOG.md"
    if changelog.is_file():
        first = next((ln.lstrip("# ").strip() for ln in changelog.read_text(
            encoding="utf-8").splitlines()[1:] if ln.startswith("#")), None)
        assert first is None or first.split()[0] in text
    else:
        assert "has no <code" in text


def test_every_guide_page_states_the_defaults_in_force(site):
    # the note is written from the code at build time, so it cannot go stale
    res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example(),
                      pairs=[("m01", "m02")])
    adjust = res.contrasts().attrs["mixrank"]["adjust"]     # contrasts() with no option
    for page in sorted(DOCS.glob("*.md")):
        if page.stem in ("index", "defaults"):
            continue
        text = (site / f"{page.stem}.html").read_text(encoding="utf-8")
        assert "Defaults in force" in text and f"adjust=&quot;{adjust}&quot;" in text, page.name
        assert "Estimand <code" in text and "Satterthwaite df otherwise" in text, page.name


def _text(html: str) -> str:
    """The visible text of a page (tags dropped, whitespace collapsed)."""
    return re.sub(r"\s+", " ", html_module.unescape(re.sub(r"<[^>]+>", " ", html)))


def _member(page: str, anchor: str) -> str:
    """The HTML of one documented member: from its anchor to the next member's."""
    start = page.index(f'id="{anchor}"')
    nxt = page.find('<dt class="sig', start + 100)
    return page[start:nxt if nxt > 0 else None]


def test_result_methods_render_returns_and_no_fake_parameters(site):
    # the rank_intervals/resolution pages once showed raw RST as four bold "parameters"
    # and no Returns section; numpydoc validation in the build (PR02) now refuses such prose
    for cls, method in (("FitResult", "resolution"), ("FitResult", "rank_intervals"),
                        ("ArenaResult", "contrasts"), ("GlmmResult", "rank_intervals"),
                        ("JudgeResult", "resolution")):
        page = (site / "api" / f"{cls}.html").read_text(encoding="utf-8")
        html = _member(page, f"mixrank.{cls}.{method}")
        assert ">Returns" in html and ">Raises" in html, (cls, method)
        params = inspect.signature(getattr(getattr(mixrank, cls), method)).parameters
        bold = re.findall(r"<strong>([^<]*)</strong>", html)
        names = {n.strip() for b in bold for n in b.split(",")}
        assert names <= set(params) | {"**old"}, (cls, method, names - set(params))
        assert ":class:" not in html and ":func:" not in html, (cls, method)
    # a result class lists its accessors first, its building blocks last
    page = (site / "api" / "FitResult.html").read_text(encoding="utf-8")
    order = [page.index(f'id="mixrank.FitResult.{m}"') for m in
             ("contrasts", "model_scores", "rank_intervals", "resolution", "estimable_part")]
    assert order == sorted(order)
    assert "frame, pairs, method" not in _text(page[:page.index('id="mixrank.FitResult.contrasts"')])


def test_the_version_is_on_every_page(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 100
    missing = [p.name for p in pages
               if f"mixrank {mixrank.__version__}" not in p.read_text(encoding="utf-8")]
    assert missing == []


def test_the_api_index_has_a_summary_per_entry_grouped_by_task(site):
    index = (site / "api" / "index.html").read_text(encoding="utf-8")
    text = _text(index)
    for task in ("Fit", "Results", "Arena leaderboards", "Judge-corrected scores",
                 "Subset scoring", "Design and power", "Readers", "Plots and the report",
                 "Datasets", "Errors and warnings"):
        assert f">{task}<" in index, task
    rows = re.findall(r'<tr class="row-(?:odd|even)">(.*?)</tr>', index, re.S)
    assert len(rows) >= len(mixrank.__all__) - 1
    empty = [_text(r).strip() for r in rows if len(_text(r).split()) < 3]
    assert empty == [], empty               # every entry: its name and a summary line
    assert "fit ( formula" not in text      # summaries, not signatures


def test_the_landing_page_has_install_an_example_with_output_and_a_figure(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    text = _text(index)
    assert "pip install ." in text
    assert "mixrank.fit(" in text.replace(" ", "") or "mixrank . fit (" in text
    assert "CR2 at 'subject', Bell-McCaffrey df" in text
    assert re.search(r'<img[^>]+src="_images/report\.png"', index)
    start = (site / "start" / "first_fit.html").read_text(encoding="utf-8")
    assert start.count("mixrank-run-output") >= 4 and re.search(r"<img[^>]+_images/", start)


def test_the_validation_page_shows_tables_of_numbers(site):
    page = (site / "project" / "validation.html").read_text(encoding="utf-8")
    assert page.count("<table") >= 6
    for peer in ("lme4", "glmer", "clubSandwich", "ppi_py", "FastChat", "statsmodels",
                 "Holm FWER"):
        assert peer in page, peer
