"""Stage io: reader for lm-evaluation-harness per-sample logs.

Inputs: the output folder of ``lm_eval ... --log_samples --output_path PATH``
(one sub-folder per model, each holding ``results_<date>.json`` and
``samples_<task>_<date>.jsonl``), a single model folder, or one samples file.
Outputs: the canonical long DataFrame ``model, subject, question, prompt,
correct`` plus ``group`` and ``filter``.
Contents: :func:`read_lm_eval`.

Format matched against EleutherAI/lm-evaluation-harness v0.4.x:
``lm_eval/loggers/evaluation_tracker.py`` (commit 034ab036: file names,
folder per ``model_name_sanitized``, re-keyed ``arguments``),
``lm_eval/evaluator.py`` (``evaluate``: one sample line per (filter, doc) with
``doc_id, doc, target, arguments, resps, filtered_resps, filter, metrics,
doc_hash, prompt_hash, target_hash`` and the per-sample metric values at top
level), ``lm_eval/evaluator_utils.py`` (``get_subtask_list`` → the results
key ``group_subtasks``) and the harness's own results file
``tests/models/results_deleteme/.../results_2025-01-21T00-40-03.356274.json``
(commit 7be00f3b).  Older logs without the ``filter`` key (before v0.4.3)
are read as filter ``"none"``.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._util import tidy
from ..errors import DataError, MixrankWarning
from ._harness import decode_utf8

__all__ = ["read_lm_eval"]

_SAMPLES_RE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d[^_]*)\.jsonl$")
# keys every sample line carries besides the metric values (evaluator.evaluate)
_SAMPLE_KEYS = frozenset({
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter",
    "metrics", "doc_hash", "prompt_hash", "target_hash",
})
# evaluation_tracker.GeneralConfigTracker._get_model_name: order matters
_MODEL_ARG_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")
COLUMNS = ["model", "subject", "question", "prompt", "correct", "group", "filter"]


@dataclass
class _Run:
    """One results file (one ``lm_eval`` invocation) of one model folder."""

    folder: Path
    date: str
    results_file: Path | None
    info: dict = field(default_factory=dict)
    samples: dict[str, Path] = field(default_factory=dict)


# ------------------------------------------------------------------ discovery
def _discover(path: Path) -> list[Path]:
    """Return the samples files under ``path`` (a folder searched recursively, or one file)."""
    if not path.exists():
        raise DataError(
            f"read_lm_eval: path {str(path)!r} does not exist; expected the --output_path folder "
            "of an lm_eval run with --log_samples, a model folder inside it, or a "
            "samples_<task>_<date>.jsonl file"
        )
    if path.is_file():
        if not _SAMPLES_RE.match(path.name):
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


def _load_json(file: Path) -> dict:
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


def _model_name(info: dict, folder: Path) -> str:
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


def _runs(files: list[Path]) -> dict[Path, dict[str, _Run]]:
    """Group samples files by folder and run date, attaching the results files."""
    folders: dict[Path, dict[str, _Run]] = {}
    for f in files:
        m = _SAMPLES_RE.match(f.name)
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
            runs[date] = _Run(f.parent, date, rfile if rfile.is_file() else None)
            if runs[date].results_file is not None:
                runs[date].info = _load_json(rfile)
        runs[date].samples[task] = f
    return folders


def _hierarchy(info: dict) -> dict[str, str]:
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


# ------------------------------------------------------------------ options
def _expand(names: Iterable[str], parent: dict[str, str], leaves: set[str]) -> dict[str, set[str]]:
    """Map each name (task or group) to the set of leaf tasks it covers."""
    children: dict[str, set[str]] = {}
    for child, group in parent.items():
        children.setdefault(group, set()).add(child)

    def leaves_of(name: str, seen: frozenset = frozenset()) -> set[str]:
        if name in leaves and name not in children:
            return {name}
        out: set[str] = set()
        for c in children.get(name, ()):
            if c not in seen:
                out |= leaves_of(c, seen | {name})
        if name in leaves:
            out.add(name)
        return out

    return {n: leaves_of(n) for n in names}


def _per_task(option: Any, name: str, tasks: set[str], expand) -> dict[str, str]:
    """Resolve a str-or-mapping option to ``{task: value}`` for the tasks it names."""
    if option is None:
        return {}
    if isinstance(option, str):
        return dict.fromkeys(tasks, option)
    if not isinstance(option, Mapping):
        raise DataError(
            f"read_lm_eval: {name}= must be a string or a mapping task -> {name}, got "
            f"{type(option).__name__}"
        )
    out: dict[str, str] = {}
    covered = expand(option.keys())
    for key, value in option.items():
        if not isinstance(value, str):
            raise DataError(
                f"read_lm_eval: {name}[{key!r}] must be a string, got {type(value).__name__}"
            )
        if not covered[key]:
            raise DataError(
                f"read_lm_eval: {name}= names {key!r}, which is neither a task nor a group in the "
                f"logs; available tasks: {sorted(tasks)}"
            )
    # groups first, tasks last: an explicit task entry overrides its group's
    for key in sorted(option, key=lambda k: covered[k] == {k}):
        for t in covered[key] & tasks:
            out[t] = option[key]
    return out


# ------------------------------------------------------------------ parsing
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
    return sorted(k for k in obj if k not in _SAMPLE_KEYS)


def _read_samples(
    file: Path, task: str, metric: str, filter_: str | None, prompt: str | None,
) -> tuple[list[dict], list[str]]:
    """Parse one samples file into rows; returns rows and the filters seen."""
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
            if not isinstance(obj, dict):
                raise DataError(
                    f"read_lm_eval: {file}:{lineno}: expected a JSON object (one sample), got "
                    f"{type(obj).__name__}"
                )
            if "doc_id" not in obj:
                raise DataError(
                    f"read_lm_eval: {file}:{lineno}: missing field 'doc_id'; expected the lm_eval "
                    f"sample keys {sorted(_SAMPLE_KEYS)}; fields present: {sorted(obj)}"
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
            if prompt is not None:
                p = prompt
            else:
                ph = obj.get("prompt_hash")
                p = ph if isinstance(ph, str) and ph else "default"
            rows_by_filter.setdefault(filt, []).append({
                "question": str(doc_id), "prompt": p, "correct": value, "filter": filt,
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


# ------------------------------------------------------------------ public
def read_lm_eval(
    path: str | Path,
    *,
    metric: str | Mapping[str, str] = "acc",
    prompt: str | None = None,
    tasks: str | Iterable[str] | None = None,
    filter: str | Mapping[str, str] | None = None,
    check_docs: bool = True,
) -> pd.DataFrame:
    """Read lm-evaluation-harness ``--log_samples`` output as a long DataFrame.

    Parameters
    ----------
    path : str or Path
        The ``--output_path`` folder (one sub-folder per model, searched
        recursively), one model folder, or a single
        ``samples_<task>_<date>.jsonl`` file.
    metric : str or mapping, default "acc"
        The per-sample metric field used as the score (``acc``, ``acc_norm``,
        ``exact_match``, ``f1``, ...).  A mapping ``{task or group: metric}``
        chooses one per task; it must cover every task read.
    prompt : str, optional
        A constant prompt label.  ``None`` uses each line's ``prompt_hash``
        (``"default"`` where absent).
    tasks : str or list of str, optional
        Tasks or groups to read (groups expand to their leaf tasks through the
        results file's ``group_subtasks``).  ``None`` reads every samples file.
    filter : str or mapping, optional
        The filter pipeline whose lines are read (``"none"``,
        ``"strict-match"``, ...).  ``None`` requires each task to have exactly
        one filter.  A mapping ``{task or group: filter}`` chooses per task;
        tasks it does not name behave as with ``None``.
    check_docs : bool, default True
        Require the ``doc_hash`` of a (task, doc_id) to agree across models,
        so that different documents are never paired under one id.

    Returns
    -------
    pandas.DataFrame
        One row per (model, task, document): ``model`` (str), ``subject``
        (the leaf task name), ``question`` (``str(doc_id)``), ``prompt``
        (str), ``correct`` (float; booleans as 0/1), ``group`` (the innermost
        group containing the task; missing when it is in no group) and
        ``filter`` (str).  Rows are
        ordered by model folder, task and line.  ``attrs["mixrank"]`` holds
        ``reader``, ``metric`` and ``filter`` per task, ``files`` read and
        ``superseded`` (older samples files not read).

    Raises
    ------
    DataError
        Nonexistent path; no samples files; unparsable file names; invalid
        JSON (file and line); a line without ``doc_id`` or the metric (lists
        the metrics present); a non-numeric score; a duplicated doc_id within
        one task and filter; a file mixing document structures or task names;
        several filters without ``filter=``; unknown task names; two folders
        giving the same model the same task; documents whose ``doc_hash``
        differs across models.

    Warns
    -----
    MixrankWarning
        When ``prompt=None`` and models saw different prompt texts for the
        same document (different ``prompt_hash``), so those cells do not pair.

    Notes
    -----
    Layout (lm_eval v0.4.x, ``EvaluationTracker``)::

        <path>/<model_name_sanitized>/results_<date>.json
        <path>/<model_name_sanitized>/samples_<task>_<date>.jsonl

    The model name is the results file's ``model_name``, else the
    ``pretrained=``/``model=``/... entry of ``config.model_args``, else the
    folder name.  Samples and results files of one run share ``<date>``.
    When a model folder holds several runs of the same task, the latest
    ``<date>`` is read (lm_eval's own "latest" rule per model and task in
    ``recreate_metadata_card``); older files are listed in
    ``attrs["mixrank"]["superseded"]``.  Runs of different tasks are combined.

    Each sample line is one (filter, document); the score is the line's
    top-level ``metric`` value.  Documents missing for some models are legal
    (unbalanced designs), but a doc_id repeated within one task file and
    filter is an error naming both lines.  One samples file holds one task:
    every ``doc`` must have the same fields as the file's first line, and a
    line carrying a ``task`` key must name the file's task.

    ``prompt_hash`` is the SHA-256 of the first request's full context (the
    few-shot examples, the question and any chat template), so it identifies
    the exact prompt of one document rather than a template: models run with
    different few-shot settings or chat templates get different hashes and do
    not pair.  Pass ``prompt="name"`` to pair them regardless.

    Validated against the format of EleutherAI/lm-evaluation-harness v0.4.x
    (files cited in the module docstring) with the fixture tree in
    ``tests/io/fixtures/lm_eval``.

    References
    ----------
    Gao et al., "A framework for few-shot language model evaluation",
    lm-evaluation-harness, https://github.com/EleutherAI/lm-evaluation-harness

    Examples
    --------
    >>> df = read_lm_eval("results/", metric="acc", tasks=["arc_easy", "mmlu"])  # doctest: +SKIP
    """
    root = Path(path)
    files = _discover(root)
    folders = _runs(files)

    # per folder: model name, task -> latest run, group parents
    plan: list[tuple[str, Path, str, Path, str | None]] = []  # model, folder, task, file, group
    superseded: list[tuple[str, str]] = []  # (task, file)
    model_folders: dict[str, dict[str, Path]] = {}
    parent: dict[str, str] = {}
    all_tasks: set[str] = set()
    per_folder: list[tuple[Path, str, dict[str, _Run]]] = []
    for folder in sorted(folders):
        runs = folders[folder]
        names: dict[str, Path] = {}
        for run in runs.values():
            if run.results_file is not None:
                names.setdefault(_model_name(run.info, folder), run.results_file)
        if len(names) > 1:
            raise DataError(
                f"read_lm_eval: folder {str(folder)!r} holds results of several models "
                f"{sorted(names)} (in {sorted(str(p.name) for p in names.values())}); expected one "
                "model per folder as lm_eval writes them (move the runs into separate folders)"
            )
        model = next(iter(names)) if names else folder.name
        fparent: dict[str, str] = {}
        latest: dict[str, _Run] = {}
        for date in sorted(runs):
            run = runs[date]
            for child, group in _hierarchy(run.info).items():
                fparent[child] = group
            for task in run.samples:
                if task in latest:
                    superseded.append((task, str(latest[task].samples[task])))
                latest[task] = run
        for child, group in fparent.items():
            parent.setdefault(child, group)
        all_tasks |= set(latest)
        per_folder.append((folder, model, latest))

    def expand(names: Iterable[str]) -> dict[str, set[str]]:
        return _expand(names, parent, all_tasks)

    selected = set(all_tasks)
    if tasks is not None:
        wanted = [tasks] if isinstance(tasks, str) else list(tasks)
        if not wanted or not all(isinstance(t, str) for t in wanted):
            raise DataError(
                f"read_lm_eval: tasks= must be a task/group name or a non-empty list of names, "
                f"got {tasks!r}; available tasks: {sorted(all_tasks)}"
            )
        cover = expand(wanted)
        unknown = [t for t in wanted if not cover[t]]
        if unknown:
            groups = sorted(set(parent.values()))
            raise DataError(
                f"read_lm_eval: tasks {unknown} not found in the logs under {str(root)!r}; "
                f"available tasks: {sorted(all_tasks)}; groups: {groups}"
            )
        selected = set().union(*cover.values())

    metric_map = _per_task(metric, "metric", selected, expand)
    missing = sorted(selected - set(metric_map))
    if missing:
        raise DataError(
            f"read_lm_eval: metric= mapping has no entry for tasks {missing}; add them (or their "
            "group) to the mapping, or restrict tasks="
        )
    filter_map = _per_task(filter, "filter", selected, expand)
    if prompt is not None and not isinstance(prompt, str):
        raise DataError(
            f"read_lm_eval: prompt= must be a string label or None, got {type(prompt).__name__}"
        )

    for folder, model, latest in per_folder:
        for task in sorted(latest):
            if task not in selected:
                continue
            other = model_folders.setdefault(model, {}).get(task)
            if other is not None and other != folder:
                raise DataError(
                    f"read_lm_eval: model {model!r} has task {task!r} in two folders, "
                    f"{str(other)!r} and {str(folder)!r}; expected one folder per model "
                    "(remove one run or read the folders separately)"
                )
            model_folders[model][task] = folder
            plan.append((model, folder, task, latest[task].samples[task], parent.get(task)))

    frames: list[dict] = []
    used_filters: dict[str, str] = {}
    doc_hash_at: dict[tuple[str, str], tuple[str, Path, int]] = {}
    for model, _folder, task, file, parent_group in plan:
        rows, _ = _read_samples(file, task, metric_map[task], filter_map.get(task), prompt)
        for r in rows:
            if check_docs and isinstance(r["_doc_hash"], str):
                key = (task, r["question"])
                prev = doc_hash_at.setdefault(key, (r["_doc_hash"], file, r["_line"]))
                if prev[0] != r["_doc_hash"]:
                    raise DataError(
                        f"read_lm_eval: {file}:{r['_line']}: task {task!r} doc_id "
                        f"{r['question']} is a different document (doc_hash) than in "
                        f"{prev[1]}:{prev[2]}; models must be scored on the same documents to "
                        "be paired (check dataset versions, or pass check_docs=False)"
                    )
            frames.append({
                "model": model, "subject": task, "question": r["question"],
                "prompt": r["prompt"], "correct": r["correct"], "group": parent_group,
                "filter": r["filter"],
            })
        if rows:
            used_filters[task] = rows[0]["filter"]

    out = pd.DataFrame(frames, columns=COLUMNS)
    out["correct"] = out["correct"].astype("float64")
    if prompt is None and len(out):
        n_prompts = out.groupby(["subject", "question"], sort=False)["prompt"].nunique()
        n_bad = int((n_prompts > 1).sum())
        if n_bad:
            warnings.warn(
                f"read_lm_eval: {n_bad} of {len(n_prompts)} documents were shown to different "
                "models with different prompts (prompt_hash differs, e.g. different few-shot "
                "settings or chat templates); those cells will not pair across models. Pass "
                "prompt='<label>' to treat them as the same prompt.",
                MixrankWarning,
                stacklevel=2,
            )
    return tidy(
        out,
        reader="read_lm_eval",
        source=str(root),
        metric=dict(sorted(metric_map.items())),
        filter=dict(sorted(used_filters.items())),
        files=[str(p[3]) for p in plan],
        superseded=sorted(f for t, f in superseded if t in selected),
    )
