"""One result base: every pairwise result derives from PairwiseResult,
every accessor's default level is the fit's, unsupported options raise the one OptionError,
the former keyword spellings warn and give the same answer, and the pair lookup has one home.

References: the level actually used is read from what each table states (``level`` column,
``attrs["mixrank"]["alpha"]``) and compared with an explicit ``level=`` call, which is
validated against lme4/glmer elsewhere (tests/reference, tests/engine/*reference*).
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.arena.result import ArenaResult
from mixrank.design.resolution import resolution_table
from mixrank.inference.multiplicity import ADJUST, ADJUST_FOR, check_adjust
from mixrank.inference.ranks import rank_intervals_from_contrasts
from mixrank.judge.result import JudgeResult
from mixrank.results import FitResult, GlmmByResult, GlmmResult, GlmmSlopeResult
from mixrank.results.pairwise_result import PairwiseResult

F = "correct ~ model + (1|subject)"
FB = "correct ~ model + (1|subject:question:prompt) + (1|subject:model)"
LEVELS = (0.9, 0.95)


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return fn(*a, **kw)


@pytest.fixture(scope="module")
def data():
    return mixrank.load_example()


@pytest.fixture(scope="module", params=LEVELS)
def gauss(request, data):
    return _quiet(mixrank.fit, F, data, level=request.param)


@pytest.fixture(scope="module", params=LEVELS)
def binom(request, data):
    return _quiet(mixrank.fit, FB, data, family="binomial", nagq=0, level=request.param)


def test_every_result_type_derives_from_the_base():
    for cls in (FitResult, GlmmResult, GlmmByResult, GlmmSlopeResult, JudgeResult, ArenaResult):
        assert issubclass(cls, PairwiseResult), cls
        assert "rank_intervals" in cls.OPTIONS and "resolution" in cls.OPTIONS


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


def test_gaussian_defaults_use_the_fits_level(gauss):
    lev = gauss.level
    other = 0.95 if lev == 0.9 else 0.9
    alpha = round(1 - lev, 12)
    c = gauss.contrasts()
    assert (c["level"] == lev).all()
    _same(c, gauss.contrasts(level=lev))
    assert not np.allclose(c["ci_lower"], gauss.contrasts(level=other)["ci_lower"])
    s = gauss.model_scores()
    assert (s["level"] == lev).all()
    assert not np.allclose(s["ci_lower"], gauss.model_scores(level=other)["ci_lower"])
    r = gauss.rank_intervals()
    assert (r["level"] == lev).all() and r.attrs["mixrank"]["alpha"] == pytest.approx(alpha)
    _same(r, gauss.rank_intervals(level=lev))
    v = gauss.resolution(columns="all")
    assert v.attrs["mixrank"]["alpha"] == alpha
    _same(v, gauss.resolution(columns="all", level=lev))
    assert not v["mde"].equals(gauss.resolution(columns="all", level=other)["mde"])
    sens = gauss.sensitivity("loso", top=3)
    assert sens.attrs["mixrank"]["alpha"] == alpha
    _same(sens, gauss.sensitivity("loso", top=3, level=lev))
    pl = gauss.plan(0.05)
    assert pl.attrs["mixrank"]["alpha"] == alpha
    _same(pl, gauss.plan(0.05, level=lev))
    assert not np.allclose(pl["mde"], gauss.plan(0.05, level=other)["mde"])


def test_binomial_defaults_use_the_fits_level(binom):
    lev = binom.level
    other = 0.95 if lev == 0.9 else 0.9
    alpha = round(1 - lev, 12)
    c = binom.contrasts()
    assert (c["level"] == lev).all()
    assert not np.allclose(c["ci_lower"], binom.contrasts(level=other)["ci_lower"])
    for scale in ("logit", "response"):
        s = binom.model_scores(scale=scale)
        assert (s["level"] == lev).all()
        r = binom.rank_intervals(scale=scale)
        assert (r["level"] == lev).all() and r.attrs["mixrank"]["alpha"] == pytest.approx(alpha)
        _same(r, binom.rank_intervals(level=lev, scale=scale))
    v = binom.resolution(columns="all")
    assert v.attrs["mixrank"]["alpha"] == alpha
    top = binom.resolution(columns="all", top=3)   # the 3 best by log-odds: the first two adjacent pairs
    _same(top, binom.resolution(columns="all", pairs=list(zip(v["model_a"][:2], v["model_b"][:2]))))
    _same(v, binom.resolution(columns="all", level=lev))
    assert not v["mde"].equals(binom.resolution(columns="all", level=other)["mde"])


def test_arena_defaults_use_the_fits_level():
    from tests.arena.conftest import simulate_battles

    beta = np.array([0.6, 0.3, 0.0, -0.4])
    log = simulate_battles(3000, beta, rng=5, tie_rate=0.1)
    for lev in LEVELS:
        res = mixrank.arena(log, level=lev)
        assert res.rank_intervals().attrs["mixrank"]["alpha"] == pytest.approx(round(1 - lev, 12))
        assert res.resolution(columns="all").attrs["mixrank"]["alpha"] == round(1 - lev, 12)
        assert (res.contrasts()["level"] == lev).all()


def test_unsupported_options_raise_one_message(data):
    g = _quiet(mixrank.fit, F, data)
    b = _quiet(mixrank.fit, FB, data, family="binomial", nagq=0)
    with pytest.raises(mixrank.OptionError, match=r"scale='logit' is not supported by "
                       r"FitResult\.rank_intervals\(\); its options are coverage="):
        g.rank_intervals(scale="logit")
    with pytest.raises(mixrank.OptionError, match=r"adjust='stepdown' is not supported by "
                       r"GlmmResult\.rank_intervals\(\); supported values: \['holm', "
                       r"'bonferroni', 'bh', 'maxt'\]"):
        b.rank_intervals(adjust="stepdown")
    with pytest.raises(mixrank.OptionError, match=r"cluster=False is not supported by "
                       r"GlmmResult\.resolution\(\)"):
        b.resolution(columns="all", cluster=False)
    with pytest.raises(mixrank.OptionError, match=r"by='x' is not supported by "
                       r"GlmmResult\.rank_intervals"):
        b.rank_intervals(by="x")
    with pytest.raises(mixrank.OptionError, match=r"adjust='bonferroni' is not supported by "
                       r"FitResult\.contrasts\(\); supported values"):
        g.contrasts(adjust="bonferroni")
    with pytest.raises(mixrank.OptionError, match=r"coverage='joint' is not supported by "
                       r"FitResult\.rank_intervals\(\); supported values: \['marginal', "
                       r"'simultaneous'\]"):
        g.rank_intervals(coverage="joint")
    with pytest.raises(mixrank.OptionError, match=r"unexpected keyword\(s\) bogus="):
        g.resolution(columns="all", bogus=1)
    with pytest.raises(mixrank.OptionError, match=r"level=1.5 is not a confidence level"):
        g.rank_intervals(level=1.5)
    assert FitResult.supported_options("resolution")["adjust"] == ("holm", "bonferroni", "bh",
                                                                   "stepdown", None)
    assert GlmmResult.supported_options("resolution")["adjust"] == ("holm", "bonferroni", "bh",
                                                                    None)
    assert GlmmResult.supported_options("sensitivity") == {}


def test_the_adjust_registry_has_subsets_of_one_list():
    for consumer, values in ADJUST_FOR.items():
        assert set(values) <= set(ADJUST), consumer
    with pytest.raises(mixrank.OptionError, match=r"adjust='hommel' is not supported by "
                       r"resolution\(\); supported values: \['holm', 'bonferroni', 'bh'\] "
                       r"or None"):
        check_adjust("hommel", "resolution", where="resolution", allow_none=True)


def _warns_same(new, old):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.WeakDesignWarning)
        a = new()
        with pytest.warns(mixrank.MixrankDeprecationWarning, match="former name of"):
            b = old()
    _same(a, b)


def test_old_spellings_warn_and_give_the_same_answer(data):
    g = _quiet(mixrank.fit, F, data)
    b = _quiet(mixrank.fit, FB, data, family="binomial", nagq=0)
    _warns_same(lambda: g.rank_intervals(adjust="bonferroni"),
                lambda: g.rank_intervals(method="bonferroni"))
    _warns_same(lambda: g.rank_intervals(adjust="maxt", draws=500, rng=1),
                lambda: g.rank_intervals(adjust="maxt", B=500, rng=1))
    _warns_same(lambda: b.rank_intervals(adjust="bh"), lambda: b.rank_intervals(method="bh"))
    _warns_same(lambda: g.resolution(columns="all", adjust="bh", level=0.9),
                lambda: g.resolution(columns="all", multiplicity="bh", alpha=0.1))
    _warns_same(lambda: b.resolution(columns="all", adjust="bonferroni", level=0.9),
                lambda: b.resolution(columns="all", multiplicity="bonferroni", alpha=0.1))
    _warns_same(lambda: g.contrasts(adjust="maxt", draws=2000, rng=2),
                lambda: g.contrasts(adjust="maxt", B=2000, rng=2))
    _warns_same(lambda: g.rank_probabilities(draws=2000, rng=2),
                lambda: g.rank_probabilities(B=2000, rng=2))
    _warns_same(lambda: g.sensitivity("bootstrap", top=3, draws=50, rng=3, level=0.9),
                lambda: g.sensitivity("bootstrap", top=3, B=50, rng=3, alpha=0.1))
    _warns_same(lambda: g.plan(0.05, level=0.9), lambda: g.plan(0.05, alpha=0.1))
    con, sc = g.contrasts(), g.model_scores()
    _warns_same(lambda: rank_intervals_from_contrasts(sc, con, adjust="bh"),
                lambda: rank_intervals_from_contrasts(sc, con, method="bh"))
    pairs = pd.DataFrame(dict(model_a=["a"], model_b=["b"], estimate=[0.1], n=[100],
                              sigma_d=[0.5], variance_ratio=[1.2]))
    _warns_same(lambda: resolution_table(pairs, level=0.9, adjust="bonferroni"),
                lambda: resolution_table(pairs, alpha=0.1, multiplicity="bonferroni"))
    _warns_same(lambda: mixrank.paired_bootstrap([1, 0, 1, 1, 0], [0, 0, 1, 0, 0], draws=300,
                                                 rng=1),
                lambda: mixrank.paired_bootstrap([1, 0, 1, 1, 0], [0, 0, 1, 0, 0], B=300, rng=1))
    with pytest.raises(mixrank.OptionError, match="pass only adjust="), \
            pytest.warns(mixrank.MixrankDeprecationWarning):
        g.rank_intervals(adjust="bh", method="holm")
    with pytest.raises(mixrank.OptionError, match="pass only level="), \
            pytest.warns(mixrank.MixrankDeprecationWarning):
        g.resolution(columns="all", level=0.9, alpha=0.05)


# ----------------------------------------------------------------- one pair lookup
ROOT = Path(mixrank.__file__).parent


def _pair_keyed(node: ast.AST) -> bool:
    """A dict display/comprehension whose key names both ``model_a`` and ``model_b``."""
    keys = [node.key] if isinstance(node, ast.DictComp) else (
        [k for k in node.keys if k is not None] if isinstance(node, ast.Dict) else [])
    for k in keys:
        names = {n.attr for n in ast.walk(k) if isinstance(n, ast.Attribute)}
        names |= {n.id for n in ast.walk(k) if isinstance(n, ast.Name)}
        if {"model_a", "model_b"} <= names or (isinstance(k, ast.Call) and any(
                isinstance(n, ast.Name) and n.id in ("a", "b") for n in ast.walk(k))
                and isinstance(k.func, ast.Name) and k.func.id == "frozenset"):
            return True
    return False


def test_the_pair_lookup_is_defined_in_one_module():
    found = set()
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text())
        if any(_pair_keyed(n) for n in ast.walk(tree)):
            found.add(path.relative_to(ROOT).as_posix())
    assert "engine/records.py" in found
    assert found == {"engine/records.py"}, found


def test_judge_defaults_use_the_fits_level():
    from tests.judge.simdata import simulate

    data = simulate(9, models=4, subjects=16, questions=15, frac=0.25)[0]
    for lev in LEVELS:
        res = _quiet(mixrank.fit, "score ~ model + (1|subject)", data, gold="human", level=lev)
        assert isinstance(res, JudgeResult)
        alpha = round(1 - lev, 12)
        assert (res.contrasts()["level"] == lev).all()
        assert res.rank_intervals().attrs["mixrank"]["alpha"] == pytest.approx(alpha)
        assert res.resolution(columns="all").attrs["mixrank"]["alpha"] == alpha
        _same(res.plan(0.2), res.plan(0.2, level=lev))
        if lev == 0.9:
            assert not res.plan(0.2).equals(res.plan(0.2, level=0.95))


@pytest.mark.parametrize("adjust", ["holm", "none", "stepdown"])
def test_a_bad_rng_is_refused_whatever_the_adjustment(adjust):
    """``rng=`` is never silently ignored: a value that is not a seed or a Generator is an
    OptionError naming it even where the adjustment draws nothing."""
    import warnings

    import mixrank

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    with pytest.raises(mixrank.OptionError, match="rng='abc'"):
        fit.contrasts(adjust=adjust, rng="abc")
    if adjust == "stepdown":                   # a seed is accepted where draws may be taken
        fit.contrasts(adjust=adjust, rng=3)
    else:                                      # and refused where none is (one rule)
        with pytest.raises(mixrank.OptionError, match="rng=3 .* would be ignored"):
            fit.contrasts(adjust=adjust, rng=3)
