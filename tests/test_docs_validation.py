"""The Validation page's tables are numbers a script produced (docs/make_validation.py):
the committed docs/project/validation_references.md and validation_simulations.md are
what the script writes now (up to floating-point noise in the last digits of differences
near machine precision; the simulations on their fastest design, both slow), and the page
includes them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "docs" / "project"
sys.path.insert(0, str(ROOT / "docs"))
import make_validation  # noqa: E402

sys.path.remove(str(ROOT / "docs"))


def _tables(text: str) -> list[list[list[str]]]:
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if current is None:
                current = []
                tables.append(current)
            if not set("".join(cells)) <= {"-"}:
                current.append(cells)
        else:
            current = None
    return tables


def _same(a: str, b: str) -> bool:
    """Two table cells agree: text exactly; a difference in scientific notation within a
    factor 2, or both below 1e-8 (noise of the last bits); a simulated mean to 0.01; other
    numbers to 1e-3."""
    if a == b:
        return True
    sci = re.compile(r"^\**([+-]?\d\.\de[+-]\d\d)\**$")
    if sci.match(a) and sci.match(b):
        x, y = (abs(float(sci.match(s).group(1))) for s in (a, b))
        return max(x, y) < 1e-8 or 0.5 <= x / y <= 2
    mc = re.compile(r"^(\d\.\d+) \((\d\.\d+)\)$")       # a simulated mean (its MC SE)
    if mc.match(a) and mc.match(b):
        return abs(float(mc.match(a).group(1)) - float(mc.match(b).group(1))) <= 0.01
    try:
        return abs(float(a) - float(b)) <= 1e-3 * max(1.0, abs(float(b)))
    except ValueError:
        return False


def _compare(committed: str, fresh: str) -> None:
    old, new = _tables(committed), _tables(fresh)
    assert len(old) == len(new)
    for t_old, t_new in zip(old, new):
        assert len(t_old) == len(t_new) and t_old[0] == t_new[0]
        for r_old, r_new in zip(t_old, t_new):
            bad = [(x, y) for x, y in zip(r_old, r_new) if not _same(x, y)]
            assert not bad, (r_old[0], bad)


def test_the_page_includes_the_written_tables():
    page = (PROJECT / "validation.md").read_text(encoding="utf-8")
    tables = 0
    for name in ("validation_references.md", "validation_simulations.md"):
        assert f"```{{include}} {name}" in page
        text = (PROJECT / name).read_text(encoding="utf-8")
        assert text.startswith(make_validation.HEAD)
        tables += len(_tables(text))
    assert tables >= 7
    refs = (PROJECT / "validation_references.md").read_text(encoding="utf-8")
    for peer in ("lme4", "lmerTest", "glmer", "clubSandwich", "ppi_py", "FastChat",
                 "statsmodels"):
        assert peer in refs, peer
    sims = (PROJECT / "validation_simulations.md").read_text(encoding="utf-8")
    assert "Holm FWER" in sims and "CI coverage" in sims


@pytest.mark.slow
def test_the_reference_tables_are_up_to_date():
    committed = (PROJECT / "validation_references.md").read_text(encoding="utf-8")
    _compare(committed, make_validation.references())


@pytest.mark.slow
def test_the_simulation_grid_is_up_to_date():
    committed = (PROJECT / "validation_simulations.md").read_text(encoding="utf-8")
    design = "6 models x 8 subjects"
    fresh = make_validation.simulation_grid(only=design)
    rows = [r for t in _tables(committed) for r in t
            if r[0].startswith(design.replace(" x ", " × "))]
    new = [r for t in _tables(fresh) for r in t[1:]]
    assert len(rows) == len(new) == 2
    for r_old, r_new in zip(rows, new):
        assert all(_same(x, y) for x, y in zip(r_old, r_new)), (r_old, r_new)
