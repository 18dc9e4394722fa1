"""Reliable change by item difficulty and the attainable p-value.

References: the hand-worked six-item example of tests/change/test_rci.py
(counted by hand below), Fisher's exact test at complete separation
(scipy.stats.fisher_exact), and the structural bound on real re-runs
(llm_stability: an item solved in every before-sample can only stay or drop).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from mixrank.change import reliable_change
from mixrank.change.difficulty import change_by_difficulty, smallest_item_p
from mixrank.errors import DesignError
from tests.change.test_rci import hand_frame


def test_hand_worked_bins():
    res = reliable_change(hand_frame(), before="old", after="new", sem="pooled")
    it = res.items()
    tab = res.by_difficulty()
    assert tab["method"].unique().tolist() == ["rci"]
    assert tab["n"].sum() == len(it)
    assert list(zip(tab["p_lower"], tab["p_upper"])) == [
        (0, 0), (0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1), (1, 1)]
    # by hand from the items: p_before 1, 0.75, 0, 0.25, 0, 1
    for _, r in tab.iterrows():
        if r["p_lower"] == r["p_upper"]:
            m = it["p_before"] == r["p_lower"]
        elif r["p_upper"] == 1:
            m = (it["p_before"] > r["p_lower"]) & (it["p_before"] < 1)
        else:
            m = (it["p_before"] > r["p_lower"]) & (it["p_before"] <= r["p_upper"])
        assert r["n"] == m.sum()
        assert r["n_improved"] == (it.loc[m, "class"] == "improved").sum()
        assert r["n_deteriorated"] == (it.loc[m, "class"] == "deteriorated").sum()
        if m.any():
            assert r["mean_delta"] == pytest.approx(it.loc[m, "delta"].mean())
            assert r["headroom_up"] == pytest.approx(1 - it.loc[m, "p_before"].mean())
    with pytest.raises(DesignError, match="strictly between 0 and 1"):
        change_by_difficulty(it, edges=[0.5, 1.0])


@pytest.mark.parametrize("kb, ka", [(2, 2), (3, 3), (4, 4), (3, 5)])
def test_smallest_item_p_is_fisher_at_complete_separation(kb, ka):
    want = min(stats.fisher_exact([[0, kb], [ka, 0]])[1], stats.fisher_exact([[kb, 0], [0, ka]])[1])
    assert smallest_item_p(kb, ka, binary=True) == pytest.approx(want, rel=1e-12)
    assert smallest_item_p(kb, ka, binary=False) == 0.0


def test_summary_says_why_k3_cannot_reach_alpha(shared_data):
    data = shared_data("llm_stability")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = reliable_change(data, before={"sample": [0, 1, 2]}, after={"sample": [3, 4]},
                              item=("subject", "question"))
    s = res.summary()
    assert s.min_p_value == pytest.approx(stats.fisher_exact([[0, 3], [2, 0]])[1])
    assert s.min_p_value > 0.05 and "no item can reach it" in str(s)
    tab = res.by_difficulty()
    assert tab["n"].sum() == s.n_items
    top = tab[(tab["p_lower"] == 1) & (tab["p_upper"] == 1)].iloc[0]
    bottom = tab[(tab["p_lower"] == 0) & (tab["p_upper"] == 0)].iloc[0]
    # regression to the middle: items always right before can only drop, never-right only rise
    assert top["mean_delta"] <= 0 and bottom["mean_delta"] >= 0
    assert top["n_improved"] == 0 and bottom["n_deteriorated"] == 0
    assert np.isnan(reliable_change(data, before={"sample": [0, 1, 2]}, after={"sample": [3, 4]},
                                    item=("subject", "question"), sem="pooled")
                    .summary().min_p_value)
