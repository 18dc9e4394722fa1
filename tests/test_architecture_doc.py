"""docs/architecture.md stays true: every module or package it names exists, and every stage
of the import graph (``STAGES`` in tests/test_import_graph.py) has its line there."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_import_graph import STAGES

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"


def _named_paths() -> list[str]:
    """Every backquoted path in the doc: ``x.py``, ``x/y.py`` or a package ``x/``."""
    return [p for p in re.findall(r"`([\w./]+)`", DOC.read_text(encoding="utf-8"))
            if p.endswith((".py", "/")) and not p.startswith(".")]


def test_every_module_named_exists():
    named = _named_paths()
    assert len(named) > 40
    missing = []
    for p in named:
        base = ROOT if p.startswith(("tests/", "docs/", "mixrank/")) else ROOT / "mixrank"
        if not (base / p).exists():
            missing.append(p)
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"


def test_every_stage_has_its_line():
    text = DOC.read_text(encoding="utf-8")
    for key in STAGES:
        if key:
            assert f"`{key}.py`" in text or f"`{key}/`" in text, key
