"""``fit(..., family="binomial", control=)``: GlmmControl's settings reach the optimiser and
its per-check actions (singular fit, convergence, few levels) ignore / warn / raise, as
Control's do for the linear engine.  The fitted numbers themselves are checked against glmer
in test_glmm_reference.py; here the default control must reproduce them exactly."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import mixrank
from mixrank import GlmmControl
from mixrank.engine.glmm.fit import GlmmConvergenceWarning
from mixrank.routes.binomial import UnitOfInferenceWarning

FU = "correct ~ model + (1|subject:question:prompt) + (1|subject:model)"


def example():
    return mixrank.load_example()


def fit(formula=FU, data=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnitOfInferenceWarning)
        return mixrank.fit(formula, example() if data is None else data, family="binomial",
                           **kw)


def no_signal(seed: int = 5) -> pd.DataFrame:
    # no item variation at all: with this seed the item variance is estimated at 0
    rng = np.random.default_rng(seed)
    rows = [(m, f"q{q}", int(rng.random() < expit(b)))
            for m, b in (("a", 0.0), ("b", 0.3), ("c", -0.2)) for q in range(300)]
    return pd.DataFrame(rows, columns=["model", "question", "correct"])


def test_default_control_reproduces_the_default_fit():
    a = fit(nagq=0)
    b = fit(nagq=0, control=GlmmControl())
    np.testing.assert_array_equal(a.fit.beta, b.fit.beta)
    np.testing.assert_array_equal(a.fit.theta, b.fit.theta)


def test_settings_reach_the_optimiser():
    base = fit(nagq=0)
    other = fit(nagq=0, control=GlmmControl(theta_start=0.3, em_steps=0, tol=1e-11))
    # another start and a tighter criterion reach the same optimum
    np.testing.assert_allclose(other.fit.beta, base.fit.beta, atol=1e-5)
    assert other.fit.deviance <= base.fit.deviance + 1e-7
    assert other.fit.nfev != base.fit.nfev


def test_convergence_actions():
    ctl = dict(max_iterations=1, em_steps=0)
    with pytest.raises(mixrank.ConvergenceError, match="did not meet its criterion"):
        fit(nagq=0, control=GlmmControl(convergence="error", **ctl))
    with pytest.warns(GlmmConvergenceWarning, match="check diagnostics"):
        res = fit(nagq=0, control=GlmmControl(**ctl))
    assert not res.diagnostics().converged.iloc[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", GlmmConvergenceWarning)
        fit(nagq=0, control=GlmmControl(convergence="ignore", **ctl))
    with pytest.raises(mixrank.ConvergenceError):
        fit(nagq=1, control=GlmmControl(convergence="error", laplace_max_iterations=1,
                                        laplace_tol=1e-30))


def test_singular_actions():
    d = no_signal()
    f = "correct ~ model + (1|question)"
    with pytest.warns(mixrank.SingularFitWarning, match="question"):
        fit(f, d, nagq=0)
    with pytest.raises(mixrank.DesignError, match="boundary \\(singular\\) fit: variance of "
                                                  "question"):
        fit(f, d, nagq=0, control=GlmmControl(singular="error"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", mixrank.SingularFitWarning)
        fit(f, d, nagq=0, control=GlmmControl(singular="ignore"))


def test_few_levels_actions():
    # 12 subjects behind (1|subject:model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", mixrank.SmallSampleWarning)
        fit(nagq=0)                                   # ignored by default
    with pytest.warns(mixrank.SmallSampleWarning, match=r"\(1\|subject:model\) has 12 level"):
        fit(nagq=0, control=GlmmControl(small_sample="warning", min_units=20))
    with pytest.raises(mixrank.DesignError, match="fewer than min_units=20"):
        fit(nagq=0, control=GlmmControl(small_sample="error", min_units=20))


def test_linear_control_carries_its_actions_only():
    with pytest.raises(mixrank.DesignError, match="fewer than min_units=20"):
        fit(nagq=0, control=mixrank.Control(small_sample="error", min_units=20))
    with pytest.raises(mixrank.DesignError, match=r"Control\(ftol=\.\.\.\) sets the linear"):
        fit(nagq=0, control=mixrank.Control(ftol=1e-8))
    with pytest.raises(mixrank.DesignError, match="expected mixrank.GlmmControl"):
        fit(nagq=0, control="tight")
    with pytest.raises(mixrank.DesignError, match="GlmmControl.* sets the binomial GLMM"):
        mixrank.fit("correct ~ model + (1|subject)", example(), control=GlmmControl())


@pytest.mark.parametrize("kw, match", [
    (dict(convergence="raise"), "convergence='raise'"),
    (dict(tol=0), "tol=0"),
    (dict(pirls_max_iterations=0), "pirls_max_iterations=0"),
    (dict(em_steps=-1), "em_steps=-1"),
    (dict(fd_step=0.5), "fd_step=0.5"),
    (dict(theta_start=True), "theta_start=True"),
    (dict(theta_start=float("inf")), "theta_start=inf"),
    (dict(tol=float("nan")), "tol=nan"),
])
def test_bad_settings_are_refused(kw, match):
    with pytest.raises(mixrank.DesignError, match=match.replace("(", r"\(")):
        GlmmControl(**kw)
