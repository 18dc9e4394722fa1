# %% [markdown]
# # Resolution diagnostics and planning a benchmark
#
# A benchmark *resolves* a comparison when it is large enough to detect the
# observed difference with the target power: `q = N / N* >= 1`, where `N*` is
# the paired sample size that detects that difference (docs/methods.md §6).
# This vignette
#
# 1. computes `N*`, the minimum detectable effect and power without data;
# 2. audits the shortcut that common calculators invite;
# 3. judges the adjacent pairs of the ChemBench leaderboard under four
#    paradigms (fixed n, multiplicity-adjusted, anytime-valid, clustered);
# 4. plans a design (topics x questions) that would resolve a 2-point gap.

# %%
import warnings

import matplotlib.pyplot as plt

import mixrank
from mixrank.design.audit import calculator_audit, shortcut_n
from mixrank.design.power import mde, n_star, power, sigma_d
from mixrank.report.plots_resolution import plot_power_curve, plot_resolution

# %% [markdown]
# ## N*, MDE and power without data
#
# Two models with accuracies 0.65 and 0.60 whose 0/1 scores correlate at
# rho = 0.3 over questions (the worked example of arXiv 2605.30315):

# %%
sd = sigma_d(0.65, 0.60, rho=0.3)
ns = n_star(p_a=0.65, p_b=0.60, rho=0.3)
print(f"paired SD sigma_D = {sd:.4f}")
print(f"N* (paired Wald)  = {ns:.1f} questions")
print(f"MDE at N = 1000   = {mde(1000, p_a=0.65, p_b=0.60, rho=0.3):.4f}")
print(f"power at N = 500  = {power(n=500, p_a=0.65, p_b=0.60, rho=0.3):.3f}")
print(f"McNemar (Connor)  = {n_star(p_a=0.65, p_b=0.60, rho=0.3, method='connor'):.1f}")

# %% [markdown]
# The shortcut "unpaired Cohen-h sample size times (1 - rho)" asks for about
# half of N*; the audit lines up what each convention returns:

# %%
print(f"shortcut: {shortcut_n(0.65, 0.60, rho=0.3):.1f} = {shortcut_n(0.65, 0.60, rho=0.3) / ns:.3f} N*")
calculator_audit(0.65, 0.60, rho=0.3)[["method", "n", "ratio_to_n_star"]]

# %%
ax = plot_power_curve([0.02, 0.05, 0.1], sigma_d=sd, n_observed=1000,
                      title=f"Power of the paired test, sigma_D = {sd:.3f}")

# %% [markdown]
# The same from the command line:
#
# ```
# mixrank power --p-a 0.65 --p-b 0.60 --rho 0.3
# ```
#
# ## Verdicts for a real leaderboard
#
# ChemBench (published run, 25 systems, 2,788 questions in 9 topics).  The
# verdict table judges the pairs adjacent in the leaderboard order.

# %%
df = mixrank.load_dataset("chembench")
df = df[df["prompt"] == "default"]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # singular fits are legal; see vignette 1
    res = mixrank.fit("correct ~ model + (1|subject)", df)
verdicts = res.resolution()
for paradigm, text in verdicts.attrs["mixrank"]["unresolved"].items():
    print(f"{paradigm:>13}: {text}")
verdicts[["model_a", "model_b", "estimate", "n", "n_star", "q", "resolved",
          "resolved_multiplicity", "resolved_anytime", "design_effect", "resolved_cluster"]]

# %% [markdown]
# Each paradigm is a stress that can only turn a fixed-n "resolved" into
# "unresolved", never the reverse: correcting for
# the 24 comparisons, allowing the analyst to peek as results come in
# (anytime-valid), and finally treating topics as the unit of inference
# (clustered: `N*` times the design effect of the fitted mixed model).

# %%
ax = plot_resolution(verdicts, title="ChemBench adjacent pairs: q = N / N*")
plt.tight_layout()

# %% [markdown]
# The top of the leaderboard, explicitly:

# %%
res.resolution(top=5)[["model_a", "model_b", "estimate", "n_star", "q", "n_star_cluster",
                       "q_cluster", "resolved_all"]]

# %% [markdown]
# ## Planning a design
#
# `FitResult.plan` turns the fitted variance components into the variance of
# the estimate for a hypothetical balanced design, here T topics x Q
# questions per topic, and finds the smallest T (or Q) that resolves a
# target difference.  The components of one pair are used (by default the
# pair with the median variance of its estimate).

# %%
plan = res.plan(0.02)
meta = plan.attrs["mixrank"]
print(f"components of {meta['model_a']} - {meta['model_b']}: {meta['components']}")
print(f"variance formula: {meta['variance_formula']}")
plan  # noqa: B018 (a displayed value, as in a notebook)

# %% [markdown]
# Adding questions to the nine topics soon stops helping: the topic
# component `sigma_subject^2 / T` does not shrink with Q, so a 2-point gap
# may be *unreachable* by questions alone; more topics are needed.
# A specific pair and target:

# %%
res.plan(0.05, pair=("claude3.5", "gpt-4o"))[["kind", "vary", "subjects", "questions", "n",
                                                "std_error", "q", "resolved", "unreachable"]]
