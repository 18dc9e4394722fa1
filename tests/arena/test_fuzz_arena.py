"""Fuzzing the arena entry point: random battle logs (odd winners, names, NaN,
self-battles, covariates, clusters, options) -- only MixrankError escapes, and
the counts reconcile with the input (battles kept + ties dropped = rows)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mixrank
from mixrank.errors import MixrankError

NAMES = ["m1", "m2", "Acme, v2", " padded ", "ü-модель", "🙂", "1", "m1 "]
WINNERS = ["model_a", "model_b", "tie", "tie (bothbad)", "Model_A ", 1, 0, 0.5, 0.7, None,
           "draw", True]


@st.composite
def logs(draw):
    clean = draw(st.integers(0, 3)) > 0     # mostly: no self-battles, known winners
    n = draw(st.integers(1, 40))
    models = draw(st.lists(st.sampled_from(NAMES), min_size=2 if clean else 1, max_size=5,
                           unique=True))
    a = draw(st.lists(st.sampled_from(models), min_size=n, max_size=n))
    if clean:
        shift = draw(st.lists(st.integers(1, len(models) - 1), min_size=n, max_size=n))
        b = [models[(models.index(x) + k) % len(models)] for x, k in zip(a, shift)]
    else:
        b = draw(st.lists(st.sampled_from(models), min_size=n, max_size=n))
    good_only = clean or draw(st.booleans())
    pool = WINNERS[:8] if good_only else WINNERS
    w = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    df = pd.DataFrame({"model_a": a, "model_b": b, "winner": pd.Series(w, dtype=object)})
    if draw(st.booleans()):
        vals = st.floats(0, 500, allow_nan=False) if clean else st.one_of(
            st.floats(0, 500, allow_nan=False), st.just(float("nan")), st.just(-1.0))
        df["len_a"] = draw(st.lists(vals, min_size=n, max_size=n))
        df["len_b"] = draw(st.lists(vals, min_size=n, max_size=n))
    if draw(st.booleans()):
        groups = ["p1", "p2", "p3"] + ([] if clean else [None])
        df["prompt"] = draw(st.lists(st.sampled_from(groups), min_size=n, max_size=n))
    return df


CASES = dict(df=logs(), ties=st.sampled_from(["half", "davidson", "drop"]),
             style=st.booleans(), cluster=st.booleans(),
             prior=st.sampled_from([0.0, 0.5, 0.5]),
             se=st.sampled_from([None, None, "information", "sandwich", "bootstrap"]))
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]


def check_one(df, ties, style, cluster, prior, se):
    before = df.copy()
    kw = dict(ties=ties, prior=prior, se=se, draws=100, rng=1)
    if style:
        kw["formula"] = "winner ~ style(len)"
    if cluster and ("prompt" in df.columns or se == "information"):
        kw["cluster"] = "prompt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = mixrank.arena(df, **kw)
        except MixrankError:
            pd.testing.assert_frame_equal(df, before)
            return
        pd.testing.assert_frame_equal(df, before)
        assert res.n_battles + res.battles.n_ties_dropped == len(df)
        sc = res.model_scores()
        assert int(sc["n"].sum()) == 2 * res.n_battles
        for call in (res.contrasts, res.rank_intervals, res.resolution, res.covariates,
                     lambda: str(res.summary())):
            try:
                call()
            except MixrankError:
                pass
        assert np.isfinite(sc["estimate"]).all()


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=HEALTH)
@given(**CASES)
def test_arena_only_raises_mixrank_errors(df, ties, style, cluster, prior, se):
    check_one(df, ties, style, cluster, prior, se)


@pytest.mark.slow
@settings(max_examples=800, deadline=None, derandomize=True, suppress_health_check=HEALTH)
@given(**CASES)
def test_arena_only_raises_mixrank_errors_slow(df, ties, style, cluster, prior, se):
    check_one(df, ties, style, cluster, prior, se)


def test_judged_arena_only_raises_mixrank_errors():
    # small random logs with a judge column, random unlabelled battles, ties, clusters
    g = np.random.default_rng(123)
    outcomes = np.array(["model_a", "model_b", "tie"])
    for case in range(80):
        n = int(g.integers(4, 60))
        k = int(g.integers(2, 5))
        a = g.integers(0, k, n)
        b = (a + g.integers(1, k, n)) % k
        df = pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b],
                           "winner": outcomes[g.integers(0, 3 if case % 2 else 2, n)],
                           "jd": outcomes[g.integers(0, 3, n)]})
        df.loc[g.random(n) < g.uniform(0, 1), "winner"] = None
        if case % 3 == 0:
            df["prompt"] = g.integers(0, max(1, n // 3), n)
        before = df.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                res = mixrank.arena(df, judge="jd", position=bool(case % 4 == 1))
            except MixrankError:
                pd.testing.assert_frame_equal(df, before)
                continue
            pd.testing.assert_frame_equal(df, before)
            assert np.isfinite(res.model_scores()["estimate"]).all()
            for call in (res.contrasts, res.rank_intervals, res.judges, res.leaderboards,
                         res.summary):
                try:
                    str(call())
                except MixrankError:
                    pass
