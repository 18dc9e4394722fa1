"""The one tolerance table for engine cross-checks (test support, no stage).

Inputs: none.  Outputs: :data:`LME4` (native vs lme4 + lmerTest: the engine
accuracy contract of docs/methods.md §3) and :data:`STATSMODELS` (native vs statsmodels MixedLM),
plus :func:`discrepancies`, which measures a fit against a reference with the
scales these tolerances are expressed in.  Used by
``tests/engine/test_lme4_reference.py``, ``tests/engine/test_lme4_live.py``
and ``tests/engine/test_cross_engines.py``.  Never loosen an entry to make a
case pass: mark the case ``xfail(strict=True)`` with the measured number.
"""

from __future__ import annotations

# Native engine vs lme4::lmer(REML = TRUE) + lmerTest (the engine accuracy contract).
LME4 = {
    # REML criterion at mixrank's optimum <= lme4's REMLcrit + this (absolute):
    # mixrank must find an optimum at least as good as lme4's.
    "criterion_excess": 1e-6,
    # |variance component difference| <= this x total variance (sum of lme4's
    # components incl. the residual), for every component and the residual.
    "component_of_total": 1e-4,
    # |estimate difference| <= this x max(|lme4 estimate|, lme4 SE): relative,
    # with the SE as the scale floor (an estimate of 0 has no relative error).
    "estimate_rel": 1e-5,
    # |SE difference| <= this x lme4 SE.
    "std_error_rel": 1e-5,
    # |df difference| <= this x lme4 df, checked only where lme4's fit is not
    # singular (isSingular(m) FALSE: every component interior).
    "df_rel": 1e-3,
    # |F difference| <= this x lme4's F (F tests of model x covariate terms;
    # F is a ratio of quadratic forms in estimates and SEs).
    "F_rel": 1e-5,
}

# Native engine vs statsmodels MixedLM (REML, variance components; interior
# designs only: statsmodels' BFGS on square-root variance parameters does not
# reach boundary optima, see mixrank/engine/crosscheck/statsmodels_engine.py).  Looser
# than the lme4 contract because statsmodels stops on a gradient tolerance
# (the adapter polishes with gtol = 1e-10, but BFGS's line search often stops
# at |grad| ~ 1e-6): estimate and SE 1e-4 relative instead of 1e-5.  Measured
# on the designs of tests/engine/test_cross_engines.py: components <= 1e-7 x
# total, SE <= 2e-7 relative, df <= 5e-6 relative.
STATSMODELS = {
    # native criterion <= statsmodels' + this (native at least as good)
    "criterion_excess": 1e-6,
    # statsmodels' criterion <= native + this (statsmodels reached the optimum)
    "criterion_gap": 1e-4,
    "component_of_total": 1e-4,
    "estimate_rel": 1e-4,
    "std_error_rel": 1e-4,
    "df_rel": 1e-3,
}


def discrepancies(fit, ref: dict) -> dict[str, float]:
    """Measured discrepancies of a fit against a reference, on the table's scales.

    ``fit`` has ``criterion, components, estimate, std_error, df`` attributes
    (a :class:`mixrank.engine.records.PairFit`); ``ref`` is a dict with keys
    ``REMLcrit, components, estimate, std_error, df``.  Returns the signed
    criterion excess and the scaled absolute differences named as in
    :data:`LME4`.
    """
    comps = ref["components"]
    total = float(sum(comps.values()))
    missing = set(comps) ^ set(fit.components)
    if missing:
        raise KeyError(f"component names differ: reference {sorted(comps)}, "
                       f"fit {sorted(fit.components)}")
    comp = max(abs(fit.components[k] - v) for k, v in comps.items()) / total
    scale = max(abs(ref["estimate"]), ref["std_error"])
    return {
        "criterion_excess": float(fit.criterion - ref["REMLcrit"]),
        "component_of_total": float(comp),
        "estimate_rel": float(abs(fit.estimate - ref["estimate"]) / scale),
        "std_error_rel": float(abs(fit.std_error - ref["std_error"]) / ref["std_error"]),
        "df_rel": float(abs(fit.df - ref["df"]) / ref["df"]),
    }

# Binomial GLMM (family="binomial") vs lme4::glmer, nAGQ = 1 and 0, compared
# with glmer's tightly converged optimum (tests/reference/glmer.R, "tight").
GLMER = {
    # |fixed effect difference| on the logit scale (absolute).
    "fixef_abs": 1e-4,
    # |SE difference| <= this x glmer SE.
    "std_error_rel": 1e-3,
    # |variance difference| <= this x glmer variance, or <= variance_abs when
    # glmer's variance is below it (a singular term).
    "variance_rel": 1e-3,
    "variance_abs": 1e-6,
    # mixrank's deviance <= glmer's + this (absolute; lower is better).
    "deviance_excess": 1e-4,
}
