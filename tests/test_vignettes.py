"""The vignettes are executable documents: each runs as a plain Python script
in a subprocess (matplotlib Agg, real data through $MIXRANK_DATA_DIR), and
``vignettes/render.py`` turns a percent-format script into an HTML page with
code, printed output, tables and figures."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mixrank.io.datasets import dataset_path

ROOT = Path(__file__).resolve().parents[1]
VIGNETTES = ROOT / "vignettes"
sys.path.insert(0, str(VIGNETTES))
import render  # noqa: E402

sys.path.remove(str(VIGNETTES))

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


def test_vignettes_are_percent_scripts():
    for path in sorted(VIGNETTES.glob("[0-9][0-9]_*.py")):
        cells = render.parse(path.read_text(encoding="utf-8"))
        kinds = [c.kind for c in cells]
        assert kinds[0] == "markdown" and cells[0].source.startswith("# "), path.name
        assert kinds.count("markdown") >= 3 and kinds.count("code") >= 3, path.name


SCRIPT = '''# %% [markdown]
# # A *tiny* vignette
#
# Some `code` and a list:
#
# - one
# - two **bold**

# %%
import matplotlib.pyplot as plt
import pandas as pd
print("hello <world>")
fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1])
pd.DataFrame({"a": [1.5, 2.0], "b": ["x", "y"]})

# %%
x = 41 + 1
x
'''


def test_render_a_script(tmp_path):
    src = tmp_path / "01_tiny.py"
    src.write_text(SCRIPT, encoding="utf-8")
    page, failed = render.render(src)
    assert failed == []
    assert "<title>A *tiny* vignette</title>" in page
    assert "<h1>A <em>tiny</em> vignette</h1>" in page
    assert "<li>two <strong>bold</strong></li>" in page and "<code>code</code>" in page
    assert "hello &lt;world&gt;" in page
    assert '<td>1.5</td><td class="txt">x</td>' in page
    assert '<pre class="out">42</pre>' in page
    assert len(re.findall(r'<img class="fig" alt="figure" src="data:image/png;base64,', page)) == 1


def test_render_reports_failing_cells(tmp_path):
    src = tmp_path / "02_bad.py"
    src.write_text("# %% [markdown]\n# # Bad\n\n# %%\nx = 1\n\n# %%\nraise ValueError('nope')\n"
                   "\n# %%\nprint('after')\n", encoding="utf-8")
    page, failed = render.render(src)
    assert failed == ["02_bad.py:8"]
    assert '<pre class="err">' in page and "ValueError: nope" in page and "after" not in page
    page, failed = render.render(src, keep_going=True)
    assert "after" in page
    code = render.main([str(src), "--out", str(tmp_path / "site")])
    assert code == 1
    assert (tmp_path / "site" / "02_bad.html").exists()
    assert "(failed)" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
