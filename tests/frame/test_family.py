"""One frame builder with a family argument: ``mixrank.build_frame(...,
family=)`` builds the frame each family's fit works from -- binomial data (0/1 rows or cbind
counts) and model x covariate formulas included -- and a prebuilt frame fits like the data."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank import OptionError
from mixrank.formula.glmm_terms import parse_glmm
from mixrank.frame.glmm import binomial_frame

GLMM = "correct ~ model + (1|subject:question:prompt) + (1|subject:model)"


def _counts() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    rows = [(m, f"q{q}", int(n := rng.integers(3, 9)), int(rng.binomial(n, p)))
            for m, p in (("a", 0.4), ("b", 0.55), ("c", 0.5)) for q in range(40)]
    return pd.DataFrame(rows, columns=["model", "question", "n", "k"])


def test_binomial_frame_of_rows_and_counts():
    df = mixrank.load_example()
    fr = mixrank.build_frame(df, GLMM, family="binomial")
    ref, nobs, _ = binomial_frame(parse_glmm(GLMM), df)
    assert fr.binary and fr.models == ref.models and nobs == len(df)
    np.testing.assert_array_equal(fr.observed, ref.observed)
    np.testing.assert_array_equal(fr.scores, ref.scores)
    counts = _counts()
    cf = mixrank.build_frame(counts, "cbind(k, n - k) ~ model + (1|question)", family="binomial")
    # the cell score is the share of successes, its replicates the trials
    got = cf.scores[cf.observed] * cf.replicates[cf.observed]
    assert sorted(got.round(9)) == sorted(counts.k.astype(float))
    assert sorted(cf.replicates[cf.observed]) == sorted(counts.n)


def test_binomial_fit_of_a_prebuilt_frame_equals_the_fit_of_the_rows():
    df = mixrank.load_example()
    df = df[df.model.isin(["m01", "m02", "m03"])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        a = mixrank.fit(GLMM, df, family="binomial", nagq=0)
        b = mixrank.fit(GLMM, mixrank.build_frame(df, GLMM, family="binomial"),
                        family="binomial", nagq=0)
    np.testing.assert_allclose(b.fit.beta, a.fit.beta, rtol=1e-10)


def test_interaction_frame_carries_its_covariates_and_fits_like_the_rows():
    rng = np.random.default_rng(3)
    rows = [dict(model=m, subject=f"s{s}", question=f"s{s}q{q}",
                 difficulty=("easy", "hard")[q % 2], correct=float(rng.normal()))
            for m in ("a", "b") for s in range(8) for q in range(6)]
    df = pd.DataFrame(rows)
    formula = "correct ~ model * difficulty + (1|subject)"
    fr = mixrank.build_frame(df, formula)
    assert "difficulty" in fr.cells.columns
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.SingularFitWarning)
        a = mixrank.fit(formula, df).contrasts(by="difficulty")
        b = mixrank.fit(formula, fr).contrasts(by="difficulty")
    pd.testing.assert_frame_equal(a, b)


def test_unknown_family_and_count_backends_are_refused():
    df = mixrank.load_example()
    with pytest.raises(OptionError, match="family='poisson' is not an option; expected one of "
                                          "'gaussian', 'binomial'"):
        mixrank.build_frame(df, "correct ~ model + (1|subject)", family="poisson")
    with pytest.raises(OptionError, match="cbind.* reads its count columns in memory"):
        mixrank.fit("cbind(k, n - k) ~ model + (1|question)", _counts(), family="binomial",
                    backend="duckdb")
    with pytest.raises(OptionError, match="na='drop' drops rows with a missing 0/1 score"):
        mixrank.fit("cbind(k, n - k) ~ model + (1|question)", _counts(), family="binomial",
                    na="drop")
    with pytest.raises(OptionError, match="na='drop' drops rows"):
        mixrank.build_frame(_counts(), "cbind(k, n - k) ~ model + (1|question)",
                            family="binomial", na="drop")
