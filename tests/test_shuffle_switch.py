"""The shuffled-rows switch of tests/conftest.py (``MIXRANK_SHUFFLE_ROWS=1``) does what it
says: under it the entry points see the rows of a test's table in another order (and
the same rows); without it, the table as given.  CI runs the non-slow suite both ways."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mixrank
from tests.conftest import SHUFFLE


def _table(n: int = 50) -> pd.DataFrame:
    return pd.DataFrame({"model": np.repeat(["a", "b"], n // 2), "question": np.tile(
        [f"q{i:02d}" for i in range(n // 2)], 2), "correct": np.arange(n) % 3 == 0})


def test_entry_points_see_the_rows_shuffled_only_under_the_switch():
    from mixrank.frame import build as build_module
    from mixrank.frame import source

    df = _table()
    seen = build_module.to_pandas(df)            # the reference build_frame holds
    assert source.to_pandas(df).index.tolist() == seen.index.tolist()
    assert sorted(seen.index) == list(range(len(df)))      # the same rows
    assert df.index.tolist() == list(range(len(df)))       # the input untouched
    if SHUFFLE:
        assert seen.index.tolist() != list(range(len(df)))
    else:
        assert seen.index.tolist() == list(range(len(df)))


@pytest.mark.row_order
def test_row_order_marker_keeps_the_rows():
    from mixrank.frame import build as build_module

    df = _table()
    assert build_module.to_pandas(df).index.tolist() == list(range(len(df)))


def test_fit_results_do_not_depend_on_the_row_order():
    """Bit-identical estimates for the rows in two orders (the cells estimand sums exactly)."""
    df = mixrank.simulate(4, 5, 6, 2, rng=3)
    a = mixrank.fit("correct ~ model + (1|subject) + (1|prompt)", df, estimand="cells")
    b = mixrank.fit("correct ~ model + (1|subject) + (1|prompt)",
                    df.iloc[::-1].reset_index(drop=True), estimand="cells")
    assert a.contrasts().estimate.tolist() == b.contrasts().estimate.tolist()
    assert a.model_scores().estimate.tolist() == b.model_scores().estimate.tolist()
    np.testing.assert_allclose(a.contrasts().std_error, b.contrasts().std_error, rtol=1e-9)
