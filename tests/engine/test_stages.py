"""The engine's public stages, the Control object and the fitter registry.

References: exact identities (balanced one-way ANOVA = REML when the
estimate is interior; the closed-form balanced df = Satterthwaite's at the
REML optimum) and the definitions of the stages (criterion at the optimum
<= criterion anywhere evaluated; KKT conditions).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import mixrank
from mixrank import (
    Control,
    ConvergenceError,
    ConvergenceWarning,
    DesignError,
    SmallSampleWarning,
    WeakDesignWarning,
)
from mixrank.engine.lmm import native, reml
from mixrank.engine.lmm.objective import make_objective
from mixrank.engine.lmm.satterthwaite import satterthwaite
from mixrank.engine.structure import build_structure, pair_sums
from mixrank.errors import MixrankWarning, SingularFitWarning
from mixrank.fit import ENGINES, FAMILIES

CROSSED = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"


def gauss(models=2, subjects=8, questions=10, prompts=4, rng=1, **kw):
    base = dict(family="gaussian", sd_residual=1.0, sd_model_subject=0.6,
                sd_model_question=0.7, sd_model_prompt=0.4)
    base.update(kw)
    return mixrank.simulate(models, subjects, questions, prompts, rng=rng, **base)


def one_way(groups=12, per=9, sd=0.8, seed=3):
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(groups), per)
    d = 0.2 + rng.normal(0, sd, groups)[codes] + rng.normal(0, 1, codes.size)
    st = build_structure([codes], [groups], ["g"])
    return st, pair_sums(st, d), d, codes


def test_balanced_one_way_optimum_is_the_anova_estimate():
    # Balanced one-way: REML = ANOVA (Searle, Casella & McCulloch 1992, §4.7) when interior.
    groups, per = 12, 9
    st, ps, d, codes = one_way(groups, per)
    means = np.bincount(codes, weights=d) / per
    msb = per * np.sum((means - d.mean()) ** 2) / (groups - 1)
    msw = np.sum((d - means[codes]) ** 2) / (groups * (per - 1))
    anova_psi = (msb - msw) / per / msw
    obj = make_objective(st, ps)
    opt_ = reml.optimise(obj)
    assert anova_psi > 0
    assert opt_.psi[0] == pytest.approx(anova_psi, rel=1e-6)
    start = reml.moment_start(obj)
    assert opt_.criterion <= obj.deviance(start) + 1e-12
    for probe in (0.0, 0.5 * anova_psi, 2.0 * anova_psi):
        assert opt_.criterion <= obj.deviance(np.array([probe])) + 1e-12


def test_check_convergence_flags_a_point_that_is_not_optimal():
    st, ps, _, _ = one_way()
    obj = make_objective(st, ps)
    opt_ = reml.optimise(obj)
    assert reml.check_convergence(obj, opt_).converged
    off = reml.Optimum(psi=opt_.psi * 3, criterion=obj.deviance(opt_.psi * 3), nfev=0)
    conv = reml.check_convergence(obj, off)
    assert not conv.converged and "gradient" in conv.message
    # a component held at 0 where moving off zero lowers the criterion: KKT violated
    zero = reml.Optimum(psi=np.zeros(1), criterion=obj.deviance(np.zeros(1)), nfev=0)
    conv0 = reml.check_convergence(obj, zero)
    assert not conv0.kkt_ok and not conv0.converged and "KKT" in conv0.message


def test_package_and_satterthwaite_match_the_balanced_closed_form():
    fr = mixrank.build_frame(gauss(rng=11), CROSSED)
    closed = native.fit_pairs(fr, [(0, 1)])[0]
    assert closed.message == "closed form (balanced)"
    names = list(fr.spec.term_names)
    codes = [fr.term_codes[t] for t in names]
    st = build_structure(codes, [fr.term_levels[t] for t in names], names)
    ps = pair_sums(st, fr.scores[:, 0] - fr.scores[:, 1])
    obj = make_objective(st, ps)
    opt_ = reml.optimise(obj)
    conv = reml.check_convergence(obj, opt_)
    theta = np.sqrt(opt_.psi)
    sigma = np.sqrt(obj.core(theta)[2] / (obj.n - 1))
    df, grad, cov = satterthwaite(obj, theta, sigma)
    assert df == pytest.approx(closed.df, rel=1e-4)
    assert cov.shape == (len(names) + 1,) * 2 and grad.shape == (len(names) + 1,)
    r = reml.package(obj, opt_, conv, names, df)
    assert r.converged and r.criterion == pytest.approx(closed.criterion, abs=1e-7)
    assert r.var_mu == pytest.approx(closed.variance, rel=1e-6)
    for name, v in zip(r.names, r.variances):
        assert v == pytest.approx(closed.components[name], rel=1e-5, abs=1e-9)


def test_make_objective_rejects_degenerate_pairs():
    st = build_structure([np.array([0, 1, 1])], [2], ["g"])
    with pytest.raises(DesignError, match="identical"):
        make_objective(st, pair_sums(st, np.ones(3)))
    st1 = build_structure([np.array([0])], [1], ["g"])
    with pytest.raises(DesignError, match="at least 2"):
        make_objective(st1, pair_sums(st1, np.ones(1)))


@pytest.mark.parametrize("kw, match", [
    (dict(convergence="stop"), r"convergence='stop'.*'ignore', 'warning', 'error'"),
    (dict(singular="warn"), r"singular='warn'"),
    (dict(small_sample="raise"), r"small_sample='raise'"),
    (dict(starts=("random",)), r"starts=.*'moment', 'default'"),
    (dict(starts=()), r"starts="),
    (dict(ftol=0.0), r"ftol=0.0"),
    (dict(fd_steps=(1e-4,)), r"fd_steps"),
    (dict(max_iterations=0), r"max_iterations=0"),
    (dict(workers=0), r"workers=0"),
])
def test_control_rejects_unknown_values(kw, match):
    with pytest.raises(DesignError, match=match):
        Control(**kw)


def test_control_is_frozen_and_normalises_starts():
    c = Control(starts="default")
    assert c.starts == ("default",)
    with pytest.raises(AttributeError):
        c.convergence = "error"  # type: ignore[misc]


def _nonconverging():
    # optimum far from lme4's start psi = 1, one iteration allowed, no polishing from moments
    d = gauss(subjects=10, questions=10, prompts=4, sd_model_subject=3.0, sd_model_question=0.0,
              sd_model_prompt=0.0, sd_residual=0.2, rng=8)
    d = d.drop(index=d.index[::7])           # unbalanced: the general optimiser, not the closed form
    return d, dict(max_iterations=1, starts=("default",), check_faces=False)


def test_a_nonconverging_fit_warns_by_default_and_raises_under_control():
    d, kw = _nonconverging()
    f = "correct ~ model + (1|subject)"
    with pytest.warns(ConvergenceWarning, match="convergence check"):
        res = mixrank.fit(f, d, control=Control(**kw))
    assert not res.pairs[0].converged and "max_iterations=1" in res.pairs[0].message
    with pytest.raises(ConvergenceError, match="max_iterations"):
        mixrank.fit(f, d, control=Control(convergence="error", **kw))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        mixrank.fit(f, d, control=Control(convergence="ignore", **kw))
        ok = mixrank.fit(f, d)               # default control converges silently
    assert ok.pairs[0].converged


def test_singular_and_small_sample_actions():
    d = gauss(subjects=4, questions=8, prompts=4, sd_model_prompt=0.0, rng=4)
    with pytest.warns(SingularFitWarning):
        mixrank.fit(CROSSED, d)
    with pytest.raises(DesignError, match="singular"):
        mixrank.fit(CROSSED, d, control=Control(singular="error"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mixrank.fit(CROSSED, d, control=Control(singular="ignore", small_sample="ignore"))
    quiet = Control(singular="ignore")        # small_sample: warning by default, per term
    with pytest.warns(WeakDesignWarning) as rec:
        mixrank.fit(CROSSED, d, control=quiet)
    assert len(rec) == 1 and issubclass(rec[0].category, SmallSampleWarning)
    msg = str(rec[0].message)
    assert re.search(r"\(1\|subject\) has 4 level\(s\).*m01 vs m02", msg), msg
    assert "(1|prompt) has 4 level(s)" in msg and "min_units=5" in msg
    assert "'model * subject'" in msg and "method='aggregate'" in msg
    with pytest.raises(DesignError, match="min_units=5"):
        mixrank.fit(CROSSED, d, control=Control(singular="ignore", small_sample="error"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mixrank.fit(CROSSED, d, control=Control(singular="ignore", small_sample="error", min_units=4))


def test_registry_and_exported_fit_pairs():
    assert FAMILIES["gaussian"] is ENGINES and set(ENGINES) == {"native", "statsmodels", "lme4"}
    d = gauss(rng=2)
    for kw, match in ((dict(family="poisson"), "family='poisson'.*'gaussian'"),
                      (dict(engine="bogus"), "engine='bogus'.*'auto', 'native'"),
                      (dict(method="bogus"), "method='bogus'.*'reml', 'aggregate'"),
                      (dict(estimand="bogus"), "estimand='bogus'"),
                      (dict(control={"convergence": "error"}), "mixrank.Control")):
        with pytest.raises(DesignError, match=match):
            mixrank.fit(CROSSED, d, **kw)
    fr = mixrank.build_frame(d, CROSSED)
    direct = mixrank.engine.fit_pairs(fr, [(0, 1)])[0]
    via_fit = mixrank.fit(CROSSED, fr).pairs[0]
    assert direct.estimate == via_fit.estimate and direct.df == via_fit.df


def test_parallel_pairs_equal_serial_and_propagate_errors_and_warnings():
    d = gauss(models=4, subjects=8, questions=10, prompts=4, rng=9)
    d = d.drop(index=d.index[::5])                     # unbalanced: the general optimiser
    serial = mixrank.fit(CROSSED, d, control=Control(workers=1)).contrasts()
    par = mixrank.fit(CROSSED, d, control=Control(workers=2)).contrasts()
    cols = ["model_a", "model_b", "estimate", "std_error", "df"]
    assert serial[cols].equals(par[cols])
    one = d[(d.model == "m01") | (d.prompt == d.prompt.iloc[0])]   # others: one prompt
    # an error inside a worker reaches the caller
    with pytest.raises(DesignError, match=r"\(1\|subject:question\) has one cell per level"):
        mixrank.fit(CROSSED, one, control=Control(workers=2, singular="ignore"))
    # a warning raised inside a worker is re-issued in the caller
    with pytest.warns(MixrankWarning, match=r"\(1\|prompt\).*single level"):
        mixrank.fit("correct ~ model + (1|subject) + (1|prompt)", one,
                    control=Control(workers=2, singular="ignore"))
