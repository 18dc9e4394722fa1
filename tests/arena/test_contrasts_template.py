"""ArenaResult.contrasts through the one contrasts template: the same tables as before.

The arena's contrasts were its own method until the template took them over; these tests pin
the template's tables on the bundled Chatbot Arena votes to numbers computed by an independent
path:

* the unadjusted columns from the fitted strengths and their covariance (``beta_a - beta_b``,
  ``sqrt(C_aa + C_bb - 2 C_ab)``, t with the clustered df);
* Holm, Bonferroni and BH from statsmodels' ``multipletests``;
* max-t from the former implementation's formula, written out below (``_former_maxt``: the
  single-step max-|z| over draws of the strengths, as ``ArenaResult._maxt`` computed it up to
  commit 51bd826), with the same seed: equal to the last bit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

import mixrank
from mixrank.arena.result import ELO
from mixrank.errors import DesignError, OptionError


@pytest.fixture(scope="module")
def res():
    return mixrank.arena(mixrank.load_dataset("chatbot_arena"))


def _by_pair(tab: pd.DataFrame) -> pd.DataFrame:
    return tab.set_index(["model_a", "model_b"]).sort_index()


def _expected(res, level: float = 0.95) -> pd.DataFrame:
    """The unadjusted logit-scale columns from the fit's strengths and covariance."""
    K = len(res.models)
    ia, ib = np.triu_indices(K, 1)
    C = res.cov[:K, :K]
    est = res.fit.beta[ia] - res.fit.beta[ib]
    se = np.sqrt(C[ia, ia] + C[ib, ib] - 2 * C[ia, ib])
    df = res.dfs["pairs"][ia, ib]
    z = est / se
    q = stats.t.ppf(0.5 + level / 2, df)
    return pd.DataFrame({"model_a": [res.models[i] for i in ia],
                         "model_b": [res.models[i] for i in ib], "estimate": est,
                         "std_error": se, "df": df, "statistic": z,
                         "p_value": 2 * stats.t.sf(np.abs(z), df),
                         "ci_lower": est - q * se, "ci_upper": est + q * se, "ia": ia, "ib": ib})


def _former_maxt(C, ia, ib, z, df, level, B, seed):
    """The former ArenaResult._maxt: max-|z| over B draws of N(0, C), 500 at a time."""
    z = stats.norm.isf(stats.t.sf(np.abs(z), df))
    w, V = np.linalg.eigh(C)
    L = V * np.sqrt(np.clip(w, 0, None))
    sd = np.sqrt(C[ia, ia] + C[ib, ib] - 2 * C[ia, ib])
    gen = np.random.default_rng(seed)
    mx = np.empty(B)
    for s in range(0, B, 500):
        e = gen.standard_normal((min(500, B - s), C.shape[0])) @ L.T
        mx[s:s + e.shape[0]] = np.max(np.abs(e[:, ia] - e[:, ib]) / sd, axis=1)
    crit = float(np.quantile(mx, level))
    padj = np.minimum((1 + np.sum(mx[None, :] >= np.abs(z)[:, None], axis=1)) / (B + 1), 1.0)
    return crit, padj


def test_unadjusted_columns_are_the_fitted_strengths(res):
    got = res.contrasts(adjust="none", scale="logit")
    want = _expected(res)
    assert len(got) == 190 and res.dfs is not None          # clustered by question: finite df
    for col in ("estimate", "std_error", "df", "statistic", "p_value", "ci_lower", "ci_upper"):
        np.testing.assert_allclose(got[col], want[col], rtol=1e-12, atol=1e-15, err_msg=col)
    np.testing.assert_array_equal(got["p_adjusted"], got["p_value"])
    assert list(got.columns) == [
        "model_a", "model_b", "estimate", "std_error", "df", "statistic", "p_value",
        "p_adjusted", "p_greater", "ci_lower", "ci_upper", "level", "n", "wins_a", "wins_b",
        "ties"]
    meta = got.attrs["mixrank"]
    assert (meta["adjust"], meta["family_size"], meta["ci"], meta["scale"]) == (
        "none", 190, "marginal", "logit")


@pytest.mark.parametrize("how,sm", [("holm", "holm"), ("bonferroni", "bonferroni"),
                                    ("bh", "fdr_bh")])
def test_stepwise_adjustments_are_statsmodels(res, how, sm):
    tab = res.contrasts(adjust=how)
    want = multipletests(_expected(res)["p_value"].to_numpy(), method=sm)[1]
    np.testing.assert_allclose(tab["p_adjusted"], want, rtol=1e-12, atol=1e-300)
    assert tab.attrs["mixrank"]["adjust"] == how


def test_default_is_holm_on_the_fit_scale(res):
    tab = res.contrasts()
    holm = res.contrasts(adjust="holm", scale="elo")
    pd.testing.assert_frame_equal(tab, holm, check_exact=True)
    logit = res.contrasts(adjust="holm", scale="logit")
    np.testing.assert_array_equal(tab["estimate"], ELO * logit["estimate"])
    np.testing.assert_array_equal(tab["p_adjusted"], logit["p_adjusted"])


@pytest.mark.parametrize("scale", ["logit", "elo", "probability"])
def test_maxt_is_the_former_formula_to_the_last_bit(res, scale):
    tab = res.contrasts(adjust="maxt", draws=2000, rng=5, scale=scale)
    want = _expected(res)
    K = len(res.models)
    crit, padj = _former_maxt(res.cov[:K, :K], want["ia"].to_numpy(), want["ib"].to_numpy(),
                              want["statistic"].to_numpy(), want["df"].to_numpy(), 0.95, 2000, 5)
    np.testing.assert_array_equal(tab["p_adjusted"], padj)
    meta = tab.attrs["mixrank"]
    assert meta["critical_value"] == crit and meta["B"] == 2000
    assert meta["ci"] == "simultaneous" and meta["family_size"] == 190
    qt = stats.t.isf(stats.norm.sf(crit), want["df"].to_numpy())
    lo = want["estimate"].to_numpy() - qt * want["std_error"].to_numpy()
    hi = want["estimate"].to_numpy() + qt * want["std_error"].to_numpy()
    f = {"logit": lambda x: x, "elo": lambda x: ELO * x,
         "probability": lambda x: 1 / (1 + np.exp(-x))}[scale]
    np.testing.assert_allclose(tab["ci_lower"], f(lo), rtol=1e-12)
    np.testing.assert_allclose(tab["ci_upper"], f(hi), rtol=1e-12)
    # the simultaneous interval is wider than the marginal one, and max-t is between the
    # unadjusted p-value and Bonferroni (up to its Monte Carlo error)
    marg = res.contrasts(adjust="none", scale=scale)
    assert (tab["ci_upper"] - tab["ci_lower"] >= marg["ci_upper"] - marg["ci_lower"]).all()
    bonf = np.minimum(190 * marg["p_value"], 1.0)
    assert (tab["p_adjusted"] >= marg["p_value"] - 1e-12).all()
    assert (tab["p_adjusted"] <= bonf + 3 * np.sqrt(0.05 / 2000) + 1 / 2001).all()


def test_draws_rng_and_options_are_checked_as_before(res):
    with pytest.raises(DesignError, match="too few for max-t; use an integer >= 100"):
        res.contrasts(adjust="maxt", draws=50)
    res.contrasts(adjust="maxt", draws=100, rng=1)            # 100 draws: the arena's minimum
    with pytest.raises(OptionError, match=r"rng=\[1, 2\]"):    # refused whatever the adjustment
        res.contrasts(adjust="holm", rng=[1, 2])
    with pytest.raises(OptionError, match="stepdown"):
        res.contrasts(adjust="stepdown")
    with pytest.raises(OptionError, match=r"by='judge' is not supported by ArenaResult"):
        res.contrasts(by="judge")
    with pytest.warns(mixrank.MixrankDeprecationWarning, match="B="):
        old = res.contrasts(adjust="maxt", B=200, rng=3)
    pd.testing.assert_frame_equal(old, res.contrasts(adjust="maxt", draws=200, rng=3))


def test_arena_result_shows_itself(res):
    assert repr(res).startswith("<ArenaResult 'winner ~ 1'")
    assert res._repr_html_() == "<pre>" + repr(res).replace("&", "&amp;").replace(
        "<", "&lt;").replace(">", "&gt;") + "</pre>"
    s = res.summary()
    assert repr(s) == str(s) and s._repr_html_().startswith("<pre>")
