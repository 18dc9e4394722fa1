"""
Scoring a new model on 100 items
================================

A new checkpoint and a budget of 100 questions: which 100, and what is its
score on the whole benchmark, with an interval that holds?  This vignette
uses the bundled ChemBench leaderboard (25 systems x 2,788 questions, the
published run) as the reference and scores each system, left out in turn,
from 100 questions, against its true full score (docs/subset.md).

The items are a stratified probability sample (`mixrank.select_items`:
subject x difficulty strata, Neyman allocation); the score is the
model-assisted difference estimator (`mixrank.subset_score`): a Rasch
model fitted on the reference predicts the new model on every question,
and the inclusion-weighted mean of its residuals on the 100 questions
corrects the prediction.  Its interval comes from the random selection, so
it holds even when the item model is wrong for the new model; the pure
IRT estimate (tinyBenchmarks' reading) is shown beside it, labelled.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

import mixrank
from mixrank.report.html_items import plot_item_diagnostics
from mixrank.subset.validation import leave_one_out, loo_summary

data = mixrank.load_dataset("chembench").query("prompt == 'default'")
print(data["model"].nunique(), "systems x", data["question"].nunique(), "questions")
assert (data["model"].nunique(), data["question"].nunique()) == (25, 2788)   # the prose, checked

# %%
# One new model
# -------------
#
# gpt-4o plays the new checkpoint: the other 24 systems are the reference.
# `select_items` returns the 100 questions with their stratum and inclusion
# probability; we "run" gpt-4o on exactly those (here: its recorded
# answers) and estimate its mean over all 2,788.

# %%
ref = data[data["model"] != "gpt-4o"]
sel = mixrank.select_items(ref, 100, rng=1)
print(sel.groupby("stratum").agg(N_h=("stratum_size", "first"), n_h=("stratum_n", "first"))
      .head(8))
new = data[(data["model"] == "gpt-4o") & data["question"].isin(sel["question"])]
res = mixrank.subset_score(ref, new, selection=sel)
assert len(sel) == 100 and ref["model"].nunique() == 24 and len(new) == 100
print("true full score:", round(data.loc[data.model == "gpt-4o", "correct"].mean(), 4))
res.scores()[["method", "estimate", "std_error", "ci_lower", "ci_upper"]]

# %%
# Its rank among the 24 reference systems follows from the same interval:
# every rank the score's interval allows.

# %%
res.rank_intervals()

# %%
# Every system, left out in turn
# ------------------------------
#
# `leave_one_out` repeats this for each of the 25 systems and several
# seeds, and compares each estimate with the system's true full score --
# beside the plain mean of a simple random sample of 100 questions.

# %%
loo = leave_one_out(data, 100, seeds=5, rng=7)
assert loo["model"].nunique() == 25 and loo["seed"].nunique() == 5
loo_summary(loo)

# %%
# The figure shows, for one seed, each system's true score (black mark) and
# the model-assisted estimate with its 95% interval (blue), against the
# random sample's (grey).

# %%
one = loo[loo["seed"] == 0]
ma = one[one["method"] == "model_assisted"].sort_values("truth").reset_index(drop=True)
srs = one[one["method"] == "random_sample"].set_index("model").loc[ma["model"]]
y = np.arange(len(ma))
fig, ax = plt.subplots(figsize=(7, 6.5))
ax.errorbar(srs["estimate"], y + 0.2, xerr=[srs["estimate"] - srs["ci_lower"],
                                            srs["ci_upper"] - srs["estimate"]],
            fmt="o", color="#8C8C8C", ms=3, lw=1, label="simple random sample (100)")
ax.errorbar(ma["estimate"], y - 0.2, xerr=[ma["estimate"] - ma["ci_lower"],
                                           ma["ci_upper"] - ma["estimate"]],
            fmt="o", color="#0072B2", ms=3, lw=1.2, label="model-assisted (100)")
ax.scatter(ma["truth"], y, marker="|", s=120, color="black", label="true score (2,788)")
ax.set_yticks(y, ma["model"], fontsize=7)
ax.set_xlabel("share of ChemBench questions correct")
ax.legend(loc="lower right", fontsize=7, frameon=False)
ax.set_title("Each system scored from 100 questions, the others as reference", fontsize=9)
fig.tight_layout()

# %%
# Which questions are broken
# --------------------------
#
# `item_diagnostics` fits each question's difficulty and discrimination on
# the 25 systems and flags questions that stronger systems get wrong more
# often (negative discrimination: the typical sign of a wrong answer key)
# and those no system solves.

# %%
diag = mixrank.item_diagnostics(data)
print(diag["flag"].replace("", "sound").value_counts())
ax = plot_item_diagnostics(diag)
ax.figure.set_size_inches(7, 4)
diag[diag["negative_discrimination"]].sort_values("p_value")[
    ["subject", "question", "reference_mean", "item_rest_r", "p_value"]].head(8)
