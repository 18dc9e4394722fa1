"""
Each model's score with its uncertainty
=======================================

A leaderboard's first column is each model's score, usually with a
standard error computed as if every question were an independent draw
(what lm-evaluation-harness prints as `stderr`).  When questions come in
topics, the score of a model over *these* topics is a noisy estimate of
its score over new topics, and the honest interval is wider.
`FitResult.model_scores()` gives each model's score with the SE and df
method of the contrasts beside it (here CR2 at the topic with
Bell-McCaffrey df; docs/model_scores.md) and prints the iid standard error
beside it, so the design effect is visible.  Then: which pairwise gaps survive a
family-wise adjustment, simultaneous intervals, and how likely each model
is to be the best.
"""

# %%
import warnings

import matplotlib.pyplot as plt

import mixrank
from mixrank.report.plots_scores import plot_model_scores

chem = mixrank.load_dataset("chembench")
chem = chem[chem["prompt"] == "default"]
keep = ["o1", "gpt-4o", "claude3.5", "claude3", "llama3-70b-instruct", "gpt-4", "claude2",
        "mistral-large-2-123b"]
chem = chem[chem["model"].isin(keep)]
print(chem.shape, chem["subject"].nunique(), "topics")

with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.SingularFitWarning)  # boundary fits are legal
    res = mixrank.fit("correct ~ model + (1|subject)", chem)

# %%
# Scores at the topic unit next to the iid standard error
# -------------------------------------------------------
#
# `std_error` is the standard error of the model's score when topics are
# the unit of inference; `iid_std_error` is `sd / sqrt(n)` over the
# questions.  Their squared ratio, `variance_ratio`, is how many times
# larger the variance really is than the iid formula says.

# %%
scores = res.model_scores().sort_values("estimate", ascending=False)
print(scores.attrs["mixrank"]["df_method"], "| unit:", scores.attrs["mixrank"]["unit"])
scores[["model", "estimate", "std_error", "iid_std_error", "variance_ratio", "df", "ci_lower",
        "ci_upper", "n"]]

wider = (scores["ci_upper"] - scores["ci_lower"]) / (2 * 1.96 * scores["iid_std_error"])
assert scores["df"].between(1.9, 2.1).all() and (wider > 5).all()   # the prose below, checked

# %%
# With 9 topics of very unequal sizes (40 to 1,001 questions) the
# Bell-McCaffrey df are about 2, as for the contrasts (a few large topics
# carry most of each mean), and the intervals are many times wider than the
# iid ones.  The plot draws both: thick, the interval at the topic unit;
# thin, the iid interval.

# %%
ax = plot_model_scores(scores, title="ChemBench (default prompt)")
plt.show()

# %%
# The estimate above is the plain mean over each model's questions, the
# number most leaderboards print (the default `cells` estimand,
# docs/messy.md §1).  lme4's number, the GLS intercept, is the `gls`
# estimand; both come with intervals at the same unit.

# %%
cells = scores.set_index("model")[["estimate", "std_error"]]
gls = res.model_scores(estimand="gls").set_index("model")[["estimate", "std_error"]]
both = cells.add_suffix("_cells").join(gls.add_suffix("_gls")).loc[gls.index]
print(both.to_string(float_format=lambda x: f"{x:.4f}"))
assert round(100 * (both["estimate_cells"] - both["estimate_gls"]).abs().max()) == 14

# %%
# They differ by up to 14 points here: ChemBench's topics have very unequal
# sizes, and the plain mean is dominated by the largest topics while the
# GLS intercept weights topics more evenly (it sits between the `cells`
# and the `units` average).  Say which one a leaderboard reports.

# %%
# Which gaps survive a family-wise adjustment?
# --------------------------------------------
#
# A model's own interval is not the right tool to compare two models: the
# paired contrasts are far more precise because each topic's difficulty
# cancels in the difference.  With 28 pairs, some "significant" p-values
# are expected by chance; `contrasts()` reports `p_adjusted` beside
# `p_value` (by default the step-down over the topics' sign flips here,
# docs/defaults.md; `adjust="holm"` for Holm).

# %%
con = res.contrasts()
assert len(con) == 28 and con.attrs["mixrank"]["adjust"] == "stepdown"
print(f"p_value < 0.05: {(con['p_value'] < 0.05).sum()} of {len(con)} pairs; "
      f"Holm-adjusted: {(con['p_adjusted'] < 0.05).sum()}")
maxt = res.contrasts(adjust="maxt", rng=1)
print(f"max-t adjusted: {(maxt['p_adjusted'] < 0.05).sum()}; simultaneous critical value "
      f"{maxt.attrs['mixrank']['critical_value_t']:.3f} (t scale, from "
      f"{maxt.attrs['mixrank']['flips']} sign flips of the topics)")
# narrower than Bonferroni's: the t quantile at 0.05 / 56 with each pair's own df
from scipy import stats  # noqa: E402

bonferroni = stats.t.ppf(1 - 0.05 / 56, res.contrasts(adjust="none", ci="t")["df"])
assert (bonferroni > maxt.attrs["mixrank"]["critical_value_t"]).all()
maxt[["model_a", "model_b", "estimate", "p_value", "p_adjusted", "ci_lower", "ci_upper"]].head(8)

# %%
# The max-t intervals hold for all 28 gaps at once.  With the default
# `df="cr2"` their critical value comes from flipping the sign of each
# topic's vector of contrast totals (a randomization max-t at the unit,
# docs/methods.md "Validity with few units"); with `df="satterthwaite"`
# from the Gaussian joint covariance of the contrasts (docs/model_scores.md
# §3).  Either way they account for the correlation of the gaps, so they
# are narrower than Bonferroni's.

# %%
# How likely is each model to be the best?
# ----------------------------------------
#
# From random draws of the fitted contrasts, `rank_probabilities()` gives each model's
# probability of every rank.  It describes the uncertainty of the ranking
# given the fitted contrasts; for intervals with a coverage guarantee use
# `rank_intervals()`.

# %%
rp = res.rank_probabilities(rng=1)
wide = rp.pivot(index="model", columns="rank", values="probability")
wide = wide.loc[rp["model"].drop_duplicates()]
print(wide.round(3).to_string())

# %%
# JailbreakBench: two random terms
# --------------------------------
#
# With behaviours grouped into categories and four attack methods as
# prompts, `correct ~ model + (1|subject) + (1|prompt)` generalises over new
# categories *and* new attack methods.  Each model's own score then has
# only a handful of attack methods behind it, and its interval says so.

# %%
jb = mixrank.load_dataset("jailbreakbench")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.SingularFitWarning)
    jres = mixrank.fit("correct ~ model + (1|subject) + (1|prompt)", jb)
jscores = jres.model_scores().sort_values("estimate", ascending=False)
jscores[["model", "estimate", "std_error", "iid_std_error", "variance_ratio", "df", "n"]]
