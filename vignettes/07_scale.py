"""
Scaling out: fits from parquet with DuckDB and on a Dask cluster
================================================================

A mixrank fit depends on the data only through the cell scores: for every
(model, cell) the mean score over its rows, and how many rows that was.
Everything else -- per-level sums, the model x model cross-products, each
pair's REML fit -- is computed from the small cells x models matrix.  So the
rows never have to be in memory at once: a database or a cluster can run the
`GROUP BY (pairing keys, model)` and hand mixrank only the aggregated table.

`mixrank.fit(..., backend=...)` chooses where that happens:

.. list-table::
   :header-rows: 1

   * - backend
     - reads
     - where the rows are reduced
   * - `"pandas"` (default)
     - a table, a file, a folder or glob of parquet files
     - in memory
   * - `"duckdb"`
     - parquet file / folder / glob, or a table
     - embedded DuckDB, out of core (spills to disk)
   * - `"dask"`
     - parquet file / folder / glob, a table, or a Dask DataFrame
     - dask.dataframe on any Dask cluster


All three give the same `FitResult`.  The DuckDB and Dask backends need the
`scale` extra: `pip install 'mixrank[scale]'`.  This vignette simulates a
small benchmark with repeated generations, writes it as partitioned parquet,
and fits it with each backend, the Dask one on a tiny local cluster.
"""

# %%
import logging
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import dask.dataframe as dd
import numpy as np
from distributed import Client, LocalCluster

import mixrank
from mixrank.io.backends import aggregate_cells
from mixrank.report import plot_contrasts

FORMULA = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"

df = mixrank.simulate(8, 12, 30, 4, samples=5, rng=2026)
print(df.shape)
assert df.shape[0] == 57_600 and df["model"].nunique() == 8   # the prose below, checked
df.head()

# %%
# Eight models, 12 subjects x 30 questions x 4 prompts (1,440 cells), and five
# sampled generations per (model, cell): 57,600 rows.  Evaluation logs usually
# arrive as one file per model (or per run), so we write them that way: a
# folder of parquet files, a pattern any of the backends can read.

# %%
workdir = Path(tempfile.mkdtemp(prefix="mixrank-vignette-"))
folder = workdir / "runs"
folder.mkdir()
for model, part in df.groupby("model"):
    part.to_parquet(folder / f"{model}.parquet", index=False)
print(sorted(p.name for p in folder.iterdir()))

# %%
# Reference: the pandas backend
# -----------------------------
#
# The default backend reads the files into memory (here the whole folder) and
# builds the frame from the rows.  `replicate="sample"` tells mixrank that the
# five rows of a (model, cell) are repeated generations, so the cell score is
# their mean.

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.SingularFitWarning)
    ref = mixrank.fit(FORMULA, folder, replicate="sample")
print(ref)
print(ref.frame.summary_text())

# %%
# DuckDB: out of core from parquet
# --------------------------------
#
# With `backend="duckdb"` an embedded DuckDB scans the files twice -- once for
# score checks and the distinct values of every key, once for the `GROUP BY`
# of integer key codes -- and returns one row per (model, cell).  DuckDB
# spills to disk when it reaches `memory_limit`, so the source can be far
# larger than memory.  A glob (`"runs/*.parquet"`) works as well as a folder.

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.SingularFitWarning)
    res_duck = mixrank.fit(FORMULA, str(folder / "*.parquet"), backend="duckdb",
                           replicate="sample",
                           backend_options={"memory_limit": "512MB", "threads": 2})
cells = aggregate_cells(folder, FORMULA, backend="duckdb", replicate="sample")
print(f"{cells.n_rows:,} rows -> {len(cells):,} (model, cell) groups")
assert (cells.n_rows, len(cells)) == (57_600, 11_520)

# %%
# `aggregate_cells` is the aggregation step on its own: the engine sees 11,520
# groups instead of 57,600 rows.  With many generations per cell (or many
# rows per cell for any other reason) the reduction is what makes a fit on
# hundreds of millions of rows possible on a laptop.
#
# Dask: on a cluster
# ------------------
#
# With `backend="dask"` the same two passes run with dask.dataframe on a Dask
# cluster.  Pass `client=` a `distributed.Client`, a cluster object, or the
# address of a running scheduler; without it, dask's current scheduler is
# used.  Here we start a tiny local cluster of two workers as in-process
# threads, so that the script runs as is; worker processes
# (`LocalCluster(n_workers=2)`) work the same, but a script that starts them
# needs the usual `if __name__ == "__main__":` guard.

# %%
logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)  # logs each shuffle as WARNING
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                       dashboard_address=None)
client = Client(cluster)
print(f"{len(client.scheduler_info()['workers'])} workers at {cluster.scheduler_address}")

with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.SingularFitWarning)
    t0 = time.perf_counter()
    res_dask = mixrank.fit(FORMULA, folder, backend="dask", client=client, replicate="sample")
    print(f"dask fit in {time.perf_counter() - t0:.1f} s")

# %%
# A Dask DataFrame is a source too -- for instance one read from object
# storage, filtered or joined before the fit.  Filtering to the first two
# prompts, say:

# %%
ddf = dd.read_parquet(str(folder))
ddf = ddf[ddf["prompt"].isin(["p1", "p2"])]
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.SingularFitWarning)
    res_sub = mixrank.fit(FORMULA, ddf, backend="dask", client=client, replicate="sample")
print(res_sub.frame.summary_text())

# %%
# The same result from every backend
# ----------------------------------
#
# The aggregated table is encoded exactly as the rows are (sorted levels,
# the same cell order), so the three fits agree to the last few bits (the
# only difference is the order in which the five samples of a cell are
# summed):

# %%
cols = ["estimate", "std_error", "df", "p_value"]
for name, res in [("duckdb", res_duck), ("dask", res_dask)]:
    diff = np.abs(res.contrasts()[cols].to_numpy() - ref.contrasts()[cols].to_numpy())
    rel = diff / np.abs(ref.contrasts()[cols].to_numpy())
    print(f"{name:>6} vs pandas: max relative difference {rel.max():.1e}; rank intervals equal: "
          f"{res.rank_intervals().equals(ref.rank_intervals())}")
    assert rel.max() < 1e-8 and res.rank_intervals().equals(ref.rank_intervals())   # the same

# %%
# The contrasts of the Dask fit, drawn as the report draws them:

# %%
ax = plot_contrasts(res_dask, title="Dask backend: contrasts with 95% CI")
ref.contrasts().head()

# %%
# A cluster that cannot be reached
# --------------------------------
#
# A scheduler address is tried for `backend_options={"timeout": ...}` seconds
# (default 10); if nothing answers, the fit stops with a `DataError` that says
# so, instead of hanging:

# %%
try:
    mixrank.fit(FORMULA, folder, backend="dask", client="tcp://127.0.0.1:1",
                replicate="sample", backend_options={"timeout": 1})
except mixrank.DataError as err:
    print(err)

# %%
# On a real cluster, start a scheduler and workers, then point the fit at the
# scheduler.  A folder or glob is read by the workers, so it must be visible
# to them at the same path (a shared file system); for object storage, read
# a Dask DataFrame and pass that:
#
# .. code-block:: python
#
#    # shell:  dask scheduler                    (on the scheduler machine)
#    #         dask worker tcp://10.0.0.5:8786   (on each worker machine)
#    res = mixrank.fit(FORMULA, "/shared/evals/*.parquet", backend="dask",
#                      client="tcp://10.0.0.5:8786", replicate="sample")
#    ddf = dd.read_parquet("s3://bucket/evals/")   # needs s3fs on the workers
#    res = mixrank.fit(FORMULA, ddf, backend="dask", client="tcp://10.0.0.5:8786",
#                      replicate="sample")
#
#
# At scale
# --------
#
# `benchmarks/bench_scale.py` writes a seeded 100M-row benchmark (50 models x
# 200,000 cells x 10 samples, one parquet file per model) and fits all 1,225
# pairs with DuckDB (memory limit 1 GB, 2 threads) and with Dask on a local
# cluster of 2 worker processes, printing rows per second and peak memory;
# the README lists the figures measured on a 2-core machine.  The bound is set
# by cells x models, not rows: the engine always holds the dense cells x
# models score matrix, so out-of-core aggregation pays when rows outnumber
# (model, cell) pairs, as with repeated generations.

# %%
client.close()
cluster.close()
shutil.rmtree(workdir)
