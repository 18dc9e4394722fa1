"""Stage io: the files of lm-evaluation-harness ``--log_samples`` output.

Inputs: a path (the ``--output_path`` folder, a model folder or one
samples file).
Outputs: the samples files grouped by model folder and run date
(:class:`Run`, with the run's results JSON), the task -> group hierarchy of
a results file, each folder's latest run per task
(:func:`latest_runs`), the prompt configuration of a task in a run
(:func:`prompt_template`) and the rows of one samples file
(:func:`read_samples`).
Contents: :func:`discover`, :func:`load_json`, :func:`model_name`,
:func:`group_runs`, :func:`hierarchy`, :func:`latest_runs`,
:func:`prompt_template`, :func:`read_samples` and its per-line checks.  The public reader
:func:`mixrank.io.lm_eval.read_lm_eval` describes the format it matches.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError
from ._harness import decode_utf8

__all__ = ["Run", "SAMPLES_RE", "SAMPLE_KEYS", "discover", "load_json", "model_name", "group_runs",
           "hierarchy", "latest_runs", "prompt_template", "read_samples"]

SAMPLES_RE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d[^_]*)\.jsonl$")
# keys every sample line carries besides the metric values (evaluator.evaluate)
SAMPLE_KEYS = frozenset({
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter",
    "metrics", "doc_hash", "prompt_hash", "target_hash",
})
# evaluation_tracker.GeneralConfigTracker._get_model_name: order matters
_MODEL_ARG_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


@dataclass
class Run:
    """One results file (one ``lm_eval`` invocation) of one model folder."""

    folder: Path
    date: str
    results_file: Path | None
    info: dict = field(default_factory=dict)
    samples: dict[str, Path] = field(default_factory=dict)


def discover(path: Path) -> list[Path]:
    """Return the samples files under ``path`` (a folder searched recursively, or one file)."""
    if not path.exists():
        raise DataError(
            f"read_lm_eval: path {str(path)!r} does not exist; expected the --output_path folder "
            "of an lm_eval run with --log_samples, a model folder inside it, or a "
            "samples_<task>_<date>.jsonl file"
        )
    if path.is_file():
        if not SAMPLES_RE.match(path.name):
            raise DataError(
                f"read_lm_eval: {str(path)!r} is not a samples file; expected a name like "
                "samples_<task>_<date>.jsonl (as written by lm_eval --log_samples) or a folder"
            )
        return [path]
    files = sorted(p for p in path.rglob("samples_*.jsonl") if p.is_file())
    has_results = any(path.rglob("results_*.json"))
    if not files:
        what = "holds results_*.json but no" if has_results else "holds no"
        raise DataError(
            f"read_lm_eval: folder {str(path)!r} {what} samples_<task>_<date>.jsonl files; "
            "per-sample logs are only written when lm_eval runs with --log_samples "
            "(re-run with --log_samples --output_path <folder>)"
        )
    return files


def load_json(file: Path) -> dict:
    try:
        text = decode_utf8(file.read_bytes(), str(file), "read_lm_eval")
    except OSError as exc:
        raise DataError(f"read_lm_eval: cannot read {str(file)!r}: {exc}") from exc
    try:
        blob = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"read_lm_eval: {file}:{exc.lineno}: invalid JSON ({exc.msg}, column {exc.colno}); "
            "expected the results_<date>.json written by lm_eval; the file may be truncated "
            "(re-run or delete it)"
        ) from exc
    if not isinstance(blob, dict):
        raise DataError(
            f"read_lm_eval: {file}:1: expected a JSON object (lm_eval results), got "
            f"{type(blob).__name__}"
        )
    return blob


def _model_from_args(model_args: Any) -> str:
    """Model name from ``config.model_args`` (a string ``k=v,...`` or a dict)."""
    if isinstance(model_args, Mapping):
        for key in _MODEL_ARG_KEYS:
            value = model_args.get(key)
            if isinstance(value, str) and value:
                return value
        return ""
    if isinstance(model_args, str):
        for key in _MODEL_ARG_KEYS:
            prefix = key + "="
            if prefix in model_args:
                return model_args.split(prefix, 1)[1].split(",")[0]
    return ""


def model_name(info: dict, folder: Path) -> str:
    """``model_name`` → name parsed from ``config.model_args`` → folder name."""
    name = info.get("model_name")
    if isinstance(name, str) and name:
        return name
    config = info.get("config")
    if isinstance(config, Mapping):
        name = _model_from_args(config.get("model_args"))
        if name:
            return name
    return folder.name


def group_runs(files: list[Path]) -> dict[Path, dict[str, Run]]:
    """Group samples files by folder and run date, attaching the results files."""
    folders: dict[Path, dict[str, Run]] = {}
    for f in files:
        m = SAMPLES_RE.match(f.name)
        if m is None:
            raise DataError(
                f"read_lm_eval: cannot parse the task and date from {str(f)!r}; expected "
                "samples_<task>_<date>.jsonl with <date> like 2024-06-05T14-03-11.482153 "
                "(rename the file to the lm_eval pattern)"
            )
        task, date = m.group("task"), m.group("date")
        runs = folders.setdefault(f.parent, {})
        if date not in runs:
            rfile = f.parent / f"results_{date}.json"
            runs[date] = Run(f.parent, date, rfile if rfile.is_file() else None)
            if runs[date].results_file is not None:
                runs[date].info = load_json(rfile)
        runs[date].samples[task] = f
    return folders


def hierarchy(info: dict) -> dict[str, str]:
    """Map each task to its innermost parent group from one results file."""
    parent: dict[str, str] = {}
    subtasks = info.get("group_subtasks")
    if isinstance(subtasks, Mapping):
        for group, children in subtasks.items():
            if isinstance(children, list):
                for child in children:
                    if isinstance(child, str) and child != group:
                        parent.setdefault(child, group)
        return parent
    # lm_eval < 0.4.2 has no group_subtasks; task configs named their groups
    configs = info.get("configs")
    if isinstance(configs, Mapping):
        for task, cfg in configs.items():
            g = cfg.get("group") if isinstance(cfg, Mapping) else None
            if isinstance(g, list) and g:
                g = g[0]
            if isinstance(g, str) and g and g != task:
                parent[task] = g
    return parent


def prompt_template(info: dict, task: str) -> str:
    """The prompt configuration of ``task`` in one run: constant across its documents.

    ``"<k>-shot"`` from the results file's ``n-shot`` (else the task config's
    ``num_fewshot``), followed by ``+chat <sha>``, ``+system <sha>`` and
    ``+multiturn`` when the run applied a chat template, a system
    instruction or multi-turn few-shot (``chat_template_sha``,
    ``system_instruction_sha``, ``fewshot_as_multiturn``); ``"default"`` when
    the run has no results file or records none of these.
    """
    shots = info.get("n-shot")
    k = shots.get(task) if isinstance(shots, Mapping) else None
    if k is None:
        configs = info.get("configs")
        cfg = configs.get(task) if isinstance(configs, Mapping) else None
        k = cfg.get("num_fewshot") if isinstance(cfg, Mapping) else None
    parts = [f"{k}-shot"] if isinstance(k, int) and not isinstance(k, bool) else []
    for key, name in (("chat_template_sha", "chat"), ("system_instruction_sha", "system")):
        sha = info.get(key)
        if isinstance(sha, str) and sha:
            parts.append(f"+{name} {sha[:8]}")
    if info.get("fewshot_as_multiturn") is True:
        parts.append("+multiturn")
    return " ".join(parts) if parts else "default"


def latest_runs(folders: dict[Path, dict[str, Run]]
                ) -> tuple[list[tuple[Path, str, dict[str, Run]]], dict[str, str], set[str],
                           list[tuple[str, str]]]:
    """Per folder (sorted): its model and latest run per task; the task -> group parents, every
    task seen, and the (task, file) pairs superseded by a later run."""
    superseded: list[tuple[str, str]] = []
    parent: dict[str, str] = {}
    all_tasks: set[str] = set()
    per_folder: list[tuple[Path, str, dict[str, Run]]] = []
    for folder in sorted(folders):
        runs = folders[folder]
        names: dict[str, Path] = {}
        for run in runs.values():
            if run.results_file is not None:
                names.setdefault(model_name(run.info, folder), run.results_file)
        if len(names) > 1:
            raise DataError(
                f"read_lm_eval: folder {str(folder)!r} holds results of several models "
                f"{sorted(names)} (in {sorted(str(p.name) for p in names.values())}); expected one "
                "model per folder as lm_eval writes them (move the runs into separate folders)"
            )
        model = next(iter(names)) if names else folder.name
        fparent: dict[str, str] = {}
        latest: dict[str, Run] = {}
        for date in sorted(runs):
            run = runs[date]
            for child, group in hierarchy(run.info).items():
                fparent[child] = group
            for task in run.samples:
                if task in latest:
                    superseded.append((task, str(latest[task].samples[task])))
                latest[task] = run
        for child, group in fparent.items():
            parent.setdefault(child, group)
        all_tasks |= set(latest)
        per_folder.append((folder, model, latest))
    return per_folder, parent, all_tasks, superseded


def _score(value: Any, metric: str, file: Path, lineno: int) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        x = float(value)
        if math.isfinite(x):
            return x
        raise DataError(
            f"read_lm_eval: {file}:{lineno}: metric {metric!r} is {value!r}; expected a finite "
            "number; choose another metric= or fix the log"
        )
    kind = type(value).__name__
    hint = (" (a list is the per-sample input of a corpus-level metric such as bleu/chrf/ter, "
            "not a score)" if isinstance(value, list) else "")
    raise DataError(
        f"read_lm_eval: {file}:{lineno}: metric {metric!r} is a {kind} ({str(value)[:60]!r}){hint}; "
        "expected a number or a boolean; choose a per-sample numeric metric such as acc, "
        "acc_norm, exact_match or f1"
    )


def _metrics_present(obj: dict) -> list[str]:
    listed = obj.get("metrics")
    if isinstance(listed, list) and all(isinstance(m, str) for m in listed):
        return list(listed)
    return sorted(k for k in obj if k not in SAMPLE_KEYS)


def _check_line(obj: Any, file: Path, lineno: int, task: str,
                doc_keys: tuple[set, int] | None) -> tuple[Any, str, tuple[set, int] | None]:
    """Validate one parsed sample line; return its doc_id, filter and the document fields seen."""
    if not isinstance(obj, dict):
        raise DataError(
            f"read_lm_eval: {file}:{lineno}: expected a JSON object (one sample), got "
            f"{type(obj).__name__}"
        )
    if "doc_id" not in obj:
        raise DataError(
            f"read_lm_eval: {file}:{lineno}: missing field 'doc_id'; expected the lm_eval "
            f"sample keys {sorted(SAMPLE_KEYS)}; fields present: {sorted(obj)}"
        )
    doc_id = obj["doc_id"]
    if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)):
        raise DataError(
            f"read_lm_eval: {file}:{lineno}: doc_id is {doc_id!r} "
            f"({type(doc_id).__name__}); expected an integer (or string) document id"
        )
    line_task = obj.get("task")
    if isinstance(line_task, str) and line_task != task:
        raise DataError(
            f"read_lm_eval: {file}:{lineno}: the line is for task {line_task!r} but the "
            f"file name says {task!r}; a samples file holds one task (split the file)"
        )
    doc = obj.get("doc")
    if isinstance(doc, dict):
        keys = set(doc)
        if doc_keys is None:
            doc_keys = (keys, lineno)
        elif keys != doc_keys[0]:
            raise DataError(
                f"read_lm_eval: {file}:{lineno}: document fields {sorted(keys)} differ "
                f"from those on line {doc_keys[1]} ({sorted(doc_keys[0])}); a samples "
                "file holds the documents of one task, so this file mixes tasks or was "
                "concatenated from several runs (keep one task per file)"
            )
    filt = obj.get("filter", "none")
    if not isinstance(filt, str):
        raise DataError(
            f"read_lm_eval: {file}:{lineno}: filter is {filt!r}; expected a filter name"
        )
    return doc_id, filt, doc_keys


def read_samples(
    file: Path, task: str, metric: str, filter_: str | None, prompt: str,
) -> tuple[list[dict], list[str]]:
    """Parse one samples file into rows; returns rows and the filters seen.

    Every row's ``prompt`` is ``prompt`` (the run's prompt configuration or
    the user's label); the line's per-document ``prompt_hash`` is kept as
    ``prompt_hash``.
    """
    rows_by_filter: dict[str, list[dict]] = {}
    seen: dict[tuple[str, str], int] = {}
    doc_keys: tuple[set, int] | None = None
    n_lines = 0
    try:
        fh = open(file, "rb")
    except OSError as exc:
        raise DataError(f"read_lm_eval: cannot read {str(file)!r}: {exc}") from exc
    with fh:
        for lineno, raw_bytes in enumerate(fh, start=1):
            raw = decode_utf8(raw_bytes, f"{file}:{lineno}", "read_lm_eval")
            if not raw.strip():
                continue
            n_lines += 1
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"read_lm_eval: {file}:{lineno}: invalid JSON ({exc.msg}, column {exc.colno}); "
                    "expected one JSON object per line as written by lm_eval --log_samples; the "
                    "line may be truncated (re-run the task or delete the partial line)"
                ) from exc
            doc_id, filt, doc_keys = _check_line(obj, file, lineno, task, doc_keys)
            key = (str(doc_id), filt)
            if key in seen:
                raise DataError(
                    f"read_lm_eval: {file}:{lineno}: duplicate doc_id {doc_id!r} (filter {filt!r}); "
                    f"first seen on line {seen[key]}; each document appears once per filter "
                    "(remove the duplicate line; logs written before lm_eval 0.4.3 lack the "
                    "'filter' field and repeat documents once per filter)"
                )
            seen[key] = lineno
            if filter_ is not None and filt != filter_:
                rows_by_filter.setdefault(filt, [])
                continue
            if metric not in obj:
                raise DataError(
                    f"read_lm_eval: {file}:{lineno}: metric {metric!r} not found; metrics present: "
                    f"{_metrics_present(obj)}; pass metric= one of these (a mapping "
                    "task -> metric selects one per task)"
                )
            value = _score(obj[metric], metric, file, lineno)
            ph = obj.get("prompt_hash")
            rows_by_filter.setdefault(filt, []).append({
                "question": str(doc_id), "prompt": prompt, "correct": value, "filter": filt,
                "prompt_hash": ph if isinstance(ph, str) and ph else None,
                "_doc_hash": obj.get("doc_hash"), "_line": lineno,
            })
    if n_lines == 0:
        raise DataError(
            f"read_lm_eval: {file}: the samples file is empty; expected one JSON line per "
            "document (the run may have failed; re-run the task or delete the file)"
        )
    filters = list(rows_by_filter)
    if filter_ is None:
        if len(filters) > 1:
            raise DataError(
                f"read_lm_eval: {file}: task {task!r} was scored with several filters {filters}; "
                f"choose one with filter= (e.g. filter={{{task!r}: {filters[0]!r}}})"
            )
        return rows_by_filter[filters[0]], filters
    if filter_ not in rows_by_filter or not rows_by_filter[filter_]:
        present = [f for f in filters if f != filter_]
        raise DataError(
            f"read_lm_eval: {file}: task {task!r} has no lines with filter {filter_!r}; filters "
            f"present: {present}; pass one of these (filter= accepts a mapping task -> filter)"
        )
    return rows_by_filter[filter_], filters

