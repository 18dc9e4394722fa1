"""
Choosing the unit of inference: cells, subjects or prompts
==========================================================

The random terms of a mixrank formula say what the conclusions generalise
over.  `correct ~ model` treats every cell (question x prompt) as an
independent draw: the conclusion is about *these* behaviours and *these*
prompts, with new noise only.  `(1|subject)` makes topics the unit:
conclusions extend to new topics.  `(1|prompt)` makes prompt templates (or
attack methods) the unit.  The same data give very different standard
errors, and sometimes opposite verdicts.  Two real data sets:

* JailbreakBench (Chao et al., arXiv 2404.01318): 4 target models x 100
  harmful behaviours in 10 categories x 6 attack methods; `correct = 1`
  means the model resisted.  Only 18 of the 24 model x attack combinations
  exist, so pairs of models share different numbers of cells.
* The multi-prompt BBH results of Mizrahi et al. (TACL 2024, arXiv
  2401.00595): accuracy of 11 models on 15 BBH tasks under up to 189
  paraphrased templates each.
"""

# %%
import warnings

import pandas as pd

import mixrank
from mixrank.report import plot_contrasts


def quiet_fit(formula, data, **kw):
    """Fit, keeping the warnings (singular fits, skipped pairs) short."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = mixrank.fit(formula, data, **kw)
    for w in caught:
        print(f"  [{w.category.__name__}] {str(w.message)[:110]}...")
    return res


jb = mixrank.load_dataset("jailbreakbench")
print(jb.groupby(["model", "prompt"]).size().unstack().fillna(0).astype(int).to_string())
# the prose above, checked (the gallery build fails if the data drift from it)
assert (jb["model"].nunique(), jb["subject"].nunique(), jb["prompt"].nunique()) == (4, 10, 6)
assert jb.groupby(["model", "prompt"]).ngroups == 18

# %%
# JailbreakBench: three units, one data set
# -----------------------------------------
#
# The cells are (category, behaviour, attack).  We fit the same comparison
# with four sets of random terms and line up the standard errors and
# p-values of each pair.

# %%
formulas = {
    "cells": "correct ~ model",
    "subjects": "correct ~ model + (1|subject)",
    "prompts": "correct ~ model + (1|prompt)",
    "subjects + prompts": "correct ~ model + (1|subject) + (1|prompt)",
}
rows = []
for unit, f in formulas.items():
    print(unit)
    con = quiet_fit(f, jb).contrasts()
    rows.append(con.assign(unit=unit)[["unit", "model_a", "model_b", "estimate", "std_error",
                                       "df", "p_value", "n"]])
jb_table = pd.concat(rows, ignore_index=True)
print(jb_table.pivot_table(index=["model_a", "model_b"], columns="unit",
                           values="std_error", sort=False).round(4).to_string())

by_unit = jb_table.groupby("unit")
se = by_unit["std_error"].mean()
assert (by_unit.get_group("cells")["p_value"] < 0.01).all()
assert 1 < se["subjects"] / se["cells"] < 1.5 and se["prompts"] / se["cells"] > 5
assert by_unit.get_group("prompts")["df"].between(2, 4).all()
attacks = jb.groupby(["model"])["prompt"].apply(set)
shared = [len(attacks[a] & attacks[b]) for a, b in
          by_unit.get_group("prompts")[["model_a", "model_b"]].itertuples(index=False)]
assert min(shared) == 3 and max(shared) == 5, shared

# %%
# With cells as units every pair is significant at the 1% level.  With
# categories as units the standard errors grow moderately (10 categories).
# With the attack methods as units they grow several-fold (more than five
# times) and the degrees of
# freedom fall to 2-4: there are only 3-5 attacks per pair, and which model
# resists best depends strongly on the attack (a large model x attack
# interaction).  A claim like "model A is more robust than model B" that is
# meant to hold for *attacks one has not tried* is much weaker than the
# cell-level test suggests.

# %%
print(jb_table.pivot_table(index=["model_a", "model_b"], columns="unit", values="p_value",
                           sort=False).to_string(float_format=lambda v: f"{v:.2g}"))

# %%
res_jb = quiet_fit(formulas["subjects + prompts"], jb)
vc = res_jb.variance_components()
print(vc.pivot_table(index=["model_a", "model_b"], columns="group", values="share",
                     sort=False).round(3).to_string())
ax = plot_contrasts(res_jb, title="JailbreakBench, attacks and categories as units")

# %%
# Multi-prompt BBH: prompts as the unit, continuous scores
# --------------------------------------------------------
#
# Each row of the multi-prompt file is a cell total: the accuracy of a model
# on one task under one template (`correct = n_correct / n_samples`).  There
# is no `question` column, so we pair on `subject` (the task) and `prompt`
# (the template id) explicitly.  Scores are continuous; the model is the
# same linear mixed model.

# %%
mp = mixrank.load_dataset("multiprompt")
bbh = mp[mp["benchmark"] == "BBH"]
print(bbh.shape, bbh["model"].nunique(), "models,", bbh["subject"].nunique(), "tasks")
assert (bbh["model"].nunique(), bbh["subject"].nunique()) == (11, 15)
print(bbh.groupby("subject")["prompt"].nunique().describe().to_string())

# %%
# Template ids are numbered within each task (template 1 of one task is a
# different text from template 1 of another), so `(1|prompt)` groups "the
# k-th paraphrase" across tasks; the task-specific part of the template
# effect stays in the residual.  We compare cells, tasks, and tasks +
# templates as units.

# %%
bbh_fits = {}
for unit, f in {"cells": "correct ~ model",
                "tasks": "correct ~ model + (1|subject)",
                "tasks + templates": "correct ~ model + (1|subject) + (1|prompt)"}.items():
    print(unit)
    bbh_fits[unit] = quiet_fit(f, bbh, pair_by=["subject", "prompt"])
ranks = pd.concat([r.rank_intervals().assign(unit=u) for u, r in bbh_fits.items()])
ranks["interval"] = ranks["rank_lower"].astype(str) + "-" + ranks["rank_upper"].astype(str)
print(ranks.pivot_table(index="model", columns="unit", values="interval", aggfunc="first")
      .loc[bbh_fits["cells"].rank_intervals()["model"]].to_string())

width = ranks["rank_upper"] - ranks["rank_lower"]
assert (bbh_fits["cells"].rank_intervals()["n"] == 2615).all()
assert (width[ranks["unit"] == "cells"] == 0).all()
assert (width[ranks["unit"] == "tasks"] >= 2).mean() > 0.5

# %%
# With 2,615 template x task cells per model every model gets a single rank.
# That precision is an artefact: the cells of one task share the task's
# difficulty for each model, and with the 15 tasks as units most models'
# rank intervals span several places (three or more).

# %%
vc = bbh_fits["tasks + templates"].variance_components()
print(vc.groupby("group")["share"].describe()[["mean", "min", "max"]].round(3).to_string())
de = bbh_fits["tasks + templates"].design_effect()
print(de["design_effect"].describe().round(1).to_string())
share = vc.groupby("group")["share"].mean()
assert share.idxmax() == "subject" and share["prompt"] < 0.05

# %%
# The task term carries the largest share of the variance of the differences; the
# cross-task "k-th template" term is small, as expected from ids that do not
# name the same template across tasks.  The design effect (variance of the
# estimate relative to a naive paired test
# over cells) says how many independent cells the benchmark is worth:
# `n / design_effect`.  Choose the unit by the claim you want to make, then
# let the formula carry it.
