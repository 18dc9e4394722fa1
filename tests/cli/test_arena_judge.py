"""CLI ``mixrank arena --judge COL [--judge COL2] [--position]`` and the clustered defaults."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.cli import main


@pytest.fixture(scope="module")
def masked(tmp_path_factory) -> str:
    df = mixrank.load_dataset("chatbot_arena")
    keep = df.model_a.isin(["gpt-4", "claude-v1", "vicuna-13b", "koala-13b", "alpaca-13b"])
    keep &= df.model_b.isin(["gpt-4", "claude-v1", "vicuna-13b", "koala-13b", "alpaca-13b"])
    df = df[keep].reset_index(drop=True)
    lab = np.random.default_rng(3).random(len(df)) < 0.25
    df.loc[~lab, "winner"] = None
    path = tmp_path_factory.mktemp("arena") / "masked.csv"
    df.to_csv(path, index=False)
    return str(path)


def test_judge_tables_equal_the_api(masked, capsys):
    code = main(["arena", masked, "--judge", "winner_gpt4", "--judge", "winner_claude3",
                 "--position", "--table", "judges", "--format", "csv"])
    assert code == 0
    out = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    with pytest.warns(mixrank.DataQualityWarning):
        res = mixrank.arena(masked, judge=["winner_gpt4", "winner_claude3"], position=True)
    api = res.judges()
    assert list(out.judge) == list(api.judge)
    np.testing.assert_allclose(out.lam.to_numpy()[1:], api.lam.to_numpy()[1:], rtol=1e-6)
    assert main(["arena", masked, "--judge", "winner_gpt4", "--table", "boards",
                 "--format", "csv"]) == 0
    board = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert {"human_only", "judge_only_winner_gpt4", "corrected"} <= set(board.columns)


def test_judge_tables_need_a_judge_and_bad_clusters_fail_cleanly(masked, capsys, tmp_path):
    assert main(["arena", masked, "--table", "judges"]) != 0
    assert "--judge" in capsys.readouterr().err
    one = tmp_path / "one.csv"
    pd.DataFrame({"model_a": ["x", "y", "z", "x", "y", "z"],
                  "model_b": ["y", "z", "x", "z", "x", "y"],
                  "winner": ["model_a", "model_b", "tie", "model_b", "tie", "model_a"],
                  "prompt": "p"}).to_csv(one, index=False)
    code = main(["arena", str(one)])
    err = capsys.readouterr().err
    assert code != 0 and "single value" in err and "Traceback" not in err
    assert main(["arena", str(one), "--cluster", "none"]) == 0
