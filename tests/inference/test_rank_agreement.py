"""Every rank table names the comparisons its intervals are adjusted over, and the
note where rank intervals and contrasts answer a pair differently says why."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import mixrank
from mixrank.inference.ranks.agreement import (
    comparisons_meta,
    rank_contrast_disagreements,
    rank_contrast_note,
)

F = "correct ~ model + (1|subject) + (1|subject:question)"


@pytest.fixture(scope="module")
def fits():
    ex = mixrank.load_example()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref, new = ex[ex.model != "m06"], ex[ex.model == "m06"]
        sel = mixrank.select_items(ref, 60, rng=1)
        keys = ["subject", "question"]
        return {"linear": mixrank.fit(F, ex),
                "binomial": mixrank.fit("correct ~ model + (1|subject)", ex, family="binomial"),
                "arena": mixrank.arena(mixrank.battles_from_scores(
                    ex, keys=["subject", "question", "prompt"])),
                "subset": mixrank.subset_score(ref, new.merge(sel[keys], on=keys),
                                               selection=sel)}


@pytest.mark.parametrize("kind", ["linear", "binomial", "arena"])
@pytest.mark.parametrize("coverage, n", [("marginal", 5), ("simultaneous", 15)])
def test_each_rank_table_names_its_comparisons(kind, coverage, n, fits):
    tab = fits[kind].rank_intervals(coverage=coverage)
    meta = tab.attrs["mixrank"]
    assert meta["n_comparisons"] == n                  # 6 models: own 5, or all 15 pairs
    assert meta["comparisons"].startswith(coverage)
    assert f" {n} " in meta["comparisons"]
    from mixrank._display import format_table
    assert format_table(tab).startswith(coverage + ":")   # the printed header says it


def test_a_subset_rank_interval_says_it_is_not_adjusted(fits):
    meta = fits["subset"].rank_intervals().attrs["mixrank"]
    assert meta["comparisons"].startswith("none:") and meta["n_comparisons"] == 1


def test_the_note_names_disjoint_intervals_beside_a_family_wise_non_rejection():
    ranks = pd.DataFrame({"model": ["a", "b", "c"], "rank_lower": [1, 2, 2],
                          "rank_upper": [1, 3, 3]})
    ranks.attrs["mixrank"] = {**comparisons_meta("marginal", 3, "holm"), "level": 0.95,
                              "coverage": "marginal"}
    con = pd.DataFrame({"model_a": ["a", "a", "b"], "model_b": ["b", "c", "c"],
                        "p_adjusted": [0.055, 0.01, 0.9]})
    diff = rank_contrast_disagreements(ranks, con, 0.95)
    assert diff[["model_a", "model_b", "kind"]].values.tolist() == [["a", "b", "ranks_only"]]
    note = rank_contrast_note(ranks, con)
    assert note.count("\n") == 0 and "a and b (p_adjusted 0.055)" in note
    assert "its own 2 comparisons" in note and "all 3 pairs" in note
    con.loc[0, "p_adjusted"] = 0.01                  # now both tables reject: no note
    assert rank_contrast_note(ranks, con) == ""


def test_the_example_fit_has_the_issue_pattern_and_its_note(fits):
    res = fits["linear"]
    note = rank_contrast_note(res.rank_intervals(), res.contrasts())
    assert "m01 and m02" in note and "own 5 comparisons" in note and "all 15 pairs" in note
