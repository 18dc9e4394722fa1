"""Stage change: empirical-Bayes item changes with false-discovery control (docs/methods.md §8).

Inputs: per-item sample matrices of two versions of a model (items x K
scores, one matrix per version, rows aligned on the same items) and the
floor/ceiling mask computed by :mod:`mixrank.change.rci`.
Outputs: per-item arrays (null standard error of the change, shrunken
estimate and its standard error, p-value, q-value, class) and a dict with
the fitted prior.  :mod:`mixrank.change.rci` turns them into the columns of
``ReliableChange.items()``.

Contents: :func:`fit_normal_normal` (REML fit of the normal-normal mixed
model over items ``delta_i ~ N(mu, tau^2 + s_i^2)`` and its BLUPs),
:func:`fisher_exact_two_sided` (vectorised Fisher exact test for 0/1
scores), :func:`pooled_t_test` (Student two-sample t for continuous scores),
:func:`item_tests` (the per-item test of no change that fits the scores,
shared with the per-item RCI of :mod:`mixrank.change.rci`),
:func:`smallest_fisher_p` (the smallest p-value a 0/1 design can reach),
:func:`storey_qvalues` (Storey-Taylor-Siegmund q-values), and
:func:`eb_item_changes`, which combines them.

Why the classification does not come from the normal approximation: with a
handful of 0/1 samples per item the change ``delta_i`` lives on a coarse
lattice and its normal approximation is poor exactly in the tails that
decide discoveries.  The per-item p-values are therefore exact (Fisher) or
t-based, and the discoveries are the items whose Storey q-value is at most
the target; Storey's q-value is itself an empirical-Bayes quantity (the
estimated posterior probability of the null among items at least as
extreme, Storey 2003) and the finite-sample estimator of the null share used
here controls the false discovery rate for independent items (Storey,
Taylor & Siegmund 2004, Theorem 3).  The normal-normal model supplies the
shrinkage estimates reported beside the classes.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from mixrank.errors import DesignError

__all__ = [
    "fit_normal_normal",
    "fisher_exact_two_sided",
    "pooled_t_test",
    "item_tests",
    "smallest_fisher_p",
    "storey_qvalues",
    "eb_item_changes",
    "STOREY_LAMBDA",
]

#: Tuning parameter lambda of Storey's null-share estimator (p-values above it count as null).
STOREY_LAMBDA = 0.5
# scipy.stats.fisher_exact's relative tolerance for "as or less likely than observed".
_FISHER_RTOL = 1e-7


def _objective(tau2: float, delta: np.ndarray, s2: np.ndarray, reml: bool = True) -> float:
    """Minus twice the (restricted) log-likelihood, constants dropped."""
    v = tau2 + s2
    w = 1.0 / v
    sw = w.sum()
    mu = float(np.dot(w, delta) / sw)
    return float(np.log(v).sum() + (np.log(sw) if reml else 0.0) + np.dot(w, (delta - mu) ** 2))


def fit_normal_normal(delta: np.ndarray, s2: np.ndarray, *, method: str = "reml") -> dict:
    """REML (or ML) fit of ``delta_i ~ N(mu, tau^2 + s_i^2)`` with known ``s_i^2``.

    Parameters
    ----------
    delta : numpy.ndarray
        Observed item changes.
    s2 : numpy.ndarray
        Their sampling variances (treated as known, all > 0).
    method : {"reml", "ml"}, default "reml"
        Estimation criterion for ``tau2``.

    Returns
    -------
    dict
        ``mu`` (GLS mean at the REML ``tau2``), ``tau2``, ``mu_std_error``,
        ``estimate`` (BLUP ``mu + B_i (delta_i - mu)``, ``B_i = tau2 / (tau2 +
        s_i^2)``), ``std_error`` (square root of the prediction error variance
        ``tau2 (1 - B_i) + (1 - B_i)^2 / sum_j w_j``), ``n`` and
        ``objective`` (minus twice the (restricted) log-likelihood without
        the ``2 pi`` constant), ``method``.

    Raises
    ------
    DesignError
        Fewer than 3 items or a non-positive variance.

    Notes
    -----
    ``-2 l_R(tau2) = sum log(tau2 + s_i^2) + log sum w_i + sum w_i (delta_i -
    mu_hat)^2`` with ``w_i = 1/(tau2 + s_i^2)``, minimised over ``tau2 >= 0``
    by a log-spaced grid followed by bounded Brent refinement (the boundary
    ``tau2 = 0`` is always a candidate); ML drops the ``log sum w_i`` term
    (Harville 1977).  With equal ``s_i^2 = s^2`` the REML optimum is
    ``max(0, var(delta) - s^2)`` (``var`` with ``n - 1``).

    Validated against R ``nlme::lme(delta ~ 1, random = ~1 | item, weights =
    varFixed(~s2), control = lmeControl(sigma = 1), method = "ML")`` (ML;
    nlme's REML with a fixed sigma has a known discrepancy, Pustejovsky 2016),
    the REML criterion minimised by R ``optimize``, and the published metafor
    REML fit of the BCG vaccine trials (Viechtbauer 2010: tau2 = 0.3132,
    mu = -0.7145, SE 0.1798).

    References
    ----------
    Harville, D. A. (1977). Maximum likelihood approaches to variance
    component estimation. JASA 72, 320-338.
    Viechtbauer, W. (2010). Conducting meta-analyses in R with the metafor
    package. J. Stat. Softw. 36(3).
    """
    delta = np.asarray(delta, dtype=float)
    s2 = np.asarray(s2, dtype=float)
    n = delta.size
    if method not in ("reml", "ml"):
        raise DesignError(f"method={method!r}; expected 'reml' or 'ml'.")
    reml = method == "reml"
    if n < 3:
        raise DesignError(
            f"the empirical-Bayes model over items needs at least 3 analysable items; received {n}. "
            "Use method='rci' or add items that are not at floor/ceiling in both versions."
        )
    if not np.all(s2 > 0):
        raise DesignError(
            "every analysable item needs a positive sampling variance of its change; received "
            f"{int(np.sum(~(s2 > 0)))} item(s) with zero variance (internal inconsistency; please report)."
        )
    spread = float(np.var(delta, ddof=1)) + float(s2.max())
    hi = max(10.0 * spread, 1e-12)
    grid = np.concatenate([[0.0], np.geomspace(hi * 1e-8, hi, 60)])
    vals = np.array([_objective(t, delta, s2, reml) for t in grid])
    k = int(np.argmin(vals))
    tau2, best = float(grid[k]), float(vals[k])
    lo_b = grid[k - 1] if k > 0 else 0.0
    hi_b = grid[k + 1] if k + 1 < grid.size else hi
    if hi_b > lo_b:
        res = optimize.minimize_scalar(_objective, bounds=(lo_b, hi_b), args=(delta, s2, reml),
                                       method="bounded", options={"xatol": 1e-14 * max(hi_b, 1e-300)})
        if res.fun < best:
            tau2, best = float(res.x), float(res.fun)
    w = 1.0 / (tau2 + s2)
    sw = w.sum()
    mu = float(np.dot(w, delta) / sw)
    shrink = tau2 / (tau2 + s2)
    estimate = mu + shrink * (delta - mu)
    pev = tau2 * (1.0 - shrink) + (1.0 - shrink) ** 2 / sw
    return {
        "mu": mu,
        "tau2": tau2,
        "mu_std_error": float(np.sqrt(1.0 / sw)),
        "estimate": estimate,
        "std_error": np.sqrt(pev),
        "n": n,
        "objective": best,
        "method": method,
    }


def fisher_exact_two_sided(x_before: np.ndarray, k_before: int, x_after: np.ndarray,
                           k_after: int) -> np.ndarray:
    """Two-sided Fisher exact p-values for ``x_before/k_before`` vs ``x_after/k_after``.

    Parameters
    ----------
    x_before, x_after : numpy.ndarray
        Success counts per item (integers).
    k_before, k_after : int
        Samples per item in each version.

    Returns
    -------
    numpy.ndarray
        p-values, one per item.

    Notes
    -----
    Conditional on the item's total successes ``t``, the after count is
    hypergeometric (population ``k_before + k_after``, ``t`` successes,
    ``k_after`` draws); the p-value sums the probabilities of all tables no
    more likely than the observed one (relative tolerance 1e-7, as in
    :func:`scipy.stats.fisher_exact`, against which it is validated).
    """
    xb = np.asarray(x_before, dtype=np.int64)
    xa = np.asarray(x_after, dtype=np.int64)
    total = xb + xa
    y = np.arange(k_after + 1)
    pmf = stats.hypergeom.pmf(y[None, :], k_before + k_after, total[:, None], k_after)
    obs = pmf[np.arange(xa.size), xa]
    p = np.where(pmf <= obs[:, None] * (1.0 + _FISHER_RTOL), pmf, 0.0).sum(axis=1)
    return np.minimum(p, 1.0)


def pooled_t_test(y_before: np.ndarray, y_after: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Student two-sample t test per item (pooled variance), rows are items.

    Returns
    -------
    tuple of numpy.ndarray
        ``(p_value, s2)``: two-sided p-values on ``k_before + k_after - 2``
        df and the null variance of the change ``S_pooled^2 (1/k_before +
        1/k_after)``.  An item with zero pooled variance gets p = 1 when its
        change is 0 and p = 0 otherwise (a deterministic change).

    Notes
    -----
    Validated against :func:`scipy.stats.ttest_ind` (``equal_var=True``).
    """
    kb, ka = y_before.shape[1], y_after.shape[1]
    delta = y_after.mean(axis=1) - y_before.mean(axis=1)
    ss = ((y_before - y_before.mean(axis=1, keepdims=True)) ** 2).sum(axis=1) + \
        ((y_after - y_after.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    df = kb + ka - 2
    # rounding leaves ~1e-32 of "variance" in constant rows; treat it as zero
    scale = np.maximum(np.abs(y_before).max(axis=1), np.abs(y_after).max(axis=1))
    ss = np.where(ss <= (kb + ka) * (64 * np.finfo(float).eps * np.maximum(scale, 1.0)) ** 2, 0.0, ss)
    s2 = ss / df * (1.0 / kb + 1.0 / ka)
    p = np.ones_like(delta)
    pos = s2 > 0
    t = delta[pos] / np.sqrt(s2[pos])
    p[pos] = 2.0 * stats.t.sf(np.abs(t), df)
    p[~pos & (delta != 0)] = 0.0
    return p, s2


def item_tests(y_before: np.ndarray, y_after: np.ndarray, *, binary: bool
               ) -> tuple[np.ndarray, np.ndarray]:
    """Per-item test of no change between two versions, and the null variance of the change.

    Parameters
    ----------
    y_before, y_after : numpy.ndarray
        Items x K score matrices of the two versions (rows aligned).
    binary : bool
        0/1 scores: Fisher exact p-values and the exact null variance of
        the change given the item's total (hypergeometric), ``pbar_i (1 -
        pbar_i) (1/K_b + 1/K_a) n/(n - 1)`` with ``n = K_b + K_a`` and
        ``pbar_i`` the share correct over both versions.  Otherwise the
        Student pooled t test and the pooled within-item sample variance
        times ``(1/K_b + 1/K_a)``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(p_value, s2)``, one entry per item.

    Examples
    --------
    >>> import numpy as np
    >>> p, s2 = item_tests(np.array([[0, 0, 0, 0]]), np.array([[1, 1, 1, 1]]), binary=True)
    >>> round(float(p[0]) * 70, 12), round(float(s2[0]) * 7, 12)  # 2 of C(8, 4) = 70; 1/4 (1/2) 8/7
    (2.0, 1.0)
    """
    kb, ka = y_before.shape[1], y_after.shape[1]
    if not binary:
        return pooled_t_test(y_before, y_after)
    xb = np.rint(y_before.sum(axis=1)).astype(np.int64)
    xa = np.rint(y_after.sum(axis=1)).astype(np.int64)
    n = kb + ka
    pbar = (xb + xa) / n
    s2 = pbar * (1.0 - pbar) * (1.0 / kb + 1.0 / ka) * n / (n - 1.0)
    return fisher_exact_two_sided(xb, kb, xa, ka), s2


def smallest_fisher_p(k_before: int, k_after: int) -> float:
    """The smallest two-sided Fisher exact p-value over all tables of a ``k_before`` + ``k_after`` design.

    Notes
    -----
    Attained at complete separation (``0/k_before`` vs ``k_after/k_after``
    or the reverse), the only tables evaluated; the tests check this against
    the minimum over all ``(k_before + 1)(k_after + 1)`` tables.

    Examples
    --------
    >>> round(smallest_fisher_p(2, 2), 6), round(smallest_fisher_p(4, 4), 6)  # 1/3 and 2/70
    (0.333333, 0.028571)
    """
    p = fisher_exact_two_sided(np.array([0, k_before]), k_before, np.array([k_after, 0]), k_after)
    return float(p.min())


def storey_qvalues(p: np.ndarray, lam: float = STOREY_LAMBDA) -> tuple[np.ndarray, float]:
    """Storey q-values with the finite-sample null-share estimator.

    Parameters
    ----------
    p : numpy.ndarray
        p-values of the ``m`` items in the family.
    lam : float, default 0.5
        Tuning parameter of the null-share estimator.

    Returns
    -------
    tuple
        ``(q, pi0)`` with ``pi0 = min(1, (1 + #{p > lam}) / (m (1 - lam)))``
        and ``q_(i) = min_{j >= i} min(1, pi0 m p_(j) / j)`` over the sorted
        p-values.

    Notes
    -----
    Rejecting the items with ``q <= alpha`` and ``p <= lam`` controls the FDR
    at ``alpha`` for independent (super-)uniform null p-values (Storey,
    Taylor & Siegmund 2004, Theorem 3).  With ``pi0 = 1`` the q-values are
    the Benjamini-Hochberg adjusted p-values.
    """
    p = np.asarray(p, dtype=float)
    m = p.size
    if m == 0:
        return p.copy(), float("nan")
    pi0 = min(1.0, (1.0 + np.sum(p > lam)) / (m * (1.0 - lam)))
    order = np.argsort(p, kind="mergesort")
    raw = pi0 * m * p[order] / np.arange(1, m + 1)
    q_sorted = np.minimum(np.minimum.accumulate(raw[::-1])[::-1], 1.0)
    q = np.empty(m)
    q[order] = q_sorted
    return q, float(pi0)


def eb_item_changes(y_before: np.ndarray, y_after: np.ndarray, floor_ceiling: np.ndarray, *,
                    fdr: float, binary: bool,
                    tests: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[dict, dict]:
    """Empirical-Bayes change per item with FDR-controlled classes.

    Parameters
    ----------
    y_before, y_after : numpy.ndarray
        Items x K score matrices of the two versions (rows aligned).
    floor_ceiling : numpy.ndarray
        Boolean mask of items at floor/ceiling in both versions; they are
        left out of the model and of the FDR family.
    fdr : float
        Target false discovery rate in (0, 1).
    binary : bool
        Scores are 0/1 (Fisher exact p-values and the exact null variances
        given each item's total) or continuous (pooled t test and pooled
        sample variances); see :func:`item_tests`.
    tests : tuple of numpy.ndarray, optional
        ``(p_value, s2)`` from :func:`item_tests`, if already computed.

    Returns
    -------
    tuple of dict
        ``columns``: arrays ``std_error``, ``eb_estimate``, ``eb_std_error``,
        ``p_value``, ``q_value``, ``eb_class``; ``info``: ``mu``, ``tau2``,
        ``mu_std_error``, ``pi0``, ``lambda``, ``fdr``, ``n_family``,
        ``n_discoveries``.

    Notes
    -----
    Null variance of ``delta_i = p_after - p_before`` (:func:`item_tests`):
    for 0/1 scores the exact variance given the item's total, ``pbar_i (1 -
    pbar_i) (1/K_b + 1/K_a) n/(n - 1)`` (``pbar_i`` the share correct over
    both versions, ``n = K_b + K_a``; the plug-in binomial variance without
    ``n/(n - 1)`` understates it, and the model then mistakes noise for a
    spread of true changes: tau^2 = 0.066 instead of 0 on two identical
    2 + 2 re-runs of gpt-4o), otherwise the pooled within-version sample
    variance times ``(1/K_b + 1/K_a)``.  It is positive for every
    analysable 0/1 item.  An item is a discovery when its
    q-value is at most ``fdr`` and its p-value at most lambda; its class is
    ``improved``/``deteriorated`` by the sign of ``delta_i``.
    """
    n = y_before.shape[0]
    delta = y_after.mean(axis=1) - y_before.mean(axis=1)
    pval, s2 = item_tests(y_before, y_after, binary=binary) if tests is None else tests
    an = ~np.asarray(floor_ceiling, dtype=bool)
    fit_mask = an & (s2 > 0)
    fit = fit_normal_normal(delta[fit_mask], s2[fit_mask])
    tau2, mu = fit["tau2"], fit["mu"]
    w_sum = 1.0 / fit["mu_std_error"] ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(tau2 + s2 > 0, tau2 / (tau2 + s2), 1.0)
    est = mu + shrink * (delta - mu)
    eb_se = np.sqrt(tau2 * (1.0 - shrink) + (1.0 - shrink) ** 2 / w_sum)
    # Items with zero variance (floor/ceiling, deterministic continuous) are observed exactly.
    exact = s2 <= 0
    est[exact] = delta[exact]
    eb_se[exact] = 0.0
    q = np.full(n, np.nan)
    q_an, pi0 = storey_qvalues(pval[an])
    q[an] = q_an
    with np.errstate(invalid="ignore"):
        disc = an & (q <= fdr) & (pval <= STOREY_LAMBDA)  # q is NaN off the family: never a discovery
    cls = np.where(~an, "floor_ceiling",
                   np.where(disc & (delta > 0), "improved",
                            np.where(disc & (delta < 0), "deteriorated", "no_change")))
    columns = {
        "std_error": np.sqrt(s2),
        "eb_estimate": est,
        "eb_std_error": eb_se,
        "p_value": pval,
        "q_value": q,
        "eb_class": cls.astype(object),
    }
    info = {
        "mu": mu,
        "tau2": tau2,
        "mu_std_error": fit["mu_std_error"],
        "pi0": pi0,
        "lambda": STOREY_LAMBDA,
        "fdr": fdr,
        "n_family": int(an.sum()),
        "n_discoveries": int(np.sum(disc & (delta != 0))),
    }
    return columns, info
