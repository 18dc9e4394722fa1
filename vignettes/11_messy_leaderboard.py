"""
Reading a messy leaderboard
===========================

Real leaderboards are not textbook designs. On ChemBench, 7 of the 25
models were also re-run at temperature 1 (a second "prompt" mode), the
other 18 only once; the 9 topics have 40 to 1001 questions; and a user
often fits one pair to look at it. This vignette walks through what
mixrank does by default on such data and what each warning means
(docs/messy.md):

1. the default estimand is the leaderboard's own number;
2. a random term with few levels warns;
3. models that cannot be estimated under the formula do not abort the
   analysis;
4. cells left out of pairs, restricted fits and the sensitivity unit are
   stated.
"""

# %%
import warnings

import numpy as np

import mixrank
from mixrank.report.plots_scores import plot_model_scores


def show(caught):
    """Print each mixrank warning caught: its class and the start of its text."""
    for w in caught:
        if issubclass(w.category, mixrank.MixrankWarning):
            print(f"{w.category.__name__}: {str(w.message)[:330]}...\n")


chem = mixrank.load_dataset("chembench", reruns=True)  # with the temperature-1 re-runs
two_modes = ["llama3-8b-instruct", "llama3-70b-instruct", "llama3.1-8b-instruct",
             "llama3.1-70b-instruct", "mixtral-8x7b-instruct"]
one_mode = ["gpt-4o", "claude3.5"]
df = chem[chem["model"].isin(two_modes + one_mode)]
print(df.groupby(["model", "prompt"]).size().unstack().to_string())

# %%
# 1. The default answer is the leaderboard's number
# -------------------------------------------------
#
# Each model's score is the plain mean over the cells it was scored on (when
# every model has the same cells; otherwise `model_scores()` puts every model
# on the union of cells, adjusted for those it lacks, and `scoring="plain"`
# gives the plain means: docs/methods.md §11), and each contrast the plain
# mean difference over the cells a pair shares (`estimand="cells"`); the
# standard errors and df are taken at the formula's unit (here the topic: the
# cluster-robust CR2 standard error with Bell–McCaffrey df, docs/defaults.md).
# lme4's fixed effect stays available as `estimand="gls"`.

# %%
default = df[df["prompt"] == "default"]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    res = mixrank.fit("correct ~ model + (1|subject)", default)
show(caught)
scores = res.model_scores(scoring="plain").set_index("model")
leaderboard = default.groupby("model")["correct"].mean()
print("estimand:", scores.attrs["mixrank"]["estimand"])
print("largest |score - leaderboard mean|:",
      float(np.max(np.abs(scores.loc[leaderboard.index, "estimate"] - leaderboard))))
assert float(np.max(np.abs(scores.loc[leaderboard.index, "estimate"] - leaderboard))) < 1e-12
assert res.contrasts().attrs["mixrank"]["df_method"] == "CR2 at 'subject', Bell-McCaffrey df"
gls = res.model_scores(estimand="gls").set_index("model")["estimate"]
scores.assign(gls=gls)[["estimate", "gls", "std_error", "df", "ci_lower", "ci_upper"]]

# %%
# The same scores with their intervals at the topic unit:

# %%
ax = plot_model_scores(res.model_scores(), title="ChemBench: scores at the topic unit")

# %%
# Verdict tables order the models by the same estimand and orient every
# adjacent pair from the better model to the worse one:

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.MixrankWarning)
    verdicts = res.resolution()
assert (verdicts["estimate"] > 0).all()                # better model first, every row
verdicts[["model_a", "model_b", "estimate", "q", "resolved", "resolved_cluster"]]

# %%
# 2. Few levels: a weak design
# ----------------------------
#
# Suppose the analyst keeps only three topics. A random term estimates a
# variance from its levels; with 3 of them the df are about 2 and the
# intervals are huge. mixrank warns once per fit, names the term and its
# number of levels, and says what to do instead: a fixed stratum
# (`model * subject`) or `method="aggregate"` over a unit with more levels.

# %%
three = default[default["subject"].isin(["Analytical Chemistry", "General Chemistry",
                                          "Physical Chemistry"])]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    weak = mixrank.fit("correct ~ model + (1|subject)", three, pairs=[("gpt-4o", "claude3.5")])
show(caught)
weak_warnings = [w for w in caught if issubclass(w.category, mixrank.WeakDesignWarning)]
assert len(weak_warnings) == 1 and "(1|subject) has 3 level" in str(weak_warnings[0].message)
assert 1.5 < float(weak.contrasts()["df"].iloc[0]) < 2.5     # "about 2"
weak.contrasts()[["model_a", "model_b", "estimate", "df", "ci_lower", "ci_upper", "p_value"]]

# %%
# 3. Models that cannot be estimated under the formula
# ----------------------------------------------------
#
# With both the question and the prompt mode as random terms, a model scored
# under one mode only shares a single cell per question with every other
# model: the question term is then confounded with the residual and that
# pair has no estimate. The pairs are kept as rows with NaN estimates and
# the reason in `note`; one warning names every affected model. (The
# 2-level prompt term also triggers the weak-design warning.)

# %%
f = "correct ~ model + (1|question) + (1|prompt)"
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    messy = mixrank.fit(f, df)
show(caught)
c = messy.contrasts()
print(f"{int(c['estimate'].isna().sum())} of {len(c)} pairs not estimable")
naming = [w for w in caught if all(m in str(w.message) for m in one_mode)]
assert len(naming) == 1                                # one warning names every affected model
assert any(issubclass(w.category, mixrank.WeakDesignWarning) for w in caught)
c[c["estimate"].isna()][["model_a", "model_b", "n", "note"]].head(3)

# %%
# Rank intervals, verdicts, sensitivity checks, planning and anova work on
# the estimable part and say what they left out:

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.MixrankWarning)
    ranks = messy.rank_intervals()
print("left out:", ranks.attrs["mixrank"]["left_out"])
assert sorted(ranks.attrs["mixrank"]["left_out"]) == sorted(one_mode)
ranks  # noqa: B018 (a displayed value, as in a notebook)

# %%
# `incomplete="drop"` (CLI `--drop-incomplete`) removes those models before
# fitting instead, and says which:

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dropped = mixrank.fit(f, df, incomplete="drop",
                          control=mixrank.Control(small_sample="ignore"))
show(caught)
print(dropped.models)
assert sorted(dropped.models) == sorted(two_modes)

# %%
# 4. Say what was done
# --------------------
#
# Cells scored for one model only are never imputed; a pair uses the cells
# both models were scored on, and `fit()` warns once with the count per
# model. Here two gpt-4o answers are missing, so two of claude3.5's cells
# have no partner:

# %%
holes = default.drop(default.index[(default["model"] == "gpt-4o")][:2])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    mixrank.fit("correct ~ model + (1|subject)", holes, pairs=[("gpt-4o", "claude3.5")])
show(caught)

# %%
# A fit restricted to some pairs keeps its defaults: the verdict table and
# the sensitivity checks cover the fitted pairs. With several random terms,
# the sensitivity checks resample the term with the fewest levels (the
# binding unit of inference) and say so.

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", mixrank.MixrankWarning)
    pair = mixrank.fit("correct ~ model + (1|subject) + (1|question)", df,
                       pairs=[("llama3.1-70b-instruct", "llama3-70b-instruct")])
    print(pair.resolution()[["model_a", "model_b", "estimate", "resolved_cluster"]].to_string())
    sens = pair.sensitivity("loso", summary=True)
print("unit:", sens.attrs["mixrank"]["unit"], "--", sens.attrs["mixrank"]["unit_reason"])
sens  # noqa: B018 (a displayed value, as in a notebook)
