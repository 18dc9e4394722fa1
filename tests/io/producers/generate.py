"""Write the harness fixtures under ``tests/io/fixtures/generated/`` with the harnesses themselves.

Run from the repository root, in an environment with ``pip install -e '.[producers]'``::

    python tests/io/producers/generate.py            # all four harnesses
    python tests/io/producers/generate.py lm_eval    # one

Everything runs offline (no network, no model weights):

* **lm_eval** (lm-evaluation-harness 0.4.13): the real ``lm_eval`` command
  with its own ``--model dummy`` on three local YAML tasks over JSONL files,
  two groups (``mx_facts`` and the group of groups ``mx_all``), two
  "models" (``--model_args pretrained=<name>`` with different ``--seed``),
  ``--log_samples``; ``model-a`` has two runs in its folder.
* **inspect** (inspect_ai 0.3.285): ``inspect_ai.eval()`` with an offline
  model provider of this suite (``Offline``, a ``ModelAPI`` registered with
  ``@modelapi`` that overrides ``count_tokens``, because the default token
  counter downloads a tokenizer), two tasks x two models x two epochs,
  ``.eval`` logs; the same logs re-written as ``.json`` with
  ``inspect_ai.log.write_eval_log`` under ``inspect_json``.
* **helm** (crfm-helm 0.5.16) cannot run here: ``helm-run`` needs torch and
  transformers.  The fixture is written with HELM's own schema classes and
  serialisers (``Instance``, ``RequestState``, ``ScenarioState``,
  ``RunSpec``, ``Stat``/``PerInstanceStats``, ``asdict_without_nones``) into
  the layout ``runs/<suite>/<run>/`` that ``helm.benchmark.runner`` writes;
  per-instance ``exact_match`` comes from HELM's own ``exact_match`` and the
  run's ``stats.json`` is aggregated with HELM's ``Stat.merge``/``take_mean``
  as ``Metric.evaluate`` does (per train trial, then over trials).
* **lighteval** (0.13.0) needs torch to run.  The fixture is written with
  lighteval's own ``Doc`` and ``ModelResponse`` dataclasses (imported with a
  two-attribute ``torch`` stand-in, used only for type annotations in
  ``lighteval.models.model_output``), serialised as
  ``EvaluationTracker.save`` does (``asdict`` per detail,
  ``datasets.Dataset.from_list``, columns sorted, ``to_parquet`` at
  ``details/<model>/<date>/details_<task>_<date>.parquet``), with a
  ``results/<model>/results_<date>.json`` whose per-task values are the
  mean of the per-sample metric (lighteval's aggregation for sample metrics).

The committed output is compared with a fresh run by
``tests/io/test_producers.py`` (marker ``producers``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures" / "generated"
MODELS = ("model-a", "model-b")


def _score(*parts: object) -> bool:
    """A reproducible 'is the answer right' for an offline model (about 2/3 right)."""
    h = int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest(), 16)
    return h % 3 != 0


# ---------------------------------------------------------------- lm-eval
LM_TASKS = {
    "mx_arith": [{"q": f"{a} + {b} =", "choices": [str(a + b), str(a + b + 1), str(a + b - 1)],
                  "gold": 0} for a, b in [(1, 2), (3, 4), (5, 6), (7, 1), (2, 2), (9, 3)]],
    "mx_capitals": [{"q": f"Capital of {c}?", "choices": [x, "Paris", "Lima"], "gold": 0}
                    for c, x in [("Chad", "N'Djamena"), ("Mali", "Bamako"), ("Peru", "Lima"),
                                 ("Fiji", "Suva"), ("Laos", "Vientiane")]],
    "mx_colors": [{"q": f"Colour of {t}?", "choices": ["red", "green", "blue", "white"],
                   "gold": g} for t, g in [("blood", 0), ("grass", 1), ("sky", 2), ("snow", 3)]],
}


def _lm_eval_tasks(folder: Path) -> None:
    folder.mkdir(parents=True)
    for task, docs in LM_TASKS.items():
        (folder / f"{task}.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
        (folder / f"{task}.yaml").write_text(
            f"task: {task}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
            f"    test: {folder / (task + '.jsonl')}\ntest_split: test\n"
            "output_type: multiple_choice\ndoc_to_text: \"{{q}}\"\n"
            "doc_to_choice: \"{{choices}}\"\ndoc_to_target: gold\nmetric_list:\n"
            "  - metric: acc\n    aggregation: mean\n    higher_is_better: true\n"
            "  - metric: acc_norm\n    aggregation: mean\n    higher_is_better: true\n")
    (folder / "mx_facts.yaml").write_text(
        "group: mx_facts\ntask:\n  - mx_capitals\n  - mx_colors\naggregate_metric_list:\n"
        "  - metric: acc\n    weight_by_size: true\n")
    (folder / "mx_all.yaml").write_text(
        "group: mx_all\ntask:\n  - mx_arith\n  - mx_facts\naggregate_metric_list:\n"
        "  - metric: acc\n    weight_by_size: true\n")


def lm_eval(out: Path) -> None:
    """Run ``lm_eval --model dummy`` three times (model-a twice, model-b once)."""
    with tempfile.TemporaryDirectory() as tmp:
        tasks = Path(tmp) / "tasks"
        _lm_eval_tasks(tasks)
        env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
                   HF_DATASETS_CACHE=str(Path(tmp) / "hf"), TOKENIZERS_PARALLELISM="false")
        runs = [("model-a", "mx_arith", "11"), ("model-a", "mx_all", "1"),
                ("model-b", "mx_all", "2")]
        exe = Path(sys.executable).with_name("lm_eval")
        for model, task, seed in runs:
            cmd = [str(exe), "--model", "dummy", "--model_args", f"pretrained={model}",
                   "--include_path", str(tasks), "--tasks", task, "--log_samples",
                   "--output_path", str(out), "--seed", seed]
            res = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True,
                                 timeout=600)
            if res.returncode != 0:
                raise RuntimeError(f"lm_eval failed:\n{res.stderr[-3000:]}")
            (out / model / f"stdout_{seed}.txt").write_text(res.stdout)


# ---------------------------------------------------------------- Inspect
def inspect(out: Path) -> None:
    """Two tasks x two models x two epochs through ``inspect_ai.eval()``, offline."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.log import write_eval_log
    from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, modelapi
    from inspect_ai.scorer import includes, match
    from inspect_ai.solver import generate

    @modelapi(name="mxoffline")
    class Offline(ModelAPI):
        """Answers right or wrong reproducibly from (model, question, call number)."""

        def __init__(self, model_name, base_url=None, api_key=None, config=None, **kwargs):
            super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
            self.calls: dict[str, int] = {}

        async def count_tokens(self, input, config=None):  # noqa: A002 - Inspect's signature
            return len(str(input).split())

        async def generate(self, input, tools, tool_choice, config):  # noqa: A002
            text = input[-1].text
            k = self.calls[text] = self.calls.get(text, 0) + 1
            answer = text.rsplit("#", 1)[-1].strip()
            if not _score(self.model_name, text, k):
                answer = "no idea"
            return ModelOutput.from_content(model=self.model_name, content=answer)

    arith = Task(
        dataset=MemoryDataset([
            Sample(id=f"a{i}", input=f"What is {i} + {i + 3}? # {2 * i + 3}",
                   target=str(2 * i + 3), metadata={"level": "easy" if i < 3 else "hard"})
            for i in range(6)], name="arith"),
        solver=generate(), scorer=match(), name="arith")
    words = Task(
        dataset=MemoryDataset([
            Sample(id=i + 1, input=f"Spell the word {w} backwards. # {w[::-1]}",
                   target=w[::-1], metadata={"level": "easy" if len(w) < 5 else "hard"})
            for i, w in enumerate(["cat", "house", "river", "moon", "garden"])], name="words"),
        solver=generate(), scorer=includes(), name="words")
    logs = inspect_eval([arith, words], model=[f"mxoffline/{m}" for m in MODELS],
                        log_dir=str(out / "inspect"), epochs=2, display="none", max_samples=1,
                        max_tasks=1, log_format="eval")
    for log in logs:
        if log.status != "success":
            raise RuntimeError(f"inspect eval failed: {log.error}")
        name = Path(log.location).name.replace(".eval", ".json")
        write_eval_log(log, str(out / "inspect_json" / name), format="json")


# ---------------------------------------------------------------- HELM
HELM_SCENARIOS = {
    "mx_arith:level=easy": [(f"id{i}", f"{i} + {i} =", str(2 * i)) for i in range(5)],
    "mx_trivia": [(f"id{i}", q, a) for i, (q, a) in enumerate(
        [("Largest planet?", "Jupiter"), ("Author of Hamlet?", "Shakespeare"),
         ("Chemical symbol of gold?", "Au"), ("Capital of Japan?", "Tokyo")])],
}


def helm(out: Path) -> None:
    """HELM run folders from HELM's own classes and aggregation (see the module docstring)."""
    from helm.benchmark.adaptation.adapter_spec import AdapterSpec
    from helm.benchmark.adaptation.request_state import RequestState
    from helm.benchmark.adaptation.scenario_state import ScenarioState
    from helm.benchmark.augmentations.perturbation_description import PerturbationDescription
    from helm.benchmark.metrics.evaluate_reference_metrics import exact_match
    from helm.benchmark.metrics.metric import Metric, MetricSpec
    from helm.benchmark.metrics.metric_name import MetricName
    from helm.benchmark.metrics.statistic import Stat
    from helm.benchmark.run_spec import RunSpec
    from helm.benchmark.scenarios.scenario import (
        CORRECT_TAG,
        Input,
        Instance,
        Output,
        Reference,
        ScenarioSpec,
    )
    from helm.common.general import asdict_without_nones
    from helm.common.request import GeneratedOutput, Request, RequestResult

    class ExactMatch(Metric):
        """HELM's exact_match on the first completion, per generation."""

        def evaluate_generation(self, adapter_spec, request_state, metric_service,
                                eval_cache_path):
            gold = request_state.instance.references[0].output.text
            pred = request_state.result.completions[0].text
            return [Stat(MetricName("exact_match")).add(exact_match(gold, pred))]

    typo = PerturbationDescription(name="typos", robustness=True, seed=0)
    for model in MODELS:
        for scenario, items in HELM_SCENARIOS.items():
            name = f"{scenario}{',' if ':' in scenario else ':'}model=mx_{model}"
            adapter = AdapterSpec(method="generation", model=f"mx/{model}",
                                  model_deployment=f"mx/{model}", num_train_trials=2,
                                  max_train_instances=1)
            states = []
            for trial in range(2):
                for ident, question, answer in items:
                    for pert in (None, typo):
                        text = question if pert is None else question.replace("?", " ?")
                        inst = Instance(Input(text), [Reference(Output(answer), [CORRECT_TAG])],
                                        split="test", id=ident, perturbation=pert)
                        right = _score(model, scenario, ident, trial, pert is None)
                        result = RequestResult(
                            success=True, embedding=[], cached=False,
                            completions=[GeneratedOutput(answer if right else "unsure", 0.0, [])])
                        states.append(RequestState(
                            inst, None, None, trial, None,
                            Request(model_deployment=f"mx/{model}", model=f"mx/{model}",
                                    prompt=text), result, 1, False))
            state = ScenarioState(adapter, states)
            metric = ExactMatch()
            with tempfile.TemporaryDirectory() as cache:
                res = metric.evaluate(state, None, cache, parallelism=1)
            spec = RunSpec(name=name, scenario_spec=ScenarioSpec(
                class_name="mx.Scenario", args={"level": "easy"} if ":" in scenario else {}),
                adapter_spec=adapter, metric_specs=[MetricSpec(class_name="mx.ExactMatch")],
                groups=[scenario.split(":")[0]])
            run = out / "runs" / "v1" / name
            run.mkdir(parents=True)
            files = {"run_spec.json": asdict_without_nones(spec),
                     "scenario_state.json": asdict_without_nones(state),
                     "stats.json": [asdict_without_nones(s) for s in res.aggregated_stats],
                     "per_instance_stats.json": [asdict_without_nones(s)
                                                 for s in res.per_instance_stats]}
            for fname, blob in files.items():
                (run / fname).write_text(json.dumps(blob, indent=2))


# ---------------------------------------------------------------- lighteval
LIGHTEVAL_TASKS = {
    "custom|mx_arith|0": [(f"{i} * 2 =", [str(2 * i), str(2 * i + 1)], 0) for i in range(6)],
    "custom|mx_words|0": [(f"Opposite of {a}?", [b, a], 0) for a, b in
                          [("hot", "cold"), ("up", "down"), ("big", "small"), ("old", "new")]],
}


def lighteval(out: Path) -> None:
    """lighteval details and results from its own Doc/ModelResponse classes."""
    import types
    from dataclasses import asdict

    from datasets import Dataset

    # annotations only: lighteval's model_output imports torch; the stand-in is removed again
    # at once so that datasets does not take it for torch
    had_torch = "torch" in sys.modules
    if not had_torch:
        stub = types.ModuleType("torch")
        stub.Tensor = type("Tensor", (), {})  # type: ignore[attr-defined]
        stub.dtype = type("dtype", (), {})  # type: ignore[attr-defined]
        sys.modules["torch"] = stub
    try:
        from lighteval.models.model_output import ModelResponse
        from lighteval.tasks.requests import Doc
    finally:
        if not had_torch:
            del sys.modules["torch"]

    for k, model in enumerate(MODELS):
        date = f"2025-01-0{k + 1}T10-00-00.000000"
        results: dict = {}
        for task, items in LIGHTEVAL_TASKS.items():
            details = []
            for i, (query, choices, gold) in enumerate(items):
                right = _score(model, task, i)
                logprobs = [-0.5, -1.5] if right else [-1.5, -0.5]
                doc = Doc(query=query, choices=choices, gold_index=gold, id=str(i),
                          task_name=task)
                resp = ModelResponse(input=query, text=[choices[0 if right else 1]],
                                     logprobs=logprobs, argmax_logits_eq_gold=[right])
                details.append({"doc": asdict(doc), "model_response": asdict(resp),
                                "metric": {"acc": float(right), "em": float(right and i % 2 == 0)}})
            ds = Dataset.from_list(details)
            ds = ds.select_columns(sorted(ds.column_names))
            folder = out / "details" / model / date
            folder.mkdir(parents=True, exist_ok=True)
            ds.to_parquet(str(folder / f"details_{task}_{date}.parquet"))
            results[task] = {m: sum(d["metric"][m] for d in details) / len(details)
                             for m in ("acc", "em")}
        rfolder = out / "results" / model
        rfolder.mkdir(parents=True)
        blob = {"config_general": {"model_name": model, "lighteval_sha": "0.13.0"},
                "results": results, "versions": {t: 0 for t in LIGHTEVAL_TASKS}}
        (rfolder / f"results_{date}.json").write_text(json.dumps(blob, indent=2))


# ---------------------------------------------------------------- main
HARNESSES = {"lm_eval": lm_eval, "inspect": inspect, "helm": helm, "lighteval": lighteval}


def generate(names: list[str], root: Path = FIXTURES) -> None:
    for name in names:
        target = root / name
        for sub in (target, root / f"{name}_json"):
            if sub.exists() and sub.parent == root:
                shutil.rmtree(sub)
        HARNESSES[name](root if name == "inspect" else target)


if __name__ == "__main__":
    generate(sys.argv[1:] or list(HARNESSES))
