"""Stage inference: multivariate-t null draws of studentized contrasts with small df.

Inputs: a square root ``root`` (pairs x r) of the correlation ``R`` of the
contrasts, each contrast's df and a random generator.
Outputs: draws on the normal score scale, ``z_h = Phi^-1(F_{t,df_h}(T_h))``,
whose joint law is that of the studentized contrasts ``T_h`` when their
standard errors are estimated with small df (:func:`normal_scores`); the
mapping of observed t statistics to that scale (:func:`observed_scores`).
Contents: :data:`DF_SHARED`, :func:`small_df`, :func:`normal_scores`, :func:`observed_scores`.

Method (docs/methods.md §9, "Max-t with small df"): the Gaussian copula
``T_h = F_{t,df_h}^-1(Phi(Z_h))`` keeps each margin but takes the
dependence of the numerators for that of the ratios.  With few df the
standard errors are themselves noisy and only partly shared between pairs, so
the ratios are less dependent than their numerators and the maximum is
heavier than the copula's: on a crossed design with 3-5 prompts the copula
max-t held a family-wise error of 0.116 (issue 37).  Here each pair with
``df_h < DF_SHARED`` gets ``T_h = Z0_h / sqrt(S_h / df_h)`` with
``S_h = sum_{k <= floor(df_h)} Z_kh^2 + G_h``: ``Z_0, Z_1, ...`` independent
draws of ``N(0, R)`` (the numerators and the variance pieces share the
pairs' correlation, as when each variance is a sum of squares of
independent replicate contrasts, e.g. prompts) and ``G_h`` an independent
``chi^2`` with the fractional part of ``df_h``; so ``S_h ~ chi^2_{df_h}``
and ``T_h ~ t_{df_h}`` exactly, and two pairs' variance estimates correlate
at ``R_hg^2`` (Dunnett & Sobel 1954 for a shared denominator; the Wishart
form is Hothorn, Bretz & Westfall 2008's ``mvtnorm`` reference with one df
per contrast).  Pairs with ``df_h >= DF_SHARED`` keep the copula, whose error
there is below the Monte Carlo error.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

__all__ = ["DF_SHARED", "small_df", "normal_scores", "observed_scores"]

#: pairs with fewer df than this get multivariate-t (shared-correlation) denominators.
DF_SHARED = 30.0


def small_df(df: np.ndarray) -> np.ndarray:
    """Mask of the pairs whose draws need estimated denominators (finite df below DF_SHARED)."""
    df = np.asarray(df, dtype=float)
    return np.isfinite(df) & (df < DF_SHARED)


def normal_scores(Z0: np.ndarray, df: np.ndarray, draw: Callable[[], np.ndarray],
                  gen: np.random.Generator) -> np.ndarray:
    """Signed normal scores of multivariate-t draws: ``Phi^-1(F_{t,df}(T))`` per pair.

    Parameters
    ----------
    Z0 : ndarray (b, P)
        Numerator draws from ``N(0, R)`` (unit variances).
    df : ndarray (P,)
        Each pair's df; pairs with ``df >= DF_SHARED`` (or infinite) are
        returned as ``Z0`` (the Gaussian copula).
    draw : callable
        Returns a fresh independent ``(b, P)`` draw of ``N(0, R)``.
    gen : Generator
        For the fractional chi-square pieces.

    Returns
    -------
    ndarray (b, P)
        Standard normal margins; ``T_h = F_t^-1(Phi(z_h))`` is exactly
        ``t_{df_h}`` and the draws carry the joint law described in the
        module docstring.
    """
    small = small_df(df)
    if not small.any():
        return Z0
    nu = np.asarray(df, dtype=float)[small]
    whole = np.floor(nu).astype(np.int64)
    S = np.zeros((Z0.shape[0], int(small.sum())))
    for k in range(int(whole.max(initial=0))):
        Zk = draw()[:, small]
        S += np.where(k < whole, Zk * Zk, 0.0)
    frac = nu - whole
    if (frac > 0).any():
        S += np.where(frac > 0, 2.0 * gen.standard_gamma(np.where(frac > 0, frac / 2.0, 1.0),
                                                         size=S.shape), 0.0)
    T = Z0[:, small] / np.sqrt(np.clip(S, 1e-300, None) / nu)
    out = Z0.copy()
    out[:, small] = observed_scores(T, nu)
    return out


def observed_scores(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """``Phi^-1(F_{t,df}(t))`` accurately in both tails (odd in ``t``)."""
    t = np.asarray(t, dtype=float)
    lower = special.stdtr(df, -np.abs(t))                # P(t_df <= -|t|), no cancellation
    return np.sign(t) * -special.ndtri(np.clip(lower, 1e-300, 0.5))

