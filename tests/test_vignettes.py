"""The vignettes are executable documents: each runs as a plain Python script
in a subprocess (matplotlib Agg, the bundled data), and follows sphinx-gallery's
format so that the documentation site executes it into the Examples gallery with
its tables and figures (docs/conf.py; the build is tests/test_docs_build.py)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mixrank.io.datasets import dataset_path

ROOT = Path(__file__).resolve().parents[1]
VIGNETTES = ROOT / "vignettes"

#: The bundled datasets each vignette reads (mixrank.load_dataset).
NEEDS = {
    "01_getting_started.py": ["chembench"],
    "02_unit_of_inference.py": ["jailbreakbench", "multiprompt"],
    "03_resolution_and_planning.py": ["chembench"],
    "04_unbalanced_designs.py": ["chembench_humans", "chembench"],
    "05_reliable_change.py": ["llm_stability"],
    "06_lm_eval_to_report.py": [],
    "07_scale.py": [],
    "08_model_scores.py": ["chembench", "jailbreakbench"],
    "09_harness_outputs.py": [],
    "10_where_gaps_live.py": ["chembench", "jailbreakbench"],
    "13_arena.py": ["chatbot_arena"],
    "12_judge_correction.py": ["triviaqa_judges", "hanna_stories"],
    "11_messy_leaderboard.py": ["chembench"],
    "14_pass_at_k.py": ["chembench"],
    "15_subset_scoring.py": ["chembench"],
}


def test_every_vignette_is_listed():
    assert sorted(p.name for p in VIGNETTES.glob("[0-9][0-9]_*.py")) == sorted(NEEDS)


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_vignette_runs(name, tmp_path):
    for dataset in NEEDS[name]:
        assert dataset_path(dataset).is_file()
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="default")
    env.pop("MIXRANK_DATA_DIR", None)  # as after pip install: the bundled datasets only
    out = subprocess.run([sys.executable, str(VIGNETTES / name)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"{name} failed:\n{out.stderr[-4000:]}"
    assert "Traceback" not in out.stderr
    assert out.stdout.strip(), f"{name} printed nothing"


def test_vignettes_follow_the_gallery_format():
    # sphinx-gallery: a module docstring opening with an RST title underlined with "=",
    # cells separated by "# %%", at least one matplotlib figure (vignettes/README.md)
    for path in sorted(VIGNETTES.glob("[0-9][0-9]_*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        doc = ast.get_docstring(tree, clean=False)
        assert doc is not None and text.lstrip().startswith('"""'), path.name
        lines = doc.strip("\n").splitlines()
        assert len(lines) >= 2 and lines[0].strip(), path.name
        assert re.fullmatch(r"=+", lines[1]) and len(lines[1]) >= len(lines[0]), path.name
        assert text.count("\n# %%") >= 3, path.name
        assert re.search(r"\bplot_\w+\(|plt\.|\.plot\(", text), f"{path.name} draws no figure"
