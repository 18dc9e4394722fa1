"""Stage io: reader for HELM (crfm-helm) benchmark output folders.

Inputs: ``benchmark_output/``, ``runs/``, ``runs/<suite>/`` or one run folder
``runs/<suite>/<run>/`` holding ``run_spec.json`` and
``per_instance_stats.json`` (``scenario_state.json`` and ``stats.json``
sit beside them and are not needed).
Outputs: the canonical long DataFrame ``model, subject, question, prompt,
sample, correct`` plus ``run`` and ``suite``.
Contents: :func:`read_helm`.

Format (``helm.benchmark.runner`` writes each file with
``json.dumps(asdict_without_nones(...), indent=2)``): ``run_spec.json`` is a
``RunSpec`` (``name``, ``adapter_spec.model``, ``scenario_spec``);
``per_instance_stats.json`` a list of ``PerInstanceStats`` --
``instance_id``, optional ``perturbation`` (``PerturbationDescription``:
``name``, ``robustness``, ``fairness``, ...), ``train_trial_index`` and
``stats``, each a ``Stat`` whose ``name`` is a ``MetricName`` (``name``,
``split``, optional ``sub_split`` and ``perturbation``) with ``count``,
``sum`` and ``mean``.  Matched against crfm-helm 0.5.16's classes
(``tests/io/producers/generate.py``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DataError
from ._harness import choose_metric, finish, load_json

__all__ = ["read_helm"]

READER = "read_helm"
ORIGINAL = "original"
_MODEL_PART = re.compile(r"(^|,)(model|model_deployment)=[^,]*")


def _run_dirs(path: Path) -> list[Path]:
    if not path.exists():
        raise DataError(f"{READER}: path {str(path)!r} does not exist; expected HELM's "
                        "benchmark_output folder, runs/<suite>, or one run folder")
    if path.is_file():
        path = path.parent
    dirs = sorted({p.parent for p in path.rglob("per_instance_stats.json")})
    if not dirs:
        raise DataError(f"{READER}: no per_instance_stats.json under {str(path)!r}; expected "
                        "HELM's runs/<suite>/<run>/ folders (written by helm-run)")
    return dirs


def subject_of(run_name: str) -> str:
    """The run name without its ``model=``/``model_deployment=`` arguments."""
    head, _, args = run_name.partition(":")
    rest = _MODEL_PART.sub("", args).strip(",")
    return f"{head}:{rest}" if rest else head


def _stat_value(stat: dict, metric: str, where: str) -> float:
    count, total, mean = stat.get("count"), stat.get("sum"), stat.get("mean")
    if isinstance(mean, (int, float)) and not isinstance(mean, bool):
        return float(mean)
    if isinstance(count, int) and count > 0 and isinstance(total, (int, float)):
        return float(total) / count
    raise DataError(f"{READER}: {where}: stat {metric!r} has no mean (count={count!r}, "
                    f"sum={total!r}); expected a HELM Stat with count >= 1")


def _run_rows(run: Path, metric: str | None, split: str | None) -> tuple[list[dict], str]:
    spec = load_json(run / "run_spec.json", READER, "a HELM RunSpec") \
        if (run / "run_spec.json").exists() else None
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise DataError(f"{READER}: {run}: run_spec.json is missing or has no 'name'; expected "
                        "the RunSpec HELM writes next to per_instance_stats.json")
    model = (spec.get("adapter_spec") or {}).get("model")
    if not isinstance(model, str) or not model:
        raise DataError(f"{READER}: {run / 'run_spec.json'}: adapter_spec.model is missing; "
                        "expected the model name (e.g. openai/gpt2)")
    named = re.search(r"(?:^|[:,])model=([^,]*)", spec["name"])
    if named and named.group(1) not in (model, model.replace("/", "_")):
        raise DataError(f"{READER}: {run / 'run_spec.json'}: the run name says model="
                        f"{named.group(1)!r} but adapter_spec.model is {model!r}; the folder "
                        "mixes runs of different models (re-run or remove it)")
    file = run / "per_instance_stats.json"
    entries = load_json(file, READER, "a list of HELM PerInstanceStats")
    if not isinstance(entries, list) or not all(
            isinstance(e, dict) and "instance_id" in e and isinstance(e.get("stats"), list)
            for e in entries):
        raise DataError(f"{READER}: {file}: not the per-instance format this reader knows "
                        "(a list of objects with instance_id, train_trial_index and stats, as "
                        "written by crfm-helm >= 0.2); the file is from another HELM version "
                        "or damaged")
    available = {s["name"]["name"] for e in entries for s in e["stats"]
                 if isinstance(s.get("name"), dict) and "name" in s["name"]}
    chosen = choose_metric(metric, available, str(file), READER,
                           preferred=("exact_match", "quasi_exact_match"))
    subject = subject_of(spec["name"])
    rows: list[dict] = []
    seen: dict[tuple[str, str, int], int] = {}
    for i, e in enumerate(entries):
        where = f"{file}: entry {i} (instance {e['instance_id']!r})"
        pert = e.get("perturbation")
        prompt = pert.get("name", "perturbed") if isinstance(pert, dict) else ORIGINAL
        trial = e.get("train_trial_index", 0)
        if isinstance(trial, bool) or not isinstance(trial, int):
            raise DataError(f"{where}: train_trial_index is {trial!r}; expected an integer")
        stats = [s for s in e["stats"] if isinstance(s.get("name"), dict)
                 and s["name"].get("name") == chosen and not s["name"].get("sub_split")
                 and (split is None or s["name"].get("split") == split)]
        if not stats:
            continue  # this instance has no value of the metric (HELM omits empty stats)
        if len(stats) > 1:
            raise DataError(f"{READER}: {where}: {len(stats)} stats named {chosen!r} (splits "
                            f"{[s['name'].get('split') for s in stats]}); choose one with split=")
        key = (str(e["instance_id"]), prompt, trial)
        if key in seen:
            raise DataError(f"{READER}: {where}: instance {key[0]!r}, perturbation {prompt!r}, "
                            f"trial {trial} repeats entry {seen[key]}; the file is damaged")
        seen[key] = i
        rows.append({"model": model, "subject": subject, "question": key[0], "prompt": prompt,
                     "sample": trial, "correct": _stat_value(stats[0], chosen, where),
                     "run": spec["name"], "suite": run.parent.name})
    if not rows:
        raise DataError(f"{READER}: {file}: no instance has metric {chosen!r}"
                        + (f" on split {split!r}" if split else "")
                        + f"; metrics present: {sorted(available)}")
    return rows, chosen


def read_helm(path: str | Path, *, metric: str | None = None,
              split: str | None = None) -> pd.DataFrame:
    """Read HELM per-instance statistics as a long DataFrame.

    Parameters
    ----------
    path : str or Path
        HELM's ``benchmark_output`` folder, ``runs/<suite>``, or one run folder.
    metric : str, optional
        The statistic read (``exact_match``, ``quasi_exact_match``,
        ``prefix_exact_match``, ``f1_score``, ...).  ``None`` takes
        ``exact_match``, else ``quasi_exact_match``, else the only one.
    split : str, optional
        Keep only stats of this split (``test``, ``valid``); ``None`` keeps
        every split (an instance belongs to one).

    Returns
    -------
    pandas.DataFrame
        One row per (run, instance, perturbation, train trial): ``model``
        (``adapter_spec.model``), ``subject`` (the run name without its
        ``model=`` arguments, e.g. ``mmlu:subject=anatomy,method=...``),
        ``question`` (``instance_id``), ``prompt`` (the perturbation name, or
        ``"original"``), ``sample`` (``train_trial_index``), ``correct`` (the
        stat's mean), ``run`` (the run name) and ``suite``.
        ``attrs["mixrank"]`` holds ``mapping``, ``metric`` per subject,
        ``rows_per_subject`` and ``runs``.

    Raises
    ------
    DataError
        No run folders; a missing or damaged ``run_spec.json``; invalid JSON,
        truncation or non-UTF-8 bytes (file and position); a per-instance file
        of an unknown layout; an unknown metric (lists those present); a run
        name whose model disagrees with ``adapter_spec.model``; the same model
        and subject in two suites; a repeated (instance, perturbation, trial).

    Notes
    -----
    HELM's aggregate ``stats.json`` for a metric without perturbation is the
    mean over train trials of the mean over instances of the original
    (unperturbed) instances -- the mean of ``correct`` over this reader's
    ``prompt == "original"`` rows when every trial has every instance.
    Validated against run folders written with crfm-helm 0.5.16's classes
    and its own ``Metric.evaluate`` aggregation
    (``tests/io/test_harness_readers.py``).
    """
    root = Path(path)
    rows: list[dict] = []
    metrics: dict[str, str] = {}
    owner: dict[tuple[str, str], Path] = {}
    runs: list[str] = []
    for run in _run_dirs(root):
        got, chosen = _run_rows(run, metric, split)
        key = (got[0]["model"], got[0]["subject"])
        if key in owner:
            raise DataError(f"{READER}: model {key[0]!r} has run {key[1]!r} twice, in "
                            f"{str(owner[key])!r} and {str(run)!r}; read one suite (pass "
                            "runs/<suite>) or remove one run")
        owner[key] = run
        rows += got
        metrics[key[1]] = chosen
        runs.append(str(run))
    mapping: dict[str, Any] = {
        "model": "run_spec.adapter_spec.model", "subject": "run name without model=",
        "question": "instance_id", "prompt": "perturbation.name ('original' when none)",
        "sample": "train_trial_index", "correct": "stat mean of <metric>",
    }
    return finish(rows, ["run", "suite"], reader=READER, source=str(root), mapping=mapping,
                  metric=dict(sorted(metrics.items())), runs=runs)
