"""Package docstrings' module maps are complete.

Every package of mixrank (the root and each subpackage: a folder with an
``__init__.py``) lists its modules in its docstring: each module file and
each subpackage directly inside it is *named* there, and every module the
docstring names with ``:mod:`` exists.

A module ``m`` of package ``p`` counts as named when the docstring has a
``:mod:`` reference resolving to ``p.m`` (absolute ``mixrank.p.m``, with
``~``, or relative ``.m``), the name in double backquotes (````m````) or its
file name ``m.py``.  The check reads the files with :mod:`ast` and imports
nothing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "mixrank"

_MOD_ROLE = re.compile(r":mod:`~?([\w.]+)`")


def _packages() -> list[Path]:
    return sorted(p.parent for p in ROOT.rglob("__init__.py"))


def _dotted(pkg: Path) -> str:
    return ".".join(("mixrank",) + pkg.relative_to(ROOT).parts)


def _members(pkg: Path) -> list[str]:
    """Module files and subpackages directly inside ``pkg``."""
    out = [f.stem for f in pkg.glob("*.py") if f.name != "__init__.py"]
    out += [d.name for d in pkg.iterdir() if d.is_dir() and (d / "__init__.py").exists()]
    return sorted(out)


def _docstring(pkg: Path) -> str:
    return ast.get_docstring(ast.parse((pkg / "__init__.py").read_text())) or ""


def _resolve(ref: str, package: str) -> str:
    """A ``:mod:`` target as an absolute dotted name (relative to ``package``)."""
    if not ref.startswith("."):
        return ref
    level = len(ref) - len(ref.lstrip("."))
    base = package.split(".")
    base = base[:len(base) - (level - 1)] if level > 1 else base
    rest = ref.lstrip(".")
    return ".".join(base + ([rest] if rest else []))


def _exists(dotted: str) -> bool:
    parts = dotted.split(".")
    if parts[0] != "mixrank":
        return True            # another package (e.g. :mod:`numpy`): not ours to check
    path = ROOT.joinpath(*parts[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


PACKAGES = _packages()


@pytest.mark.parametrize("pkg", PACKAGES, ids=[_dotted(p) for p in PACKAGES])
def test_every_module_is_named_in_its_package_docstring(pkg: Path) -> None:
    doc, package = _docstring(pkg), _dotted(pkg)
    refs = {_resolve(r, package) for r in _MOD_ROLE.findall(doc)}
    missing = [m for m in _members(pkg)
               if f"{package}.{m}" not in refs and f"``{m}``" not in doc
               and f"{m}.py" not in doc]
    assert missing == [], f"{package}'s docstring does not name its modules {missing}"


@pytest.mark.parametrize("pkg", PACKAGES, ids=[_dotted(p) for p in PACKAGES])
def test_every_named_module_exists(pkg: Path) -> None:
    doc, package = _docstring(pkg), _dotted(pkg)
    refs = {_resolve(r, package) for r in _MOD_ROLE.findall(doc)}
    ghosts = sorted(r for r in refs if not _exists(r))
    assert ghosts == [], f"{package}'s docstring names modules that do not exist: {ghosts}"


def test_the_check_sees_every_package() -> None:
    names = {_dotted(p) for p in PACKAGES}
    assert {"mixrank", "mixrank.formula", "mixrank.frame", "mixrank.engine",
            "mixrank.engine.glmm", "mixrank.design.anytime"} <= names
    assert _resolve(".fit", "mixrank.engine.glmm") == "mixrank.engine.glmm.fit"
    assert _resolve("..records", "mixrank.engine.glmm") == "mixrank.engine.records"
    assert not _exists("mixrank.engine.no_such_module") and _exists("mixrank.engine.records")
