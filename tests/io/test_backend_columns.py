"""The DuckDB backend's compressed layout (scores model by model) against the pandas backend.

Reference: the pandas backend (``build_frame`` on the rows, validated
against lme4 elsewhere).  With ``backend_options={"layout": "compressed"}``
the DuckDB backend builds a :class:`~mixrank.frame.columns.CompressedFrame`
without a cells x models matrix (docs/scale.md); its frame (read through the
on-demand dense views) and its fits must equal the pandas backend's: same
encoding, contrasts, variance components and rank intervals within 1e-10
relative, and the same errors for malformed data.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank import DataError, MissingDataWarning
from mixrank.frame import columns as columns_mod
from mixrank.frame.columns import CompressedFrame
from mixrank.io.backends import load_frame
from tests.io.test_backends import (
    FULL,
    MALFORMED,
    SUBJ,
    _bad,
    assert_same_fit,
    assert_same_frame,
    write_parts,
)

pytest.importorskip("duckdb")

OPTS = {"threads": 2, "memory_limit": "512MB", "layout": "compressed"}


def fit_compressed(source, formula, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        res = mixrank.fit(formula, source, backend="duckdb", backend_options=OPTS, **kw)
    assert isinstance(res.frame, CompressedFrame)
    return res


def fit_pandas(source, formula, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit(formula, source, **kw)


def test_chembench_equal_to_pandas(shared_data, tmp_path):
    d = shared_data("chembench", reruns=True)  # 7 models also re-run: unbalanced
    folder = write_parts(d, tmp_path / "chembench", n_files=4)
    assert_same_fit(fit_pandas(d, SUBJ), fit_compressed(folder, SUBJ))


@pytest.mark.parametrize("formula", [FULL, SUBJ, "correct ~ model + (1|question) + (1|prompt)"])
def test_simulated_unbalanced_equal_to_pandas(tmp_path, formula):
    df = mixrank.simulate(6, 8, [4, 9, 5, 12, 7, 3, 10, 6], 3, missing=0.25, rng=20260811)
    folder = write_parts(df, tmp_path / "sim")
    res = fit_compressed(str(folder / "part-*.parquet"), formula)
    assert res.frame.columns.values[0].dtype == np.uint8      # 0/1 without replicates
    assert res.frame.__dict__.get("observed") is None          # no dense matrix built to fit
    assert_same_fit(fit_pandas(df, formula), res)


def test_replicates_equal_to_pandas(tmp_path):
    df = mixrank.simulate(5, 6, [3, 6, 4, 8, 5, 7], 2, samples=4, missing=0.2, rng=99)
    df = df[np.random.default_rng(1).random(len(df)) > 0.1]  # unequal replicate counts
    folder = write_parts(df, tmp_path / "rep")
    res = fit_compressed(folder, FULL, replicate="sample")
    assert res.frame.columns.counts is not None
    assert_same_fit(fit_pandas(df, FULL, replicate="sample"), res)


def test_continuous_scores_and_missing_dropped(tmp_path):
    df = mixrank.simulate(4, 5, 6, 2, family="gaussian", sd_residual=1.0, rng=3)
    df.loc[np.random.default_rng(4).choice(len(df), 25, replace=False), "correct"] = np.nan
    folder = write_parts(df, tmp_path / "na")
    with pytest.warns(MissingDataWarning):
        ref = load_frame(df, FULL, na="drop")
    with pytest.warns(MissingDataWarning, match=f"dropped {ref.n_dropped} row"):
        got = load_frame(folder, FULL, backend="duckdb", na="drop", options=OPTS)
    assert isinstance(got, CompressedFrame) and got.columns.values[0].dtype == np.float64
    assert_same_frame(ref, got)


@pytest.mark.parametrize("kind, pattern", MALFORMED)
def test_malformed_data_errors(tmp_path, kind, pattern):
    folder = write_parts(_bad(kind), tmp_path / kind, n_files=2)
    with pytest.raises(DataError, match=pattern):
        load_frame(folder, SUBJ, backend="duckdb", options=OPTS)


def test_duplicate_message_equals_pandas():
    df = mixrank.simulate(3, 4, 5, 1, rng=2)
    df = pd.concat([df, df.iloc[[9, 7]]])
    with pytest.raises(DataError) as ref:
        load_frame(df, SUBJ)
    with pytest.raises(DataError) as got:
        load_frame(df, SUBJ, backend="duckdb", options=OPTS)
    assert str(got.value) == str(ref.value)


def test_repeated_replicate_value(tmp_path):
    df = mixrank.simulate(3, 4, 5, 1, samples=3, rng=2)
    df.loc[df.index[1], "sample"] = df.loc[df.index[0], "sample"]
    folder = write_parts(df, tmp_path / "rep", n_files=2)
    with pytest.raises(DataError, match=r"'sample' values repeat within 1 \(model, cell\)"):
        load_frame(folder, SUBJ, backend="duckdb", replicate="sample", options=OPTS)


def test_layout_rule_and_option(monkeypatch):
    df = mixrank.simulate(4, 5, 6, 2, rng=8)                 # 480 rows
    assert not isinstance(load_frame(df, SUBJ, backend="duckdb"), CompressedFrame)
    dense = load_frame(df, SUBJ, backend="duckdb", options={"layout": "dense"})
    assert not isinstance(dense, CompressedFrame)
    monkeypatch.setattr(columns_mod, "DENSE_MAX_ENTRIES", len(df) - 1)
    import mixrank.io.backend_duckdb as bd
    monkeypatch.setattr(bd, "DENSE_MAX_ENTRIES", len(df) - 1)
    auto = load_frame(df, SUBJ, backend="duckdb")             # above the rule: compressed
    assert isinstance(auto, CompressedFrame)
    assert_same_frame(dense, auto)
    with pytest.raises(DataError, match=r"layout.*'sparse'.*expected one of"):
        load_frame(df, SUBJ, backend="duckdb", options={"layout": "sparse"})


def test_duplicates_in_several_models_name_the_first_cell_like_pandas():
    df = mixrank.simulate(4, 5, 6, 2, rng=12)
    last = df[df["model"] == df["model"].unique()[-1]]
    first = df[df["model"] == df["model"].unique()[0]]
    df = pd.concat([df, last.iloc[[3, 0]], first.iloc[[40]]])     # 3 repeated (model, cell)s
    with pytest.raises(DataError) as ref:
        load_frame(df, FULL)
    with pytest.raises(DataError) as got:
        load_frame(df, FULL, backend="duckdb", options=OPTS)
    assert str(got.value) == str(ref.value) and str(ref.value).startswith("3 (model, cell)")


def test_key_space_limits(monkeypatch, tmp_path):
    """64-bit cell keys give the same frame; a key space beyond the limit falls back to dense."""
    import mixrank.io.backend_duckdb_columns as bc

    df = mixrank.simulate(4, 5, 6, 2, missing=0.2, rng=21)
    ref = load_frame(df, FULL)
    monkeypatch.setattr(bc, "UINT32_KEY_SPACE", 0)              # int64 keys while streaming
    got = load_frame(df, FULL, backend="duckdb", options=OPTS)
    assert isinstance(got, CompressedFrame)
    assert_same_frame(ref, got)
    monkeypatch.setattr(bc, "MAX_KEY_SPACE", 10)                # cell keys would overflow
    dense = load_frame(df, FULL, backend="duckdb", options=OPTS)
    assert not isinstance(dense, CompressedFrame)
    assert_same_frame(ref, dense)
