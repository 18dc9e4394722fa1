"""One estimate, SE and df per pair in every table.

* The verdict table's clustered column is built on the default contrast
  (``fit.contrasts()``): same estimate, SE and df; ``resolved_all`` implies
  that the default adjusted contrast rejects.
* The published recipe's design effect (``design_effect="anova"``): the
  one-way ANOVA ICC against a hand computation.
* A walk over every table of the HTML report: for each pair, every table that
  shows its estimate, SE or df shows the contrasts table's numbers.
"""

from __future__ import annotations

import io
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.design.paradigms import anova_design_effect
from mixrank.errors import OptionError

F = "correct ~ model + (1|subject)"


def _fit(data, formula=F):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(formula, data)


def test_anova_icc_by_hand():
    """Groups [1,2,3], [4,6], [5,7,9,11]: MSB = 62/2 = 31, MSW = 24/6 = 4,
    n0 = (9 - 29/9)/2 = 26/9, ICC = 27 / (31 + (26/9 - 1) 4) = 243/347,
    m_bar = 3, DE = 1 + 2 ICC = 833/347."""
    d = np.array([1, 2, 3, 4, 6, 5, 7, 9, 11], dtype=float)
    g = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    icc, de, m_bar = anova_design_effect(d, g)
    assert icc == pytest.approx(float(Fraction(243, 347)), rel=1e-14)
    assert de == pytest.approx(float(Fraction(833, 347)), rel=1e-14)
    assert m_bar == 3.0
    # a negative ANOVA estimate is truncated at 0 (DE 1)
    icc0, de0, _ = anova_design_effect(np.array([0.0, 1, 0, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]))
    assert icc0 == 0.0 and de0 == 1.0


def test_resolution_anova_design_effect_matches_the_recipe():
    data = mixrank.load_example()
    res = _fit(data)
    tab = res.resolution(columns="all", pairs="all", design_effect="anova")
    fr = res.frame
    for _, r in tab.iterrows():
        ja, jb = fr.model_index(r["model_a"]), fr.model_index(r["model_b"])
        mask = fr.common_mask(ja, jb)
        d = fr.scores[mask, ja] - fr.scores[mask, jb]
        _, de, _ = anova_design_effect(d, fr.term_codes["subject"][mask])
        assert r["design_effect"] == pytest.approx(de, rel=1e-12)
    assert tab.attrs["mixrank"]["design_effect"] == "anova"
    with pytest.raises(OptionError, match="design_effect"):
        res.resolution(columns="all", design_effect="anvoa")


@pytest.mark.parametrize("name", ["example", "jailbreakbench"])
def test_resolved_all_implies_the_default_adjusted_contrast_rejects(name):
    data = mixrank.load_example() if name == "example" else mixrank.load_dataset(name)
    res = _fit(data)
    tab = res.resolution(columns="all", pairs="all")
    con = res.contrasts()
    assert tab.attrs["mixrank"]["contrasts_adjust"] == con.attrs["mixrank"]["adjust"]
    p = {(a, b): v for a, b, v in zip(con.model_a, con.model_b, con.p_adjusted)}
    p.update({(b, a): v for (a, b), v in list(p.items())})
    alpha = tab.attrs["mixrank"]["alpha"]
    for _, r in tab.iterrows():
        assert r["p_adjusted"] == p[(r["model_a"], r["model_b"])]
        if r["resolved_all"]:
            assert p[(r["model_a"], r["model_b"])] < alpha


def _close(x, y):
    """Equal up to the report's rounding (4 significant digits, 3 below 1e-3)."""
    return bool(np.isclose(float(x), float(y), rtol=5e-3, atol=1e-12))


def test_every_report_table_agrees_with_the_contrasts():
    from mixrank.report.html import render_report

    res = _fit(mixrank.load_example())
    con = res.contrasts()
    ref = {}
    for r in con.itertuples(index=False):
        ref[(r.model_a, r.model_b)] = (r.estimate, r.std_error, r.df)
        ref[(r.model_b, r.model_a)] = (-r.estimate, r.std_error, r.df)
    page = render_report(res, resolution_kwargs={"pairs": "all"})
    tables = pd.read_html(io.StringIO(page))
    walked = 0
    for t in tables:
        if not {"model_a", "model_b"} <= set(t.columns) or "vary" in t.columns:
            continue          # the planning table's SE is a hypothetical design's
        shown = [c for c in ("estimate", "std_error", "df") if c in t.columns]
        for _, r in t.iterrows():
            key = (str(r["model_a"]), str(r["model_b"]))
            if key not in ref:
                continue
            est, se, df = ref[key]
            want = {"estimate": est, "std_error": se, "df": df}
            for c in shown:
                assert _close(r[c], want[c]), (list(t.columns)[:6], key, c, r[c], want[c])
                walked += 1
            if "variance" in t.columns:          # the design-effect table: SE^2
                assert _close(r["variance"], se ** 2), (key, r["variance"], se ** 2)
                walked += 1
    # the contrasts table, the design effect table and the verdict table were all walked
    n_pairs = len(con)
    assert walked >= n_pairs * (3 + 1 + 3)
