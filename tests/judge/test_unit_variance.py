"""The cluster-robust variance at the unit against statsmodels; invariances; degenerate cases."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import mixrank
from mixrank.errors import DesignError
from tests.judge.simdata import simulate


@pytest.fixture(scope="module")
def crossed():
    g = np.random.default_rng(0)
    idx = pd.MultiIndex.from_product([["m0", "m1"], range(8), range(5), range(4)],
                                     names=["model", "subject", "prompt", "question"])
    df = idx.to_frame(index=False)
    us, up = g.normal(size=8), g.normal(size=5)
    df["human"] = us[df["subject"]] + up[df["prompt"]] + g.normal(size=len(df))
    df["score"] = df["human"] + 0.3 + g.normal(size=len(df))
    df.loc[df["question"] >= 2, "human"] = np.nan
    return df


@pytest.mark.parametrize("formula, groups", [
    ("score ~ model + (1|subject)", ["subject"]),
    ("score ~ model + (1|subject) + (1|prompt)", ["subject", "prompt"]),
])
def test_labelled_only_variance_equals_statsmodels_cluster(crossed, formula, groups):
    """lambda = 0: the score is a labelled mean; its variance is statsmodels' one- or two-way
    cluster-robust variance of an intercept-only OLS (use_correction=True: G/(G-1) per set,
    (N-1)/(N-K) = 1)."""
    sc = mixrank.fit(formula, crossed, gold="human", lam=0).model_scores().set_index("model")
    lab = crossed[(crossed["model"] == "m0") & crossed["human"].notna()]
    grp = lab[groups].to_numpy() if len(groups) > 1 else lab[groups[0]].to_numpy()
    ols = sm.OLS(lab["human"].to_numpy(), np.ones((len(lab), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": grp, "use_correction": True})
    assert sc.loc["m0", "std_error"] == pytest.approx(float(ols.bse[0]), rel=1e-10)
    assert sc.loc["m0", "df"] == min(lab[g].nunique() for g in groups) - 1


def test_invariant_to_row_order_and_model_names():
    df, _ = simulate(12, models=3, subjects=10, questions=8, frac=0.4)
    f = "score ~ model + (1|subject)"
    base = mixrank.fit(f, df, gold="human").contrasts(adjust="none")
    shuffled = df.sample(frac=1.0, random_state=3).reset_index(drop=True)
    again = mixrank.fit(f, shuffled, gold="human").contrasts(adjust="none")
    cols = ["estimate", "std_error", "df", "p_value"]
    pd.testing.assert_frame_equal(base[cols], again[cols], rtol=1e-10, atol=1e-12)
    renamed = df.assign(model=df["model"].map({"m0": "z", "m1": "y", "m2": "x"}))
    other = mixrank.fit(f, renamed, gold="human").contrasts(adjust="none")
    # pair (m0, m1) is now (y, z), oriented y - z = -(m0 - m1)
    a = base.set_index(["model_a", "model_b"]).loc[("m0", "m1")]
    b = other.set_index(["model_a", "model_b"]).loc[("y", "z")]
    assert b["estimate"] == pytest.approx(-a["estimate"], rel=1e-10)
    assert b["std_error"] == pytest.approx(a["std_error"], rel=1e-10)


def test_constant_corrected_values_are_degenerate_not_infinite():
    df, _ = simulate(13, models=2, subjects=6, questions=5, frac=0.5)
    df["score"] = 1.0
    df["human"] = np.where(df["human"].notna(), 1.0, np.nan)
    with pytest.warns(mixrank.MixrankWarning):
        res = mixrank.fit("score ~ model + (1|subject)", df, gold="human")
    con = res.contrasts()
    assert con["p_value"].iloc[0] == 1 and bool(res.diagnostics()["degenerate"].iloc[0])
    assert res.model_scores()["note"].str.startswith("no variance").all()


def test_prebuilt_frame_is_refused():
    df, _ = simulate(14, models=2, subjects=6, questions=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = mixrank.fit("score ~ model + (1|subject)", df.drop(columns="human")).frame
    with pytest.raises(DesignError, match="not a prebuilt Frame"):
        mixrank.fit("score ~ model + (1|subject)", frame, gold="human")


def test_unit_lambda_minimises_the_variance_at_the_unit():
    df, _ = simulate(15, models=3, subjects=10, questions=12, frac=0.3)
    f = "score ~ model + (1|subject)"
    se = {lam: mixrank.fit(f, df, gold="human", lam=lam).contrasts()["std_error"].to_numpy()
          for lam in ("unit", None, 0, 0.5, 1)}
    for lam in (None, 0, 0.5, 1):
        assert np.all(se["unit"] <= se[lam] * (1 + 1e-12))
