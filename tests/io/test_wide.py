"""Tests for mixrank.io.wide.read_wide (items x models matrices → long format)."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mixrank.errors import DataError, MissingDataWarning
from mixrank.io.wide import read_wide

CSV = Path(__file__).parent / "fixtures" / "wide" / "scores.csv"

# the fixture, transcribed by hand: (model, subject, question, score); mistral-7b on
# (algebra, q2) is blank = not scored
EXPECTED = [
    ("gpt-4o", "algebra", "q1", 1.0), ("gpt-4o", "algebra", "q2", 1.0),
    ("gpt-4o", "algebra", "q3", 0.0), ("gpt-4o", "biology", "q1", 1.0),
    ("gpt-4o", "biology", "q2", 1.0),
    ("llama-3-8b", "algebra", "q1", 0.0), ("llama-3-8b", "algebra", "q2", 1.0),
    ("llama-3-8b", "algebra", "q3", 0.0), ("llama-3-8b", "biology", "q1", 1.0),
    ("llama-3-8b", "biology", "q2", 0.0),
    ("mistral-7b", "algebra", "q1", 1.0), ("mistral-7b", "algebra", "q3", 0.0),
    ("mistral-7b", "biology", "q1", 0.5), ("mistral-7b", "biology", "q2", 1.0),
]


def rows(df, score="correct"):
    return [(m, s, q, float(c)) for m, s, q, c in
            df[["model", "subject", "question", score]].itertuples(index=False)]


def test_reads_csv_fixture():
    with pytest.warns(MissingDataWarning, match="1 empty cell"):
        df = read_wide(CSV, na="drop")
    assert list(df.columns) == ["model", "subject", "question", "prompt", "correct"]
    assert rows(df) == EXPECTED
    assert set(df["prompt"]) == {"default"}
    assert df["correct"].dtype == "float64"
    assert df.index.equals(pd.RangeIndex(len(EXPECTED)))
    meta = df.attrs["mixrank"]
    assert meta["reader"] == "read_wide" and meta["n_missing"] == 1
    assert meta["models"] == ["gpt-4o", "llama-3-8b", "mistral-7b"]


def test_csv_gz_parquet_and_dataframe_agree(tmp_path):
    gz = tmp_path / "scores.csv.gz"
    with gzip.open(gz, "wb") as fh:
        fh.write(CSV.read_bytes())
    wide = pd.read_csv(CSV)
    pq = tmp_path / "scores.parquet"
    wide.to_parquet(pq)
    for src in (gz, pq, wide):
        with pytest.warns(MissingDataWarning):
            assert rows(read_wide(src, na="drop")) == EXPECTED


def test_dataframe_input_not_modified():
    wide = pd.read_csv(CSV)
    before = wide.copy()
    read_wide(wide, models=["gpt-4o"], prompt="cot", score_name="score")
    pd.testing.assert_frame_equal(wide, before)


def test_models_prompt_and_score_name():
    with pytest.warns(MissingDataWarning):
        df = read_wide(CSV, models=["mistral-7b", "gpt-4o"], prompt="cot", score_name="score",
                       na="drop")
    assert list(df.columns) == ["model", "subject", "question", "prompt", "score"]
    assert df["model"].unique().tolist() == ["mistral-7b", "gpt-4o"]
    assert set(df["prompt"]) == {"cot"}
    assert rows(df, "score")[:4] == [e for e in EXPECTED if e[0] == "mistral-7b"]


def test_prompt_as_item_key():
    wide = pd.DataFrame({"question": ["a", "a", "b", "b"], "prompt": ["p1", "p2", "p1", "p2"],
                         "m1": [1, 0, 1, 1], "m2": [True, False, False, True]})
    df = read_wide(wide, items=["question", "prompt"])
    assert list(df.columns) == ["model", "question", "prompt", "correct"]
    assert df["correct"].tolist() == [1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0]
    with pytest.raises(DataError, match="items= already includes the 'prompt' column"):
        read_wide(wide, items=["question", "prompt"], prompt="x")


def test_boolean_text_and_numeric_keys(tmp_path):
    f = tmp_path / "b.csv"
    f.write_text("subject,question,m1\ns,1,TRUE\ns,2,false\n")
    df = read_wide(f)
    assert df["correct"].tolist() == [1.0, 0.0]
    assert df["question"].tolist() == ["1", "2"]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_round_trip_with_pivot(n_items, n_models, seed):
    """Long → pivot gives back the wide matrix (missing cells stay missing)."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2, size=(n_items, n_models)).astype(float)
    values[rng.random(values.shape) < 0.2] = np.nan
    wide = pd.DataFrame(values, columns=[f"m{j}" for j in range(n_models)])
    wide.insert(0, "question", [f"q{i}" for i in range(n_items)])
    wide.insert(0, "subject", "s")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        long = read_wide(wide, na="drop")
    if np.isnan(values).any():
        with pytest.raises(DataError, match="is empty .not scored.; missing scores are an error"):
            read_wide(wide)
    assert len(long) == int(np.isfinite(values).sum())
    assert long.attrs["mixrank"]["n_missing"] == int(np.isnan(values).sum())
    if len(long):
        back = long.pivot(index="question", columns="model", values="correct")
        for j in range(n_models):
            col = back[f"m{j}"] if f"m{j}" in back else pd.Series(dtype=float)
            got = col.reindex([f"q{i}" for i in range(n_items)]).to_numpy()
            np.testing.assert_array_equal(got, values[:, j])


# ----------------------------------------------------------------- errors
def test_missing_item_columns():
    with pytest.raises(DataError, match=r"item key columns \['task'\] not found; columns present"):
        read_wide(CSV, items=("task", "question"))


def test_missing_model_columns():
    with pytest.raises(DataError, match=r"model columns \['claude'\] not found"):
        read_wide(CSV, models=["gpt-4o", "claude"])


def test_duplicate_item_key_names_line(tmp_path):
    f = tmp_path / "dup.csv"
    f.write_text("subject,question,m1\na,1,1\na,2,0\n\na,1,1\n")
    # line 5: the blank line 4 is counted
    with pytest.raises(DataError, match=r"line 5: duplicate item key \(subject='a', "
                                        r"question='1'\), first seen on line 2"):
        read_wide(f)


def test_duplicate_item_key_in_dataframe_names_row():
    wide = pd.DataFrame({"subject": ["a", "a", "a"], "question": [1, 2, 2], "m": [0, 1, 1]},
                        index=[10, 11, 12])
    with pytest.raises(DataError, match=r"row 3 \(index 12\): duplicate item key.*first seen on "
                                        r"row 2 \(index 11\)"):
        read_wide(wide)


def test_non_numeric_cell_names_column_and_line(tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text("subject,question,m1,m2\na,1,1,0\na,2,1,oops\n")
    with pytest.raises(DataError, match=r"line 3: column 'm2' holds 'oops'; expected a finite"):
        read_wide(f)
    pq = tmp_path / "bad.parquet"
    pd.DataFrame({"subject": ["a", "a"], "question": [1, 2], "note": ["x", "y"]}).to_parquet(pq)
    with pytest.raises(DataError, match=r"row 1: column 'note' holds 'x'.*add it to items="):
        read_wide(pq)


def test_infinite_cell_is_an_error():
    wide = pd.DataFrame({"subject": ["a", "a"], "question": [1, 2], "m": [0.5, np.inf]})
    with pytest.raises(DataError, match=r"row 2 \(index 1\): column 'm' holds inf"):
        read_wide(wide)


def test_missing_item_key_value(tmp_path):
    f = tmp_path / "k.csv"
    f.write_text("subject,question,m1\na,1,1\n,2,0\n")
    with pytest.raises(DataError, match=r"line 3: item key 'subject' is missing"):
        read_wide(f)


def test_empty_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="is empty"):
        read_wide(empty)
    header = tmp_path / "header.csv"
    header.write_text("subject,question,m1\n")
    with pytest.raises(DataError, match="no data rows"):
        read_wide(header)
    with pytest.raises(DataError, match="no data rows"):
        read_wide(pd.DataFrame({"subject": [], "question": [], "m": []}))


def test_no_model_columns():
    with pytest.raises(DataError, match="no model columns"):
        read_wide(pd.DataFrame({"subject": ["a"], "question": [1]}))


def test_bad_paths(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_wide(tmp_path / "nope.csv")
    (tmp_path / "x.xlsx").write_text("")
    with pytest.raises(DataError, match="unsupported file type"):
        read_wide(tmp_path / "x.xlsx")
    with pytest.raises(DataError, match="is a folder"):
        read_wide(tmp_path)
    with pytest.raises(DataError, match="expected a path"):
        read_wide(42)


def test_output_name_clash():
    wide = pd.DataFrame({"model": ["a"], "question": [1], "m": [1]})
    with pytest.raises(DataError, match="clash with the output columns"):
        read_wide(wide, items=("model", "question"))


def test_blank_cells_are_an_error_by_default_as_in_long_input():
    """Quiet data handling: blank cells used to vanish without a word."""
    with pytest.raises(DataError, match=r"line 3: column 'mistral-7b' is empty .*na='drop'"):
        read_wide(CSV)
    with pytest.raises(DataError, match="na='maybe' is not an option"):
        read_wide(CSV, na="maybe")
    with pytest.warns(MissingDataWarning, match="1 empty cell"):
        assert read_wide(CSV, na="drop").attrs["mixrank"]["n_missing"] == 1
