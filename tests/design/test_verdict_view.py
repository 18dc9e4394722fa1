"""``resolution(columns=)``: the default view is the seed paper's table (at most 14
columns), ``"all"`` is the full table as it was before the view existed, a bad value is an
OptionError -- for the linear, binomial, arena and judge-corrected result types."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.design.verdict_view import DEFAULT_COLUMNS

F = "correct ~ model + (1|subject) + (1|subject:question)"

#: The verdict table's columns before the default view (a 0/1 linear fit, every paradigm).
ALL = ["model_a", "model_b", "estimate", "n", "sigma_d", "weight_factor", "variance_iid", "mde",
       "n_star", "q", "resolved", "alpha_multiplicity", "n_star_multiplicity",
       "mde_multiplicity", "q_multiplicity", "resolved_multiplicity", "discordance",
       "inflation_anytime", "n_star_anytime", "mde_anytime", "q_anytime", "resolved_anytime",
       "std_error", "df", "variance_ratio", "design_effect", "n_star_cluster", "mde_cluster",
       "q_cluster", "resolved_cluster", "p_adjusted", "rejected", "resolved_all"]


@pytest.fixture(scope="module")
def results():
    ex = mixrank.load_example()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"linear": mixrank.fit(F, ex),
                "binomial": mixrank.fit("correct ~ model + (1|subject)", ex, family="binomial"),
                "arena": mixrank.arena(mixrank.battles_from_scores(
                    ex, keys=["subject", "question", "prompt"]))}


def test_all_is_the_full_table_and_default_its_main_columns(results):
    full = results["linear"].resolution(pairs="all", columns="all")
    assert list(full.columns) == ALL
    default = results["linear"].resolution(pairs="all")
    assert list(default.columns) == [c for c in DEFAULT_COLUMNS if c in ALL]
    assert default.shape[1] == 12 <= 14
    pd.testing.assert_frame_equal(default, full[list(default.columns)])   # same numbers
    assert default.attrs["mixrank"]["view"] == "default"
    assert default.attrs["mixrank"]["unresolved"] == full.attrs["mixrank"]["unresolved"]


@pytest.mark.parametrize("kind", ["linear", "binomial", "arena"])
def test_every_result_type_has_the_views(kind, results):
    res = results[kind]
    default, full = res.resolution(), res.resolution(columns="all")
    assert default.shape[1] <= 14 < full.shape[1]
    assert {"model_a", "model_b", "estimate", "n_star", "q", "resolved",
            "resolved_all"} <= set(default.columns)
    assert ("p_adjusted" in default.columns) == ("p_adjusted" in full.columns)
    assert set(default.columns) <= set(DEFAULT_COLUMNS)
    some = res.resolution(columns=["model_a", "model_b", "q"])
    assert list(some.columns) == ["model_a", "model_b", "q"]
    np.testing.assert_array_equal(some["q"], full["q"])


@pytest.mark.parametrize("bad, words", [("everything", "columns='everything'"),
                                        (["model_a", "nope"], "'nope'"), (3, "columns=3"),
                                        ([], "non-empty")])
def test_a_bad_view_is_an_option_error(bad, words, results):
    with pytest.raises(mixrank.OptionError, match="default") as info:
        results["linear"].resolution(columns=bad)
    assert words in str(info.value)


def test_a_default_view_is_refused_where_every_paradigm_q_is_needed(results):
    from mixrank.design.summaries import unresolved_by_effect

    with pytest.raises(mixrank.DesignError, match="columns='all'"):
        unresolved_by_effect(results["linear"].resolution(pairs="all"))
    assert len(unresolved_by_effect(results["linear"].resolution(pairs="all", columns="all")))
