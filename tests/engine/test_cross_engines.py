"""Native REML engine vs the statsmodels MixedLM engine on simulated designs.

statsmodels fits the same paired-difference model (variance components over
one all-spanning group, REML).  Three seeded designs with interior components
(nested, crossed, unbalanced crossed-and-nested); statsmodels cannot reach
boundary optima, so boundary designs are compared with lme4 instead
(``test_lme4_reference.py``).  Tolerances: ``STATSMODELS`` in
``tests/reference/tolerances.py`` (looser than the lme4 contract because of
statsmodels' gradient-based stopping rule).
"""

from __future__ import annotations

import warnings

import pytest

import mixrank
from mixrank.engine.crosscheck.statsmodels_engine import gls_variance
from tests.reference.tolerances import STATSMODELS, discrepancies

DESIGNS = {
    "nested": ("correct ~ model + (1|subject) + (1|subject:question)", dict(
        models=3, subjects=8, questions=6, prompts=2, family="gaussian", sd_model_subject=0.6,
        sd_model_question=0.7, sd_model_prompt=0.0, sd_residual=1.0, rng=11)),
    "crossed": ("correct ~ model + (1|subject) + (1|prompt)", dict(
        models=3, subjects=8, questions=8, prompts=4, family="gaussian", sd_model_subject=0.6,
        sd_model_question=0.0, sd_model_prompt=0.5, sd_residual=1.0, rng=12)),
    "unbalanced": ("correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)", dict(
        models=3, subjects=7, questions=[3, 5, 7, 9, 4, 6, 8], prompts=3, family="gaussian",
        sd_model_subject=0.6, sd_model_question=0.7, sd_model_prompt=0.5, sd_residual=1.0,
        missing=0.15, rng=30)),
}

_FITS: dict = {}


def _fits(name):
    if name not in _FITS:
        formula, kw = DESIGNS[name]
        df = mixrank.simulate(**kw)
        _FITS[name] = (mixrank.fit(formula, df, engine="native", estimand="gls"),
                       mixrank.fit(formula, df, engine="statsmodels", estimand="gls"))
    return _FITS[name]


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_statsmodels_matches_native(name):
    native, sm = _fits(name)
    assert sm.engine == "statsmodels"
    assert len(native.pairs) == len(sm.pairs) == 3
    for nat, smp in zip(native.pairs, sm.pairs, strict=True):
        tag = f"{name} {nat.model_a}-{nat.model_b}"
        # precondition: an interior design (statsmodels cannot reach boundaries)
        assert nat.boundary == () and smp.boundary == (), tag
        assert smp.converged, (tag, smp.message)
        assert (smp.model_a, smp.model_b, smp.n, smp.only_a, smp.only_b) == (
            nat.model_a, nat.model_b, nat.n, nat.only_a, nat.only_b)
        ref = dict(REMLcrit=smp.criterion, components=smp.components, estimate=smp.estimate,
                   std_error=smp.std_error, df=smp.df)
        d = discrepancies(nat, ref)
        assert d["criterion_excess"] <= STATSMODELS["criterion_excess"], tag
        assert -d["criterion_excess"] <= STATSMODELS["criterion_gap"], tag
        assert d["component_of_total"] <= STATSMODELS["component_of_total"], (
            tag, nat.components, smp.components)
        assert d["estimate_rel"] <= STATSMODELS["estimate_rel"], tag
        assert d["std_error_rel"] <= STATSMODELS["std_error_rel"], tag
        assert d["df_rel"] <= STATSMODELS["df_rel"], (tag, nat.df, smp.df)


def test_gls_variance_one_way_closed_form():
    """Balanced one-way layout: Var(mu_hat) = (sigma_s^2 + sigma^2 / m) / T."""
    import numpy as np

    T, m = 5, 4
    codes = [np.repeat(np.arange(T), m)]
    s2, sig2 = 0.7, 1.3
    v = gls_variance(codes, [T], np.array([np.sqrt(s2 / sig2)]), sig2)
    assert v == pytest.approx((s2 + sig2 / m) / T, rel=1e-12)


def test_statsmodels_engine_rejects_other_estimands():
    formula, kw = DESIGNS["nested"]
    df = mixrank.simulate(**kw)
    with pytest.raises(mixrank.DesignError, match="estimand='cells'"):
        mixrank.fit(formula, df, engine="statsmodels", estimand="cells",
                    pairs=[("m01", "m02")])
    with pytest.raises(mixrank.DesignError, match="no random term"):
        mixrank.fit("correct ~ model", df, engine="statsmodels", estimand="gls",
                    pairs=[("m01", "m02")])


def test_statsmodels_criterion_is_remlcrit():
    """-2 x statsmodels' REML log-likelihood is lme4's REMLcrit (stored reference)."""
    import json
    from pathlib import Path

    import pandas as pd

    ref_dir = Path(__file__).resolve().parents[1] / "reference"
    case = next(c for c in json.loads((ref_dir / "lme4_engine.json").read_text())["cases"]
                if c["name"] == "nested_balanced")
    df = pd.read_csv(ref_dir / "engine_cases" / case["file"])
    p = case["pairs"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.SingularFitWarning)
        fit = mixrank.fit(case["formula"], df, engine="statsmodels", estimand="gls",
                          pairs=[(p["model_a"], p["model_b"])]).pairs[0]
    assert fit.criterion == pytest.approx(p["REMLcrit"], abs=1e-6)
