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

import shutil
import subprocess
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
