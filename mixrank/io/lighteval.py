"""Stage io: reader for lighteval details (the Open LLM Leaderboard's per-sample files).

Inputs: lighteval's ``--output-dir`` (``details/<model>/<date>/`` with
``details_<task>_<date>.parquet`` and ``results/<model>/results_<date>.json``),
a folder of details files (as downloaded from a leaderboard details
dataset), or one details file.
Outputs: the canonical long DataFrame ``model, subject, question, prompt,
sample, correct`` plus ``task``.
Contents: :func:`read_lighteval`, :func:`split_task`.

Format: one parquet row per example, written by
``EvaluationTracker.save`` from ``asdict(DetailsLogger.Detail)``: lighteval
>= 0.9 has the columns ``doc`` (the ``Doc``: ``query``, ``choices``,
``gold_index``, ``id``, ``task_name``), ``model_response`` and ``metric`` (a
struct of per-sample metric values); earlier versions (the Open LLM
Leaderboard v1 details) a ``metrics`` column and no ``doc``.  Matched against
the classes of lighteval 0.13.0 (``tests/io/producers/generate.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DataError, require
from ._harness import choose_metric, finish, finite_score, load_json

__all__ = ["read_lighteval", "split_task"]

READER = "read_lighteval"
_DETAILS_RE = re.compile(
    r"^details_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.:\-]+|latest)\.parquet$")


def split_task(task: str) -> str:
    """``suite|task|few_shot`` → ``task`` (other names unchanged)."""
    parts = task.split("|")
    return parts[1] if len(parts) == 3 and parts[1] else task


def _discover(path: Path) -> list[tuple[Path, str, str]]:
    if not path.exists():
        raise DataError(f"{READER}: path {str(path)!r} does not exist; expected lighteval's "
                        "--output-dir, a details folder or a details_<task>_<date>.parquet file")
    files = [path] if path.is_file() else sorted(path.rglob("details_*.parquet"))
    out = []
    for f in files:
        m = _DETAILS_RE.match(f.name)
        if m is None:
            raise DataError(f"{READER}: cannot read the task and date from {str(f)!r}; expected "
                            "details_<task>_<date>.parquet as lighteval writes it")
        out.append((f, m.group("task"), m.group("date")))
    if not out:
        raise DataError(f"{READER}: no details_<task>_<date>.parquet files under {str(path)!r}; "
                        "lighteval writes them with --save-details")
    return out


def _model_of(file: Path, date: str, root: Path) -> str:
    """Model from results/<model>/results_<date>.json, else the details/<model>/ folders."""
    parts = file.parent.parts
    if "details" in parts:
        i = len(parts) - 1 - parts[::-1].index("details")
        folder = Path(*parts[: i])
        model_parts = parts[i + 1:-1] if parts[-1] == date else parts[i + 1:]
        results = folder.joinpath("results", *model_parts, f"results_{date}.json")
        if results.is_file():
            blob = load_json(results, READER, "a lighteval results file")
            name = (blob.get("config_general") or {}).get("model_name") \
                if isinstance(blob, dict) else None
            if isinstance(name, str) and name:
                return name
        if model_parts:
            return "/".join(model_parts)
    parent = file.parent.name if file.parent.name != date else file.parent.parent.name
    return parent if file.parent != root or not root.is_file() else file.stem


def _metrics(value: Any, where: str) -> Mapping[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise DataError(f"{READER}: {where}: the metric column holds text that is not JSON "
                            f"({exc.msg} at column {exc.colno})") from exc
    if not isinstance(value, Mapping):
        raise DataError(f"{READER}: {where}: the metric column is {type(value).__name__}; "
                        "expected a mapping metric -> value per example")
    return value


def _read_parquet(file: Path) -> pd.DataFrame:
    pq = require("pyarrow.parquet", "scale", "reading lighteval parquet details")
    try:
        return pq.read_table(file).to_pandas()
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError for damaged files
        raise DataError(f"{READER}: {file}: not a readable parquet file ({exc}); the file is "
                        "truncated or not a lighteval details file (re-download or re-run)") from exc


def _file_rows(file: Path, task: str, model: str, metric: str | None) -> tuple[list[dict], str]:
    df = _read_parquet(file)
    col = "metric" if "metric" in df.columns else "metrics" if "metrics" in df.columns else None
    if col is None:
        raise DataError(f"{READER}: {file}: no 'metric' (lighteval >= 0.9) or 'metrics' column; "
                        f"columns: {sorted(df.columns)}; this is not a details file of a "
                        "lighteval version this reader knows")
    values = [_metrics(v, f"{file}: row {i}") for i, v in enumerate(df[col])]
    if not values:
        raise DataError(f"{READER}: {file}: the details file has no rows")
    chosen = choose_metric(metric, set().union(*values), str(file), READER)
    ids: list[str] = []
    if "doc" in df.columns:
        ids = [str(d.get("id", "")) if isinstance(d, Mapping) else "" for d in df["doc"]]
        names = {str(d["task_name"]) for d in df["doc"]
                 if isinstance(d, Mapping) and d.get("task_name")}
        if len(names) > 1:
            raise DataError(f"{READER}: {file}: rows belong to several tasks {sorted(names)}; a "
                            "details file holds one task")
    use_ids = bool(ids) and all(ids) and len(set(ids)) == len(ids)
    rows = []
    for i, v in enumerate(values):
        where = f"{file}: row {i}"
        if chosen not in v or v[chosen] is None:
            raise DataError(f"{READER}: {where}: metric {chosen!r} missing; metrics present: "
                            f"{sorted(k for k, x in v.items() if x is not None)}")
        rows.append({"model": model, "subject": split_task(task),
                     "question": ids[i] if use_ids else str(i), "prompt": "default", "sample": 0,
                     "correct": finite_score(v[chosen], chosen, where, READER), "task": task})
    return rows, chosen


def read_lighteval(path: str | Path, *, metric: str | None = None) -> pd.DataFrame:
    """Read lighteval per-sample details as a long DataFrame.

    Parameters
    ----------
    path : str or Path
        lighteval's ``--output-dir``, a folder holding details files, or one
        ``details_<task>_<date>.parquet`` file.
    metric : str, optional
        The per-sample metric (a key of the ``metric``/``metrics`` column:
        ``acc``, ``acc_norm``, ``em``, ``pem``, ``qem``, ...).  ``None`` takes
        the only one and asks for a choice when there are several.

    Returns
    -------
    pandas.DataFrame
        One row per example: ``model`` (``config_general.model_name`` of the
        matching results file, else the ``details/<model>/`` folders),
        ``subject`` (the task without suite and few-shot count:
        ``leaderboard|mmlu:anatomy|5`` → ``mmlu:anatomy``), ``question`` (the
        ``Doc`` id when every row has a distinct one, else the example's row
        index), ``prompt`` (``"default"``), ``sample`` (0), ``correct``
        (float) and ``task`` (the full task name).  ``attrs["mixrank"]``
        holds ``mapping``, ``metric`` per task, ``rows_per_subject``,
        ``files`` and ``superseded``.

    Raises
    ------
    DataError
        No details files; names without task and date; unreadable or
        truncated parquet; no metric column; an unknown metric (lists those
        present); a non-numeric value (file and row); rows of several tasks
        in one file.

    Notes
    -----
    Several runs of one (model, task) keep the latest date; the others are
    listed in ``superseded``.  The per-task values in lighteval's results
    file are the mean of the per-sample metric (its default aggregation for
    sample-level metrics), which the tests check against this reader.
    """
    root = Path(path)
    latest: dict[tuple[str, str], tuple[str, Path]] = {}
    superseded: list[str] = []
    for file, task, date in _discover(root):
        model = _model_of(file, date, root)
        prev = latest.get((model, task))
        if prev is not None and prev[0] >= date:
            superseded.append(str(file))
            continue
        if prev is not None:
            superseded.append(str(prev[1]))
        latest[(model, task)] = (date, file)
    rows: list[dict] = []
    metrics: dict[str, str] = {}
    for (model, task), (_date, file) in sorted(latest.items()):
        got, chosen = _file_rows(file, task, model, metric)
        rows += got
        metrics[task] = chosen
    mapping = {"model": "results config_general.model_name (else details/<model>/)",
               "subject": "task name without suite and few-shot count",
               "question": "doc.id (else the example index)", "prompt": "constant 'default'",
               "sample": "constant 0", "correct": "metric column[<metric>]"}
    return finish(rows, ["task"], reader=READER, source=str(root), mapping=mapping,
                  metric=dict(sorted(metrics.items())), files=[str(v[1]) for v in latest.values()],
                  superseded=sorted(superseded))
