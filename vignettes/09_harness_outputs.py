"""
From any evaluation harness to paired comparisons
=================================================

People run their evaluations with lm-evaluation-harness, Inspect, HELM or
lighteval.  `mixrank.read(folder)` recognises each harness's output folder
and returns the same long table -- `model, subject, question, prompt,
sample, correct` -- with a record of which log field became which column.
This vignette reads the four folders under `tests/io/fixtures/generated/`,
written by the harnesses themselves (lm-eval 0.4.13 with its `dummy`
model, `inspect_ai.eval()` 0.3.285 with an offline model provider) or by
their own schema classes (HELM 0.5.16, lighteval 0.13.0); see
`tests/io/producers/generate.py`.  Two "models" answer a few items of two
or three tasks each, so the numbers are tiny; the steps are those of a real
run.
"""

# %%
import json
import warnings
from pathlib import Path

import mixrank
from mixrank.io.read import describe, detect_format
from mixrank.report import plot_contrasts


def repo_root() -> Path:
    here = Path.cwd()
    for p in [here, *here.parents, Path(__file__).resolve().parent.parent
              if "__file__" in globals() else here]:
        if (p / "tests" / "io" / "fixtures" / "generated").is_dir():
            return p
    raise FileNotFoundError("run from the mixrank repository")


GEN = repo_root() / "tests" / "io" / "fixtures" / "generated"
for name in ["lm_eval", "inspect_json", "helm", "lighteval"]:
    print(f"{name:>13}: {detect_format(GEN / name)}")

# %%
# What became what
# ----------------
#
# `describe` prints the mapping the reader used and the rows per subject --
# the command line (`mixrank report <folder>`) prints the same lines.  In
# Inspect logs the epochs become `sample`; in HELM the perturbation becomes
# `prompt` and the train trial `sample`.

# %%
inspect_rows = mixrank.read(GEN / "inspect_json")
print(describe(inspect_rows))
inspect_rows.head()

# %%
helm_rows = mixrank.read(GEN / "helm", metric="exact_match")
print(describe(helm_rows))
helm_rows.groupby(["model", "subject", "prompt"])["correct"].mean().unstack("prompt")

# %%
# The harness's own numbers come back
# -----------------------------------
#
# The mean of `correct` per model and task is the accuracy the harness
# reported: here lighteval's results file, whose per-task values are the
# mean of the per-example metric.

# %%
light = mixrank.read(GEN / "lighteval", metric="acc")
ours = light.groupby(["model", "task"])["correct"].mean()
for f in sorted((GEN / "lighteval" / "results").rglob("results_*.json")):
    blob = json.loads(f.read_text())
    for task, values in blob["results"].items():
        model = blob["config_general"]["model_name"]
        print(f"{model} {task}: lighteval {values['acc']:.4f}  mixrank {ours[(model, task)]:.4f}")
        assert abs(values["acc"] - ours[(model, task)]) < 1e-12   # the harness's number back

# %%
# The left side of the formula names the metric
# ---------------------------------------------
#
# Given a folder instead of a table, `mixrank.fit` reads the metric the
# formula's left side names -- `acc_norm ~ ...` reads lm-eval's `acc_norm`
# -- so a formula means the same here and on the command line
# (`mixrank contrasts out/ -f "acc_norm ~ model + (1|subject)"`).

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.SingularFitWarning)  # 3 tasks: subject variance ~ 0
    acc = mixrank.fit("acc ~ model + (1|subject)", GEN / "lm_eval")
    acc_norm = mixrank.fit("acc_norm ~ model + (1|subject)", GEN / "lm_eval")
print(acc.contrasts()[["model_a", "model_b", "estimate", "std_error", "df"]])
print(acc_norm.contrasts()[["model_a", "model_b", "estimate", "std_error", "df"]])
assert acc.frame.spec.response == "acc" and acc_norm.frame.spec.response == "acc_norm"
assert (acc.frame.scores != acc_norm.frame.scores).any()     # two metrics, two sets of scores

# %%
# Repeated samples (Inspect epochs, HELM train trials) are replicates of a
# cell: pass `replicate="sample"` (the command line does it by itself when
# the samples differ).

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.SingularFitWarning)
    res = mixrank.fit("correct ~ model + (1|subject)", inspect_rows, replicate="sample")
res.contrasts()[["model_a", "model_b", "estimate", "std_error", "df", "p_value"]]

# %%
ax = plot_contrasts(res, title="Inspect log: the two models' contrast, 95% CI")
