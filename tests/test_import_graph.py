"""The import graph of the package: one way, no cycles (house rule, design.md "Pipeline").

Every module under ``mixrank/`` is parsed with :mod:`ast`; every ``import``
and ``from ... import`` naming a mixrank module counts, at module level *and*
inside functions and methods, except those under ``if TYPE_CHECKING:``
(annotations only, never executed).  Relative imports are resolved; ``from
pkg import name`` points at ``pkg.name`` when that is a module, else at
``pkg``.  Importing ``a.b.c`` also runs the ``__init__`` of ``a`` and
``a.b``; those implicit parent imports are not edges (otherwise every module
would depend on ``mixrank/__init__``, which re-exports everything).

The stages, lowest first, and why each sits where it does: docs/architecture.md
("The stages"; tests/test_architecture_doc.py keeps it in step with :data:`STAGES`).
A module may import modules of its own stage and of lower stages, never of a
higher one; between packages there is no cycle even counting the imports under
``TYPE_CHECKING``.

A new top-level module or subpackage must be given a stage here.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "mixrank"

#: Stage of each top-level module or subpackage of mixrank (see the docstring).
STAGES: dict[str, int] = {
    "_util": 0, "_version": 0, "_progress": 0, "errors": 0, "_deprecate": 0, "_display": 0,
    "_warned": 0,
    "formula": 1,
    "frame": 2,
    "io": 3,
    "engine": 4,
    "inference": 5, "design": 5, "change": 5,
    "results": 6, "arena": 6, "judge": 6, "subset": 6,
    "fit": 7, "routes": 7, "power": 7, "": 7,
    "report": 8, "cli": 8, "__main__": 8,
}


def _modules() -> dict[str, Path]:
    out = {}
    for f in sorted(ROOT.rglob("*.py")):
        parts = ("mixrank",) + f.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported mixrank module, line) of every executed import in ``path``."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and _is_type_checking(node) for stmt in node.body for n in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod
                       for a in node.names]
        else:
            continue
        for t in targets:
            if t == "mixrank" or t.startswith("mixrank."):
                while t not in modules and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t != name:
                    found.append((t, node.lineno))
    return found


def _stage_key(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


MODULES = _modules()
EDGES = {name: _imports(name, path, MODULES) for name, path in MODULES.items()}


def test_the_parser_sees_function_level_and_skips_type_checking_imports():
    # results.fit_result imports design at module level; design names FitResult only for mypy
    assert any(t == "mixrank.design.resolution" for t, _ in EDGES["mixrank.results.fit_result"])
    assert not any(t.startswith("mixrank.results") for t, _ in EDGES["mixrank.design.resolution"])
    # a function-level import is an edge: engine.lmm.single imports its adapters inside a function
    assert any(t == "mixrank.engine.crosscheck.lme4_engine" for t, _ in EDGES["mixrank.engine.lmm.single"])


def test_every_module_has_a_stage():
    missing = sorted({_stage_key(m) for m in MODULES} - set(STAGES))
    assert not missing, (f"top-level modules/subpackages without a stage: {missing}; add them to "
                         "STAGES in tests/test_import_graph.py (and say why in its docstring)")


def test_no_upward_import():
    bad = []
    for name, targets in EDGES.items():
        src = STAGES.get(_stage_key(name))
        for t, line in targets:
            dst = STAGES.get(_stage_key(t))
            if src is not None and dst is not None and dst > src:
                bad.append(f"{MODULES[name].relative_to(ROOT.parent)}:{line}: {name} (stage {src}) "
                           f"imports {t} (stage {dst})")
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_nothing_imports_report_or_cli():
    # within stage 8 too: report never imports cli; only cli and __main__ import cli
    allowed = {"report": ("report", "cli"), "cli": ("cli", "__main__")}
    bad = [f"{name} imports {t} (line {line})" for name, targets in EDGES.items()
           for t, line in targets if _stage_key(t) in allowed
           and _stage_key(name) not in allowed[_stage_key(t)]]
    assert not bad, "\n".join(bad)


def _cycles() -> list[list[str]]:
    graph = defaultdict(set)
    for name, targets in EDGES.items():
        graph[name].update(t for t, _ in targets)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:          # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                out.append(sorted(comp))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    cycles = _cycles()
    assert not cycles, "import cycles (strongly connected modules):\n" + "\n".join(
        " <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("method, function", [("resolution", "resolution_of"),
                                              ("plan", "plan_of")])
def test_fit_result_methods_spell_out_their_parameters(method, function):
    # help(FitResult.resolution) lists the parameters; they stay those of the design function
    import inspect

    from mixrank.design import plan, resolution
    from mixrank.results import FitResult

    func = getattr(resolution if method == "resolution" else plan, function)
    meth = list(inspect.signature(getattr(FitResult, method)).parameters.values())[1:]
    want = list(inspect.signature(func).parameters.values())[1:]
    assert [(p.name, p.kind, p.default) for p in meth] == [(p.name, p.kind, p.default) for p in want]


def _package_edges() -> dict[str, set[str]]:
    """Top-level package -> packages it imports, counting every import (``TYPE_CHECKING``
    ones too: a cycle there is still a cycle of the design, only hidden from the runtime)."""
    out: dict[str, set[str]] = defaultdict(set)
    for name, path in MODULES.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    targets = [".".join(base + ([node.module] if node.module else []))]
                else:
                    targets = [node.module or ""]
            else:
                continue
            for t in targets:
                if t.startswith("mixrank.") and _stage_key(t) != _stage_key(name):
                    out[_stage_key(name)].add(_stage_key(t))
    return out


def test_no_package_cycle_counting_type_checking_imports():
    edges = _package_edges()
    # the package itself re-exports everything (lazily); nothing imports it back
    assert "" not in {t for k, ts in edges.items() for t in ts}
    seen: dict[str, int] = {}        # 1: on the current path, 2: done

    def visit(p: str, path: list[str]) -> None:
        seen[p] = 1
        for q in sorted(edges.get(p, ())):
            assert seen.get(q) != 1, "package cycle: " + " -> ".join(path + [p, q])
            if q not in seen:
                visit(q, path + [p])
        seen[p] = 2

    for p in sorted(edges):
        if p not in seen:
            visit(p, [])
    # design and inference are typed against mixrank.engine.records.FittedPairs, not results
    assert "results" not in edges["design"] and "results" not in edges["inference"]
