"""The bundled real datasets: files, licences, provenance, loaders, override."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pandas as pd
import pytest

import mixrank
from mixrank import DataError
from mixrank.io.datasets import BUNDLED_DIR, DATASETS, dataset_path

ROOT = Path(__file__).resolve().parents[2]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _shared_root() -> Path | None:
    env = os.environ.get("MIXRANK_DATA_DIR")
    for c in ([Path(env)] if env else []) + [ROOT.parent / "shared" / "data"]:
        if (c / "README.md").is_file():
            return c
    return None


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_bundled_file_equals_shared_copy(name):
    rel = DATASETS[name].file
    root = _shared_root()
    if root is None or not (root / rel).is_file():
        msg = f"no shared copy of {rel} (set MIXRANK_DATA_DIR to the project's shared/data)"
        if os.environ.get("MIXRANK_REQUIRE_DATA") == "1":
            pytest.fail(msg + " and MIXRANK_REQUIRE_DATA=1")
        pytest.skip(msg)
    assert _sha(BUNDLED_DIR / rel) == _sha(root / rel)
    assert (BUNDLED_DIR / rel).parent.joinpath("LICENSE").read_bytes().startswith(
        (root / rel).parent.joinpath("LICENSE").read_bytes())


@pytest.mark.parametrize("folder", sorted({d.file.split("/")[0] for d in DATASETS.values()}))
def test_each_folder_has_licence_and_provenance(folder):
    here = BUNDLED_DIR / folder
    licence = (here / "LICENSE").read_text(encoding="utf-8")
    prov = (here / "PROVENANCE.md").read_text(encoding="utf-8")
    d = next(d for d in DATASETS.values() if d.file.startswith(folder + "/"))
    assert d.licence in prov and d.source.split(" @ ")[0] in prov
    assert d.source.split(" @ ")[1] in prov
    if d.licence == "CDLA-Permissive-2.0":  # its section 2.1: ship the agreement's text
        assert "2.1. A Data Recipient may share Data" in licence and "5.4. \"Results\"" in licence
    elif d.licence == "MIT":   # triviaqa_judges: a note first (its source has no LICENSE file)
        assert licence.startswith("MIT License") or "\n\nMIT License\n" in licence
    else:
        assert "Apache License" in licence and "Version 2.0" in licence


def test_package_data_lists_the_datasets():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for pattern in ("datasets/*/*.csv.gz", "datasets/*/LICENSE", "datasets/*/*.md"):
        assert f'"{pattern}"' in text


def test_load_and_list():
    table = mixrank.list_datasets()
    assert list(table.columns) == ["name", "file", "licence", "source", "description"]
    assert set(table.name) == set(DATASETS)
    jb = mixrank.load_dataset("jailbreakbench")
    assert {"model", "subject", "question", "prompt", "correct"} <= set(jb.columns)
    assert len(jb) == 1800 and jb.model.nunique() == 4
    runs = mixrank.load_dataset("llm_stability")
    assert sorted(runs["sample"].unique()) == [0, 1, 2, 3, 4] and len(runs) == 7035
    arena = mixrank.load_dataset("chatbot_arena")
    assert len(arena) == 26919 and arena.winner.notna().all()
    assert {"winner_gpt4", "winner_claude3", "winner_gpt35", "question_id"} <= set(arena.columns)
    tq = mixrank.load_dataset("triviaqa_judges")
    assert tq.judge_name.nunique() == 11 and tq.model.nunique() == 9 and set(tq.gold) == {0, 1}
    hanna = mixrank.load_dataset("hanna_stories")
    assert len(hanna) == 126720 and hanna.gold.between(1, 5).all()
    with pytest.raises(DataError, match=r"unknown dataset 'chem'; expected one of \['chatbot_arena'"):
        mixrank.load_dataset("chem")


def test_data_dir_override(tmp_path, monkeypatch):
    (tmp_path / "jailbreakbench").mkdir()
    pd.DataFrame({"model": ["a", "b"], "subject": "s", "question": "q", "prompt": "p",
                  "correct": [1, 0]}).to_csv(tmp_path / "jailbreakbench" / "long.csv.gz",
                                              index=False)
    monkeypatch.setenv("MIXRANK_DATA_DIR", str(tmp_path))
    assert dataset_path("jailbreakbench") == tmp_path / "jailbreakbench" / "long.csv.gz"
    assert len(mixrank.load_dataset("jailbreakbench")) == 2
    # a dataset the override folder lacks comes from the package
    assert dataset_path("chembench") == BUNDLED_DIR / "chembench" / "long.csv.gz"


def test_chembench_is_the_published_run_fully_paired():
    """The default is what its description says: 25 systems x 2,788 questions, each model on
    each question once (prompt 'default'); the temperature-1 re-runs only on request."""
    d = mixrank.load_dataset("chembench")
    assert len(d) == 69_700 and set(d["prompt"]) == {"default"}
    per = d.groupby(["model", "question"]).size()
    assert len(per) == 25 * 2_788 and (per == 1).all()
    assert d["model"].nunique() == 25 and d["question"].nunique() == 2_788
    assert "fully paired" in mixrank.list_datasets().set_index("name").loc["chembench",
                                                                           "description"]
    both = mixrank.load_dataset("chembench", reruns=True)
    counts = both["prompt"].value_counts().to_dict()
    assert counts == {"default": 69_700, "temp1_rerun": 19_516}
    assert both.loc[both["prompt"] == "temp1_rerun", "model"].nunique() == 7
    pd.testing.assert_frame_equal(both[both["prompt"] == "default"].reset_index(drop=True), d)
    desc = mixrank.list_datasets().set_index("name").loc["chembench", "description"]
    assert "reruns=True" in desc
    prov = (BUNDLED_DIR / "chembench" / "PROVENANCE.md").read_text()
    assert "reruns=True" in prov and "69,700" in prov


@pytest.mark.parametrize("kw, msg", [({"reruns": True}, "has no re-runs"),
                                     ({"reruns": "yes"}, "True or False")])
def test_reruns_is_refused_where_it_means_nothing(kw, msg):
    with pytest.raises(mixrank.OptionError, match=msg):
        mixrank.load_dataset("jailbreakbench", **kw)


def test_the_example_is_described_where_an_installed_package_has_it():
    """``mixrank demo`` points at ``help(mixrank.load_example)`` (a wheel has no
    ``data/README.md``); that docstring names the simulation's parameters as
    ``data/make_example.py`` sets them."""
    import ast
    import re

    src = (ROOT / "mixrank" / "cli" / "fitting.py").read_text()
    assert "help(mixrank.load_example)" in src and "data/README.md" not in src
    tree = ast.parse((ROOT / "data" / "make_example.py").read_text())
    assign = next(n for n in tree.body if isinstance(n, ast.Assign)
                  and getattr(n.targets[0], "id", "") == "PARAMS")
    params = {k.arg: ast.literal_eval(k.value) for k in assign.value.keywords}
    doc = re.sub(r"\s+", " ", mixrank.load_example.__doc__)
    for key, value in params.items():
        if key == "models":
            assert f'models=["{value[0]}", ..., "{value[-1]}"]' in doc
        else:
            assert f"{key}={value!r}".replace("'", '"') in doc, key
