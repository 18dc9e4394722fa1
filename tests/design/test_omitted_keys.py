"""A pairing key left out of the formula (mixrank/design/omitted_keys.py).

Reference: the model x key F test equals statsmodels' nested-OLS F test
(cells + model x unit, with and without model x key) on a balanced design.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.design.omitted_keys import omitted_key_tests


def _data(sd_model_prompt: float, seed: int, models: int = 5, subjects: int = 6,
          questions: int = 3, prompts: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    S, Q, P = np.meshgrid(np.arange(subjects), np.arange(questions), np.arange(prompts),
                          indexing="ij")
    s, q, p = S.ravel(), (S * questions + Q).ravel(), P.ravel()
    rows = []
    base = rng.normal(0, 1, subjects * questions)[q] + rng.normal(0, .5, prompts)[p]
    for m in range(models):
        y = (base + rng.normal(0, .3, subjects)[s] + rng.normal(0, sd_model_prompt, prompts)[p]
             + rng.normal(0, 1, s.size))
        rows.append(pd.DataFrame(dict(model=f"m{m}", subject=[f"s{i}" for i in s],
                                      question=[f"q{i}" for i in q],
                                      prompt=[f"p{i}" for i in p], score=y)))
    return pd.concat(rows, ignore_index=True)


def _fit(d: pd.DataFrame, formula: str = "score ~ model + (1|subject)"):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fit = mixrank.fit(formula, d)
    return fit, [x for x in w if issubclass(x.category, mixrank.OmittedKeyWarning)]


def test_f_statistic_matches_statsmodels_nested_ols():
    sm = pytest.importorskip("statsmodels.formula.api")
    from statsmodels.stats.anova import anova_lm

    d = _data(0.3, 1)
    fit, _ = _fit(d)
    (rec,) = omitted_key_tests(fit.frame, fit.pairs)
    d = d.assign(cell=d["question"] + d["prompt"])
    small = sm.ols("score ~ C(cell) + C(model):C(subject)", d).fit()
    big = sm.ols("score ~ C(cell) + C(model):C(subject) + C(model):C(prompt)", d).fit()
    ref = anova_lm(small, big)
    assert rec["key"] == "prompt" and rec["levels"] == 4
    assert rec["df1"] == ref["df_diff"].iloc[1] and rec["df2"] == ref["df_resid"].iloc[1]
    assert rec["statistic"] == pytest.approx(ref["F"].iloc[1], rel=1e-9)
    assert rec["p_value"] == pytest.approx(ref["Pr(>F)"].iloc[1], rel=1e-7)


def test_warns_with_the_formula_to_write_and_the_inflation():
    fit, w = _fit(_data(0.6, 2))
    assert len(w) == 1
    msg = str(w[0].message)
    assert "'score ~ model + (1|subject) + (1|prompt)'" in msg and "too small" in msg
    (rec,) = omitted_key_tests(fit.frame, fit.pairs)
    assert rec["inflation"] > 1.5 and f"{rec['inflation']:.2f}x" in msg


def test_silent_with_the_term_or_without_the_variance():
    _, w = _fit(_data(0.6, 3), "score ~ model + (1|subject) + (1|prompt)")
    assert not w                                  # the key has its term
    quiet = sum(bool(_fit(_data(0.0, 100 + r))[1]) for r in range(20))
    assert quiet <= 1                             # F at 0.01 and inflation >= 1.1


def test_nested_keys_and_single_levels_are_not_candidates():
    d = _data(0.6, 4, prompts=1)
    fit, w = _fit(d)
    assert not w and omitted_key_tests(fit.frame, fit.pairs) == []
