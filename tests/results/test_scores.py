"""FitResult.model_scores(): definitions, estimands, edge cases and errors.

Reference values: closed forms (no random term: the sample mean and
``sd / sqrt(n)`` with n - 1 df; the ``cells`` estimand is the plain mean;
``aggregate`` is the t over unit means); the lme4 comparison lives in
``test_scores_reference.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mixrank

COLUMNS = ["model", "estimate", "std_error", "df", "ci_lower", "ci_upper", "level", "n",
           "sigma_iid", "variance_ratio", "iid_std_error", "n_cells", "adjusted", "basis", "note",
           "design_effect"]  # former name of variance_ratio, kept one release


@pytest.fixture(scope="module")
def example():
    return mixrank.load_example()


def _fit(formula, data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit(formula, data, **kw)


def test_columns_and_iid_closed_form(example):
    """Cells as units: the sample mean, sd/sqrt(n), t with n - 1 df; design effect 1."""
    sc = _fit("correct ~ model", example).model_scores(level=0.9)
    assert list(sc.columns) == COLUMNS
    for r in sc.itertuples():
        y = example.loc[example["model"] == r.model, "correct"].to_numpy(dtype=float)
        assert r.estimate == pytest.approx(y.mean(), rel=1e-12)
        assert r.std_error == pytest.approx(y.std(ddof=1) / np.sqrt(len(y)), rel=1e-9)
        assert r.df == pytest.approx(len(y) - 1)
        assert r.ci_upper - r.estimate == pytest.approx(
            stats.t.ppf(0.95, len(y) - 1) * r.std_error, rel=1e-9)
        assert r.variance_ratio == pytest.approx(1.0, rel=1e-9)
        assert r.iid_std_error == pytest.approx(r.std_error, rel=1e-9)
        assert r.level == 0.9 and r.note == ""
    assert sc.attrs["mixrank"]["unit"] == "cell"


def test_cells_estimand_is_the_leaderboard_mean(example):
    df = example.sample(frac=0.8, random_state=1)            # unbalanced
    fit = _fit("correct ~ model + (1|subject)", df, estimand="gls")
    # the plain means of each model's own cells (scoring="plain"; the default puts the
    # models on the union of cells when their cell sets differ, docs/methods.md §11)
    cells = fit.model_scores(estimand="cells", scoring="plain").set_index("model")
    means = df.groupby("model")["correct"].mean()
    np.testing.assert_allclose(cells.loc[means.index, "estimate"], means, rtol=1e-12)
    gls = fit.model_scores().set_index("model")
    assert gls.attrs["mixrank"]["estimand"] == "gls"
    assert not np.allclose(gls["estimate"], cells["estimate"])   # unbalanced: they differ
    assert (gls["variance_ratio"] > 1).all()                      # clustered by subject


def test_aggregate_is_t_over_unit_means(example):
    sc = _fit("correct ~ model + (1|subject)", example, method="aggregate").model_scores()
    um = example.groupby(["model", "subject"])["correct"].mean().unstack()
    for r in sc.itertuples():
        u = um.loc[r.model].to_numpy()
        assert r.estimate == pytest.approx(u.mean())
        assert r.std_error == pytest.approx(u.std(ddof=1) / np.sqrt(len(u)))
        assert r.df == len(u) - 1


def test_constant_model_gets_nan_and_a_note(example):
    df = example.copy()
    df.loc[df["model"] == "m06", "correct"] = 1
    fit = _fit("correct ~ model + (1|subject)", df)
    with pytest.warns(mixrank.MixrankWarning, match="'m06'.*same score"):
        sc = fit.model_scores().set_index("model")
    assert sc.loc["m06", "estimate"] == 1.0 and np.isnan(sc.loc["m06", "std_error"])
    assert "same score" in sc.loc["m06", "note"]
    assert np.isfinite(sc.drop("m06")["std_error"]).all()


def test_confounded_term_names_the_model():
    rows = []
    rng = np.random.default_rng(0)
    for m in ("a", "b", "c"):
        for s in range(4):
            for q in range(3):
                for p in ("p1", "p2"):
                    if m == "c" and p == "p2":
                        continue
                    rows.append(dict(model=m, subject=s, question=q, prompt=p,
                                     correct=rng.normal()))
    df = pd.DataFrame(rows)
    fit = _fit("correct ~ model + (1|subject:question)", df, pairs=[("a", "b")])
    # one model not estimable under the formula: a NaN row with the reason, not an abort
    with pytest.warns(mixrank.IncompletePairWarning, match=r"model 'c'.*\(1\|subject:question\)"):
        sc = fit.model_scores().set_index("model")
    assert np.isnan(sc.loc["c", "std_error"]) and "confounded" in sc.loc["c", "note"]
    assert sc.loc["c", "estimate"] == pytest.approx(df[df.model == "c"].correct.mean(), rel=1e-12)
    assert np.isfinite(sc.loc[["a", "b"], "std_error"]).all()


@pytest.mark.parametrize("kw,match", [(dict(estimand="micro"), "'gls', 'cells', 'units'"),
                                      (dict(level=95), "level=95"),
                                      (dict(level="0.95"), "level=")])
def test_bad_options(example, kw, match):
    fit = _fit("correct ~ model + (1|subject)", example, pairs=[("m01", "m02")])
    with pytest.raises(mixrank.DesignError, match=match):
        fit.model_scores(**kw)


def test_summary_shows_scores(example):
    text = str(_fit("correct ~ model + (1|subject)", example).summary())
    assert max(len(line) for line in text.splitlines()) <= 100       # wrapped for reading
    text = " ".join(text.split())
    assert "Model scores (y ~ 1 + (1|subject), estimand cells, unit subject, 95% CI)" in text
    assert "p_adjusted: stepdown across the 15 pairs" in text    # the CR2 default
    assert ("p_value: each pair's unit sign-flip test of the pair's total (all 2048 sign "
            "flips of 'subject' and their mirror images)") in text                       # and its per-pair tests


def test_same_engine_as_the_fit():
    """A statsmodels fit scores its models with statsmodels MixedLM; same numbers as native."""
    df = mixrank.simulate(models=3, subjects=6, questions=5, prompts=2, family="gaussian",
                          sd_model_subject=0.5, sd_model_question=0.5, sd_model_prompt=0.3,
                          sd_residual=1.0, missing=0.1, rng=3)
    f = "correct ~ model + (1|subject) + (1|prompt)"
    nat = _fit(f, df, estimand="gls").model_scores()
    sm = _fit(f, df, engine="statsmodels", estimand="gls").model_scores()
    assert sm.attrs["mixrank"]["engine"] == "statsmodels"
    np.testing.assert_allclose(sm["estimate"], nat["estimate"], rtol=1e-4)
    np.testing.assert_allclose(sm["std_error"], nat["std_error"], rtol=1e-4)
    np.testing.assert_allclose(sm["df"], nat["df"], rtol=1e-3)
