"""``res.letters()`` on every bundled dataset: share a letter <=> the pair is not rejected.

For each bundled dataset (``mixrank.list_datasets()``) a fit that runs in
seconds -- paired mixed models, the binomial GLMM, a judge-corrected fit, the
Bradley-Terry fit of the arena votes and a subset score -- the letters are
checked against the result's own ``contrasts()`` at the same ``adjust`` and
level: two models share a letter exactly when ``p_adjusted >= 1 - level``
(the definition; the letters' algorithm itself is checked against R's
multcompView in tests/inference/test_letters.py).  Then the options and the
errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.errors import DesignError, OptionError
from tests.inference.test_letters import _symbols

F = "correct ~ model + (1|subject)"


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def _fits(name: str, shared_data):
    """(label, result) pairs of the dataset ``name``."""
    d = shared_data(name)
    if name == "chembench":
        return [("linear", _quiet(mixrank.fit, F, d))]
    if name == "chembench_humans":
        d["subject"] = d["subject"].fillna("(no topic)")     # as vignette 04
        return [("humans", _quiet(mixrank.fit, F, d))]
    if name == "jailbreakbench":
        return [("linear", _quiet(mixrank.fit, F, d)),
                ("binomial", _quiet(mixrank.fit, F, d, family="binomial"))]
    if name == "llm_stability":          # one model, five runs: the runs compared
        d["sample"] = "run" + d["sample"].astype(str)
        return [("runs", _quiet(mixrank.fit, "correct ~ sample + (1|subject)", d))]
    if name == "multiprompt":
        bbh = d[d["benchmark"] == "BBH"]
        return [("bbh", _quiet(mixrank.fit, F, bbh, pair_by=["subject", "prompt"]))]
    if name == "triviaqa_judges":
        g4 = d[d["judge_name"] == "GPT-4"]
        labelled = g4.copy()
        labelled.loc[np.random.default_rng(1).random(len(g4)) > 0.1, "gold"] = np.nan
        return [("gold", _quiet(mixrank.fit, "gold ~ model", g4.drop(columns="judge"))),
                ("judge", _quiet(mixrank.fit, "judge ~ model", labelled, gold="gold"))]
    if name == "hanna_stories":
        h = d[(d["criterion"] == "Relevance") & (d["judge_name"] == "Beluga-13B")
              & (d["judge_prompt"] == 1)]
        return [("gold", _quiet(mixrank.fit, "gold ~ model", h.drop(columns="judge")))]
    if name == "chatbot_arena":
        return [("bradley_terry", _quiet(mixrank.arena, d))]
    raise AssertionError(f"no fit for the bundled dataset {name!r}: add one here")


def check_letters(res, adjust=None, level=None) -> pd.DataFrame:
    """The letters of ``res`` against its contrasts: share <=> p_adjusted >= alpha."""
    cld = res.letters(adjust, level)
    lev = res.level if level is None else level
    con = res.contrasts(lev) if adjust is None else res.contrasts(lev, adjust=adjust)
    meta = cld.attrs["mixrank"]
    assert meta["adjust"] == con.attrs["mixrank"]["adjust"] and meta["level"] == lev
    alpha = meta["alpha"]
    sets = dict(zip(cld["model"], (set(_symbols(s)) for s in cld["letters"])))
    assert sorted(sets) == sorted(map(str, res.models))
    seen = set()
    for a, b, p in zip(con["model_a"], con["model_b"], con["p_adjusted"]):
        rejected = bool(p < alpha)               # NaN: no test, not rejected
        assert bool(sets[a] & sets[b]) == (not rejected), (a, b, p)
        seen.add(frozenset((a, b)))
    M = len(sets)
    assert len(seen) == M * (M - 1) // 2         # every pair checked
    est = cld["estimate"].to_numpy()
    assert (np.diff(est) <= 0).all()             # best first
    return cld


@pytest.mark.parametrize("name", list(mixrank.list_datasets()["name"]))
def test_share_a_letter_iff_not_rejected_on_every_bundled_dataset(name, shared_data):
    for label, res in _fits(name, shared_data):
        cld = check_letters(res)
        assert list(cld.columns) == ["model", "estimate", "letters"], label
        scores = res.model_scores()
        got = dict(zip(cld["model"], cld["estimate"]))
        for m, e in zip(scores["model"], scores["estimate"]):
            assert got[m] == e                   # the scores, unrounded


def test_other_adjustments_and_levels(shared_data):
    res = _quiet(mixrank.fit, F, shared_data("jailbreakbench"))
    for adjust, level in [("holm", 0.95), ("bh", 0.9), ("none", 0.99), ("maxt", 0.95)]:
        kw = {"adjust": adjust, "level": level}
        cld = _quiet(check_letters, res, **kw)
        assert cld.attrs["mixrank"]["adjust"] == adjust
    arena = _quiet(mixrank.arena, shared_data("chatbot_arena"))
    cld = check_letters(arena, "bonferroni", 0.99)
    # a stricter level never splits more: every pair sharing a letter at 0.95 shares at 0.99
    at95 = check_letters(arena, "bonferroni", 0.95)
    s99 = dict(zip(cld["model"], map(set, cld["letters"])))
    s95 = dict(zip(at95["model"], map(set, at95["letters"])))
    for a in s95:
        for b in s95:
            if s95[a] & s95[b]:
                assert s99[a] & s99[b]


def test_subset_score_letters(shared_data):
    data = shared_data("chembench").query("prompt == 'default'")
    ref, new = data[data.model != "o1"], data[data.model == "o1"]
    sel = mixrank.select_items(ref, 100, rng=2)
    res = mixrank.subset_score(ref, new[new.question.isin(sel.question)], selection=sel)
    cld = res.letters()
    con = res.contrasts()
    sets = dict(zip(cld["model"], map(set, cld["letters"])))
    assert len(sets) == 25
    for b, p in zip(con["model_b"], con["p_adjusted"]):
        assert bool(sets["o1"] & sets[b]) == (p >= 0.05)
    refs = res.reference.set_index("model")["estimate"]
    for a in refs.index:                          # reference means are known exactly
        for b in refs.index:
            if a != b:
                assert bool(sets[a] & sets[b]) == (refs[a] == refs[b])
    with pytest.raises(DesignError, match="needs one new model; this result scores 2"):
        two = pd.concat([new, new.assign(model="o1-copy")])
        mixrank.subset_score(ref, two[two.question.isin(sel.question)], selection=sel).letters()


def test_errors(shared_data):
    jb = shared_data("jailbreakbench")
    one_pair = _quiet(mixrank.fit, F, jb[jb.model.isin(jb.model.unique()[:2])])
    with pytest.raises(DesignError, match=r"letters\(\) needs at least 3 models; this FitResult "
                                          r"has 2 .*one pair"):
        one_pair.letters()
    with pytest.raises(DesignError, match="at least 3 models"):
        _quiet(mixrank.fit, F, jb[jb.model.isin(jb.model.unique()[:2])],
               family="binomial").letters()
    res = _quiet(mixrank.fit, F, jb)
    with pytest.raises(OptionError, match="adjust='tukey'"):
        res.letters("tukey")
    with pytest.raises(OptionError, match="level=1.5"):
        res.letters(level=1.5)
    m = sorted(jb.model.unique())
    restricted = _quiet(mixrank.fit, F, jb, pairs=[(m[0], m[1]), (m[1], m[2])])
    with pytest.raises(DesignError, match="needs a test of every pair"):
        restricted.letters()


def test_order_by_mean_gap_when_scores_cannot_be_fitted(shared_data, monkeypatch):
    res = _quiet(mixrank.fit, F, shared_data("jailbreakbench"))
    want = res.letters()

    def refuse(*a, **kw):
        raise DesignError("a random term is confounded with the residual")

    monkeypatch.setattr(type(res), "model_scores", refuse)
    cld = res.letters()
    assert cld["estimate"].isna().all()
    assert "mean of each model's contrasts" in cld.attrs["mixrank"]["scores"]
    con = res.contrasts()
    gap = {m: [] for m in res.models}
    for a, b, e in zip(con.model_a, con.model_b, con.estimate):
        gap[a].append(e)
        gap[b].append(-e)
    assert list(cld["model"]) == sorted(res.models, key=lambda m: -np.mean(gap[m]))
    # the same decisions: the same groups of models (the letters may be named otherwise)
    sets = dict(zip(cld["model"], map(set, cld["letters"])))
    before = dict(zip(want["model"], map(set, want["letters"])))
    for a in sets:
        for b in sets:
            assert bool(sets[a] & sets[b]) == bool(before[a] & before[b])
