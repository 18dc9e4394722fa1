"""
pass@k leaderboards with their rank intervals
=============================================

Code-generation leaderboards draw `n` samples per problem and report
pass@k: the probability that at least one of `k` samples is correct.
The unbiased per-problem estimate (Chen et al. 2021) is
`1 - C(n - c, k) / C(n, k)` for `c` correct of `n`.  `mixrank.pass_at_k`
turns k-of-n data into that per-item score, as a long frame that every
analysis reads: model scores, contrasts and rank intervals at the
formula's unit of inference (docs/pass_at_k.md).

**What data this uses.**  No k-of-n leaderboard with many samples per
item ships with mixrank yet.  The closest bundled data is ChemBench's
re-run: 7 open models answered all 2,788 questions twice (the published
run, `prompt = "default"`, and a re-run at temperature 1, `temp1_rerun`).
That is `n = 2` samples per question, so pass@1 and pass@2 are the only
values of k it supports.  The two runs differ in temperature, so they are
not identically distributed draws as pass@k assumes; read the numbers as
a demonstration of the machinery.  A real pass@5 or pass@10 comparison
needs a dataset such as HumanEval / MBPP / LiveCodeBench generations with
at least 10 samples per problem for a dozen models (per-sample
correctness, not only the published pass@k).
"""

# %%
import warnings

import numpy as np
import pandas as pd

import mixrank
from mixrank.report import plot_rank_intervals

chem = mixrank.load_dataset("chembench", reruns=True)  # the published run and the re-runs
runs = chem.groupby("model")["prompt"].nunique()
chem = chem[chem["model"].isin(runs[runs == 2].index)]
print(chem.shape, chem["model"].nunique(), "models,", chem["question"].nunique(), "questions")

keys = ["model", "subject", "question"]
p1 = mixrank.pass_at_k(chem, 1, replicate="prompt", keys=keys)
p2 = mixrank.pass_at_k(chem, 2, replicate="prompt", keys=keys)
p2.head()

# %%
# Each row is one (model, question): `n_correct` of `n_samples`, and the
# estimate.  pass@1 is the share of correct samples (0, 0.5 or 1 here);
# pass@2 is 1 as soon as one of the two runs was right.  The ChemBench
# runs come with a `temperature` column that changes between runs, which
# is why `keys=` names the model and item columns.
#
# Two leaderboards, topics as the unit of inference
# -------------------------------------------------
#
# The 9 topics are the unit: `pass_at_k ~ model + (1|subject)`.  Rank
# intervals (Holm-adjusted pairwise tests, marginal coverage) show which
# places on the board the data can tell apart.

# %%
def board(frame, k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.SingularFitWarning)
        res = mixrank.fit(f"pass_at_{k} ~ model + (1|subject)", frame, estimand="cells")
    ranks = res.rank_intervals().set_index("model")
    return ranks[["estimate", "rank", "rank_lower", "rank_upper"]].add_suffix(f"_at{k}")


boards = board(p1, 1).join(board(p2, 2)).sort_values("rank_at2")
# the prose below, checked
gain = 100 * (boards["estimate_at2"] - boards["estimate_at1"])
assert (gain > 0).all() and round(gain.min()) == 1 and round(gain.max()) == 8
assert boards.loc["llama3.1-8b-instruct", ["rank_at1", "rank_at2"]].tolist() == [4, 2]
last = boards["rank_at1"] == 7
for k in (1, 2):
    assert (boards.loc[~last, f"rank_lower_at{k}"] == 1).all()
    assert (boards.loc[~last, f"rank_upper_at{k}"] <= 6).all()
    assert (boards.loc[last, [f"rank_lower_at{k}", f"rank_upper_at{k}"]] == 7).all(axis=None)
boards  # noqa: B018 (a displayed value, as in a notebook)

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.SingularFitWarning)
    ranks2 = mixrank.fit("pass_at_2 ~ model + (1|subject)", p2).rank_intervals()
ax = plot_rank_intervals(ranks2, title="pass@2 on the ChemBench re-runs: rank intervals")

# %%
# pass@2 raises every model (by 1 to 8 points here, most for the models
# whose two runs disagree most often), and the order changes where models
# are close: llama3.1-8b-instruct moves from 4th on pass@1 to 2nd on
# pass@2.  The rank intervals say how much of either order is resolved:
# with 9 topics as the unit, the intervals of six of the seven models all start
# at rank 1 and end at rank 6 or before on both boards; only the last place is
# resolved.
#
# The gap between two models, both scales
# ---------------------------------------

# %%
pair = [("llama3.1-70b-instruct", "llama3-70b-instruct")]
for k, frame in ((1, p1), (2, p2)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.SingularFitWarning)
        res = mixrank.fit(f"pass_at_{k} ~ model + (1|subject)", frame, pairs=pair,
                          estimand="cells")
    c = res.contrasts().iloc[0]
    print(f"pass@{k}: {c.model_a} - {c.model_b} = {c.estimate:+.3f} "
          f"[{c.ci_lower:+.3f}, {c.ci_upper:+.3f}], p = {c.p_value:.3g}")

# %%
# pass@1 vs pass@5 on simulated k-of-10 samples
# ---------------------------------------------
#
# To show a k that the bundled data cannot reach, a *simulated*
# code-generation leaderboard (clearly not real data): 8 models, 40
# problem families (`subject`) of 5 problems, 10 samples per problem.
# Each model has an ability, each problem a difficulty, and each model a
# per-family strength; a sample succeeds with probability
# `logit⁻¹(ability + strength − difficulty)`.  Models with similar pass@1
# can separate at pass@5 when one of them is right often on many problems
# and the other always or never.

# %%
rng = np.random.default_rng(24)
M, S, Q, N = 8, 40, 5, 10
ability = np.linspace(-0.8, 0.6, M)
spread = np.linspace(0.4, 2.0, M)[rng.permutation(M)]   # how item-dependent each model is
rows = []
for s in range(S):
    strength = rng.normal(0, 0.5, M)
    for q in range(Q):
        diff = rng.normal(0, 1.0)
        for m in range(M):
            p = 1 / (1 + np.exp(-(ability[m] + strength[m] - spread[m] * diff)))
            rows.append((f"model{m}", f"fam{s:02d}", f"p{s:02d}_{q}", rng.binomial(N, p), N))
counts = pd.DataFrame(rows, columns=["model", "subject", "question", "c", "n"])

sim1 = mixrank.pass_at_k(counts, 1, correct="c", trials="n")
sim5 = mixrank.pass_at_k(counts, 5, correct="c", trials="n")
board(sim1, 1).join(board(sim5, 5)).sort_values("rank_at5")

# %%
# The two boards rank the models differently where their per-problem
# success rates are spread differently, and each has its own rank
# intervals at the problem-family unit.
#
# On the command line the same fit reads count input directly:
# `mixrank ranks runs.csv -f "cbind(k, n - k) ~ model + (1|subject)" --pass-at 5`
# (or 0/1 rows with `--replicate sample --pass-at 5`).
