"""Refresh ``docs/_static/report.png``, the README's picture of a report.

Usage (from the repository root, with mixrank installed and Debian's chromium)::

    python docs/make_report_png.py

Writes ``mixrank report`` of the bundled example to a temporary HTML file and takes a
headless-Chromium screenshot of its top (1200 x 1500 CSS pixels).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "_static" / "report.png"
FORMULA = "correct ~ model + (1|subject) + (1|subject:question)"


def main() -> int:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("chromium not found (apt-get install chromium)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        subprocess.run([sys.executable, "-m", "mixrank", "report", "example", "-f", FORMULA,
                        "-o", str(page), "--quiet"], check=True)
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--user-data-dir={tmp}/profile",
                        "--window-size=1200,1500", f"--screenshot={OUT}",
                        page.as_uri()], check=True, capture_output=True, timeout=120)
    print(f"wrote {OUT} ({OUT.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
