"""
From lm-evaluation-harness logs to a report
===========================================

`lm_eval ... --log_samples --output_path OUT` writes, per model, a results
file and one `samples_<task>_<date>.jsonl` per task with the per-document
scores.  `mixrank.read(OUT, format="lm_eval")` turns such a folder into mixrank's long
format; a fit and `write_report` make a one-file HTML report.

This vignette uses the small fixture tree shipped with the tests
(`tests/io/fixtures/lm_eval/`: two models, a handful of documents from
ARC-Easy, GSM8K and two MMLU subjects), so it runs anywhere.  With real
logs, point the reader at your `--output_path`.
"""

# %%
import tempfile
import warnings
from pathlib import Path

import mixrank
from mixrank.report import plot_contrasts, write_report


def repo_root() -> Path:
    here = Path(globals().get("__file__", "vignettes/x.py")).resolve().parent
    for p in [Path.cwd(), *Path.cwd().parents, here, *here.parents]:
        if (p / "tests" / "io" / "fixtures" / "lm_eval").is_dir():
            return p
    raise FileNotFoundError("run from the mixrank repository")


logs = repo_root() / "tests" / "io" / "fixtures" / "lm_eval"
for p in sorted(logs.rglob("*.json*")):
    print(p.relative_to(logs))

# %%
# Reading the logs
# ----------------
#
# Tasks score documents with different metrics (`acc` for multiple choice,
# `exact_match` for GSM8K) and GSM8K logs two answer filters; say which one
# to use per task.  `prompt="default"` gives all documents one prompt label
# (otherwise each line's `prompt_hash` is used, and models that saw different
# few-shot contexts would not pair).  A folder with several runs of a task is
# read at its latest run; the superseded files are listed in the metadata.

# %%
data = mixrank.read(
    logs,
    format="lm_eval",
    metric={"arc_easy": "acc", "gsm8k": "exact_match", "mmlu_stem_mini": "acc"},
    filter={"gsm8k": "strict-match"},
    prompt="default",
)
meta = data.attrs["mixrank"]
print("metric per task:", meta["metric"])
print("superseded:", [Path(f).name for f in meta["superseded"]])
data.head(8)

# %%
data.groupby(["model", "subject"]).size().unstack()

# %%
# One document of ARC-Easy was run for one model only: the pair is analysed
# on the cells both models have.
#
# Fit and report
# --------------
#
# Tasks are the natural unit here (`(1|subject)`), though four tasks are far
# too few for any firm conclusion: the report will say so through wide
# intervals and unresolved verdicts.

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    res = mixrank.fit("correct ~ model + (1|subject)", data)
for w in caught:
    print(f"[{w.category.__name__}] {w.message}")
# the prose above, checked: four tasks; one ARC-Easy document run for one model only
sizes = data.groupby(["model", "subject"]).size().unstack()
assert data["subject"].nunique() == 4 and (sizes.max() - sizes.min()).to_dict().get("arc_easy") == 1
assert int(res.diagnostics()[["only_a", "only_b"]].to_numpy().sum()) == 1
assert not res.resolution()["resolved_all"].any()                    # unresolved verdicts
res.contrasts()[["model_a", "model_b", "estimate", "std_error", "df", "p_value", "n"]]

# %%
# The same contrasts as a forest plot (the report draws this figure too):

# %%
ax = plot_contrasts(res, title="lm-eval fixture: pythia vs Qwen, 95% CI at the task unit")

# %%
out_dir = Path(tempfile.mkdtemp(prefix="mixrank-vignette-"))
report = write_report(res, out_dir / "report.html", title="lm-eval fixture: pythia vs Qwen",
                      plan_delta=0.1)
text = report.read_text(encoding="utf-8")
print(f"wrote {report} ({len(text) / 1024:.0f} KiB, {text.count('data-plot=')} plots)")
print("sections omitted:", text.count('class="omitted"'))
assert "<script" not in text and "<link" not in text          # self-contained, no scripts

# %%
# The page is self-contained (inline CSS, plots as embedded PNG, no scripts)
# and can be opened offline or attached to a pull request.  The command line
# does the same in one step:
#
# .. code-block:: text
#
#    mixrank report OUT -f "correct ~ model + (1|subject)" -o report.html \
#        --metric arc_easy=acc,gsm8k=exact_match,mmlu_stem_mini=acc \
#        --filter gsm8k=strict-match --prompt-label default
