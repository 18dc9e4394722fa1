"""Binomial GLMM vs lme4::glmer on the reference designs (tests/reference/glmer.R).

Each case of ``tests/reference/glmer.json`` is fitted by
``mixrank.fit(formula, data, family="binomial", nagq=...)`` with the formula
exactly as glmer received it and compared with glmer's tightly converged
optimum (``tight``); tolerances in ``tests/reference/tolerances.py``
(``GLMER``).  The deviance is also compared with glmer's default-control fit
(what a user gets), which mixrank must match or beat.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import mixrank
from tests.reference.cases import case_frame
from tests.reference.tolerances import GLMER

REF = Path(__file__).resolve().parents[1] / "reference"
DATA = json.loads((REF / "glmer.json").read_text())
CASES = DATA["cases"]
_FITS: dict = {}


def _fit(name: str, nagq: int, shared_data):
    key = (name, nagq)
    if key not in _FITS:
        case = CASES[name]
        opts = case.get("options") or {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.MixrankWarning)
            _FITS[key] = mixrank.fit(case["formula"], case_frame(case, shared_data, "glmm_cases"),
                                     family="binomial", nagq=nagq, **opts)
    return _FITS[key]


# (case, nagq, quantity) -> reason with the measured discrepancy.  Both are
# cases where mixrank's deviance is at least as low as glmer's (see
# test_deviance_not_worse and test_glmer_deviance_inexact), i.e. glmer's
# optimum or its finite-difference Hessian is the less accurate side.
KNOWN = {
    ("jailbreakbench", 1, "fixef"): (
        "flat Laplace surface: a fixed effect differs by 4.0e-4 while the deviances differ by "
        "1e-7 (glmer's own devfun with tolPwrss = 1e-13 gives 1051.8922002 at mixrank's "
        "parameters, 1051.8922003 at glmer's); SE 3.1e-3 relative"),
    ("chembench4", 1, "fixef"): (
        "glmer's deviance evaluations carry PIRLS error: 2.6e-4 above the exact Laplace "
        "deviance at its own parameters (test_glmer_deviance_inexact), so its finite-difference "
        "Hessian gives SEs 2.1e-3 relative away from mixrank's; fixed effects agree to 1.2e-5"),
}


def _params():
    out = []
    for c in CASES:
        for q in (1, 0):
            reason = KNOWN.get((c, q, "fixef"))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(c, q, marks=marks, id=f"{c}-{q}"))
    return out


PARAMS = [(c, q) for c in CASES for q in (1, 0)]


def test_reference_provenance():
    assert DATA["generated_by"] == "tests/reference/glmer.R"
    assert DATA["lme4_version"].startswith("1.1")
    assert {"nested", "crossed", "unbalanced", "kofn", "ceiling"} <= set(CASES)
    assert any(c["source"] == "shared" for c in CASES.values())


@pytest.mark.parametrize("name,nagq", _params())
def test_fixed_effects_and_std_errors(name, nagq, shared_data):
    ref = CASES[name]["fits"][f"nagq{nagq}"]["tight"]
    fe = _fit(name, nagq, shared_data).fixed_effects()
    assert fe["term"].tolist() == list(ref["fixef"])
    est = np.array(list(ref["fixef"].values()))
    se = np.array(list(ref["std_error"].values()))
    assert np.max(np.abs(fe["estimate"].to_numpy() - est)) <= GLMER["fixef_abs"]
    assert np.max(np.abs(fe["std_error"].to_numpy() / se - 1)) <= GLMER["std_error_rel"]


@pytest.mark.parametrize("name,nagq", PARAMS)
def test_variance_components(name, nagq, shared_data):
    ref = CASES[name]["fits"][f"nagq{nagq}"]["tight"]["components"]
    vc = _fit(name, nagq, shared_data).variance_components().set_index("group")["variance"]
    assert set(vc.index) == set(ref)
    for g, v in ref.items():
        if v < GLMER["variance_abs"]:
            assert vc[g] <= GLMER["variance_abs"] * 10, g
        else:
            assert abs(vc[g] / v - 1) <= GLMER["variance_rel"], (g, vc[g], v)


@pytest.mark.parametrize("name,nagq", PARAMS)
def test_deviance_not_worse(name, nagq, shared_data):
    fits = CASES[name]["fits"][f"nagq{nagq}"]
    d = _fit(name, nagq, shared_data).diagnostics().iloc[0]
    assert d["deviance"] <= fits["tight"]["deviance"] + GLMER["deviance_excess"]
    assert d["deviance"] <= fits["default"]["deviance"] + GLMER["deviance_excess"]
    assert d["nobs"] == fits["tight"]["nobs"]
    assert d["aic"] == pytest.approx(fits["tight"]["aic"], abs=1e-3)
    assert d["bic"] == pytest.approx(fits["tight"]["bic"], abs=1e-3)


def test_glmer_deviance_inexact(shared_data):
    """glmer's reported deviance on chembench4 (nAGQ = 1) exceeds the exact Laplace deviance
    at glmer's own parameters: a brute-force dense evaluation (full q x q matrix, Newton to
    machine precision) agrees with mixrank's evaluation, not with glmer's number."""
    import scipy.sparse as sp

    from mixrank.engine.glmm.pirls import pirls
    from mixrank.engine.glmm.problem import build_problem

    ref = CASES["chembench4"]["fits"]["nagq1"]["tight"]
    res = _fit("chembench4", 1, shared_data)
    prob = build_problem(res.frame, res.formula)
    th = np.array([ref["theta"][f"{t}.(Intercept)"] for t in prob.names])
    beta = np.array(list(ref["fixef"].values()))
    beta[1:] += beta[0]
    ours = pirls(prob, th, beta, np.zeros(sum(prob.levels)), joint=False).deviance
    n, q = prob.n_obs, sum(prob.levels)
    cols = np.concatenate([prob.codes[0], prob.codes[1] + prob.levels[0]])
    ZL = sp.csr_matrix((np.repeat(th, n), (np.tile(np.arange(n), 2), cols)), shape=(n, q))
    u = np.zeros(q)
    for _ in range(30):
        eta = beta[prob.model] + ZL @ u
        mu = 1 / (1 + np.exp(-eta))
        A = (ZL.T @ sp.diags(prob.n * mu * (1 - mu)) @ ZL).toarray() + np.eye(q)
        u = u + np.linalg.solve(A, ZL.T @ (prob.k - prob.n * mu) - u)
    eta = beta[prob.model] + ZL @ u
    mu = 1 / (1 + np.exp(-eta))
    A = (ZL.T @ sp.diags(prob.n * mu * (1 - mu)) @ ZL).toarray() + np.eye(q)
    exact = (-2 * np.sum(prob.k * eta - prob.n * np.logaddexp(0, eta)) + u @ u
             + np.linalg.slogdet(A)[1])
    assert abs(ours - exact) < 1e-7
    assert ref["deviance"] - exact > 1e-4          # glmer's number is 2.6e-4 too high
