"""The package layout (docs/architecture.md): no module over 600
lines, and the engine in its concept subpackages."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "mixrank"
MAX_LINES = 600


def test_no_module_over_600_lines():
    long = {p.relative_to(ROOT).as_posix(): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by concept): {long}"


def test_engine_is_grouped_by_concept():
    engine = ROOT / "engine"
    subpackages = {p.name for p in engine.iterdir() if (p / "__init__.py").is_file()}
    assert subpackages == {"lmm", "glmm", "crosscheck"}
    shared = {p.stem for p in engine.glob("*.py")} - {"__init__"}
    assert {"records", "control"} <= shared
    # the LMM's and the GLMM's own modules live in their subpackage, not beside them
    assert not shared & {"native", "reml", "newton", "satterthwaite", "pirls", "glmm_data",
                         "statsmodels_engine", "lme4_engine"}


def test_design_and_inference_subpackages_by_concept():
    for pkg, subs in (("design", {"anytime", "power", "sensitivity"}),
                      ("inference", {"ranks"})):
        found = {p.name for p in (ROOT / pkg).iterdir() if (p / "__init__.py").is_file()}
        assert subs <= found, (pkg, found)
    loose = {p.stem for p in (ROOT / "design").glob("*.py")}
    assert not any(s.startswith(("sensitivity_", "power_", "anytime", "eprocess"))
                   for s in loose), loose
    assert not any(p.stem.startswith("ranks") for p in (ROOT / "inference").glob("*.py"))
