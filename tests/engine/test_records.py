"""The engine's records are frozen: a FitResult cannot be changed through its pairs."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

import mixrank
from mixrank.engine.records import PairFit, RemlFit

FORMULA = "correct ~ model + (1|subject)"


@pytest.fixture(scope="module")
def fit():
    return mixrank.fit(FORMULA, mixrank.load_example())


def test_pair_fields_cannot_be_reassigned(fit):
    p = fit.pairs[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.estimate = 99.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        p.components["residual"] = 0.0  # type: ignore[index]
    assert fit.contrasts()["estimate"].iloc[0] == p.estimate


def test_pair_pickles_and_copies(fit):
    p = fit.pairs[0]
    for q in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p), copy.copy(p)):
        assert isinstance(q, PairFit) and q == p
        with pytest.raises(TypeError):
            q.components["residual"] = 0.0  # type: ignore[index]
    r = dataclasses.replace(p, estimate=0.0)
    assert r.estimate == 0.0 and dict(r.components) == dict(p.components)


def test_reml_fit_arrays_are_read_only_copies():
    v = np.array([1.0, 2.0])
    r = RemlFit(names=("subject", "residual"), variances=v, theta=np.array([0.7]), sigma=1.4,
                mu=0.1, var_mu=0.01, df=5.0, criterion=1.0, n=12, boundary=(), gradient=0.0,
                converged=True, message="ok", nfev=1, theta_block=np.array([0.7]))
    v[0] = 5.0                                   # the caller's array is not the record's
    assert r.variances[0] == 1.0
    for a in (r.variances, r.theta, r.theta_block):
        with pytest.raises(ValueError):
            a[0] = 0.0
