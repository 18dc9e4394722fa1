"""Static checks: ``ruff check`` and ``mypy mixrank`` must both be clean.

Both run as subprocesses of the current interpreter (``python -m ruff`` /
``python -m mypy``) from the repository root, so they read the settings in
``pyproject.toml`` ([tool.ruff], [tool.mypy]).  A test skips only when the
tool is not installed (it is in the ``test`` extra); any finding fails it and
the tool's full output is printed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF_PATHS = ["mixrank", "tests", "benchmarks", "vignettes", "data"]


def _run_tool(module: str, *args: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]')")
    shown = f"python -m {module} {' '.join(args)}"
    proc = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    output = f"$ {shown}\n{proc.stdout}{proc.stderr}"
    if proc.returncode != 0:
        print(output)
    assert proc.returncode == 0, (
        f"{module} exited with code {proc.returncode}; expected 0. Fix the findings below "
        f"(run `{shown}` from the repository root):\n{output}"
    )


def test_ruff_clean():
    _run_tool("ruff", "check", *RUFF_PATHS)


def test_mypy_clean():
    _run_tool("mypy", "mixrank")
