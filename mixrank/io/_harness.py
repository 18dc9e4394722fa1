"""Stage io: helpers shared by the evaluation-harness readers.

Inputs: files written by an evaluation harness (JSON, JSON lines, zip
members, parquet).  Outputs: parsed objects, or a :class:`DataError` that
names the file and the position (line and column, byte offset or member) of
the problem.
Contents: :func:`decode_utf8`, :func:`parse_json`, :func:`load_json`,
:func:`check_version`, :func:`finite_score`, :func:`choose_metric`,
:func:`finish` (canonical column order and the reader's metadata).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .._util import tidy
from ..errors import DataError
from ..frame.source import LONG_COLUMNS

__all__ = ["decode_utf8", "parse_json", "load_json", "check_version", "finite_score",
           "choose_metric", "finish", "CANONICAL"]

#: Canonical long-schema columns, in the order every reader returns them (the one
#: definition: :data:`mixrank.frame.source.LONG_COLUMNS`).
CANONICAL = LONG_COLUMNS


def decode_utf8(raw: bytes, where: str, reader: str) -> str:
    """Decode ``raw`` as UTF-8 or raise a DataError naming the byte offset (and line)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataError(
            f"{reader}: {where}: byte {exc.start} (line {line}) is not valid UTF-8 "
            f"({raw[exc.start:exc.start + 4]!r}); harness logs are UTF-8 JSON, so the file is "
            "damaged or not a log (re-export it, or remove it from the folder)"
        ) from exc


def parse_json(text: str, where: str, reader: str, what: str) -> Any:
    """Parse JSON text or raise a DataError naming line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        tail = text.rstrip()[-1:]
        end = " (the file ends early: it is truncated)" if tail not in ("}", "]") else ""
        raise DataError(
            f"{reader}: {where}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg}){end}; "
            f"expected {what}; re-run or re-export the log, or remove the file"
        ) from exc


def load_json(file: Path, reader: str, what: str) -> Any:
    """Read, decode and parse one JSON file with file/position errors."""
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise DataError(f"{reader}: cannot read {str(file)!r}: {exc}") from exc
    if not raw.strip():
        raise DataError(f"{reader}: {file}: the file is empty; expected {what} (re-run the "
                        "evaluation or remove the file)")
    return parse_json(decode_utf8(raw, str(file), reader), str(file), reader, what)


def check_version(value: Any, known: Sequence[Any], where: str, reader: str,
                  producer: str) -> None:
    """Raise a DataError when a log's format version is not one this reader knows."""
    if value not in known:
        raise DataError(
            f"{reader}: {where}: log format version {value!r} is not supported; this reader "
            f"knows {producer} versions {list(known)} (convert the log with the producer's own "
            "tools, or upgrade mixrank)"
        )


def finite_score(value: Any, metric: str, where: str, reader: str) -> float:
    """A per-sample score as a finite float (booleans as 0/1)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(float(value)):
        return float(value)
    raise DataError(
        f"{reader}: {where}: metric {metric!r} is {value!r} ({type(value).__name__}); expected "
        "a finite number or a boolean per sample; choose another metric"
    )


def choose_metric(metric: str | None, available: Iterable[str], where: str, reader: str,
                  preferred: Sequence[str] = ()) -> str:
    """Resolve ``metric``: the named one, else a preferred default, else the only one."""
    names = sorted(set(available))
    if metric is not None:
        if metric not in names:
            raise DataError(
                f"{reader}: {where}: metric {metric!r} not found; metrics present: {names}; "
                "pass metric= one of these (on the command line --metric, or name it on the "
                "left of the formula)"
            )
        return metric
    for name in preferred:
        if name in names:
            return name
    if len(names) == 1:
        return names[0]
    if not names:
        raise DataError(f"{reader}: {where}: no per-sample metric found; expected at least one "
                        "scored metric in the log")
    raise DataError(
        f"{reader}: {where}: several metrics {names}; choose one with metric= (on the command "
        "line --metric, or name it on the left of the formula, e.g. 'acc ~ model')"
    )


def finish(rows: list[dict], extra: Sequence[str], *, reader: str, source: str,
           mapping: Mapping[str, str], **meta: Any) -> pd.DataFrame:
    """Build the canonical DataFrame; ``attrs['mixrank']`` gets the mapping and rows per task."""
    columns = list(CANONICAL) + [c for c in extra if c not in CANONICAL]
    out = pd.DataFrame(rows, columns=columns)
    out["correct"] = out["correct"].astype("float64")
    out["sample"] = out["sample"].astype("int64")
    per_task = out.groupby("subject", sort=True).size() if len(out) else pd.Series(dtype=int)
    return tidy(out, reader=reader, source=source, mapping=dict(mapping),
                rows_per_subject={str(k): int(v) for k, v in per_task.items()}, **meta)
