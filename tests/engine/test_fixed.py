"""Model x covariate engine: routing, the p = 1 special case, bad input, missing levels.

Reference values: the p-column REML with only an intercept column must equal
the intercept-only engine (mixrank.engine.lmm.reml, itself validated against lme4
in test_lme4_reference.py); formulas without covariates must take today's
path unchanged (bit-identical fits).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.engine.lmm.fixed import fit_pairs_fixed, kept_columns
from mixrank.engine.lmm.native import fit_pairs
from mixrank.engine.lmm.reml import fit_reml
from mixrank.engine.lmm.reml_fixed import FixedSums, fit_reml_fixed, group_sums
from mixrank.engine.structure import build_structure, pair_sums
from mixrank.formula import InteractionSpec, Spec
from mixrank.formula.parser import parse as parse_plain

REF = Path(__file__).resolve().parents[1] / "reference"
CASES = json.loads((REF / "engine_cases" / "cases.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_plain_formulas_take_todays_path_bit_identically(case):
    """mixrank.fit on a formula without covariates = the stages called directly."""
    df = pd.read_csv(REF / "engine_cases" / case["file"])
    spec = mixrank.parse(case["formula"])
    assert type(spec) is Spec and spec == parse_plain(case["formula"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.SingularFitWarning)
        res = mixrank.fit(case["formula"], df, pair_by=case["pair_by"], estimand="gls")
        frame = mixrank.build_frame(df, parse_plain(case["formula"]), pair_by=case["pair_by"])
        idx = [(j, k) for j in range(frame.n_models) for k in range(j + 1, frame.n_models)]
        direct = fit_pairs(frame, idx)
    for got, want in zip(res.pairs, direct):
        assert got == want
        assert got.fixed is None


def _pair_inputs(n_sub=9, n_q=7, seed=1):
    rng = np.random.default_rng(seed)
    sub = np.repeat(np.arange(n_sub), n_q)
    q = np.arange(n_sub * n_q)
    keep = rng.random(len(q)) > 0.25
    sub, q = sub[keep], np.unique(q[keep], return_inverse=True)[1]
    d = rng.normal(0, 0.5, n_sub)[sub] + rng.normal(0, 1, len(sub)) + 0.3
    return sub, q, d


def test_intercept_only_matches_the_p1_engine():
    """X = 1: criterion, components, estimate, SE and df equal fit_reml's."""
    sub, q, d = _pair_inputs()
    prompt = np.arange(len(d)) % 3
    codes, levels, names = [sub, prompt], [int(sub.max()) + 1, 3], ["subject", "prompt"]
    st = build_structure(codes, levels, names, n=len(d))
    r1 = fit_reml(st, pair_sums(st, d), names)
    X = np.ones((len(d), 1))
    ZX = tuple(np.bincount(c, minlength=L)[:, None].astype(float) for c, L in zip(st.codes, st.levels))
    zd = tuple(np.bincount(c, weights=d, minlength=L) for c, L in zip(st.codes, st.levels))
    ZW = tuple(np.column_stack([zx, s]) for zx, s in zip(ZX, zd))
    W = np.column_stack([X, d])
    P, H, W2 = group_sums(st, ZW)
    fs = FixedSums(n=len(d), p=1, T=W.T @ W, ZW=ZW, P=P, H=H, W2=W2)
    rp = fit_reml_fixed(st, fs, names)
    assert abs(rp.criterion - r1.criterion) < 1e-8
    np.testing.assert_allclose(rp.variances, r1.variances, rtol=1e-5, atol=1e-9)
    est, var, df = rp.contrast(np.ones(1))
    assert abs(est - r1.mu) < 1e-7 and abs(np.sqrt(var) / np.sqrt(r1.var_mu) - 1) < 1e-5
    assert abs(df / r1.df - 1) < 1e-3


def test_kept_columns_drop_dependent_columns_in_order():
    X = np.column_stack([np.ones(6), [1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1],
                         np.zeros(6)])
    kept, null = kept_columns(X.T @ X)
    assert kept == [0, 1, 2]
    assert len(null) == 2 and all(np.allclose(X @ v, 0) for v in null)


def _data(seed=3, drop_level_for=None):
    rng = np.random.default_rng(seed)
    rows = []
    for m in ("a", "b", "c"):
        for s in range(8):
            u = rng.normal(0, 0.8)
            for qq in range(6):
                diff = ("easy", "hard", "mid")[qq % 3]
                if drop_level_for == m and diff == "hard":
                    continue
                rows.append(dict(model=m, subject=f"s{s}", question=f"s{s}q{qq}", difficulty=diff,
                                 length=float(qq), correct=float(u + rng.normal())))
    return pd.DataFrame(rows)


def test_interaction_formula_gives_an_interaction_fit():
    res = mixrank.fit("correct ~ model * difficulty + (1|subject)", _data())
    assert isinstance(res.frame.spec, InteractionSpec)
    tab = res.contrasts(by="difficulty")
    assert list(tab.columns) == ["model_a", "model_b", "difficulty", "estimate", "std_error", "df",
                                 "statistic", "p_value", "p_adjusted", "ci_lower", "ci_upper", "level",
                                 "n", "note"]
    assert len(tab) == 9 and (tab["note"] == "").all()
    an = res.anova(adjust="holm")
    assert list(an.columns) == ["model_a", "model_b", "term", "F", "num_df", "den_df", "p_value",
                                "p_adjusted", "note"]
    assert (an["term"] == "model:difficulty").all() and (an["num_df"] == 2).all()
    assert (an["p_adjusted"] >= an["p_value"]).all()


def test_level_without_common_cells_is_nan_with_a_note():
    res = mixrank.fit("correct ~ model * difficulty + (1|subject)", _data(drop_level_for="a"))
    tab = res.contrasts(by="difficulty")
    bad = tab[(tab.model_a == "a") & (tab.difficulty == "hard")]
    assert len(bad) == 2 and bad["estimate"].isna().all()
    assert bad["note"].str.contains("no common cells").all()
    ok = tab[~((tab.model_a == "a") & (tab.difficulty == "hard"))]
    assert ok["estimate"].notna().all()
    an = res.anova()
    assert (an.loc[an.model_a == "a", "num_df"] == 1).all()


def _fitted_differences(estimand):
    """Pair (a, b) of the unbalanced data under ``estimand``: the fit, its frame, the common
    cells and the fitted difference on each of them."""
    df = _data(drop_level_for="a")
    res = mixrank.fit("correct ~ model * difficulty + (1|subject)", df, estimand=estimand,
                      pairs=[("a", "b")])
    fr = res.frame
    both = fr.observed[:, 0] & fr.observed[:, 1]
    fp = res.pairs[0].fixed
    return res, fr, both, fp.design.X[:, fp.kept] @ fp.fit.beta


def test_cells_estimand_is_the_mean_of_fitted_cell_differences():
    res, fr, both, fitted = _fitted_differences("cells")
    assert abs(res.contrasts()["estimate"].iloc[0] - fitted.mean()) < 1e-12
    assert len(fitted) == both.sum()


def test_gls_estimand_is_the_gls_mean_under_the_interaction_covariance():
    """Balanced design: gls weights are equal, so gls = cells."""
    df = _data()
    g = mixrank.fit("correct ~ model * difficulty + (1|subject)", df, pairs=[("a", "b")])
    c = mixrank.fit("correct ~ model * difficulty + (1|subject)", df, pairs=[("a", "b")],
                    estimand="cells")
    assert abs(g.pairs[0].estimate - c.pairs[0].estimate) < 1e-10


def test_numeric_covariate_gives_a_slope_per_unit():
    res = mixrank.fit("correct ~ model * length + (1|subject)", _data(), pairs=[("a", "b")])
    tab = res.contrasts(by="length")
    fp = res.pairs[0].fixed
    assert list(tab["length"]) == ["per unit"]
    assert abs(tab["estimate"].iloc[0] - fp.fit.beta[1]) < 1e-12


@pytest.mark.parametrize("mutate,match", [
    (lambda d: d.assign(difficulty=np.where(d.model == "a", "easy", d.difficulty)),
     "varies within a cell"),
    (lambda d: d.assign(difficulty=np.nan), "no values"),
    (lambda d: d.assign(difficulty=d.difficulty.where(d.index % 7 != 0)), "missing in"),
    (lambda d: d.assign(difficulty="x"), "single value"),
])
def test_bad_covariates_are_clear_errors(mutate, match):
    with pytest.raises(mixrank.DataError, match=match):
        mixrank.fit("correct ~ model * difficulty + (1|subject)", mutate(_data()))


def test_by_must_be_a_covariate_of_the_formula():
    res = mixrank.fit("correct ~ model * difficulty + (1|subject)", _data(), pairs=[("a", "b")])
    with pytest.raises(mixrank.DataError, match=r"by='subject' is not a covariate.*\['difficulty'\]"):
        res.contrasts(by="subject")
    plain = mixrank.fit("correct ~ model + (1|subject)", _data(), pairs=[("a", "b")])
    with pytest.raises(mixrank.DesignError, match="no covariate"):
        plain.contrasts(by="difficulty")
    with pytest.raises(mixrank.DesignError, match="no covariate"):
        plain.anova()


def test_unsupported_options_with_covariates():
    with pytest.raises(mixrank.DesignError, match="method='aggregate'"):
        mixrank.fit("correct ~ model * difficulty + (1|subject)", _data(), method="aggregate")
    with pytest.raises(mixrank.DesignError, match="engine='lme4'"):
        mixrank.fit("correct ~ model * difficulty + (1|subject)", _data(), engine="lme4")


def test_direct_engine_call_matches_fit():
    df = _data()
    res = mixrank.fit("correct ~ model * difficulty + (1|subject)", df, pairs=[("a", "c")])
    from mixrank.routes.interaction import interaction_frame

    frame, design = interaction_frame(res.frame.spec, df, method="reml", engine="auto",
                                      backend="pandas", pair_by=None, replicate=None, na="error")
    fits = fit_pairs_fixed(frame, design, [(0, 2)])
    assert fits[0].estimate == res.pairs[0].estimate


def test_model_scores_by_level_in_a_balanced_design_are_the_level_means():
    """Balanced (every subject has every level equally often): GLS = the plain level mean."""
    df = _data()
    res = mixrank.fit("correct ~ model * difficulty + (1|subject)", df)
    sc = res.model_scores(by="difficulty")
    assert list(sc.columns) == ["model", "difficulty", "estimate", "std_error", "df", "ci_lower",
                                "ci_upper", "level", "n", "note"]
    means = df.groupby(["model", "difficulty"])["correct"].mean()
    for _, row in sc.iterrows():
        assert abs(row["estimate"] - means[(row["model"], row["difficulty"])]) < 1e-10
    gaps = res.contrasts(by="difficulty")
    for _, g in gaps.iterrows():
        a = sc[(sc.model == g.model_a) & (sc.difficulty == g.difficulty)]["estimate"].iloc[0]
        b = sc[(sc.model == g.model_b) & (sc.difficulty == g.difficulty)]["estimate"].iloc[0]
        assert abs(g["estimate"] - (a - b)) < 1e-10


def test_rank_intervals_by_level_rank_the_models_present():
    res = mixrank.fit("correct ~ model * difficulty + (1|subject)", _data(drop_level_for="a"))
    tab = res.rank_intervals(by="difficulty")
    hard = tab[tab.difficulty == "hard"]
    assert hard.loc[hard.model == "a", "rank"].isna().all()
    assert set(hard.loc[hard.model != "a", "rank"]) == {1.0, 2.0}
    assert hard["note"].str.contains("ranked among the 2|no cells").all()
    easy = tab[tab.difficulty == "easy"]
    assert sorted(easy["rank"]) == [1.0, 2.0, 3.0] and (easy["note"] == "").all()
    with pytest.raises(mixrank.DesignError, match="numeric"):
        mixrank.fit("correct ~ model * length + (1|subject)", _data()).rank_intervals(by="length")


def test_sigma_d_of_full_pairs_from_sufficient_statistics():
    df = _data()
    res = mixrank.fit("correct ~ model * difficulty + (1|subject)", df, pairs=[("a", "b")])
    fr = res.frame
    d = fr.scores[:, 0] - fr.scores[:, 1]
    assert abs(res.pairs[0].sigma_d - np.std(d, ddof=1)) < 1e-12


def test_summary_of_one_pair_lists_every_fixed_column():
    res = mixrank.fit("correct ~ model * difficulty + (1|subject)", _data(), pairs=[("a", "b")])
    text = str(res.summary())
    for col in ("Intercept", "difficulty[T.hard]", "difficulty[T.mid]", "Overall gap"):
        assert col in text


def test_degenerate_pair_is_a_flagged_row_not_a_crash():
    """Two models with identical scores: the pair has no residual variation."""
    df = _data()
    df = pd.concat([df, df[df.model == "a"].assign(model="a2")], ignore_index=True)
    res = mixrank.fit("correct ~ model * difficulty + (1|subject)", df)
    p = res.pair("a", "a2")
    assert p.degenerate and p.fixed is None
    tab = res.contrasts(by="difficulty")
    rows = tab[(tab.model_a == "a") & (tab.model_b == "a2")]
    assert len(rows) == 3 and rows["estimate"].isna().all() and rows["note"].str.len().gt(0).all()
    assert res.anova().query("model_a == 'a' and model_b == 'a2'")["F"].isna().all()
    assert res.contrasts(by="difficulty").query("model_a == 'a' and model_b == 'b'")["estimate"].notna().all()


def test_units_estimand_averages_fitted_differences_per_unit():
    res, fr, both, fitted = _fitted_differences("units")
    units = fr.term_codes["subject"][both]
    per_unit = [fitted[units == u].mean() for u in np.unique(units)]
    assert abs(res.pairs[0].estimate - float(np.mean(per_unit))) < 1e-12
