"""The README is a front door: at most 250 lines, every link resolves
(relative paths exist, in-page and cross-page anchors exist), its test command is the
one ``.ci/run`` runs, and it names the documentation build and the benchmark commands."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _text() -> str:
    return README.read_text(encoding="utf-8")


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"`|\*\*|\*", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    out: set[str] = set()
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and (m := re.match(r"#{1,6} (.+)", line)):
            out.add(slug(m.group(1)))
    return out


def links(text: str) -> list[str]:
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    found = re.findall(r"\]\(([^)\s]+)\)", text)
    found += re.findall(r'(?:src|href)="([^"]+)"', text)
    return found


def test_readme_has_at_most_250_lines():
    assert len(_text().splitlines()) <= 250


def test_every_readme_link_resolves():
    checked = 0
    for target in links(_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = README if not path else (ROOT / path)
        assert file.exists(), f"README links to {path}, which does not exist"
        if anchor:
            assert file.suffix == ".md", target
            assert anchor in anchors(file), f"README links to {target}: no such heading"
        checked += 1
    assert checked >= 10


def test_the_test_command_is_what_ci_runs():
    cmd = re.search(r"```bash\n(python3 -m venv .*?python -m pytest)\n```", _text())
    assert cmd, "the README's test command is missing"
    assert cmd.group(1) in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_names_the_docs_and_benchmark_commands():
    text = _text()
    assert "python -m sphinx -W --keep-going -b html docs docs/_build/html" in text
    named = re.findall(r"^python (benchmarks/bench_\w+\.py)", text, re.M)
    assert "benchmarks/bench_engine.py" in named
    assert all((ROOT / n).is_file() for n in named), named
    # every benchmark script is named in the README or on the site's benchmarks page
    both = text + (ROOT / "docs" / "project" / "benchmarks.md").read_text(encoding="utf-8")
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        assert f"benchmarks/{script.name}" in both, script.name


def test_the_first_fit_prints_what_the_readme_shows(capsys):
    # the README's example and the output under it are the code's, not a transcript
    blocks = re.search(r"## A first fit.*?```python\n(.*?)```\s*```text\n(.*?)```", _text(), re.S)
    assert blocks, "the first-fit example or its output is missing"
    code, shown = blocks.groups()
    assert len(code.strip().splitlines()) <= 12
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out.strip() == shown.strip()


def test_slug_matches_github():
    assert slug("0. Where things live") == "0-where-things-live"
    assert slug("Two commands") == "two-commands"
    assert slug("`fit()` and **defaults**") == "fit-and-defaults"
