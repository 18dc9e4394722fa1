"""The site's generated parts, without a build (fast; the build is
tests/test_docs_build.py): docs/_ext/mixrank_docs.py writes an API page for every
public name and a CLI page for every subcommand, and the Changelog page works from
``docs/project/`` with or without a CHANGELOG.md; every vignette and docs page is
picked up by a pattern, not a list."""

from __future__ import annotations

import inspect
import re
import runpy
import sys
from pathlib import Path

import mixrank

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import mixrank_docs  # noqa: E402

sys.path.remove(str(ROOT / "docs" / "_ext"))


def test_an_api_page_for_every_public_name(tmp_path):
    pages = mixrank_docs.write_api(tmp_path)
    assert set(mixrank.__all__) <= set(pages)
    index = (tmp_path / "api" / "index.rst").read_text(encoding="utf-8")
    for name in mixrank.__all__:
        text = (tmp_path / "api" / f"{name}.rst").read_text(encoding="utf-8")
        assert re.search(rf"^\.\. auto\w+:: mixrank\.{re.escape(name)}\b", text, re.M), name
        assert re.search(rf"^   {re.escape(name)}$", index, re.M), name      # the toctree
        if name != "__version__":                                          # the summary table
            assert re.search(rf"^   ~mixrank\.{re.escape(name)}$", index, re.M), name
    assert "write_report" in index                              # mixrank.report's names too
    # a result class: a table of its methods, then each, the accessors first
    fit = (tmp_path / "api" / "FitResult.rst").read_text(encoding="utf-8")
    shown = re.findall(r"^\.\. auto(?:method|property):: mixrank\.FitResult\.(\w+)$", fit, re.M)
    assert shown[:4] == ["contrasts", "model_scores", "rank_intervals", "resolution"]
    assert shown.index("estimable_part") > shown.index("variance_components")
    assert ".. autosummary::" in fit and "   ~mixrank.FitResult.contrasts" in fit
    public = {m for m, v in inspect.getmembers(mixrank.FitResult) if not m.startswith("_")
              and (inspect.isfunction(v) or isinstance(v, property))}
    assert public <= set(shown)


def test_names_are_grouped_by_task():
    assert mixrank_docs.section_of(mixrank.fit, "fit") == "Fit"
    assert mixrank_docs.section_of(mixrank.FitResult, "FitResult") == "Results"
    assert mixrank_docs.section_of(mixrank.DataError, "DataError") == "Errors and warnings"
    assert mixrank_docs.section_of(mixrank.power, "power") == "Design and power"
    assert mixrank_docs.section_of(mixrank.read, "read") == "Readers"
    assert mixrank_docs.section_of(mixrank.load_dataset, "load_dataset") == "Datasets"
    assert mixrank_docs.section_of(mixrank.ArenaResult, "ArenaResult") == "Arena leaderboards"
    assert mixrank_docs.section_of(mixrank.subset_score, "subset_score") == "Subset scoring"
    others = [n for n in mixrank.__all__
              if mixrank_docs.section_of(getattr(mixrank, n), n) == mixrank_docs.OTHER]
    assert others == []
    # a name no task lists falls back to its stage; a new subpackage gets its own section
    import types

    new = types.SimpleNamespace(__module__="mixrank.newpkg.mod")
    assert mixrank_docs.section_of(new, "thing") == "mixrank.newpkg"


def test_a_cli_page_for_every_subcommand(tmp_path):
    subs = mixrank_docs.write_cli(tmp_path)
    from mixrank.cli import build_parser

    parser = build_parser()
    choices = next(a for a in parser._actions if hasattr(a, "choices") and a.choices).choices
    assert subs == list(choices)
    for name in subs:
        text = (tmp_path / "cli" / f"{name}.rst").read_text(encoding="utf-8")
        assert f"usage: mixrank {name}" in text
    assert all(f"   {n}" in (tmp_path / "cli" / "index.rst").read_text() for n in subs)


def test_the_changelog_page_with_and_without_a_changelog(tmp_path):
    assert "no `CHANGELOG.md` yet" in mixrank_docs.changelog_markdown(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "src.py").write_text("x = 1\n")
    (tmp_path / "NOTES.md").write_text("# n\n")
    (tmp_path / "CHANGELOG.md").write_text(
        "# Changelog\n\n- [defaults](docs/defaults.md#x), [code](src.py), [notes](NOTES.md), "
        "[web](https://example.org), [top](#changelog)\n")
    text = mixrank_docs.changelog_markdown(tmp_path)
    assert "[defaults](../defaults.md#x)" in text and "[code](../../src.py)" in text
    assert "notes (`NOTES.md`)" in text
    assert "[web](https://example.org)" in text and "[top](#changelog)" in text
    (tmp_path / "CHANGELOG.md").write_text("## 0.2\n\n- more\n")
    assert mixrank_docs.changelog_markdown(tmp_path).startswith("# Changelog\n\n## 0.2")


def test_the_user_guide_picks_up_every_docs_page():
    # the root page's User guide toctree ends with the line "user-guide-rest", which the
    # build replaces by every docs/*.md page no toctree lists: a page added to docs/ joins it
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    guide = re.search(r":caption: User guide\n(.*?)```", index, re.S)
    assert guide
    entries = [ln.strip() for ln in guide.group(1).splitlines()
               if ln.strip() and not ln.startswith(":")]
    assert entries[-1] == mixrank_docs.USER_GUIDE_REST
    listed = {ln.strip() for ln in index.splitlines()}
    for e in entries[:-1]:
        assert (ROOT / "docs" / f"{e}.md").is_file(), e
    rest = mixrank_docs.user_guide_rest(index, ROOT / "docs")
    pages = {p.stem for p in (ROOT / "docs").glob("*.md")} - {"index"}
    assert pages == (pages & listed) | set(rest)
    # the developer pages are a section of their own, not in the User guide
    dev = re.search(r":caption: Developer guide\n(.*?)```", index, re.S).group(1)
    for page in ("architecture", "engine", "speed", "project/writing_docs"):
        assert page in dev.split() and page not in entries


def test_the_gallery_picks_up_every_vignette():
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    pattern = re.search(r'"filename_pattern": r"([^"]+)"', conf).group(1)
    for path in (ROOT / "vignettes").glob("[0-9][0-9]_*.py"):
        assert re.search(pattern, "/" + path.as_posix().split("/vignettes")[-1]), path.name


def test_the_getting_started_code_runs(capsys):
    # the code of the landing page and of the Getting started pages runs as written (the
    # build executes the mixrank-run blocks and shows their output)
    pages = [ROOT / "docs" / "index.md", *sorted((ROOT / "docs" / "start").glob("*.md"))]
    runs = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        ns: dict = {"__name__": "__main__"}
        for code in re.findall(r"```\{mixrank-run\}\n(.*?)```", text, re.S):
            out, _ = mixrank_docs.run_block(code, ns)
            runs += 1
        for code in re.findall(r"```python\n(.*?)```", text, re.S):
            exec(compile(code, str(page), "exec"), {})
    assert runs >= 5


def test_the_landing_page_has_an_install_line_an_example_and_a_figure():
    text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert re.search(r"^pip install \.", text, re.M)
    assert "```{mixrank-run}" in text and "print(" in text
    assert "![" in text and "_static/report.png" in text
    assert (ROOT / "docs" / "_static" / "report.png").is_file()


def test_the_docstrings_pass_numpydoc_validation():
    # the checks the build runs (docs/conf.py), without a build; no name is exempt (the
    # building blocks of FitResult, such as estimable_part and pair, are validated too)
    conf = runpy.run_path(str(ROOT / "docs" / "conf.py"))
    checks = conf["numpydoc_validation_checks"]
    assert {"GL08", "SS01", "PR01", "PR02", "RT01", "RT03"} <= checks
    exclude = conf.get("numpydoc_validation_exclude", set())
    assert not exclude, exclude
    assert mixrank_docs.validate_api(checks, exclude) == {}
