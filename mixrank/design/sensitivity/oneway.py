"""One-way REML for many replicates at once: the fast path of the resampling checks (design stage).

Stage: design (a vectorised special case of the engine's model, for the
cluster bootstrap and random clusterings of :mod:`mixrank.design.sensitivity`).
Inputs: per-replicate, per-level counts, sums and sums of squares of the
cell differences, shape ``(B, T)``.
Outputs: per replicate the estimate of the estimand, its variance under the
fitted one-way model, the sample SD of d and N (:func:`oneway_fit`).
Contents (docs/sensitivity.md, "Fast path"): :func:`level_sums`,
:func:`oneway_fit`.

Model: ``d_ij = mu + b_i + e_ij`` with ``gamma = sigma_b^2 / sigma^2``.  With
``w_i = m_i / (1 + gamma m_i)``, the profiled REML criterion is

    (N - 1) log RSS(gamma) + sum_i log(1 + gamma m_i) + log sum_i w_i,
    RSS(gamma) = sum_i [SSW_i + w_i (dbar_i - mu(gamma))^2],
    mu(gamma) = sum_i w_i dbar_i / sum_i w_i,

minimised over ``gamma >= 0`` (log grid, then golden-section refinement,
with the boundary gamma = 0 compared explicitly); ``sigma^2 = RSS / (N - 1)``.
Levels with no cell (m_i = 0) drop out.  It is the engine's model for a
formula with one random term; the tests check it against
:func:`mixrank.engine.lmm.native.fit_pairs`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["level_sums", "oneway_fit"]

_GRID = np.concatenate([[0.0], np.logspace(-5, 5, 101)])   # gamma * mean cluster size
_GOLDEN = 40
_CHUNK = 2_000_000  # elements of a (B, grid, T) block


def level_sums(d: np.ndarray, codes: np.ndarray, T: int) -> tuple[np.ndarray, ...]:
    """Counts, sums and sums of squares of ``d`` per level (shape (T,))."""
    m = np.bincount(codes, minlength=T).astype(float)
    s = np.bincount(codes, weights=d, minlength=T)
    ss = np.bincount(codes, weights=d * d, minlength=T)
    return m, s, ss


def _criterion(g: np.ndarray, m: np.ndarray, dbar: np.ndarray, ssw: np.ndarray,
               n: np.ndarray) -> np.ndarray:
    """REML criterion at gamma g (shape (B, G)); m, dbar, ssw shape (B, 1, T)."""
    gg = g[..., None]
    w = m / (1.0 + gg * m)
    sw = w.sum(axis=-1)
    mu = (w * dbar).sum(axis=-1) / sw
    rss = ssw.sum(axis=-1) + (w * (dbar - mu[..., None]) ** 2).sum(axis=-1)
    rss = np.maximum(rss, 1e-300)
    return (n - 1.0) * np.log(rss) + np.log1p(gg * m).sum(axis=-1) + np.log(sw)


def _gamma(m: np.ndarray, dbar: np.ndarray, ssw: np.ndarray, n: np.ndarray) -> np.ndarray:
    B, T = m.shape
    scale = (n / np.maximum((m > 0).sum(axis=1), 1))[:, None]        # mean cluster size
    grid = _GRID[None, :] / scale                                      # (B, G)
    M, D, S = m[:, None, :], dbar[:, None, :], ssw[:, None, :]
    step = max(1, _CHUNK // max(1, len(_GRID) * T))
    crit = np.concatenate([_criterion(grid[i:i + step], M[i:i + step], D[i:i + step],
                                      S[i:i + step], n[i:i + step, None])
                           for i in range(0, B, step)])
    k = np.argmin(crit, axis=1)
    lo = np.log(grid[np.arange(B), np.clip(k - 1, 1, len(_GRID) - 1)])
    hi = np.log(grid[np.arange(B), np.clip(k + 1, 1, len(_GRID) - 1)])
    phi = (np.sqrt(5.0) - 1.0) / 2.0

    def f(lg: np.ndarray) -> np.ndarray:
        return _criterion(np.exp(lg)[:, None], M, D, S, n[:, None])[:, 0]

    x1, x2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
    f1, f2 = f(x1), f(x2)
    for _ in range(_GOLDEN):
        left = f1 < f2
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        x2n = np.where(left, x1, lo + phi * (hi - lo))
        x1n = np.where(left, hi - phi * (hi - lo), x2)
        x1, x2 = x1n, x2n
        fn = f(np.where(left, x1, x2))
        f1, f2 = np.where(left, fn, f2), np.where(left, f1, fn)
    g = np.exp(0.5 * (lo + hi))
    at0 = _criterion(np.zeros((B, 1)), M, D, S, n[:, None])[:, 0]
    return np.where((k == 0) | (at0 <= f(np.log(g))), 0.0, g)


def oneway_fit(m: np.ndarray, s: np.ndarray, ss: np.ndarray, *,
               estimand: str) -> dict[str, np.ndarray]:
    """REML fit of the one-way model per replicate (rows of the (B, T) inputs).

    Returns
    -------
    dict
        ``estimate`` (gls, cells or units estimand), ``variance`` (its
        variance under the fitted model), ``sigma_d`` (sample SD of d),
        ``n`` (cells), ``weight_factor`` (``n sum w_c^2``), ``sigma2``,
        ``gamma`` -- arrays of shape (B,).  Replicates with fewer than 2
        levels or 3 cells give NaN.
    """
    m = np.atleast_2d(np.asarray(m, dtype=float))
    s, ss = np.atleast_2d(s).astype(float), np.atleast_2d(ss).astype(float)
    n = m.sum(axis=1)
    used = (m > 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dbar = np.where(m > 0, s / np.where(m > 0, m, 1.0), 0.0)
        ssw = np.maximum(ss - m * dbar**2, 0.0)
        ok = (used >= 2) & (n >= 3)
        g = np.full(len(n), np.nan)
        if ok.any():
            g[ok] = _gamma(m[ok], dbar[ok], ssw[ok], n[ok])
        w = m / (1.0 + g[:, None] * m)
        sw = w.sum(axis=1)
        mu = (w * dbar).sum(axis=1) / sw
        rss = ssw.sum(axis=1) + (w * (dbar - mu[:, None]) ** 2).sum(axis=1)
        sigma2 = rss / (n - 1.0)
        tot = s.sum(axis=1)
        sigma_d = np.sqrt(np.maximum(ss.sum(axis=1) - tot**2 / n, 0.0) / (n - 1.0))
        if estimand == "gls":
            est, var = mu, sigma2 / sw
            # a cell of level i weighs w_i / (m_i sum w): sum_c w_c^2 = sum_i w_i^2 / m_i / (sum w)^2
            sumw2 = np.where(m > 0, w**2 / np.where(m > 0, m, 1.0), 0.0).sum(axis=1) / sw**2
        elif estimand == "cells":
            est = tot / n
            var = sigma2 * (n + g * (m**2).sum(axis=1)) / n**2
            sumw2 = 1.0 / n
        else:                                             # units: 1/(T m_i) per cell
            T = used.astype(float)
            est = dbar.sum(axis=1) / T
            var = sigma2 * np.where(m > 0, 1.0 / np.where(m > 0, m, 1.0) + g[:, None],
                                    0.0).sum(axis=1) / T**2
            sumw2 = np.where(m > 0, 1.0 / np.where(m > 0, m, 1.0), 0.0).sum(axis=1) / T**2
    bad = ~ok
    out = dict(estimate=est, variance=var, sigma_d=sigma_d, n=n, weight_factor=n * sumw2,
               sigma2=sigma2, gamma=g)
    for v in out.values():
        v[bad] = np.nan
    return out
