"""Limits of the judge correction that other estimators pin down exactly (docs/judge.md §3).

* Every cell labelled: the correction has nothing to borrow (lambda = 0) and
  equals the ordinary fit of the reference labels.
* lambda fixed at 0: the labelled-only estimate, i.e. the ordinary fit of
  the labelled subset.

At the subject unit the reference is mixrank's ``method="aggregate"`` fit
(subject means, paired t over subjects; checked against R in
tests/engine) exactly, and the REML ``cells`` fit where the design is balanced
and its components are interior (docs/methods.md §3, balanced nested check).
At the cell unit the estimate is equal and the variance is PPI++'s plug-in
(divisor n), the ordinary SE's ``sqrt((n - 1) / n)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mixrank
from tests.judge.simdata import simulate

COLS = ["estimate", "std_error", "df", "ci_lower", "ci_upper"]


def _key(t: pd.DataFrame) -> pd.DataFrame:
    if "model_a" in t:
        return t.set_index(["model_a", "model_b"])[COLS]
    return t.set_index("model")[COLS]


@pytest.fixture(scope="module")
def full():
    df, _ = simulate(5, models=3, subjects=12, questions=10, frac=1.0, sd_subject=1.0,
                     sd_pair=0.6)
    return df


@pytest.fixture(scope="module")
def partial(full):
    df = full.copy()
    df.loc[df["question"] >= 4, "human"] = np.nan      # 4 labelled questions in every subject
    return df


def _compare(judge, ordinary, tol):
    for a, b in ((judge.model_scores(), ordinary.model_scores()),
                 (judge.contrasts(adjust="none", ci="t"),
                  ordinary.contrasts(adjust="none", ci="t"))):
        pd.testing.assert_frame_equal(_key(a), _key(b), check_exact=False, atol=tol, rtol=tol)


def test_all_labelled_equals_ordinary_fit_of_labels(full):
    judge = mixrank.fit("score ~ model + (1|subject)", full, gold="human")
    assert all(c.ppi.lam == 0 for c in judge.corrections)
    ref = full.drop(columns="score")
    _compare(judge, mixrank.fit("human ~ model + (1|subject)", ref, method="aggregate"), 1e-10)
    reml = mixrank.fit("human ~ model + (1|subject)", ref, estimand="cells")
    assert not any(p.boundary for p in reml.pairs)
    _compare(judge, reml, 1e-6)


def test_lambda_zero_equals_ordinary_fit_of_labelled_subset(partial):
    judge = mixrank.fit("score ~ model + (1|subject)", partial, gold="human", lam=0)
    sub = partial[partial["human"].notna()].drop(columns="score")
    _compare(judge, mixrank.fit("human ~ model + (1|subject)", sub, method="aggregate"), 1e-10)


def test_cell_unit_limits(full, partial):
    for data, lam in ((full, None), (partial, 0)):
        judge = mixrank.fit("score ~ model", data, gold="human", lam=lam)
        sub = data[data["human"].notna()].drop(columns="score")
        ref = mixrank.fit("human ~ model", sub, estimand="cells")
        a, b = judge.contrasts(adjust="none"), ref.contrasts(adjust="none")
        np.testing.assert_allclose(a["estimate"], b["estimate"], atol=1e-12)
        n = b["n"].to_numpy()
        np.testing.assert_allclose(a["std_error"], b["std_error"] * np.sqrt((n - 1) / n),
                                   rtol=1e-10)
        sa, sb = judge.model_scores(), ref.model_scores()
        np.testing.assert_allclose(sa["estimate"], sb["estimate"], atol=1e-12)


def test_nested_term_cancels_to_outer_unit(partial):
    """Multiway inclusion-exclusion: a term nested in the unit adds nothing."""
    one = mixrank.fit("score ~ model + (1|subject)", partial, gold="human")
    two = mixrank.fit("score ~ model + (1|subject) + (1|subject:question)", partial,
                      gold="human")
    pd.testing.assert_frame_equal(_key(one.contrasts()), _key(two.contrasts()), atol=1e-12,
                                  rtol=1e-12)
