"""Packaging: the README's editable install beside a clone named ``mixrank``.

A user clones the repository as ``mixrank``, installs it with the README's command
(``pip install -e .``) and runs a script in the directory holding the clone.  The script's
directory comes first on ``sys.path``, where ``mixrank/`` (the clone's root, no
``__init__.py``) is a namespace-package candidate; with an import-finder editable install
that empty namespace package shadowed the real one (``module 'mixrank' has no attribute
'fit'``).  ``package-dir = {"" = "."}`` makes setuptools install a static ``.pth`` putting
the clone's root on ``sys.path``, where the regular package wins.  Checked for real: a fresh
virtual environment, ``pip install --no-deps -e <clone>``, the script run beside the clone.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ("import mixrank, os\n"
          "print(os.path.dirname(mixrank.__file__))\n"
          "print('fit' in mixrank.__all__ and mixrank._LAZY['fit'])\n")


def _copy_clone(dest: Path) -> None:
    """The project as a fresh clone has it (tracked layout: package, metadata, README)."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(ROOT / "mixrank", dest / "mixrank",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


@pytest.mark.slow
def test_a_clone_named_mixrank_beside_a_script_does_not_shadow_the_install(tmp_path):
    clone = tmp_path / "mixrank"
    _copy_clone(clone)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    inst = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "-e", str(clone)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    if inst.returncode != 0 and ("No matching distribution" in inst.stderr
                                 or "Could not find a version" in inst.stderr):
        pytest.skip("no package index reachable to build the editable wheel: "
                    + inst.stderr[-300:])
    assert inst.returncode == 0, inst.stderr[-2000:]
    (tmp_path / "script.py").write_text(SCRIPT)
    out = subprocess.run([str(py), "script.py"], capture_output=True, text=True, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin"}, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    where, lazy = out.stdout.split()
    assert Path(where) == clone / "mixrank"           # the regular package, not a namespace
    assert lazy == ".fit"
    site = list((env_dir / "lib").glob("python3*/site-packages"))[0]
    assert not list(site.glob("__editable___*finder.py"))   # a static .pth, no finder


def test_the_project_root_is_the_package_root():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'package-dir = {"" = "."}' in text


def test_the_licence_is_declared_as_pep_639_asks():
    """The repository carries the MIT licence the README names, and pyproject.toml declares
    it as an SPDX expression with ``license-files`` (the table form is deprecated by
    setuptools, and needs setuptools >= 77 to build); no licence classifier beside it
    (PEP 639 forbids both)."""
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli",
                                  reason="reading pyproject.toml needs tomllib (3.11+) or tomli")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = meta["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n\nCopyright (c) ")
    assert "mixrank itself is MIT-licensed" in (ROOT / "README.md").read_text()
    assert any(r.replace(" ", "") == "setuptools>=77" for r in meta["build-system"]["requires"])
    assert project["classifiers"] and not any(c.startswith("License ::")
                                              for c in project["classifiers"])


#: Modules the tests import only where a test first skips without them: the docs site's own
#: extension (docs/_ext, not a distribution).  tests/io/producers/generate.py (the evaluation
#: harnesses and their datasets, extra ``producers``) runs only after
#: tests/io/test_producers.py found the harness installed (it skips with the reason).
_GUARDED = {"mixrank_docs", "sphinx"}
_PRODUCERS = Path("tests") / "io" / "producers" / "generate.py"


def _requirement_names(reqs: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in reqs}


def test_the_test_extra_installs_what_the_tests_import():
    """``pip install '.[test]' && python -m pytest`` needs no other extra: every third-party
    module a test file imports comes from the core dependencies or the ``test`` extra,
    unless that file skips without it (``pytest.importorskip``) or it is a harness of the
    ``producers`` extra; ``pandas.read_html`` needs lxml."""
    from importlib.metadata import packages_distributions

    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli",
                                  reason="reading pyproject.toml needs tomllib (3.11+) or tomli")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    have = _requirement_names(project["dependencies"] + project["optional-dependencies"]["test"])
    dists = packages_distributions()
    local = {p.name for p in (ROOT / "tests").rglob("*") if p.is_dir()} | {
        p.stem for p in (ROOT / "tests").rglob("*.py")} | {"mixrank", "tests"} | {
        p.stem for p in (ROOT / "docs").glob("*.py")}     # the docs' scripts, e.g. make_validation
    missing = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.relative_to(ROOT) == _PRODUCERS:
            continue
        text = path.read_text(encoding="utf-8")
        skipped = set(re.findall(r"importorskip\(\s*[{\"']([\w.]+)", text))
        skipped |= {m.split(".")[0] for m in skipped}
        mods = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                mods |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods.add(node.module.split(".")[0])
        if "read_html(" in text:
            mods.add("lxml")
        for mod in sorted(mods - set(sys.stdlib_module_names) - local - skipped - _GUARDED):
            names = {d.lower().replace("_", "-") for d in dists.get(mod, [mod])}
            if not names & have:
                missing.append(f"{path.relative_to(ROOT)}: {mod} ({', '.join(sorted(names))})")
    assert not missing, missing
