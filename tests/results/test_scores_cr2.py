"""One estimator per table: model_scores() takes the contrasts' SE/df method.

Against computations written here from the raw rows, not through mixrank's code:

* a complete model's row under ``df="cr2"`` (the default): the CR2 variance of its
  mean, clustered by subject, from the dense definition (adjustment matrices
  ``(I - H_tt)^{-1/2}`` of the hat matrix ``H = 1 w'``; clubSandwich's CR2 for
  ``lm(y ~ 1)``), and Bell-McCaffrey df ``tr(M)^2 / tr(M^2)`` with the
  working covariance ``I + r ZZ'`` (r from the model's own fitted components);
* a model missing cells: its adjusted score's weights on every observed score come
  from statsmodels' OLS with model and cell dummies (finite differences of its
  predictions), and the CR2 variance of the estimator's unit contributions is
  summed here;
* R's clubSandwich, live (marker ``r``): ``vcovCR(lm(y ~ 1), cluster = subject,
  type = "CR2")`` gives each complete model's SE;
* held-out-style data from the bundled example (one model complete, the other five
  missing 1--6 random questions): every row has the contrasts' ``df_method`` and
  an SE within 10% of the same model's complete-data SE (measured 0.996--1.016).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

import mixrank
from mixrank.results.scores import model_fits

F = "correct ~ model + (1|subject)"


def _fit(data, formula=F, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(formula, data, **kw)


def _cells(data: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, cell): the cell score (mean over replicate rows) and its subject."""
    return data.groupby(["model", "subject", "question", "prompt"], as_index=False)[
        "correct"].mean()


def _held_out(data: pd.DataFrame, seed: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    qs = data[["subject", "question"]].drop_duplicates().reset_index(drop=True)
    keep = []
    for i, m in enumerate(sorted(data.model.unique())):
        dm = data[data.model == m]
        if i > 0:                                    # the first model stays complete
            drop = qs.iloc[g.choice(len(qs), size=int(g.integers(1, 7)), replace=False)]
            gone = set(zip(drop.subject, drop.question))
            dm = dm[[k not in gone for k in zip(dm.subject, dm.question)]]
        keep.append(dm)
    return pd.concat(keep, ignore_index=True)


def _dense_cr2(y, cl, w, ratio):
    """CR2 variance and Bell-McCaffrey df of the estimate w'y clustered by ``cl``, by the
    definitions: hat matrix H = 1 w', A_t = (I - H_tt)^(-1/2), V = sum_t (g_t' y)^2 with
    g_t = (I - H)' P_t' A_t' w_t, df = tr(M)^2 / tr(M^2), M = G Omega G'."""
    from scipy.linalg import fractional_matrix_power

    n = len(y)
    IH = np.eye(n) - np.outer(np.ones(n), w)
    G = []
    for t in np.unique(cl):
        idx = np.flatnonzero(cl == t)
        A = np.real(fractional_matrix_power(IH[np.ix_(idx, idx)], -0.5))
        g = np.zeros(n)
        g[idx] = A.T @ w[idx]
        G.append(IH.T @ g)
    G = np.array(G)
    var = float(np.sum((G @ y) ** 2))
    Z = (cl[:, None] == np.unique(cl)[None, :]).astype(float)
    M = G @ (np.eye(n) + ratio * Z @ Z.T) @ G.T
    return var, float(np.trace(M) ** 2 / np.sum(M * M)), None


def test_complete_rows_are_cr2_of_the_mean_with_bell_mccaffrey_df():
    d = mixrank.load_example()
    res = _fit(d)
    tab = res.model_scores().set_index("model")
    c = _cells(d)
    ratios = {m.model: m.components["subject"] / m.components["residual"]
              for m in model_fits(res, "cells")}
    for m in ["m01", "m04", "m06"]:
        cm = c[c.model == m]
        y = cm["correct"].to_numpy(float)
        cl = pd.factorize(cm["subject"])[0]
        var, df, _ = _dense_cr2(y, cl, np.full(len(y), 1 / len(y)), ratios[m])
        assert tab.loc[m, "std_error"] == pytest.approx(np.sqrt(var), rel=1e-10)
        assert tab.loc[m, "df"] == pytest.approx(min(df, 11.0), rel=1e-8)
    assert tab.attrs["mixrank"]["df_method"] == res.contrasts().attrs["mixrank"]["df_method"] \
        == "CR2 at 'subject', Bell-McCaffrey df"


def _ols_weights(c: pd.DataFrame, model: str) -> np.ndarray:
    """d score_model / d y for every observed (model, cell) row of ``c``: the OLS fit
    y ~ C(model) + C(cell), its predictions for ``model`` averaged over every cell."""
    grid = pd.DataFrame({"model": model, "cell": sorted(c.cell.unique())})

    def score(y):
        ols = smf.ols("y ~ C(model) + C(cell)", c.assign(y=y)).fit()
        return float(ols.predict(grid).mean())

    y0 = c["y"].to_numpy(float)
    base = score(y0)
    out = np.empty(len(y0))
    for i in range(len(y0)):                     # linear: one unit step is exact
        y1 = y0.copy()
        y1[i] += 1.0
        out[i] = score(y1) - base
    return out


def test_adjusted_row_is_cr2_of_its_unit_contributions():
    g = np.random.default_rng(7)
    rows = []
    for s in range(5):
        u = g.normal(0, 0.6)
        for q in range(4):
            v = g.normal(0, 0.4)
            for m, mu in enumerate([0.0, 0.3, 0.5]):
                if m == 2 and (s, q) in {(0, 1), (3, 2)}:
                    continue                          # model 2 lacks two cells
                rows.append((f"m{m}", f"s{s}", f"q{q}", mu + u + v + g.normal(0, 0.5)))
    d = pd.DataFrame(rows, columns=["model", "subject", "question", "y"])
    res = _fit(d, "y ~ model + (1|subject)")
    tab = res.model_scores().set_index("model")
    assert tab.loc["m2", "adjusted"] and not tab.loc["m0", "adjusted"]
    c = d.assign(cell=d.subject + ":" + d.question)
    a = _ols_weights(c, "m2")
    assert a.sum() == pytest.approx(1.0)
    assert float(a @ c["y"]) == pytest.approx(tab.loc["m2", "estimate"], rel=1e-10)
    s = {m: float(smf.ols("y ~ C(model) + C(cell)", c).fit().predict(
        pd.DataFrame({"model": m, "cell": sorted(c.cell.unique())})).mean())
        for m in ["m0", "m1", "m2"]}
    r = a * (c["y"].to_numpy(float) - c["model"].map(s).to_numpy(float))
    e = c.assign(r=r).groupby("subject")["r"].sum()
    Wt = c.assign(a=a).groupby("subject")["a"].sum()   # each cell weighs 1/20
    np.testing.assert_allclose(Wt, c.groupby("subject")["cell"].nunique() / 20, rtol=1e-8)
    var = float(np.sum(e ** 2 / (1 - Wt)))
    assert tab.loc["m2", "std_error"] == pytest.approx(np.sqrt(var), rel=1e-8)
    # Bell-McCaffrey df of the mean over the 20 cells of the union, capped at 4
    cl = pd.factorize(c.drop_duplicates("cell")["subject"])[0]
    comps = next(m.components for m in model_fits(res, "cells") if m.model == "m2")
    _, df, _ = _dense_cr2(np.zeros(20), cl, np.full(20, 1 / 20),
                          comps["subject"] / comps["residual"])
    assert tab.loc["m2", "df"] == pytest.approx(min(df, 4.0), rel=1e-8)
    assert set(tab["note"]) == {""}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_held_out_rows_share_the_method_and_keep_their_se(seed):
    d = mixrank.load_example()
    full = _fit(d).model_scores().set_index("model")
    res = _fit(_held_out(d, seed))
    with warnings.catch_warnings():
        warnings.simplefilter("error", mixrank.MixrankWarning)   # no mixing warning
        held = res.model_scores().set_index("model")
    assert held["adjusted"].sum() == 5
    assert held.attrs["mixrank"]["df_method"] == res.contrasts().attrs["mixrank"]["df_method"]
    assert set(held["note"]) == {""}
    ratio = held["std_error"] / full.loc[held.index, "std_error"]
    assert ((ratio > 0.9) & (ratio < 1.1)).all(), ratio.to_dict()


def test_mixed_methods_get_a_note_per_row_and_one_warning():
    d = _held_out(mixrank.load_example(), 1)
    res = _fit(d, df="satterthwaite")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        tab = res.model_scores().set_index("model")
    msgs = [str(w.message) for w in rec if "another method" in str(w.message)]
    assert len(msgs) == 1 and "5 of 6 rows" in msgs[0]
    odd = tab[tab["adjusted"]]
    assert odd["note"].str.contains("CR2 at 'subject'").all()
    assert tab.loc["m01", "note"] == ""
    assert "except 5 row(s)" in tab.attrs["mixrank"]["df_method"]


@pytest.mark.r
def test_complete_rows_match_clubsandwich_live(tmp_path):
    rscript = os.environ.get("MIXRANK_RSCRIPT") or shutil.which("Rscript")
    if rscript is None:
        if os.environ.get("MIXRANK_REQUIRE_R") == "1":
            pytest.fail("Rscript not found (MIXRANK_REQUIRE_R=1)")
        pytest.skip("Rscript not found")
    d = mixrank.load_example()
    tab = _fit(d).model_scores().set_index("model")
    _cells(d).to_csv(tmp_path / "c.csv", index=False)
    code = (f"suppressMessages(library(clubSandwich)); c <- read.csv('{tmp_path / 'c.csv'}');"
            "for (m in sort(unique(c$model))) { x <- c[c$model == m, ];"
            "v <- vcovCR(lm(correct ~ 1, x), cluster = x$subject, type = 'CR2');"
            "cat(m, format(sqrt(v[1, 1]), digits = 15), '\\n') }")
    out = subprocess.run([rscript, "--vanilla", "-e", code], capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0 and "clubSandwich" in out.stderr:
        pytest.skip("R package clubSandwich missing")
    assert out.returncode == 0, out.stderr
    got = dict(line.split() for line in out.stdout.strip().splitlines())
    assert set(got) == set(tab.index)
    for m, se in got.items():
        assert tab.loc[m, "std_error"] == pytest.approx(float(se), rel=1e-8)
