"""The built wheel works for the main job with no extra: ``python -m build``
makes an sdist and a wheel from it, the wheel is installed (not editable) into a fresh
venv whose dependencies pip fetches, and there ``mixrank demo``, ``mixrank report`` on a
bundled dataset and ``load_dataset`` for every dataset ``list_datasets()`` names succeed:
the wheel ships the data, their licences and what the report needs (matplotlib is a core
dependency).  Slow: a build and an install (a few minutes with pip's cache, more without).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

CHECK = r'''
import json, pathlib, mixrank
names = list(mixrank.list_datasets()["name"])
rows = {n: len(mixrank.load_dataset(n)) for n in names}
rows["example"] = len(mixrank.load_example())
pkg = pathlib.Path(mixrank.__file__).parent
licences = sorted(p.parent.name for p in (pkg / "datasets").glob("*/LICENSE"))
provenance = sorted(p.parent.name for p in (pkg / "datasets").glob("*/PROVENANCE.md"))
print(json.dumps({"file": mixrank.__file__, "rows": rows, "licences": licences,
                  "provenance": provenance,
                  "folders": sorted(p.name for p in (pkg / "datasets").iterdir() if p.is_dir())}))
'''


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "MIXRANK_DATA_DIR", "VIRTUAL_ENV", "PYTHONHOME")}
    return dict(env, MPLBACKEND="Agg", MIXRANK_PROGRESS="0")


def _run(args: list[str], cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    out = subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, f"{' '.join(map(str, args))}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    if importlib.util.find_spec("build") is None:
        if os.environ.get("CI"):
            pytest.fail("the 'build' package (test extra) is not installed")
        pytest.skip("the 'build' package (test extra) is not installed")
    tmp = tmp_path_factory.mktemp("wheel")
    built = _run([sys.executable, "-m", "build", "--outdir", str(tmp / "dist"), str(ROOT)], tmp)
    (tmp / "build.log").write_text(built.stdout + built.stderr)
    wheels = list((tmp / "dist").glob("mixrank-*.whl"))
    assert len(wheels) == 1, wheels
    _run([sys.executable, "-m", "venv", str(tmp / "venv")], tmp)
    _run([str(tmp / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", str(wheels[0])],
         tmp, timeout=1800)
    return tmp / "venv"


def test_the_wheel_ships_every_dataset_with_its_licence(venv, tmp_path):
    import json

    out = _run([str(venv / "bin" / "python"), "-c", CHECK], tmp_path)
    got = json.loads(out.stdout)
    assert str(venv) in got["file"]                     # the installed copy, not the checkout
    assert len(got["rows"]) >= 6 and all(n > 0 for n in got["rows"].values()), got["rows"]
    assert got["licences"] == got["provenance"] == got["folders"], got


def test_demo_runs_from_the_wheel(venv, tmp_path):
    out = _run([str(venv / "bin" / "mixrank"), "demo"], tmp_path)
    assert "== Contrasts (model_a - model_b) ==" in out.stdout
    assert "warning:" not in out.stderr
    # the demo's pointer to how the example was simulated works from the wheel
    assert "help(mixrank.load_example)" in out.stdout.splitlines()[0]
    doc = _run([str(venv / "bin" / "python"), "-c",
                "import mixrank; print(mixrank.load_example.__doc__)"], tmp_path)
    assert "rng=20260101" in doc.stdout and "sd_model_question=0.6" in doc.stdout


def test_report_runs_from_the_wheel_on_a_bundled_dataset(venv, tmp_path):
    page = tmp_path / "report.html"
    _run([str(venv / "bin" / "mixrank"), "report", "dataset:jailbreakbench",
          "-f", "correct ~ model + (1|subject)", "-o", str(page)], tmp_path)
    text = page.read_text(encoding="utf-8")
    assert "data:image/png;base64," in text                 # the plots are drawn
    assert "Leaderboard" in text and "gpt" in text.lower()


def test_the_wheel_carries_the_licence_and_the_build_no_licence_deprecation(venv):
    """PEP 639: ``license = "MIT"`` and ``license-files`` put the project's LICENSE in the
    wheel's ``.dist-info/licenses/`` with ``License-Expression: MIT``; setuptools' warning
    about the former table form (``project.license`` as a TOML table, or licence
    classifiers) is not in the build output."""
    import zipfile

    tmp = venv.parent
    log = (tmp / "build.log").read_text()
    for phrase in ("as a TOML table is deprecated", "License classifiers are deprecated",
                   "SetuptoolsDeprecationWarning"):
        assert phrase not in log, phrase
    (wheel,) = (tmp / "dist").glob("mixrank-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        licence = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert len(licence) == 1, names[-20:]
        assert z.read(licence[0]).decode().startswith("MIT License")
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: MIT" in meta
    assert "Classifier: Intended Audience :: Science/Research" in meta
