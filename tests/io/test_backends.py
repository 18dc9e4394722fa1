"""Out-of-core (DuckDB) and distributed (Dask) backends against the pandas backend.

Reference: the pandas backend (``build_frame`` on the rows), which the other
tests validate against lme4.  The DuckDB and Dask backends must give the
same frame (identical encoding; replicate means equal up to summation
order) and hence the same contrasts, variance components and rank
intervals within 1e-10 relative.  Dask runs on a ``LocalCluster`` of two
worker processes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank import DataError, MissingDataWarning
from mixrank.io.backends import aggregate_cells, load_frame, resolve_source

pytest.importorskip("duckdb")
pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

RTOL = 1e-10
FULL = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
SUBJ = "correct ~ model + (1|subject)"
OUT_OF_CORE = ("duckdb", "dask")


@pytest.fixture(scope="module")
def client():
    """A local Dask cluster of 2 worker processes (one thread each)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dashboard port messages
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, memory_limit="1GiB")
    c = distributed.Client(cluster, set_as_default=False)
    try:
        assert len(c.scheduler_info()["workers"]) == 2
        yield c
    finally:
        c.close()
        cluster.close()


def write_parts(df: pd.DataFrame, folder, n_files: int = 3, seed: int = 0):
    """Shuffle the rows and write them as ``n_files`` parquet files."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = df.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    for i, idx in enumerate(np.array_split(np.arange(len(rows)), n_files)):
        rows.iloc[idx].to_parquet(folder / f"part-{i:03d}.parquet", index=False)
    return folder


def fit_with(backend, source, formula, client=None, **kw):
    opts = {"threads": 2, "memory_limit": "512MB"} if backend == "duckdb" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit(formula, source, backend=backend,
                           client=client if backend == "dask" else None,
                           backend_options=opts, **kw)


def assert_same_frame(a, b, exact=True):
    assert a.models == b.models and a.pair_by == b.pair_by
    assert a.n_rows == b.n_rows and a.n_dropped == b.n_dropped and a.binary == b.binary
    np.testing.assert_array_equal(a.observed, b.observed)
    np.testing.assert_array_equal(a.replicates, b.replicates)
    if exact:
        np.testing.assert_array_equal(a.scores, b.scores)
    else:
        np.testing.assert_allclose(a.scores, b.scores, rtol=1e-14, atol=1e-15)
    pd.testing.assert_frame_equal(a.cells.astype(str), b.cells.astype(str))
    for t in a.term_codes:
        np.testing.assert_array_equal(a.term_codes[t], b.term_codes[t])
        np.testing.assert_array_equal(a.term_labels[t], b.term_labels[t])


def assert_same_fit(ref, res):
    """Contrasts, variance components and rank intervals equal within 1e-10 relative."""
    assert_same_frame(ref.frame, res.frame, exact=ref.frame.replicate is None)
    num = ["estimate", "std_error", "df", "statistic", "p_value", "ci_lower", "ci_upper"]
    c0, c1 = ref.contrasts(), res.contrasts()
    pd.testing.assert_frame_equal(c0[["model_a", "model_b", "n"]], c1[["model_a", "model_b", "n"]])
    np.testing.assert_allclose(c1[num].to_numpy(), c0[num].to_numpy(), rtol=RTOL, atol=0)
    v0, v1 = ref.variance_components(), res.variance_components()
    pd.testing.assert_frame_equal(v0[["model_a", "model_b", "group"]],
                                  v1[["model_a", "model_b", "group"]])
    np.testing.assert_allclose(v1[["variance", "std_dev", "share"]].to_numpy(),
                               v0[["variance", "std_dev", "share"]].to_numpy(), rtol=RTOL, atol=0)
    for coverage in ("marginal", "simultaneous"):
        pd.testing.assert_frame_equal(ref.rank_intervals(coverage=coverage),
                                      res.rank_intervals(coverage=coverage),
                                      check_exact=False, rtol=RTOL, atol=0)


# ------------------------------------------------------------ equality --
@pytest.mark.parametrize("backend", OUT_OF_CORE)
def test_chembench_equal_to_pandas(shared_data, tmp_path, client, backend):
    d = shared_data("chembench", reruns=True)  # 25 models; 7 also re-run at temperature 1
    folder = write_parts(d, tmp_path / "chembench", n_files=4)
    ref = fit_with("pandas", d, SUBJ)
    assert len(ref.pairs) == 300 and not ref.frame.observed.all()
    assert_same_fit(ref, fit_with(backend, folder, SUBJ, client=client))


@pytest.mark.parametrize("backend", OUT_OF_CORE)
def test_simulated_unbalanced_equal_to_pandas(tmp_path, client, backend):
    df = mixrank.simulate(6, 8, [4, 9, 5, 12, 7, 3, 10, 6], 3, missing=0.25, rng=20260811)
    folder = write_parts(df, tmp_path / "sim")
    ref = fit_with("pandas", df, FULL)
    assert not ref.frame.observed.all()
    res = fit_with(backend, str(folder / "part-*.parquet"), FULL, client=client)
    assert_same_fit(ref, res)


@pytest.mark.parametrize("backend", OUT_OF_CORE)
def test_replicates_equal_to_pandas(tmp_path, client, backend):
    df = mixrank.simulate(5, 6, [3, 6, 4, 8, 5, 7], 2, samples=4, missing=0.2, rng=99)
    df = df[np.random.default_rng(1).random(len(df)) > 0.1]  # unequal replicate counts
    folder = write_parts(df, tmp_path / "rep")
    ref = fit_with("pandas", df, FULL, replicate="sample")
    assert ref.frame.replicates.max() == 4 and 0 < ref.frame.replicates[ref.frame.observed].min() < 4
    assert_same_fit(ref, fit_with(backend, folder, FULL, client=client, replicate="sample"))


@pytest.mark.parametrize("backend", OUT_OF_CORE)
def test_many_replicate_values_use_exact_distinct_count(tmp_path, client, backend):
    # 70 distinct replicate labels (> 64: the bit-sum check gives way to a distinct count)
    df = mixrank.simulate(3, 3, 4, 1, samples=70, family="gaussian", sd_residual=1.0, rng=5)
    df["sample"] = "s" + df["sample"].astype(str)
    folder = write_parts(df, tmp_path / "many")
    ref = load_frame(df, SUBJ, replicate="sample")
    got = load_frame(folder, SUBJ, backend=backend, replicate="sample",
                     client=client if backend == "dask" else None)
    assert_same_frame(ref, got, exact=False)
    assert not got.binary and (got.replicates == 70).all()
    bad = df.copy()
    bad.loc[bad.index[5], "sample"] = bad.loc[bad.index[4], "sample"]  # same model and cell
    write_parts(bad, tmp_path / "many_bad")
    with pytest.raises(DataError, match="repeat within 1 "):
        load_frame(tmp_path / "many_bad", SUBJ, backend=backend, replicate="sample",
                   client=client if backend == "dask" else None)


@pytest.mark.parametrize("backend", OUT_OF_CORE)
def test_missing_scores_dropped_like_pandas(tmp_path, client, backend):
    df = mixrank.simulate(4, 5, 6, 2, rng=3).astype({"correct": float})
    rng = np.random.default_rng(4)
    df.loc[rng.choice(len(df), 25, replace=False), "correct"] = np.nan
    # a question whose only score is missing vanishes from the levels, as in pandas
    df.loc[df["question"] == df["question"].iloc[0], "correct"] = np.nan
    folder = write_parts(df, tmp_path / "na")
    with pytest.warns(MissingDataWarning):
        ref = load_frame(df, FULL, na="drop")
    with pytest.warns(MissingDataWarning, match=f"dropped {ref.n_dropped} row"):
        got = load_frame(folder, FULL, backend=backend, na="drop",
                         client=client if backend == "dask" else None)
    assert ref.n_dropped > 25
    assert_same_frame(ref, got)
    with pytest.raises(DataError, match=f"{ref.n_dropped} missing value.*na='drop'"):
        load_frame(folder, FULL, backend=backend, client=client if backend == "dask" else None)


@pytest.mark.parametrize("backend", OUT_OF_CORE)
def test_in_memory_sources(client, backend):
    df = mixrank.simulate(4, 5, 6, 2, rng=8)
    ref = load_frame(df, FULL)
    assert_same_frame(ref, load_frame(df, FULL, backend=backend,
                                      client=client if backend == "dask" else None))
    pa = pytest.importorskip("pyarrow")
    if backend == "duckdb":
        assert_same_frame(ref, load_frame(pa.Table.from_pandas(df), FULL, backend="duckdb"))


def test_dask_dataframe_source(client):
    dd = pytest.importorskip("dask.dataframe")
    df = mixrank.simulate(4, 5, 6, 2, rng=8)
    ddf = dd.from_pandas(df, npartitions=3)
    ref = fit_with("pandas", df, FULL)
    assert_same_fit(ref, fit_with("dask", ddf, FULL, client=client))
    assert_same_frame(ref.frame, load_frame(ddf, FULL))  # pandas backend computes it
    with pytest.raises(DataError, match="backend='dask'"):
        load_frame(ddf, FULL, backend="duckdb")


def test_scheduler_address_and_cluster_object(client):
    df = mixrank.simulate(3, 4, 5, 1, rng=2)
    ref = load_frame(df, SUBJ)
    assert_same_frame(ref, load_frame(df, SUBJ, backend="dask", client=client.scheduler.address))
    assert_same_frame(ref, load_frame(df, SUBJ, backend="dask", client=client.cluster))


@pytest.mark.parametrize("backend", ("pandas",) + OUT_OF_CORE)
def test_hive_partitioned_folder(tmp_path, client, backend):
    df = mixrank.simulate(4, 5, 6, 2, rng=12)
    df.to_parquet(tmp_path / "hive", partition_cols=["model"], index=False)
    ref = load_frame(df, FULL)
    got = load_frame(tmp_path / "hive", FULL, backend=backend,
                     client=client if backend == "dask" else None)
    assert_same_frame(ref, got)


def test_resolve_source_kinds(tmp_path):
    df = mixrank.simulate(2, 2, 2, 1, rng=1)
    write_parts(df, tmp_path / "f", n_files=2)
    (tmp_path / "f" / "_SUCCESS").write_text("")
    assert resolve_source(tmp_path / "f").files == tuple(
        str(tmp_path / "f" / f"part-00{i}.parquet") for i in range(2))
    assert resolve_source(str(tmp_path / "f" / "*.parquet")).kind == "parquet"
    assert resolve_source(tmp_path / "f" / "part-000.parquet").files[0].endswith("part-000.parquet")
    assert resolve_source(df).kind == "table"


# -------------------------------------------------------------- errors --
@pytest.mark.parametrize("backend", ("pandas",) + OUT_OF_CORE)
def test_source_does_not_exist(tmp_path, backend):
    with pytest.raises(DataError, match="does not exist"):
        mixrank.fit(SUBJ, tmp_path / "nowhere", backend=backend)
    with pytest.raises(DataError, match="matches no parquet file"):
        mixrank.fit(SUBJ, str(tmp_path / "nowhere" / "*.parquet"), backend=backend)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="contains no long-format file"):
        mixrank.fit(SUBJ, tmp_path / "empty", backend=backend)


@pytest.mark.parametrize("backend", ("pandas",) + OUT_OF_CORE)
def test_unreadable_parquet(tmp_path, client, backend):
    (tmp_path / "x.parquet").write_bytes(b"not a parquet file" * 10)
    with pytest.raises(DataError, match="could not read 1 parquet file"):
        mixrank.fit(SUBJ, tmp_path, backend=backend, client=client if backend == "dask" else None)


@pytest.mark.parametrize("backend", ("pandas",) + OUT_OF_CORE)
def test_schema_missing_formula_column(tmp_path, client, backend):
    df = mixrank.simulate(3, 4, 5, 1, rng=2).rename(columns={"subject": "topic"})
    folder = write_parts(df, tmp_path / "schema", n_files=2)
    with pytest.raises(DataError) as e:
        mixrank.fit(SUBJ, folder, backend=backend, client=client if backend == "dask" else None)
    msg = str(e.value)
    assert "'subject'" in msg and "random-term grouping" in msg
    for col in ("model", "topic", "question", "prompt", "correct"):
        assert f"'{col}'" in msg


def test_unreachable_cluster():
    df = mixrank.simulate(3, 4, 5, 1, rng=2)
    with pytest.raises(DataError, match="could not reach the Dask scheduler at "
                                        "'tcp://127.0.0.1:1' within 1 s"):
        mixrank.fit(SUBJ, df, backend="dask", client="tcp://127.0.0.1:1",
                    backend_options={"timeout": 1})


def test_cluster_without_workers():
    df = mixrank.simulate(3, 4, 5, 1, rng=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None)
    try:
        with pytest.raises(DataError, match="has no worker after 0.5 s"):
            load_frame(df, SUBJ, backend="dask", client=cluster.scheduler_address,
                       options={"timeout": 0.5})
    finally:
        cluster.close()


def test_bad_backend_arguments(tmp_path):
    df = mixrank.simulate(3, 4, 5, 1, rng=2)
    with pytest.raises(mixrank.OptionError, match="backend='spark'; expected one of"):
        mixrank.fit(SUBJ, df, backend="spark")
    for backend in ("pandas", "duckdb"):
        with pytest.raises(mixrank.OptionError, match="client= is only used by backend='dask'"):
            mixrank.fit(SUBJ, df, backend=backend, client="tcp://127.0.0.1:1")
    (tmp_path / "x.csv").write_text("a\n1\n")
    with pytest.raises(DataError, match="backend='pandas' for other file types"):
        mixrank.fit(SUBJ, tmp_path / "x.csv", backend="duckdb")
    with pytest.raises(mixrank.OptionError, match="expected 'duckdb' or 'dask'"):
        aggregate_cells(df, SUBJ, backend="pandas")


def _bad(kind: str) -> pd.DataFrame:
    df = mixrank.simulate(3, 4, 5, 1, rng=2)
    if kind == "duplicate":
        return pd.concat([df, df.iloc[[7]]])
    if kind == "key":
        df.loc[df.index[3], "subject"] = None
        return df
    df = df.astype({"correct": str if kind == "text" else float})
    df.loc[df.index[4], "correct"] = {"text": "yes", "inf": np.inf, "nan": np.nan}[kind]
    return df


MALFORMED = [   # each kind of bad data of _bad() and the message every backend gives for it
    ("duplicate", r"1 \(model, cell\) combination\(s\) have several rows.*replicate='sample'"),
    ("key", "column 'subject' has a missing value"),
    ("text", r"must be numeric, but 1 value\(s\).*'yes'"),
    ("inf", r"has 1 infinite value"),
    ("nan", r"has 1 missing value\(s\)"),
]


@pytest.mark.parametrize("backend", OUT_OF_CORE)
@pytest.mark.parametrize("kind, pattern", MALFORMED)
def test_malformed_data_errors(tmp_path, client, backend, kind, pattern):
    df = _bad(kind)
    with pytest.raises(DataError):  # the reference: the pandas path rejects it too
        load_frame(df, SUBJ)
    folder = write_parts(df, tmp_path / kind, n_files=2)
    with pytest.raises(DataError, match=pattern):
        load_frame(folder, SUBJ, backend=backend, client=client if backend == "dask" else None)


@pytest.mark.parametrize("backend", OUT_OF_CORE)
def test_repeated_replicate_value(tmp_path, client, backend):
    df = mixrank.simulate(3, 4, 5, 1, samples=3, rng=2)
    df.loc[df.index[1], "sample"] = df.loc[df.index[0], "sample"]
    with pytest.raises(DataError, match="appears more than once"):
        load_frame(df, SUBJ, replicate="sample")
    folder = write_parts(df, tmp_path / "rep", n_files=2)
    with pytest.raises(DataError, match=r"'sample' values repeat within 1 \(model, cell\)"):
        load_frame(folder, SUBJ, backend=backend, replicate="sample",
                   client=client if backend == "dask" else None)
