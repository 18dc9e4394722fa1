"""Shared helpers for the benchmarks: synthetic large designs, timing, memory,
the machine line and README table blocks."""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd


def big_design(models=15, subjects=57, questions=100, prompts=100, missing=0.0, seed=0,
               binary=True) -> pd.DataFrame:
    """A crossed subject/question x prompt benchmark with categorical key columns.

    Built directly in numpy (mixrank.simulate builds the same structure but is
    meant for modest sizes).  Model m's latent score has a subject, a
    subject:question and a prompt interaction, so every component is non-zero.
    """
    rng = np.random.default_rng(seed)
    Q = subjects * questions
    subj_of_q = np.repeat(np.arange(subjects), questions)
    eff = np.linspace(0.4, -0.4, models)
    ms = rng.normal(0, 0.3, (models, subjects))
    mq = rng.normal(0, 0.6, (models, Q))
    mp = rng.normal(0, 0.15, (models, prompts))
    base_q = rng.normal(0, 1.2, Q)
    n_cells = Q * prompts
    q_idx = np.repeat(np.arange(Q), prompts)
    p_idx = np.tile(np.arange(prompts), Q)
    parts = []
    for m in range(models):
        eta = eff[m] + base_q[q_idx] + ms[m, subj_of_q[q_idx]] + mq[m, q_idx] + mp[m, p_idx]
        if binary:
            y = (eta + rng.logistic(size=n_cells) > 0).astype(np.int8)
        else:
            y = eta + rng.normal(size=n_cells)
        keep = rng.random(n_cells) >= missing if missing > 0 else slice(None)
        parts.append((np.full(n_cells, m, dtype=np.int16)[keep], q_idx[keep], p_idx[keep], y[keep]))
    mi = np.concatenate([p[0] for p in parts])
    qi = np.concatenate([p[1] for p in parts])
    pi = np.concatenate([p[2] for p in parts])
    y = np.concatenate([p[3] for p in parts])
    cat = pd.Categorical.from_codes
    return pd.DataFrame({
        "model": cat(mi, [f"model_{i:02d}" for i in range(models)]),
        "subject": cat(subj_of_q[qi], [f"subject_{i:02d}" for i in range(subjects)]),
        "question": cat(qi, [f"q{i:05d}" for i in range(Q)]),
        "prompt": cat(pi, [f"prompt_{i:03d}" for i in range(prompts)]),
        "correct": y,
    })


def best(f, repeats: int) -> float:
    """Best (smallest) wall seconds of ``repeats`` calls of ``f``."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


@contextmanager
def measure():
    """Wall time and peak traced memory (numpy/pandas allocations) of a block."""
    out = {}
    tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    try:
        yield out
    finally:
        out["seconds"] = time.perf_counter() - t0
        out["peak_bytes"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


def gb(x: float) -> str:
    return f"{x / 2**30:.2f} GiB"


# The benchmark tables live on the site's benchmarks page (they left the README, issue 40).
README = Path(__file__).resolve().parent.parent / "docs" / "project" / "benchmarks.md"


def machine() -> str:
    """CPU model, cores available, load average and UTC time: the header of a README table."""
    name = platform.processor() or platform.machine() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{name}, {cores} cores available, load average {load} at the start; "
            f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC")


def markdown_table(header: str, rows) -> str:
    """A markdown table: ``header`` line, separator, one line a row (pipes in cells escaped)."""
    ncol = header.strip().strip("|").count("|") + 1
    return "\n".join([header, "|" + "---|" * ncol]
                     + ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"
                        for row in rows])


def replace_readme_block(tag: str, block: str) -> None:
    """Put ``block`` in place of README's ``<!-- bench:TAG:start ... bench:TAG:end -->`` span."""
    text = README.read_text()
    pat = re.compile(rf"<!-- bench:{tag}:start.*?<!-- bench:{tag}:end -->", re.S)
    if not pat.search(text):
        raise SystemExit(f"{README} has no bench:{tag} markers")
    README.write_text(pat.sub(lambda _: block, text))
