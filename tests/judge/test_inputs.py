"""Bad input to fit(..., gold=) gets a clear error; unlabelled models get NaN rows (docs/judge.md §1)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.errors import DataError, DesignError, MixrankWarning
from tests.judge.simdata import simulate

F = "score ~ model + (1|subject)"


@pytest.fixture()
def df():
    return simulate(2, models=3, subjects=8, questions=6, frac=0.4)[0]


@pytest.mark.row_order   # the messages name the first bad row
@pytest.mark.parametrize("edit, gold, err, match", [
    (None, "humna", DataError, r"gold='humna' is not in the data \(did you mean 'human'\?\)"),
    ("all_nan", "human", DataError, r"'human' is empty \(all 144 values missing\)"),
    pytest.param("text", "human", DataError, r"'human' is not numeric: row 0 holds 'good'",
                 marks=pytest.mark.row_order),   # the message names a row position
    ("orphan", "human", DataError, r"reference label in 'human' but no judge score in 'score'"),
    ("one_unit", "human", DataError, r"labelled subset covers 1 level\(s\) of the unit 'subject'"),
    pytest.param("inf", "human", DataError, r"infinite value \(row 3\)",
                 marks=pytest.mark.row_order),
    (None, "score", DataError, r"is the formula's response"),
    (None, 3, DesignError, r"expected the name of the reference-label column"),
])
def test_bad_input(df, edit, gold, err, match):
    if edit == "all_nan":
        df["human"] = np.nan
    elif edit == "text":
        df["human"] = df["human"].astype(object)
        df.loc[0, "human"] = "good"
    elif edit == "orphan":
        i = df.index[df["human"].notna()][0]
        df.loc[i, "score"] = np.nan
    elif edit == "one_unit":
        df.loc[df["subject"] != 0, "human"] = np.nan
        df.loc[df["subject"] == 0, "human"] = 1.0
    elif edit == "inf":
        df.loc[3, "human"] = np.inf
    with pytest.raises(err, match=match):
        mixrank.fit(F, df, gold=gold, na="drop")


@pytest.mark.parametrize("kw, match", [
    (dict(lam=0.5), r"lam=0.5 needs gold="),
    (dict(gold="human", lam=1.5), r"lam=1.5; expected a number in \[0, 1\]"),
    (dict(gold="human", method="aggregate"), r"does not take method='aggregate'"),
    (dict(gold="human", estimand="units"), r"does not take estimand='units'"),
    (dict(gold="human", engine="lme4"), r"does not take engine='lme4'"),
])
def test_bad_options(df, kw, match):
    with pytest.raises(DesignError, match=match):
        mixrank.fit(F, df, **kw)


def test_unlabelled_model_gets_nan_rows_with_note(df):
    df.loc[df["model"] == "m2", "human"] = np.nan
    with pytest.warns(MixrankWarning, match=r"1 model\(s\) have too few reference labels"):
        res = mixrank.fit(F, df, gold="human")
    sc = res.model_scores().set_index("model")
    assert np.isnan(sc.loc["m2", "estimate"]) and sc.loc["m2", "note"] == \
        "no reference labels on these cells"
    assert np.isfinite(sc.loc[["m0", "m1"], "estimate"]).all()
    con = res.contrasts()
    bad = con[(con["model_b"] == "m2")]
    assert bad["estimate"].isna().all() and (bad["p_value"] == 1).all()
    assert res.diagnostics().set_index("model_b").loc["m2", "degenerate"].all()
    jt = res.judge().set_index("model")
    assert np.isnan(jt.loc["m2", "bias"]) and jt.loc["m2", "note"]
    with pytest.raises(DataError, match=r"rank intervals need a corrected score for every "
                                        r"model.*m2"):
        res.rank_intervals()


def test_accessors_that_need_a_mixed_model_refuse(df):
    res = mixrank.fit(F, df, gold="human")
    assert res.variance_components().empty
    for call in (lambda: res.sensitivity(), lambda: res.anova(),
                 lambda: res.plan(0.1, labels=False), lambda: res.plan(0.1, subjects=10),
                 lambda: res.model_scores(estimand="gls")):
        with pytest.raises(DesignError):
            call()


def test_label_plan_needs_a_judge_fit():
    res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example(),
                      pairs=[("m01", "m02")])
    with pytest.raises(DesignError, match=r"fit with mixrank.fit\(..., gold="):
        res.plan(0.05, labels=True)


def test_pairs_and_progress(df):
    calls = []
    res = mixrank.fit(F, df, gold="human", pairs=[("m2", "m0")],
                      progress=lambda d, t: calls.append((d, t)))
    con = res.contrasts()
    assert list(zip(con["model_a"], con["model_b"])) == [("m2", "m0")]
    assert calls[-1] == (1, 1)
    full = mixrank.fit(F, df, gold="human").contrasts().set_index(["model_a", "model_b"])
    assert con["estimate"].iloc[0] == pytest.approx(-full.loc[("m0", "m2"), "estimate"])


def test_few_labelled_units_warn(df):
    df.loc[df["subject"] >= 3, "human"] = np.nan
    with pytest.warns(mixrank.errors.WeakDesignWarning, match=r"cover only [23] level\(s\)"):
        mixrank.fit(F, df, gold="human")


def test_disjoint_model_groups_are_refused_for_ranking(df):
    a = df[df["model"].isin(["m0", "m1"]) & (df["subject"] < 4)]
    b = df[(df["model"] == "m2") & (df["subject"] >= 4)]
    noise = np.random.default_rng(0).normal(size=len(b))
    c = b.assign(model="m3", score=b["score"] + noise, human=b["human"] - noise / 2)
    data = pd.concat([a, b, c], ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(F, data, gold="human")
    assert len(res.contrasts()) == 2
    with pytest.raises(DesignError, match="disjoint sets of cells"):
        res.rank_intervals()


def test_gold_given_as_an_array_is_named_briefly(df):
    # hrev review: the message used to print the whole Series' repr
    with pytest.raises(DesignError, match=r"^gold=a Series; expected the name of the "
                                          r"reference-label column") as exc:
        mixrank.fit(F, df, gold=df["human"])
    assert "\n" not in str(exc.value)
