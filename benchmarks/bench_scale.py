"""Out-of-core and distributed benchmark: sufficient statistics at scale (pandas, DuckDB, Dask).

    python benchmarks/bench_scale.py             # 100M rows + the 5M-row side by side
    python benchmarks/bench_scale.py --small     # 400k + 100k rows (quick check)
    python benchmarks/bench_scale.py --keep      # keep the parquet files for a rerun
    python benchmarks/bench_scale.py --entries-only               # Part 3 alone: 100M rows
    python benchmarks/bench_scale.py --entries-only --rows 10e6   # Part 3 at 10M rows

Part 1 writes a seeded simulated benchmark of 100M rows as partitioned
parquet (50 models x 50 subjects x 100 questions x 40 prompts x 10 samples:
one file per model, written one model at a time, never 100M rows in memory)
under ``benchmarks/out/scale/`` (gitignored), then fits

    correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)

with ``replicate="sample"`` (cell score = mean of the 10 samples) from those
files with the DuckDB backend (memory_limit 1GB, 2 threads) and with Dask on
a LocalCluster of 2 worker processes, each run in a fresh subprocess.  It
prints rows per second of the aggregation (source -> Frame), the fit time of
all 1,225 pairs and the peak resident memory (``ru_maxrss``) of the process
(and, for Dask, of each worker).

Why samples: this part measures aggregation (rows >> entries); the pandas
and Dask backends hand the engine the dense cells x models score matrix,
so their memory bound is set by cells x models, not by rows (Part 3 covers
one row per entry with DuckDB's compressed frame).  In the dense layout,
100M rows with one row per (model, cell) are 100M matrix entries: 0.8 GB
for the float64 scores, 0.8 GB for the replicate counts and as much again
for each temporary of the sufficient statistics (measured: 10M rows with
one sample, peak 1.36 GB with DuckDB's dense layout, 1.75 GB with
pandas).  Out-of-core
aggregation pays when rows outnumber (model, cell) entries, as with repeated
generations: here 100M rows reduce to 200,000 cells x 50 models = 10M entries.

Part 2 repeats the comparison on a 5M-row design that fits in memory
(25 models x 20 subjects x 100 questions x 10 prompts x 10 samples) for
pandas, DuckDB and Dask side by side, and checks that the three fits agree.

Part 3 (``benchmarks/_entries.py``) is the case Part 1 avoids: one row per
(model, cell), 100M rows = 50 models x 2.5M cells with 20% of each model's
cells missing, written by DuckDB and fitted from parquet with the DuckDB
backend's compressed frame (scores model by model, docs/scale.md).  It first
runs the dense and the compressed layouts side by side at ``--peer-rows``
(where the dense matrix still fits; ratios and agreement), then the
compressed layout alone at ``--rows``, printing wall times, pairs fitted and
the peak RSS of the process (DuckDB included) and of the engine workers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _entries import part3, run_entries

FORMULA = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
OUT = Path(__file__).resolve().parent / "out" / "scale"
BIG = dict(models=50, subjects=50, questions=100, prompts=40, samples=10)     # 100M rows
MID = dict(models=25, subjects=20, questions=100, prompts=10, samples=10)     # 5M rows
SMALL_BIG = dict(models=10, subjects=10, questions=50, prompts=8, samples=10)   # 400k rows
SMALL_MID = dict(models=10, subjects=10, questions=20, prompts=5, samples=10)   # 100k rows
DUCKDB_OPTIONS = {"memory_limit": "1GB", "threads": 2}
BOUND_MB = 2048  # the target bound on the DuckDB run's peak resident memory


def n_rows(shape: dict) -> int:
    return (shape["models"] * shape["subjects"] * shape["questions"] * shape["prompts"]
            * shape["samples"])


def write_benchmark(folder: Path, *, models: int, subjects: int, questions: int, prompts: int,
                    samples: int, seed: int = 20260811) -> int:
    """Write the simulated benchmark as one parquet file per model; return the row count.

    Model m's latent score on cell (subject s, question q, prompt p) is
    ``eff_m + base_q + a_ms + b_mq + c_mp`` (sd 1.2, 0.3, 0.6, 0.15 for the
    question base and the model x subject, question, prompt interactions), and
    each of the ``samples`` generations is correct with probability
    ``logistic(latent)``.  Key columns are dictionary-encoded strings, as
    evaluation logs usually are.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    Q = subjects * questions
    n_cells = Q * prompts
    subj_of_q = np.repeat(np.arange(subjects), questions)
    q_idx = np.repeat(np.arange(Q), prompts)
    p_idx = np.tile(np.arange(prompts), Q)
    base_q = rng.normal(0, 1.2, Q)
    eff = np.linspace(0.5, -0.5, models)

    def dict_col(codes: np.ndarray, labels: list[str]) -> pa.DictionaryArray:
        return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(labels))

    subj_labels = [f"subject_{i:03d}" for i in range(subjects)]
    q_labels = [f"q{i:06d}" for i in range(Q)]
    p_labels = [f"prompt_{i:03d}" for i in range(prompts)]
    rows_q = np.repeat(q_idx, samples)
    rows_p = np.repeat(p_idx, samples)
    rows_s = np.repeat(subj_of_q[q_idx], samples)
    sample = np.tile(np.arange(samples, dtype=np.int8), n_cells)
    total = 0
    for m in range(models):
        eta = (eff[m] + base_q[q_idx] + rng.normal(0, 0.3, subjects)[subj_of_q[q_idx]]
               + rng.normal(0, 0.6, Q)[q_idx] + rng.normal(0, 0.15, prompts)[p_idx])
        prob = np.repeat(1.0 / (1.0 + np.exp(-eta)), samples)
        y = (rng.random(len(prob)) < prob).astype(np.int8)
        table = pa.table({
            "model": dict_col(np.zeros(len(y)), [f"model_{m:03d}"]),
            "subject": dict_col(rows_s, subj_labels),
            "question": dict_col(rows_q, q_labels),
            "prompt": dict_col(rows_p, p_labels),
            "sample": sample,
            "correct": y,
        })
        pq.write_table(table, folder / f"part-{m:04d}.parquet", row_group_size=1_000_000)
        total += len(y)
        del table, y, prob, eta
    return total


# ---------------------------------------------------------------- one run
def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def run_one(backend: str, folder: str, pairs: str) -> dict:
    """Aggregate and fit in this process; return timings and peak memory (MB)."""
    import mixrank
    from mixrank.io.backends import load_frame

    out: dict = {"backend": backend}
    cluster = client = None
    kw: dict = {}
    if backend == "dask":
        from distributed import Client, LocalCluster

        t = time.perf_counter()
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None, memory_limit="4GiB")
        client = Client(cluster, set_as_default=False)
        out["cluster_start_s"] = time.perf_counter() - t
        kw = {"client": client}
    elif backend == "duckdb":
        kw = {"options": DUCKDB_OPTIONS}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load_frame(folder, FORMULA, backend=backend, replicate="sample", **kw)
    t1 = time.perf_counter()
    out.update(rows=frame.n_rows, cells=frame.n_cells, models=frame.n_models,
               aggregate_s=t1 - t0, rows_per_s=frame.n_rows / (t1 - t0),
               peak_after_frame_mb=_peak_mb())
    if backend == "dask":
        workers = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        out["worker_peak_mb"] = sorted(workers.values())
        client.close()
        cluster.close()
    sel = None
    t1 = time.perf_counter()
    if pairs == "adjacent":
        sel = [(frame.models[i], frame.models[i + 1]) for i in range(frame.n_models - 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(FORMULA, frame, pairs=sel)
    t2 = time.perf_counter()
    c = res.contrasts()
    out.update(pairs=len(res.pairs), fit_s=t2 - t1, total_s=t2 - t0, peak_mb=_peak_mb(),
               estimate=c["estimate"].tolist(), std_error=c["std_error"].tolist(),
               df=c["df"].tolist())
    return out


def spawn(backend: str, folder: Path, pairs: str) -> dict:
    """Run :func:`run_one` in a fresh Python process (so ru_maxrss is this run's alone)."""
    cmd = [sys.executable, __file__, "--run", backend, "--folder", str(folder), "--pairs", pairs]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{backend} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fmt(r: dict) -> str:
    extra = ""
    if "worker_peak_mb" in r:
        extra = ("  workers " + " / ".join(f"{w:,.0f}" for w in r["worker_peak_mb"]) + " MB"
                 f"  (cluster start {r['cluster_start_s']:.1f} s, not counted)")
    return (f"  {r['backend']:<7} {r['rows']:>12,} rows  aggregate {r['aggregate_s']:7.1f} s "
            f"= {r['rows_per_s'] / 1e6:6.2f} M rows/s   fit {r['pairs']:>5,} pairs "
            f"{r['fit_s']:6.1f} s   peak RSS {r['peak_mb']:7,.0f} MB{extra}")


def agreement(results: list[dict]) -> str:
    ref = results[0]
    lines = []
    for r in results[1:]:
        worst = 0.0
        for key in ("estimate", "std_error", "df"):
            a, b = np.asarray(ref[key]), np.asarray(r[key])
            worst = max(worst, float(np.max(np.abs(a - b) / np.maximum(np.abs(a), 1e-300))))
        lines.append(f"  {r['backend']} vs {ref['backend']}: max relative difference of estimate, "
                     f"std_error, df over {len(ref['estimate'])} pairs = {worst:.1e}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true", help="small sizes (a quick check)")
    ap.add_argument("--keep", action="store_true", help="keep (and reuse) the parquet files")
    ap.add_argument("--pairs", default="all",
                    help="all, adjacent, or a number n (the first n adjacent pairs)")
    ap.add_argument("--entries-only", action="store_true", help="Part 3 alone")
    ap.add_argument("--rows", type=float, default=100e6, help="Part 3 rows (default 100M)")
    ap.add_argument("--peer-rows", type=float, default=10e6,
                    help="Part 3 dense-vs-compressed rows (0: skip)")
    ap.add_argument("--peer-pairs", default="all", help="pairs of the Part 3 peer runs")
    ap.add_argument("--workers", type=int, default=None, help="engine workers (default auto)")
    ap.add_argument("--run-entries", help=argparse.SUPPRESS)
    ap.add_argument("--skip-dask-big", action="store_true", help="Part 1 with DuckDB only")
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--folder", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        print(json.dumps(run_one(args.run, args.folder, args.pairs)))
        return
    if args.run_entries:
        print(json.dumps(run_entries(args.folder, args.run_entries, args.pairs, args.workers)))
        return
    if args.entries_only:
        part3(OUT, int(args.rows), int(args.peer_rows), args.pairs, args.peer_pairs, args.keep,
              args.workers)
        return
    big, mid = (SMALL_BIG, SMALL_MID) if args.small else (BIG, MID)
    print(f"machine: {os.cpu_count()} cores; DuckDB options {DUCKDB_OPTIONS}; Dask LocalCluster "
          "2 workers x 1 thread")
    for part, shape, backends in [("Part 1", big, ["duckdb", "dask"]),
                                  ("Part 2", mid, ["pandas", "duckdb", "dask"])]:
        if part == "Part 1" and args.skip_dask_big:
            backends = ["duckdb"]
        folder = OUT / ("big" if part == "Part 1" else "mid") / ("small" if args.small else "full")
        label = " x ".join(f"{v} {k}" for k, v in shape.items())
        print(f"== {part}: {n_rows(shape):,} rows ({label}) ==")
        if args.keep and folder.exists() and any(folder.glob("*.parquet")):
            print(f"  reusing {folder}")
        else:
            t = time.perf_counter()
            rows = write_benchmark(folder, **shape)
            size = sum(f.stat().st_size for f in folder.glob("*.parquet"))
            print(f"  wrote {rows:,} rows to {len(list(folder.glob('*.parquet')))} parquet files "
                  f"({size / 2**20:,.0f} MB) in {time.perf_counter() - t:.1f} s")
        results = []
        for be in backends:
            r = spawn(be, folder, args.pairs)
            results.append(r)
            print(fmt(r), flush=True)
        print(agreement(results))
        duck = next(r for r in results if r["backend"] == "duckdb")
        print(f"  DuckDB peak RSS {duck['peak_mb']:,.0f} MB "
              f"({'within' if duck['peak_mb'] <= BOUND_MB else 'ABOVE'} the {BOUND_MB:,} MB bound)")
        if not args.keep:
            shutil.rmtree(folder)
    part3(OUT, int(args.rows), int(args.peer_rows), args.pairs, args.peer_pairs, args.keep,
          args.workers)


if __name__ == "__main__":
    main()
