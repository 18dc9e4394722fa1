"""The bad-input battery: each input a clear error naming the argument, file or
column and the fix -- never a raw numpy/pandas exception, never a silent answer.

Numbers that are checked (pass@k at n ~ 1e15) are compared with exact rationals
(:class:`fractions.Fraction` of Python's exact ``math.comb``).
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.cli import main
from mixrank.errors import DataError, DesignError, OptionError

F = "correct ~ model + (1|subject)"


@pytest.fixture(scope="module")
def res():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(F, mixrank.load_example())


# ------------------------------------------------------------------ rng
@pytest.mark.parametrize("bad", ["abc", -1, 1.5, True, [1, "x"]])
@pytest.mark.parametrize("call", ["contrasts", "rank_probabilities", "rank_intervals"])
def test_bad_rng_is_an_option_error(res, call, bad):
    run = {"contrasts": lambda: res.contrasts(adjust="maxt", rng=bad),
           "rank_probabilities": lambda: res.rank_probabilities(rng=bad, draws=1000),
           "rank_intervals": lambda: res.rank_intervals(adjust="maxt", rng=bad)}[call]
    with pytest.raises(OptionError, match=r"rng=.*expected None, a non-negative integer seed"):
        run()


def test_good_rng_values_are_accepted():
    from mixrank._util import as_rng
    g = np.random.default_rng(3)
    assert as_rng(g) is g
    for ok in (None, 0, 7, np.int64(5), [1, 2], np.random.SeedSequence(1)):
        assert isinstance(as_rng(ok), np.random.Generator)
    assert as_rng(4).random() == np.random.default_rng(4).random()


# ------------------------------------------------------------------ draws
@pytest.mark.parametrize("draws", [0, -5, 99, 2.5, "many"])
def test_rank_intervals_maxt_refuses_bad_draws(res, draws):
    """The sign-flip path enumerated every flip and silently raised draws to 100."""
    with pytest.raises(DesignError, match="draws="):
        res.rank_intervals(adjust="maxt", draws=draws)


@pytest.mark.parametrize("draws", ["0", "-5"])
def test_cli_ranks_refuses_bad_draws(draws, capsys):
    assert main(["ranks", "example", "-f", F, "--adjust", "maxt", "--draws", draws]) == 2
    err = capsys.readouterr().err
    assert f"--draws {draws}" in err and "Traceback" not in err


# ------------------------------------------------------------------ pass@k
def _counts(c, n):
    return pd.DataFrame({"model": ["a"] * len(c), "question": range(len(c)), "c": c, "n": n})


@pytest.mark.parametrize("n", [np.inf, 1e20, 2.0 ** 53 + 2])
def test_pass_at_k_refuses_huge_trials(n):
    with pytest.raises(DataError, match=r"column 'n' \(samples drawn\).*at most 2\^53"):
        mixrank.pass_at_k(_counts([3.0], [n]), 5, correct="c", trials="n")


def test_pass_at_k_exact_at_huge_n():
    """n ~ 1e15 returned -2980 (cancelling log-gamma differences); exact rationals now."""
    n = 10 ** 15
    cs = [1, 10 ** 6 + 1, 3 * 10 ** 14, n - 10, n - 3]
    for k in (1, 5, 20):
        got = mixrank.pass_at_k(_counts(cs, [n] * len(cs)), k, correct="c", trials="n")
        for c, v in zip(cs, got[f"pass_at_{k}"]):
            want = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
            assert 0 <= v <= 1
            assert v == pytest.approx(float(want), rel=1e-9, abs=1e-300), (c, k)


def test_pass_at_k_replicate_refuses_duplicated_sample():
    d = pd.DataFrame({"model": ["a"] * 4, "question": [1, 1, 1, 2], "sample": [0, 1, 1, 0],
                      "y": [1, 0, 0, 1]})
    with pytest.raises(DataError, match=r"repeats the keys .* and sample 1"):
        mixrank.pass_at_k(d, 1, correct="y", replicate="sample", keys=["model", "question"])


# ------------------------------------------------------------------ parquet schemas
def test_parquet_folder_with_mixed_schemas_names_file_and_column(tmp_path):
    pytest.importorskip("pyarrow")
    base = mixrank.load_example()
    models = sorted(base["model"].unique())
    a = base[base["model"].isin(models[:3])]
    b = base[base["model"].isin(models[3:])].assign(correct=lambda x: x["correct"] + 0.5)
    a.to_parquet(tmp_path / "a.parquet")
    b.to_parquet(tmp_path / "b.parquet")
    with pytest.raises(DataError, match=r"b\.parquet.*column 'correct' as double"):
        mixrank.fit(F, str(tmp_path))
    b.drop(columns="question").to_parquet(tmp_path / "b.parquet")
    with pytest.raises(DataError, match=r"b\.parquet.*lacks column\(s\) \['question'\]"):
        mixrank.fit(F, str(tmp_path))
