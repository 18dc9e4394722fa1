"""
Where the gaps live: model × covariate formulas
===============================================

"Is model A better than model B?" is the first question; the second is
"does the gap depend on the topic, the difficulty, the attack?".  With a
fixed part that crosses the comparison factor with a cell-level column,
`correct ~ model * x + (random terms)`, each pair's paired differences get
`d ~ 1 + x + (random terms)` (docs/interactions.md): an F test of whether
the gap is the same at every level of `x`, the gap at each level with its
interval, and where the ranking changes.  A purely additive covariate
(`correct ~ model + x`) would cancel in the paired differences, so mixrank
refuses it and says why.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import pandas as pd

import mixrank
from mixrank.report.plots_gaps import plot_gaps_by, plot_ranks_by

pd.set_option("display.width", 140)
pd.set_option("display.max_columns", 14)

try:
    mixrank.fit("correct ~ model + subject", mixrank.load_example())
except mixrank.FormulaError as err:
    print(err)

# %%
# ChemBench: does the gap depend on the topic?
# --------------------------------------------
#
# ChemBench's 2,788 questions fall into 9 topics (`subject`).  With the
# published run (`prompt == "default"`) every question is one cell, so the
# topic is the only grouping and the model is `d ~ 1 + topic` with
# independent cells: the per-topic gap is the mean difference over that
# topic's questions, with `n - p` degrees of freedom.

# %%
chem = mixrank.load_dataset("chembench")
chem = chem[(chem["prompt"] == "default") & chem["model"].isin(
    ["o1", "gpt-4o", "claude3.5", "llama3-70b-instruct"])]
res_c = mixrank.fit("correct ~ model * subject", chem)
assert (chem["question"].nunique(), chem["subject"].nunique()) == (2788, 9)   # the prose, checked
print(res_c.frame.spec.d_formula, "|", len(res_c.pairs), "pairs")
res_c.anova(adjust="holm")

# %%
# The overall gap (`contrasts()` without `by`) is the average of the fitted
# cell differences with the estimand's weights; here (no random term, the
# default `cells`) every cell weighs the same.  Per topic:

# %%
by_topic = res_c.contrasts(by="subject")
pair = by_topic[(by_topic.model_a == "claude3.5") & (by_topic.model_b == "gpt-4o")]
pair[["subject", "estimate", "std_error", "df", "ci_lower", "ci_upper", "p_value", "p_adjusted", "n"]]

# %%
ax = plot_gaps_by(pair, "subject", title="claude3.5 \u2212 gpt-4o by ChemBench topic")
plt.show()

# %%
# Each model's score per topic (`model_scores(by=)`: each model's own scores
# fitted by `y ~ 1 + topic`), and the ranking within each topic:

# %%
scores = res_c.model_scores(by="subject")
scores.pivot(index="model", columns="subject", values="estimate").round(3)

# %%
ranks_c = res_c.rank_intervals(by="subject")
ax = plot_ranks_by(ranks_c, "subject", title="Rank intervals per topic")
plt.show()

# %%
# JailbreakBench: does the gap depend on the attack?
# --------------------------------------------------
#
# JailbreakBench scores 4 models against 100 behaviours (10 categories,
# `subject`) under 6 attack methods (`prompt`); only 18 of the 24 model ×
# attack combinations exist.  The attack is now a covariate and the
# behaviour categories the unit of inference:
# `correct ~ model * prompt + (1|subject)`.  Attacks without common cells
# for a pair give NaN rows with the reason in `note`, never a failed fit.

# %%
jb = mixrank.load_dataset("jailbreakbench")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.SingularFitWarning)   # boundary fits are legal
    res_j = mixrank.fit("correct ~ model * prompt + (1|subject)", jb)
attack = res_j.anova(adjust="holm")
assert (attack["p_adjusted"] < 1e-6).all()           # "every pair's gap depends strongly"
attack[["model_a", "model_b", "term", "F", "num_df", "den_df", "p_value", "p_adjusted"]]

# %%
# Every pair's gap depends strongly on the attack.  The gaps per attack:

# %%
gaps = res_j.contrasts(by="prompt")
missing = gaps["estimate"].isna()
assert missing.any() and (gaps.loc[missing, "note"] != "").all()   # NaN rows say why
gaps[["model_a", "model_b", "prompt", "estimate", "ci_lower", "ci_upper", "df", "n", "note"]]

# %%
ax = plot_gaps_by(gaps, "prompt", title="JailbreakBench: gap (1 = resisted) by attack")
plt.show()

# %%
# Where the ranking changes: at each attack, the models that faced it are
# ranked among themselves.

# %%
ranks_j = res_j.rank_intervals(by="prompt")
ax = plot_ranks_by(ranks_j, "prompt", title="Rank intervals per attack")
plt.show()
ranks_j[["prompt", "model", "estimate", "rank", "rank_lower", "rank_upper", "note"]]

# %%
# Each model's score at the subject unit, next to the iid stderr
# --------------------------------------------------------------
#
# The leaderboard column (`model_scores()`, docs/model_scores.md) with the
# behaviour categories as the unit: the standard error lm-evaluation-harness
# would print (`iid_std_error`) beside the one that generalises over
# categories.

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.SingularFitWarning)
    plain = mixrank.fit("correct ~ model + (1|subject)", jb)
plain.model_scores()[["model", "estimate", "std_error", "iid_std_error", "variance_ratio", "df"]]
