"""Leave-one-model-out on the bundled ChemBench leaderboard (marker ``slow``; the
table of docs/subset.md §5 comes from benchmarks/subset_chembench.py).

Each of the 25 systems in turn is scored from k = 100 questions with the other 24 as
reference, over 20 seeds (500 intervals): the model-assisted estimate's mean absolute
error is at most 0.85 x a simple random sample's (a crude stratified
difference estimator already reaches 0.81 x), and its 95% intervals cover the true
full score in >= 93% of the (model, seed) cases.
"""

from __future__ import annotations

import pytest

from mixrank.subset.validation import leave_one_out, loo_summary

pytestmark = pytest.mark.slow


def test_leave_one_model_out_error_ratio_and_coverage(shared_data):
    data = shared_data("chembench").query("prompt == 'default'")
    assert data["model"].nunique() == 25 and data["question"].nunique() == 2788
    tab = leave_one_out(data, 100, seeds=20, rng=100)
    s = loo_summary(tab).set_index("method")
    assert s.loc["model_assisted", "n"] == 500
    assert s.loc["model_assisted", "mae_ratio"] <= 0.85
    assert s.loc["model_assisted", "coverage"] >= 0.93
    assert s.loc["stratified_mean", "coverage"] >= 0.93
    # the baseline is what it says: a random sample's error, its interval valid too
    assert s.loc["random_sample", "coverage"] >= 0.92
