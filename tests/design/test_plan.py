"""Design planning from fitted components: mixrank.design.plan (docs/methods.md §6).

References: the balanced-design variance of a mean (each component divided by
its number of levels; e.g. Raudenbush 1997, Psychological Methods 2(2)), which
at the fitted balanced design must reproduce the fitted Var(mu_hat) exactly
(the engine is validated against lme4 in tests/engine); minimal designs are
checked by exhaustive search over whole numbers.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import mixrank
from mixrank.design.plan import plan_divisors, plan_of
from mixrank.errors import DesignError, MixrankWarning, SingularFitWarning

K = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) ** 2
FULL = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"


def _sim(models=2, subjects=8, questions=10, prompts=4, rng=1, **sd):
    kw = dict(sd_model_subject=0.3, sd_model_question=0.4, sd_model_prompt=0.25,
              sd_residual=0.5)
    kw.update(sd)
    return mixrank.simulate(models, subjects, questions, prompts, family="gaussian", rng=rng,
                            **kw)


@pytest.fixture(scope="module")
def full_fit():
    return mixrank.fit(FULL, _sim())


def _var(comps, T, Q, V):
    """Independent restatement of the full-formula balanced variance."""
    return (comps["subject"] / T + comps["subject:question"] / (T * Q) + comps["prompt"] / V
            + comps["residual"] / (T * Q * V))


def test_current_design_reproduces_fitted_variance(full_fit):
    p = full_fit.pairs[0]
    assert not p.boundary                                    # interior components
    tab = full_fit.plan(0.3)
    cur = tab[tab["kind"] == "current"].iloc[0]
    assert (cur["subjects"], cur["questions"], cur["prompts"], cur["n"]) == (8, 10, 4, 320)
    assert cur["variance"] == pytest.approx(p.variance, rel=1e-10)
    assert cur["std_error"] == pytest.approx(p.std_error, rel=1e-10)
    assert cur["variance"] == pytest.approx(_var(p.components, 8, 10, 4), rel=1e-12)
    meta = tab.attrs["mixrank"]
    assert meta["divisors"] == {"subject": "T", "prompt": "V", "subject:question": "T*Q",
                                "residual": "T*Q*V"}
    assert meta["components"] == p.components
    assert meta["needed_std_error"] == pytest.approx(0.3 / math.sqrt(K), rel=1e-12)


@pytest.mark.parametrize("formula", [
    "correct ~ model + (1|subject)",
    "correct ~ model + (1|subject) + (1|prompt)",
    "correct ~ model + (1|prompt)",
    "correct ~ model",
])
def test_reduced_formulas_reproduce_fitted_variance(formula):
    res = mixrank.fit(formula, _sim(subjects=10, prompts=5, rng=7, sd_model_subject=0.5))
    p = res.pairs[0]
    assert not p.boundary
    cur = res.plan(0.2).query("kind == 'current'").iloc[0]
    assert cur["variance"] == pytest.approx(p.variance, rel=1e-10)


def test_divisors_follow_the_factors_of_each_term():
    df = _sim()
    res = mixrank.fit("correct ~ model + (1|question) + (1|subject:prompt)", df)
    # questions are nested in subjects (labels unique per subject): T*Q levels
    assert plan_divisors(res) == {"question": ("subject", "question"),
                                  "subject:prompt": ("subject", "prompt"),
                                  "residual": ("subject", "question", "prompt")}
    crossed = df.assign(question=df["question"].str.split("_").str[1])   # q01 in every subject
    res2 = mixrank.fit("correct ~ model + (1|subject) + (1|question)", crossed,
                       pair_by=["subject", "question", "prompt"])
    assert plan_divisors(res2)["question"] == ("question",)
    nopr = df[df["prompt"] == "p1"].drop(columns="prompt")
    res3 = mixrank.fit("correct ~ model + (1|subject)", nopr)
    assert plan_divisors(res3) == {"subject": ("subject",), "residual": ("subject", "question")}


def test_minimal_designs_by_exhaustive_search(full_fit):
    comps = full_fit.pairs[0].components
    delta = 0.25
    v_need = delta**2 / K
    tab = full_fit.plan(delta, subjects=10, questions=12, prompts=6)
    design = tab[tab["kind"] == "design"].iloc[0]
    assert design["variance"] == pytest.approx(_var(comps, 10, 12, 6), rel=1e-12)
    mins = tab[tab["kind"] == "minimal"].set_index("vary")
    base = dict(T=10, Q=12, V=6)
    for vary, key in (("subjects", "T"), ("questions", "Q"), ("prompts", "V")):
        ok = [x for x in range(1, 5000) if _var(comps, **{**base, key: x}) <= v_need]
        row = mins.loc[vary]
        if ok:
            assert row[vary] == ok[0] and row["resolved"] and not row["unreachable"]
            assert row["q"] >= 1
        else:
            assert row["unreachable"] and np.isnan(row[vary])
        # limit: the SE without the varied factor's terms
        drop = {"T": ("subject", "subject:question", "residual"),
                "Q": ("subject:question", "residual"), "V": ("prompt", "residual")}[key]
        rest = {"T": comps["prompt"] / 6,
                "Q": comps["subject"] / 10 + comps["prompt"] / 6,
                "V": comps["subject"] / 10 + comps["subject:question"] / 120}[key]
        assert set(drop) <= set(comps)
        assert row["limit_std_error"] == pytest.approx(math.sqrt(rest), rel=1e-12)
    grid = tab[(tab["kind"] == "grid") & (tab["vary"] == "subjects")]
    assert grid["subjects"].tolist() == [5, 10, 20, 40, 80]
    np.testing.assert_allclose(grid["variance"], [_var(comps, t, 12, 6) for t in grid["subjects"]],
                               rtol=1e-12)
    np.testing.assert_allclose(tab["mde"], math.sqrt(K) * tab["std_error"], rtol=1e-12)
    fin = tab["variance"].notna()                           # unreachable rows: no variance
    np.testing.assert_allclose(tab.loc[fin, "q"], v_need / tab.loc[fin, "variance"], rtol=1e-12)
    np.testing.assert_allclose(tab.loc[~fin, "q"], v_need / tab.loc[~fin, "limit_std_error"] ** 2,
                               rtol=1e-12)


def test_prompts_cannot_fix_a_subject_dominated_variance():
    df = _sim(subjects=5, questions=10, prompts=4, rng=3, sd_model_subject=1.0,
              sd_model_prompt=0.05, sd_model_question=0.2, sd_residual=0.2)
    res = mixrank.fit(FULL, df)
    comps = res.pairs[0].components
    delta = 0.6
    assert comps["subject"] / 5 > delta**2 / K                # asymptote above the need
    tab = res.plan(delta)
    meta = tab.attrs["mixrank"]
    assert meta["unreachable"]["prompts"] and meta["unreachable"]["questions"]
    assert meta["minimal"]["prompts"] is None
    assert not meta["unreachable"]["subjects"] and meta["minimal"]["subjects"] > 5
    pr = tab[tab["vary"] == "prompts"]
    assert pr["unreachable"].all() and not pr["resolved"].any()
    assert (pr["limit_std_error"] > meta["needed_std_error"]).all()


def test_roles_map_other_column_names(full_fit):
    df = _sim().rename(columns={"subject": "task", "prompt": "template"})
    formula = "correct ~ model + (1|task) + (1|task:question) + (1|template)"
    with pytest.raises(DesignError, match=r"random term \(1\|task\).*roles="):
        mixrank.fit(formula, df, pair_by=["task", "question", "template"]).plan(0.3)
    res = mixrank.fit(formula, df, pair_by=["task", "question", "template"])
    tab = res.plan(0.3, roles={"task": "subject", "template": "prompt"})
    ref = full_fit.plan(0.3)
    np.testing.assert_allclose(tab["variance"].dropna(), ref["variance"].dropna(), rtol=1e-10)
    assert tab[["subjects", "questions", "prompts"]].equals(ref[["subjects", "questions", "prompts"]])


def test_default_pair_is_the_median_variance_pair():
    df = _sim(models=4, rng=5)
    res = mixrank.fit(FULL, df)
    var = sorted((p.variance, p.model_a, p.model_b) for p in res.pairs)
    med = var[(len(var) - 1) // 2]
    meta = res.plan(0.3).attrs["mixrank"]
    assert (meta["model_a"], meta["model_b"]) == med[1:]
    other = res.plan(0.3, pair=(var[0][2], var[0][1])).attrs["mixrank"]
    assert (other["model_a"], other["model_b"]) == var[0][1:]
    assert other["pair_choice"] == "given"


def test_single_level_factor_is_not_planned_unless_asked():
    df = _sim(prompts=1, rng=2)
    res = mixrank.fit("correct ~ model + (1|subject)", df)
    tab = res.plan(0.3)
    assert "prompts" not in set(tab["vary"])
    with pytest.warns(MixrankWarning, match="single prompt level"):
        tab2 = res.plan(0.3, prompts=4)
    assert "prompts" in set(tab2["vary"])


@pytest.mark.parametrize("kwargs, match", [
    (dict(delta=0.0), r"non-zero"),
    (dict(delta=float("nan")), r"finite"),
    (dict(delta=[0.1, 0.2]), r"single number"),
    (dict(delta=0.1, subjects=0), r"subjects must be a whole number >= 1 \(the interval \[1, inf\)\)"),
    (dict(delta=0.1, questions=2.5), r"questions must be a whole number >= 1"),
    (dict(delta=0.1, prompts=True), r"prompts must be a whole number >= 1"),
    (dict(delta=0.1, alpha=1.0), r"alpha.*\(0, 1\)"),
    (dict(delta=0.1, power=0.02), r"power.*\(alpha, 1\)"),
    (dict(delta=0.1, pair=("m01", "m09")), r"not fitted"),
    (dict(delta=0.1, pair="m01"), r"pair must be \(model_a, model_b\)"),
    (dict(delta=0.1, grid=[1, -2]), r"grid must be"),
    (dict(delta=0.1, roles={"subject": "unit"}), r"expected one of \['subject', 'question', 'prompt'\]"),
])
def test_bad_arguments(full_fit, kwargs, match):
    delta = kwargs.pop("delta")
    with pytest.raises(DesignError, match=match):
        plan_of(full_fit, delta, **kwargs)


def test_bad_fits():
    df = _sim()
    with pytest.raises(DesignError, match="FitResult"):
        plan_of(df, 0.1)
    agg = mixrank.fit("correct ~ model + (1|subject)", df, method="aggregate")
    with pytest.raises(DesignError, match="method='reml'"):
        agg.plan(0.1)
    nopr = df[df["prompt"] == "p1"].drop(columns="prompt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        res = mixrank.fit("correct ~ model + (1|subject)", nopr)
    with pytest.raises(DesignError, match="no prompt factor"):
        res.plan(0.1, prompts=3)
    extra = df.assign(rater=np.where(df["prompt"].isin(["p1", "p2"]), "r1", "r2"))
    res2 = mixrank.fit("correct ~ model + (1|subject)", extra,
                       pair_by=["subject", "question", "prompt", "rater"], replicate=None)
    with pytest.raises(DesignError, match="pairing key 'rater'.*roles="):
        res2.plan(0.1)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 5000), delta=st.floats(0.05, 1.5),
       T=st.integers(1, 40), Q=st.integers(1, 40), V=st.integers(1, 10),
       sd_subject=st.sampled_from([0.0, 0.3, 1.0]))
def test_property_minimal_is_the_smallest_whole_number(seed, delta, T, Q, V, sd_subject):
    df = _sim(subjects=6, questions=5, prompts=3, rng=seed, sd_model_subject=sd_subject)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        res = mixrank.fit(FULL, df)
    tab = res.plan(delta, subjects=T, questions=Q, prompts=V)
    meta = tab.attrs["mixrank"]
    need = meta["needed_std_error"]
    for vary, best in meta["minimal"].items():
        row = tab[(tab["kind"] == "minimal") & (tab["vary"] == vary)].iloc[0]
        grid = tab[(tab["kind"] == "grid") & (tab["vary"] == vary)]
        # more levels never increase the variance; the limit bounds the SE from below
        assert np.all(np.diff(grid["variance"].to_numpy()) <= 1e-15)
        assert np.all(grid["std_error"] >= row["limit_std_error"] * (1 - 1e-12))
        if best is None:
            assert row["unreachable"] and row["limit_std_error"] >= need
            assert not grid["resolved"].any()
            continue
        assert row["resolved"] and row["std_error"] <= need * (1 + 1e-12)
        if best > 1:
            below = res.plan(delta, **{**meta["design"], vary: best - 1})
            assert not below.query("kind in ['design', 'current']")["resolved"].iloc[-1]


@pytest.mark.parametrize("delta", [1e-12, 1e-300])
def test_tiny_delta_is_bounded_and_says_unreachable(full_fit, delta):
    """A hang: the minimal count was searched by counting down from ~1e23 one at a time."""
    tab = full_fit.plan(delta)
    minimal = tab[tab.kind == "minimal"]
    assert minimal.unreachable.all() and not minimal.resolved.any()
    assert all(v is None for v in tab.attrs["mixrank"]["minimal"].values())


def test_huge_score_scale_is_bounded():
    d = mixrank.load_example().assign(correct=lambda x: x.correct * 1e12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("correct ~ model + (1|subject)", d)
    tab = res.plan(0.05)
    assert tab[tab.kind == "minimal"].unreachable.all()


@given(st.floats(0.5, 1e18), st.integers(1, 10**6))
@settings(max_examples=200, deadline=None)
def test_smallest_count_is_the_exact_threshold(start, true):
    from mixrank.design.plan import smallest_count

    assert smallest_count(lambda x: x >= true, start) == true
    assert smallest_count(lambda x: False, start) is None
