"""Exact second derivatives of the dense-mode REML criterion (mixrank.engine.lmm.reml_hess).

Reference: central differences of the analytic gradient
(:func:`mixrank.engine.lmm.reml_grad.dense_parts`, itself checked against finite
differences of the criterion in test_reml_grad.py) and, for the Hessian of
the unprofiled deviance, :func:`mixrank.engine.lmm.satterthwaite.gradient_hessian`
(central differences of :meth:`Objective.full_gradient`).  One-sided
differences at the boundary psi_r = 0 are first order, hence the looser band.
"""

from __future__ import annotations

import numpy as np
import pytest

from mixrank.engine.lmm.objective import Objective, deviance_and_gradient
from mixrank.engine.lmm.reml_grad import dense_parts
from mixrank.engine.lmm.reml_hess import deviance_hessian, profiled_derivatives
from mixrank.engine.lmm.satterthwaite import gradient_hessian

from .test_reml_grad import _case

TOL = {"interior": 1e-7, "boundary": 1e-4}     # relative to max(1, max |Hessian|)


def _points(R: int) -> list[tuple[np.ndarray, str]]:
    pts = [(np.full(R, 0.3), "interior"), (np.random.default_rng(1).uniform(0.05, 3.0, R), "interior"),
           (np.r_[0.0, np.full(R - 1, 0.5)], "boundary")]
    return pts + ([(np.r_[0.5, np.zeros(R - 1)], "boundary")] if R > 1 else [])


@pytest.mark.parametrize("kind", ["grouped", "ungrouped", "single"])
def test_hessian_of_the_forms_matches_differences_of_the_gradient(kind):
    st, ps = _case(kind)
    R = len(st.levels)
    for psi, where in _points(R):
        f, g, H = profiled_derivatives(st, ps, psi)
        f0, g0 = deviance_and_gradient(st, ps, psi)
        assert f == pytest.approx(f0, rel=1e-13)
        np.testing.assert_allclose(g, g0, rtol=0, atol=1e-10 * max(1.0, np.abs(g0).max()))
        want = np.empty((R, R))
        for i in range(R):
            h = 1e-6
            up, dn = psi.copy(), psi.copy()
            up[i] += h
            dn[i] = max(psi[i] - h, 0.0)
            want[:, i] = (deviance_and_gradient(st, ps, up)[1]
                          - deviance_and_gradient(st, ps, dn)[1]) / (up[i] - dn[i])
        np.testing.assert_allclose(H, want, rtol=0, atol=TOL[where] * max(1.0, np.abs(want).max()))
        assert np.allclose(H, H.T)
        vals = dense_parts(st, ps, np.sqrt(psi))[0]
        assert np.isfinite(vals).all()


@pytest.mark.parametrize("kind", ["grouped", "ungrouped", "single"])
def test_deviance_hessian_matches_the_finite_difference_one(kind):
    st, ps = _case(kind)
    obj = Objective(st, ps)
    R = len(st.levels)
    for psi, _ in _points(R):
        x = np.append(np.sqrt(psi), 0.9)
        H, g = deviance_hessian(st, ps, x[:-1], 0.9)
        want = gradient_hessian(obj, x)
        np.testing.assert_allclose(H, want, rtol=0, atol=1e-7 * np.abs(want).max())
        _, rx2, d_rx2 = obj.full_gradient(x)
        np.testing.assert_allclose(g, np.append(-0.81 * d_rx2 / rx2 ** 2, 1.8 / rx2), rtol=1e-12)
