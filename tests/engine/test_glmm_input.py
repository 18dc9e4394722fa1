"""Binomial GLMM: bad input, separation, count/replicate forms, unit-of-inference warning."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.results.glmm.result import GlmmResult
from mixrank.routes.binomial import UnitOfInferenceWarning

REF = "tests/reference/glmm_cases/"


def _nested() -> pd.DataFrame:
    return pd.read_csv(REF + "nested.csv.gz")


def _fit(formula, df, **kw) -> GlmmResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit(formula, df, family="binomial", **kw)


def test_scores_outside_01_raise():
    df = _nested().astype({"correct": float})
    df.loc[3, "correct"] = 0.5
    with pytest.raises(mixrank.DataError, match=r"0/1 scores in 'correct'.*0\.5.*cbind"):
        _fit("correct ~ model + (1|subject)", df)


@pytest.mark.row_order   # the message names a row position
def test_successes_above_trials_raise():
    df = pd.read_csv(REF + "kofn.csv.gz")
    df.loc[7, "k"] = 12
    with pytest.raises(mixrank.DataError, match=r"more successes than trials.*row 7.*12 > 'n'"):
        _fit("cbind(k, n - k) ~ model + (1|question)", df)


@pytest.mark.parametrize("value", [-1, 2.5, "x"])
def test_counts_must_be_whole_numbers(value):
    df = pd.read_csv(REF + "kofn.csv.gz").astype({"k": object})
    df.loc[2, "k"] = value
    with pytest.raises(mixrank.DataError, match="non-negative whole numbers"):
        _fit("cbind(k, n - k) ~ model + (1|question)", df)


def test_complete_separation_raises_naming_the_model():
    df = _nested()
    df.loc[df.model == "m3", "correct"] = 1
    with pytest.raises(mixrank.DataError, match=r"complete separation: 'm3' succeeds on all 150"):
        _fit("correct ~ model + (1|subject)", df)


def test_separation_within_a_unit_stays_finite():
    """A model that always succeeds in one subject: its subject:model effect is penalised."""
    df = _nested()
    df.loc[(df.model == "m3") & (df.subject == "s1"), "correct"] = 1
    res = _fit("correct ~ model + (1|subject:question) + (1|subject:model)", df, nagq=0)
    con = res.contrasts()
    assert np.isfinite(con[["estimate", "std_error"]].to_numpy()).all()
    assert res.diagnostics()["converged"].iloc[0]


@pytest.mark.parametrize("formula,exc,match", [
    ("correct ~ model + (1|model)", mixrank.FormulaError, "comparison factor 'model' alone"),
    ("correct ~ model", mixrank.DesignError, "no random term"),
    ("cbind(k, 3 * k) ~ model + (1|question)", mixrank.FormulaError, "cbind"),
])
def test_bad_formulas(formula, exc, match):
    with pytest.raises(exc, match=match):
        _fit(formula, _nested())


def test_bad_options():
    df = _nested()
    with pytest.raises(mixrank.DesignError, match="nagq=2"):
        _fit("correct ~ model + (1|subject)", df, nagq=2)
    with pytest.raises(mixrank.DesignError, match="linear \\(gaussian\\) engine only"):
        _fit("correct ~ model + (1|subject)", df, method="aggregate")
    res = _fit("correct ~ model + (1|subject)", df, nagq=0)
    with pytest.raises(mixrank.DesignError, match="scale='probability'"):
        res.contrasts(scale="probability")


def test_unit_of_inference_warning():
    df = _nested()
    with pytest.warns(UnitOfInferenceWarning, match=r"cells .* add \(1\|subject:model\)"):
        mixrank.fit("correct ~ model + (1|subject) + (1|subject:question)", df, family="binomial",
                    nagq=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnitOfInferenceWarning)
        res = mixrank.fit("correct ~ model + (1|subject:question) + (1|subject:model)", df,
                          family="binomial", nagq=0)
    assert res.unit_of_inference.startswith("unit of inference for model contrasts: subject")
    assert "Unit of inference for model contrasts: subject" in str(res.summary())


def test_replicates_equal_counts():
    """0/1 rows with replicates and their k-of-n counts give the same fit; the log-likelihoods
    differ exactly by sum log C(n, k) (glmer's convention for a cbind response)."""
    from scipy.special import gammaln

    rows = pd.read_csv(REF + "replicates.csv.gz")
    counts = rows.groupby(["model", "question"], as_index=False).agg(k=("correct", "sum"),
                                                                     n=("correct", "size"))
    a = _fit("correct ~ model + (1|question)", rows, replicate="sample")
    b = _fit("cbind(k, n - k) ~ model + (1|question)", counts)
    pd.testing.assert_frame_equal(a.fixed_effects(), b.fixed_effects(), rtol=1e-7)
    lc = np.sum(gammaln(counts.n + 1) - gammaln(counts.k + 1) - gammaln(counts.n - counts.k + 1))
    assert b.diagnostics().loglik[0] - a.diagnostics().loglik[0] == pytest.approx(lc, abs=1e-6)
    assert (a.diagnostics().nobs[0], b.diagnostics().nobs[0]) == (len(rows), len(counts))


def test_relabel_and_row_order_invariance():
    df = _nested()
    a = _fit("correct ~ model + (1|subject) + (1|subject:question)", df, nagq=0)
    shuffled = df.sample(frac=1.0, random_state=3).replace({"model": {"m0": "z9"}})
    b = _fit("correct ~ model + (1|subject) + (1|subject:question)", shuffled, nagq=0)
    ca = a.contrasts().set_index(["model_a", "model_b"])
    cb = b.contrasts().set_index(["model_a", "model_b"])
    est = cb.loc[("m1", "z9"), "estimate"]
    assert est == pytest.approx(-ca.loc[("m0", "m1"), "estimate"], abs=1e-6)
    assert cb.loc[("m1", "z9"), "std_error"] == pytest.approx(ca.loc[("m0", "m1"), "std_error"],
                                                             rel=1e-5)


def test_pairs_restrict_rows_and_response_scale_delta_method():
    df = _nested()
    res = _fit("correct ~ model + (1|subject) + (1|subject:question)", df, nagq=0,
               pairs=[("m0", "m2")])
    con = res.contrasts(scale="response")
    assert con[["model_a", "model_b"]].values.tolist() == [["m0", "m2"]]
    # delta method: the SE is |gradient| of the cell-averaged probability difference
    # (finite differences of the function of beta) under the model-effect covariance
    from scipy.special import expit

    f = res.fit

    def ame(beta):
        p = expit(beta[None, :] + f.cell_effects[:, None]).mean(axis=0)
        return p[0] - p[2]

    g = np.array([(ame(f.beta + e) - ame(f.beta - e)) / 2e-6 for e in np.eye(4) * 1e-6])
    assert con["estimate"].iloc[0] == pytest.approx(ame(f.beta), abs=1e-12)
    assert con["std_error"].iloc[0] == pytest.approx(np.sqrt(g @ f.vcov @ g), rel=1e-6)


def test_split_count_rows_need_replicate():
    """Count rows are one per (model, cell); split ones are added up only with replicate=."""
    counts = pd.read_csv(REF + "kofn.csv.gz")
    half = counts.assign(k=counts.k // 2, n=counts.n // 2, part=0)
    rest = counts.assign(k=counts.k - half.k, n=counts.n - half.n, part=1)
    split = pd.concat([half, rest], ignore_index=True)
    with pytest.raises(mixrank.DataError, match=r"several count rows.*replicate="):
        _fit("cbind(k, n - k) ~ model + (1|question)", split)
    a = _fit("cbind(k, n - k) ~ model + (1|question)", split, replicate="part", nagq=0)
    b = _fit("cbind(k, n - k) ~ model + (1|question)", counts, nagq=0)
    pd.testing.assert_frame_equal(a.fixed_effects(), b.fixed_effects(), rtol=1e-7)


def _frames_equal(a, b):
    assert (a.models, a.pair_by, a.n_rows, a.binary) == (b.models, b.pair_by, b.n_rows, b.binary)
    pd.testing.assert_frame_equal(a.cells, b.cells)
    for name in a.term_codes:
        np.testing.assert_array_equal(a.term_codes[name], b.term_codes[name])
        assert list(a.term_labels[name]) == list(b.term_labels[name])
    np.testing.assert_array_equal(a.scores, b.scores)
    np.testing.assert_array_equal(a.replicates, b.replicates)


@pytest.mark.parametrize("kind", ["str", "category", "int"])
def test_count_frame_fast_path_equals_general_path(kind):
    """Key columns of text, categorical or integer type (factorised once on the fast path)
    give the frame of the general path (object columns), row order shuffled."""
    from mixrank.formula.glmm_terms import parse_glmm
    from mixrank.frame.glmm import _encoded_once, binomial_frame

    df = pd.read_csv(REF + "kofn.csv.gz").sample(frac=1.0, random_state=1)
    keys = ["model", "subject", "question"]
    if kind == "int":
        df["question"] = 7 * pd.factorize(df["question"])[0] + 3
    if kind == "category":
        for c in keys:      # unsorted categories with an unused one
            df[c] = pd.Categorical(df[c], categories=["zz"] + sorted(set(df[c]))[::-1])
    general = df.astype({c: object for c in keys})
    if kind == "category":
        general = general.astype({c: str for c in keys}).astype({c: object for c in keys})
    gf = parse_glmm("cbind(k, n - k) ~ model + (1|subject) + (1|question) + (1|subject:model)")
    assert _encoded_once(df, keys) is not None and _encoded_once(general, keys) is None
    fa, na_, la = binomial_frame(gf, df)
    fb, nb, lb = binomial_frame(gf, general)
    _frames_equal(fa, fb)
    assert (na_, la) == (nb, lb)


def test_missing_key_in_text_column_raises_as_general_path():
    df = pd.read_csv(REF + "kofn.csv.gz")
    df.loc[5, "question"] = None
    with pytest.raises(mixrank.DataError, match="column 'question' has a missing value"):
        _fit("cbind(k, n - k) ~ model + (1|question)", df)


def test_log_choose_table_matches_gammaln():
    from scipy.special import gammaln

    from mixrank.frame.glmm import log_choose

    rng = np.random.default_rng(3)
    for top in (10, 5000, 10 ** 7):
        n = rng.integers(1, top + 1, 300).astype(float)
        k = np.floor(rng.random(300) * (n + 1))
        np.testing.assert_array_equal(log_choose(n, k),
                                      gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1))
