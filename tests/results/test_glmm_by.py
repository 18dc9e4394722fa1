"""Binomial ``model * x`` accessors beyond the glmer reference cases (docs/glmm.md §11):
a (model, level) combination without cells, the overall gap as the average of the per-level
ones, the response-scale scores against a direct computation, and the refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import mixrank

CASE = "tests/reference/glmm_by_cases/unbalanced.csv.gz"
F = "correct ~ model * topic + (1|question)"


def fit(df, formula=F, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit(formula, df, family="binomial", nagq=0, **kw)


@pytest.fixture(scope="module")
def full():
    return fit(pd.read_csv(CASE))


@pytest.fixture(scope="module")
def holed():
    df = pd.read_csv(CASE)
    return fit(df[~((df.model == "m2") & (df.topic == "algebra"))])


def test_overall_gap_is_the_average_of_the_levels(full):
    per = full.contrasts(by="topic")
    overall = full.contrasts()
    for _, r in overall.iterrows():
        rows = per[(per.model_a == r.model_a) & (per.model_b == r.model_b)]
        assert r.estimate == pytest.approx(rows.estimate.mean(), abs=1e-12)
    # scores and contrasts are the same quantity on each scale
    for scale in ("logit", "response"):
        sc = full.model_scores(scale=scale, by="topic").set_index(["model", "topic"]).estimate
        con = full.contrasts(scale=scale, by="topic")
        diff = [sc[(a, t)] - sc[(b, t)] for a, b, t in zip(con.model_a, con.model_b, con.topic)]
        np.testing.assert_allclose(con.estimate, diff, atol=1e-12)


def test_response_scores_by_level_by_direct_computation(full):
    f, idx = full.fit, full._index()
    sc = full.model_scores(scale="response", by="topic")
    for _, r in sc.iterrows():
        j, lv = full.models.index(r.model), full.by_levels.index(r.topic)
        cells = np.flatnonzero(full.cell_level == lv)
        p = expit(f.beta[idx[j, lv]] + f.cell_effects[cells])
        assert r.estimate == pytest.approx(p.mean(), rel=1e-13)
        lo = expit(f.beta[idx[j, lv]] - 1.959963984540054 * r.logit_std_error
                   + f.cell_effects[cells]).mean()
        assert r.ci_lower == pytest.approx(lo, rel=1e-9)


def test_a_level_without_cells(holed):
    con = holed.contrasts(by="topic")
    miss = con[(con.topic == "algebra") & (con.model_b == "m2")]
    assert miss.estimate.isna().all() and (miss.note.str.contains("no cells")).all()
    assert con.loc[con.topic != "algebra", "estimate"].notna().all()
    av = holed.anova().set_index(["model_a", "model_b"])
    assert av.loc[("m0", "m2"), "df"] == 1 and av.loc[("m0", "m1"), "df"] == 2
    assert av.loc[("(all)", "(all)"), "df"] == 3
    fe = holed.fixed_effects()
    assert len(fe) == 8 and fe.term.iloc[0] == "modelm0:topicalgebra"
    ranks = holed.rank_intervals(by="topic")
    alg = ranks[ranks.topic == "algebra"]
    assert set(alg.model) == {"m0", "m1"} and alg.note.str.startswith("ranked among").all()
    overall = holed.contrasts().set_index(["model_a", "model_b"])
    assert "averaged over the 2 level(s)" in overall.loc[("m0", "m2"), "note"]


def test_refusals(full):
    df = pd.read_csv(CASE)
    with pytest.raises(mixrank.DesignError, match="by='model'.*use by='topic'"):
        full.contrasts(by="model")
    # a numeric covariate is a slope per model (tests/engine/test_glmm_slope_reference.py)
    slope = fit(df.assign(size=df.question.str[3:].astype(int)), "correct ~ model * size + "
                "(1|question)")
    assert "modelm1:size" in slope.fixed_effects()["term"].tolist()
    with pytest.raises(mixrank.FormulaError, match="one covariate crossed with the model"):
        fit(df.assign(z=df.topic), "correct ~ model * (topic + z) + (1|question)")
    bad = df.copy()
    bad.loc[bad.index[0], "topic"] = "chemistry" if bad.topic.iloc[0] != "chemistry" else "algebra"
    with pytest.raises(mixrank.DataError, match="varies within a cell"):
        fit(bad)
    with pytest.raises(mixrank.DataError, match="complete separation: 'm0 at topic=algebra'"):
        sep = df.copy()
        sep.loc[(sep.model == "m0") & (sep.topic == "algebra"), "correct"] = 1
        fit(sep)
