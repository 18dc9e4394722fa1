"""Stage inference: unit-level randomization (sign-flip) max-t, step-down and contrast draws.

Inputs: a :class:`~mixrank.results.FitResult` whose formula names a unit (its
first random term) with at least 3 levels, or any source of unit contributions
(a :class:`UnitContributions`, or an object with a ``unit_contributions()``
method such as the binomial GLMM's :class:`~mixrank.results.glmm.flips.GlmmFlips`;
:func:`contributions_of`).
Outputs: the per-unit contrast totals (:func:`unit_contributions`), adjusted
p-values and the simultaneous critical value of the CR2-studentized contrasts
under all (or B seeded) sign flips of the units (:func:`randomization_maxt`),
and Rademacher draws of the contrasts for rank probabilities
(:func:`flip_draws`).

Method (docs/methods.md, "Validity with few units"): each pair's estimate is
``sum_t D_t`` with ``D_t`` unit t's weighted contrast total and ``W_t`` its
weight.  Flipping the sign of every unit's vector of contrast totals (the same
``eps_t`` for every pair) leaves the joint null distribution unchanged when
the unit effects are exchangeable and symmetric about 0, so the max over pairs
of ``|t^eps|`` (the CR2 t of the flipped totals) is an exact reference for
the family (Westfall & Young 1993; Canay, Romano & Shaikh 2017).  Flips are
batched as matrix products ``E @ D`` in chunks of constant memory; no array
of pairs x flips is ever held.  With at most :data:`EXACT_MAX` units all
``2^(T-1)`` flips (up to the global sign, which leaves ``|t|`` unchanged) are
enumerated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._util import as_rng
from ..engine.lmm.unit_se import pair_unit_data, unit_weights
from ..errors import DesignError

__all__ = ["EXACT_MAX", "UnitContributions", "unit_contributions", "contributions_of", "flips",
           "randomization_maxt", "directed_stepdown", "flip_draws"]

#: enumerate every sign flip up to this many units (2^(T-1) flips).
EXACT_MAX = 14
_CELLS = 1 << 20          # entries of one (flips x pairs) chunk


class UnitContributions:
    """Per-unit contrast totals ``D`` and weights ``W`` (units x pairs) and their CR2 pieces.

    ``labels``: the ``(model_a, model_b)`` of each column when the contributions do not
    come from a linear fit's pairs (e.g. the binomial GLMM's score contributions).
    """

    def __init__(self, D: np.ndarray, W: np.ndarray, live: np.ndarray, unit: str,
                 labels: list[tuple[str, str]] | None = None) -> None:
        self.D, self.W, self.live, self.unit = D, W, live, unit
        self.labels = labels
        inv = 1.0 / np.clip(1.0 - W, 1e-12, None)
        self.inv = inv
        self.a0 = np.sum(D * D * inv, axis=0)           # sum D_t^2 / (1 - W_t)
        self.DW = D * W * inv                           # flipped: sum eps_t D_t W_t / (1 - W_t)
        self.c2 = np.sum(W * W * inv, axis=0)           # sum W_t^2 / (1 - W_t)
        self.estimate = D.sum(axis=0)
        self.std_error = np.sqrt(self.variance(self.estimate, np.sum(self.DW, axis=0)))

    @property
    def n_units(self) -> int:
        return int(self.D.shape[0])

    def variance(self, est: np.ndarray, a: np.ndarray, cols: Any = slice(None)) -> np.ndarray:
        """CR2 variance of the flipped totals from ``est = eps'D`` and ``a = eps'DW``."""
        return np.clip(self.a0[cols] - 2.0 * est * a + est * est * self.c2[cols], 1e-300, None)

    def t(self, E: np.ndarray) -> np.ndarray:
        """``|t|`` of the live pairs under the sign flips ``E`` (flips x units)."""
        return np.abs(self.signed_t(E))

    def signed_t(self, E: np.ndarray) -> np.ndarray:
        """CR2 ``t`` of the live pairs (``model_a - model_b``) under the sign flips ``E``.

        The flipped CR2 variance is summed from the flipped residuals directly
        (flips x units x pairs; an expansion in sums of squares cancels badly when
        the residuals are small against the totals).
        """
        D, W = self.D[:, self.live], self.W[:, self.live]
        est = E @ D
        r = E[:, :, None] * D[None] - W[None] * est[:, None, :]
        var = np.einsum("ctp,tp->cp", r * r, self.inv[:, self.live])
        return est / np.sqrt(np.clip(var, 1e-300, None))


def unit_contributions(fit: Any) -> UnitContributions:
    """``D`` and ``W`` of every pair of ``fit`` at its unit (DesignError without 3 units)."""
    frame = fit.frame
    unit = frame.spec.unit
    T = 0 if unit is None else int(frame.term_levels[unit])
    if T < 3:
        raise DesignError("the randomization max-t flips the levels of the unit (the first "
                          f"random term); the formula {frame.spec.formula!r} "
                          + ("has none" if unit is None else f"gives {unit!r} {T} level(s)")
                          + ", at least 3 are needed. Use fit(df='satterthwaite') for lme4's "
                          "Gaussian max-t, or adjust='holm'.")
    P = len(fit.pairs)
    D, W = np.zeros((T, P)), np.zeros((T, P))
    live = np.zeros(P, dtype=bool)
    full = frame.term_codes[unit]
    for j, p in enumerate(fit.pairs):
        if p.degenerate:
            continue
        d, compact = pair_unit_data(frame, p, unit)
        levels = np.unique(full[frame.common_mask(frame.model_index(p.model_a),
                                                  frame.model_index(p.model_b))])
        if levels.size < 3:
            continue
        # design-only weights (invariant under the flips, so the test stays exact): the
        # units estimand's 1/(T n_t), else the cells' 1/n -- never the GLS weights, which
        # depend on variance components that the flips would change
        w = unit_weights("units" if fit.estimand == "units" else "cells", compact, p, unit)
        D[levels, j] = np.bincount(compact, weights=w * d, minlength=levels.size)
        W[levels, j] = np.bincount(compact, weights=w, minlength=levels.size)
        live[j] = True
    return UnitContributions(D, W, live, unit)


def contributions_of(source: Any) -> UnitContributions:
    """The unit contributions behind ``source``: ``source`` itself when it is a
    :class:`UnitContributions`, its own ``unit_contributions()`` when it has one (e.g.
    the binomial GLMM's score contributions, :mod:`mixrank.results.glmm.flips`), else a
    linear fit's contrast totals (:func:`unit_contributions`)."""
    if isinstance(source, UnitContributions):
        return source
    own = getattr(source, "unit_contributions", None)
    return own() if callable(own) else unit_contributions(source)


def flips(T: int, *, B: int, rng: Any
          ) -> tuple[Callable[[int], Iterator[np.ndarray]], int, bool]:
    """Chunks of sign vectors (rows of +-1 over the T units), their number and exactness.

    ``T <= EXACT_MAX``: all ``2^(T-1)`` vectors with ``eps_1 = +1`` (the identity
    first); else the identity and ``B`` seeded Rademacher vectors.
    """
    exact = T <= EXACT_MAX
    total = 1 << (T - 1) if exact else B + 1
    gen = as_rng(rng)             # validated even when every flip is enumerated

    def chunks(size: int) -> Iterator[np.ndarray]:
        for start in range(0, total, size):
            stop = min(total, start + size)
            if exact:
                idx = np.arange(start, stop, dtype=np.int64)[:, None]
                bits = (idx >> np.arange(T - 1, dtype=np.int64)) & 1
                E = np.concatenate([np.ones((stop - start, 1)), 1.0 - 2.0 * bits], axis=1)
            else:
                E = 1.0 - 2.0 * gen.integers(0, 2, size=(stop - start, T))
                if start == 0:
                    E[0] = 1.0
            yield E

    return chunks, total, exact


def randomization_maxt(fit: Any, *, level: float, B: int, rng: Any,
                       stepdown: bool = False) -> dict[str, Any]:
    """Adjusted p-values (single-step or Westfall-Young step-down) and the critical |t|.

    Returns a dict with ``p_adjusted`` (pairs order; NaN for pairs without 3
    units), ``critical_value`` (the ``level`` quantile of ``max |t^eps|``),
    ``std_error``, ``estimate`` (the CR2 pieces), ``flips``, ``exact``.
    """
    uc = contributions_of(fit)
    live = np.flatnonzero(uc.live)
    t_obs = uc.estimate[live] / uc.std_error[live]
    order = np.argsort(-np.abs(t_obs), kind="stable")
    obs_sorted = np.abs(t_obs)[order]
    chunks, total, exact = flips(uc.n_units, B=B, rng=rng)
    size = max(1, _CELLS // max(1, live.size * uc.n_units))
    exceed = np.zeros(live.size)
    maxima = []
    for E in chunks(size):
        tt = uc.t(E)
        if live.size == 0:
            continue
        mx = tt.max(axis=1)
        maxima.append(mx)
        if stepdown:
            succ = np.maximum.accumulate(tt[:, order][:, ::-1], axis=1)[:, ::-1]
            exceed += np.sum(succ >= obs_sorted * (1 - 1e-9), axis=0)
        else:
            exceed += np.sum(mx[:, None] >= obs_sorted[None, :] * (1 - 1e-9), axis=0)
    mx_all = np.concatenate(maxima) if maxima else np.zeros(1)
    p_sorted = exceed / total             # the identity is among the flips: p >= 1 / total
    p_sorted = np.maximum.accumulate(np.minimum(p_sorted, 1.0))
    p = np.full(uc.D.shape[1], np.nan)
    p[live[order]] = p_sorted
    return dict(p_adjusted=p, critical_value=float(np.quantile(mx_all, level, method="higher")),
                std_error=uc.std_error, estimate=uc.estimate, live=uc.live, flips=total,
                exact=exact, n_units=uc.n_units, unit=uc.unit)


def flip_draws(fit: Any, *, B: int, rng: Any) -> tuple[Iterator[np.ndarray], np.ndarray, int]:
    """Rademacher (wild cluster) draws of all contrasts: ``est + sum_t eps_t r_t``.

    ``r_t = (D_t - W_t est) / sqrt(1 - W_t)`` (CR2-scaled unit residuals), the same
    ``eps`` for every pair; all ``2^T`` flips (both signs) when T is at most
    :data:`EXACT_MAX`, else B seeded ones.  Returns the chunks (flips x pairs,
    non-live pairs at their estimate), the live mask and the number of draws.
    """
    uc = unit_contributions(fit)
    inv = 1.0 / np.sqrt(np.clip(1.0 - uc.W, 1e-12, None))
    resid = (uc.D - uc.W * uc.estimate[None, :]) * inv
    resid[:, ~uc.live] = 0.0
    T = uc.n_units
    exact = T <= EXACT_MAX
    total = (1 << T) if exact else B
    gen = as_rng(rng)             # validated even when every flip is enumerated
    est = np.array([p.estimate for p in fit.pairs], dtype=float)
    size = max(1, _CELLS // max(1, len(est)))

    def chunks() -> Iterator[np.ndarray]:
        for start in range(0, total, size):
            stop = min(total, start + size)
            if exact:
                idx = np.arange(start, stop, dtype=np.int64)[:, None]
                E = 1.0 - 2.0 * ((idx >> np.arange(T, dtype=np.int64)) & 1)
            else:
                E = 1.0 - 2.0 * gen.integers(0, 2, size=(stop - start, T))
            yield est[None, :] + E @ resid

    return chunks(), uc.live, total


def _stepdown_counts(stats: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """Per hypothesis (sorted by ``obs`` descending): flips whose max over the rest reaches it."""
    succ = np.maximum.accumulate(stats[:, ::-1], axis=1)[:, ::-1]
    return np.sum(succ >= obs[None, :] - 1e-9 * np.abs(obs[None, :]), axis=0)


def directed_stepdown(fit: Any, models: list[str], *, coverage: str, B: int,
                      rng: Any) -> tuple[np.ndarray, np.ndarray]:
    """Randomization step-down adjusted p-values of the directed hypotheses "j better than k".

    The randomization counterpart of
    :func:`mixrank.inference.ranks.maxt.stepdown_maxt` (same families, same
    output): the directed statistics are the CR2 t of each pair and its
    negation, their joint null distribution the unit sign flips.  Returns
    ``adj_a, adj_b`` (M x M; marginal families report ``min(1, 2 adjusted)``).
    """
    uc = contributions_of(fit)
    M = len(models)
    pos = {m: i for i, m in enumerate(models)}
    live = np.flatnonzero(uc.live)
    labels = uc.labels if uc.labels is not None else [(p.model_a, p.model_b) for p in fit.pairs]
    a = np.array([pos[labels[i][0]] for i in live], dtype=np.int64)
    b = np.array([pos[labels[i][1]] for i in live], dtype=np.int64)
    t_obs = uc.estimate[live] / uc.std_error[live]
    obs = np.full((M, M), -np.inf)
    obs[a, b], obs[b, a] = t_obs, -t_obs
    if coverage == "simultaneous":
        fams = [np.flatnonzero(~np.eye(M, dtype=bool).ravel())]
    else:
        fams = [j * M + np.array([k for k in range(M) if k != j]) for j in range(M)]
        fams += [np.array([k * M + j for k in range(M) if k != j]) for j in range(M)]
    orders = [f[np.argsort(-obs.ravel()[f], kind="stable")] for f in fams]
    counts = [np.zeros(len(f)) for f in fams]
    chunks, total, _ = flips(uc.n_units, B=B, rng=rng)
    size = max(1, _CELLS // max(1, M * M + live.size * uc.n_units))
    for E in chunks(size):
        tt = uc.signed_t(E)
        S3 = np.full((len(E), M, M), -np.inf)
        S3[:, a, b], S3[:, b, a] = tt, -tt
        S = S3.reshape(len(E), M * M)
        for o, c in zip(orders, counts):
            c += _stepdown_counts(S[:, o], obs.ravel()[o])
    adj_a = np.full((M, M), np.nan)
    adj_b = np.full((M, M), np.nan)
    flat_obs = obs.ravel()
    for i, (o, c) in enumerate(zip(orders, counts)):
        p = np.maximum.accumulate(np.minimum(c / total, 1.0))
        p = np.where(np.isfinite(flat_obs[o]), p, 1.0)
        if coverage == "simultaneous":
            adj_a.ravel()[o] = p
            adj_b.ravel()[o] = p
        elif i < M:
            adj_a.ravel()[o] = np.minimum(1.0, 2.0 * p)
        else:
            adj_b.ravel()[o] = np.minimum(1.0, 2.0 * p)
    return adj_a, adj_b
