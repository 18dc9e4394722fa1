"""``mixrank.pass_at_k`` against the exact closed form ``1 - C(n-c, k) / C(n, k)``
(Chen et al. 2021, eq. 1) computed in rational arithmetic, on hand-built counts
and on the bundled ChemBench re-runs (7 open models, 2 runs per question); its
errors; the frame it returns fits like any long data; the CLI's ``--pass-at``."""

from __future__ import annotations

import io
import warnings
from fractions import Fraction
from math import comb

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.errors import DataError
from tests.cli.test_cli import run


def exact(c: int, n: int, k: int) -> float:
    return float(1 - Fraction(comb(n - c, k), comb(n, k)))


def test_hand_built_counts_equal_the_closed_form():
    rows = [(f"m{n}", f"q{c}", c, n) for n in (1, 2, 3, 5, 10, 20, 50, 200) for c in range(n + 1)]
    d = pd.DataFrame(rows, columns=["model", "question", "k", "n"])
    for k in (1, 2, 5, 10):
        sub = d[d.n >= k]
        got = mixrank.pass_at_k(sub, k, correct="k", trials="n")
        want = [exact(c, n, k) for c, n in zip(sub.k, sub.n)]
        np.testing.assert_allclose(got[f"pass_at_{k}"], want, rtol=1e-12, atol=1e-15)
        assert got["n_correct"].tolist() == sub.k.tolist()
        assert got["n_samples"].tolist() == sub.n.tolist()
        assert got.attrs["mixrank"]["k"] == k
    # pass@1 is the share correct; c = 0 gives exactly 0, n - c < k exactly 1
    one = mixrank.pass_at_k(d, 1, correct="k", trials="n")
    np.testing.assert_allclose(one["pass_at_1"], d.k / d.n, rtol=1e-13)
    five = mixrank.pass_at_k(d[d.n >= 5], 5, correct="k", trials="n")
    assert (five.loc[five.n_correct == 0, "pass_at_5"] == 0.0).all()
    assert (five.loc[five.n_samples - five.n_correct < 5, "pass_at_5"] == 1.0).all()


def test_published_example():
    # n = 10, c = 3, k = 5: 1 - C(7, 5) / C(10, 5) = 1 - 21/252
    d = pd.DataFrame({"model": ["a"], "question": [1], "c": [3], "n": [10]})
    assert mixrank.pass_at_k(d, 5, correct="c", trials="n")["pass_at_5"].iloc[0] == \
        pytest.approx(1 - 21 / 252, rel=1e-14)


def chembench_runs() -> pd.DataFrame:
    d = mixrank.load_dataset("chembench", reruns=True)
    runs = d.groupby("model")["prompt"].nunique()
    return d[d.model.isin(runs[runs == 2].index)]


def test_bundled_chembench_reruns_equal_the_closed_form():
    d = chembench_runs()
    assert d.model.nunique() == 7
    keys = ["model", "subject", "question"]
    for k in (1, 2):
        got = mixrank.pass_at_k(d, k, replicate="prompt", keys=keys)
        c = d.groupby(keys, sort=False)["correct"].sum()
        assert len(got) == len(c) == 7 * 2788
        assert (got["n_samples"] == 2).all()
        want = [exact(int(ci), 2, k) for ci in c.to_numpy()]
        np.testing.assert_allclose(got[f"pass_at_{k}"], want, rtol=1e-14, atol=0)
        assert got[keys].apply(tuple, axis=1).tolist() == list(c.index)


def test_the_frame_fits_like_any_long_data():
    d = chembench_runs()
    pk = mixrank.pass_at_k(d, 2, replicate="prompt", keys=["model", "subject", "question"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("pass_at_2 ~ model + (1|subject)", pk,
                          pairs=[("gemma-1-1-7b-it", "llama3.1-70b-instruct")], estimand="cells")
    con = res.contrasts()
    means = pk.groupby("model")["pass_at_2"].mean()
    # fully paired data: the cells estimate is the difference in mean pass@2
    sign = 1.0 if con.model_a.iloc[0] == "gemma-1-1-7b-it" else -1.0
    assert sign * con.estimate.iloc[0] == pytest.approx(
        means["gemma-1-1-7b-it"] - means["llama3.1-70b-instruct"], abs=1e-9)
    assert con.n.iloc[0] == 2788


@pytest.mark.parametrize("kw, match", [
    (dict(k=11), "k=11 exceeds the 10 sample"),
    (dict(k=2.5), "not an integer"),
    (dict(k=0), "k >= 1"),
    (dict(k=True), "positive integer"),
    (dict(k=2, trials=None), "exactly one of trials= .* and replicate="),
])
def test_bad_k_and_options_are_refused(kw, match):
    d = pd.DataFrame({"model": ["a", "b"], "question": [1, 1], "c": [3, 4], "n": [10, 10]})
    kw = {"correct": "c", "trials": "n", **kw}
    with pytest.raises(DataError, match=match):
        mixrank.pass_at_k(d, **kw)


@pytest.mark.parametrize("c, n, match", [
    ([11, 2], [10, 10], r"11 correct of 10 samples \(c > n\)"),
    ([1.5, 2], [10, 10], "holds 1.5 .* non-negative integer"),
    ([-1, 2], [10, 10], "non-negative integer"),
    ([np.nan, 2], [10, 10], "missing at row"),
    (["x", 2], [10, 10], "holds 'x', not a number"),
])
def test_bad_counts_are_refused(c, n, match):
    d = pd.DataFrame({"model": ["a", "b"], "question": [1, 1], "c": c, "n": n})
    with pytest.raises(DataError, match=match):
        mixrank.pass_at_k(d, 1, correct="c", trials="n")


def test_replicate_input_errors():
    d = pd.DataFrame({"model": ["a"] * 4, "question": [1, 1, 2, 2], "sample": [0, 1, 0, 1],
                      "correct": [1, 0, 2, 1], "temp": [0.0, 1.0, 0.0, 1.0]})
    with pytest.raises(DataError, match=r"0/1 rows .* scores in \{0, 1\}"):
        mixrank.pass_at_k(d, 1, replicate="sample", keys=["model", "question"])
    d["correct"] = [1, 0, 1, 1]
    with pytest.raises(DataError, match="a column among the keys varies between samples"):
        mixrank.pass_at_k(d, 1, replicate="sample")
    got = mixrank.pass_at_k(d, 2, replicate="sample", keys=["model", "question"])
    assert got["pass_at_2"].tolist() == [1.0, 1.0]
    with pytest.raises(DataError, match="repeats the keys"):
        mixrank.pass_at_k(d.assign(n=2), 1, trials="n", keys=["model"])


COUNTS = pd.DataFrame({
    "model": ["a"] * 6 + ["b"] * 6,
    "subject": ["s1", "s1", "s2", "s2", "s3", "s3"] * 2,
    "question": [1, 2, 3, 4, 5, 6] * 2,
    "k": [3, 10, 0, 7, 5, 9, 1, 4, 0, 2, 8, 3],
    "n": [10] * 12,
})


def test_cli_pass_at_fits_the_per_item_pass_at_k(tmp_path, capsys):
    path = tmp_path / "counts.csv"
    COUNTS.to_csv(path, index=False)
    code, out, err = run(capsys, "contrasts", str(path), "-f", "cbind(k, n - k) ~ model",
                         "--pass-at", "5", "--format", "csv")
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    pk = mixrank.pass_at_k(COUNTS, 5, correct="k", trials="n")
    want = pk[pk.model == "a"]["pass_at_5"].mean() - pk[pk.model == "b"]["pass_at_5"].mean()
    assert got.estimate.iloc[0] == pytest.approx(want, abs=1e-12)
    # cbind(k, f) with a failures column gives the same
    path2 = tmp_path / "counts2.csv"
    COUNTS.assign(f=COUNTS.n - COUNTS.k).drop(columns="n").to_csv(path2, index=False)
    code, out2, err = run(capsys, "contrasts", str(path2), "-f", "cbind(k, f) ~ model",
                          "--pass-at", "5", "--format", "csv")
    assert code == 0, err
    assert pd.read_csv(io.StringIO(out2)).estimate.iloc[0] == pytest.approx(want, abs=1e-12)
    # --na drop drops rows without a count (and says so); --na error names the row
    holed = COUNTS.astype({"k": float})
    holed.loc[0, "k"] = np.nan
    path3 = tmp_path / "holed.csv"
    holed.to_csv(path3, index=False)
    code, out3, err = run(capsys, "contrasts", str(path3), "-f", "cbind(k, n - k) ~ model",
                          "--pass-at", "5", "--format", "csv", "--na", "drop")
    assert code == 0 and "dropped 1 row(s) with a missing 'k'" in err
    code, out3, err = run(capsys, "contrasts", str(path3), "-f", "cbind(k, n - k) ~ model",
                          "--pass-at", "5")
    assert code != 0 and "missing at row 0" in err


def test_cli_pass_at_from_replicates_and_its_errors(tmp_path, capsys):
    rows = [(m, s, q, r, int((q + r + (m == "a")) % 3 == 0))
            for m in ("a", "b") for s, q in (("s1", 1), ("s1", 2), ("s2", 3), ("s2", 4))
            for r in range(4)]
    d = pd.DataFrame(rows, columns=["model", "subject", "question", "sample", "correct"])
    path = tmp_path / "reps.csv"
    d.to_csv(path, index=False)
    code, out, err = run(capsys, "scores", str(path), "-f", "correct ~ model",
                         "--replicate", "sample", "--pass-at", "2", "--format", "csv")
    assert code == 0, err
    pk = mixrank.pass_at_k(d, 2, replicate="sample", keys=["model", "subject", "question"])
    got = pd.read_csv(io.StringIO(out)).set_index("model")["estimate"]
    np.testing.assert_allclose(got.sort_index(), pk.groupby("model")["pass_at_2"].mean(),
                               atol=1e-12)
    code, out, err = run(capsys, "scores", str(path), "-f", "correct ~ model", "--pass-at", "2")
    assert code == 2 and "needs --replicate" in err
    code, out, err = run(capsys, "scores", str(path), "-f", "correct ~ model",
                         "--replicate", "sample", "--pass-at", "5")
    assert code != 0 and "k=5 exceeds the 4 sample" in err
    code, out, err = run(capsys, "contrasts", str(path), "-f", "correct ~ model + (1|subject)",
                         "--replicate", "sample", "--pass-at", "2", "--family", "binomial")
    assert code == 2 and "drop --family binomial" in err


def test_huge_sample_counts_use_the_log_gamma_form():
    from mixrank.io.pass_at_k import pass_at_k_values

    n = np.array([3_000_000, 3_000_000, 10_000_000_000])
    c = np.array([1_500_000, 2_000_000, 20])
    got = pass_at_k_values(c, n, 3)
    # (1 - c/n)^3 is the exact limit up to O(k/n): 1 - 0.5^3, 1 - (1/3)^3, 1 - (1 - 2e-9)^3
    np.testing.assert_allclose(got, [1 - 0.5 ** 3, 1 - (1 / 3) ** 3, 6e-9], rtol=1e-5)


def test_empty_table_is_refused():
    with pytest.raises(DataError, match="without rows"):
        mixrank.pass_at_k(pd.DataFrame({"model": [], "c": [], "n": []}), 1, correct="c",
                          trials="n")
