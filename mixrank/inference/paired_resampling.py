"""Stage inference: resampling paired tests (docs/methods.md §5).

Inputs: two aligned score arrays or a long DataFrame (see
:mod:`mixrank.inference.paired_data`), optionally a cluster grouping.
Outputs: tidy one-row DataFrames with metadata in ``df.attrs["mixrank"]``.
Contents: :func:`paired_bootstrap` (percentile and BCa intervals, cell or
cluster bootstrap) and :func:`sign_flip` (sign-flip permutation test of the
mean difference, exact enumeration or Monte Carlo).  Both are re-exported by
:mod:`mixrank.inference.paired`.

Orientation: the difference is ``d = A - B``.  Randomness only through the
``rng`` argument (a :class:`numpy.random.Generator` or a seed).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special

from mixrank._deprecate import former_keywords
from mixrank._util import as_rng, check_level, check_max_draws, tidy
from mixrank.errors import DataError, DesignError, SmallSampleWarning
from mixrank.inference.keywords import former, unexpected_keywords
from mixrank.inference.paired_data import PairedData, check_alternative, paired_arrays

__all__ = ["paired_bootstrap", "sign_flip"]

#: Sign-flip: ``method="auto"`` enumerates exactly up to this many non-zero units.
SIGN_FLIP_EXACT_AUTO = 20
#: Sign-flip: ``method="exact"`` is refused above this many non-zero units.
SIGN_FLIP_EXACT_MAX = 40
_CHUNK_CELLS = 2_000_000  # elements per resampling batch (memory bound)

_DATA_DOC = """x : array-like or pandas.DataFrame
        Scores of model A per cell, or a long DataFrame (one row per model
        and cell).
    y : array-like, optional
        Scores of model B on the same cells (array form).
    a, b : hashable, optional
        Long form: the two models (levels of ``model``); array form: labels.
    model, score : str
        Long form: comparison and score columns (default ``"model"``,
        ``"correct"``).
    pair_by : str or sequence of str, optional
        Long form: cell keys (default: those of ``subject``, ``question``,
        ``prompt`` present)."""


def _doc(func: Callable) -> Callable:
    if func.__doc__:
        func.__doc__ = func.__doc__.replace("{data_params}", _DATA_DOC)
    return func


def _base(pdata: PairedData) -> dict:
    return {"model_a": pdata.model_a, "model_b": pdata.model_b, "n": pdata.n,
            "n_clusters": pdata.n_clusters}


# ------------------------------------------------------------------ bootstrap --

def _statistic(statistic: str | Callable) -> tuple[str, Callable[[np.ndarray], np.ndarray]]:
    """Name and a row-wise function ``f(2-D array) -> 1-D array`` of a statistic."""
    if statistic == "mean":
        return "mean", lambda m: np.mean(m, axis=-1)
    if statistic == "median":
        return "median", lambda m: np.median(m, axis=-1)
    if callable(statistic):
        name = getattr(statistic, "__name__", "callable")
        return name, lambda m: np.apply_along_axis(lambda r: float(statistic(r)), -1, m)
    raise DataError(f"statistic={statistic!r} is not supported; expected 'mean', 'median' or "
                    "a function of the difference vector returning a number")


def _bca_interval(theta_hat: float, theta_boot: np.ndarray, jack: np.ndarray,
                  level: float) -> tuple[float, float, float, float]:
    """BCa interval from bootstrap replicates and jackknife values.

    Returns ``(lower, upper, z0, acceleration)``; follows Efron & Tibshirani
    (1993) eqs. 14.14-14.15, with the bias correction counting ties at
    ``theta_hat`` as half (as ``scipy.stats.bootstrap``).
    """
    B = theta_boot.shape[0]
    share = (np.count_nonzero(theta_boot < theta_hat)
             + np.count_nonzero(theta_boot <= theta_hat)) / (2.0 * B)
    z0 = float(special.ndtri(share))
    dev = np.mean(jack) - jack
    den = float(np.sum(dev ** 2))
    acc = float(np.sum(dev ** 3) / (6.0 * den ** 1.5)) if den > 0 else 0.0
    if not np.isfinite(z0):
        return float("nan"), float("nan"), z0, acc
    z_lo = special.ndtri((1.0 - level) / 2.0)
    out = []
    for zq in (z_lo, -z_lo):
        num = z0 + zq
        out.append(float(special.ndtr(z0 + num / (1.0 - acc * num))))
    lo, hi = np.quantile(theta_boot, out)
    return float(lo), float(hi), z0, acc


def _boot_cells(d: np.ndarray, f: Callable, B: int, gen: np.random.Generator) -> np.ndarray:
    n = d.shape[0]
    chunk = max(1, min(B, _CHUNK_CELLS // n))
    out = np.empty(B)
    for start in range(0, B, chunk):
        k = min(chunk, B - start)
        idx = gen.integers(0, n, size=(k, n))
        out[start:start + k] = f(d[idx])
    return out


def _boot_clusters(d: np.ndarray, codes: np.ndarray, G: int, f: Callable, is_mean: bool,
                   B: int, gen: np.random.Generator) -> np.ndarray:
    sums = np.bincount(codes, weights=d, minlength=G)
    sizes = np.bincount(codes, minlength=G).astype(float)
    chunk = max(1, min(B, _CHUNK_CELLS // G))
    out = np.empty(B)
    if is_mean:
        for start in range(0, B, chunk):
            k = min(chunk, B - start)
            idx = gen.integers(0, G, size=(k, G))
            out[start:start + k] = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
        return out
    order = np.argsort(codes, kind="stable")
    first = np.concatenate(([0], np.cumsum(sizes.astype(np.intp))[:-1]))
    sizes_i = sizes.astype(np.intp)
    for start in range(0, B, chunk):
        k = min(chunk, B - start)
        idx = gen.integers(0, G, size=(k, G))
        for j in range(k):
            lens = sizes_i[idx[j]]
            offs = np.cumsum(lens) - lens
            pos = np.arange(lens.sum()) - np.repeat(offs, lens) + np.repeat(first[idx[j]], lens)
            out[start + j] = f(d[order[pos]][None, :])[0]
    return out


def _jackknife(d: np.ndarray, codes: np.ndarray | None, G: int, f: Callable,
               is_mean: bool) -> np.ndarray:
    n = d.shape[0]
    if codes is None:
        if is_mean:
            return (np.sum(d) - d) / (n - 1)
        keep = ~np.eye(n, dtype=bool) if n <= 2000 else None
        if keep is not None:
            return f(np.broadcast_to(d, (n, n))[keep].reshape(n, n - 1))
        return np.array([f(np.delete(d, i)[None, :])[0] for i in range(n)])
    if is_mean:
        sums = np.bincount(codes, weights=d, minlength=G)
        sizes = np.bincount(codes, minlength=G)
        return (np.sum(d) - sums) / (n - sizes)
    return np.array([f(d[codes != g][None, :])[0] for g in range(G)])


@former_keywords
@_doc
def paired_bootstrap(x: Any, y: Any = None, *, a: Hashable | None = None,
                     b: Hashable | None = None, model: str = "model", score: str = "correct",
                     pair_by: str | Sequence[str] | None = None, cluster: Any = None,
                     statistic: str | Callable = "mean", draws: int = 2000,
                     level: float = 0.95, ci: Literal["percentile", "bca", "all"] = "percentile",
                     rng: Any = None,
                     **old: Any) -> pd.DataFrame:
    """Paired bootstrap confidence interval for a statistic of ``d = A - B``.

    Parameters
    ----------
    {data_params}
    cluster : str or array-like, optional
        Resample whole clusters instead of cells: a column name in the long
        form (e.g. ``"subject"``), an array of labels (one per cell) in the
        array form.  The statistic is computed on the pooled cells of the
        resampled clusters (for ``"mean"``: the cell-weighted mean).
    statistic : {"mean", "median"} or callable, default "mean"
        A callable receives the 1-D difference vector and returns a number.
    draws : int, default 2000
        Bootstrap resamples (former name ``B=``, deprecated; the output
        column keeps the name ``B``).
    level : float, default 0.95
    ci : {"percentile", "bca", "all"}, default "percentile"
        ``"all"`` returns both rows, from the same resamples.
    rng : numpy.random.Generator or int, optional
        Source of randomness (seed for reproducibility).

    Returns
    -------
    pandas.DataFrame
        One row per interval: ``model_a``, ``model_b``, ``n`` (paired cells),
        ``n_clusters`` (None without clustering), ``estimate`` (statistic on
        the data), ``std_error`` (sd of the replicates, n - 1),
        ``ci_lower``, ``ci_upper``, ``level``, ``method``
        (``"percentile"``/``"bca"``), ``B``.  ``attrs["mixrank"]`` holds
        the statistic, the bootstrap bias and, for BCa, ``z0`` and
        ``acceleration``.

    Raises
    ------
    DataError
        Malformed input (see :func:`mixrank.inference.paired.mcnemar`), bad
        ``B``, ``level``, ``ci`` or ``statistic``.
    DesignError
        Fewer than 2 cells (or 2 clusters).

    Warns
    -----
    SmallSampleWarning
        BCa undefined because every replicate lies on one side of the
        estimate (bounds NaN).

    Notes
    -----
    Every resample draws the same cell (or cluster) indices for both models,
    i.e. resamples ``d``.  Percentile interval: the ``(1 -+ level)/2``
    quantiles of the replicates (linear interpolation).  BCa:
    ``alpha_j = Phi(z0 + (z0 + z_j)/(1 - a (z0 + z_j)))`` with
    ``z0 = Phi^-1(share of replicates below the estimate, ties half)`` and
    the acceleration ``a = sum(u^3) / (6 (sum u^2)^(3/2))``, ``u`` the
    jackknife deviations (leave one cell out; leave one cluster out for the
    cluster bootstrap).  Validated against ``scipy.stats.bootstrap(paired=True,
    method="BCa")``: identical interval from identical replicates, and
    agreement within Monte Carlo error end to end.

    References
    ----------
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap,
    ch. 13-14 and 22.  Davison, A. C. & Hinkley, D. V. (1997). Bootstrap
    Methods and their Application, section 3.8 (clustered data).

    Examples
    --------
    >>> from mixrank.inference.paired import paired_bootstrap
    >>> r = paired_bootstrap([1, 1, 0, 1, 1, 0], [0, 1, 0, 0, 1, 1], rng=1)
    >>> float(r["estimate"].iloc[0])
    0.16666666666666666
    """
    B = former(old, "B", "draws", draws, 2000, where="paired_bootstrap")
    unexpected_keywords(old, "paired_bootstrap")
    if isinstance(B, bool) or not isinstance(B, int | np.integer) or B < 2:
        raise DataError(f"draws={B!r} is not a number of resamples; expected an integer >= 2 "
                        "(default 2000)")
    check_max_draws("draws", B, DataError)
    check_level(level, DataError)
    if ci not in ("percentile", "bca", "all"):
        raise DataError(f"ci={ci!r} is not supported; expected 'percentile', 'bca' or 'all'")
    name, f = _statistic(statistic)
    is_mean = name == "mean" and statistic == "mean"
    pdata = paired_arrays(x, y, a=a, b=b, model=model, score=score, pair_by=pair_by,
                           cluster=cluster)
    d = pdata.d
    n = pdata.n
    if n < 2:
        raise DesignError(f"paired_bootstrap got {n} paired cell; expected at least 2")
    G = pdata.n_clusters
    if G is not None and G < 2:
        raise DesignError(f"cluster bootstrap got {G} cluster; expected at least 2 clusters "
                          "to resample")
    gen = as_rng(rng)
    est = float(f(d[None, :])[0])
    if G is None or pdata.cluster is None:
        boot = _boot_cells(d, f, int(B), gen)
    else:
        boot = _boot_clusters(d, pdata.cluster, G, f, is_mean, int(B), gen)
    se = float(np.std(boot, ddof=1))
    lev = float(level)
    rows = []
    meta: dict[str, Any] = {"test": "paired_bootstrap", "statistic": name,
                            "resampling": "cluster" if G is not None else "cells",
                            "bias": float(np.mean(boot) - est), **pdata.meta()}
    if ci in ("percentile", "all"):
        lo, hi = np.quantile(boot, [(1.0 - lev) / 2.0, (1.0 + lev) / 2.0])
        rows.append({**_base(pdata), "estimate": est, "std_error": se, "ci_lower": float(lo),
                     "ci_upper": float(hi), "level": lev, "method": "percentile", "B": int(B)})
    if ci in ("bca", "all"):
        jack = _jackknife(d, pdata.cluster, G or 0, f, is_mean)
        lo, hi, z0, acc = _bca_interval(est, boot, jack, lev)
        if not np.isfinite(z0):
            warnings.warn("BCa interval undefined: every bootstrap replicate lies on one side "
                          f"of the estimate {est!r}; bounds are NaN. Use ci='percentile' or "
                          "more cells", SmallSampleWarning, stacklevel=2)
        meta.update(z0=z0, acceleration=acc)
        rows.append({**_base(pdata), "estimate": est, "std_error": se, "ci_lower": lo,
                     "ci_upper": hi, "level": lev, "method": "bca", "B": int(B)})
    return tidy(rows, **meta)


# ------------------------------------------------------------------ sign flip --

def _half_sums(u: np.ndarray) -> np.ndarray:
    """All ``2^len(u)`` sums ``sum(+-u_i)``."""
    s = np.zeros(1)
    for v in u:
        s = np.concatenate((s + v, s - v))
    return s


def _count_at_least(left: np.ndarray, right_sorted: np.ndarray, t: float) -> int:
    """Number of pairs (i, j) with ``left_i + right_j >= t``."""
    pos = np.searchsorted(right_sorted, t - left, side="left")
    return int(np.sum(right_sorted.shape[0] - pos))


def _exact_counts(u: np.ndarray, t: float, tol: float) -> tuple[int, int, int]:
    """Counts of sign patterns with T >= t - tol, T <= t + tol, |T| >= |t| - tol."""
    h = u.shape[0] // 2
    left = _half_sums(u[:h])
    right = np.sort(_half_sums(u[h:]))
    ge = _count_at_least(left, right, t - tol)
    # T <= t + tol  <=>  -T >= -t - tol, and -T has the same distribution (flip all signs)
    le = _count_at_least(-left, np.sort(-right), -t - tol)
    thr = abs(t) - tol
    if thr <= 0:
        both = 2 ** u.shape[0]
    else:
        both = _count_at_least(left, right, thr) + _count_at_least(-left, np.sort(-right), thr)
    return ge, le, both


@_doc
def sign_flip(x: Any, y: Any = None, *, a: Hashable | None = None, b: Hashable | None = None,
              model: str = "model", score: str = "correct",
              pair_by: str | Sequence[str] | None = None, cluster: Any = None,
              alternative: Literal["two-sided", "less", "greater"] = "two-sided",
              method: Literal["auto", "exact", "monte_carlo"] = "auto",
              n_resamples: int = 10000, rng: Any = None) -> pd.DataFrame:
    """Sign-flip permutation test of the mean difference ``mean(A - B) = 0``.

    Parameters
    ----------
    {data_params}
    cluster : str or array-like, optional
        Flip the signs of whole clusters (their summed differences) instead
        of single cells: a column name (long form) or labels (array form).
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        ``"auto"``: exact enumeration of all ``2^m`` sign patterns when the
        number ``m`` of non-zero units (cells or clusters) is at most 20,
        Monte Carlo otherwise.  ``"exact"`` works up to m = 40.
    n_resamples : int, default 10000
        Monte Carlo sign patterns.
    rng : numpy.random.Generator or int, optional
        Source of randomness (Monte Carlo only).

    Returns
    -------
    pandas.DataFrame
        One row: ``model_a``, ``model_b``, ``n`` (paired cells),
        ``n_clusters`` (None without clustering), ``estimate`` and
        ``statistic`` (both the mean difference), ``p_value``, ``method``
        (``"exact"``/``"monte_carlo"``), ``n_resamples`` (``2^m`` when
        exact), ``alternative``.

    Raises
    ------
    DataError
        Malformed input (see :func:`mixrank.inference.paired.mcnemar`), bad
        ``method``/``n_resamples``, or ``method="exact"`` with m > 40.

    Notes
    -----
    Under H0 each unit's difference is symmetric about 0, so every sign
    pattern ``s`` is equally likely; ``T(s) = sum(s_i u_i)/n``.  Exact:
    ``p = #{s: T(s) >= T_obs}/2^m`` (greater), ``<=`` (less),
    ``|T(s)| >= |T_obs|`` (two-sided), comparisons with a relative tolerance
    of 1e-10 for floating-point ties; enumeration is split in two halves
    (sorted partial sums), so no 2^m array is built.  Zero units are their
    own flip and are left out (the proportion is unchanged).  Monte Carlo:
    ``p = (1 + #{r: T_r extreme})/(1 + R)`` (Phipson & Smyth 2010).
    Validated against enumeration by hand on tiny vectors and
    ``scipy.stats.permutation_test(permutation_type="samples")``.

    References
    ----------
    Fisher, R. A. (1935). The Design of Experiments, section 21.  Phipson, B.
    & Smyth, G. K. (2010). Permutation p-values should never be zero. SAGMB
    9(1), 39.

    Examples
    --------
    >>> from mixrank.inference.paired import sign_flip
    >>> float(sign_flip([1, 1, 1, 0], [0, 0, 0, 0])["p_value"].iloc[0])
    0.25
    """
    alt = check_alternative(alternative)
    if method not in ("auto", "exact", "monte_carlo"):
        raise DataError(f"method={method!r} is not supported; expected 'auto', 'exact' or "
                        "'monte_carlo'")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer) \
            or n_resamples < 1:
        raise DataError(f"n_resamples={n_resamples!r} is not a count; expected a positive "
                        "integer")
    check_max_draws("n_resamples", n_resamples, DataError)
    pdata = paired_arrays(x, y, a=a, b=b, model=model, score=score, pair_by=pair_by,
                           cluster=cluster)
    d = pdata.d
    n = pdata.n
    if pdata.cluster is not None:
        units = np.bincount(pdata.cluster, weights=d, minlength=pdata.n_clusters or 0)
    else:
        units = d
    u = units[units != 0.0]
    m = int(u.shape[0])
    t = float(np.sum(u))
    tol = 1e-10 * float(np.sum(np.abs(u)))
    use_exact = method == "exact" or (method == "auto" and m <= SIGN_FLIP_EXACT_AUTO)
    if use_exact and m > SIGN_FLIP_EXACT_MAX:
        raise DataError(f"sign_flip(method='exact') got {m} non-zero units; exact enumeration "
                        f"is limited to {SIGN_FLIP_EXACT_MAX}. Use method='monte_carlo'")
    if use_exact:
        total = 2 ** m
        ge, le, both = _exact_counts(u, t, tol)
        count = {"greater": ge, "less": le, "two-sided": both}[alt]
        p = count / total
        label, R = "exact", total
    else:
        gen = as_rng(rng)
        R = int(n_resamples)
        chunk = max(1, min(R, _CHUNK_CELLS // max(m, 1)))
        count = 0
        for start in range(0, R, chunk):
            k = min(chunk, R - start)
            signs = gen.integers(0, 2, size=(k, m), dtype=np.int8) * 2 - 1
            ts = signs @ u
            if alt == "greater":
                count += int(np.sum(ts >= t - tol))
            elif alt == "less":
                count += int(np.sum(ts <= t + tol))
            else:
                count += int(np.sum(np.abs(ts) >= abs(t) - tol))
        p = (1 + count) / (1 + R)
        label = "monte_carlo"
    mean = float(np.sum(d) / n)
    row = {**_base(pdata), "estimate": mean, "statistic": mean, "p_value": float(min(p, 1.0)),
           "method": label, "n_resamples": int(R), "alternative": alt}
    return tidy([row], test="sign_flip", n_nonzero_units=m, **pdata.meta())
