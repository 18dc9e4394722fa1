"""The one display format (mixrank/_display.py): p-values as R's ``format.pval``, other
numbers to R's ``signif(x, 4)``, estimates at their SE's decimal place, tables within 100
characters, the returned DataFrame untouched.

Reference: tests/reference/format_pval.R (R's own ``format.pval`` and ``signif``), whose
output tests/reference/format_pval.json is read here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixrank._display import (
    COMPACT,
    WIDTH,
    format_at,
    format_p,
    format_se,
    format_signif,
    format_table,
    se_decimals,
    wrap,
)

REF = json.loads((Path(__file__).parent / "reference" / "format_pval.json").read_text())


def test_p_values_print_as_r_format_pval():
    assert [format_p(p) for p in REF["p"]] == REF["format_pval"]


def test_other_numbers_print_as_r_signif_4():
    for x, want in zip(REF["x"], REF["signif4"]):
        assert float(format_signif(x)) == pytest.approx(want, rel=1e-12), x


@pytest.mark.parametrize("se, decimals, text", [
    (0.0346109, 3, "0.035"), (0.0148, 4, "0.0148"), (12.3, 1, "12.3"), (45.2, 0, "45"),
    (450.0, -1, "450"), (0.0996, 3, "0.100"), (0.00099, 5, "0.00099")])
def test_standard_errors_keep_two_or_three_significant_digits(se, decimals, text):
    assert se_decimals(se) == decimals
    assert format_se(se) == text


def test_an_estimate_is_printed_at_its_se_decimal_place():
    assert format_at(0.1, se_decimals(0.0346)) == "0.100"
    assert format_at(1064.2817, se_decimals(2.5)) == "1064.3"
    assert format_at(-0.0001, 3) == "0.000"          # never "-0.000"
    assert format_at(float("nan"), 3) == "NaN"
    assert se_decimals(0.0) is None and se_decimals(float("nan")) is None


def _contrasts(n: int = 6, name_len: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    names = [f"m{i:0{name_len - 1}d}" for i in range(n)]
    rows = [dict(model_a=a, model_b=b, estimate=rng.normal(0, 0.1), std_error=rng.uniform(0.01, 0.05),
                 df=11.0, statistic=rng.normal(), p_value=rng.uniform(), p_adjusted=rng.uniform(),
                 p_greater=rng.uniform(), ci_lower=-0.1, ci_upper=0.1, level=0.95, n=960,
                 note="a long note that would otherwise widen every row" if i == 2 else "")
            for i, (a, b) in enumerate((a, b) for j, a in enumerate(names) for b in names[j + 1:])]
    tab = pd.DataFrame(rows)
    tab.attrs["mixrank"] = {"table": "contrasts"}
    return tab


@pytest.mark.parametrize("name_len", [3, 24, 60])
def test_a_table_fits_100_characters_whatever_its_names(name_len):
    tab = _contrasts(name_len=name_len)
    before = tab.copy(deep=True)
    for view in ("compact", "all"):
        text = format_table(tab, columns=view)
        assert max(len(line) for line in text.splitlines()) <= WIDTH, text
    pd.testing.assert_frame_equal(tab, before)        # only the text is rounded


def test_compact_view_wide_view_caption_and_footnotes():
    tab = _contrasts()
    compact = format_table(tab)
    assert "p_greater" not in compact and "level: 0.95" in compact     # constant: a caption
    assert "[1] a long note" in compact and "[1]" in compact.splitlines()[4]
    wide = format_table(tab, columns="all")
    assert "p_greater" in wide and "level" in wide.split()
    assert set(COMPACT["contrasts"]) - set(tab.columns) <= {"group", "term", "odds_ratio"}


def test_a_wide_table_is_printed_in_blocks_with_its_keys_repeated():
    tab = _contrasts(name_len=24)
    text = format_table(tab, columns="all")
    headers = [ln for ln in text.splitlines() if ln.split()[:2] == ["model_a", "model_b"]]
    assert len(headers) >= 2                         # the columns continue in a second block
    shown = {c for h in headers for c in h.split()}
    assert set(tab.columns) - {"note", "level"} <= shown


def test_wrap_keeps_every_word_within_the_width():
    text = "p_value: " + " ".join(["word"] * 60)
    out = wrap(text)
    assert max(len(line) for line in out.splitlines()) <= WIDTH
    assert out.split() == text.split()
