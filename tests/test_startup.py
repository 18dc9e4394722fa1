"""Start-up of the command line and of ``import mixrank``.

``mixrank --version``, ``mixrank --help`` and every subcommand's ``--help``
are answered without importing numpy, pandas, scipy or any statistics module
(checked through ``sys.modules`` in a fresh interpreter, not by a timing
threshold), and the lazy public namespace still lists and resolves every name
of ``__all__``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "pandas", "scipy", "statsmodels", "formulaic")

_PROBE = r"""
import io, json, sys
from contextlib import redirect_stdout, redirect_stderr
from mixrank.cli import main
buf = io.StringIO()
with redirect_stdout(buf), redirect_stderr(buf):
    code = main(sys.argv[1:])
heavy = sorted({m.split('.')[0] for m in sys.modules} & set(HEAVY))
stats = sorted(m for m in sys.modules if m.startswith('mixrank.') and m.split('.')[1] in
               ('engine', 'inference', 'design', 'results', 'frame', 'formula', 'io', 'fit',
                'report', 'change', '_util'))
print(json.dumps({'code': code, 'heavy': heavy, 'stats': stats, 'out': buf.getvalue()}))
"""


def _run(*argv: str) -> dict:
    code = f"HEAVY = {HEAVY!r}\n" + _PROBE
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                         check=True)
    return json.loads(out.stdout)


def _subcommands() -> list[str]:
    from mixrank.cli import build_parser

    p = build_parser()
    sub = next(a for a in p._actions if a.__class__.__name__ == "_SubParsersAction")
    return sorted(sub.choices)


@pytest.mark.parametrize("argv", [("--version",), ("--help",)])
def test_version_and_help_import_nothing_heavy(argv: tuple[str, ...]) -> None:
    r = _run(*argv)
    assert r["code"] == 0
    assert r["heavy"] == [] and r["stats"] == [], r
    assert ("mixrank 0." in r["out"]) if argv == ("--version",) else ("usage: mixrank" in r["out"])


def test_every_subcommand_help_imports_nothing_heavy() -> None:
    names = _subcommands()
    assert {"fit", "contrasts", "report", "ranks", "power"} <= set(names)
    for name in names:
        r = _run(name, "--help")
        assert r["code"] == 0, (name, r)
        assert f"usage: mixrank {name}" in r["out"], name
        assert r["heavy"] == [] and r["stats"] == [], (name, r)


def test_import_mixrank_is_lazy_but_complete() -> None:
    code = (f"HEAVY = {HEAVY!r}\n"
            "import sys, json, mixrank\n"
            "before = sorted({m.split('.')[0] for m in sys.modules} & set(HEAVY))\n"
            "missing = [n for n in mixrank.__all__ if n not in dir(mixrank)]\n"
            "import mixrank.fit, mixrank.arena\n"  # the submodules must not shadow the functions
            "import types\n"
            "kinds = {n: 'module' if isinstance(getattr(mixrank, n), types.ModuleType) else "
            "type(getattr(mixrank, n)).__name__ for n in [*mixrank.__all__, '__version__']}\n"
            "kinds['arena_callable'] = callable(mixrank.arena)\n"
            "print(json.dumps({'before': before, 'missing': missing, 'kinds': kinds}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, check=True)
    r = json.loads(out.stdout)
    assert r["before"] == [] and r["missing"] == []
    assert r["kinds"]["fit"] == "function" and r["kinds"]["power"] == "module"
    assert r["kinds"]["arena"] == "function" and r["kinds"]["arena_callable"]  # the function
    assert r["kinds"]["FitResult"] == "type" and r["kinds"]["__version__"] == "str"


def test_unknown_attribute_is_an_attribute_error() -> None:
    import mixrank

    with pytest.raises(AttributeError, match="no attribute 'fitt'"):
        mixrank.fitt  # noqa: B018
    assert not hasattr(mixrank, "definitely_not_public")
