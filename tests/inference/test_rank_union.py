"""Simultaneous rank intervals contain the marginal ones, on every bundled dataset
with several models, for the p-value methods and max-t (randomization and Gaussian paths)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import mixrank

CASES = [
    ("example", "correct ~ model + (1|subject)", {}),
    ("chembench", "correct ~ model + (1|subject)", {}),
    ("chembench_humans", "correct ~ model + (1|subject)", {}),
    ("jailbreakbench", "correct ~ model + (1|subject) + (1|prompt)", {}),
    ("multiprompt", "correct ~ model + (1|subject) + (1|prompt)", {}),
]


def _data(name: str) -> pd.DataFrame:
    if name == "example":
        return mixrank.load_example()
    d = mixrank.load_dataset(name)
    if name == "chembench_humans":      # the humans with most answers, on complete keys
        d = d.dropna(subset=["subject"])
        keep = d.groupby("model")["question"].nunique().nlargest(6).index
        d = d[d["model"].isin(keep)]
    if name == "multiprompt":
        d = d[d["benchmark"] == d["benchmark"].iloc[0]].drop(columns="template")
    return d


@pytest.mark.parametrize("name,formula,kw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("adjust", ["holm", "maxt"])
def test_simultaneous_contains_marginal(name, formula, kw, adjust):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit(formula, _data(name), **kw)
        marg = fit.rank_intervals(coverage="marginal", adjust=adjust, rng=1, draws=1000)
        sim = fit.rank_intervals(coverage="simultaneous", adjust=adjust, rng=1, draws=1000)
    m = marg.set_index("model")
    s = sim.set_index("model").loc[m.index]
    assert (s["rank_lower"] <= m["rank_lower"]).all() and (s["rank_upper"] >= m["rank_upper"]).all()
    assert isinstance(sim.attrs["mixrank"]["widened_to_marginal"], list)
