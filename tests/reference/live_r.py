"""The live R comparisons' gate, ``require_rscript(*packages)``, and runner, ``run_live``.

Returns the Rscript to run (``$MIXRANK_RSCRIPT`` or the one on PATH) when R loads every
package named; otherwise the test is skipped, or fails when ``MIXRANK_REQUIRE_R=1`` (CI:
R must be there, `.ci/run` installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest


def require_rscript(*packages: str, debian: str = "") -> str:
    """Rscript with ``packages`` loadable, else skip (fail under ``MIXRANK_REQUIRE_R=1``)."""
    rscript = os.environ.get("MIXRANK_RSCRIPT") or shutil.which("Rscript")
    if rscript is None:
        problem = "Rscript is not on PATH"
    else:
        load = "; ".join(f"library({p})" for p in packages)
        proc = subprocess.run([rscript, "--vanilla", "-e", f"suppressMessages({{{load}}})"],
                              capture_output=True, text=True, timeout=120)
        problem = "" if proc.returncode == 0 else (
            f"R lacks one of {', '.join(packages)}{f' (Debian {debian})' if debian else ''}: "
            f"{proc.stderr.strip()[-200:]}")
    if problem:
        if os.environ.get("MIXRANK_REQUIRE_R") == "1":
            pytest.fail(f"{problem} (MIXRANK_REQUIRE_R=1)")
        pytest.skip(problem)
    assert rscript is not None
    return rscript


def run_live(rscript: str, script: Path, payload: dict, tmp_path: Path) -> dict:
    """Run ``Rscript --vanilla script --live in.json out.json`` on ``payload`` (the cases
    written by Python) and return what R wrote."""
    (tmp_path / "in.json").write_text(json.dumps(payload))
    subprocess.run([rscript, "--vanilla", str(script), "--live", str(tmp_path / "in.json"),
                    str(tmp_path / "out.json")], check=True, capture_output=True, timeout=600)
    return json.loads((tmp_path / "out.json").read_text())
