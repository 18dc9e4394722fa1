"""Native engine: exact identities, robustness and bad designs.

Agreement with lme4/lmerTest is tested in ``test_lme4_reference.py``; here
the engine is checked against exact identities (closed form vs profiled
REML, aggregate = REML on balanced nested data, estimands) and for clear
errors on designs that cannot be fitted.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank import DesignError, SingularFitWarning
from mixrank.engine import structure
from mixrank.engine.lmm import driver, native
from mixrank.errors import MixrankWarning

CROSSED = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"


def gauss(models=2, subjects=8, questions=10, prompts=4, rng=1, **kw):
    base = dict(family="gaussian", sd_residual=1.0, sd_model_subject=0.6,
                sd_model_question=0.7, sd_model_prompt=0.4)
    base.update(kw)
    return mixrank.simulate(models, subjects, questions, prompts, rng=rng, **base)


def general_only(frame, pairs, **kw):
    """Fit without the balanced closed form (profiled REML for every pair)."""
    cache = driver.StructureCache()
    return [native._fit_one(frame, j, k, "reml", kw.get("estimand", "gls"), cache, None)
            for j, k in pairs]


@pytest.mark.parametrize("formula", [
    CROSSED,
    "correct ~ model + (1|subject)",
    "correct ~ model + (1|subject) + (1|prompt)",
    "correct ~ model + (1|subject/question)",
])
def test_closed_form_equals_profiled_reml(formula):
    fr = mixrank.build_frame(gauss(rng=11), formula)
    closed = native.fit_pairs(fr, [(0, 1)])[0]
    assert closed.message == "closed form (balanced)"
    gen = general_only(fr, [(0, 1)])[0]
    assert closed.criterion == pytest.approx(gen.criterion, abs=1e-7)
    assert closed.variance == pytest.approx(gen.variance, rel=1e-6)
    assert closed.df == pytest.approx(gen.df, rel=1e-4)
    for g, v in closed.components.items():
        assert v == pytest.approx(gen.components[g], rel=1e-5, abs=1e-9)


def test_aggregate_equals_reml_on_balanced_nested():
    # docs/methods.md §3: (1|subject) only, equal cells per subject, interior components
    d = gauss(subjects=12, questions=15, prompts=1, sd_model_subject=0.8)
    f = "correct ~ model + (1|subject)"
    reml = mixrank.fit(f, d).contrasts().iloc[0]
    agg = mixrank.fit(f, d, method="aggregate").contrasts().iloc[0]
    assert reml.estimate == pytest.approx(agg.estimate, rel=1e-12)
    assert reml.std_error == pytest.approx(agg.std_error, rel=1e-10)
    assert reml.df == pytest.approx(agg.df, rel=1e-10) and agg.df == 11
    # and by hand: sd of subject means / sqrt(T)
    w = d.pivot_table(index=["subject", "question"], columns="model", values="correct")
    sm = (w["m01"] - w["m02"]).groupby(level="subject").mean()
    assert agg.std_error == pytest.approx(sm.std(ddof=1) / np.sqrt(len(sm)), rel=1e-12)


def test_estimands_on_unbalanced_data():
    d = gauss(subjects=6, questions=[3, 5, 8, 10, 12, 20], prompts=1, missing=0.2, rng=4)
    f = "correct ~ model + (1|subject)"
    fr = mixrank.build_frame(d, f)
    m = fr.observed[:, 0] & fr.observed[:, 1]
    dd = fr.scores[m, 0] - fr.scores[m, 1]
    cells = mixrank.fit(f, fr, estimand="cells").pairs[0]
    assert cells.estimate == pytest.approx(dd.mean(), rel=1e-12)
    subj = fr.term_codes["subject"][m]
    units = mixrank.fit(f, fr, estimand="units").pairs[0]
    means = pd.Series(dd).groupby(subj).mean()
    assert units.estimate == pytest.approx(means.mean(), rel=1e-12)
    gls = mixrank.fit(f, fr, estimand="gls").pairs[0]
    # three different estimands, one set of variance components
    assert len({round(x, 12) for x in (gls.estimate, cells.estimate, units.estimate)}) == 3
    assert gls.components == cells.components == units.components


def test_sparse_path_equals_dense(monkeypatch):
    d = gauss(subjects=5, questions=6, prompts=5, missing=0.25, rng=9)
    fr = mixrank.build_frame(d, CROSSED)
    dense = mixrank.fit(CROSSED, fr).pairs[0]
    monkeypatch.setattr(structure, "DENSE_Q2_LIMIT", 1)
    sparse = mixrank.fit(CROSSED, fr).pairs[0]
    assert sparse.criterion == pytest.approx(dense.criterion, abs=1e-8)
    assert sparse.variance == pytest.approx(dense.variance, rel=1e-7)
    assert sparse.df == pytest.approx(dense.df, rel=1e-5)


def test_zero_component_is_a_flagged_boundary_fit():
    d = gauss(subjects=10, questions=8, prompts=4, sd_model_prompt=0.0, rng=4)
    with pytest.warns(SingularFitWarning, match="prompt"):
        res = mixrank.fit(CROSSED, d)
    p = res.pairs[0]
    assert "prompt" in p.boundary and p.components["prompt"] == 0.0
    assert p.converged and np.isfinite(p.df) and p.variance > 0
    diag = res.diagnostics().iloc[0]
    assert diag.boundary == "prompt"


def test_two_subjects_and_dominant_component():
    d = gauss(subjects=2, questions=30, prompts=1, sd_model_subject=1.0, rng=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        p = mixrank.fit("correct ~ model + (1|subject)", d).pairs[0]
    assert p.converged and 0 < p.df <= 59
    dom = gauss(subjects=10, questions=10, prompts=1, sd_model_subject=5.0, sd_residual=0.1,
                sd_model_question=0.0, rng=6)
    p = mixrank.fit("correct ~ model + (1|subject)", dom).pairs[0]
    share = p.components["subject"] / sum(p.components.values())
    assert share > 0.99 and p.converged
    assert p.df == pytest.approx(9, rel=1e-3)  # all information at the subject level


def test_single_common_cell_is_an_error():
    d = gauss(models=2, subjects=3, questions=2, prompts=1)
    keep = (d.model == "m01") | (d.question == d.question.iloc[0])
    with pytest.raises(DesignError, match="share 1 cell"):
        mixrank.fit("correct ~ model + (1|subject)", d[keep], pairs=[("m01", "m02")])


def test_grouping_constant_within_a_pair_is_dropped_with_a_warning(shared_data):
    jb = shared_data("jailbreakbench")
    # keep one attack only for the llama/vicuna pair so prompt is constant on its cells
    other = jb[jb.model.isin(["gpt-3.5-turbo-1106", "gpt-4-0125-preview"])]
    one = jb[jb.model.isin(["llama-2-7b-chat-hf", "vicuna-13b-v1.5"])
             & (jb.prompt == "PAIR/black_box")]
    data = pd.concat([other, one], ignore_index=True)
    with pytest.warns(MixrankWarning, match=r"\(1\|prompt\) have a single level"):
        res = mixrank.fit("correct ~ model + (1|subject) + (1|prompt)", data,
                          pairs=[("llama-2-7b-chat-hf", "vicuna-13b-v1.5")])
    vc = res.variance_components()
    assert np.isnan(vc.loc[vc.group == "prompt", "variance"]).all()
    assert np.isfinite(res.contrasts().std_error).all()


def test_confounded_groupings_are_an_error():
    d = gauss()
    d["domain"] = "dom_" + d["subject"]  # a relabelling of subject
    with pytest.raises(DesignError, match=r"\(1\|subject\) and \(1\|domain\) .*perfectly confounded"):
        mixrank.fit("correct ~ model + (1|subject) + (1|domain)", d)


def test_term_with_one_cell_per_level_is_an_error():
    d = gauss(prompts=1)
    with pytest.raises(DesignError, match="confounded with the residual"):
        mixrank.fit("correct ~ model + (1|subject:question)", d)


def test_pair_orientation_and_selection():
    d = gauss(models=3)
    ab = mixrank.fit("correct ~ model + (1|subject)", d, pairs=[("m02", "m01")]).contrasts()
    ba = mixrank.fit("correct ~ model + (1|subject)", d, pairs=[("m01", "m02")]).contrasts()
    assert ab.model_a.iloc[0] == "m02"
    assert ab.estimate.iloc[0] == pytest.approx(-ba.estimate.iloc[0], rel=1e-12)
    assert ab.std_error.iloc[0] == pytest.approx(ba.std_error.iloc[0], rel=1e-10)


def test_df_near_a_boundary_component():
    """A tiny interior component (theta ~ 3e-3): the profiled-REML Satterthwaite df must
    match the closed form (and lmerTest's 5.74086 for this pair, lme4 1.1-31 /
    lmerTest 3.1-3 on the same differences).  A relative finite-difference step
    once gave 5.853 here."""
    d = mixrank.load_example()
    fr = mixrank.build_frame(d[d.model.isin(["m01", "m06"])], CROSSED)
    closed = native.fit_pairs(fr, [(0, 1)])[0]
    gen = general_only(fr, [(0, 1)])[0]
    assert closed.message == "closed form (balanced)"
    assert 0 < closed.components["prompt"] < 1e-5
    assert gen.df == pytest.approx(closed.df, rel=1e-4)
    assert closed.df == pytest.approx(5.74086, rel=1e-3)


@pytest.mark.slow
def test_very_large_design_closed_form_and_profiled_reml_agree():
    """171k cells (57 subjects x 100 questions x 30 prompts): the closed form and the
    profiled REML reach the same optimum at scale, and a 20%-missing version converges."""
    d = mixrank.simulate(2, 57, 100, 30, family="binomial", sd_model_subject=0.3,
                         sd_model_question=0.6, sd_model_prompt=0.15, rng=12)
    fr = mixrank.build_frame(d, CROSSED)
    closed = native.fit_pairs(fr, [(0, 1)])[0]
    gen = general_only(fr, [(0, 1)])[0]
    assert closed.message == "closed form (balanced)"
    assert gen.criterion == pytest.approx(closed.criterion, abs=1e-6)
    assert gen.variance == pytest.approx(closed.variance, rel=1e-6)
    assert gen.df == pytest.approx(closed.df, rel=1e-4)
    miss = mixrank.simulate(2, 57, 100, 30, family="binomial", missing=0.2, rng=13)
    p = mixrank.fit(CROSSED, miss).pairs[0]
    assert p.converged and np.isfinite(p.df) and p.n > 100_000


@pytest.mark.parametrize("level", [0, 1, 1.5, "0.95", True])
def test_bad_level_is_a_clear_error(level):
    with pytest.raises(DesignError, match="is not a confidence level; expected a number strictly"):
        mixrank.fit("correct ~ model + (1|subject)", gauss(), level=level)
