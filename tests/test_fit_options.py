"""Every option of fit() and of FitResult's accessors is validated where it
enters, with the valid values in the message."""

from __future__ import annotations

import warnings

import pytest

import mixrank
from mixrank import DataError, DesignError

F1 = "correct ~ model + (1|subject)"


@pytest.fixture(scope="module")
def res():
    return mixrank.fit(F1, mixrank.load_example(), pairs=[("m01", "m02"), ("m02", "m03")])


@pytest.mark.parametrize("engine", ["auto", "native", "statsmodels", "lme4"])
def test_unknown_method_with_any_engine(engine):
    with pytest.raises(DesignError, match=r"method='bogus' is not an option; expected one of "
                       r"'reml', 'aggregate'"):
        mixrank.fit(F1, mixrank.load_example(), method="bogus", engine=engine)


@pytest.mark.parametrize("option, value, valid", [
    ("engine", "lmer", "'auto', 'native', 'statsmodels', 'lme4'"),
    ("estimand", "mean", "'gls', 'cells', 'units'"),
    ("method", None, "'reml', 'aggregate'"),
    ("estimand", ["gls"], "'gls', 'cells', 'units'"),
])
def test_unknown_choices(option, value, valid):
    with pytest.raises(DesignError, match=f"{option}=.* is not an option; expected one of {valid}"):
        mixrank.fit(F1, mixrank.load_example(), **{option: value})


@pytest.mark.parametrize("level", [2, -1, 1, 0, "0.9", float("nan"), True])
def test_contrasts_level(res, level):
    with pytest.raises(DesignError, match="strictly between 0 and 1"):
        res.contrasts(level=level)


def test_contrasts_level_default_and_value(res):
    assert (res.contrasts().level == 0.95).all()
    assert (res.contrasts(level=0.9).level == 0.9).all()


def test_rank_intervals_and_resolution_default_to_the_fit_level():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(F1, mixrank.load_example(), level=0.8)
    assert (res.rank_intervals().level == 0.8).all()
    assert res.rank_intervals().equals(res.rank_intervals(level=0.8))
    assert res.resolution(columns="all").attrs["mixrank"]["alpha"] == pytest.approx(0.2)
    assert res.resolution(columns="all", level=0.95).attrs["mixrank"]["alpha"] == 0.05


@pytest.mark.parametrize("pairs, msg", [
    ("m01,m02", r"pairs='m01,m02' is a string; expected pairs=\[\('model_a', 'model_b'\), "),
    ([("m01", "m02", "m03")], r"each pair must be \(model_a, model_b\); got \('m01', 'm02', 'm03'\)"),
    (["m01m02"], "each pair must be"),
    ([], "is empty"),
    (5, "not a sequence"),
])
def test_pairs_shape(pairs, msg):
    with pytest.raises(DataError, match=msg):
        mixrank.fit(F1, mixrank.load_example(), pairs=pairs)


def test_one_pair_as_a_tuple_or_list():
    a = mixrank.fit(F1, mixrank.load_example(), pairs=("m01", "m02")).contrasts()
    b = mixrank.fit(F1, mixrank.load_example(), pairs=[["m01", "m02"]]).contrasts()
    assert a.equals(b) and len(a) == 1


def test_progress_callback():
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(F1, mixrank.load_example(), progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (15, 15) and all(t == 15 for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(res.pairs) == 15
    with pytest.raises(DesignError, match="progress=3 is not callable"):
        mixrank.fit(F1, mixrank.load_example(), progress=3)
