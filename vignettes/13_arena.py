"""
Arena leaderboards: Bradley–Terry with intervals, ranks and resolution
======================================================================

Arena leaderboards (LMArena, judge-pairwise evaluations) show two
anonymous answers, record which one won, and fit a Bradley–Terry model:
`P(a beats b) = 1 / (1 + exp(-(beta_a - beta_b)))`.  `mixrank.arena`
fits it by maximum likelihood from the win/loss/tie counts per pair
(docs/arena.md), with intervals from the observed information, a
sandwich clustered by prompt, or a bootstrap on the counts; rank
intervals; and the number of battles that would resolve each adjacent
pair.

**What the data are.**  mixrank may bundle only the datasets in
`mixrank/datasets/`, and none of them is a human preference log.  This
vignette therefore *derives* a battle log from ChemBench (25 models
answering the same 2,788 chemistry questions): on every question, every
pair of models is a judged battle -- the model that answered correctly
wins, and when both are right or both wrong it is a tie.  That is a
"judge battle" with a perfect judge, not human preference: there is no
style (length, markdown) to control for, and the battles of one question
share that question.  A real arena log (e.g. LMArena's public
`clean_battle` release) is read the same way: `mixrank.arena("clean_battle.json",
"winner ~ style(len, header, list, bold)")`.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

import mixrank
from mixrank.arena import ArenaMonitor
from mixrank.report.plots_ranks import plot_rank_intervals

chem = mixrank.load_dataset("chembench")
chem = chem[chem["prompt"] == "default"]
log = mixrank.battles_from_scores(chem[["model", "subject", "question", "correct"]])
print(f"{len(log):,} battles between {len(set(log['model_a']) | set(log['model_b']))} models; "
      f"{(log['winner'] == 'tie').mean():.0%} ties")
log.head()

# %%
# Scores with intervals
# ---------------------
#
# Ties count as half a win for each side (`ties="half"`, FastChat's
# convention).  The battles of one question are not independent (the
# question's difficulty is shared), so the standard errors are a sandwich
# clustered by the question (`cluster="cell"`, the column
# `battles_from_scores` writes).  Scores are on the Elo display scale: 400
# points per factor 10 in the odds, centred at 1000.

# %%
res = mixrank.arena(log, cluster="cell")
print(res.summary())

# %%
# Clustering by question matters: the information-based standard errors
# treat the ~840k battles as independent and are smaller.

# %%
naive = mixrank.arena(log)
c_cl = res.contrasts(adjust="none")
c_nv = naive.contrasts(adjust="none")
print("median SE ratio clustered / independent:",
      round(float((c_cl["std_error"] / c_nv["std_error"]).median()), 2))

# %%
# Ties: half a win, or Davidson's model
# -------------------------------------
#
# Davidson's model gives ties their own probability,
# `P(a) : P(b) : P(tie) = e^{d/2} : e^{-d/2} : nu`.  With many ties (both
# right or both wrong on most questions) its strengths sit on a different
# scale than the half-win fit, but the order is the same.

# %%
dav = mixrank.arena(log, ties="davidson", cluster="cell")
both = res.model_scores().merge(dav.model_scores(), on="model", suffixes=("_half", "_davidson"))
print("tie parameter nu =", round(float(np.exp(dav.covariates()["estimate"].iloc[0])), 2))
both.sort_values("estimate_half", ascending=False)[["model", "estimate_half",
                                                    "estimate_davidson"]].head(8)

# %%
# Rank intervals
# --------------
#
# From the one-sided tests of every pair (Holm within each model's two
# families, docs/methods.md §7), as for a mixed-model fit.

# %%
ranks = res.rank_intervals()
ax = plot_rank_intervals(ranks, title="ChemBench as an arena: rank intervals")
plt.show()
ranks.sort_values("rank").head(10)

# %%
# Which adjacent pairs are unresolved, and how many battles would resolve them
# ----------------------------------------------------------------------------
#
# `n_star` counts battles overall at the current mix of pairs;
# `n_star_pair` battles between the two models alone.  The clustered design
# effect carries the shared questions into `resolved_cluster`.

# %%
ver = res.resolution()
print(ver.attrs["mixrank"]["unresolved"])
ver[["model_a", "model_b", "estimate", "n_pair", "n_star", "q", "resolved", "design_effect",
     "resolved_cluster", "n_star_pair"]].head(12)

# %%
# A sequential arena
# ------------------
#
# Battles arrive one at a time; the monitor stops each watched pair at the
# first battle where its e-value crosses `1/alpha'` (Bonferroni over the
# watched pairs), which keeps the chance of a false "resolved" at most
# alpha however often one looks.  Here the first three adjacent pairs are
# watched in a shuffled order of the log.

# %%
watch = list(zip(ver["model_a"], ver["model_b"]))[:3]
stream = log.sample(frac=1.0, random_state=1)
mon = ArenaMonitor(watch, d_plan=500)
for start in range(0, len(stream), 100_000):
    mon.update(stream.iloc[start:start + 100_000])
mon.status()

# %%
# What is missing
# ---------------
#
# A real battle log: the numbers above describe a derived, perfectly judged
# log, not human preferences, and style control (`style(len, markdown)`)
# cannot be shown on it.  Its correctness is tested on simulated battles
# against statsmodels (`tests/arena/`).
