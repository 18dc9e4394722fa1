"""
Resolution diagnostics and planning a benchmark
===============================================

A benchmark *resolves* a comparison when it is large enough to detect the
observed difference with the target power: `q = N / N* >= 1`, where `N*` is
the paired sample size that detects that difference (docs/methods.md §6).
This vignette

1. computes `N*`, the minimum detectable effect and power without data;
2. audits the shortcut that common calculators invite;
3. judges the adjacent pairs of the ChemBench leaderboard under four
   paradigms (fixed n, multiplicity-adjusted, anytime-valid, clustered);
4. asks how robust the clustered verdict is (leave one topic out, topic
   bootstrap, other and random clusterings);
5. plans a design (topics x questions) that would resolve a 2-point gap.
"""

# %%
import warnings

import matplotlib.pyplot as plt

import mixrank
from mixrank.design.power import mde, n_star, power, sigma_d
from mixrank.design.power.audit import calculator_audit, shortcut_n
from mixrank.design.summaries import pair_audit, unresolved_by_effect
from mixrank.report.plots_resolution import plot_power_curve, plot_resolution
from mixrank.report.plots_sensitivity import plot_sensitivity

# %%
# N*, MDE and power without data
# ------------------------------
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

# %%
# The shortcut "unpaired Cohen-h sample size times (1 - rho)" asks for about
# half of N*; the audit lines up what each convention returns:

# %%
print(f"shortcut: {shortcut_n(0.65, 0.60, rho=0.3):.1f} = {shortcut_n(0.65, 0.60, rho=0.3) / ns:.3f} N*")
assert 0.45 < shortcut_n(0.65, 0.60, rho=0.3) / ns < 0.55      # "about half of N*"
calculator_audit(0.65, 0.60, rho=0.3)[["method", "n", "ratio_to_n_star"]]

# %%
ax = plot_power_curve([0.02, 0.05, 0.1], sigma_d=sd, n_observed=1000,
                      title=f"Power of the paired test, sigma_D = {sd:.3f}")

# %%
# The same from the command line:
#
# .. code-block:: text
#
#    mixrank power --p-a 0.65 --p-b 0.60 --rho 0.3
#
#
# Verdicts for a real leaderboard
# -------------------------------
#
# ChemBench (published run, 25 systems, 2,788 questions in 9 topics).  The
# verdict table judges the pairs adjacent in the leaderboard order.

# %%
df = mixrank.load_dataset("chembench")
df = df[df["prompt"] == "default"]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # singular fits are legal; see vignette 1
    res = mixrank.fit("correct ~ model + (1|subject)", df)
verdicts = res.resolution(columns="all")   # the default view has the main columns
assert (df["model"].nunique(), df["question"].nunique(), df["subject"].nunique()) == (25, 2788, 9)
assert len(verdicts) == 24                                    # the adjacent pairs
for paradigm in ("multiplicity", "anytime", "cluster"):       # a stress never resolves more
    assert (verdicts["resolved"] | ~verdicts[f"resolved_{paradigm}"]).all(), paradigm
for paradigm, text in verdicts.attrs["mixrank"]["unresolved"].items():
    print(f"{paradigm:>13}: {text}")
verdicts[["model_a", "model_b", "estimate", "n", "n_star", "q", "resolved",
          "resolved_multiplicity", "resolved_anytime", "variance_ratio", "resolved_cluster"]]

# %%
# Each paradigm is a stress that can only turn a fixed-n "resolved" into
# "unresolved", never the reverse: correcting for
# the 24 comparisons, allowing the analyst to peek as results come in
# (anytime-valid), and finally treating topics as the unit of inference
# (clustered: `N*` times `variance_ratio`, the variance of the fitted mixed
# model's estimate over its iid variance: the design effect for this
# estimand).
#
# Every column tests the same difference, the fit's estimand (here the
# default `cells`, the plain leaderboard difference `p_A - p_B` over the
# common questions; `attrs["mixrank"]["estimand"]`), with that estimand's
# own iid variance `sigma_d^2 sum w_c^2` in the fixed-n, multiplicity and
# anytime columns (`weight_factor = n sum w_c^2`, 1 for `cells`;
# docs/sensitivity.md), so the table reproduces the papers' numbers.
# Adjacent rows run from the better model to the worse one.  For 0/1
# scores the anytime column is the paired-Bernoulli mixture e-process on the
# discordant questions (docs/anytime.md); its threshold inflation over the
# fixed-n critical value is in `inflation_anytime`:

# %%
print(verdicts.attrs["mixrank"]["anytime"])
verdicts[["model_a", "model_b", "weight_factor", "discordance", "inflation_anytime",
          "n_star", "n_star_anytime"]].head()

# %%
ax = plot_resolution(verdicts, title="ChemBench adjacent pairs: q = N / N*")
plt.tight_layout()

# %%
# The top of the leaderboard, explicitly:

# %%
res.resolution(top=5, columns="all")[["model_a", "model_b", "estimate", "n_star", "q", "n_star_cluster",
                       "q_cluster", "resolved_all"]]

# %%
# Where do the unresolved pairs sit?  By the size of their gap, with the
# median and worst factor `r = N*/N` by which the benchmark would have to
# grow:

# %%
unresolved_by_effect(res.resolution(pairs="all", top=10, columns="all"))

# %%
# How robust is this verdict?
# ---------------------------
#
# The clustered column rests on nine topics.  Three checks ask whether its
# verdicts are an artefact of that one clustering (docs/sensitivity.md):
#
# * **leave one topic out** -- refit without each topic in turn;
# * **topic bootstrap** -- resample the nine topics with replacement (1,000
#   times); besides the verdicts it gives the cluster-bootstrap `N*`, which
#   the papers propose in place of `N* x DE`;
# * **other clusterings** -- a coarser grouping of the topics, and 200
#   random clusterings of the questions with the topics' sizes: the null
#   reference, whose design effect centres on 1.
#
# `stability` is the share of replicates that keep the full fit's clustered
# verdict.

# %%
topic_family = {"Analytical Chemistry": "lab", "Chemical Preference": "preference",
                "Toxicity/Safety": "safety"}
family = res.frame.cells["subject"].map(topic_family).fillna("core").to_numpy()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    stab = res.sensitivity("loso,bootstrap,clusterings", top=8, groupings={"family": family},
                           rng=2026, summary=True)
stab[["kind", "grouping", "model_a", "model_b", "resolved_cluster", "stability",
      "share_resolved_cluster", "ci_lower", "ci_upper"]]

# %%
ax = plot_sensitivity(stab, title="ChemBench top 8: stability of the clustered verdict")
plt.tight_layout()

# %%
# The topic bootstrap's `N*` beside the model-based `N* x variance_ratio`, and
# where the fitted variance ratio falls among random clusterings (`p_value`:
# share of random clusterings with a ratio at least as large):

# %%
boot = stab[stab["kind"] == "bootstrap"]
rand = stab[stab["grouping"] == "random"]
print(boot[["model_a", "model_b", "variance_ratio", "variance_ratio_bootstrap", "n_star_cluster",
            "n_star_bootstrap"]].round(1).to_string(index=False))
print(rand[["model_a", "model_b", "variance_ratio", "variance_ratio_median",
            "variance_ratio_mean", "p_value"]].round(3).to_string(index=False))

# %%
# With nine topics the bootstrap is coarse (a topic drawn twice counts as
# two), and the leave-one-out column shows which single topic a verdict
# leans on.  From the command line:
#
# .. code-block:: text
#
#    mixrank resolution results.csv --formula "correct ~ model + (1|subject)" --sensitivity loso,bootstrap
#
#
# The shortcut calculators invite undersizes each pair by about half
# (`shortcut_ratio = n_h / N*`); the bootstrap `N*` of the fixed-n paradigm
# sits beside the Wald one:

# %%
audit = pair_audit(res, top=6, rng=1)
assert audit["shortcut_ratio"].between(0.45, 0.55).all()      # "by about half"
audit[["model_a", "model_b", "estimate", "rho", "n_star", "shortcut_ratio", "n_star_bootstrap"]]

# %%
# Planning a design
# -----------------
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
by_questions = plan[plan["vary"] == "questions"]
assert by_questions["unreachable"].all() and not plan[plan["vary"] == "subjects"]["unreachable"].any()
plan  # noqa: B018 (a displayed value, as in a notebook)

# %%
# Adding questions to the nine topics soon stops helping: the topic
# component `sigma_subject^2 / T` does not shrink with Q, so here the 2-point
# gap is *unreachable* by questions alone; more topics reach it.
# A specific pair and target:

# %%
res.plan(0.05, pair=("claude3.5", "gpt-4o"))[["kind", "vary", "subjects", "questions", "n",
                                                "std_error", "q", "resolved", "unreachable"]]
