"""Stage results: each model score's SE and df by the contrasts' method (one estimator per table).

Inputs: a :class:`~mixrank.results.FitResult`, its per-model fits
(:class:`~mixrank.engine.lmm.single.ModelFit`) and the adjusted scores of the models
missing cells (:func:`~mixrank.results.score_adjust.adjusted_scores`).
Outputs: per model ``(variance, df, note)`` under the fit's df method
(:func:`score_inference`) and the label the table's ``df_method`` attr carries.
Contents: :func:`score_inference`, :func:`plain_cr2`, :func:`plain_variance_df`.

Rules (docs/model_scores.md §1b):

* ``df="cr2"`` (the default at a unit of 3+ levels): a complete model's score is the
  weighted mean of its cells (the estimand's weights), so its CR2 variance at the unit
  and Bell-McCaffrey df are a pair's (:func:`~mixrank.engine.lmm.unit_se.cr2_bell_mccaffrey`
  with ``d = y``); an adjusted score takes CR2 of its unit contributions, which
  reduces to the same number when nothing is missing.  Every row one method.
* No random term (cells independent): the iid t of each model's mean (df n - 1); an
  adjusted score the HC2 of its cell contributions (df N - 1), which is the iid t
  exactly for a complete model.  One method.
* ``"satterthwaite"`` / ``"satterthwaite-vc"`` / ``"containment"`` / ``"aggregate"``
  at a unit: complete models keep the REML SE of their own fit with the fit's df
  (lmerTest's, the variance components', units - 1, or the t over unit means); an
  adjusted score has no REML counterpart and takes CR2 at the unit -- a different
  method, so those rows get a ``note`` and the table one warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from ..engine.lmm.single import ModelFit
    from .fit_result import FitResult
    from .score_adjust import AdjustedScore

__all__ = ["score_inference", "plain_cr2", "plain_variance_df", "unit_ratio"]


def unit_ratio(components: dict[str, float], unit: str) -> float:
    """The unit's fitted component over the sum of the others (the CR2 working covariance)."""
    tau2 = float(components.get(unit, 0.0))
    other = sum(float(v) for k, v in components.items() if k != unit and np.isfinite(v))
    return tau2 / other if other > 0 and np.isfinite(tau2) else 0.0


def plain_cr2(fit: FitResult, m: ModelFit, estimand: str) -> tuple[float, float, int]:
    """``(variance, df, units)``: CR2 at the unit of model ``m``'s score over its own cells
    with Bell-McCaffrey df capped at units - 1 (a pair's rule, ``d = y``); NaN when its
    cells fall in fewer than 3 units."""
    from ..engine.lmm.unit_se import _renumbered, cr2_bell_mccaffrey, unit_weights

    fr = fit.frame
    unit = str(fr.spec.unit)
    j = fr.model_index(m.model)
    obs = np.asarray(fr.observed[:, j], dtype=bool)
    y = np.asarray(fr.scores[obs, j], dtype=float)
    codes = _renumbered(np.asarray(fr.term_codes[unit], dtype=np.int64)[obs],
                        int(fr.term_levels[unit]))
    T = int(codes.max()) + 1 if codes.size else 0
    if T < 3:
        return float("nan"), float("nan"), T
    w = unit_weights(estimand, codes, cast(Any, m), unit)
    var, df = cr2_bell_mccaffrey(y, codes, w, unit_ratio(dict(m.components), unit))
    return var, min(df, float(T - 1)), T


def plain_variance_df(fit: FitResult, m: ModelFit, estimand: str) -> float:
    """The df of the variance components (``df="satterthwaite-vc"``) of model ``m``'s own
    fit, by the pairs' rule (:func:`~mixrank.engine.lmm.crossed_df.crossed_inference`:
    beyond its level limits the fit's Satterthwaite df stay)."""
    from ..engine.lmm.crossed_df import CHEAP_LEVELS, MAX_LEVELS, variance_df
    from ..engine.lmm.estimand import estimand_weights

    fr = fit.frame
    names = list(fr.spec.term_names)
    comps = dict(m.components)
    if not np.isfinite(m.variance) or any(t not in comps for t in names) \
            or "residual" not in comps:
        return m.df
    obs = np.asarray(fr.observed[:, fr.model_index(m.model)], dtype=bool)
    codes = [np.asarray(fr.term_codes[t], dtype=np.int64)[obs] for t in names]
    psi = np.array([float(comps[t]) for t in names] + [float(comps["residual"])])
    levels = sum(int(np.unique(c).size) for c in codes)
    zero = bool(np.any(psi[:-1] <= 1e-10 * max(float(psi.sum()), 1e-300)))
    if levels > MAX_LEVELS or (levels > CHEAP_LEVELS and not zero):
        return m.df
    _, df = variance_df(codes, psi, estimand_weights(estimand, codes[0].size, codes[0]))
    return df if np.isfinite(df) else m.df


def score_inference(fit: FitResult, fits: list[ModelFit], adj: dict[str, AdjustedScore],
                    estimand: str) -> tuple[list[tuple[float, float, str]], str, str]:
    """Per model (``fits``' order) ``(variance, df, note)``; the table's ``df_method``
    label; and the warning text when rows had to mix methods ("" when they do not).

    ``adj``: the adjusted score of each model missing cells (its variance and df are
    CR2 at the unit already, :func:`~mixrank.results.score_adjust.adjusted_scores`).
    """
    fr = fit.frame
    unit = fr.spec.unit
    how = "aggregate" if fit.method == "aggregate" else fit.df_method
    label = fit.df_label
    cr2_label = f"CR2 at {unit!r}, Bell-McCaffrey df"
    out: list[tuple[float, float, str]] = []
    odd: list[str] = []
    for m in fits:
        a = adj.get(str(m.model))
        if a is not None:
            note = ""
            if not np.isfinite(a.std_error):
                note = (f"adjusted score: no SE (CR2 at {unit!r} needs its cells in 3 or more "
                        "levels)")
            elif unit is not None and how != "cr2":
                note = (f"adjusted score: SE {cr2_label} of its unit contributions (a REML "
                        f"fit has no adjusted counterpart), unlike the other rows' {label}")
                odd.append(str(m.model))
            out.append((a.std_error ** 2, a.df, note))
            continue
        if not np.isfinite(m.variance) or unit is None:
            out.append((m.variance, m.df, ""))
            continue
        if how == "cr2":
            var, df, T = plain_cr2(fit, m, estimand)
            if T < 3:
                odd.append(str(m.model))
                out.append((m.variance, m.df, f"its cells fall in {T} level(s) of {unit!r}: "
                            "REML SE with Satterthwaite df, as a pair's (CR2 needs 3)"))
            else:
                out.append((var, df, ""))
        elif how == "containment":
            obs = np.asarray(fr.observed[:, fr.model_index(m.model)], dtype=bool)
            T = int(np.unique(np.asarray(fr.term_codes[unit])[obs]).size)
            out.append((m.variance, float(T - 1) if T >= 3 else m.df, ""))
        elif how == "satterthwaite-vc":
            out.append((m.variance, plain_variance_df(fit, m, estimand), ""))
        else:
            out.append((m.variance, m.df, ""))
    warn = ""
    if odd:
        names = f"{', '.join(odd[:5])}{' ...' if len(odd) > 5 else ''}"
        if len(odd) == len(fits):
            warn = (f"model_scores: every row ({names}) takes its SE and df from another method "
                    f"than the contrasts' ({label}); each row's 'note' says which and why")
            other = "REML SE, Satterthwaite df" if how == "cr2" else cr2_label
            label = f"{other} (the contrasts: {label})"
        else:
            warn = (f"model_scores: {len(odd)} of {len(fits)} rows ({names}) take their SE and "
                    f"df from another method than the other rows' {label} (the contrasts' "
                    "method); each such row's 'note' says which and why")
            label = f"{label} (except {len(odd)} row(s), see 'note')"
    return out, label, warn
