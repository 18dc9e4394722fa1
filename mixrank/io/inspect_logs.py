"""Stage io: reader for Inspect (``inspect_ai``) evaluation logs.

Inputs: one ``.eval`` log (a zip archive) or ``.json`` log, or a folder
searched recursively for both (Inspect's ``--log-dir``).
Outputs: the canonical long DataFrame ``model, subject, question, prompt,
sample, correct`` plus ``task``.
Contents: :func:`read_inspect`, :func:`score_to_float`, :data:`LETTER_SCORES`.

Format read (no dependency on ``inspect_ai``): an ``EvalLog`` with
``version`` (1 or 2), ``status``, ``eval`` (the spec: ``task``, ``model``,
``created``, ``config.epochs``), ``results`` (``scores[].metrics`` and
``headline``) and ``samples`` (``id``, ``epoch``, ``scores`` keyed by
scorer, ``metadata``).  A ``.json`` log holds all of it in one object; an
``.eval`` log is a zip with ``header.json`` (everything but the samples),
``_journal/start.json`` (the spec, written first) and one
``samples/<id>_epoch_<n>.json`` per sample and epoch.  Inspect 0.3.x
compresses the members with zstd (zip method 93); reading those uses the
``zstandard`` package (a core dependency) on Python < 3.14.  Every member is
decompressed with a size cap (:data:`MAX_MEMBER_BYTES`, overridable with the
environment variable ``MIXRANK_MAX_MEMBER_BYTES``; docs/hardening.md §7), so a
small crafted archive cannot expand to many GB in memory.
Matched against the logs ``inspect_ai`` 0.3.285 writes (the fixtures under
``tests/io/fixtures/generated/inspect`` are real ``inspect_ai.eval()``
output).
"""

from __future__ import annotations

import io
import math
import os
import struct
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DataError, MixrankWarning, require
from ._harness import check_version, choose_metric, decode_utf8, finish, load_json, parse_json

__all__ = ["read_inspect", "score_to_float", "LETTER_SCORES", "MAX_MEMBER_BYTES", "member_cap"]

READER = "read_inspect"
VERSIONS = (1, 2)
#: Inspect's value letters and the scores they become (Inspect's own default
#: ``value_to_float``: correct, partial, incorrect, no answer).
LETTER_SCORES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
_ZSTD = 93
#: Largest decompressed size of one ``.eval`` member read into memory (1 GiB; real
#: sample members are kilobytes).  ``MIXRANK_MAX_MEMBER_BYTES`` overrides it.
MAX_MEMBER_BYTES = 1 << 30
_CAP_ENV = "MIXRANK_MAX_MEMBER_BYTES"


def member_cap() -> int:
    """The decompressed-size cap per archive member: ``$MIXRANK_MAX_MEMBER_BYTES`` or
    :data:`MAX_MEMBER_BYTES`; a DataError for a value that is not a positive integer."""
    text = os.environ.get(_CAP_ENV)
    if text is None or not text.strip():
        return MAX_MEMBER_BYTES
    try:
        cap = int(text.strip())
    except ValueError:
        cap = 0
    if cap <= 0:
        raise DataError(f"{_CAP_ENV}={text!r}; expected a positive number of bytes, e.g. "
                        f"{_CAP_ENV}={4 * MAX_MEMBER_BYTES}")
    return cap


def _read_upto(stream: Any, limit: int) -> bytes:
    """Up to ``limit`` bytes of a stream that may return short reads."""
    parts, got = [], 0
    while got < limit:
        chunk = stream.read(min(limit - got, 1 << 24))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _capped(data: bytes, cap: int, name: str, file: Path) -> bytes:
    if len(data) > cap:
        raise DataError(f"{READER}: {file}: member {name!r} decompresses to more than {cap} "
                        f"bytes (the cap per archive member); a real Inspect member is far "
                        f"smaller, so the archive is damaged or crafted.  If it is genuine, "
                        f"raise the cap: {_CAP_ENV}=<bytes> (docs/hardening.md §7)")
    return data


# ------------------------------------------------------------------ values
def score_to_float(value: Any, where: str, metric: str) -> float:
    """Map one Inspect score value to a number.

    ``"C"`` → 1, ``"P"`` → 0.5, ``"I"`` and ``"N"`` → 0; booleans → 1/0;
    numbers as they are; strings ``yes/true`` → 1, ``no/false`` → 0 and
    numeric strings as numbers.  Anything else (lists, free text) is an error.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        if math.isfinite(float(value)):
            return float(value)
    elif isinstance(value, str):
        text = value.strip()
        if text in LETTER_SCORES:
            return LETTER_SCORES[text]
        if text.lower() in _WORDS:
            return _WORDS[text.lower()]
        try:
            x = float(text)
        except ValueError:
            x = math.nan
        if math.isfinite(x):
            return x
    raise DataError(
        f"{READER}: {where}: score {metric!r} is {value!r}; expected C/I/P/N, a boolean, a "
        "number, yes/no or true/false (a dict-valued scorer is chosen by key: metric='<key>')"
    )


# ------------------------------------------------------------------ .eval archives
def _member(zf: zipfile.ZipFile, name: str, file: Path) -> bytes:
    """Bytes of one archive member, decompressing zstd members without inspect_ai; at most
    :func:`member_cap` bytes are decompressed (a DataError past it)."""
    info = zf.getinfo(name)
    cap = member_cap()
    if info.compress_type != _ZSTD:
        with zf.open(name) as member:
            return _capped(_read_upto(member, cap + 1), cap, name, file)
    fp = zf.fp
    if fp is None:  # pragma: no cover - the archive is open while reading
        raise DataError(f"{READER}: {file}: archive closed while reading {name}")
    fp.seek(info.header_offset)
    head = fp.read(30)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise DataError(f"{READER}: {file}: member {name!r} has a damaged local header "
                        f"(offset {info.header_offset}); the archive is truncated or corrupt")
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    fp.seek(info.header_offset + 30 + name_len + extra_len)
    raw = fp.read(info.compress_size)
    if len(raw) < info.compress_size:
        raise DataError(f"{READER}: {file}: member {name!r} is cut short ({len(raw)} of "
                        f"{info.compress_size} bytes); the archive is truncated")
    try:
        from compression import zstd  # Python >= 3.14

        return _capped(bytes(zstd.ZstdDecompressor().decompress(raw, max_length=cap + 1)),
                       cap, name, file)
    except ImportError:
        zstandard = require("zstandard", "inspect", "reading zstd-compressed Inspect .eval logs")
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw),
                                                        read_across_frames=True) as r:
            return _capped(_read_upto(r, cap + 1), cap, name, file)
    except zstandard.ZstdError as exc:
        raise DataError(f"{READER}: {file}: member {name!r} does not decompress ({exc}); the "
                        "archive is damaged (re-run the evaluation or remove the file)") from exc


def _json_member(zf: zipfile.ZipFile, name: str, file: Path) -> Any:
    where = f"{file}!{name}"
    return parse_json(decode_utf8(_member(zf, name, file), where, READER), where, READER,
                      "an Inspect log member (JSON)")


def _read_eval(file: Path) -> dict:
    """An ``.eval`` archive as one EvalLog-shaped dict (``samples`` included)."""
    try:
        zf = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataError(
            f"{READER}: {file}: not a readable .eval archive ({exc}); the file is truncated or "
            "not an Inspect log (an interrupted run leaves a partial archive: re-run or remove it)"
        ) from exc
    with zf:
        names = set(zf.namelist())
        if "header.json" in names:
            log = _json_member(zf, "header.json", file)
        elif "_journal/start.json" in names:
            log = _json_member(zf, "_journal/start.json", file)
            log.setdefault("status", "started")
        else:
            raise DataError(f"{READER}: {file}: archive has neither header.json nor "
                            "_journal/start.json; expected an Inspect .eval log")
        if not isinstance(log, dict):
            raise DataError(f"{READER}: {file}!header.json: expected a JSON object")
        if "header.json" in names and "_journal/start.json" in names:
            start = _json_member(zf, "_journal/start.json", file)
            models = [(x.get("eval") or {}).get("model") if isinstance(x, dict) else None
                      for x in (start, log)]
            if models[0] != models[1]:
                raise DataError(
                    f"{READER}: {file}: the archive mixes models: _journal/start.json names "
                    f"{models[0]!r}, header.json {models[1]!r}; an Inspect log holds one model "
                    "(the archive was assembled from two runs: re-run or remove it)")
        sample_files = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
        log["samples"] = [_json_member(zf, n, file) for n in sample_files]
        log["_sample_where"] = [f"{file}!{n}" for n in sample_files]
    return log


def _read_log(file: Path) -> dict | None:
    """One log as a dict; ``None`` for a ``.json`` file that is not an Inspect log."""
    if file.suffix == ".eval":
        return _read_eval(file)
    log = load_json(file, READER, "an Inspect .json log")
    if not isinstance(log, dict) or "eval" not in log:
        return None
    samples = log.get("samples") or []
    log["_sample_where"] = [f"{file}: samples[{i}]" for i in range(len(samples))]
    return log


def _discover(path: Path) -> list[Path]:
    if not path.exists():
        raise DataError(f"{READER}: path {str(path)!r} does not exist; expected an Inspect "
                        ".eval/.json log or the folder (--log-dir) holding them")
    if path.is_file():
        if path.suffix not in (".eval", ".json"):
            raise DataError(f"{READER}: {str(path)!r} is not an Inspect log; expected a "
                            ".eval or .json file, or a folder")
        return [path]
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (".eval", ".json")
                   and p.name != "logs.json")
    if not files:
        raise DataError(f"{READER}: folder {str(path)!r} holds no .eval or .json logs; point "
                        "at Inspect's --log-dir (default ./logs)")
    return files


# ------------------------------------------------------------------ one log
def _spec(log: dict, file: Path) -> tuple[str, str, str]:
    check_version(log.get("version"), VERSIONS, str(file), READER, "Inspect log")
    spec = log.get("eval")
    if not isinstance(spec, dict):
        raise DataError(f"{READER}: {file}: missing the 'eval' spec; expected an Inspect log")
    model, task = spec.get("model"), spec.get("task")
    if not isinstance(model, str) or not model or not isinstance(task, str) or not task:
        raise DataError(f"{READER}: {file}: the eval spec lacks 'model' or 'task' "
                        f"(model={model!r}, task={task!r}); expected both as strings")
    return model, task, str(spec.get("created", ""))


def _score_names(sample: dict) -> dict[str, tuple[str, str | None]]:
    """Metric names a sample offers: scorer name, or the keys of a dict-valued scorer."""
    out: dict[str, tuple[str, str | None]] = {}
    for scorer, score in (sample.get("scores") or {}).items():
        value = score.get("value") if isinstance(score, dict) else None
        if isinstance(value, dict):
            for key in value:
                out[str(key)] = (scorer, str(key))
                out[f"{scorer}/{key}"] = (scorer, str(key))
        else:
            out[scorer] = (scorer, None)
    return out


def _field(sample: dict, name: str, where: str, option: str) -> str:
    meta = sample.get("metadata") or {}
    if name not in meta:
        raise DataError(f"{READER}: {where}: sample metadata has no field {name!r} "
                        f"({option}); fields present: {sorted(meta)}")
    return str(meta[name])


def _log_rows(log: dict, file: Path, metric: str | None, subject_field: str | None,
              prompt_field: str | None) -> tuple[list[dict], str, list[str]]:
    model, task, _ = _spec(log, file)
    samples = log.get("samples") or []
    wheres = log["_sample_where"]
    offered: dict[str, tuple[str, str | None]] = {}
    for s in samples:
        offered.update(_score_names(s) if isinstance(s, dict) else {})
    headline = ((log.get("results") or {}).get("headline") or {}).get("scorer")
    first = [(log.get("results") or {}).get("scores", [{}])[0].get("scorer")] \
        if (log.get("results") or {}).get("scores") else []
    chosen = choose_metric(metric, offered, str(file), READER,
                           preferred=[p for p in [headline, *first] if isinstance(p, str)])
    scorer, key = offered[chosen]
    rows: list[dict] = []
    unscored: list[str] = []
    seen: dict[tuple[str, int], str] = {}
    for s, where in zip(samples, wheres):
        if not isinstance(s, dict) or "id" not in s:
            raise DataError(f"{READER}: {where}: expected a sample object with an 'id'")
        epoch = s.get("epoch", 1)
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise DataError(f"{READER}: {where}: epoch is {epoch!r}; expected an integer")
        ident = (str(s["id"]), epoch)
        if ident in seen:
            raise DataError(f"{READER}: {where}: sample {ident[0]!r} epoch {epoch} appears "
                            f"twice (first at {seen[ident]}); the log is damaged")
        seen[ident] = where
        score = (s.get("scores") or {}).get(scorer)
        if not isinstance(score, dict) or "value" not in score:
            if s.get("error"):
                unscored.append(f"{where} ({str(s['error'])[:80]})")
                continue
            raise DataError(f"{READER}: {where}: sample has no score {scorer!r}; scores "
                            f"present: {sorted(s.get('scores') or {})}; choose metric= one "
                            "of those")
        value = score["value"][key] if key is not None else score["value"]
        rows.append({
            "model": model,
            "subject": _field(s, subject_field, where, "subject_field")
            if subject_field else task,
            "question": ident[0],
            "prompt": _field(s, prompt_field, where, "prompt_field") if prompt_field else "default",
            "sample": epoch,
            "correct": score_to_float(value, where, chosen),
            "task": task,
        })
    return rows, chosen, unscored


# ------------------------------------------------------------------ public
def read_inspect(
    path: str | Path,
    *,
    metric: str | None = None,
    subject_field: str | None = None,
    prompt_field: str | None = None,
) -> pd.DataFrame:
    """Read Inspect evaluation logs as a long DataFrame.

    Parameters
    ----------
    path : str or Path
        A ``.eval`` or ``.json`` log, or a folder searched recursively.
    metric : str, optional
        The score read: a scorer name (``match``, ``choice``, ``includes``,
        ``model_graded_qa`` ...) or, for a scorer whose value is a dict, one of
        its keys (or ``scorer/key``).  ``None`` takes the log's headline
        scorer (``results.headline``, else the first scorer).
    subject_field, prompt_field : str, optional
        A sample metadata field to use as ``subject`` / ``prompt``; by default
        the subject is the task name and the prompt is ``"default"``.

    Returns
    -------
    pandas.DataFrame
        One row per (log, sample, epoch): ``model`` (the eval spec's model,
        e.g. ``openai/gpt-4o``), ``subject``, ``question`` (``str(sample
        id)``), ``prompt``, ``sample`` (the epoch, 1-based), ``correct``
        (float; see :func:`score_to_float`) and ``task`` (the task name).
        ``attrs["mixrank"]`` holds ``mapping`` (which log field became which
        column), ``metric`` per task, ``rows_per_subject``, ``files``,
        ``superseded`` and ``unscored`` (samples that ended in an error).

    Raises
    ------
    DataError
        Nonexistent path or no logs; a truncated or damaged archive or JSON
        file, non-UTF-8 bytes (file, member and byte offset); an unknown log
        ``version``; a missing eval spec, model or task; an unknown metric
        (lists those present); a score that is not a number, letter or
        boolean; a sample repeated within a log.

    Warns
    -----
    MixrankWarning
        Samples that ended in an error without a score (listed in
        ``attrs["mixrank"]["unscored"]``).

    Notes
    -----
    Several logs of the same (model, task) -- a retried run -- keep the one
    with the latest ``eval.created``; the others are listed in
    ``superseded``.  Epochs become ``sample`` so that replicate averaging and
    reliable change see repeated generations.

    Validated against logs written by ``inspect_ai.eval()`` 0.3.285 with an
    offline model provider (``tests/io/producers/generate.py``): the mean
    of ``correct`` per log equals the log's own ``accuracy`` metric.
    """
    root = Path(path)
    latest: dict[tuple[str, str], tuple[str, Path, dict]] = {}
    superseded: list[str] = []
    skipped: list[str] = []
    for file in _discover(root):
        log = _read_log(file)
        if log is None:
            skipped.append(str(file))
            continue
        model, task, created = _spec(log, file)
        prev = latest.get((model, task))
        if prev is None or created > prev[0]:
            if prev is not None:
                superseded.append(str(prev[1]))
            latest[(model, task)] = (created, file, log)
        else:
            superseded.append(str(file))
    if not latest:
        raise DataError(f"{READER}: no Inspect logs under {str(root)!r} (.json files without an "
                        f"'eval' spec were skipped: {skipped[:5]})")
    rows: list[dict] = []
    metrics: dict[str, str] = {}
    unscored: list[str] = []
    for (_model, task), (_c, file, log) in sorted(latest.items()):
        got, chosen, bad = _log_rows(log, file, metric, subject_field, prompt_field)
        rows += got
        metrics[task] = chosen
        unscored += bad
    if unscored:
        warnings.warn(f"{READER}: {len(unscored)} samples ended in an error and have no score; "
                      f"they are not read (first: {unscored[0]})", MixrankWarning, stacklevel=2)
    mapping = {
        "model": "eval.model", "subject": f"metadata.{subject_field}" if subject_field
        else "eval.task", "question": "sample id",
        "prompt": f"metadata.{prompt_field}" if prompt_field else "constant 'default'",
        "sample": "epoch", "correct": "scores.<metric>.value (C=1, P=0.5, I=N=0)",
    }
    return finish(rows, ["task"], reader=READER, source=str(root), mapping=mapping,
                  metric=dict(sorted(metrics.items())),
                  files=[str(v[1]) for v in latest.values()],
                  superseded=sorted(superseded), unscored=unscored, skipped=skipped)
