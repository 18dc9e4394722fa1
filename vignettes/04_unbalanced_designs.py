"""
Unbalanced designs
==================

Real evaluations are rarely balanced: topics hold different numbers of
questions, participants skip questions, models are scored on different
subsets.  mixrank analyses each pair of models on the cells both were
scored on, reports how many cells that is, and fits the mixed model to the
unbalanced data directly (REML, no imputation).  Two cases:

1. the ChemBench human baseline: 20 chemists, unequal topic sizes, some
   questions missing for some chemists;
2. models scored on partial item sets, where the choice of *estimand*
   (gls, cells, units) starts to matter.
"""

# %%
import warnings

import numpy as np
import pandas as pd

import mixrank
from mixrank.report.plots_ranks import plot_rank_intervals

humans = mixrank.load_dataset("chembench_humans")
print(humans.shape)
print(humans.isna().sum().to_string())
assert int(humans["subject"].isna().sum()) == 239      # the prose below, checked

# %%
# The human study
# ---------------
#
# The `subject` (topic) column is missing for 239 rows.  mixrank refuses
# missing grouping values rather than guessing, so we fill them explicitly
# with a separate level `"(no topic)"`: those questions then form their own
# topic.  (Dropping them is the other honest choice; say which one you made.)
# The chemist ids are long hashes; we relabel them `chemist_01`... in order
# of first appearance, purely for display.

# %%
humans["subject"] = humans["subject"].fillna("(no topic)")
ids = {m: f"chemist_{i + 1:02d}" for i, m in enumerate(pd.unique(humans["model"]))}
humans["model"] = humans["model"].map(ids)
print(humans["subject"].value_counts().to_string())
print(humans.groupby("prompt")["question"].nunique().to_string())
both = humans.groupby("question")["prompt"].nunique()
print("questions asked both with and without tools:", int((both > 1).sum()))
assert int((both > 1).sum()) == 0

# %%
# Each question was posed either with tools (`tool`) or without (`notool`),
# never both, so `prompt` is an attribute of the question, not a crossed
# factor; a `(1|prompt)` term with its two levels would add little.  We make
# topics the unit of inference.

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    hres = mixrank.fit("correct ~ model + (1|subject)", humans)
print(f"{len(caught)} warning(s): " + "; ".join(str(w.message)[:90] for w in caught))
print(hres.frame.summary_text())
bal = hres.frame.balance()
bal[~bal["complete"]].sort_values("n").head(8)

# %%
# Topic sizes range widely, and one chemist missed 20 questions; each pair is
# fitted on its common cells (`n`), with `only_a`/`only_b` counting the cells
# one chemist answered alone.  Ranking the chemists:

# %%
hranks = hres.rank_intervals()
ax = plot_rank_intervals(hranks, title="ChemBench chemists: rank intervals (topics as units)")
print(hranks[["model", "estimate", "rank", "rank_lower", "rank_upper", "n"]].to_string(index=False))
per_chemist = humans.groupby("model")["question"].nunique()
assert len(per_chemist) == 20 and per_chemist.max() - per_chemist.min() == 20
assert per_chemist.between(225, 250).all() and humans["subject"].nunique() == 9  # 8 + "(no topic)"
width = hranks["rank_upper"] - hranks["rank_lower"] + 1
assert (width >= 15).mean() > 0.5                     # "most span nearly the whole range"

# %%
# About 250 questions in nine topics per chemist are far too few to order
# twenty people whose accuracies lie close together (printed above): most
# intervals span nearly the whole range.

# %%
# Models scored on partial item sets
# ----------------------------------
#
# Now an artificial but common situation: five systems from the published
# ChemBench run, each scored on a different subset of the questions.  We
# drop 10% of the (model, question) scores at random, and for one model
# additionally most questions of the topic where it is strongest (as if that
# part of its run had failed).  The complete data give the reference values.

# %%
cb = mixrank.load_dataset("chembench")
models = ["o1", "claude3.5", "gpt-4o", "llama3.1-405b-instruct", "claude3"]
full = cb[(cb["prompt"] == "default") & cb["model"].isin(models)]
rng = np.random.default_rng(2024)
keep = rng.random(len(full)) > 0.10
by_topic = full[full["model"] == "gpt-4o"].groupby("subject")["correct"].mean()
strong = by_topic.idxmax()
hole = (full["model"] == "gpt-4o") & (full["subject"] == strong) & (rng.random(len(full)) < 0.9)
partial = full[keep & ~hole]
print(f"gpt-4o loses most of {strong!r}; rows kept: {len(partial)} of {len(full)}")
print(partial.groupby("model").size().to_string())

# %%
# Three estimands of "the difference between A and B" (docs/methods.md §3):
#
# * `gls`: lme4's fixed effect, weighting topics by their information;
# * `cells`: the plain mean of the differences over the common cells (the
#   micro-average that most leaderboards show);
# * `units`: the mean over topics of the per-topic mean differences (the
#   macro-average).
#
# `cells` is the default (docs/messy.md §1).  In a balanced design all
# three coincide.  ChemBench's topics have unequal
# sizes, so they differ already on the complete data: `cells` weights large
# topics more, `units` weights every topic the same.

# %%
def contrasts(data, estimand):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # singular fits are legal results
        r = mixrank.fit("correct ~ model + (1|subject)", data, estimand=estimand)
    return r, r.contrasts().set_index(["model_a", "model_b"])["estimate"]


table, fits = {}, {}
for est in ("gls", "cells", "units"):
    _, table[f"{est}_complete"] = contrasts(full, est)
    fits[est], table[f"{est}_partial"] = contrasts(partial, est)
table = pd.DataFrame(table)
fit_partial = fits["cells"]            # the leaderboard's estimand: means over cells
# the plain means of each model's own cells (the old leaderboard) and the default scores,
# which put every model on the union of cells (docs/methods.md §11)
scores = fit_partial.model_scores(scoring="plain").set_index("model")["estimate"]
table["leaderboard_gap_partial"] = [scores[a] - scores[b] for a, b in table.index]
adjusted = fit_partial.model_scores().set_index("model")["estimate"]
table["adjusted_gap_partial"] = [adjusted[a] - adjusted[b] for a, b in table.index]
table  # noqa: B018 (a displayed value, as in a notebook)

# %%
# How far each estimate moved when scores went missing (partial minus
# complete).  For the leaderboard gap the complete-data counterpart is the
# `cells` estimate: on complete data both models have the same questions.

# %%
shift = pd.DataFrame({est: table[f"{est}_partial"] - table[f"{est}_complete"]
                      for est in ("gls", "cells", "units")})
shift["leaderboard_gap"] = table["leaderboard_gap_partial"] - table["cells_complete"]
shift["adjusted_gap"] = table["adjusted_gap_partial"] - table["cells_complete"]
shift["with_gpt-4o"] = ["gpt-4o" in k for k in shift.index]
print(shift.round(4).to_string())
print(shift.abs().groupby("with_gpt-4o").mean().round(4).to_string())
moved = shift.abs().groupby("with_gpt-4o").mean()
assert len(models) == 5 and (table["units_complete"] - table["cells_complete"]).abs().max() > 0.01
for col in ("gls", "cells", "units", "leaderboard_gap"):   # the hole matters for gpt-4o's pairs
    assert moved.loc[True, col] > moved.loc[False, col], col

# %%
# Random missingness moves every estimate a little.  The hole in one topic
# matters for the pairs with gpt-4o: the paired estimands compare the two
# models only where both were scored, so they lose information but compare
# like with like; the leaderboard gap compares gpt-4o *without* its strongest
# topic to its rivals *with* it.  Choose the estimand for the question you
# ask and report it: every mixrank table records it in `attrs["mixrank"]`.

# %%
print(fit_partial.contrasts().attrs["mixrank"]["estimand"])
fit_partial.diagnostics()[["model_a", "model_b", "n", "only_a", "only_b", "converged"]]
