"""The site's generated parts, without a build (fast; the build is
tests/test_docs_build.py): docs/_ext/mixrank_docs.py writes an API page for every
public name and a CLI page for every subcommand, and the Changelog page works from
``docs/project/`` with or without a CHANGELOG.md; every vignette and docs page is
picked up by a pattern, not a list."""

from __future__ import annotations

import re
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
        assert re.search(rf"^   {re.escape(name)}$", index, re.M), name
    fit = (tmp_path / "api" / "FitResult.rst").read_text(encoding="utf-8")
    assert ":members:" in fit and ":undoc-members:" in fit      # every accessor
    assert "write_report" in index                              # mixrank.report's names too


def test_names_are_grouped_by_the_stage_that_defines_them():
    assert mixrank_docs.section_of(mixrank.fit, "fit").startswith("Fitting")
    assert mixrank_docs.section_of(mixrank.FitResult, "FitResult").startswith("Results")
    assert mixrank_docs.section_of(mixrank.DataError, "DataError").startswith("Errors")
    assert mixrank_docs.section_of(mixrank.power, "power").startswith("Design")
    others = [n for n in mixrank.__all__
              if mixrank_docs.section_of(getattr(mixrank, n), n) == mixrank_docs.OTHER]
    assert others == []
    # a name from a subpackage the stage table does not know yet gets its own section
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
    # the root page's User guide toctree ends with a glob: a page added to docs/ joins it
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    guide = re.search(r":caption: User guide\n(.*?)```", index, re.S)
    assert guide and ":glob:" in guide.group(1)
    entries = [ln.strip() for ln in guide.group(1).splitlines()
               if ln.strip() and not ln.startswith(":")]
    assert entries[-1] == "*"
    listed = set(entries[:-1])
    assert all((ROOT / "docs" / f"{e}.md").is_file() for e in listed), listed
    # the glob never comes up empty (an empty glob is a warning, and the build is -W)
    assert any(p.stem not in listed | {"index"} for p in (ROOT / "docs").glob("*.md"))


def test_the_gallery_picks_up_every_vignette():
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    pattern = re.search(r'"filename_pattern": r"([^"]+)"', conf).group(1)
    for path in (ROOT / "vignettes").glob("[0-9][0-9]_*.py"):
        assert re.search(pattern, "/" + path.as_posix().split("/vignettes")[-1]), path.name


def test_the_getting_started_code_runs(capsys):
    # the Python blocks of the Getting started pages run as written
    blocks = [b for page in sorted((ROOT / "docs" / "start").glob("*.md"))
              for b in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)]
    assert blocks
    for code in blocks:
        exec(compile(code, "docs/start", "exec"), {})
