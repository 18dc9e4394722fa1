"""Tests for mixrank.design.rci (item-level reliable change, methods.md section 8).

References used here:
* hand-worked examples (six items, K = 4) whose sums are derived in the
  comments below, exact up to floating point;
* seeded simulations with pass bands from the Monte Carlo standard error;
* the llm_stability re-runs of gpt-4o (Atil et al. 2024, arXiv 2408.04667):
  five identical runs, so every "reliable change" between runs {0, 1} and
  {2, 3} is a false alarm.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixrank.design.rci import reliable_change
from mixrank.errors import DataError, DesignError, MissingDataWarning, MixrankWarning

# Tolerances (one table).
TOL = {
    "exact": 1e-12,  # hand-worked closed forms
}

# --------------------------------------------------------------------------- hand example
# Six items, K = 4 samples each, before ("old") and after ("new").
BEFORE = [[1, 1, 1, 1], [1, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1]]
AFTER = [[1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0], [0, 0, 1, 1], [1, 0, 1, 1], [0, 0, 0, 0]]
SUBJECTS = ["A", "A", "A", "B", "B", "B"]


def hand_frame(before=BEFORE, after=AFTER, subjects=SUBJECTS, extra=None) -> pd.DataFrame:
    rows = []
    for model, mat in (("old", before), ("new", after)):
        for i, samples in enumerate(mat):
            for k, y in enumerate(samples):
                rows.append({"model": model, "subject": subjects[i], "question": f"q{i + 1}",
                             "prompt": "p0", "sample": k, "correct": y})
    df = pd.DataFrame(rows)
    if extra:
        df = df.assign(**extra)
    return df


def test_hand_worked_halves():
    # Before, halves = samples {0,1} | {2,3}:
    #   h1 = (1, .5, 0, 0, 0, 1), h2 = (1, 1, 0, .5, 0, 1); means 5/12, 7/12
    #   Sxy = 2.5 - 6 (5/12)(7/12) = 25/24, Sxx = Syy = 29/24  ->  r = 25/29
    #   r_xx = 2r/(1+r) = 25/27; p = (1, 3/4, 0, 1/4, 0, 1), var = (9/8)/5 = 9/40
    #   SEM^2 = 9/40 * (1 - 25/27) = 1/60
    # After: h1 = (1, 1, 0, 0, .5, 0), h2 = (1, .5, 0, 1, 1, 0); means 5/12, 7/12
    #   Sxy = 2 - 35/24 = 13/24, Sxx = Syy = 29/24  ->  r = 13/29, r_xx = 13/21
    #   p = (1, 3/4, 0, 1/2, 3/4, 0), var = (7/8)/5 = 7/40, SEM^2 = 7/40 * 8/21 = 1/15
    # S_diff^2 = 1/60 + 1/15 = 1/12; delta = (0, 0, 0, 1/4, 3/4, -1); RCI = delta * sqrt(12)
    res = reliable_change(hand_frame(), before="old", after="new")
    rel = res.summary().reliability.set_index("role")
    assert rel.loc["before", "r_half"] == pytest.approx(25 / 29, abs=TOL["exact"])
    assert rel.loc["before", "r_xx"] == pytest.approx(25 / 27, abs=TOL["exact"])
    assert rel.loc["before", "std_dev"] == pytest.approx(math.sqrt(9 / 40), abs=TOL["exact"])
    assert rel.loc["before", "sem"] == pytest.approx(math.sqrt(1 / 60), abs=TOL["exact"])
    assert rel.loc["after", "r_half"] == pytest.approx(13 / 29, abs=TOL["exact"])
    assert rel.loc["after", "r_xx"] == pytest.approx(13 / 21, abs=TOL["exact"])
    assert rel.loc["after", "sem"] == pytest.approx(math.sqrt(1 / 15), abs=TOL["exact"])
    assert list(rel["k"]) == [4, 4] and list(rel["k_split"]) == [4, 4]
    assert res.summary().s_diff == pytest.approx(math.sqrt(1 / 12), abs=TOL["exact"])
    it = res.items()
    assert list(it["question"]) == [f"q{i}" for i in range(1, 7)]
    np.testing.assert_allclose(it["p_before"], [1, 0.75, 0, 0.25, 0, 1], atol=TOL["exact"])
    np.testing.assert_allclose(it["p_after"], [1, 0.75, 0, 0.5, 0.75, 0], atol=TOL["exact"])
    s12 = math.sqrt(12)
    np.testing.assert_allclose(it["rci"], [0, 0, 0, s12 / 4, 3 * s12 / 4, -s12], atol=TOL["exact"])
    assert list(it["class"]) == ["floor_ceiling", "no_change", "floor_ceiling", "no_change",
                                 "improved", "deteriorated"]


def test_hand_worked_odd_even():
    # odd_even = samples {0,2} | {1,3}.
    # Before: he = (1, 1, 0, 0, 0, 1), ho = (1, .5, 0, .5, 0, 1); means 1/2, 1/2
    #   Sxy = 2.5 - 1.5 = 1, Sxx = 3 - 1.5 = 3/2, Syy = 2.5 - 1.5 = 1  ->  r = sqrt(2/3)
    # After: he = (1, 1, 0, .5, 1, 0), ho = (1, .5, 0, .5, .5, 0); means 7/12, 5/12
    #   Sxy = 2.25 - 35/24 = 19/24, Sxx = 29/24, Syy = 1.75 - 25/24 = 17/24  ->  r = 19/sqrt(493)
    res = reliable_change(hand_frame(), before="old", after="new", split="odd_even")
    rel = res.summary().reliability.set_index("role")
    rb, ra = math.sqrt(2 / 3), 19 / math.sqrt(493)
    rxx_b, rxx_a = 2 * rb / (1 + rb), 2 * ra / (1 + ra)
    assert rel.loc["before", "r_half"] == pytest.approx(rb, abs=TOL["exact"])
    assert rel.loc["after", "r_half"] == pytest.approx(ra, abs=TOL["exact"])
    assert rel.loc["before", "r_xx"] == pytest.approx(rxx_b, abs=TOL["exact"])
    sem_b2, sem_a2 = 9 / 40 * (1 - rxx_b), 7 / 40 * (1 - rxx_a)
    s_diff = math.sqrt(sem_b2 + sem_a2)
    assert res.summary().s_diff == pytest.approx(s_diff, abs=TOL["exact"])
    it = res.items()
    np.testing.assert_allclose(it["rci"], np.array([0, 0, 0, 0.25, 0.75, -1]) / s_diff, atol=TOL["exact"])
    # 0.25 / s_diff = 0.67, 0.75 / s_diff = 2.02, -1 / s_diff = -2.69
    assert list(it["class"]) == ["floor_ceiling", "no_change", "floor_ceiling", "no_change",
                                 "improved", "deteriorated"]


def test_threshold_keyword_and_default():
    assert reliable_change.__kwdefaults__["threshold"] == pytest.approx(stats.norm.ppf(0.975), abs=1e-15)
    # 3 sqrt(12)/4 = 2.598 and sqrt(12) = 3.46: threshold 3 keeps only the deterioration.
    it = reliable_change(hand_frame(), before="old", after="new", threshold=3.0).items()
    assert list(it["class"])[3:] == ["no_change", "no_change", "deteriorated"]


def test_summary_shares_churn_median():
    s = reliable_change(hand_frame(), before="old", after="new").summary()
    cl = s.classes.set_index(["method", "subset", "class"])
    assert cl.loc[("rci", "all", "floor_ceiling"), "n"] == 2
    assert cl.loc[("rci", "all", "improved"), "share"] == pytest.approx(1 / 6)
    assert cl.loc[("rci", "analysable", "improved"), "share"] == pytest.approx(1 / 4)
    assert cl.loc[("rci", "analysable", "no_change"), "share"] == pytest.approx(2 / 4)
    assert cl.loc[("rci", "analysable", "floor_ceiling"), "n"] == 0
    ch = s.change.set_index(["method", "subset"])
    assert ch.loc[("rci", "analysable"), "churn"] == pytest.approx(2 / 4)
    assert ch.loc[("rci", "all"), "churn"] == pytest.approx(2 / 6)
    assert ch.loc[("rci", "all"), "net_change"] == pytest.approx(0.0)
    # |delta| of the changed items: 3/4 and 1 -> median 7/8
    assert ch.loc[("rci", "analysable"), "median_abs_delta"] == pytest.approx(7 / 8)
    assert s.n_items == 6 and s.n_analysable == 4
    assert s.mean_delta == pytest.approx(0.0)
    assert "S_diff=0.2887" in str(s)
    assert s.classes.attrs["mixrank"]["method"] == "rci"


def test_odd_k_drops_last_sample_from_split_only():
    before = [row + [y] for row, y in zip(BEFORE, [0, 1, 1, 0, 1, 0], strict=True)]
    after = [row + [y] for row, y in zip(AFTER, [1, 0, 0, 1, 1, 0], strict=True)]
    res5 = reliable_change(hand_frame(before, after), before="old", after="new")
    res4 = reliable_change(hand_frame(), before="old", after="new")
    r5 = res5.summary().reliability
    r4 = res4.summary().reliability
    np.testing.assert_allclose(r5["r_xx"], r4["r_xx"], atol=TOL["exact"])
    assert list(r5["k"]) == [5, 5] and list(r5["k_split"]) == [4, 4]
    np.testing.assert_allclose(res5.items()["p_before"], np.mean(before, axis=1), atol=TOL["exact"])


def test_by_subject_reversal():
    # Subject A: 4 items go 0000 -> 1111 (improved), 1 stays 0101.
    # Subject B: 1 item goes 1111 -> 0000 (deteriorated), 2 stay (0011, 1100).
    before = [[0, 0, 0, 0]] * 4 + [[0, 1, 0, 1]] + [[1, 1, 1, 1], [0, 0, 1, 1], [1, 1, 0, 0]]
    after = [[1, 1, 1, 1]] * 4 + [[0, 1, 0, 1]] + [[0, 0, 0, 0], [0, 0, 1, 1], [1, 1, 0, 0]]
    subj = ["A"] * 5 + ["B"] * 3
    res = reliable_change(hand_frame(before, after, subj), before="old", after="new")
    assert list(res.items()["class"]) == ["improved"] * 4 + ["no_change", "deteriorated", "no_change",
                                                              "no_change"]
    bs = res.by_subject().set_index("subject")
    assert list(bs.columns[:3]) == ["method", "n", "n_analysable"]
    assert bs.loc["A", "net_change"] == pytest.approx(4 / 5)
    assert bs.loc["B", "net_change"] == pytest.approx(-1 / 3)
    assert bs.loc["B", "churn"] == pytest.approx(1 / 3)
    assert bs.loc["A", "mean_delta"] == pytest.approx(4 / 5)
    assert list(bs["reversal"]) == [False, True]  # overall net = 3/8 > 0
    with pytest.raises(DesignError, match="by=None"):
        reliable_change(hand_frame(before, after, subj), before="old", after="new", by=None).by_subject()


def test_vs_greedy_sample_and_frame():
    res = reliable_change(hand_frame(), before="old", after="new")
    # sample 1: before (1,0,0,0,0,1), after (1,1,0,0,0,0): q2 flips up (RCI no_change: FP),
    # q5 unchanged (RCI improved: FN), q6 flips down (agrees with deteriorated).
    t = res.vs_greedy(1).set_index("outcome")
    assert t["n"].to_dict() == {"agree_change": 1, "false_negative": 1, "opposite_flip": 0,
                                "false_positive": 1, "agree_no_change": 3}
    assert t.loc["false_negative", "rate"] == pytest.approx(1 / 2)
    assert t.loc["false_positive", "rate"] == pytest.approx(1 / 2)
    assert t.loc["false_positive", "share"] == pytest.approx(1 / 6)
    # a greedy frame in which q5 goes 1 -> 0: an opposite flip
    g = hand_frame().query("sample == 0").copy()
    g.loc[(g["question"] == "q5") & (g["model"] == "old"), "correct"] = 1
    g.loc[(g["question"] == "q5") & (g["model"] == "new"), "correct"] = 0
    t2 = res.vs_greedy(g).set_index("outcome")
    assert t2.loc["opposite_flip", "n"] == 1 and t2.loc["agree_change", "n"] == 1
    # explicit version selectors on a frame (runs of one model)
    t3 = res.vs_greedy(hand_frame(), before={"model": "old", "sample": 1},
                       after={"model": "new", "sample": 1})
    np.testing.assert_array_equal(t3["n"], res.vs_greedy(1)["n"])
    with pytest.raises(DataError, match="one greedy run per item"):
        res.vs_greedy(hand_frame())
    with pytest.raises(DataError, match="DataFrame only"):
        res.vs_greedy(1, before="old")


def test_selectors_by_mapping_match_model_names():
    df = hand_frame()
    a = reliable_change(df, before="old", after="new").items()
    b = reliable_change(df, before={"model": ["old"]}, after={"model": "new"}).items()
    pd.testing.assert_frame_equal(a, b)
    res = reliable_change(df, before={"model": ["old"]}, after={"model": "new"})
    assert res.before == "model == 'old'" and res.after == "model == 'new'"


def test_invariance_row_order_and_swap():
    df = hand_frame()
    base = reliable_change(df, before="old", after="new")
    for seed in range(3):
        shuf = df.sample(frac=1.0, random_state=seed)
        pd.testing.assert_frame_equal(reliable_change(shuf, before="old", after="new").items(),
                                      base.items())
    swap = reliable_change(df, before="new", after="old")
    np.testing.assert_allclose(swap.items()["rci"], -base.items()["rci"], atol=TOL["exact"])
    flip = {"improved": "deteriorated", "deteriorated": "improved"}
    assert list(swap.items()["class"]) == [flip.get(c, c) for c in base.items()["class"]]
    assert swap.summary().s_diff == pytest.approx(base.summary().s_diff, abs=TOL["exact"])


def test_input_not_modified():
    df = hand_frame()
    copy = df.copy()
    reliable_change(df, before="old", after="new", method="eb").summary()
    pd.testing.assert_frame_equal(df, copy)


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("mutate, exc, pattern", [
    (lambda d: d[d["sample"] == 0], DataError, "K >= 2"),
    (lambda d: d.drop(columns="sample"), DataError, "sample"),
    (lambda d: d[~((d["question"] == "q2") & (d["sample"] == 3))], DataError, "unequal sample counts"),
    (lambda d: d.assign(question=np.where(d["model"] == "new", d["question"] + "x", d["question"])),
     DataError, "share no items"),
    (lambda d: pd.concat([d, d.assign(prompt="p1")]), DataError, "add it to the item key"),
    (lambda d: pd.concat([d, d]), DataError, "Remove the duplicated rows"),
    (lambda d: d.assign(correct=d["correct"] * 2.0), DataError, r"\[0, 1\]"),
    (lambda d: d.assign(correct=np.where(d.index == 0, np.nan, d["correct"])), DataError, "missing"),
])
def test_data_errors(mutate, exc, pattern):
    with pytest.raises(exc, match=pattern):
        reliable_change(mutate(hand_frame()), before="old", after="new")


def test_selector_errors():
    df = hand_frame()
    with pytest.raises(DataError, match="do not occur"):
        reliable_change(df, before="old", after="newer")
    with pytest.raises(DataError, match="share 12 rows"):
        reliable_change(df, before={"sample": [0, 1]}, after={"sample": [1, 2]})
    with pytest.raises(DataError, match="not in the data"):
        reliable_change(df, before={"run": [0]}, after={"run": [1]})
    with pytest.raises(DataError, match="model column"):
        reliable_change(df.drop(columns="model"), before="old", after="new")
    with pytest.raises(DataError, match="split="):
        reliable_change(df, before="old", after="new", split="random")
    with pytest.raises(DataError, match="method="):
        reliable_change(df, before="old", after="new", method="bayes")


def test_prompt_in_item_key_resolves_duplicates():
    df = pd.concat([hand_frame(), hand_frame().assign(prompt="p1")])
    res = reliable_change(df, before="old", after="new", item=("subject", "question", "prompt"))
    assert len(res.items()) == 12


def test_items_only_in_one_version_warn_and_drop():
    df = hand_frame()
    extra = df[df["question"] == "q1"].assign(question="q7")
    with pytest.warns(MissingDataWarning, match="1 item"):
        res = reliable_change(pd.concat([df, extra[extra["model"] == "old"]]), before="old", after="new")
    assert len(res.items()) == 6


def test_degenerate_reliability():
    # half means constant across items -> undefined r
    flat = [[1, 0, 1, 0]] * 6
    with pytest.raises(DesignError, match="undefined"):
        reliable_change(hand_frame(flat, AFTER), before="old", after="new")
    # halves that rank the items in opposite orders -> r < 0, warned, SEM = SD
    neg = [[1, 1, 0, 0], [0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 0], [0, 0, 1, 0]]
    with pytest.warns(MixrankWarning, match="r_xx"):
        res = reliable_change(hand_frame(neg, AFTER), before="old", after="new")
    rel = res.summary().reliability.set_index("role")
    assert rel.loc["before", "r_xx"] < 0
    assert rel.loc["before", "sem"] == pytest.approx(rel.loc["before", "std_dev"], abs=TOL["exact"])


# --------------------------------------------------------------------------- simulation
def _frame(yb: np.ndarray, ya: np.ndarray) -> pd.DataFrame:
    n, k = yb.shape
    q = np.repeat(np.arange(n), k)
    s = np.tile(np.arange(k), n)
    return pd.DataFrame({"model": np.repeat(["old", "new"], n * k), "subject": "s",
                         "question": np.r_[q, q], "sample": np.r_[s, s],
                         "correct": np.r_[yb.ravel(), ya.ravel()]})


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 4])
def test_rci_null_rate_under_its_model(k):
    """Homoscedastic errors (the classical RCI's model): unchanged items are called at the nominal 5%.

    1000 items, true means U(0.3, 0.7); 20% change by +-0.1; each sample adds
    N(0, 0.03^2) error (at least 6.7 SD from 0 and 1, so scores stay in [0, 1]).
    The per-replicate false-alarm share over unchanged items has Monte Carlo
    SE sd/sqrt(R); the band is 3 SE on each side of the nominal 0.05.
    """
    rng = np.random.default_rng(20240817 + k)
    reps, n = 100, 1000
    rates = []
    for _ in range(reps):
        m = rng.uniform(0.3, 0.7, n)
        changed = rng.random(n) < 0.2
        ma = m + np.where(changed, rng.choice([-0.1, 0.1], n), 0.0)
        yb = m[:, None] + rng.normal(0, 0.03, (n, k))
        ya = ma[:, None] + rng.normal(0, 0.03, (n, k))
        it = reliable_change(_frame(yb, ya), before="old", after="new", by=None).items()
        called = it["class"].isin(["improved", "deteriorated"]).to_numpy()
        analysable = (it["class"] != "floor_ceiling").to_numpy()
        rates.append(called[~changed & analysable].mean())
    mean, se = np.mean(rates), np.std(rates, ddof=1) / np.sqrt(reps)
    assert abs(mean - 0.05) <= 3 * se, f"false-alarm rate {mean:.4f} (MC SE {se:.4f}) vs nominal 0.05"


@pytest.mark.slow
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "classical RCI uses one SEM for all items; with 0/1 samples the error variance p(1-p)/K is "
    "heteroscedastic, so unchanged analysable items near p = 1/2 are called changed far more often "
    "than 5% (16.5% for Beta(0.5, 0.5) difficulties, K = 4). method='eb' controls this."))
def test_rci_null_rate_binary_items():
    rng = np.random.default_rng(7)
    reps, n, k = 40, 1000, 4
    rates = []
    for _ in range(reps):
        p = rng.beta(0.5, 0.5, n)
        changed = rng.random(n) < 0.2
        pa = np.where(changed, np.clip(p + rng.choice([-0.3, 0.3], n), 0, 1), p)
        yb = (rng.random((n, k)) < p[:, None]).astype(int)
        ya = (rng.random((n, k)) < pa[:, None]).astype(int)
        it = reliable_change(_frame(yb, ya), before="old", after="new", by=None).items()
        called = it["class"].isin(["improved", "deteriorated"]).to_numpy()
        analysable = (it["class"] != "floor_ceiling").to_numpy()
        rates.append(called[~changed & analysable].mean())
    mean, se = np.mean(rates), np.std(rates, ddof=1) / np.sqrt(reps)
    assert mean <= 0.05 + 3 * se, f"false-alarm rate among unchanged analysable items {mean:.4f}"


# --------------------------------------------------------------------------- real null check
def _stability(shared_data):
    d = shared_data("llm_stability")
    res = reliable_change(d, before={"sample": [0, 1]}, after={"sample": [2, 3]}, method="eb")
    wide = d.pivot_table(index=["subject", "question"], columns="sample", values="correct")
    flip_share = float((wide[0] != wide[2]).mean())
    it = res.items()
    rci_share = float(it["class"].isin(["improved", "deteriorated"]).mean())
    eb_share = float(it["eb_class"].isin(["improved", "deteriorated"]).mean())
    return res, rci_share, eb_share, flip_share


def test_llm_stability_null_numbers(shared_data):
    """One model re-run with identical settings: the vs_greedy table counts what the numbers say."""
    res, rci_share, eb_share, flip_share = _stability(shared_data)
    d = shared_data("llm_stability")
    g = res.vs_greedy(d, before={"sample": [0]}, after={"sample": [2]}).set_index(["method", "outcome"])
    n = res.summary().n_items
    n_flips = g.loc[("rci", "false_positive"), "n"] + g.loc[("rci", "agree_change"), "n"] + \
        g.loc[("rci", "opposite_flip"), "n"]
    assert n_flips / n == pytest.approx(flip_share, abs=1e-12)
    # under a complete null every discovery is false; FDR control at 0.05 bounds P(any) by 0.05
    assert eb_share == 0.0, (f"EB (fdr=0.05) called {eb_share:.4f} of items changed on a null re-run; "
                             f"RCI share {rci_share:.4f}, single-run flip share {flip_share:.4f}")


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "With K = 2 per version p is in {0, 1/2, 1} and S_diff = 0.232, so 1.96 S_diff = 0.454 < 1/2: every "
    "item whose two-run mean moves is 'reliable'. The pooled SEM is dominated by the 81% of items that "
    "never change, so the RCI calls 15.1% of items changed, more than the 10.1% single-run flips "
    "between runs 0 and 2 (the issue's 'about a fifth' is the share changing across all five runs)."))
def test_llm_stability_rci_far_below_flip_share(shared_data):
    _, rci_share, _, flip_share = _stability(shared_data)
    # Under the null each item is called with nominal probability alpha = 0.05 (|RCI| > z_0.975);
    # 3 binomial SEs over the 1407 items. flip share ~ 0.10 = 2 alpha, so this is 'far below'.
    n, alpha = 1407, 0.05
    bound = alpha + 3 * math.sqrt(alpha * (1 - alpha) / n)
    assert rci_share <= bound and rci_share < flip_share / 2, (
        f"RCI share {rci_share:.4f} vs bound {bound:.4f}; single-run flip share {flip_share:.4f}")


def test_no_warnings_on_clean_input():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reliable_change(hand_frame(), before="old", after="new", method="eb")
