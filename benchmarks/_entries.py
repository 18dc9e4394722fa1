"""bench_scale.py, Part 3: one row per (model, cell), the compressed frame (docs/scale.md).

50 models x C cells (50 subjects x Q questions x 100 prompts), each model
missing a seeded random 20% of the cells, one 0/1 row per (model, cell):
``rows = 0.8 x 50 x C``.  The parquet file is written by DuckDB itself from
``range()`` (hash-based seeded draws), so generation streams and never holds
the rows in memory.  Each fit runs in a fresh subprocess that records its
own peak resident memory (``ru_maxrss``: Python, numpy and DuckDB's memory
together) and that of its forked engine workers.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

MODELS, SUBJECTS, PROMPTS, MISSING = 50, 50, 100, 0.2
FORMULA = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
DUCKDB = {"memory_limit": "1GB", "threads": 2}
BOUND_MB = 4096


def shape(rows: int) -> dict:
    """Questions per subject and cells for about ``rows`` rows."""
    q = max(1, round(rows / ((1 - MISSING) * MODELS * SUBJECTS * PROMPTS)))
    return dict(models=MODELS, subjects=SUBJECTS, questions=q, prompts=PROMPTS,
                cells=SUBJECTS * q * PROMPTS)


def write_entries(path: Path, rows: int, seed: int = 20261130) -> int:
    """Write the design as one parquet file with DuckDB; return its row count.

    Model m's latent score on cell c (subject s, question q, prompt p) is
    ``0.5 - m/49 + 1.2 z_q + 0.3 z_ms + 0.6 z_mq + 0.15 z_mp`` plus a
    logistic error, scored 1 when positive; ``z`` are standard normals from
    hashes of (seed, indices) (Box-Muller).
    """
    import duckdb

    sh = shape(rows)
    Q, P = sh["questions"], PROMPTS
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(config={**DUCKDB, "preserve_insertion_order": False})
    con.sql(f"CREATE MACRO u(a, b, c, d) AS ((hash(a, b, c, d, {seed}) >> 11) "
            "/ 9007199254740992.0 + 1e-17)")
    con.sql("CREATE MACRO z(a, b, c, d) AS "
            "(sqrt(-2 * ln(u(a, b, c, d))) * cos(2 * pi() * u(a, b, c, d + 7)))")
    con.sql(f"""COPY (
      SELECT 'model_' || lpad(CAST(m AS VARCHAR), 3, '0') AS model,
             'subject_' || lpad(CAST(c // {Q * P} AS VARCHAR), 3, '0') AS subject,
             'q' || lpad(CAST(c // {P} AS VARCHAR), 7, '0') AS question,
             'prompt_' || lpad(CAST(c % {P} AS VARCHAR), 3, '0') AS prompt,
             CAST(0.5 - m / {MODELS - 1} + 1.2 * z(0, 0, c // {P}, 1)
                  + 0.3 * z(m, 1, c // {Q * P}, 2) + 0.6 * z(m, 2, c // {P}, 3)
                  + 0.15 * z(m, 3, c % {P}, 4)
                  + ln(u(m, 4, c, 5) / (1 - u(m, 4, c, 5))) > 0 AS TINYINT) AS correct
      FROM range({MODELS}) AS t1(m), range({sh['cells']}) AS t2(c)
      WHERE u(m, 5, c, 6) >= {MISSING}
    ) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)""")
    n = con.sql(f"SELECT count(*) FROM '{path}'").fetchall()[0][0]
    con.close()
    return int(n)


def _hwm_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")  # pragma: no cover - not Linux


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            return sum(int(line.split()[1]) for line in fh if line.startswith("Pss:"))
    except OSError:
        return 0


def _children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return out


class TreeMemory:
    """Peak of the summed PSS of this process and its children, sampled every 0.25 s.

    PSS counts a page shared by n processes as 1/n in each, so the sum is the
    memory the process tree really holds (forked engine workers share the
    frame with the parent copy-on-write; their RSS counts it again).
    """

    def __init__(self) -> None:
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.is_set():
            kb = _pss_kb(me) + sum(_pss_kb(c) for c in _children(me))
            self.peak_mb = max(self.peak_mb, kb / 1024)
            self._stop.wait(0.25)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_entries(path: str, layout: str, pairs: str, workers: int | None) -> dict:
    """Load with the DuckDB backend and fit in this process; timings and peak memory (MB)."""
    import mixrank
    from mixrank.engine.control import Control
    from mixrank.io.backends import load_frame

    tree = TreeMemory().__enter__()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load_frame(path, FORMULA, backend="duckdb", options={**DUCKDB, "layout": layout})
    t1 = time.perf_counter()
    out = dict(layout=type(frame).__name__, rows=frame.n_rows, cells=frame.n_cells,
               models=frame.n_models, load_s=t1 - t0, peak_load_mb=_hwm_mb())
    cols = getattr(frame, "columns", None)
    out["scores_mb"] = (cols.nbytes if cols is not None else
                        frame.scores.nbytes + frame.observed.nbytes + frame.replicates.nbytes) / 2**20
    sel = None
    if pairs == "adjacent":
        sel = [(frame.models[i], frame.models[i + 1]) for i in range(frame.n_models - 1)]
    elif pairs.isdigit():
        sel = [(frame.models[i], frame.models[i + 1]) for i in range(int(pairs))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(FORMULA, frame, pairs=sel, control=Control(workers=workers))
    t2 = time.perf_counter()
    tree.__exit__()
    c = res.contrasts()
    out.update(pairs=len(res.pairs), mean_common=float(c["n"].mean()), fit_s=t2 - t1,
               total_s=t2 - t0, peak_mb=_hwm_mb(),
               worker_peak_mb=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
               tree_pss_mb=tree.peak_mb,
               estimate=c["estimate"].tolist(), std_error=c["std_error"].tolist(),
               df=c["df"].tolist())
    return out


def spawn_entries(path: Path, layout: str, pairs: str, workers: int | None) -> dict:
    cmd = [sys.executable, str(Path(__file__).with_name("bench_scale.py")), "--run-entries",
           layout, "--folder", str(path), "--pairs", pairs]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{layout} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fmt_entries(r: dict) -> str:
    return (f"  {r['layout']:<15} {r['rows']:>12,} rows {r['cells']:>10,} cells  load "
            f"{r['load_s']:6.1f} s (peak {r['peak_load_mb']:6,.0f} MB)  fit {r['pairs']:>5,} pairs "
            f"({r['mean_common']:,.0f} common cells) {r['fit_s']:7.1f} s   peak RSS "
            f"{r['peak_mb']:6,.0f} MB, engine workers {r['worker_peak_mb']:6,.0f} MB, all "
            f"processes (PSS) {r['tree_pss_mb']:6,.0f} MB   "
            f"scores held {r['scores_mb']:6,.0f} MB")


def max_rel(a: dict, b: dict) -> float:
    import numpy as np

    worst = 0.0
    for key in ("estimate", "std_error", "df"):
        x, y = np.asarray(a[key]), np.asarray(b[key])
        worst = max(worst, float(np.max(np.abs(x - y) / np.maximum(np.abs(x), 1e-300))))
    return worst


def part3(out: Path, rows: int, peer_rows: int, pairs: str, peer_pairs: str, keep: bool,
          workers: int | None) -> None:
    """Dense vs compressed at ``peer_rows``, then the compressed frame alone at ``rows``."""
    import shutil

    print(f"== Part 3: one row per (model, cell), {MODELS} models, {MISSING:.0%} of each "
          f"model's cells missing; DuckDB {DUCKDB}; load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} ==", flush=True)
    for n_rows, runs, sel in [(peer_rows, ("dense", "compressed"), peer_pairs),
                              (rows, ("compressed",), pairs)]:
        if n_rows <= 0:
            continue
        path = out / "entries" / f"rows-{n_rows}.parquet"
        if keep and path.exists():
            print(f"  reusing {path}")
        else:
            usage = shutil.disk_usage(out.parent if out.parent.exists() else Path("."))
            need = n_rows * 3  # generous: ~1 byte per row measured, spill room for DuckDB
            if usage.free < need + 2**30:
                raise SystemExit(f"only {usage.free / 2**30:.1f} GiB free for {path}; need "
                                 f"~{need / 2**30:.1f} GiB")
            t = time.perf_counter()
            n = write_entries(path, n_rows)
            print(f"  wrote {n:,} rows ({path.stat().st_size / 2**20:,.0f} MB) with DuckDB in "
                  f"{time.perf_counter() - t:.1f} s (peak RSS {_hwm_mb():,.0f} MB)", flush=True)
        res = [spawn_entries(path, layout, sel, workers) for layout in runs]
        for r in res:
            print(fmt_entries(r), flush=True)
        if len(res) == 2:
            d, c = res
            print(f"  compressed / dense: load {c['load_s'] / d['load_s']:.2f}x, fit "
                  f"{c['fit_s'] / d['fit_s']:.2f}x, peak RSS {c['peak_mb'] / d['peak_mb']:.2f}x, "
                  f"scores held {c['scores_mb'] / d['scores_mb']:.2f}x; max relative difference "
                  f"of estimate, std_error, df over {d['pairs']} pairs = {max_rel(d, c):.1e}")
        else:
            r = res[0]
            top = max(r["peak_mb"], r["tree_pss_mb"])
            print(f"  peak RSS {r['peak_mb']:,.0f} MB (main process, DuckDB included), engine "
                  f"workers {r['worker_peak_mb']:,.0f} MB each at most (RSS, shared pages "
                  f"included), all processes together {r['tree_pss_mb']:,.0f} MB (summed PSS): "
                  f"{'within' if top <= BOUND_MB else 'ABOVE'} the {BOUND_MB:,} MB bound; "
                  f"load average now {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
        if not keep:
            path.unlink()
