"""Projected Newton (mixrank.engine.lmm.newton) against L-BFGS-B on random unbalanced designs.

Reference: the plain path, ``reml._minimise`` (L-BFGS-B with the analytic
gradient) from the same moment start and again from lme4's start
``psi = 1``, polished.  Newton must reach a criterion at least as low (up to
1e-8) with the same ``psi`` (to 1e-4 of the largest component, the scale
of the lme4 contract in tests/reference/tolerances.py), including designs
whose optimum puts a component at 0, and carry the KKT certificate.
"""

from __future__ import annotations

import numpy as np
import pytest

from mixrank.engine.control import Control
from mixrank.engine.lmm import reml
from mixrank.engine.lmm.newton import henderson_start, newton_bounded
from mixrank.engine.structure import build_structure, pair_sums


def _pair(seed: int, sds: tuple[float, float, float], missing: float):
    rng = np.random.default_rng(seed)
    n_sub, n_q, n_p = 15, 8, 12
    item = np.repeat(np.arange(n_sub * n_q), n_p)
    sub = item // n_q
    prompt = np.tile(np.arange(n_p), n_sub * n_q)
    keep = rng.random(item.size) >= missing
    codes = [sub[keep], item[keep], prompt[keep]]
    levels = [n_sub, n_sub * n_q, n_p]
    d = 0.05 + rng.normal(0, 1.0, keep.sum())
    for c, L, s in zip(codes, levels, sds):
        d += rng.normal(0, s, L)[c]
    st = build_structure(codes, levels, ["subject", "subject:question", "prompt"])
    return reml.make_objective(st, pair_sums(st, d))


CASES = [(seed, sds, missing) for seed in range(2)
         for sds, missing in [((0.4, 0.6, 0.2), 0.36), ((0.3, 0.5, 0.0), 0.2), ((0.0, 0.0, 0.3), 0.5)]]


@pytest.mark.parametrize("seed,sds,missing", CASES)
def test_newton_matches_lbfgs(seed, sds, missing):
    obj = _pair(seed, sds, missing)
    assert obj.analytic and obj.R == 3
    control = Control()
    x0 = reml.moment_start(obj)
    psi, crit, nfev, hit = newton_bounded(obj, x0)
    assert not hit and nfev < 40
    ref = min((reml._minimise(obj, start, control) for start in (x0, np.ones(3))),
              key=lambda r: r[1])
    ref = min(ref, reml._minimise(obj, ref[0], control), key=lambda r: r[1])
    assert crit <= ref[1] + 1e-8
    np.testing.assert_allclose(psi, ref[0], rtol=0, atol=1e-4 * max(1.0, float(ref[0].max())))
    conv = reml.check_convergence(obj, reml.Optimum(psi=psi, criterion=crit, nfev=nfev), control)
    assert conv.converged, conv.message


def test_fit_uses_newton_and_agrees_with_the_full_search():
    obj = _pair(7, (0.4, 0.6, 0.2), 0.36)
    st, ps = obj.st, obj.ps
    names = list(st.names)
    fast = reml.fit_reml(st, ps, names)
    full = reml.fit_reml(st, ps, names, control=Control(certify=False))
    assert fast.nfev < 40 and fast.converged
    assert fast.criterion <= full.criterion + 1e-8
    np.testing.assert_allclose(fast.variances, full.variances, rtol=1e-5)
    assert fast.df == pytest.approx(full.df, rel=1e-6)


def test_henderson_start_is_the_anova_solution_on_a_balanced_design():
    # balanced: Henderson's method 1 gives the ANOVA estimates, which are the REML
    # optimum when every component is positive (Searle, Casella & McCulloch 1992, §4.8)
    obj = _pair(11, (0.5, 0.7, 0.4), 0.0)
    start = henderson_start(obj)
    psi, crit, _, _ = newton_bounded(obj, reml.moment_start(obj))
    assert np.all(psi > 0)
    np.testing.assert_allclose(start, psi, rtol=1e-7)
    # unbalanced: a start closer to the optimum than the one-way moments (sampling
    # differences between the estimators remain: 20% on this small design)
    obj = _pair(12, (0.5, 0.7, 0.4), 0.36)
    psi = newton_bounded(obj, reml.moment_start(obj))[0]
    h, m = henderson_start(obj), reml.moment_start(obj)
    assert np.max(np.abs(h / psi - 1)) < 0.3
    assert np.linalg.norm(h - psi) < np.linalg.norm(m - psi)


def test_extreme_trial_step_is_no_descent_not_a_crash():
    """A tiny two-term design (found by the fuzz sweep) whose Newton trial step made the
    Schur complement numerically indefinite: the step is rejected (halved), not raised.
    lme4 itself stops on this model ("Downdated VtV is not positive definite")."""
    import warnings

    import pandas as pd

    import mixrank

    rows = [("m1", 0, 0, 0, 0), ("m1", 0, 0, 1, 0), ("m1", 0, 1, 1, 0), ("m1", 0, 2, 0, 1),
            ("m1", 0, 2, 1, 1), ("m1", 1, 0, 0, 0), ("m1", 1, 1, 1, 1), ("m1", 1, 2, 0, 1),
            ("m1", 1, 2, 1, 1), ("m1", 1, 3, 1, 1), ("m2", 0, 0, 0, 1), ("m2", 0, 0, 1, 1),
            ("m2", 0, 1, 0, 1), ("m2", 0, 2, 0, 0), ("m2", 0, 2, 1, 0), ("m2", 1, 1, 0, 1),
            ("m2", 1, 2, 0, 1), ("m2", 1, 3, 0, 1)]
    df = pd.DataFrame(rows, columns=["model", "subject", "question", "prompt", "correct"])
    df = df.astype({"subject": str, "question": str, "prompt": str, "correct": float})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("correct ~ model + (1|subject) + (1|subject:question)", df)
        scores = res.model_scores(scoring="plain").set_index("model")  # own cells
    means = df.groupby("model")["correct"].mean()
    np.testing.assert_allclose(scores["estimate"], means[scores.index], rtol=0, atol=1e-12)
    assert np.isfinite(scores["std_error"]).all() and (scores["std_error"] > 0).all()


def _one_term_pair(seed: int, sd: float, missing: float):
    """A one-term pair, ``(1|subject)``, with unequal level sizes."""
    rng = np.random.default_rng(100 + seed)
    sub = rng.integers(0, 12, 400)
    keep = rng.random(sub.size) >= missing
    sub = sub[keep]
    d = 0.1 + rng.normal(0, 1.0, sub.size) + rng.normal(0, sd, 12)[sub]
    st = build_structure([sub], [12], ["subject"])
    return reml.make_objective(st, pair_sums(st, d))


@pytest.mark.parametrize("seed,sd,missing", [(s, sd, m) for s in range(4)
                                             for sd, m in ((0.5, 0.0), (0.2, 0.3), (0.05, 0.5))])
def test_one_term_quadratic_stop_lands_on_the_tight_optimum(seed, sd, missing, monkeypatch):
    """The one-term search stops after a full step below QUADRATIC_STEP (relative); the point
    is the one the step-below-1e-12 rule reaches, to ~1e-10 relative (quadratic convergence)."""
    from mixrank.engine.lmm import newton

    obj = _one_term_pair(seed, sd, missing)
    x0 = float(reml.moment_start(obj)[0])
    fast = newton.newton_one_term(obj, x0)
    monkeypatch.setattr(newton, "QUADRATIC_STEP", 0.0)
    tight = newton.newton_one_term(_one_term_pair(seed, sd, missing), x0)
    assert fast is not None and tight is not None
    assert fast[2] <= tight[2]
    np.testing.assert_allclose(fast[0], tight[0], rtol=1e-9, atol=1e-14)
    assert fast[1] == pytest.approx(tight[1], rel=1e-14, abs=1e-12)


def test_one_term_last_evaluation_is_the_one_a_fresh_evaluation_gives():
    """The certificate, sigma, the estimates and the df reuse the search's last evaluation
    (kept on the pair's sums): it equals an evaluation from scratch."""
    from mixrank.engine.lmm.objective import core
    from mixrank.engine.lmm.reml_grad import dense_parts

    obj = _one_term_pair(1, 0.3, 0.2)
    fit = reml.fit_reml(obj.st, obj.ps, ["subject"])
    theta = np.asarray(fit.theta_block)
    assert obj.ps.memo["last"][1] == theta.tobytes()         # kept at the optimum
    kept = core(obj.st, obj.ps, theta)
    fresh_obj = _one_term_pair(1, 0.3, 0.2)
    (logdet, cAc, cAs, sAs), g = dense_parts(fresh_obj.st, fresh_obj.ps, theta, grad=True)
    assert "last" not in fresh_obj.ps.memo
    fresh = core(fresh_obj.st, fresh_obj.ps, theta)
    np.testing.assert_allclose(kept, fresh, rtol=1e-13)
    np.testing.assert_allclose(obj.ps.memo["last"][2][1][:, 0], np.asarray(g)[:, 0], rtol=1e-12)
