"""Stage design: a pairing key the formula leaves out while models vary across its levels.

Inputs: a :class:`~mixrank.frame.Frame` (its pairing keys and cell scores) and the
fitted pairs (:class:`~mixrank.engine.records.PairFit`, for the variance the fit
reports).  Outputs: one :class:`~mixrank.errors.OmittedKeyWarning` naming the key,
the formula to write and the estimated inflation of the standard errors
(:func:`warn_omitted_keys`); the per-key test as a record (:func:`omitted_key_tests`).
Contents: :data:`ALPHA`, :data:`MIN_INFLATION`, :func:`omitted_key_tests`,
:func:`warn_omitted_keys`.

Method (docs/methods.md §9, "A forgotten pairing key"): a key (prompt, template,
seed, judge ...) that pairs cells, is shared across models and crossed with the
unit (a level meets several units) but has no random term gives every pair a
variance component the fit cannot see: the model x key effects are common to all
cells of a key level, so with K levels they add ``2 sigma^2_mk / K`` to the
variance of a contrast.  On the cells scored by every model the check removes
the cell means (what all models share) and each model's unit means (the
model x unit term the formula has), then tests the model x key interaction with
the two-way F statistic ``F = (SS_mk / df1) / (SS_res / df2)``, ``df1 = (M - 1)(K -
1)``, ``df2 = (M - 1)(n - T - K + 1)``.  The moment estimate
``sigma^2_mk = (MS_mk - MS_res) / n_k`` (``n_k`` cells per key level) gives the
SE inflation ``sqrt(1 + (2 sigma^2_mk / K) / v)`` with ``v`` the median variance
the fit reports for a pair.  The warning fires when ``F`` rejects at
:data:`ALPHA` and the inflation is at least :data:`MIN_INFLATION` (a 10% larger
SE turns p = 0.05 into about 0.08 at 10 df): material for every verdict, and
never on data without the variance except at the F test's level (false alarms
measured at <= 1% in tests/validity).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import OmittedKeyWarning
from ..frame import Frame

__all__ = ["ALPHA", "MIN_INFLATION", "omitted_key_tests", "warn_omitted_keys"]

#: level of the model x key F test.
ALPHA = 0.01
#: the smallest estimated SE inflation worth a warning.
MIN_INFLATION = 1.10


def _candidates(frame: Frame) -> list[str]:
    """Pairing keys without a random term (cheap: no cell table is read without one)."""
    named = set(frame.spec.grouping_columns)
    return [k for k in frame.pair_by if k not in named]


def omitted_key_tests(frame: Frame, pairs: Sequence[Any]) -> list[dict[str, Any]]:
    """The model x key test of every pairing key the formula has no term for.

    Returns one record per key crossed with the unit: ``key``, ``levels``,
    ``statistic`` (F), ``df1``, ``df2``, ``p_value``, ``sigma2`` (the moment
    estimate of the model x key variance), ``inflation`` (estimated SE ratio)
    and ``formula`` (the formula with the key's term added).  Keys nested in
    the unit, with one level, or identifying cells are skipped.
    """
    from ..frame.columns import CompressedFrame

    keys = _candidates(frame)
    M = frame.n_models
    if not keys or M < 2 or (isinstance(frame, CompressedFrame) and frame.columns is not None):
        return []      # a compressed (out-of-core) frame: no dense cells x models matrix is built
    full = frame.observed.all(axis=1)
    n = int(full.sum())
    if n < 4:
        return []
    cells = frame.cells
    unit = frame.spec.unit
    u = (np.asarray(frame.term_codes[unit])[full] if unit is not None
         else np.arange(n, dtype=np.int64))
    u = pd.factorize(u)[0]
    T = int(u.max()) + 1
    Y = frame.scores[full]
    E = Y - Y.mean(axis=1, keepdims=True)                     # cell effects removed
    out = []
    for key in keys:
        k = pd.factorize(np.asarray(cells[key])[full])[0]
        K = int(k.max()) + 1
        if K < 2 or K >= n:
            continue
        crossed = np.bincount(k * T + u, minlength=K * T).reshape(K, T) > 0
        if not (crossed.sum(axis=1) > 1).any():   # every level inside one unit: nested
            continue
        R = _sweep(E, u, T)                                  # model x unit removed
        R = R - _sweep_means(R, k, K)                          # model x key (additive fit)
        R = _sweep(R, u, T)
        ss_res = float(np.sum(R * R))
        ss_mk = float(np.sum(_sweep(E, u, T) ** 2)) - ss_res
        df1 = (M - 1) * (K - 1)
        df2 = (M - 1) * (n - T - K + 1)
        if df2 < 1 or ss_res <= 0:
            continue
        F = (ss_mk / df1) / (ss_res / df2)
        p = float(stats.f.sf(F, df1, df2))
        nk = n / K
        sigma2 = max(0.0, (ss_mk / df1 - ss_res / df2) / nk) * M / (M - 1)
        v = np.array([getattr(pr, "variance", np.nan) for pr in pairs], dtype=float)
        v = v[np.isfinite(v) & (v > 0)]
        infl = float(np.sqrt(1.0 + 2.0 * sigma2 / K / np.median(v))) if v.size else float("nan")
        out.append(dict(key=key, levels=K, statistic=float(F), df1=df1, df2=df2, p_value=p,
                        sigma2=sigma2, inflation=infl,
                        formula=f"{frame.spec.formula} + (1|{key})"))
    return out


def _sweep_means(X: np.ndarray, g: np.ndarray, G: int) -> np.ndarray:
    """Each column's group means of ``X`` (rows grouped by ``g``), spread back over the rows."""
    cnt = np.bincount(g, minlength=G).astype(float)
    sums = np.stack([np.bincount(g, weights=X[:, j], minlength=G) for j in range(X.shape[1])],
                    axis=1)
    return (sums / np.maximum(cnt, 1.0)[:, None])[g]


def _sweep(X: np.ndarray, g: np.ndarray, G: int) -> np.ndarray:
    return X - _sweep_means(X, g, G)


def warn_omitted_keys(frame: Frame, pairs: Sequence[Any]) -> list[dict[str, Any]]:
    """Warn (:class:`~mixrank.errors.OmittedKeyWarning`) for every key that fails the check.

    Returns the failing records of :func:`omitted_key_tests`.
    """
    bad = [r for r in omitted_key_tests(frame, pairs)
           if r["p_value"] < ALPHA and r["inflation"] >= MIN_INFLATION]
    for r in bad:
        warnings.warn(
            f"the pairing key {r['key']!r} ({r['levels']} levels, shared by the models and "
            f"crossed with the unit) has no random term, but the models' scores vary across "
            f"its levels (model x {r['key']} F = {r['statistic']:.3g} on {r['df1']} and "
            f"{r['df2']} df, p = {r['p_value']:.2g}): the standard errors are about "
            f"{r['inflation']:.2f}x too small and p-values too small. Write the formula "
            f"{r['formula']!r} (docs/methods.md §9, 'A forgotten pairing key')",
            OmittedKeyWarning, stacklevel=3)
    return bad
