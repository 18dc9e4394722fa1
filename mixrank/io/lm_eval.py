"""Stage io: reader for lm-evaluation-harness per-sample logs.

Inputs: the output folder of ``lm_eval ... --log_samples --output_path PATH``
(one sub-folder per model, each holding ``results_<date>.json`` and
``samples_<task>_<date>.jsonl``), a single model folder, or one samples file.
Outputs: the canonical long DataFrame ``model, subject, question, prompt,
correct`` plus ``group``, ``filter`` and ``prompt_hash``.
Contents: :func:`read_lm_eval` and its option handling (tasks, groups,
per-task metric and filter).  The files and lines are read by
:mod:`mixrank.io.lm_eval_logs`.

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

import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .._util import tidy
from ..errors import DataError, MixrankWarning
from ..frame.source import LONG_COLUMNS
from .lm_eval_logs import Run, discover, group_runs, latest_runs, prompt_template, read_samples

__all__ = ["read_lm_eval"]

# one row per doc; prompt_hash is lm-eval's per-document hash of the full context
COLUMNS = [c for c in LONG_COLUMNS if c != "sample"] + ["group", "filter", "prompt_hash"]


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
        A constant prompt label.  ``None`` labels each run's prompt
        configuration (constant across the documents of a task in one run):
        ``"<k>-shot"`` from the results file, plus ``+chat <sha>``,
        ``+system <sha>``, ``+multiturn`` when used; ``"default"`` without
        a results file.
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
        (str, the prompt configuration), ``correct`` (float; booleans as
        0/1), ``group`` (the innermost group containing the task; missing
        when it is in no group), ``filter`` (str) and ``prompt_hash`` (the
        line's per-document hash of its full context, missing when
        absent).  Rows are
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
        When ``prompt=None`` and models ran a task with different prompt
        configurations (few-shot count, chat template, system instruction),
        so those cells do not pair.

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

    ``prompt`` is the prompt *configuration* of the run, the design's prompt
    factor: it is constant across the documents of a task, so a benchmark of
    15 documents run with one template has 15 cells, not 15 documents
    crossed with 15 prompts.  lm-eval's ``prompt_hash`` (the SHA-256 of one
    document's full context: few-shot examples, question, chat template)
    identifies a document's text, not a template, and is kept as the
    ``prompt_hash`` column.  Models run with different few-shot settings or
    chat templates get different configurations and do not pair (a
    warning says so); pass ``prompt="name"`` to pair them regardless.

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
    per_folder, parent, all_tasks, superseded = latest_runs(group_runs(discover(root)))

    def expand(names: Iterable[str]) -> dict[str, set[str]]:
        return _expand(names, parent, all_tasks)

    selected = _select_tasks(tasks, expand, parent, all_tasks, root)
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

    plan = _plan(per_folder, selected, parent)
    frames, used_filters = _rows(plan, metric_map, filter_map, prompt, check_docs)
    out = pd.DataFrame(frames, columns=COLUMNS)
    out["correct"] = out["correct"].astype("float64")
    if prompt is None and len(out):
        configs = out.groupby("subject", sort=True)["prompt"].unique()
        bad = {t: sorted(map(str, v)) for t, v in configs.items() if len(v) > 1}
        if bad:
            warnings.warn(
                f"read_lm_eval: {len(bad)} task(s) were run with different prompt "
                f"configurations across models ({bad}: few-shot count, chat template or "
                "system instruction); their cells will not pair across models. Pass "
                "prompt='<label>' (--prompt-label LABEL) to treat them as the same prompt.",
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


def _select_tasks(tasks: str | Iterable[str] | None, expand: Any, parent: dict[str, str],
                  all_tasks: set[str], root: Path) -> set[str]:
    """The leaf tasks that ``tasks=`` selects (every task when None)."""
    if tasks is None:
        return set(all_tasks)
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
    return set().union(*cover.values())


def _plan(per_folder: list[tuple[Path, str, dict[str, Run]]], selected: set[str],
          parent: dict[str, str]) -> list[tuple[str, Path, str, Path, str | None, str]]:
    """(model, folder, task, samples file, group, prompt configuration) of every selected
    task, one folder per model."""
    plan: list[tuple[str, Path, str, Path, str | None, str]] = []
    model_folders: dict[str, dict[str, Path]] = {}
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
            plan.append((model, folder, task, latest[task].samples[task], parent.get(task),
                         prompt_template(latest[task].info, task)))

    return plan


def _rows(plan: list[tuple[str, Path, str, Path, str | None, str]], metric_map: dict[str, str],
          filter_map: dict[str, str], prompt: str | None, check_docs: bool
          ) -> tuple[list[dict], dict[str, str]]:
    """The long rows of every planned samples file and the filter used per task."""
    frames: list[dict] = []
    used_filters: dict[str, str] = {}
    doc_hash_at: dict[tuple[str, str], tuple[str, Path, int]] = {}
    for model, _folder, task, file, parent_group, template in plan:
        rows, _ = read_samples(file, task, metric_map[task], filter_map.get(task),
                               template if prompt is None else prompt)
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
                "filter": r["filter"], "prompt_hash": r["prompt_hash"],
            })
        if rows:
            used_filters[task] = rows[0]["filter"]

    return frames, used_filters
