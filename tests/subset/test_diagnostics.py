"""item_diagnostics: items with a flipped answer key are flagged (simulation), the
item-rest correlation equals numpy's, the nobody/everybody flags, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.errors import DataError, OptionError
from mixrank.subset.diagnostics import item_rest_correlation
from tests.subset.sim import board


def test_flipped_answer_keys_are_flagged():
    # 40 models whose abilities spread as a leaderboard's do (small to frontier models), 600
    # items of which 30 have their key flipped (the score is 1 - y); three seeds pooled
    hit, false = [], []
    for seed in range(3):
        data, bad = board(models=40, items=600, subjects=4, seed=seed, flipped=30, spread=2.0)
        diag = mixrank.item_diagnostics(data)
        isbad = diag["question"].isin([f"q{i:04d}" for i in bad]).to_numpy()
        flag = diag["negative_discrimination"].to_numpy()
        hit.append(flag[isbad])
        false.append(flag[~isbad])
        assert (diag.loc[isbad, "discrimination"] < 0).mean() > 0.9
    assert np.concatenate(hit).mean() >= 0.90
    assert np.concatenate(false).mean() <= 0.05


def test_item_rest_correlation_equals_numpy():
    rng = np.random.default_rng(0)
    Y = (rng.random((8, 30)) < rng.random(30)).astype(float)
    Y[2, 5] = np.nan
    r, n = item_rest_correlation(Y)
    for i in range(30):
        ok = np.isfinite(Y[:, i])
        rest = np.array([(np.nansum(Y[m]) - np.nan_to_num(Y[m, i])) /
                         (np.isfinite(Y[m]).sum() - ok[m]) for m in range(8)])[ok]
        y = Y[ok, i]
        want = np.corrcoef(y, rest)[0, 1] if y.std() > 0 else np.nan
        np.testing.assert_allclose(r[i], want, atol=1e-12, equal_nan=True)
        assert n[i] == ok.sum()


def test_nobody_and_everybody_flags_and_columns():
    data, _ = board(models=6, items=50, subjects=2, seed=1)
    data = data.copy()
    data.loc[data.question == "q0000", "correct"] = 0
    data.loc[data.question == "q0001", "correct"] = 1
    diag = mixrank.item_diagnostics(data).set_index("question")
    assert diag.loc["q0000", "nobody_solves"] and diag.loc["q0000", "flag"] == "nobody solves"
    assert diag.loc["q0001", "everybody_solves"]
    assert np.isnan(diag.loc["q0000", "item_rest_r"])
    assert not diag.loc["q0000", "negative_discrimination"]
    assert {"subject", "n", "reference_mean", "difficulty", "discrimination", "item_rest_r",
            "p_value", "flag"} <= set(diag.columns)
    assert len(diag) == 50


def test_bad_input():
    data, _ = board(models=6, items=50, subjects=2, seed=1)
    with pytest.raises(DataError, match="at least 3"):
        mixrank.item_diagnostics(data[data.model.isin(["m00", "m01"])])
    with pytest.raises(OptionError, match="level=1.5"):
        mixrank.item_diagnostics(data, level=1.5)
    with pytest.raises(DataError, match="no column 'grade'"):
        mixrank.item_diagnostics(data, formula="grade ~ model + (1|subject/question)")
    assert isinstance(data, pd.DataFrame)
