"""Rank confidence intervals (docs/methods.md §7).

References used here:
* hand-worked leaderboards of 3-5 models: every Holm / BH / Bonferroni step
  is traced in the comments (alpha = 0.05; marginal families at alpha/2);
* the max-t machinery against closed forms (two models: |Z|; independent
  equal-variance models: the studentized range, scipy.stats.studentized_range);
* the raw-data procedure against mixrank.fit(method="aggregate") and a direct
  paired t on unit means;
* ChemBench / JailbreakBench: subject as the unit never gives narrower
  intervals than cells as units.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

import mixrank
from mixrank.errors import DataError, DesignError, MixrankWarning
from mixrank.inference.ranks import (
    rank_intervals,
    rank_intervals_from_contrasts,
    rank_intervals_from_tests,
    rank_intervals_of,
)
from mixrank.inference.ranks.maxt import joint_covariance, stepdown_maxt


def _intervals(tab: pd.DataFrame) -> dict[str, tuple[int, int]]:
    return {m: (int(lo), int(hi)) for m, lo, hi in
            zip(tab["model"], tab["rank_lower"], tab["rank_upper"], strict=True)}


def _upper_to_matrix(models, upper: dict[tuple[str, str], float]) -> np.ndarray:
    """P[j, k] = p(j beats k); given for j above k, the reverse is 1 - p (continuous test)."""
    pos = {m: i for i, m in enumerate(models)}
    P = np.full((len(models), len(models)), np.nan)
    for (a, b), p in upper.items():
        P[pos[a], pos[b]] = p
        P[pos[b], pos[a]] = 1.0 - p
    return P


# --------------------------------------------------------------- 3 models --

THREE = {"a": 0.90, "b": 0.70, "c": 0.65}
THREE_P = {("a", "b"): 0.001, ("a", "c"): 0.0001, ("b", "c"): 0.2}


def test_three_models_marginal_holm():
    # Each family has 2 hypotheses at alpha/2 = 0.025; Holm thresholds 0.0125, 0.025.
    # a "beats" {a>b .001, a>c .0001}: .0001 <= .0125, .001 <= .025 -> 2 rejected, U_a = 3-2 = 1
    # a "beaten" {b>a .999, c>a .9999}: none -> L_a = 1
    # b beats {b>a .999, b>c .2}: .2 > .0125 -> none, U_b = 3
    # b beaten {a>b .001, c>b .8}: .001 <= .0125, .8 > .025 -> 1, L_b = 2
    # c beats {c>a, c>b}: none, U_c = 3; c beaten {a>c .0001, b>c .2}: 1, L_c = 2
    P = _upper_to_matrix(list(THREE), THREE_P)
    tab = rank_intervals_from_tests(THREE, P, coverage="marginal")
    assert _intervals(tab) == {"a": (1, 1), "b": (2, 3), "c": (2, 3)}
    assert tab["rank"].tolist() == [1, 2, 3]
    assert tab["model"].tolist() == ["a", "b", "c"]
    assert (tab["level"] == 0.95).all()
    meta = tab.attrs["mixrank"]
    assert meta["coverage"] == "marginal" and meta["method"] == "holm"
    assert meta["alpha"] == pytest.approx(0.05)
    pw = pd.DataFrame(meta["pairwise"]).set_index(["model_a", "model_b"])
    # (a, b) in a's "beats" family: Holm adjusted .001 (= max(2*.0001, 1*.001)), doubled -> .002
    assert pw.loc[("a", "b"), "p_adjusted"] == pytest.approx(0.002)
    # (a, b) in b's "beaten" family {.001, .8}: Holm 2*.001 = .002, doubled -> .004
    assert pw.loc[("a", "b"), "p_adjusted_b"] == pytest.approx(0.004)
    assert pw.loc[("b", "c"), "p_value"] == pytest.approx(0.2)


def test_three_models_simultaneous_holm():
    # One family of 6: sorted .0001 (<= .05/6), .001 (<= .05/5), .2 (> .05/4) -> stop.
    # Rejected a>c, a>b: a [1, 1]; b [2, 3]; c [2, 3] (same as marginal here).
    P = _upper_to_matrix(list(THREE), THREE_P)
    tab = rank_intervals_from_tests(THREE, P, coverage="simultaneous")
    assert _intervals(tab) == {"a": (1, 1), "b": (2, 3), "c": (2, 3)}
    pw = pd.DataFrame(tab.attrs["mixrank"]["pairwise"]).set_index(["model_a", "model_b"])
    assert pw.loc[("a", "c"), "p_adjusted"] == pytest.approx(6 * 0.0001)
    assert pw.loc[("a", "b"), "p_adjusted"] == pytest.approx(5 * 0.001)
    assert (pw["p_adjusted"] == pw["p_adjusted_b"]).all()
    assert pw["rejected"].sum() == 2


# --------------------------------------------------------------- 4 models --

FOUR = {"w": 0.80, "x": 0.75, "y": 0.70, "z": 0.60}
FOUR_P = {("w", "x"): 0.02, ("w", "y"): 0.004, ("w", "z"): 0.0001,
          ("x", "y"): 0.03, ("x", "z"): 0.0049, ("y", "z"): 0.011}


def test_four_models_marginal_holm():
    # Families of 3 at alpha/2 = .025; Holm thresholds .00833, .0125, .025.
    # w beats {w>x .02, w>y .004, w>z .0001}: .0001, .004 (<= .0125), .02 (<= .025) -> 3, U_w = 1
    # w beaten: none -> L_w = 1                                               => w [1, 1]
    # x beats {x>w .98, x>y .03, x>z .0049}: .0049 <= .00833; .03 > .0125 -> 1, U_x = 3
    # x beaten {w>x .02, y>x .97, z>x .9951}: .02 > .00833 -> 0, L_x = 1      => x [1, 3]
    # y beats {y>w, y>x, y>z .011}: .011 > .00833 -> 0, U_y = 4
    # y beaten {w>y .004, x>y .03, z>y .989}: .004; .03 > .0125 -> 1, L_y = 2 => y [2, 4]
    # z beats: none, U_z = 4
    # z beaten {w>z .0001, x>z .0049, y>z .011}: .0001, .0049 (<= .0125), .011 (<= .025)
    #   -> 3, L_z = 4                                                         => z [4, 4]
    P = _upper_to_matrix(list(FOUR), FOUR_P)
    tab = rank_intervals_from_tests(FOUR, P, coverage="marginal")
    assert _intervals(tab) == {"w": (1, 1), "x": (1, 3), "y": (2, 4), "z": (4, 4)}


def test_four_models_simultaneous_holm():
    # One family of 12.  Sorted: .0001 <= .05/12 = .00417; .004 <= .05/11 = .00455;
    # .0049 <= .05/10 = .005; .011 > .05/9 = .00556 -> stop.  Rejected: w>z, w>y, x>z.
    # L: w 1, x 1, y 1 + (w>y) = 2, z 1 + (w>z, x>z) = 3
    # U: w 4 - 2 = 2, x 4 - 1 = 3, y 4, z 4
    P = _upper_to_matrix(list(FOUR), FOUR_P)
    tab = rank_intervals_from_tests(FOUR, P, coverage="simultaneous")
    assert _intervals(tab) == {"w": (1, 2), "x": (1, 3), "y": (2, 4), "z": (3, 4)}


def test_four_models_simultaneous_bh_and_bonferroni():
    # BH over 12: p_(i) <= i * .05 / 12: .0001 (.00417), .004 (.00833), .0049 (.0125),
    # .011 (.0167), .02 (.0208) pass; .03 > .025 and every later one fails -> 5 rejected:
    # w>z, w>y, x>z, y>z, w>x.  L: w 1, x 2, y 2, z 4; U: w 1, x 3, y 3, z 4.
    P = _upper_to_matrix(list(FOUR), FOUR_P)
    bh = rank_intervals_from_tests(FOUR, P, coverage="simultaneous", adjust="bh")
    hand = {"w": (1, 1), "x": (2, 3), "y": (2, 3), "z": (4, 4)}
    # the reported interval is the union with BH's marginal one (never narrower)
    marg = _intervals(rank_intervals_from_tests(FOUR, P, coverage="marginal", adjust="bh"))
    union = {m: (min(hand[m][0], marg[m][0]), max(hand[m][1], marg[m][1])) for m in hand}
    assert _intervals(bh) == union
    assert union != hand and sorted(bh.attrs["mixrank"]["widened_to_marginal"]) == ["x", "y"]
    # Bonferroni at .05/12 = .00417: .0001, .004 -> w>z, w>y.
    # L: w 1, x 1, y 2, z 2; U: w 2, x 4, y 4, z 4.
    bo = rank_intervals_from_tests(FOUR, P, coverage="simultaneous", adjust="bonferroni")
    assert _intervals(bo) == {"w": (1, 2), "x": (1, 4), "y": (2, 4), "z": (2, 4)}


# ----------------------------------------------- 5 models, tied scores --

FIVE = pd.DataFrame({"model": ["A", "B", "C", "D", "E"],
                     "estimate": [0.7, 0.7, 0.6, 0.5, 0.4], "n": [100] * 5})
FIVE_P = {("A", "B"): 0.5, ("A", "C"): 0.001, ("A", "D"): 0.0001, ("A", "E"): 0.00001,
          ("B", "C"): 0.03, ("B", "D"): 0.002, ("B", "E"): 0.0002,
          ("C", "D"): 0.04, ("C", "E"): 0.006, ("D", "E"): 0.01}


def _five_long() -> pd.DataFrame:
    rows = []
    for (a, b), p in FIVE_P.items():
        rows += [dict(model_a=a, model_b=b, p_value=p), dict(model_a=b, model_b=a, p_value=1 - p)]
    return pd.DataFrame(rows[::-1])          # any row order


def test_five_models_marginal_holm_with_tied_scores():
    # Families of 4 at .025; Holm thresholds .00625, .00833, .0125, .025.
    # A beats {A>B .5, A>C .001, A>D .0001, A>E .00001}: 3 pass (.001 <= .0125), .5 fails
    #   -> U_A = 5 - 3 = 2; A beaten: none -> L_A = 1                       => A [1, 2]
    # B beats {B>A .5, B>C .03, B>D .002, B>E .0002}: .0002, .002; .03 > .0125 -> U_B = 3
    # B beaten {A>B .5, ...}: none -> L_B = 1                               => B [1, 3]
    # C beats {C>E .006 <= .00625; C>D .04 > .00833} -> 1, U_C = 4
    # C beaten {A>C .001; B>C .03 > .00833} -> 1, L_C = 2                   => C [2, 4]
    # D beats {D>E .01 > .00625} -> 0, U_D = 5
    # D beaten {A>D .0001, B>D .002 (<= .00833), C>D .04 > .0125} -> 2, L_D = 3  => D [3, 5]
    # E beaten {A>E, B>E, C>E .006 (<= .0125), D>E .01 (<= .025)} -> 4, L_E = 5 => E [5, 5]
    tab = rank_intervals_from_tests(FIVE, _five_long(), coverage="marginal")
    assert _intervals(tab) == {"A": (1, 2), "B": (1, 3), "C": (2, 4), "D": (3, 5), "E": (5, 5)}
    # equal scores share the smallest rank
    assert dict(zip(tab["model"], tab["rank"], strict=True)) == {"A": 1, "B": 1, "C": 3,
                                                                 "D": 4, "E": 5}
    assert tab["n"].tolist() == [100] * 5
    pw = pd.DataFrame(tab.attrs["mixrank"]["pairwise"]).set_index(["model_a", "model_b"])
    # (A, E): 4 * .00001 in A's beats family and in E's beaten family, doubled
    assert pw.loc[("A", "E"), "p_adjusted"] == pytest.approx(8e-5)
    assert pw.loc[("A", "E"), "p_adjusted_b"] == pytest.approx(8e-5)


def test_five_models_simultaneous_holm():
    # Family of 20: .00001 (<= .0025), .0001 (<= .00263), .0002 (<= .00278),
    # .001 (<= .00294), .002 (<= .003125), .006 > .00333 -> stop; rejected A>E, A>D, B>E,
    # A>C, B>D.  L: A 1, B 1, C 2, D 3, E 3.  U: A 5-3 = 2, B 5-2 = 3, C 5, D 5, E 5.
    tab = rank_intervals_from_tests(FIVE, _five_long(), coverage="simultaneous")
    assert _intervals(tab) == {"A": (1, 2), "B": (1, 3), "C": (2, 5), "D": (3, 5), "E": (3, 5)}


def test_square_dataframe_and_array_inputs_agree():
    P = _upper_to_matrix(list(FIVE["model"]), FIVE_P)
    sq = pd.DataFrame(P, index=FIVE["model"], columns=FIVE["model"])
    a = rank_intervals_from_tests(FIVE, P)
    b = rank_intervals_from_tests(FIVE, sq.iloc[::-1, ::-1])     # reordered labels
    c = rank_intervals_from_tests(FIVE, _five_long())
    assert _intervals(a) == _intervals(b) == _intervals(c)


def test_pairwise_table_reproduces_bounds():
    P = _upper_to_matrix(list(FIVE["model"]), FIVE_P)
    for coverage in ("marginal", "simultaneous"):
        tab = rank_intervals_from_tests(FIVE, P, coverage=coverage)
        pw = pd.DataFrame(tab.attrs["mixrank"]["pairwise"])
        assert len(pw) == 20
        assert list(pw.columns) == ["model_a", "model_b", "estimate", "std_error", "df", "statistic",
                                    "n", "p_value", "p_adjusted", "rejected", "p_adjusted_b",
                                    "rejected_b"]
        assert ((pw["p_adjusted"] <= 0.05) == pw["rejected"]).all()
        for m, lo, hi in zip(tab["model"], tab["rank_lower"], tab["rank_upper"], strict=True):
            assert lo == 1 + pw[(pw["model_b"] == m) & pw["rejected_b"]].shape[0]
            assert hi == 5 - pw[(pw["model_a"] == m) & pw["rejected"]].shape[0]


def test_long_table_with_old_column_names_is_refused():
    # model_a/model_b is the package's pair vocabulary; model/other is named in the error
    old = _five_long().rename(columns={"model_a": "model", "model_b": "other"})
    with pytest.raises(DesignError, match=r"expected columns 'model_a', 'model_b', 'p_value' "
                                          r"\(rename model -> model_a, other -> model_b"):
        rank_intervals_from_tests(FIVE, old)
    with pytest.raises(DesignError, match=r"'model_a', 'p_value'.*expected columns 'model_a', "
                                          r"'model_b', 'p_value', or a square table"):
        rank_intervals_from_tests(FIVE, _five_long().drop(columns="model_b"))


def test_inputs_not_modified():
    long = _five_long()
    before = long.copy()
    rank_intervals_from_tests(FIVE, long)
    pd.testing.assert_frame_equal(long, before)


@pytest.mark.filterwarnings("ignore::mixrank.errors.MixrankWarning")
@settings(max_examples=60, deadline=None)
@given(st.integers(3, 6).flatmap(lambda m: st.tuples(
    st.just(m),
    st.lists(st.floats(0, 1), min_size=m, max_size=m),
    st.lists(st.floats(1e-6, 1 - 1e-6), min_size=m * (m - 1) // 2, max_size=m * (m - 1) // 2),
    st.permutations(range(m)))),
    st.sampled_from(["marginal", "simultaneous"]), st.sampled_from(["holm", "bh"]))
def test_relabelling_invariance_and_bounds(case, coverage, method):
    M, scores, ps, perm = case
    models = [f"m{i}" for i in range(M)]
    it = iter(ps)
    upper = {(models[j], models[k]): next(it) for j in range(M) for k in range(j + 1, M)}
    P = _upper_to_matrix(models, upper)
    tab = rank_intervals_from_tests(dict(zip(models, scores, strict=True)), P,
                                    coverage=coverage, adjust=method)
    pm = [models[i] for i in perm]
    P2 = _upper_to_matrix(pm, upper)
    tab2 = rank_intervals_from_tests({m: scores[models.index(m)] for m in pm}, P2,
                                     coverage=coverage, adjust=method)
    assert _intervals(tab) == _intervals(tab2)
    assert (tab["rank_lower"] >= 1).all() and (tab["rank_upper"] <= M).all()
    assert (tab["rank_lower"] <= tab["rank_upper"]).all()
    # a higher level never narrows an interval
    wide = rank_intervals_from_tests(dict(zip(models, scores, strict=True)), P, level=0.99,
                                     coverage=coverage, adjust=method)
    a, b = _intervals(tab), _intervals(wide)
    assert all(b[m][0] <= a[m][0] and b[m][1] >= a[m][1] for m in models)


# ------------------------------------------------------------------ max-t --

def test_joint_covariance_reproduces_consistent_variances():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(5, 5))
    S = A @ A.T                                     # any covariance of 5 estimates
    d = np.diag(S)
    v = d[:, None] + d[None, :] - 2 * S
    C, clipped = joint_covariance(v)
    dc = np.diag(C)
    np.testing.assert_allclose(dc[:, None] + dc[None, :] - 2 * C, v, atol=1e-10)
    assert clipped == pytest.approx(0.0, abs=1e-12)
    # inconsistent variances (violating the triangle inequality of sds) are projected
    bad = np.array([[0, 1, 1], [1, 0, 9.0], [1, 9.0, 0]])
    C2, clipped2 = joint_covariance(bad)
    assert np.linalg.eigvalsh(C2).min() >= -1e-12 and clipped2 > 0


def test_maxt_two_models_is_two_sided_then_one_sided():
    # Family {H_ab, H_ba} with Z_ba = -Z_ab: step 1 uses max(Z, -Z) = |Z|, so the adjusted
    # p-value of the significant direction is 2p; the other one is 1 - p (then monotone).
    p = 0.01
    P = np.array([[np.nan, p], [1 - p, np.nan]])
    C = np.array([[1.0, 0.0], [0.0, 1.0]])
    B = 200_000
    adj, adj_o = stepdown_maxt(P, C, coverage="simultaneous", B=B, rng=np.random.default_rng(1))
    se = np.sqrt(2 * p * (1 - 2 * p) / B)
    assert abs(adj[0, 1] - 2 * p) < 4 * se
    assert np.array_equal(adj, adj_o, equal_nan=True)
    # marginal: each side family has one hypothesis at alpha/2 -> exactly p, reported as 2p
    adj_m, _ = stepdown_maxt(P, C, coverage="marginal", B=B, rng=np.random.default_rng(2))
    assert abs(adj_m[0, 1] - 2 * p) < 8 * se


def test_maxt_first_step_is_studentized_range():
    # Independent, equal-variance estimates: max over directed pairs of (X_j - X_k)/sqrt(2)
    # is range/sqrt(2), so the first-step adjusted p-value is P(Q_{M,inf} >= sqrt(2) t*).
    M, B = 5, 100_000
    z = 3.2                                            # most significant pair on normal scale
    P = np.full((M, M), 0.6)
    P[0, 4] = special.ndtr(-z)
    np.fill_diagonal(P, np.nan)
    adj, _ = stepdown_maxt(P, np.eye(M), coverage="simultaneous", B=B,
                           rng=np.random.default_rng(5))
    ref = stats.studentized_range.sf(np.sqrt(2) * z, M, np.inf)
    assert abs(adj[0, 4] - ref) < 4 * np.sqrt(ref * (1 - ref) / B)


def _contrasts_from_cov(models, mu, S):
    rows = []
    for j in range(len(models)):
        for k in range(j + 1, len(models)):
            rows.append(dict(model_a=models[j], model_b=models[k], estimate=mu[j] - mu[k],
                             std_error=np.sqrt(S[j, j] + S[k, k] - 2 * S[j, k]), df=np.inf))
    return pd.DataFrame(rows)


@pytest.mark.parametrize("coverage, step", [("marginal", 2.6), ("simultaneous", 3.0)])
def test_maxt_is_seeded_and_no_wider_than_holm_here(coverage, step):
    # 10 equicorrelated estimates, adjacent models `step` standard errors apart: Holm's
    # first-step bound (z = 3.26 for 90 hypotheses) is above the max-t one (studentized
    # range q(10, inf) / sqrt(2) = 3.16), so max-t separates pairs that Holm cannot.
    M = 10
    models = [f"m{i}" for i in range(M)]
    S = 0.01 * (np.eye(M) + 0.5)                       # Var(X_j - X_k) = 0.02
    mu = np.arange(M) * step * np.sqrt(0.02)
    con = _contrasts_from_cov(models, mu, S)
    scores = dict(zip(models, mu, strict=True))
    t1 = rank_intervals_from_contrasts(scores, con, adjust="maxt", coverage=coverage, rng=7)
    t2 = rank_intervals_from_contrasts(scores, con, adjust="maxt", coverage=coverage, rng=7)
    pd.testing.assert_frame_equal(t1, t2)
    holm = rank_intervals_from_contrasts(scores, con, adjust="holm", coverage=coverage)
    w = lambda t: (t["rank_upper"] - t["rank_lower"]).to_numpy()  # noqa: E731
    assert (w(t1) <= w(holm)).all() and w(t1).sum() < w(holm).sum()
    assert t1.attrs["mixrank"]["B"] == 2000
    # adjusted p-values of max-t never exceed Holm's (beyond Monte Carlo error)
    pw, hp = pd.DataFrame(t1.attrs["mixrank"]["pairwise"]), pd.DataFrame(holm.attrs["mixrank"]["pairwise"])
    assert (pw["p_adjusted"] <= hp["p_adjusted"] + 0.01).all()


# ------------------------------------------------------------- fit path --

@pytest.fixture(scope="module")
def example_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixrankWarning)
        return mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())


def test_fit_path_matches_contrasts(example_fit):
    # Holm on the fit path (its default here is the unit randomization step-down)
    tab = example_fit.rank_intervals(coverage="simultaneous", adjust="holm")
    scores = example_fit.model_scores()
    assert sorted(tab["model"]) == sorted(scores["model"])
    assert tab.set_index("model")["estimate"].to_dict() == pytest.approx(
        scores.set_index("model")["estimate"].to_dict())
    pw = pd.DataFrame(tab.attrs["mixrank"]["pairwise"]).set_index(["model_a", "model_b"])
    c = example_fit.contrasts()
    # the contrasts' tests here are the unit sign flips (their default on this path): "a
    # better" is p_greater, "b better" half the two-sided p where the estimate is negative
    # (symmetric flips), else 1 - p_greater (never below 0.5)
    assert c.attrs["mixrank"]["ci_method"] == "randomization"
    for r in c.itertuples():
        assert pw.loc[(r.model_a, r.model_b), "p_value"] == pytest.approx(r.p_greater, rel=1e-12)
        other = r.p_value / 2 if r.estimate < 0 else 1 - r.p_greater
        assert pw.loc[(r.model_b, r.model_a), "p_value"] == pytest.approx(other, rel=1e-9)
        assert pw.loc[(r.model_b, r.model_a), "estimate"] == pytest.approx(-r.estimate)
        assert pw.loc[(r.model_a, r.model_b), "df"] == pytest.approx(r.df)
    # the pure core given the same p-values gives the same intervals
    P = pw.reset_index()[["model_a", "model_b", "p_value"]]
    core = rank_intervals_from_tests(scores, P, coverage="simultaneous")
    assert _intervals(core) == _intervals(tab)
    meta = tab.attrs["mixrank"]
    assert meta["unit"] == "subject" and meta["estimand"] == "cells"


def test_fit_method_delegates(example_fit):
    a = example_fit.rank_intervals(0.9, coverage="marginal", adjust="maxt", draws=500, rng=3)
    b = rank_intervals_of(example_fit, level=0.9, coverage="marginal", adjust="maxt", draws=500,
                           rng=3)
    pd.testing.assert_frame_equal(a, b)
    assert (a["level"] == 0.9).all()


# ------------------------------------------------------------ data path --

def test_data_path_equals_aggregate_fit():
    df = mixrank.load_example()
    for formula, unit in [("correct ~ model + (1|subject)", "subject"), ("correct ~ model", None)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MixrankWarning)
            agg = mixrank.fit(formula, df, method="aggregate")
        for coverage in ("marginal", "simultaneous"):
            a = rank_intervals(df, unit=unit, coverage=coverage)
            b = agg.rank_intervals(coverage=coverage)
            assert _intervals(a) == _intervals(b)
            pa = pd.DataFrame(a.attrs["mixrank"]["pairwise"]).set_index(["model_a", "model_b"]).sort_index()
            pb = pd.DataFrame(b.attrs["mixrank"]["pairwise"]).set_index(["model_a", "model_b"]).sort_index()
            np.testing.assert_allclose(pa["p_value"], pb["p_value"], rtol=1e-9, atol=1e-15)
            np.testing.assert_allclose(pa["estimate"], pb["estimate"], rtol=1e-12, atol=1e-15)
        f = rank_intervals(df, formula=formula)
        assert _intervals(f) == _intervals(rank_intervals(df, unit=unit))


def test_data_path_pair_by_hand():
    # unit means of d for one pair, then R's t.test(x, mu = 0, alternative = "greater")
    df = mixrank.load_example()
    tab = rank_intervals(df, unit="subject")
    pw = pd.DataFrame(tab.attrs["mixrank"]["pairwise"]).set_index(["model_a", "model_b"])
    w = df.pivot_table(index=["subject", "question", "prompt"], columns="model",
                       values="correct")
    um = (w["m01"] - w["m02"]).groupby(level="subject").mean().to_numpy()
    t = um.mean() / (um.std(ddof=1) / np.sqrt(len(um)))
    assert pw.loc[("m01", "m02"), "statistic"] == pytest.approx(t)
    assert pw.loc[("m01", "m02"), "p_value"] == pytest.approx(stats.t.sf(t, len(um) - 1))
    assert pw.loc[("m02", "m01"), "p_value"] == pytest.approx(stats.t.sf(-t, len(um) - 1))
    assert pw.loc[("m01", "m02"), "n"] == 12


def test_data_path_wilcoxon_matches_scipy():
    df = mixrank.load_example()
    tab = rank_intervals(df, unit="subject", test="wilcoxon")
    pw = pd.DataFrame(tab.attrs["mixrank"]["pairwise"]).set_index(["model_a", "model_b"])
    w = df.pivot_table(index=["subject", "question", "prompt"], columns="model",
                       values="correct")
    um = (w["m03"] - w["m05"]).groupby(level="subject").mean().to_numpy()
    # R's rule (as paired.wilcoxon): exact below 50 without ties or zeros, else normal
    nz = um[um != 0]
    exact = len(nz) == len(um) and len(np.unique(np.abs(nz))) == len(nz)
    ref = stats.wilcoxon(um, alternative="greater", zero_method="wilcox", correction=False,
                         method="exact" if exact else "approx")
    assert pw.loc[("m03", "m05"), "p_value"] == pytest.approx(ref.pvalue)
    assert pw.loc[("m03", "m05"), "statistic"] == pytest.approx(ref.statistic)
    assert tab.attrs["mixrank"]["test"] == "wilcoxon"


def test_identical_models_are_not_separated():
    df = mixrank.simulate(3, 4, 5, rng=2)
    twin = df[df["model"] == "m01"].assign(model="m00")
    tab = rank_intervals(pd.concat([df, twin]), unit="subject")
    pw = pd.DataFrame(tab.attrs["mixrank"]["pairwise"]).set_index(["model_a", "model_b"])
    assert pw.loc[("m00", "m01"), "p_value"] == 1.0 and pw.loc[("m01", "m00"), "p_value"] == 1.0


# -------------------------------------------------- unit vs cells widths --

def _widths(tab):
    return (tab["rank_upper"] - tab["rank_lower"]).set_axis(tab["model"])


def _check_wider(wide: pd.DataFrame, narrow: pd.DataFrame, label: str) -> None:
    ws, wc = _widths(wide), _widths(narrow).reindex(_widths(wide).index)
    bad = ws[ws < wc]
    assert bad.empty, (f"{label}: subject-unit interval narrower than cell-unit interval for "
                       f"{bad.index.tolist()}")


@pytest.mark.filterwarnings("ignore::mixrank.errors.MixrankWarning")
@pytest.mark.parametrize("name", ["chembench", "jailbreakbench"])
def test_subject_unit_at_least_as_wide_as_cells(shared_data, name):
    df = shared_data(name)
    if name == "chembench":
        df = df[df["prompt"] == "default"]
    # (JailbreakBench: models were attacked with different methods, so mean scores over
    # each model's own cells order gpt-4 and llama-2 differently from their paired
    # comparison on common cells; the MixrankWarning saying so is expected there.)
    subj = mixrank.fit("correct ~ model + (1|subject)", df)
    # no random term: cells are the units (the REML fit is the paired t on cells)
    cells = mixrank.fit("correct ~ model", df)
    for coverage in ("marginal", "simultaneous"):
        for method in ("holm", "maxt"):
            _check_wider(subj.rank_intervals(coverage=coverage, adjust=method, rng=11),
                         cells.rank_intervals(coverage=coverage, adjust=method, rng=11),
                         f"{name} fit {coverage} {method}")
        _check_wider(rank_intervals(df, unit="subject", coverage=coverage),
                     rank_intervals(df, unit=None, coverage=coverage),
                     f"{name} data {coverage}")


# ---------------------------------------------------------------- errors --

def test_error_one_model():
    with pytest.raises(DataError, match="at least two models"):
        rank_intervals_from_tests({"a": 0.5}, np.full((1, 1), np.nan))
    one = mixrank.simulate(1, 3, 4, rng=1)
    with pytest.raises(DataError, match="at least two models"):
        rank_intervals(one, unit="subject")


def test_error_nan_estimates():
    P = _upper_to_matrix(list(THREE), THREE_P)
    with pytest.raises(DataError, match="'b'"):
        rank_intervals_from_tests({"a": 0.9, "b": np.nan, "c": 0.6}, P)
    con = pd.DataFrame(dict(model_a=["a", "a", "b"], model_b=["b", "c", "c"],
                            estimate=[0.1, np.nan, 0.0], std_error=[0.1, 0.1, 0.1],
                            df=[10.0, 10.0, 10.0]))
    with pytest.raises(DataError, match=r"\('a', 'c'\)"):
        rank_intervals_from_contrasts(THREE, con)
    P[0, 2] = np.nan
    with pytest.raises(DataError, match="NaN"):
        rank_intervals_from_tests(THREE, P)


def test_error_pairs_without_common_cells():
    # c is scored only on questions that a never saw: (a, c) cannot be compared
    df = mixrank.simulate(3, 4, 6, rng=4)
    q = sorted(df["question"].unique())
    half = set(q[: len(q) // 2])
    df = df[~((df["model"] == "m01") & ~df["question"].isin(half))
            & ~((df["model"] == "m03") & df["question"].isin(half))]
    with pytest.raises(DataError, match=r"\('m01', 'm03'\)"):
        rank_intervals(df, unit="subject")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixrankWarning)
        res = mixrank.fit("correct ~ model + (1|subject)", df)
    with pytest.raises(DataError, match=r"not fitted: \('m01', 'm03'\)"):
        res.rank_intervals()
    long = _five_long()
    cd = ((long["model_a"] == "C") & (long["model_b"] == "D")) | (
        (long["model_a"] == "D") & (long["model_b"] == "C"))
    with pytest.raises(DataError, match=r"no test for 2 ordered pair\(s\), e.g. \('C', 'D'\)"):
        rank_intervals_from_tests(FIVE, long[~cd])


def test_error_subset_of_pairs_fitted(example_fit):
    sub = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example(),
                      pairs=[("m01", "m02"), ("m01", "m03"), ("m02", "m03")])
    with pytest.raises(DataError, match="were not fitted"):
        sub.rank_intervals()


def test_error_options():
    P = _upper_to_matrix(list(THREE), THREE_P)
    with pytest.raises(DesignError, match="coverage"):
        rank_intervals_from_tests(THREE, P, coverage="joint")
    with pytest.raises(DesignError, match="maxt"):
        rank_intervals_from_tests(THREE, P, adjust="maxt")
    with pytest.raises(DesignError, match="level"):
        rank_intervals_from_tests(THREE, P, level=95)
    with pytest.raises(DesignError, match="test="):
        rank_intervals(mixrank.load_example(), test="sign")
    with pytest.raises(DesignError, match="random terms"):
        rank_intervals(mixrank.load_example(),
                       formula="correct ~ model + (1|subject) + (1|prompt)")
    with pytest.raises(DataError, match=r"shape \(2, 2\)"):
        rank_intervals_from_tests(THREE, np.zeros((2, 2)))


def test_warns_when_point_rank_outside_interval():
    # scores say b > a, but the test says a is significantly better than b
    P = np.array([[np.nan, 1e-6], [1 - 1e-6, np.nan]])
    with pytest.warns(MixrankWarning, match="outside its rank interval"):
        tab = rank_intervals_from_tests({"a": 0.5, "b": 0.6}, P)
    assert _intervals(tab) == {"a": (1, 1), "b": (2, 2)}


def test_rank_tables_concatenate():
    """attrs hold plain records, so pd.concat (which compares attrs) works on rank tables."""
    df = mixrank.load_example()
    a = mixrank.fit("correct ~ model + (1|subject)", df).rank_intervals()
    b = mixrank.fit("correct ~ model", df).rank_intervals()
    both = pd.concat([a.assign(unit="subject"), b.assign(unit="cells")], ignore_index=True)
    assert len(both) == 2 * len(a)
    pw = pd.DataFrame(a.attrs["mixrank"]["pairwise"])
    assert {"model_a", "model_b", "p_value", "p_adjusted", "rejected"} <= set(pw.columns)
