"""Hostile fits: exact ties stay exact, a consistent non-zero gap
is evidence (the exact sign test, checked against ``mixrank.mcnemar`` and
``scipy.stats.binomtest``), identical vectors stay p = 1, and the bootstrap stability
summary survives an estimate of exactly 0.  Each case failed before its fix."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mixrank
from mixrank import DegeneratePairWarning


def quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def consistent(n_items: int = 20, subjects: int = 4) -> pd.DataFrame:
    """'a' right on every item, 'b' wrong on every item, 'c' right on every other one."""
    rows = []
    for q in range(n_items):
        s = f"s{q % subjects}"
        rows += [dict(model="a", subject=s, question=f"q{q}", correct=1),
                 dict(model="b", subject=s, question=f"q{q}", correct=0),
                 dict(model="c", subject=s, question=f"q{q}", correct=q % 2)]
    return pd.DataFrame(rows)


# ------------------------------------------------------------ §7 consistent gaps
def test_consistent_01_gap_equals_mcnemar_and_the_sign_test():
    df = consistent(20)
    with pytest.warns(DegeneratePairWarning, match="exact sign test"):
        res = mixrank.fit("correct ~ model", df, pairs=[("a", "b")])
    row = res.contrasts().iloc[0]
    mc = mixrank.mcnemar(df, a="a", b="b").iloc[0]
    bt = stats.binomtest(20, 20, 0.5)
    assert mc.discordant == 20
    assert row.p_value == pytest.approx(mc.p_value, rel=1e-12)
    assert row.p_value == pytest.approx(bt.pvalue, rel=1e-12)
    assert row.p_value == pytest.approx(2 * 0.5 ** 20, rel=1e-12) and row.p_value < 1e-5
    assert row.p_greater == pytest.approx(stats.binomtest(20, 20, 0.5, "greater").pvalue)
    assert row.estimate == 1.0 and row.std_error == 0


def test_consistent_gap_with_a_coarser_unit_counts_the_units():
    df = consistent(20, subjects=4)
    res = quiet(mixrank.fit, "correct ~ model + (1|subject)", df, pairs=[("b", "a")])
    row = res.contrasts().iloc[0]
    # 4 subjects, each with all differences -1: a sign test on 4 units
    assert row.p_value == pytest.approx(stats.binomtest(0, 4, 0.5).pvalue, rel=1e-12)
    assert row.p_value == 2 * 0.5 ** 4
    assert row.p_greater == 1.0           # 'b' better is not supported at all


@pytest.mark.parametrize("shift", [0.1, -0.25, 1e-7])
def test_shifted_continuous_scores_are_a_consistent_gap(shift):
    rng = np.random.default_rng(5)
    y = rng.random(30)
    df = pd.DataFrame({"model": ["m1"] * 30 + ["m2"] * 30,
                       "question": [f"q{i}" for i in range(30)] * 2,
                       "correct": np.concatenate([y, y + shift])})
    res = quiet(mixrank.fit, "correct ~ model", df)
    row = res.contrasts().iloc[0]
    assert row.estimate == pytest.approx(-shift, rel=1e-6)
    assert row.p_value == pytest.approx(stats.binomtest(30, 30, 0.5).pvalue, rel=1e-12)
    assert row.p_value < 1e-8


def test_identical_vectors_stay_no_evidence():
    df = consistent(20)
    twin = df[df.model == "c"].assign(model="c2")
    res = quiet(mixrank.fit, "correct ~ model + (1|subject)", pd.concat([df, twin]))
    row = res.contrasts().set_index(["model_a", "model_b"]).loc[("c", "c2")]
    assert row.estimate == 0.0 and row.p_value == 1.0 and row.p_greater == 1.0


def test_rank_intervals_use_the_sign_test():
    res = quiet(mixrank.fit, "correct ~ model", consistent(20))
    tab = res.rank_intervals().set_index("model")
    assert tab.loc["a", "rank_upper"] == 1 and tab.loc["b", "rank_lower"] == 3


# ------------------------------------------------------------ §5 exact ties
def _tied(n_models: int = 6, n_q: int = 60) -> pd.DataFrame:
    """k-of-10 pass@1 scores; four models score exactly 0 on the 'hard' third."""
    rng = np.random.default_rng(3)
    rows = []
    for m in range(n_models):
        for q in range(n_q):
            level = ("easy", "medium", "hard")[q % 3]
            p = 0.0 if (level == "hard" and m < 4) else rng.integers(0, 11) / 10
            rows.append(dict(model=f"m{m}", question=f"q{q}", subject=f"s{q % 5}",
                             correct=p, x=level))
    return pd.DataFrame(rows)


@pytest.mark.parametrize("formula", ["correct ~ model * x",
                                     "correct ~ model * x + (1|subject)"])
def test_by_tables_of_tied_zero_models_are_exactly_zero(formula):
    res = quiet(mixrank.fit, formula, _tied())
    scores = res.model_scores(by="x").query("x == 'hard'").set_index("model")
    assert (scores.loc[["m0", "m1", "m2", "m3"], "estimate"] == 0.0).all()
    gaps = res.contrasts(by="x").query("x == 'hard'")
    tied = gaps.model_a.isin(["m0", "m1", "m2", "m3"]) & gaps.model_b.isin(["m0", "m1", "m2", "m3"])
    assert (gaps.loc[tied, "estimate"] == 0.0).all()
    ranks = quiet(res.rank_intervals, by="x").query("x == 'hard'").set_index("model")
    assert ranks.loc[["m0", "m1", "m2", "m3"], "rank"].nunique() == 1


@pytest.mark.parametrize("estimand", ["cells", "units", "gls"])
def test_same_total_on_the_same_cells_is_an_exact_tie(estimand):
    """Two models with equal scores per subject but on different questions: the cells
    and units gaps are exactly 0 and the two share a point rank."""
    rng = np.random.default_rng(11)
    rows = []
    for s in range(6):
        right = rng.permutation(8)[:3]
        other = rng.permutation(8)[:3]
        for q in range(8):
            for m, val in (("m1", q in right), ("m2", q in other),
                           ("m3", rng.random() < 0.6)):
                rows.append(dict(model=m, subject=f"s{s}", question=f"q{q}", correct=int(val),
                                 prompt="p"))
    df = pd.DataFrame(rows)
    res = quiet(mixrank.fit, "correct ~ model + (1|subject)", df, estimand=estimand)
    c = res.contrasts().set_index(["model_a", "model_b"]).loc[("m1", "m2")]
    if estimand != "gls":
        assert c.estimate == 0.0
        s = res.model_scores().set_index("model").estimate
        assert s["m1"] == s["m2"]
        r = res.rank_intervals().set_index("model")["rank"]
        assert r["m1"] == r["m2"]
    # whatever the estimand, shuffling the rows changes no estimate by a single bit
    again = quiet(mixrank.fit, "correct ~ model + (1|subject)",
                  df.sample(frac=1, random_state=2), estimand=estimand).contrasts()
    assert again.estimate.tolist() == res.contrasts().estimate.tolist()


def test_noise_around_an_exact_zero_is_snapped():
    d = mixrank.simulate(2, 4, 6, 1, family="gaussian", rng=4)
    a = d.model == "m01"
    d.loc[~a, "correct"] = d.loc[a, "correct"].to_numpy() + np.tile([0.3, -0.3], int(a.sum()) // 2)
    res = quiet(mixrank.fit, "correct ~ model + (1|subject)", d, estimand="cells")
    assert res.contrasts().estimate.iloc[0] == 0.0
    # a genuine gap far above the noise is untouched
    d.loc[~a, "correct"] += 1e-9
    res = quiet(mixrank.fit, "correct ~ model + (1|subject)", d, estimand="cells")
    assert res.contrasts().estimate.iloc[0] == pytest.approx(-1e-9, rel=1e-6)


# ------------------------------------------------------------ §7 sensitivity with gap 0
def test_bootstrap_summary_with_an_estimate_of_exactly_zero():
    rows = []
    for s in range(6):
        for q in range(5):
            rows += [dict(model="a", subject=f"s{s}", question=q, correct=int(q % 2 == 0)),
                     dict(model="b", subject=f"s{s}", question=q, correct=int(q in (1, 3, 4)))]
    res = quiet(mixrank.fit, "correct ~ model + (1|subject)", pd.DataFrame(rows))
    assert res.contrasts().estimate.iloc[0] == 0.0
    tab = quiet(res.sensitivity, "bootstrap", summary=True, B=200, rng=1).iloc[0]
    assert tab.n_star_cluster == np.inf and not tab.resolved_cluster


# ------------------------------------------------------------ §7 input size
def _one_item_each(m: int) -> pd.DataFrame:
    return pd.DataFrame({"model": [f"m{i}" for i in range(m)],
                         "question": [f"q{i}" for i in range(m)],
                         "correct": np.arange(m) % 2})


def test_hundred_thousand_models_with_one_item_each_is_a_data_error(monkeypatch, capsys,
                                                                     tmp_path):
    monkeypatch.setenv("MIXRANK_MEMORY_BYTES", str(16 * 2 ** 30))   # any machine alike
    df = _one_item_each(100_000)
    with pytest.raises(mixrank.DataError, match=r"100,000 models x 100,000 cells need about "
                       r"670\.6 GiB.*16\.0 GiB are available.*1\.0 cell\(s\) each.*Way out"):
        mixrank.fit("correct ~ model", df)
    from tests.cli.test_cli import run

    path = tmp_path / "wide.csv"
    df.to_csv(path, index=False)
    monkeypatch.setenv("MIXRANK_PROGRESS", "0")
    code, _, err = run(capsys, "fit", str(path), "-f", "correct ~ model")
    assert code == 2 and "670.6 GiB" in err and "Traceback" not in err


def test_dense_layout_refused_the_compressed_way_out_works(monkeypatch):
    pytest.importorskip("duckdb")
    rng = np.random.default_rng(2)
    models, items = 200, 1000
    df = pd.DataFrame({"model": np.repeat([f"m{i:03d}" for i in range(models)], items),
                       "question": np.tile([f"q{i}" for i in range(items)], models),
                       "correct": rng.integers(0, 2, models * items)})
    # dense: 48 B x 200 x 1000 = 9.6 MB; pair statistics 24 B x 200^2 = 0.96 MB
    monkeypatch.setenv("MIXRANK_MEMORY_BYTES", str(4_000_000))
    with pytest.raises(mixrank.DataError, match=r"200 models x 1,000 cells.*layout': "
                       r"'compressed'"):
        mixrank.frame.build_frame(df, "correct ~ model")
    fr = mixrank.io.backends.load_frame(df, "correct ~ model", backend="duckdb",
                                        options={"layout": "compressed"})
    assert fr.n_models == models
    monkeypatch.setenv("MIXRANK_MEMORY_BYTES", "lots")
    with pytest.raises(mixrank.DataError, match="MIXRANK_MEMORY_BYTES='lots'"):
        mixrank.frame.build_frame(df.head(10), "correct ~ model")


def test_small_frames_skip_the_memory_query_unless_a_limit_is_set(monkeypatch):
    """A frame needing at most SMALL_FRAME_BYTES does not read the OS's available memory
    (a per-fit cost); $MIXRANK_MEMORY_BYTES is still honoured for any size."""
    from mixrank.frame import memory

    def refuse():
        raise AssertionError("available memory queried for a small frame")

    monkeypatch.delenv("MIXRANK_MEMORY_BYTES", raising=False)
    monkeypatch.setattr(memory, "available_memory", refuse)
    df = _one_item_each(4)
    df = pd.concat([df, df.assign(question="q0")], ignore_index=True).drop_duplicates(
        ["model", "question"])
    assert mixrank.frame.build_frame(df, "correct ~ model").n_models == 4
    monkeypatch.undo()
    monkeypatch.setenv("MIXRANK_MEMORY_BYTES", "100")
    with pytest.raises(mixrank.DataError, match="need about .* are available"):
        mixrank.frame.build_frame(df, "correct ~ model")
