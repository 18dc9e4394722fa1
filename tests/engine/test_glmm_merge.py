"""Merging exchangeable levels of the first random term (docs/glmm.md §3) is exact.

The merged problem (one representative per group of identical levels, counts
multiplied by the group size) must give the unmerged problem's Laplace
deviance, conditional modes, gradients and fixed-effect covariance at the
same parameters: checked here against the unmerged computation, which is
itself checked against glmer (test_glmm_reference) and finite differences
(test_glmm_gradients).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mixrank.engine.glmm.optim import _start
from mixrank.engine.glmm.pirls import beta_gradient, pirls, theta_gradient_joint
from mixrank.engine.glmm.problem import build_problem, merge_exchangeable
from mixrank.formula.glmm_terms import parse_glmm
from mixrank.frame.glmm import binomial_frame
from tests.engine.test_glmm_reference import CASES as REF_CASES
from tests.reference.cases import case_frame

CASES = [("nested", "correct ~ model + (1|subject) + (1|subject:question)"),
         ("ceiling", "correct ~ model + (1|question)"),
         ("jailbreakbench", "correct ~ model + (1|question) + (1|prompt) + (1|prompt:model)")]


def _problems(case, formula, shared_data):
    if case == "jailbreakbench":   # the reference case: crossed, with a model-by-unit term
        ref = REF_CASES[case]
        df = case_frame(ref, shared_data, "glmm_cases")
        assert ref["formula"] == formula
    else:
        df = pd.read_csv(f"tests/reference/glmm_cases/{case}.csv.gz")
    gf = parse_glmm(formula)
    frame, _, _ = binomial_frame(gf, df)
    prob = build_problem(frame, gf)
    return prob, merge_exchangeable(prob)


@pytest.mark.parametrize("case,formula", CASES)
def test_merged_problem_is_exact(case, formula, shared_data):
    prob, merged = _problems(case, formula, shared_data)
    assert merged.levels[0] < prob.levels[0]            # something was merged
    assert merged.total_levels()[0] == prob.levels[0]
    assert np.sum(merged.n) == np.sum(prob.n) and np.sum(merged.k) == np.sum(prob.k)
    beta, _ = _start(prob)
    th = np.array([0.9, 0.4, 0.2])[: len(prob.levels)]
    for joint in (True, False):
        full = pirls(prob, th, beta, np.zeros(sum(prob.levels)), joint=joint)
        red = pirls(merged, th, beta, np.zeros(sum(merged.levels)), joint=joint)
        assert red.deviance == pytest.approx(full.deviance, rel=1e-12, abs=1e-8)
        np.testing.assert_allclose(merged.expand_u(red.u), full.u, atol=1e-8)
        np.testing.assert_allclose(red.beta, full.beta, atol=1e-9)
        if joint:
            np.testing.assert_allclose(theta_gradient_joint(merged, red),
                                       theta_gradient_joint(prob, full), rtol=1e-7, atol=1e-7)
            np.testing.assert_allclose(red.system.vcov_beta(), full.system.vcov_beta(),
                                       rtol=1e-9, atol=1e-12)
        else:
            np.testing.assert_allclose(beta_gradient(merged, red), beta_gradient(prob, full),
                                       rtol=1e-7, atol=1e-7)


def test_distinct_levels_are_not_merged():
    df = pd.read_csv("tests/reference/glmm_cases/unbalanced.csv.gz")
    gf = parse_glmm("correct ~ model + (1|subject:question) + (1|subject:model)")
    frame, _, _ = binomial_frame(gf, df)
    prob = build_problem(frame, gf)
    assert merge_exchangeable(prob) is prob


def test_model_by_unit_first_term_merges_exactly():
    """A model-by-unit first term ((1|subject:model), one level per subject and model):
    levels with the same model and the same 0/1 answers per question merge, exactly."""
    rng = np.random.default_rng(5)
    S, Q, M = 300, 3, 3
    b = rng.normal(0, 1, (S, M))
    s, q, m = np.meshgrid(np.arange(S), np.arange(Q), np.arange(M), indexing="ij")
    y = rng.random(s.shape) < 1 / (1 + np.exp(-(0.5 + b[s, m])))
    df = pd.DataFrame({"model": [f"m{j}" for j in m.ravel()], "subject": s.ravel(),
                       "question": q.ravel(), "correct": y.ravel().astype(int)})
    gf = parse_glmm("correct ~ model + (1|subject:model) + (1|question)")
    frame, _, _ = binomial_frame(gf, df)
    prob = build_problem(frame, gf)
    merged = merge_exchangeable(prob)
    assert prob.names[0] == "subject:model" and merged.levels[0] < prob.levels[0] / 10
    beta, _ = _start(prob)
    th = np.array([0.8, 0.4])
    full = pirls(prob, th, beta, np.zeros(sum(prob.levels)), joint=True)
    red = pirls(merged, th, beta, np.zeros(sum(merged.levels)), joint=True)
    assert red.deviance == pytest.approx(full.deviance, rel=1e-12, abs=1e-8)
    np.testing.assert_allclose(merged.expand_u(red.u), full.u, atol=1e-8)
    np.testing.assert_allclose(theta_gradient_joint(merged, red), theta_gradient_joint(prob, full),
                               rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("case,formula", CASES)
def test_one_pass_assembly_equals_per_pattern_assembly(case, formula, shared_data):
    """The PIRLS matrix assembled by one bincount over flat indices (Problem.plan) equals the
    per-pattern assembly, merged or not, with cells or without."""
    from mixrank.engine.glmm.system import assemble

    rng = np.random.default_rng(4)
    for p in _problems(case, formula, shared_data):
        theta = rng.uniform(0.2, 1.5, len(p.levels))
        w = rng.uniform(0.01, 2.0, p.n_obs)
        assert p.plan() is not None
        fast = assemble(p, theta, w)
        p._cache["plan"] = None                      # force the per-pattern path
        slow = assemble(p, theta, w)
        for a, b in [(fast.a0, slow.a0), (fast.Bs, slow.Bs), (fast.L, slow.L)]:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
