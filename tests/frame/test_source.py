"""The input-kind detector and the checks every input path shares: a column
named twice, invalid UTF-8, folders of long files, stray values among 0/1
scores, unpaired cells in the paired tests."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import mixrank
from mixrank.errors import DataError, DataQualityWarning, MissingDataWarning
from mixrank.frame.source import (
    FILE_TYPES,
    LONG_COLUMNS,
    file_type,
    folder_files,
    input_kind,
    to_pandas,
)

F1 = "correct ~ model + (1|subject)"


def small(rng=1) -> pd.DataFrame:
    return mixrank.simulate(3, 4, 5, 1, rng=rng)


def with_twin_column(df: pd.DataFrame, name: str) -> pd.DataFrame:
    out = pd.concat([df, df[[name]]], axis=1)
    assert list(out.columns).count(name) == 2
    return out


def test_file_types_and_kinds(tmp_path):
    assert file_type("a/b.CSV.GZ") == "csv" and file_type("x.parq") == "parquet"
    assert file_type("x.ndjson") == "jsonl" and file_type("x.eval") is None
    assert input_kind(small()) == "pandas" and input_kind(pa.table({"a": [1]})) == "arrow"
    (tmp_path / "x.eval").write_text("{}")
    assert input_kind(tmp_path) == "folder" and input_kind(tmp_path / "x.eval") == "file"
    assert input_kind(str(tmp_path / "*.csv")) == "glob"
    with pytest.raises(DataError, match="does not exist"):
        input_kind(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="not supported"):
        input_kind([1, 2])
    assert "sample" in LONG_COLUMNS and LONG_COLUMNS[-1] == "correct"
    assert all(s.startswith(".") for v in FILE_TYPES.values() for s in v)


@pytest.mark.parametrize("kind", ["csv", "jsonl", "parquet"])
def test_folder_of_long_files_is_long_input(tmp_path, kind):
    df = small()
    parts = [df.iloc[: len(df) // 2], df.iloc[len(df) // 2:]]
    for i, part in enumerate(parts):
        f = tmp_path / f"part{i}.{kind}"
        {"csv": lambda p, f=f: p.to_csv(f, index=False),
         "jsonl": lambda p, f=f: p.to_json(f, orient="records", lines=True),
         "parquet": lambda p, f=f: p.to_parquet(f)}[kind](part)
    (tmp_path / "_SUCCESS").write_text("")
    assert folder_files(tmp_path) == (kind, sorted(str(tmp_path / f"part{i}.{kind}")
                                                   for i in range(2)))
    want = mixrank.fit(F1, df).contrasts()
    got = mixrank.fit(F1, tmp_path).contrasts()
    np.testing.assert_allclose(got.estimate, want.estimate, rtol=1e-12)


def test_mixed_folder_is_refused(tmp_path):
    small().to_csv(tmp_path / "a.csv", index=False)
    small().to_parquet(tmp_path / "b.parquet")
    with pytest.raises(DataError, match=r"mixes file types \['csv', 'parquet'\]"):
        to_pandas(tmp_path)


def test_csv_with_invalid_utf8(tmp_path):
    f = tmp_path / "bad.csv"
    small().to_csv(f, index=False)
    f.write_bytes(f.read_bytes().replace(b"m01", b"m\xff1", 1))
    with pytest.raises(DataError, match="invalid UTF-8"):
        to_pandas(f)


@pytest.mark.parametrize("name", ["correct", "subject"])
@pytest.mark.parametrize("path", ["pandas", "csv", "parquet", "duckdb", "dask", "arrow"])
def test_duplicated_column_is_named_on_every_path(tmp_path, name, path):
    """CSV took the first 'correct' silently; pandas raised TypeError/AttributeError."""
    df = with_twin_column(small(), name)
    kw: dict = {}
    if path == "pandas":
        src = df
    elif path == "arrow":
        src = pa.Table.from_arrays([pa.array(df.iloc[:, i]) for i in range(df.shape[1])],
                                   names=[str(c) for c in df.columns])
    elif path == "csv":
        src = tmp_path / "d.csv"
        df.to_csv(src, index=False)
    elif path == "dask":
        dd = pytest.importorskip("dask.dataframe")
        src = dd.from_pandas(df.set_axis([f"c{i}" for i in range(df.shape[1])], axis=1),
                             npartitions=1)
        src.columns = list(df.columns)
        kw = dict(backend="dask")
    else:
        table = pa.Table.from_arrays([pa.array(df.iloc[:, i]) for i in range(df.shape[1])],
                                     names=[str(c) for c in df.columns])
        src = tmp_path / "d.parquet"
        pq.write_table(table, src)
        kw = dict(backend="duckdb") if path == "duckdb" else {}
    with pytest.raises(DataError, match=rf"several columns named \['{name}'\]"):
        mixrank.fit(F1, src, **kw)


@pytest.mark.parametrize("stray", [2.0, -1.0, 100.0])
def test_stray_value_among_binary_scores_warns(stray):
    df = mixrank.simulate(2, 6, 10, 1, rng=3)
    df.loc[5, "correct"] = stray
    with pytest.warns(DataQualityWarning, match=rf"0/1 except for 1 other value\(s\): {stray:g} "
                      r"\(1x\) among 120 rows"):
        fr = mixrank.build_frame(df, F1)
    assert not fr.binary
    # the out-of-core path counts them
    with pytest.warns(DataQualityWarning, match="1 value.s. that are neither 0 nor 1"):
        mixrank.fit(F1, df, backend="duckdb")


def test_partial_credit_column_does_not_warn():
    df = mixrank.simulate(2, 6, 10, 1, rng=3).astype({"correct": float})
    df.loc[df.index % 3 == 0, "correct"] = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataQualityWarning)
        assert not mixrank.build_frame(df, F1).binary


def test_paired_tests_warn_about_unpaired_cells():
    df = mixrank.simulate(2, 4, 5, 1, rng=2)
    df = df.drop(index=df.index[(df.model == "m02")][:3])
    for test in (mixrank.mcnemar, mixrank.paired_t, mixrank.wilcoxon):
        with pytest.warns(MissingDataWarning, match="3 cell.s. of 'm01' and 0 of 'm02' have no "
                          "partner"):
            tab = test(df, a="m01", b="m02")
        assert tab.attrs["mixrank"]["n_unpaired_a"] == 3
