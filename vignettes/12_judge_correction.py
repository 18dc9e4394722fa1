"""
Correcting an LLM judge with a few human labels
===============================================

Open-ended benchmarks are scored by an LLM judge, and judges are biased:
lenient overall, and often more lenient to some models than to others.
Labelling a random subset of the outputs by humans and *correcting* the
judge with those labels -- prediction-powered inference with a tuned
weight λ (PPI++) -- gives the scores the humans would give, with honest
intervals, for a fraction of the labelling cost.
`mixrank.fit(..., gold="human")` does this at the formula's unit of
inference (docs/judge.md).

**Real data.** `triviaqa_judges` (Thakur et al. 2024, "Judging the
Judges"): 9 models answered 400 TriviaQA questions; every answer was
graded correct/incorrect by 11 automatic judges *and* by humans (`gold`).
Because every answer has its human grade, we can hide 90% of them, correct
a cheap judge with the remaining 10%, and check the result against the
full human grading -- over many random label draws.  A second example,
`hanna_stories`, has continuous 1-5 story ratings by an LLM and by three
noisy humans.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import mixrank
from mixrank.judge.plan import plan_labels
from mixrank.report.plots_judge import plot_judge_scores

warnings.simplefilter("ignore", mixrank.SingularFitWarning)   # boundary fits are legal
# llama2-7b-chat has 395 of the 400 questions: its pairs use the common ones (said once here)
warnings.simplefilter("ignore", mixrank.UnpairedCellsWarning)
tq = mixrank.load_dataset("triviaqa_judges")
agree = tq.groupby("judge_name").apply(lambda d: (d["judge"] == d["gold"]).mean(),
                                       include_groups=False)
print("agreement with the human grade per judge:")
print(agree.sort_values().round(3).to_string())

# %% [markdown]
# We take a cheap judge, Llama-2-7B-chat (`Llama-7B`, 86% agreement), one
# row per (model, question).  Its leniency differs by model: it credits the
# chat models far more often than humans do.

# %%
data = tq[tq["judge_name"] == "Llama-7B"][["model", "question", "judge", "gold"]]
data = data.reset_index(drop=True)
by_model = data.groupby("model")[["judge", "gold"]].mean()
by_model["judge_minus_gold"] = by_model["judge"] - by_model["gold"]
# the prose around, checked (the gallery build fails if they drift apart)
assert round(100 * agree["Llama-7B"]) == 86
chat = by_model.index.str.contains("chat")
assert by_model.loc[chat, "judge_minus_gold"].mean() > 0.1 > by_model.loc[~chat, "judge_minus_gold"].mean()
per_model = data.groupby("model")["question"].nunique()
assert data["question"].nunique() == 400 and per_model.min() == 395
by_model.round(3)

# %% [markdown]
# ## The full human grading, the judge alone, and judge + 10% of the labels
#
# The unit of inference is the question (each model answered the same 400).
# `truth` is the fit on every human grade; the judge-only fit treats the
# judge as the truth; the corrected fit sees the judge everywhere and the
# human grades of 40 random questions (10%).

# %%
truth = mixrank.fit("gold ~ model", data.drop(columns="judge")).model_scores()
truth = truth.set_index("model")
judge_only = mixrank.fit("judge ~ model", data.drop(columns="gold")).model_scores()
judge_only = judge_only.set_index("model")
questions = np.sort(data["question"].unique())


def with_labels(share: float, seed: int) -> pd.DataFrame:
    """The data with the human grade kept on a random share of the questions."""
    g = np.random.default_rng(seed)
    keep = set(g.choice(questions, int(round(share * questions.size)), replace=False))
    human = data["gold"].where(data["question"].isin(keep))
    return data.drop(columns="gold").assign(human=human)


res = mixrank.fit("judge ~ model", with_labels(0.10, seed=1), gold="human")
assert res.model_scores()["n_labelled"].max() == 40             # 10% of 400
board = res.model_scores().set_index("model")[["estimate", "ci_lower", "ci_upper", "lam"]]
board.insert(0, "judge_only", judge_only["estimate"])
board["truth"] = truth["estimate"]
board.sort_values("truth", ascending=False).round(3)

# %%
ax = plot_judge_scores(res.model_scores(), title="Judge only (squares) vs corrected, 10% labels")
plt.show()

# %% [markdown]
# ## Coverage over repeated label draws
#
# One draw proves nothing.  Over 60 random 10% label draws, how often does
# each model's corrected 95% interval contain its full-human-label score,
# and how wide is it compared with the interval of the full human grading?
# (The full-label score is itself an estimate from 400 questions; the
# corrected interval aims at the same population mean, so containing the
# full-label score is the check we can make.)

# %%
hits, widths = [], []
for seed in range(60):
    sc = mixrank.fit("judge ~ model", with_labels(0.10, seed=100 + seed),
                     gold="human").model_scores().set_index("model")
    t = truth.loc[sc.index, "estimate"]
    hits.append((sc["ci_lower"] <= t) & (t <= sc["ci_upper"]))
    widths.append(sc["ci_upper"] - sc["ci_lower"])
cover = pd.DataFrame({"coverage": pd.concat(hits, axis=1).mean(axis=1),
                      "width_10pct_labels": pd.concat(widths, axis=1).mean(axis=1),
                      "width_all_labels": truth["ci_upper"] - truth["ci_lower"]})
print(f"mean coverage {cover['coverage'].mean():.3f} over {len(hits)} draws x 9 models")
assert len(hits) == 60
cover.round(3)

# %% [markdown]
# The judge-only intervals, by contrast, sit where the judge is lenient:

# %%
jo = judge_only.loc[truth.index]
print("judge-only intervals containing the human score:",
      int(((jo["ci_lower"] <= truth["estimate"]) & (truth["estimate"] <= jo["ci_upper"])).sum()),
      "of", len(jo))
assert ((jo["ci_lower"] <= truth["estimate"]) & (truth["estimate"] <= jo["ci_upper"])).sum() < len(jo)

# %% [markdown]
# ## Judge diagnostics
#
# `fit.judge()`: per model the bias (judge − human) on the labelled answers
# with its interval, agreement (correlation and Cohen's κ for 0/1 scores),
# and the *differential bias* test -- does the judge favour some models?

# %%
jt = res.judge()
print(jt.attrs["mixrank"]["differential_bias"])
jt[["model", "n_labelled", "bias", "ci_lower", "ci_upper", "correlation", "kappa"]].round(3)

# %% [markdown]
# ## The label budget
#
# How many human labels would resolve a gap of 5 points?  `res.plan`
# answers per pair from the fitted judge-human correlation; `plan_labels`
# answers before any label exists.

# %%
plan = res.plan(0.05)
print(plan[["model_a", "model_b", "rho", "n_labels", "n_labels_star",
            "n_labels_only_star"]].head(6).round(2).to_string(index=False))
rho = float(plan["rho"].median())
plan_labels(0.05, sigma=0.5, rho=rho, n_judged=400, n_labels=40)[
    ["n_labels_star", "n_labels_only_star", "n_effective"]]

# %% [markdown]
# ## Continuous ratings with noisy humans: HANNA stories
#
# `hanna_stories` (Chhun et al. 2022, 2024): 11 story generators (one of
# them the human reference story) x 96 writing prompts, rated 1-5 for
# coherence by ChatGPT and by three crowd workers (`gold` is their mean).
# ChatGPT's ratings are on another scale altogether (about 1.3 for most
# systems where humans give about 3); the correction moves them to the human
# scale with 20 of the 96 prompts rated by humans.

# %%
hanna = mixrank.load_dataset("hanna_stories")
# ChatGPT gives most stories exactly 1, which the 0/1 detector notices; the ratings are 1-5
warnings.simplefilter("ignore", mixrank.DataQualityWarning)
stories = hanna[(hanna["criterion"] == "Coherence") & (hanna["judge_name"] == "ChatGPT")
                & (hanna["judge_prompt"] == 1)][["model", "question", "judge", "gold"]]
stories = stories.reset_index(drop=True)
g = np.random.default_rng(7)
rated = set(g.choice(stories["question"].unique(), 20, replace=False))
hs = stories.assign(human=stories["gold"].where(stories["question"].isin(rated)))
h_res = mixrank.fit("judge ~ model", hs.drop(columns="gold"), gold="human")
h_truth = mixrank.fit("gold ~ model", stories.drop(columns="judge")).model_scores()
h_board = h_res.model_scores().set_index("model")[["judge_estimate", "estimate", "ci_lower",
                                                   "ci_upper", "lam"]]
h_board["all_humans"] = h_truth.set_index("model")["estimate"]
assert (stories["model"].nunique(), stories["question"].nunique(), len(rated)) == (11, 96, 20)
assert 1.1 < h_board["judge_estimate"].median() < 1.5 and 2.7 < h_board["all_humans"].median() < 3.3
h_board.sort_values("all_humans", ascending=False).round(2)

# %%
ax = plot_judge_scores(h_res.model_scores(), title="HANNA coherence: ChatGPT vs corrected")
plt.show()
