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

Issue 37: the step-down of ``adjust="stepdown"`` (:func:`scaled_stepdown`) flips the
totals scaled by a flip-invariant within-unit SE (:func:`within_unit_scale`), with its
per-step critical values for the verdicts; :func:`flip_intervals` / :func:`flip_ci`
invert the sign-flip test per pair (``contrasts(ci="randomization")``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from scipy import special

from .._util import as_rng
from ..engine.lmm.unit_se import pair_unit_data, unit_weights
from ..engine.records import pair_key, pair_lookup
from ..errors import DesignError

__all__ = ["EXACT_MAX", "flips_reach", "UnitContributions", "unit_contributions", "own_contributions",
           "contributions_of", "flips",
           "randomization_maxt", "directed_stepdown", "flip_draws"]

#: enumerate every sign flip up to this many units (2^(T-1) flips).
EXACT_MAX = 14


def flips_reach(n_units: int, level: float, sides: int = 1) -> bool:
    """True when all ``2^(T-1)`` flips of T units are enumerated (T at most
    :data:`EXACT_MAX`) and their smallest p-value, ``sides / 2^(T-1)``, reaches
    ``1 - level`` (T >= 6 at 0.95; ``sides=2``, each side of a directed family at
    half the level: T >= 7).  Below that the flips can never reject and Holm is used."""
    T = int(n_units)
    return 3 <= T <= EXACT_MAX and sides * 0.5 ** (T - 1) <= round(1.0 - float(level), 12)
_CELLS = 1 << 20          # entries of one (flips x pairs) chunk


class UnitContributions:
    """Per-unit contrast totals ``D`` and weights ``W`` (units x pairs) and their CR2 pieces.

    ``labels``: the ``(model_a, model_b)`` of each column when the contributions do not
    come from a linear fit's pairs (e.g. the binomial GLMM's score contributions).
    ``within``: each pair's within-unit SE (:func:`within_unit_scale` before its
    fallback) when computed with ``D`` from the same cells.
    """

    def __init__(self, D: np.ndarray, W: np.ndarray, live: np.ndarray, unit: str,
                 labels: list[tuple[str, str]] | None = None,
                 within: np.ndarray | None = None) -> None:
        self.D, self.W, self.live, self.unit = D, W, live, unit
        self.labels, self.within = labels, within
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


def _memo(fit: Any, key: str, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per fit (results are immutable): kept in the fit's ``__dict__``
    (a frozen dataclass refuses attribute assignment, not its dict); objects without a
    ``__dict__`` compute every time."""
    store = getattr(fit, "__dict__", None)
    if store is None:
        return compute()
    cache = store.setdefault("_mixrank_flip_cache", {})
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def unit_contributions(fit: Any) -> UnitContributions:
    """``D`` and ``W`` of every pair of ``fit`` at its unit (DesignError without 3 units);
    computed once per fit (the contrasts, their step-down, intervals and rank intervals
    share them)."""
    return _memo(fit, "unit_contributions", lambda: _unit_contributions(fit))


def _unit_contributions(fit: Any) -> UnitContributions:
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
    within = np.full(P, np.nan)
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
        within[j] = _within_se(d, compact, w)
        live[j] = True
    return UnitContributions(D, W, live, unit, within=within)


def _within_se(d: np.ndarray, codes: np.ndarray, w: np.ndarray) -> float:
    """``sqrt(sum_t sum_{i in t} w_i^2 (d_i - dbar_t)^2 n_t / (n_t - 1))`` (within_unit_scale)."""
    n_t = np.bincount(codes).astype(float)
    dbar = np.bincount(codes, weights=d) / np.maximum(n_t, 1.0)
    corr = (n_t / np.maximum(n_t - 1.0, 1.0))[codes]
    return float(np.sqrt(np.sum(w * w * (d - dbar[codes]) ** 2 * corr)))


def own_contributions(source: Any) -> bool:
    """True when ``source`` computes its own unit contributions (``unit_contributions()``,
    e.g. the binomial GLMM's score contributions): its flips studentize, for the
    flip-invariant within-unit scale (:func:`within_unit_scale`) needs a linear fit's cells."""
    return callable(getattr(source, "unit_contributions", None))


def contributions_of(source: Any) -> UnitContributions:
    """The unit contributions behind ``source``: ``source`` itself when it is a
    :class:`UnitContributions`, its own ``unit_contributions()`` when it has one (e.g.
    the binomial GLMM's score contributions, :mod:`mixrank.results.glmm.flips`), else a
    linear fit's contrast totals (:func:`unit_contributions`)."""
    if isinstance(source, UnitContributions):
        return source
    return source.unit_contributions() if own_contributions(source) else unit_contributions(source)


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
            exceed += _stepdown_counts(tt[:, order], obs_sorted)
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
                      rng: Any, scaled: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Randomization step-down adjusted p-values of the directed hypotheses "j better than k".

    The randomization counterpart of
    :func:`mixrank.inference.ranks.maxt.stepdown_maxt` (same families, same
    output): the directed statistics are the CR2 t of each pair and its
    negation, their joint null distribution the unit sign flips.  Returns
    ``adj_a, adj_b`` (M x M; marginal families report ``min(1, 2 adjusted)``).
    ``scaled``: the statistic of :func:`scaled_stepdown` (the total over its
    flip-invariant within-unit SE) in place of the flipped CR2 t.
    """
    uc = contributions_of(fit)
    M = len(models)
    pos = {m: i for i, m in enumerate(models)}
    live = np.flatnonzero(uc.live)
    labels = uc.labels if uc.labels is not None else [(p.model_a, p.model_b) for p in fit.pairs]
    a = np.array([pos[labels[i][0]] for i in live], dtype=np.int64)
    b = np.array([pos[labels[i][1]] for i in live], dtype=np.int64)
    sc = within_unit_scale(fit, uc)[live] if scaled else uc.std_error[live]
    t_obs = uc.estimate[live] / sc
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
        tt = (E @ uc.D[:, live]) / sc if scaled else uc.signed_t(E)
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


# ------------------------------------------------ scaled step-down and flip intervals (issue 37)

__all__ += ["within_unit_scale", "scaled_stepdown", "flip_intervals", "flip_ci_problem",
            "check_flip_ci", "flip_p_values", "flip_reference"]

def within_unit_scale(fit: Any, uc: UnitContributions) -> np.ndarray:
    """Per pair, a scale of its estimate that the unit sign flips leave unchanged.

    ``s^2 = sum_t sum_{i in t} w_i^2 (d_i - dbar_t)^2 n_t / (n_t - 1)``: the
    within-unit variance of ``sum_i w_i d_i`` (flipping unit t negates every
    ``d_i`` of t and ``dbar_t``, so ``s`` is invariant).  A pair whose cells agree
    within every unit (``s = 0``) takes the null-restricted CR2 scale ``sqrt(sum_t
    D_t^2 / (1 - W_t))``, also invariant.  NaN for pairs that are not live.
    """
    if uc.within is None:          # e.g. the binomial GLMM's score contributions
        raise DesignError("the within-unit scale needs a linear fit's cells "
                          "(unit_contributions(fit)); these contributions have none")
    s = uc.within
    restricted = np.sqrt(uc.a0)
    return np.where(np.isfinite(s) & (s > 1e-12 * np.maximum(restricted, 1e-300)), s, restricted)


def scaled_stepdown(fit: Any, *, B: int, rng: Any, cols: Any = None,
                    level: float | None = None, in_order: bool = False) -> dict[str, Any]:
    """Westfall-Young step-down over unit sign flips of the scaled totals ``|eps'D| / s``.

    ``s`` is :func:`within_unit_scale` (invariant under the flips), so each pair's own
    test is exactly the sign-flip test of its total and the family-wise error is
    controlled exactly under the unit symmetry (the assumption of
    :func:`randomization_maxt`).  ``cols``: indices into ``fit.pairs`` forming the
    family (default every live pair).  With ``level``, also the step-down's per-step
    critical value ``c_j`` (hypothesis j, in step order, is rejected at its step iff
    its statistic exceeds ``c_j``; the ``level`` quantile of the maximum over the
    hypotheses still in play) and ``alpha_step = 2 Phi(-z_j)``, ``z_j = c_j s_j /
    SE_j`` (``SE_j`` the pair's CR2 SE: the step rejects iff the pair's CR2 ``|t| >
    z_j``): the two-sided per-comparison level its step spends, in place of Holm's
    ``alpha / (m - j + 1)``.  ``in_order``: the steps of ``c_j`` and
    ``alpha_step`` follow the order of ``cols`` (e.g. a verdict table's own order)
    instead of the statistic's; ``p_adjusted`` is always the Westfall-Young one.

    Returns a dict of arrays in ``fit.pairs`` order (NaN outside the family or for
    pairs without 3 units): ``p_adjusted``, ``statistic``, ``scale``, ``step``
    (1-based), ``critical_value``, ``alpha_step``; and ``flips``, ``exact``,
    ``n_units``, ``unit``, ``live``.
    """
    uc = unit_contributions(fit)
    scale = within_unit_scale(fit, uc)
    fam = np.flatnonzero(uc.live) if cols is None else np.asarray(cols, dtype=np.int64)
    fam = fam[uc.live[fam]]
    P = len(fit.pairs)
    D, s = uc.D[:, fam], scale[fam]
    obs = np.abs(uc.estimate[fam]) / s
    order = np.argsort(-obs, kind="stable")
    steps = np.arange(fam.size) if in_order else order
    chunks, total, exact = flips(uc.n_units, B=B, rng=rng)
    size = max(1, _CELLS // max(1, fam.size * uc.n_units))
    counts = np.zeros(fam.size)
    succ_all = []
    for E in chunks(size):
        if fam.size == 0:
            continue
        S = np.abs(E @ D) / s
        counts += _stepdown_counts(S[:, order], obs[order])
        if level is not None:
            succ_all.append(np.maximum.accumulate(S[:, steps][:, ::-1], axis=1)[:, ::-1])
    out: dict[str, Any] = {k: np.full(P, np.nan) for k in (
        "p_adjusted", "statistic", "scale", "step", "critical_value", "alpha_step")}
    idx = fam[order]
    out["p_adjusted"][idx] = np.maximum.accumulate(np.minimum(counts / total, 1.0))
    out["statistic"][fam], out["scale"][fam] = obs, s
    out["step"][fam[steps]] = np.arange(1, fam.size + 1)
    if level is not None and fam.size:
        succ = np.concatenate(succ_all)
        k = int(np.floor((1.0 - level) * total + 1e-9))      # flips allowed at or above
        crit = -np.sort(-succ, axis=0)[min(k, total - 1)]     # the (k+1)-th largest
        out["critical_value"][fam[steps]] = crit
        # the step rejects iff |estimate| / SE_CR2 > z_j = c_j s_j / SE_CR2: a level on the
        # scale of the pair's own CR2 t (Holm's alpha / (m - j + 1) is on that scale too)
        z = crit * s[steps] / np.clip(uc.std_error[fam][steps], 1e-300, None)
        out["alpha_step"][fam[steps]] = 2.0 * special.ndtr(-z)
    out.update(flips=total, exact=exact, n_units=uc.n_units, unit=uc.unit, live=uc.live)
    return out


def flip_intervals(fit: Any, *, level: float) -> dict[str, Any]:
    """Per-pair intervals by inverting the unit sign-flip test (all flips; T <= EXACT_MAX).

    The test of ``delta0`` flips the signs of the units' ``D_t - delta0 W_t``; its
    statistic ``sum_t eps_t (D_t - delta0 W_t)`` crosses the observed ``estimate -
    delta0`` at ``delta0 = sum_{t in F} D_t / sum_{t in F} W_t``, F the units whose
    sign is flipped (the weighted mean of the subset F; Hartigan 1969).  The
    equal-tailed ``level`` interval keeps the ``delta0`` that neither one-sided test
    rejects at ``(1 - level) / 2``: from the ``k``-th smallest to the ``k``-th largest
    subset mean, ``k = floor(2^T (1 - level) / 2 - z) + 1`` with ``z`` the subsets of
    zero weight (the empty one among them).  Infinite when ``k < 1`` (too few units).

    Returns a dict with ``ci_lower``, ``ci_upper`` (``fit.pairs`` order; NaN for pairs
    without 3 units), ``flips`` (``2^T``), ``n_units``, ``unit`` and ``live``.
    """
    uc = unit_contributions(fit)
    T = uc.n_units
    if T > EXACT_MAX:
        raise DesignError(f"flip intervals enumerate all 2^T sign flips; the unit "
                          f"{uc.unit!r} has {T} levels (at most {EXACT_MAX})")
    N = 1 << T
    idx = np.arange(N, dtype=np.int64)[:, None]
    F = ((idx >> np.arange(T, dtype=np.int64)) & 1).astype(float)   # N subsets x T units
    alpha2 = (1.0 - level) / 2.0
    lo, hi = np.full(len(fit.pairs), np.nan), np.full(len(fit.pairs), np.nan)
    live = np.flatnonzero(uc.live)
    step = max(1, _CELLS // N)
    for start in range(0, live.size, step):
        cols = live[start:start + step]
        num, den = F @ uc.D[:, cols], F @ uc.W[:, cols]
        zero = den <= 1e-12
        means = np.where(zero, np.nan, num / np.where(zero, 1.0, den))
        k = np.floor(N * alpha2 - zero.sum(axis=0) + 1e-9).astype(np.int64) + 1
        srt = np.sort(means, axis=0)                    # NaN (zero-weight subsets) last
        n_ok = (~zero).sum(axis=0)
        for c, j in enumerate(cols):
            if k[c] < 1 or k[c] > n_ok[c]:
                lo[j], hi[j] = -np.inf, np.inf
            else:
                lo[j], hi[j] = srt[k[c] - 1, c], srt[n_ok[c] - k[c], c]
    return dict(ci_lower=lo, ci_upper=hi, flips=N, n_units=T, unit=uc.unit, live=uc.live)


def flip_ci_problem(fit: Any, *, adjust: str, by: Any, level: float) -> str:
    """Why ``contrasts(ci="randomization")`` cannot be answered for ``fit`` ("" if it can)."""
    unit = fit.frame.spec.unit
    T = 0 if unit is None else int(fit.frame.term_levels[unit])
    if getattr(fit, "method", None) == "ppi":
        return ("a judge-corrected fit (gold=) has no flip intervals: its contrasts are PPI++ "
                "estimates of the reference labels, with a CR2 standard error and a t reference")
    if getattr(fit, "df_method", None) != "cr2":
        return f"the fit uses df={getattr(fit, 'df_method', None)!r}; it needs df='cr2'"
    if not flips_reach(T, level):
        return (f"{unit!r} has {T} levels: all 2^T flips are enumerated for T <= {EXACT_MAX}, "
                f"and a {level:g} interval needs 2^T (1 - level) / 2 >= 1")
    if adjust == "maxt" or by is not None:
        return ("its intervals are marginal, one pair at a time: not with "
                + ("adjust='maxt' (simultaneous intervals)" if adjust == "maxt" else "by="))
    return ""


def check_flip_ci(fit: Any, *, adjust: str, by: Any, level: float) -> None:
    """DesignError unless ``contrasts(ci="randomization")`` can be answered for ``fit``."""
    why = flip_ci_problem(fit, adjust=adjust, by=by, level=level)
    if why:
        raise DesignError(f"ci='randomization' inverts the unit sign-flip test; {why}. "
                          "Use ci='t'.")


def flip_p_values(fit: Any) -> dict[str, Any]:
    """Per pair, the unit sign-flip test of its total ``S = sum_t D_t`` over all ``2^T`` flips.

    ``p_value = #{|eps'D| >= |S|} / 2^T`` (two-sided), ``p_greater = #{eps'D >= S} / 2^T``
    (H1: model_a better) and ``p_less = #{eps'D <= S} / 2^T``; the identity is among the
    flips, so no p-value is below ``2 / 2^T`` (two-sided).  It is the marginal test of
    :func:`scaled_stepdown` (the scale is flip-invariant, so scaling changes nothing) and
    the test :func:`flip_intervals` inverts: a step-down ``p_adjusted`` is never below it,
    and ``p_value < 1 - level`` exactly when the interval excludes 0.  Arrays in
    ``fit.pairs`` order (NaN where not live); ``flips``: ``2^(T-1)``, as the step-down
    counts them (each flip with its mirror image).
    """
    uc = unit_contributions(fit)
    T = uc.n_units
    if T > EXACT_MAX:
        raise DesignError(f"the flip p-values enumerate all 2^T sign flips; the unit "
                          f"{uc.unit!r} has {T} levels (at most {EXACT_MAX})")
    live = np.flatnonzero(uc.live)
    obs = uc.estimate[live]
    # ties: relative to the largest total the flips can reach (an estimate of exactly 0
    # sums to +-1e-18 in floating point; its flips that also sum to 0 are ties)
    tol = 1e-9 * np.abs(uc.D[:, live]).sum(axis=0)
    two, ge, le = (np.zeros(live.size) for _ in range(3))
    chunks, half, _ = flips(T, B=0, rng=None)       # the 2^(T-1) with eps_1 = +1
    size = max(1, _CELLS // max(1, live.size))
    for E in chunks(size):
        S = E @ uc.D[:, live]
        two += np.sum(np.abs(S) >= np.abs(obs) - tol, axis=0)
        ge += np.sum(S >= obs - tol, axis=0) + np.sum(-S >= obs - tol, axis=0)
        le += np.sum(S <= obs + tol, axis=0) + np.sum(-S <= obs + tol, axis=0)
    out: dict[str, Any] = {k: np.full(len(uc.live), np.nan)
                           for k in ("p_value", "p_greater", "p_less")}
    out["p_value"][live] = np.minimum(two / half, 1.0)
    out["p_greater"][live], out["p_less"][live] = ge / (2 * half), le / (2 * half)
    out.update(flips=half, unit=uc.unit, live=uc.live)
    return out


def flip_reference(fit: Any, est: Any, *, level: float) -> Any:
    """The :class:`~mixrank.inference.pairwise.PairEstimates` ``est`` of ``fit`` with each
    live pair's ``p_value, p_greater`` from :func:`flip_p_values` and ``ci_lower,
    ci_upper`` from :func:`flip_intervals` (before any adjustment: Holm and BH adjust these
    p-values); other rows (degenerate pairs, pairs without 3 units) keep theirs."""
    from dataclasses import replace

    pv, ci = flip_p_values(fit), flip_intervals(fit, level=level)
    lookup, index = pair_lookup(fit.pairs), {id(p): j for j, p in enumerate(fit.pairs)}
    rows = []
    for row in est.rows:
        p = lookup.get(pair_key(row["model_a"], row["model_b"]))
        if p is None or not pv["live"][index[id(p)]] or not np.isfinite(row["estimate"]) \
                or not np.isfinite(row["statistic"]):
            rows.append(row)
            continue
        j = index[id(p)]
        same = p.model_a == row["model_a"]          # the row's orientation
        lo, hi = ci["ci_lower"][j], ci["ci_upper"][j]
        rows.append(dict(row, p_value=float(pv["p_value"][j]),
                         p_greater=float(pv["p_greater" if same else "p_less"][j]),
                         ci_lower=lo if same else -hi, ci_upper=hi if same else -lo))
    # counted as the step-down counts them: 2^(T-1) flips, each with its mirror image
    flips_of = f"all {pv['flips']} sign flips of {pv['unit']!r} and their mirror images"
    meta = dict(p_value=f"unit sign-flip test of the pair's total ({flips_of})",
                ci_method="randomization", ci=f"marginal: inverted unit sign-flip test "
                f"({flips_of})")

    def finish(tab: Any) -> Any:
        tab.attrs["mixrank"].update(meta)
        return tab if est.finish is None else est.finish(tab)

    return replace(est, rows=rows, finish=finish)
