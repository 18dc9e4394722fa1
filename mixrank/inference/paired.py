"""Stage inference: classic paired tests and effect sizes (docs/methods.md §5).

Inputs: two aligned score arrays ``x, y`` (model A and model B on the same
cells) or a long DataFrame with ``a=``/``b=`` naming the two models (rows
aligned on the pairing keys, see :mod:`mixrank.inference.paired_data`).
Outputs: tidy one-row DataFrames (one row per method for
``mcnemar(method="all")``) with metadata in ``df.attrs["mixrank"]``.
Contents: :func:`mcnemar`, :func:`paired_t`, :func:`wilcoxon`,
:func:`effect_sizes`, and, re-exported from
:mod:`mixrank.inference.paired_resampling`, :func:`paired_bootstrap` and
:func:`sign_flip`.

Orientation: the difference is always ``d = A - B`` (``x - y``; model ``a``
minus model ``b``); ``alternative="greater"`` means A scores higher.  These
tests treat cells as independent units (the formula ``correct ~ model``);
clustered inference is the mixed model's job (``mixrank.fit``) or the
cluster bootstrap / cluster sign-flip here.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special, stats

from mixrank._util import check_level, tidy
from mixrank.errors import DataError, DesignError, SmallSampleWarning
from mixrank.inference.paired_data import PairedData, check_alternative, paired_arrays
from mixrank.inference.paired_resampling import paired_bootstrap, sign_flip

__all__ = ["mcnemar", "paired_t", "wilcoxon", "effect_sizes", "paired_bootstrap", "sign_flip"]

_MCNEMAR_METHODS = ("exact", "midp", "asymptotic", "corrected")
#: Largest effective n for which ``wilcoxon(method="exact")`` builds the null distribution.
WILCOXON_EXACT_MAX_N = 1000

DATA_PARAMS = """x : array-like or pandas.DataFrame
        Scores of model A, one per cell (0/1 or a bounded score); or a long
        DataFrame with one row per (model, cell).
    y : array-like, optional
        Scores of model B on the same cells, in the same order (array form
        only).
    a, b : hashable, optional
        Long form: the two levels of ``model`` to compare (A and B).  Array
        form: optional labels reported as ``model_a``/``model_b`` (default
        ``"x"``/``"y"``).
    model : str, default "model"
        Long form: the comparison column.
    score : str, default "correct"
        Long form: the score column.
    pair_by : str or sequence of str, optional
        Long form: the columns that identify a cell.  Default: those of
        ``subject``, ``question``, ``prompt`` present in the data.  Only cells
        scored for both models are used; the counts of dropped cells are in
        ``attrs["mixrank"]["n_unpaired_a"/"n_unpaired_b"]``."""

DATA_RAISES = """DataError
        Unequal lengths, NaN or non-finite or non-numeric scores, a missing
        model or column, no common cells, or duplicated cells (the first
        duplicated key is named)."""


def _doc(func: Callable) -> Callable:
    if func.__doc__:
        func.__doc__ = (func.__doc__.replace("{data_params}", DATA_PARAMS)
                        .replace("{data_raises}", DATA_RAISES))
    return func


def _level(level: float) -> float:
    return check_level(level, DataError)


def _base(pdata: PairedData) -> dict:
    return {"model_a": pdata.model_a, "model_b": pdata.model_b, "n": pdata.n}


# ------------------------------------------------------------------ McNemar --

def _mcnemar_p(b: int, c: int, method: str) -> tuple[float, float]:
    """Statistic and two-sided p-value of one McNemar variant (b + c > 0 or not)."""
    m = b + c
    if m == 0:
        return float("nan"), 1.0
    k = min(b, c)
    if method == "exact":
        return float(b), float(min(1.0, 2.0 * stats.binom.cdf(k, m, 0.5)))
    if method == "midp":
        p = 2.0 * stats.binom.cdf(k, m, 0.5) - stats.binom.pmf(k, m, 0.5)
        return float(b), float(min(1.0, max(0.0, p)))
    if method == "asymptotic":
        stat = (b - c) ** 2 / m
    else:  # corrected; like R's mcnemar.test, no correction when b == c
        stat = (abs(b - c) - 1) ** 2 / m if b != c else 0.0
    return float(stat), float(stats.chi2.sf(stat, 1))


@_doc
def mcnemar(x: Any, y: Any = None, *, a: Hashable | None = None, b: Hashable | None = None,
            model: str = "model", score: str = "correct",
            pair_by: str | Sequence[str] | None = None,
            method: Literal["exact", "midp", "asymptotic", "corrected", "all"] = "exact"
            ) -> pd.DataFrame:
    """McNemar test for two models' 0/1 scores on the same cells.

    Parameters
    ----------
    {data_params}
    method : {"exact", "midp", "asymptotic", "corrected", "all"}, default "exact"
        ``"all"`` returns one row per method, in that order.

    Returns
    -------
    pandas.DataFrame
        One row per method with columns

        - ``model_a``, ``model_b``: the two models (difference = A - B).
        - ``n``: paired cells.
        - ``b``: cells where only A is right; ``c``: only B is right.
        - ``discordant``: ``b + c``.
        - ``estimate``: difference in accuracy ``(b - c) / n``.
        - ``statistic``: ``b`` for exact and mid-p (the binomial count, as
          R's ``binom.test``; NaN when ``b + c = 0``), the chi-square
          statistic otherwise.
        - ``p_value``: two-sided p-value.
        - ``method``: the variant.

    Raises
    ------
    {data_raises}
        Also when a score is not 0/1 (use :func:`paired_t`,
        :func:`wilcoxon` or :func:`paired_bootstrap` for graded scores), or
        for an unknown ``method``.

    Warns
    -----
    SmallSampleWarning
        When ``b + c = 0``: no discordant cell, p = 1.

    Notes
    -----
    With ``m = b + c`` and ``X ~ Bin(m, 1/2)``:

    - exact: ``p = min(1, 2 P(X <= min(b, c)))`` (R ``binom.test(b, m)``);
    - mid-p: ``p = 2 P(X <= min(b, c)) - P(X = min(b, c))``, the exact p
      minus the point probability (Fagerland et al. 2013); 1 when b = c;
    - asymptotic: ``(b - c)^2 / m ~ chi2(1)``;
    - corrected: ``(|b - c| - 1)^2 / m ~ chi2(1)``; as in R's
      ``mcnemar.test`` no correction is applied when ``b = c`` (statistic 0;
      statsmodels reports ``1/m`` there).

    Validated against R 4.2 ``mcnemar.test`` (correct = TRUE/FALSE),
    ``binom.test`` and the mid-p formula (``tests/reference/paired_tests.R``,
    rtol 1e-10) and statsmodels ``contingency_tables.mcnemar``.

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between
    correlated proportions or percentages. Psychometrika 12, 153-157.
    Fagerland, M. W., Lydersen, S. & Laake, P. (2013). The McNemar test for
    binary matched-pairs data: mid-p and asymptotic are better than exact
    conditional. BMC Medical Research Methodology 13, 91.

    Examples
    --------
    >>> from mixrank.inference.paired import mcnemar
    >>> mcnemar([1, 1, 1, 0, 1], [0, 0, 1, 0, 1])[["b", "c", "p_value"]]
       b  c  p_value
    0  2  0      0.5
    """
    methods = _MCNEMAR_METHODS if method == "all" else (method,)
    if any(m not in _MCNEMAR_METHODS for m in methods):
        raise DataError(f"method={method!r} is not a McNemar variant; expected one of "
                        f"{list(_MCNEMAR_METHODS) + ['all']}")
    pdata = paired_arrays(x, y, a=a, b=b, model=model, score=score, pair_by=pair_by)
    for arr, who in ((pdata.x, pdata.model_a), (pdata.y, pdata.model_b)):
        bad = (arr != 0.0) & (arr != 1.0)
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise DataError(f"mcnemar needs 0/1 scores, but model {who!r} has the score "
                            f"{float(arr[pos])!r} (position {pos} of the paired cells); "
                            "use paired_t, wilcoxon or paired_bootstrap for graded scores, "
                            "or binarise them")
    nb = int(np.sum((pdata.x == 1.0) & (pdata.y == 0.0)))
    nc = int(np.sum((pdata.x == 0.0) & (pdata.y == 1.0)))
    if nb + nc == 0:
        warnings.warn(f"McNemar: models {pdata.model_a!r} and {pdata.model_b!r} disagree on no "
                      f"cell (b = c = 0 of {pdata.n}); reporting p = 1. Nothing separates them "
                      "on these data", SmallSampleWarning, stacklevel=2)
    rows = []
    for m in methods:
        stat, p = _mcnemar_p(nb, nc, m)
        rows.append({**_base(pdata), "b": nb, "c": nc, "discordant": nb + nc,
                     "estimate": (nb - nc) / pdata.n, "statistic": stat, "p_value": p,
                     "method": m})
    return tidy(rows, test="mcnemar", alternative="two-sided", **pdata.meta())


# ----------------------------------------------------------------- paired t --

@_doc
def paired_t(x: Any, y: Any = None, *, a: Hashable | None = None, b: Hashable | None = None,
             model: str = "model", score: str = "correct",
             pair_by: str | Sequence[str] | None = None,
             alternative: Literal["two-sided", "less", "greater"] = "two-sided",
             level: float = 0.95) -> pd.DataFrame:
    """Paired t-test on the per-cell differences ``d = A - B``.

    Parameters
    ----------
    {data_params}
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``"greater"``: mean(A - B) > 0.
    level : float, default 0.95
        Confidence level of the interval (one-sided for one-sided
        alternatives, as R).

    Returns
    -------
    pandas.DataFrame
        One row: ``model_a``, ``model_b``, ``n`` (paired cells),
        ``estimate`` (mean of d), ``std_error`` (sd(d)/sqrt(n)), ``df``
        (n - 1), ``statistic`` (t), ``p_value``, ``ci_lower``, ``ci_upper``
        (infinite on the open side of a one-sided test), ``level``,
        ``alternative``.

    Raises
    ------
    {data_raises}
    DesignError
        Fewer than 2 paired cells.

    Warns
    -----
    SmallSampleWarning
        When all differences are equal (sd = 0): statistic, p-value and
        interval are NaN (R stops with "data are essentially constant").

    Notes
    -----
    ``t = mean(d) / (sd(d)/sqrt(n))`` with ``n - 1`` df; two-sided interval
    ``mean(d) +- t_{n-1, (1+level)/2} SE``.  Validated against R 4.2
    ``t.test(x, y, paired = TRUE)`` for every alternative and two levels
    (rtol 1e-10).

    References
    ----------
    Student (1908). The probable error of a mean. Biometrika 6, 1-25.

    Examples
    --------
    >>> from mixrank.inference.paired import paired_t
    >>> float(paired_t([0.9, 0.8, 0.7, 0.9], [0.8, 0.8, 0.5, 0.6])["df"].iloc[0])
    3.0
    """
    alt = check_alternative(alternative)
    lev = _level(level)
    pdata = paired_arrays(x, y, a=a, b=b, model=model, score=score, pair_by=pair_by)
    n = pdata.n
    if n < 2:
        raise DesignError(f"paired_t got {n} paired cell; expected at least 2 to estimate the "
                          "variance of the differences")
    d = pdata.d
    est = float(np.mean(d))
    se = float(np.std(d, ddof=1) / np.sqrt(n))
    df = n - 1
    nan = float("nan")
    if se == 0.0:
        warnings.warn(f"paired_t: all {n} differences equal {est!r}; the t statistic is "
                      "undefined (reported as NaN)", SmallSampleWarning, stacklevel=2)
        t = p = lo = hi = nan
    else:
        t = est / se
        if alt == "two-sided":
            p = float(2.0 * stats.t.sf(abs(t), df))
            q = stats.t.ppf((1.0 + lev) / 2.0, df)
            lo, hi = est - q * se, est + q * se
        elif alt == "greater":
            p = float(stats.t.sf(t, df))
            lo, hi = est - stats.t.ppf(lev, df) * se, np.inf
        else:
            p = float(stats.t.cdf(t, df))
            lo, hi = -np.inf, est + stats.t.ppf(lev, df) * se
    row = {**_base(pdata), "estimate": est, "std_error": se, "df": float(df), "statistic": t,
           "p_value": p, "ci_lower": float(lo), "ci_upper": float(hi), "level": lev,
           "alternative": alt}
    return tidy([row], test="paired_t", **pdata.meta())


# ----------------------------------------------------------------- Wilcoxon --

def _signed_rank_null(ranks2: np.ndarray) -> np.ndarray:
    """Null distribution of ``2V`` (V = sum of positive ranks) under random signs.

    ``ranks2`` are twice the (mid)ranks, positive integers.  Returns the
    probabilities of ``2V = 0, 1, ..., sum(ranks2)``.  Without ties this is
    R's ``dsignrank``; with ties it is the exact conditional distribution.
    """
    total = int(ranks2.sum())
    dist = np.zeros(total + 1)
    dist[0] = 1.0
    top = 0
    for r in ranks2:
        r = int(r)
        new = 0.5 * dist[: top + r + 1]
        new[r:] += 0.5 * dist[: top + 1]
        dist[: top + r + 1] = new
        top += r
    return dist


@_doc
def wilcoxon(x: Any, y: Any = None, *, a: Hashable | None = None, b: Hashable | None = None,
             model: str = "model", score: str = "correct",
             pair_by: str | Sequence[str] | None = None,
             zero_method: Literal["wilcox", "pratt"] = "wilcox", correction: bool = False,
             method: Literal["auto", "exact", "asymptotic"] = "auto",
             alternative: Literal["two-sided", "less", "greater"] = "two-sided") -> pd.DataFrame:
    """Wilcoxon signed-rank test on the per-cell differences ``d = A - B``.

    Parameters
    ----------
    {data_params}
    zero_method : {"wilcox", "pratt"}, default "wilcox"
        ``"wilcox"`` drops zero differences before ranking (R's
        ``wilcox.test``); ``"pratt"`` ranks them with the others and then
        drops their ranks.
    correction : bool, default False
        Continuity correction of the normal approximation (R's
        ``correct``; note R's default is TRUE).
    method : {"auto", "exact", "asymptotic"}, default "auto"
        ``"auto"`` follows R: exact when fewer than 50 non-zero differences
        and no ties or zeros, normal approximation otherwise.  ``"exact"``
        with ties or zeros uses the exact conditional (permutation)
        distribution of V given the tied ranks (R falls back to the normal
        approximation there); limited to ``WILCOXON_EXACT_MAX_N`` effective
        cells.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"

    Returns
    -------
    pandas.DataFrame
        One row: ``model_a``, ``model_b``, ``n`` (paired cells), ``n_zero``
        (zero differences), ``n_effective`` (differences that are ranked:
        ``n - n_zero`` for wilcox, ``n`` for pratt), ``statistic`` (V, the
        sum of the ranks of positive differences, as R), ``z`` (the
        standardised statistic, NaN for exact), ``p_value``, ``method``
        (``"exact"`` or ``"asymptotic"``), ``zero_method``, ``correction``
        (as applied), ``alternative``.

    Raises
    ------
    {data_raises}

    Warns
    -----
    SmallSampleWarning
        When every difference is zero: V = 0 and p = 1.

    Notes
    -----
    Ranks ``r`` are the average ranks of ``|d|``.  With ``R+`` the
    non-zero-difference ranks, the null mean and variance of V are
    ``sum(R+)/2`` and ``sum(R+^2)/4``; for ``"wilcox"`` these are R's
    ``n(n+1)/4`` and ``n(n+1)(2n+1)/24 - sum(t^3 - t)/48``, for ``"pratt"``
    Cureton's (1967) adjustment as in scipy.  ``z = (V - mean - cc)/sd`` with
    ``cc = 0.5 sign(V - mean)`` when corrected.  Exact p-values come from the
    distribution of V under independent random signs (two-sided: twice the
    smaller tail, capped at 1).

    Validated against R 4.2 ``wilcox.test(x, y, paired = TRUE)`` with
    ``exact = NULL/TRUE/FALSE`` and ``correct = TRUE/FALSE`` (rtol 1e-10),
    against ``scipy.stats.wilcoxon(zero_method="pratt")`` for Pratt, and the
    exact conditional distribution against enumeration of all 2^n sign
    patterns.

    References
    ----------
    Wilcoxon, F. (1945). Individual comparisons by ranking methods.
    Biometrics Bulletin 1, 80-83.  Pratt, J. W. (1959). Remarks on zeros and
    ties in the Wilcoxon signed rank procedures. JASA 54, 655-667.
    Cureton, E. E. (1967). The normal approximation to the signed-rank
    sampling distribution when zero differences are present. JASA 62,
    1068-1069.

    Examples
    --------
    >>> from mixrank.inference.paired import wilcoxon
    >>> r = wilcoxon([4, 6, 1, 9, 3], [0, 1, 3, 2, 1.5])
    >>> float(r["statistic"].iloc[0]), float(r["p_value"].iloc[0])
    (13.0, 0.1875)
    """
    alt = check_alternative(alternative)
    if zero_method not in ("wilcox", "pratt"):
        raise DataError(f"zero_method={zero_method!r} is not supported; expected 'wilcox' "
                        "(drop zero differences) or 'pratt' (rank them, then drop)")
    if method not in ("auto", "exact", "asymptotic"):
        raise DataError(f"method={method!r} is not supported; expected 'auto', 'exact' or "
                        "'asymptotic'")
    pdata = paired_arrays(x, y, a=a, b=b, model=model, score=score, pair_by=pair_by)
    d = pdata.d
    nonzero = d != 0.0
    n_zero = int(np.sum(~nonzero))
    used = d[nonzero] if zero_method == "wilcox" else d
    ranks = stats.rankdata(np.abs(used), method="average")
    pos = used > 0
    r_nz = ranks[used != 0.0]
    v = float(np.sum(ranks[pos]))
    n_eff = int(used.shape[0])
    ties = len(np.unique(r_nz)) != len(r_nz)
    exact = (method == "exact") or (method == "auto" and n_eff < 50 and not ties
                                     and n_zero == 0)
    base = {**_base(pdata), "n_zero": n_zero, "n_effective": n_eff, "statistic": v}
    meta = {"test": "wilcoxon", **pdata.meta()}
    if r_nz.size == 0:
        warnings.warn(f"wilcoxon: all {pdata.n} differences are zero; reporting V = 0 and "
                      "p = 1", SmallSampleWarning, stacklevel=2)
        row = {**base, "z": float("nan"), "p_value": 1.0,
               "method": "exact" if exact else "asymptotic", "zero_method": zero_method,
               "correction": bool(correction and not exact), "alternative": alt}
        return tidy([row], **meta)
    mean = float(np.sum(r_nz)) / 2.0
    if exact:
        if r_nz.size > WILCOXON_EXACT_MAX_N:
            raise DataError(f"wilcoxon(method='exact') got {r_nz.size} non-zero differences; "
                            f"the exact distribution is built for at most "
                            f"{WILCOXON_EXACT_MAX_N}. Use method='asymptotic' or 'auto'")
        dist = _signed_rank_null(np.rint(2.0 * r_nz).astype(np.int64))
        k = int(np.rint(2.0 * v))
        upper = float(np.sum(dist[k:]))
        lower = float(np.sum(dist[: k + 1]))
        if alt == "greater":
            p = upper
        elif alt == "less":
            p = lower
        else:
            p = min(1.0, 2.0 * (upper if v > mean else lower))
        z = float("nan")
    else:
        sd = float(np.sqrt(np.sum(r_nz ** 2) / 4.0))
        diff = v - mean
        cc = 0.0
        if correction:
            cc = {"two-sided": 0.5 * np.sign(diff), "greater": 0.5, "less": -0.5}[alt]
        z = float((diff - cc) / sd)
        if alt == "greater":
            p = float(special.ndtr(-z))
        elif alt == "less":
            p = float(special.ndtr(z))
        else:
            p = float(2.0 * min(special.ndtr(z), special.ndtr(-z)))
    row = {**base, "z": z, "p_value": p, "method": "exact" if exact else "asymptotic",
           "zero_method": zero_method, "correction": bool(correction and not exact),
           "alternative": alt}
    return tidy([row], **meta)


# ------------------------------------------------------------- effect sizes --

@_doc
def effect_sizes(x: Any, y: Any = None, *, a: Hashable | None = None,
                 b: Hashable | None = None, model: str = "model", score: str = "correct",
                 pair_by: str | Sequence[str] | None = None) -> pd.DataFrame:
    """Effect sizes of a paired comparison (A - B).

    Parameters
    ----------
    {data_params}

    Returns
    -------
    pandas.DataFrame
        One row: ``model_a``, ``model_b``, ``n`` (paired cells), ``mean_a``,
        ``mean_b`` (mean scores on the paired cells), ``estimate``
        (``mean_a - mean_b``), ``relative_difference``
        (``(mean_a - mean_b) / mean_b``; NaN when ``mean_b = 0``),
        ``cohen_h`` (``2 asin sqrt(mean_a) - 2 asin sqrt(mean_b)``; NaN when
        a mean lies outside [0, 1]), ``d_z`` (``mean(d) / sd(d)``, sd with
        n - 1; NaN when sd = 0 or n < 2).

    Raises
    ------
    {data_raises}

    Notes
    -----
    Cohen's h treats the two mean scores as proportions (0/1 or [0, 1]
    scores); ``d_z`` is the paired (within-cell) standardised mean
    difference.  Validated by direct computation from the definitions in
    docs/methods.md §5 (tests recompute each from the raw vectors).

    References
    ----------
    Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences,
    2nd ed., sections 6.2 (h) and 2.3.5 (d_z).

    Examples
    --------
    >>> from mixrank.inference.paired import effect_sizes
    >>> r = effect_sizes([1, 1, 1, 0], [1, 0, 0, 0])
    >>> float(r["estimate"].iloc[0]), float(r["relative_difference"].iloc[0])
    (0.5, 2.0)
    """
    pdata = paired_arrays(x, y, a=a, b=b, model=model, score=score, pair_by=pair_by)
    ma, mb = float(np.mean(pdata.x)), float(np.mean(pdata.y))
    d = pdata.d
    nan = float("nan")
    rel = (ma - mb) / mb if mb != 0.0 else nan
    in01 = 0.0 <= ma <= 1.0 and 0.0 <= mb <= 1.0
    h = float(2.0 * np.arcsin(np.sqrt(ma)) - 2.0 * np.arcsin(np.sqrt(mb))) if in01 else nan
    sd = float(np.std(d, ddof=1)) if pdata.n > 1 else nan
    dz = float(np.mean(d)) / sd if sd > 0 else nan
    row = {**_base(pdata), "mean_a": ma, "mean_b": mb, "estimate": ma - mb,
           "relative_difference": rel, "cohen_h": h, "d_z": dz}
    return tidy([row], test="effect_sizes", **pdata.meta())
