"""
Arena leaderboards on real votes: Bradley–Terry, intervals, judges
==================================================================

Arena leaderboards (Chatbot Arena / LMArena) show two anonymous answers,
record which one a human preferred, and fit a Bradley–Terry model:
`P(a beats b) = 1 / (1 + exp(-(beta_a - beta_b)))`.  `mixrank.arena`
fits it by maximum likelihood -- the same estimates as FastChat's
`compute_mle_elo` (tested to 1e-6) -- with intervals, rank intervals,
resolution verdicts, and a correction for LLM judges (docs/arena.md).

**The data.** `chatbot_arena`: 26,919 real human votes from Chatbot Arena
(April-June 2023, 20 models; Zheng et al. 2023), the release of Chatzi et
al. (NeurIPS 2024) in which every battle was also judged by three LLMs
(`winner_gpt4`, `winner_claude3`, `winner_gpt35`).
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

import mixrank
from mixrank.arena import ArenaMonitor
from mixrank.report.plots_arena import plot_arena_boards
from mixrank.report.plots_ranks import plot_rank_intervals
from mixrank.report.plots_scores import plot_model_scores

votes = mixrank.load_dataset("chatbot_arena")
print(f"{len(votes):,} votes; winners:", votes["winner"].value_counts().to_dict())
votes.head()

# %% [markdown]
# ## Scores with intervals, from the human votes only
#
# Ties (`tie` and `tie (bothbad)`) count as half a win for each side, as in
# FastChat.  Scores are on the Elo display scale: 400 points per factor 10
# in the odds, centred at 1000.  The log has a conversation id
# (`question_id`), so mixrank clusters by it (its note says so); here
# almost every conversation carries one vote, so that is a per-vote
# sandwich, which -- unlike the binomial information -- knows that a tie
# is less variable than a win or a loss.

# %%
res = mixrank.arena(votes)
print(res.summary())
# the prose around, checked (the gallery build fails if they drift apart)
assert votes["question_id"].value_counts().eq(1).mean() > 0.99 and "question_id" in res.notes[0]
assert len(res.models) == 20

# %% [markdown]
# **What an interval means.**  A score's 95% interval covers the score the
# model would get from unlimited votes *drawn the same way* -- the same mix
# of users, prompts and opponents as this log.  It is not an interval for a
# future leaderboard with other users or prompts, and two overlapping score
# intervals are not a test: differences are judged by the contrasts (each
# pair's own interval), and positions by the rank intervals below.
# FastChat reports percentile intervals from resampling the votes;
# `se="bootstrap"` does the same resampling (of the vote counts) and gives
# the same intervals up to Monte Carlo error:

# %%
boot = mixrank.arena(votes, se="bootstrap", draws=300, rng=1, cluster=False)
cmp = res.model_scores().set_index("model")[["estimate", "ci_lower", "ci_upper"]]
cmp["boot_lower"] = boot.model_scores().set_index("model")["ci_lower"]
cmp["boot_upper"] = boot.model_scores().set_index("model")["ci_upper"]
moved = (cmp[["boot_lower", "boot_upper"]].to_numpy()
         - cmp[["ci_lower", "ci_upper"]].to_numpy())
assert abs(moved).max() < 0.2 * (cmp["ci_upper"] - cmp["ci_lower"]).mean()   # MC error only
cmp.sort_values("estimate", ascending=False).round(1).head(8)

# %%
ax = plot_model_scores(res.model_scores().sort_values("estimate", ascending=False),
                       title="Chatbot Arena, human votes")
plt.show()

# %% [markdown]
# ## Rank intervals
#
# A model's rank interval is the set of positions consistent with the
# pairwise tests; simultaneous intervals hold for all 20 models at once.

# %%
ranks = res.rank_intervals(coverage="simultaneous")
ax = plot_rank_intervals(ranks, title="Rank intervals (simultaneous, 95%)")
plt.show()
ranks.sort_values("rank").head(8)

# %% [markdown]
# ## Position bias
#
# `position=True` adds a first-position term: the log-odds that the answer
# shown first (`model_a`) wins when the strengths are equal.  Humans show
# none; the LLM judges do (gpt-3.5 picks `model_a` in 86% of its decisive
# verdicts).

# %%
pos = mixrank.arena(votes, position=True).covariates()
print(pos.round(4).to_string(index=False))
g35 = mixrank.arena(votes, "winner_gpt35 ~ 1", position=True).covariates()
print(g35.round(3).to_string(index=False))
decisive = votes[votes["winner_gpt35"].isin(["model_a", "model_b"])]
assert pos["p_value"].iloc[0] > 0.05 and g35["p_value"].iloc[0] < 1e-6
assert round(100 * (decisive["winner_gpt35"] == "model_a").mean()) == 86

# %% [markdown]
# ## 1,000 human votes plus three LLM judges
#
# Suppose only 1,000 of the battles had a human vote and the rest only the
# judges' verdicts.  `judge=` fits the prediction-powered Bradley–Terry
# model (PPI++): the judges' verdicts on all battles, rectified by the
# labelled battles, each judge weighted by a tuned λ (0 = ignored).  The
# judge-only leaderboard carries the judges' biases; the corrected one
# estimates the human leaderboard.

# %%
g = np.random.default_rng(3)
keep = np.zeros(len(votes), dtype=bool)
keep[g.choice(len(votes), 1000, replace=False)] = True
masked = votes.assign(winner=votes["winner"].where(keep))
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.DataQualityWarning)   # the judges' position bias
    pp = mixrank.arena(masked, judge=["winner_gpt4", "winner_claude3", "winner_gpt35"])
print(pp.notes[0])
pp.judges().round(3)

# %%
boards = pp.leaderboards()
ax = plot_arena_boards(boards[["model", "human_only", "human_only_lower", "human_only_upper",
                               "judge_only_winner_gpt4", "judge_only_winner_gpt4_lower",
                               "judge_only_winner_gpt4_upper", "corrected", "corrected_lower",
                               "corrected_upper"]],
                       title="1,000 human votes: human-only, gpt-4 only, corrected")
plt.show()

# %% [markdown]
# How much narrower are the corrected rank intervals than those of the
# 1,000 human votes alone?  (docs/arena.md §9 repeats this over 100 draws
# and three sample sizes, with the coverage of the full-data ranking.)

# %%
human_1k = mixrank.arena(votes[keep])
width = {name: float((r["rank_upper"] - r["rank_lower"] + 1).mean())
         for name, r in (("human only", human_1k.rank_intervals(coverage="simultaneous")),
                         ("corrected", pp.rank_intervals(coverage="simultaneous")))}
print({k: round(v, 2) for k, v in width.items()})
assert width["corrected"] < width["human only"]

# %% [markdown]
# ## Which adjacent pairs are unresolved, and a sequential arena
#
# `n_star` counts the battles (at the current mix of pairs) that would
# resolve each adjacent gap.  The monitor watches pairs as votes arrive and
# stops each at the first vote where its e-value crosses `1/alpha'`, which
# keeps the chance of a false "resolved" at most alpha however often one
# looks.

# %%
ver = res.resolution(columns="all")
print(ver[["model_a", "model_b", "estimate", "n_pair", "n_star", "resolved"]].head(6)
      .round(3).to_string(index=False))
watch = list(zip(ver["model_a"], ver["model_b"]))[:3]
mon = ArenaMonitor(watch, d_plan=100)
stream = votes.sample(frac=1.0, random_state=1)
for start in range(0, len(stream), 5000):
    mon.update(stream.iloc[start:start + 5000])
mon.status()
