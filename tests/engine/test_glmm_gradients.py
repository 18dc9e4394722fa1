"""The exact gradients of the GLMM deviance (docs/glmm.md §3) against central differences."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mixrank.engine.glmm.optim import _start
from mixrank.engine.glmm.pirls import beta_gradient, pirls, theta_gradient_joint
from mixrank.engine.glmm.problem import build_problem
from mixrank.formula.glmm_terms import parse_glmm
from mixrank.frame.glmm import binomial_frame

CASES = [("nested", "correct ~ model + (1|subject) + (1|subject:question)"),
         ("crossed", "correct ~ model + (1|question) + (1|prompt) + (1|prompt:model)"),
         ("unbalanced", "correct ~ model + (1|subject:question) + (1|subject:model)"),
         ("ceiling", "correct ~ model + (1|question)")]


def _problem(case, formula):
    df = pd.read_csv(f"tests/reference/glmm_cases/{case}.csv.gz")
    gf = parse_glmm(formula)
    frame, _, _ = binomial_frame(gf, df)
    return build_problem(frame, gf)


def central_differences(f, x, h=1e-4):
    """The gradient of the scalar ``f`` at ``x`` by central differences with step ``h``."""
    out = np.empty(len(x))
    for r in range(len(x)):
        e = np.zeros(len(x))
        e[r] = h
        out[r] = (f(x + e) - f(x - e)) / (2 * h)
    return out


@pytest.mark.parametrize("case,formula", CASES)
def test_theta_gradient_joint(case, formula):
    prob = _problem(case, formula)
    beta, u = _start(prob)
    th = np.array([0.9, 0.4, 0.2])[: len(prob.levels)]
    m = pirls(prob, th, beta, u, joint=True)
    fd = central_differences(lambda t: pirls(prob, t, m.beta, m.u, joint=True).deviance, th)
    assert theta_gradient_joint(prob, m) == pytest.approx(fd, rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("case,formula", CASES)
def test_beta_gradient(case, formula):
    prob = _problem(case, formula)
    beta, u = _start(prob)
    th = np.array([0.8, 0.3, 0.5])[: len(prob.levels)]
    m = pirls(prob, th, beta, u, joint=False)
    fd = central_differences(lambda b: pirls(prob, th, b, m.u, joint=False).deviance, beta)
    assert beta_gradient(prob, m) == pytest.approx(fd, rel=1e-5, abs=1e-5)
