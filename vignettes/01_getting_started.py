"""
Getting started: paired mixed models on ChemBench
=================================================

This vignette fits mixrank's paired mixed model to real per-question results
of 25 systems on ChemBench (Mirza et al., arXiv 2404.01475) and walks
through what a fit answers: which differences are real, how large the
variance components are, how much the clustering of questions in topics
costs (the design effect), and what the leaderboard ranks are worth.

The data ship with mixrank: `mixrank.load_dataset("chembench")` reads the
bundled file (`mixrank.list_datasets()` lists every bundled dataset, with its
source and licence).

Each sentence below about an output is checked by an `assert` in the code
cell next to it, so the gallery build fails if the text and the numbers drift
apart.
"""

# %%
import warnings

import matplotlib.pyplot as plt

import mixrank
from mixrank.report import plot_components, plot_contrasts
from mixrank.report.plots_ranks import plot_rank_intervals

df = mixrank.load_dataset("chembench")
print(df.shape)
print(df["prompt"].value_counts().to_string())
assert "chembench" in set(mixrank.list_datasets()["name"])

# %%
# One row per (system, question) with a 0/1 score `correct`; `subject` is one of
# nine chemistry topics.  This is the published run (`prompt == "default"`):
# every system is scored once on every question.  (The temperature-1 re-run
# of seven open models is `mixrank.load_dataset("chembench", reruns=True)`.)

# %%
published = df
assert published["subject"].nunique() == 9 and published["model"].nunique() == 25
assert published.groupby(["model", "question"]).size().eq(1).all()
assert published.groupby("model").size().nunique() == 1      # every system, every question
published.groupby("model")["correct"].mean().sort_values(ascending=False).head(8)

# %%
# Fit
# ---
#
# `correct ~ model + (1|subject)` says: compare the levels of `model`, and
# treat topics as a random sample of topics, so that conclusions generalise to
# new topics, not only to new questions from these nine.  For each pair of
# models, mixrank fits the mixed model to the per-question differences (REML,
# as lme4 would) and takes the standard error at the unit of inference, the
# topic: with `(1|subject)` the only random term, that is the cluster-robust
# CR2 standard error with Bell–McCaffrey degrees of freedom (the contrasts
# below name it).

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    res = mixrank.fit("correct ~ model + (1|subject)", published)
for w in caught:
    print(f"{w.category.__name__}: {str(w.message)[:160]}...")
print(res)
print(res.frame.summary_text())
singular = int((res.diagnostics()["boundary"] != "").sum())
print(f"pairs with a singular fit: {singular} of {len(res.pairs)}")
assert any(issubclass(w.category, mixrank.SingularFitWarning) for w in caught)
assert 0 < singular < len(res.pairs) == 25 * 24 // 2

# %%
# Some pairs' fits are *singular* (boundary): the topic variance of that
# pair's difference was estimated at 0, so the two models' gap does not vary
# by topic more than chance.  That is a legal result, reported (a warning
# above), not an error.
#
# Summary and contrasts
# ---------------------
#
# `summary()` prints one line per pair (for a single pair it prints an
# lme4-style summary).

# %%
print(str(res.summary())[:1200])

# %%
# `contrasts()` is the tidy table behind it: `estimate` is the mean of
# `model_a - model_b`, with its standard error, its `df` (Bell–McCaffrey, 8
# or fewer for nine topics), t statistic, p-values and confidence interval.
# The two best systems:

# %%
con = res.contrasts()
print(con.attrs["mixrank"]["df_method"])
assert con.attrs["mixrank"]["df_method"] == "CR2 at 'subject', Bell-McCaffrey df"
assert (con["df"].dropna() <= 8 + 1e-9).all()
top2 = res.model_scores().nlargest(2, "estimate")["model"].tolist()
assert set(top2) == {"claude3.5", "o1"}, top2
con[(con.model_a == "claude3.5") & (con.model_b == "o1")].T  # noqa: B018 (a displayed value, as in a notebook)

# %%
# A forest plot of the pairs of models adjacent on the leaderboard (the
# pairs one would argue about):

# %%
order = res.model_scores().sort_values("estimate", ascending=False)["model"].tolist()
adjacent = list(zip(order[:-1], order[1:]))
ax = plot_contrasts(res, pairs=adjacent, sort=False, title="ChemBench: adjacent pairs")

# %%
# Variance components and design effect
# -------------------------------------
#
# For each pair the variance of the per-question difference splits into a
# topic part (some topics favour one model) and a residual part:

# %%
vc = res.variance_components()
assert set(vc["group"]) == {"subject", "residual"}
vc[(vc.model_a == "claude3.5") & (vc.model_b == "o1")]

# %%
ax = plot_components(res, pairs=adjacent[:10], value="share",
                     title="Share of variance by topic, top-10 adjacent pairs")

# %%
# The design effect is the variance of the estimate under the fitted model
# divided by what a naive paired test (questions as independent) assumes;
# `n_eff = n / design_effect` is the number of independent questions the
# benchmark is worth for that pair.

# %%
de = res.design_effect()
print(de["design_effect"].describe().to_string())
de.sort_values("design_effect", ascending=False).head(5)

# %%
# Ranks
# -----
#
# Rank confidence intervals from the pairwise one-sided tests, adjusted
# jointly (`maxt`: the step-down over the topics' sign flips; marginal
# coverage): each model's rank interval covers its true rank with probability
# at least 95%.  With topics as the unit of inference the intervals are honest
# about how few topics there are.

# %%
ranks = res.rank_intervals()
meta = ranks.attrs["mixrank"]
print(meta["method"], meta["coverage"], meta["level"])
assert (meta["method"], meta["coverage"], meta["level"]) == ("maxt", "marginal", 0.95)
print(ranks.head(10).to_string(index=False))
ax = plot_rank_intervals(ranks, title="ChemBench rank intervals (95%, marginal)")
plt.tight_layout()

# %%
# Next: `02_unit_of_inference.py` shows how the choice of random terms
# changes these answers.
