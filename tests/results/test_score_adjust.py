"""Leaderboard scores on one common item set when cell sets differ.

* The additive fit ``y = mu_model + b_cell`` equals statsmodels' OLS with model
  and cell dummies (its predictions averaged over the cells).
* On a balanced design the adjusted scores are the plain means exactly.
* On JailbreakBench with one model's easiest subject removed, the plain means
  contradict a significant paired contrast; the default (adjusted) order does
  not, the row says "adjusted, scored on N of M cells", and the warning names
  the model.
* No score interval of a 0/1 score leaves [0, 1] (bundled ChemBench).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

import mixrank
from mixrank.errors import OptionError, UnpairedCellsWarning
from mixrank.results.score_adjust import additive_fit
from mixrank.results.scores import score_interval

F = "correct ~ model + (1|subject)"


def _fit(formula, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(formula, data)


def test_additive_fit_equals_ols_with_model_and_cell_dummies():
    g = np.random.default_rng(0)
    nc, M = 40, 4
    Y = g.normal(size=(nc, M)) + np.arange(M) + g.normal(size=(nc, 1))
    obs = g.random((nc, M)) > 0.3
    obs[:, 0] = True                                      # connected through model 0
    mu, b = additive_fit(Y, obs)
    rows = [(f"m{m}", f"c{c:02d}", Y[c, m]) for c in range(nc) for m in range(M) if obs[c, m]]
    d = pd.DataFrame(rows, columns=["model", "cell", "y"])
    ols = smf.ols("y ~ C(model) + C(cell)", d).fit()
    grid = pd.DataFrame([(f"m{m}", f"c{c:02d}") for m in range(M) for c in range(nc)],
                        columns=["model", "cell"])
    pred = ols.predict(grid).to_numpy().reshape(M, nc).mean(axis=1)
    np.testing.assert_allclose(mu + b.mean(), pred, rtol=1e-10, atol=1e-10)


def test_balanced_design_adjusted_equals_plain_exactly():
    res = _fit(F, mixrank.load_example())
    a, p = res.model_scores(), res.model_scores(scoring="plain")
    assert a["estimate"].tolist() == p["estimate"].tolist()
    assert a["std_error"].tolist() == p["std_error"].tolist()
    assert not a["adjusted"].any()
    assert a["basis"].str.startswith("plain mean, scored on 960 of 960 cells").all()


@pytest.fixture(scope="module")
def jbb_removed():
    d = mixrank.load_dataset("jailbreakbench")
    m = "gpt-4-0125-preview"
    easiest = d[d.model == m].groupby("subject")["correct"].mean().idxmax()
    d2 = d[~((d.model == m) & (d.subject == easiest))]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = mixrank.fit(F, d2)
    return res, m, rec


def _contradictions(res, scoring):
    s = res.model_scores(scoring=scoring).set_index("model")["estimate"]
    c = res.contrasts()
    return [(a, b) for a, b, e, p in zip(c.model_a, c.model_b, c.estimate, c.p_adjusted)
            if p < 0.05 and np.sign(s[a] - s[b]) != np.sign(e)]


def test_default_order_agrees_with_significant_contrasts(jbb_removed):
    res, m, _ = jbb_removed
    assert _contradictions(res, "plain")            # the plain means misorder a pair
    assert _contradictions(res, "adjusted") == []
    row = res.model_scores().set_index("model").loc[m]
    assert row["adjusted"] and row["basis"] == f"adjusted, scored on {row['n']:,} of 600 cells"
    assert row["n"] == 360 and row["df"] == 9       # Bell-McCaffrey df, capped at 10 - 1
    assert row["ci_lower"] < row["estimate"] < row["ci_upper"]
    plain = res.model_scores(scoring="plain").set_index("model").loc[m]
    assert plain["basis"].startswith("plain mean, scored on 360 of 600")


def test_unpaired_warning_names_the_model_missing_cells(jbb_removed):
    _, m, rec = jbb_removed
    msgs = [str(w.message) for w in rec if issubclass(w.category, UnpairedCellsWarning)]
    assert len(msgs) == 1 and f"{m} lacks 240 of 600" in msgs[0]


def test_unknown_scoring_and_estimand_are_option_errors():
    res = _fit(F, mixrank.load_example())
    with pytest.raises(OptionError, match="did you mean 'plain'"):
        res.model_scores(scoring="plan")
    with pytest.raises(OptionError, match="did you mean 'cells'"):
        res.model_scores(estimand="cell")


def test_score_intervals_stay_in_unit_interval_on_chembench():
    res = _fit(F, mixrank.load_dataset("chembench"))
    for scoring in ("adjusted", "plain"):
        s = res.model_scores(scoring=scoring)
        assert (s["ci_lower"] >= 0).all() and (s["ci_upper"] <= 1).all()
        assert ((s["ci_lower"] <= s["estimate"]) & (s["estimate"] <= s["ci_upper"])).all()
    assert s["note"].str.contains("logit scale").any()   # the t interval did leave [0, 1]


def test_score_interval_logit_by_hand():
    lo, hi, logit = score_interval(0.02, 0.02, 8.0, 0.95, True)
    from scipy import stats
    q = stats.t.ppf(0.975, 8)
    eta, se = np.log(0.02 / 0.98), 0.02 / (0.02 * 0.98)
    assert logit and lo == pytest.approx(1 / (1 + np.exp(-(eta - q * se))), rel=1e-12)
    assert hi == pytest.approx(1 / (1 + np.exp(-(eta + q * se))), rel=1e-12)
    assert score_interval(0.5, 0.01, 8.0, 0.95, True)[2] is False     # inside: the t interval
    assert score_interval(0.0, 0.0, 8.0, 0.95, True)[:2] == (0.0, 0.0)
