"""The small-problem shortcuts of a pair's fit equal what they replace.

``kkt_verdict`` runs on Python floats (a pair has a handful of variance
components), the Satterthwaite df inverts a one-term 2 x 2 Hessian in
closed form: each is checked against the numpy computation it replaced,
including NaN gradients, components on the boundary and singular matrices.
"""

from __future__ import annotations

import numpy as np
import pytest

from mixrank.engine.control import Control
from mixrank.engine.lmm.reml import kkt_verdict
from mixrank.engine.lmm.satterthwaite import _inverse


def _numpy_verdict(g, psi, crit, control):
    free = psi > 0
    kkt_ok = not bool(np.any(g[~free] < -control.kkt_tol * max(1.0, abs(crit))))
    gmax = float(np.max(np.abs(g[free]))) if free.any() else 0.0
    scale = max(1.0, 1.0 / max(float(np.min(psi[free])) if free.any() else 1.0, 1e-12))
    return kkt_ok, gmax, kkt_ok and gmax < control.gradient_tol * scale


@pytest.mark.parametrize("seed", range(40))
def test_kkt_verdict_equals_the_array_computation(seed):
    rng = np.random.default_rng(seed)
    R = int(rng.integers(1, 6))
    psi = np.where(rng.random(R) < 0.3, 0.0, rng.exponential(1.0, R) * 10.0 ** rng.integers(-8, 2, R))
    g = rng.normal(0, 1, R) * 10.0 ** rng.integers(-9, 1, R)
    if seed % 7 == 0:
        g[rng.integers(0, R)] = np.nan
    crit = float(rng.normal(0, 1e3))
    control = Control()
    got = kkt_verdict(g, psi, crit, control)
    kkt_ok, gmax, converged = _numpy_verdict(g, psi, crit, control)
    assert got.kkt_ok == kkt_ok and got.converged == converged
    assert (np.isnan(got.gradient) and np.isnan(gmax)) or got.gradient == gmax


@pytest.mark.parametrize("seed", range(20))
def test_two_by_two_inverse_equals_lapack(seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(0, 1, (2, 2)) * 10.0 ** rng.integers(-3, 4)
    H = A @ A.T + np.eye(2) * 10.0 ** rng.integers(-6, 1)
    np.testing.assert_allclose(_inverse(H), np.linalg.inv(H), rtol=1e-10,
                               atol=1e-12 * float(np.abs(np.linalg.inv(H)).max()))


def test_singular_and_larger_hessians_take_the_general_route():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(_inverse(singular), np.linalg.pinv(singular))
    H = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    np.testing.assert_allclose(_inverse(H), np.linalg.inv(H))
