"""
Correcting an LLM judge
=======================

Open-ended benchmarks are scored by an LLM judge, and judges are biased:
lenient overall, and often more lenient to some models than to others.
Labelling a random subset of the outputs with a reference (humans, a
stronger judge) and *correcting* the judge with those labels --
prediction-powered inference with a tuned weight λ (PPI++) -- gives the
scores the reference would give, with honest intervals, for a fraction of
the labelling cost.  `mixrank.fit(..., gold="human")` does this at the
formula's unit of inference (docs/judge.md).

**The data are partly simulated, and this vignette says so plainly.**
No dataset mixrank bundles has both judge scores and reference labels.
We take ChemBench's real design (models x 9 topics x 2,788 questions) and
its real 0/1 correctness as the *reference labels*, and simulate a cheap
judge on top of it: the judge misses 5% of correct answers and accepts a
wrong answer with a probability that depends on the model (it is more
lenient to some models).  Because the reference is known on every cell,
we can check the corrected leaderboard against the truth.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

import mixrank
from mixrank.judge.plan import plan_labels
from mixrank.report.plots_judge import plot_judge_scores

warnings.simplefilter("ignore", mixrank.SingularFitWarning)   # boundary fits are legal
chem = mixrank.load_dataset("chembench")
chem = chem[chem["prompt"] == "default"]
keep = ["o1", "claude3.5", "gpt-4o", "llama3.1-405b-instruct", "mistral-large-2-123b",
        "claude3", "llama3-70b-instruct"]
chem = chem[chem["model"].isin(keep)].reset_index(drop=True)

rng = np.random.default_rng(2026)
lenient = dict(zip(keep, [0.10, 0.12, 0.30, 0.15, 0.35, 0.10, 0.25]))  # P(judge=1 | wrong)
wrong_ok = rng.random(len(chem)) < chem["model"].map(lenient).to_numpy()
right_missed = rng.random(len(chem)) < 0.05
chem["judge"] = np.where(chem["correct"] == 1, ~right_missed, wrong_ok).astype(float)

# label 8% of the questions, the same questions for every model
questions = chem["question"].unique()
labelled = set(rng.choice(questions, size=int(0.08 * len(questions)), replace=False))
chem["human"] = np.where(chem["question"].isin(labelled), chem["correct"], np.nan)
print(chem.shape, f"{chem['human'].notna().mean():.1%} of the rows labelled")

# %%
# Judge-only, corrected, and the truth
# ------------------------------------
#
# The judge-only fit treats the judge as the truth.  The corrected fit uses
# the judge everywhere plus the labels on 8% of the questions.  The last
# column is what the reference would say with every answer labelled --
# available here only because the reference labels are ChemBench's real
# correctness.

# %%
F = "judge ~ model + (1|subject)"
judge_only = mixrank.fit(F, chem, estimand="cells").model_scores().set_index("model")
res = mixrank.fit(F, chem, gold="human")
corrected = res.model_scores().set_index("model")
truth = mixrank.fit("correct ~ model + (1|subject)", chem.drop(columns=["judge", "human"]),
                    estimand="cells").model_scores().set_index("model")
board = corrected[["estimate", "ci_lower", "ci_upper", "lam", "n_labelled", "n_effective"]].copy()
board.insert(0, "judge_only", judge_only["estimate"])
board["truth"] = truth["estimate"]
board.sort_values("estimate", ascending=False)

# %%
# The judge inflates every score, and unevenly: gpt-4o and
# mistral-large gain most, so the judge-only order is wrong.  The corrected
# scores sit on the reference scale and their intervals (at the topic unit,
# 8 df) contain the truth.

# %%
covered = ((board["ci_lower"] <= board["truth"]) & (board["truth"] <= board["ci_upper"]))
print(f"{int(covered.sum())} of {len(board)} corrected intervals contain the full-label truth")
ax = plot_judge_scores(res.model_scores(), title="Judge only (squares) vs corrected")
plt.show()

# %%
# How the judge departs from the reference
# ----------------------------------------
#
# `fit.judge()`: per model the bias (judge − reference) on the labelled
# cells with its interval at the topic unit, agreement (correlation and
# Cohen's κ, the scores being 0/1), and the *differential bias* test --
# does the judge favour some models (the model × source interaction on the
# labelled cells)?

# %%
jt = res.judge()
print(jt.attrs["mixrank"]["differential_bias"])
jt[["model", "n_labelled", "bias", "ci_lower", "ci_upper", "correlation", "kappa"]]

# %%
# Rank intervals on the corrected contrasts
# -----------------------------------------
#
# Everything downstream of the contrasts -- adjusted p-values, rank
# intervals, verdict tables, the report -- works on the corrected ones.

# %%
res.rank_intervals()

# %%
# The label budget
# ----------------
#
# How many reference labels does a pair need to resolve a gap δ at the
# topic unit, given the fitted judge–reference correlation of its
# differences and the design effect?  `n_labels_star` with the judge,
# `n_labels_only_star` without it; `n_effective` is what the labels at hand
# are worth without a judge.

# %%
plan = res.plan(0.05)
plan[["model_a", "model_b", "rho", "design_effect", "n_labels", "n_effective", "n_labels_star",
      "n_labels_only_star"]].head(8)

# %%
# The verdict table carries the same number for the *observed* gap of each
# adjacent pair, and `plan_labels` answers the question before any label
# exists ("150 labels with a judge at ρ = 0.8 over 5,000 items are worth
# about 395 labels without it").

# %%
tab = res.resolution()
print(tab[["model_a", "model_b", "estimate", "resolved_cluster", "n_labelled",
           "n_labels_star"]].to_string(index=False))
plan_labels(0.05, sigma=0.5, rho=0.8, n_judged=5000, n_labels=150)[
    ["n_labels_star", "n_labels_only_star", "n_effective"]]
