"""Stage inference: multiplicity adjustment of p-values (docs/methods.md §5).

Inputs: a vector of p-values (any order).  Outputs: adjusted p-values in the
input order (:func:`adjust`), the same within each of several sets of tests
(:func:`adjust_within`, the contrasts tables) or rejection decisions
(:func:`reject`).
Contents: Bonferroni, Holm (step-down) and Benjamini-Hochberg, exactly as R's
``p.adjust``; and the one registry of ``adjust=`` values (:data:`ADJUST`) with
the subset each consumer accepts (:data:`ADJUST_FOR`, checked by
:func:`check_adjust`, which raises the one :class:`~mixrank.OptionError`
message; docs/vocabulary.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mixrank.errors import DataError, OptionError

__all__ = ["adjust", "adjust_within", "reject", "ADJUST", "ADJUST_FOR", "ADJUST_METHODS",
           "adjust_values", "check_adjust"]

#: Every multiplicity method of the package (the values of ``adjust=``), with what it does.
ADJUST: dict[str, str] = {
    "none": "no adjustment",
    "holm": "Holm step-down (family-wise error rate)",
    "bonferroni": "Bonferroni (family-wise error rate)",
    "bh": "Benjamini-Hochberg step-up (false discovery rate)",
    "maxt": "single-step max-t from the joint covariance (family-wise; simultaneous intervals)",
    "stepdown": "Westfall-Young step-down max-T over unit sign flips (family-wise; df=\"cr2\")",
}

#: The subset of :data:`ADJUST` each consumer accepts, in the order its errors list them.
ADJUST_FOR: dict[str, tuple[str, ...]] = {
    # multiplicity.adjust / reject: adjusts a vector of p-values
    "p_values": ("bonferroni", "holm", "bh"),
    # FitResult.contrasts (and JudgeResult): the joint covariance of the pairs is known
    "contrasts": ("none", "holm", "bh", "maxt", "stepdown"),
    # GlmmResult.contrasts (maxt, stepdown: unit sign flips of the score contributions)
    "glmm_contrasts": ("holm", "none", "bh", "bonferroni", "maxt", "stepdown"),
    # GlmmByResult / GlmmSlopeResult contrasts and anova: p-values adjusted per set
    "glmm_anova": ("holm", "none", "bh", "bonferroni"),
    # ArenaResult.contrasts
    "arena_contrasts": ("holm", "none", "bonferroni", "bh", "maxt"),
    # SubsetResult.contrasts (a new model against each reference model)
    "subset_contrasts": ("none", "holm", "bonferroni", "bh"),
    # rank intervals from contrasts (estimate, SE, df): max-t needs the variances
    "rank_intervals": ("holm", "bonferroni", "bh", "maxt"),
    # rank intervals from p-values alone
    "rank_tests": ("holm", "bonferroni", "bh"),
    # resolution verdicts' multiplicity paradigm (None drops the paradigm)
    "resolution": ("holm", "bonferroni", "bh"),
    # FitResult.resolution / resolution_of: also the unit-randomization step-down (df="cr2")
    "resolution_fit": ("holm", "bonferroni", "bh", "stepdown"),
}

#: Supported methods (case-insensitive; "fdr_bh", "fdr" and "benjamini-hochberg" mean "bh").
ADJUST_METHODS = ADJUST_FOR["p_values"]
_ALIASES = {"bonferroni": "bonferroni", "holm": "holm", "holm-bonferroni": "holm",
            "bh": "bh", "fdr_bh": "bh", "fdr": "bh", "benjamini-hochberg": "bh"}


def adjust_values(consumer: str) -> tuple[str, ...]:
    """The ``adjust=`` values ``consumer`` accepts (a key of :data:`ADJUST_FOR`)."""
    return ADJUST_FOR[consumer]


def check_adjust(value: Any, consumer: str, *, where: str = "", option: str = "adjust",
                 allow_none: bool = False) -> Any:
    """``value`` (lower-cased) if ``consumer`` accepts it, else the one :class:`OptionError`.

    The message names the option, the value received, the caller (``where``,
    e.g. ``"FitResult.rank_intervals"``) and the supported values.  With
    ``allow_none`` None (no multiplicity paradigm) is accepted and returned.
    """
    if value is None and allow_none:
        return None
    allowed = ADJUST_FOR[consumer]
    key = value.lower() if isinstance(value, str) else value
    if key not in allowed:
        site = f" by {where}()" if where else ""
        extra = " or None" if allow_none else ""
        from mixrank._util import did_you_mean
        raise OptionError(f"{option}={value!r} is not supported{site}; supported values: "
                          f"{list(allowed)}{extra} (docs/vocabulary.md)"
                          f"{did_you_mean(value, allowed)}")
    return key


def _method(method: str) -> str:
    key = method.lower() if isinstance(method, str) else method
    if key not in _ALIASES:
        raise DataError(f"method={method!r} is not a supported adjustment; expected one of "
                        f"{list(ADJUST_METHODS)}")
    return _ALIASES[key]


def _pvalues(p: Any) -> np.ndarray:
    if isinstance(p, pd.DataFrame):
        raise DataError("adjust got a DataFrame; expected a one-dimensional vector of p-values "
                        "(e.g. df['p_value'])")
    try:
        arr = np.asarray(p, dtype="float64")
    except (TypeError, ValueError):
        raise DataError(f"p-values must be numbers; got {p!r}. Convert them with "
                        "pandas.to_numeric first") from None
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise DataError(f"p-values have shape {arr.shape}; expected a one-dimensional vector. "
                        "Flatten it first (adjustment is over the whole family)")
    if np.isnan(arr).any():
        pos = int(np.flatnonzero(np.isnan(arr))[0])
        raise DataError(f"p-value at position {pos} is NaN; expected a p-value for every "
                        "hypothesis. Drop the untested hypotheses (and say so) before "
                        "adjusting")
    bad = (arr < 0.0) | (arr > 1.0)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise DataError(f"p-value at position {pos} is {float(arr[pos])!r}; expected values in "
                        "[0, 1]")
    return arr


def adjust(p: Any, method: str = "holm") -> np.ndarray:
    """Adjust a family of p-values for multiple testing.

    Parameters
    ----------
    p : array-like of float
        The family's p-values, in any order (a list, array or Series).
    method : {"bonferroni", "holm", "bh"}, default "holm"
        Case-insensitive; ``"fdr_bh"``/``"fdr"``/``"benjamini-hochberg"``
        are accepted for ``"bh"``.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values in the input order, capped at 1.

    Raises
    ------
    DataError
        NaN, a value outside [0, 1], a non-numeric or multi-dimensional
        input, or an unknown method.

    Notes
    -----
    With m p-values sorted increasingly, ``p_(1) <= ... <= p_(m)``:

    - Bonferroni: ``min(1, m p_i)``;
    - Holm: ``min(1, max_{j <= i} (m - j + 1) p_(j))`` (step-down);
    - BH: ``min(1, min_{j >= i} m p_(j) / j)`` (step-up, FDR).

    Ties receive the same adjusted value.  Validated against R 4.2
    ``p.adjust`` (``tests/reference/paired_tests.R``, rtol 1e-10) and
    ``statsmodels.stats.multitest.multipletests`` (bonferroni, holm,
    fdr_bh).

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test
    procedure. Scand. J. Statist. 6, 65-70.  Benjamini, Y. & Hochberg, Y.
    (1995). Controlling the false discovery rate. JRSS B 57, 289-300.

    Examples
    --------
    >>> from mixrank.inference.multiplicity import adjust
    >>> adjust([0.01, 0.04, 0.03], method="holm").tolist()
    [0.03, 0.06, 0.06]
    """
    how = _method(method)
    arr = _pvalues(p)
    m = arr.shape[0]
    if m == 0:
        return arr.copy()
    if how == "bonferroni" or m == 1:          # one p-value: every method leaves it as it is
        return np.minimum(1.0, m * arr)
    order = np.argsort(arr, kind="stable")
    out = np.empty(m)
    if how == "holm":
        steps = (m - np.arange(m)) * arr[order]
        out[order] = np.minimum(1.0, np.maximum.accumulate(steps))
    else:
        rev = order[::-1]
        steps = m / np.arange(m, 0, -1) * arr[rev]
        out[rev] = np.minimum(1.0, np.minimum.accumulate(steps))
    return out


def adjust_within(p: Any, groups: list[np.ndarray], method: str, *,
                  nan_p: str = "exclude") -> np.ndarray:
    """``p`` adjusted by ``method`` (or ``"none"``) within each set of row positions.

    ``nan_p="exclude"``: NaN p-values stay NaN and are not counted in their
    set; ``nan_p="one"``: they enter the adjustment as 1 (and stay NaN with
    ``"none"``).  Positions in no set are NaN.  See :func:`adjust`.
    """
    p = np.asarray(p, dtype=float)
    adj = np.full(len(p), np.nan)
    for g in groups:
        pg = p[g]
        if nan_p == "one":
            adj[g] = pg.copy() if method == "none" else adjust(np.nan_to_num(pg, nan=1.0), method)
            continue
        ok = np.isfinite(pg)
        if ok.any():
            adj[g[ok]] = pg[ok] if method == "none" else adjust(pg[ok], method)
    return adj


def reject(p: Any, alpha: float = 0.05, method: str = "holm") -> np.ndarray:
    """Which hypotheses a multiplicity-adjusted procedure rejects at level ``alpha``.

    Parameters
    ----------
    p : array-like of float
        The family's p-values.
    alpha : float, default 0.05
        Family-wise error rate (Bonferroni, Holm) or false discovery rate
        (BH).
    method : {"bonferroni", "holm", "bh"}, default "holm"

    Returns
    -------
    numpy.ndarray of bool
        ``adjust(p, method) <= alpha``, in the input order.

    Raises
    ------
    DataError
        As :func:`adjust`, or ``alpha`` outside (0, 1).

    Notes
    -----
    Rejecting where the adjusted p-value is at most ``alpha`` is the same
    decision as the step-down (Holm) or step-up (BH) procedure at ``alpha``.
    Validated against ``statsmodels.stats.multitest.multipletests``.

    Examples
    --------
    >>> from mixrank.inference.multiplicity import reject
    >>> reject([0.01, 0.04, 0.03], alpha=0.05).tolist()
    [True, False, False]
    """
    if not (isinstance(alpha, float | int) and 0.0 < float(alpha) < 1.0):
        raise DataError(f"alpha={alpha!r} is not a level; expected a number strictly between "
                        "0 and 1, e.g. 0.05")
    return adjust(p, method) <= float(alpha)
