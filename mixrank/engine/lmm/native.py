"""Stage engine: fit every requested pair of models from a shared Frame.

Inputs: :class:`~mixrank.frame.Frame`, the pairs, the method and estimand.
Outputs: one :class:`PairFit` per pair.

Each pair works from the frame's cells x models score matrix: the common
cells are a boolean mask; pairs scored on every cell share one structure
(built once).  When the frame's cells form a balanced design, pairs scored on
every cell use the closed form of :mod:`mixrank.engine.lmm.balanced` (per-level
sums only) whenever all components are interior, and the general profiled
REML otherwise.  Orientation: ``d = y_a - y_b``, so a positive estimate favours
``model_a``.
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..._util import did_you_mean, exact_group_sums, exact_mean
from ...errors import DesignError, OptionError
from ...frame import Frame
from ...frame.columns import CompressedFrame, ModelColumns, PairCells
from ...frame.encode import combine_codes
from ..control import DEFAULT_CONTROL, Control
from ..records import PairFit, RemlFit
from ..structure import PairSums, Structure, build_structure, pair_sums
from .balanced import Lattice, build_lattice, fit_balanced
from .driver import (
    StructureCache,
    cells_key,
    check_common,
    flagged_row,
    run_pair_tasks,
    warn_dropped_terms,
)
from .estimand import ESTIMANDS, estimand_estimate, estimand_weights
from .reml import fit_reml
from .satterthwaite import LinearVariance

__all__ = ["PairFit", "fit_pairs", "degenerate_pair", "degenerate_row", "ESTIMANDS", "METHODS",
           "term_levels_used", "score_scale", "snap_zero", "SNAP_ULPS"]

METHODS = ("reml", "aggregate")


#: Differences whose sum of squared deviations is below this share of their sum of
#: squares count as identical (relative, so that the data's scale does not matter).
ZERO_VARIANCE_RTOL = 1e-12

#: An estimate within this many ulps of the scores' scale (``|x| <= SNAP_ULPS * eps *
#: max|score|``) is rounding noise around an exact 0 -- e.g. ``m2 = m1 + 0.3`` whose noise
#: averages to 0 -- and is reported as 0 (docs/hardening.md §9).
SNAP_ULPS = 8

#: Per frame: (largest absolute cell score, every cell score a whole number), one pass.
_SCORES: weakref.WeakKeyDictionary[Frame, tuple[float, bool]] = weakref.WeakKeyDictionary()


def _score_facts(frame: Frame) -> tuple[float, bool]:
    """:func:`score_scale` and whether every cell score is a whole number, read in one pass
    over the frame's scores and kept per frame."""
    facts = _SCORES.get(frame)
    if facts is None:
        cols = _columns(frame)
        tops: list[float] = []
        whole = True
        for v in (cols.values if isinstance(cols, ModelColumns) else (cols.scores,)):
            v = np.asarray(v, dtype=float)                    # one column at a time
            if v.size:
                top = float(np.fmax.reduce(np.abs(v), axis=None))   # NaN only if all are
                if top == top:
                    tops.append(top)
            whole = whole and bool(np.all(np.isnan(v) | (v == np.rint(v))))
        s = max(tops, default=0.0)
        s = s if math.isfinite(s) else 0.0
        facts = _SCORES[frame] = (s, whole)
    return facts


def whole_scores(frame: Frame) -> bool:
    """Whether every cell score is a whole number small enough that any pair's differences
    sum exactly in binary64 (0/1 scores; computed once per frame), so the exact means of
    :mod:`mixrank._util` need not check each pair's differences again."""
    s, whole = _score_facts(frame)
    return whole and 2.0 * s * max(frame.n_cells, 1) < 2.0 ** 52


def score_scale(frame: Frame) -> float:
    """The largest absolute cell score of ``frame`` (computed once per frame)."""
    return _score_facts(frame)[0]


def snap_zero(x: float, scale: float) -> float:
    """``x``, or exactly 0.0 when it lies within :data:`SNAP_ULPS` ulps of ``scale`` of 0."""
    return 0.0 if abs(x) <= SNAP_ULPS * np.finfo(float).eps * scale else x


def _snapped(frame: Frame, p: PairFit) -> PairFit:
    """The fit with its estimates snapped to 0 when they are rounding noise (see SNAP_ULPS)."""
    scale = score_scale(frame)
    est, gls = snap_zero(p.estimate, scale), p.gls_estimate
    if math.isfinite(gls):
        gls = snap_zero(gls, scale)
    if est == p.estimate and (gls == p.gls_estimate or not math.isfinite(gls)):
        return p
    return dataclasses.replace(p, estimate=est, gls_estimate=gls)


def degenerate_pair(frame: Frame, j: int, k: int, method: str = "reml") -> PairFit | None:
    """A pair no model can estimate a variance for, as a flagged row; ``None`` otherwise.

    Degenerate: the paired differences over the common cells are identical
    (their spread is below ``ZERO_VARIANCE_RTOL`` relative to their size, so
    any scale of scores is judged alike), or the common cells fall in fewer
    than two levels of the unit (the first random term; for
    ``method="aggregate"`` also fewer than two distinct unit means).  The row
    carries the mean difference as ``estimate``, variance 0, df NaN, NaN
    components and the reason in ``degenerate`` and ``message``; contrasts
    report it with p-value 1 in both directions (no evidence).  See
    docs/hardening.md §1 (degenerate pairs) and §2 (the relative threshold).
    """
    pc = _columns(frame).pair(j, k)
    if pc.n < 2:
        return None
    return degenerate_row(frame, j, k, pc.d, pc.idx, method)


def degenerate_row(frame: Frame, j: int, k: int, d: np.ndarray, idx: np.ndarray | None,
                   method: str = "reml", *, ss: float | None = None,
                   unit_counts: np.ndarray | None = None) -> PairFit | None:
    """:func:`degenerate_pair` given the pair's differences ``d`` over its common cells
    ``idx`` (None: every cell), so a fitter that has ``d`` computes it once; likewise
    ``ss`` (``sum (d - mean)^2``) and the unit's level counts over the cells."""
    n = int(d.size)
    mean = snap_zero(exact_mean(d, whole_scores(frame)), score_scale(frame))   # hardening.md §9
    ss = float(np.sum((d - mean) ** 2)) if ss is None else ss
    reason, estimate = "", mean
    if ss <= 2 * ZERO_VARIANCE_RTOL * float(d @ d):
        reason = (f"all {n} paired differences are identical ({mean:.6g}); no variance can be "
                  "estimated")
    elif frame.spec.random:
        unit = frame.spec.random[0].name
        codes = frame.term_codes[unit] if idx is None else frame.term_codes[unit][idx]
        if unit_counts is None:
            unit_counts = np.bincount(codes, minlength=frame.term_levels[unit])
        T = int(np.count_nonzero(unit_counts))                     # no sort
        if T < 2:
            reason = (f"the {n} common cells fall in {T} level of the unit {unit!r}; at least 2 "
                      "are needed to generalise over it")
        elif method == "aggregate":
            cnt = np.bincount(codes)
            um = exact_group_sums(codes, d)[cnt > 0] / cnt[cnt > 0]
            # relative to the cells' mean square: unit means may cancel to ~0
            if float(np.var(um)) <= 2 * ZERO_VARIANCE_RTOL * float(d @ d) / n:
                reason = f"all {T} {unit!r}-level mean differences are identical"
                estimate = snap_zero(exact_mean(um), score_scale(frame))
    if not reason:
        return None
    names = [f"{frame.spec.random[0].name} means"] if method == "aggregate" and frame.spec.random \
        else [*frame.spec.term_names, "residual"]
    return flagged_row(frame, j, k, n, estimate, math.sqrt(ss / (n - 1)), names, reason)


@dataclass(frozen=True, eq=False)
class _Columns:
    """The frame's scores and observed flags model by model (contiguous rows).

    A pair reads two models' columns of the cells x models matrices; a
    strided column read touches the whole matrix, a row of the transpose
    only the model's own entries.
    """

    scores: np.ndarray              # (models, cells)
    observed: np.ndarray            # (models, cells)

    def pair(self, j: int, k: int) -> PairCells:
        """Common cells and ``d = y_j - y_k`` (as :meth:`ModelColumns.pair`)."""
        oa, ob = self.observed[j], self.observed[k]
        mask = oa & ob
        n = int(np.count_nonzero(mask))
        only_a, only_b = int(np.count_nonzero(oa)) - n, int(np.count_nonzero(ob)) - n
        idx = None if n == mask.size else np.flatnonzero(mask)  # one scan for d and codes
        sa, sb = self.scores[j], self.scores[k]
        d = sa - sb if idx is None else (sa - sb)[idx]   # one gather
        return PairCells(mask, idx, d, n, only_a, only_b)


_COLUMNS: weakref.WeakKeyDictionary[Frame, _Columns] = weakref.WeakKeyDictionary()


def _columns(frame: Frame) -> _Columns | ModelColumns:
    """The frame's scores model by model: its compressed columns, or a model-major
    copy of its dense matrices built once per frame (kept while it lives)."""
    if isinstance(frame, CompressedFrame) and frame.columns is not None:
        return frame.columns
    cols = _COLUMNS.get(frame)
    if cols is None:
        cols = _Columns(np.ascontiguousarray(frame.scores.T), np.ascontiguousarray(frame.observed.T))
        _COLUMNS[frame] = cols
    return cols


_NESTING: weakref.WeakKeyDictionary[Frame, dict[tuple[str, str], np.ndarray]] = \
    weakref.WeakKeyDictionary()


def _nesting(frame: Frame) -> dict[tuple[str, str], np.ndarray]:
    """``{(child, parent): parent level of each child level}`` for the random terms nested in
    another over the frame's cells (hence over any pair's), found once per frame."""
    out = _NESTING.get(frame)
    if out is None:
        out = {}
        lv, codes = frame.term_levels, frame.term_codes
        for t in codes:
            for u in codes:
                if t != u and lv[t] > lv[u]:
                    par = np.zeros(lv[t], dtype=np.int64)
                    par[codes[t]] = codes[u]
                    if np.array_equal(par[codes[t]], codes[u]):
                        out[(t, u)] = par
        _NESTING[frame] = out
    return out


def term_levels_used(codes: dict[str, np.ndarray], n: int, a: str, b: str,
                     counts: dict[str, np.ndarray] | None = None) -> dict[str, int]:
    """Terms with at least two levels among a pair's ``n`` common cells, with their level counts.

    Shared with :mod:`mixrank.engine.lmm.fixed`.  ``counts``: each term's level
    counts over the cells, when the caller has them.

    Raises
    ------
    DesignError
        A term with one cell per level (confounded with the residual).
    """
    levels: dict[str, int] = {}
    for t, c in codes.items():
        k = int(np.count_nonzero(np.bincount(c) if counts is None else counts[t]))
        if k < 2:
            continue
        if k == n:
            raise DesignError(
                f"random term (1|{t}) has one cell per level among the {n} common cells of "
                f"{a!r} vs {b!r}, so it is confounded with the residual; drop the term or add "
                "the key that distinguishes the cells within its levels")
        levels[t] = k
    return levels


def _usable_terms(codes: dict[str, np.ndarray], n: int, a: str, b: str,
                  counts: dict[str, np.ndarray] | None = None) -> list[str]:
    """Terms estimable on a pair's cells; errors for confounded terms."""
    levels = term_levels_used(codes, n, a, b, counts)
    used = list(levels)
    for i, t in enumerate(used):
        for u in used[i + 1:]:
            if levels[t] == levels[u]:
                _, k, _ = combine_codes(codes[t], int(codes[t].max()) + 1, codes[u],
                                        int(codes[u].max()) + 1)
                if k == levels[t]:
                    raise DesignError(
                        f"random terms (1|{t}) and (1|{u}) group the {n} common cells of "
                        f"{a!r} vs {b!r} identically (perfectly confounded), so their variances "
                        "cannot be separated; keep only one of them")
    return used


def _gather(frame: Frame, idx: np.ndarray | None, names: list[str]
            ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Each term's codes over a pair's common cells ``idx`` (None: all) and its level counts
    (a term another one is nested in: summed from that term's counts, docs/speed.md §4)."""
    codes = {t: frame.term_codes[t] if idx is None else frame.term_codes[t][idx] for t in names}
    nest = _nesting(frame)
    counts: dict[str, np.ndarray] = {}
    for t in sorted(names, key=lambda t: -frame.term_levels[t]):      # children first
        child = next((c for c in counts if (c, t) in nest), None)
        counts[t] = np.bincount(codes[t], minlength=frame.term_levels[t]) if child is None else \
            np.bincount(nest[(child, t)], weights=counts[child], minlength=frame.term_levels[t])
    return codes, counts


def _fit_one(frame: Frame, j: int, k: int, method: str, estimand: str,
             cache: StructureCache[tuple[Structure, list[str]]], lattice: Lattice | None = None,
             control: Control = DEFAULT_CONTROL, cols: _Columns | ModelColumns | None = None,
             flag_degenerate: bool = False, start: Mapping[str, float] | None = None
             ) -> PairFit:
    spec = frame.spec
    cols = _columns(frame) if cols is None else cols
    mask, idx, d, n, only_a, only_b = cols.pair(j, k)
    a, b = frame.models[j], frame.models[k]
    check_common(n, a, b)
    full = n == frame.n_cells
    names = list(spec.term_names)
    key = cells_key(mask, full)
    # a new common-cell pattern: its codes and level counts serve the checks and the structure
    pre = _gather(frame, idx, names) if method == "reml" and idx is not None \
        and key not in cache else None
    dc = d - float(d.mean())
    ss = float(dc @ dc)
    unit_counts = pre[1].get(spec.random[0].name) if pre is not None and spec.random else None
    if flag_degenerate and (row := degenerate_row(frame, j, k, d, idx, method, ss=ss,
                                                  unit_counts=unit_counts)) is not None:
        return row
    sigma_d = math.sqrt(ss / (n - 1))
    if method == "aggregate":
        return _aggregate(frame, mask, full, d, a, b, n, only_a, only_b, sigma_d)

    if full and lattice is not None:
        # balanced: every estimand is the plain mean and the strata give the closed form
        r_bal = fit_balanced(frame, lattice, j, k, d, whole=whole_scores(frame))
        if r_bal is not None:
            comps = dict(zip(r_bal.names, (float(v) for v in r_bal.variances)))
            return PairFit(model_a=a, model_b=b, n=n, only_a=only_a, only_b=only_b,
                           estimate=r_bal.mu, variance=r_bal.var_mu, df=r_bal.df,
                           sigma_d=sigma_d, components=comps, criterion=r_bal.criterion,
                           message=r_bal.message, gls_estimate=r_bal.mu, gls_variance=r_bal.var_mu)

    def build():
        codes, counts = pre if pre is not None else _gather(frame, idx, names)
        used = _usable_terms(codes, n, a, b, counts)
        return build_structure([codes[t] for t in used], [frame.term_levels[t] for t in used],
                               used, n=n, counts=[counts[t] for t in used],
                               parents=_nesting(frame)), used

    st, used = cache.get(key, build)
    warn_dropped_terms(names, used, n, a, b)
    ps = pair_sums(st, d)
    w: np.ndarray | None = None
    unit_codes: np.ndarray | None = None
    if estimand == "units" and spec.unit is not None:
        unit_codes = frame.term_codes[spec.unit] if full else frame.term_codes[spec.unit][mask]
    w = estimand_weights(estimand, n, unit_codes)
    est_w = None if w is None else estimand_estimate(d, unit_codes, whole_scores(frame))
    if len(used) == 1 and _may_be_constant_within(st, ps):
        codes1 = frame.term_codes[used[0]] if idx is None else frame.term_codes[used[0]][idx]
        row = _zero_residual(codes1, d, w, est_w, used[0], names, a, b, n, only_a, only_b,
                             sigma_d)
        if row is not None:
            return row
    var_fn = None if w is None else LinearVariance(st, w, uniform=estimand == "cells")
    psi0 = None if start is None else np.array([start.get(t, np.nan) for t in st.names])
    r: RemlFit = fit_reml(st, ps, used, control=control, var_fn=var_fn, start=psi0)
    estimate, variance, df = r.mu, r.var_mu, r.df
    if est_w is not None and var_fn is not None:
        estimate = est_w
        variance = var_fn(r.theta_block if r.theta_block is not None else np.zeros(0), r.sigma)
    comps = {t: float("nan") for t in names}
    comps.update(zip(r.names, (float(v) for v in r.variances)))
    return PairFit(model_a=a, model_b=b, n=n, only_a=only_a, only_b=only_b, estimate=estimate,
                   variance=variance, df=df, sigma_d=sigma_d, components=comps,
                   criterion=r.criterion, converged=r.converged, boundary=r.boundary,
                   gradient=r.gradient, message=r.message, nfev=r.nfev,
                   gls_estimate=r.mu, gls_variance=r.var_mu)


def _may_be_constant_within(st: Structure, ps: PairSums) -> bool:
    """False when the differences clearly vary within the one term's levels (then
    :func:`_zero_residual` does not apply): the within-level sum of squares from the pair's
    level sums, ``sum d^2 - sum_l s_l^2 / c_l``, above ``1e-8 sum d^2``, far beyond its
    rounding error, so only pairs near the limit pay for the exact check."""
    c, s = st.counts[0], ps.s[0]
    used = c > 0
    return ps.sumsq_d - float(np.sum(s[used] ** 2 / c[used])) <= 1e-8 * ps.sumsq_d


def _zero_residual(codes: np.ndarray, d: np.ndarray, w: np.ndarray | None,
                   est_w: float | None, term: str,
                   names: list[str], a: str, b: str, n: int, only_a: int, only_b: int,
                   sigma_d: float) -> PairFit | None:
    """The exact ``sigma^2 -> 0`` limit of a one-term fit whose differences are constant within levels.

    Then REML puts the residual variance at 0 and the profiled optimum lies
    at ``psi = inf`` (docs/engine.md): each level's mean difference is
    observed without error, so the fit is the one-way model of the ``T``
    level means, ``tau^2`` their sample variance, ``Var(w'd) = tau^2 sum_l
    W_l^2`` (``W_l`` the estimand's weight on level ``l``; ``1/T`` for gls)
    and ``T - 1`` df, the Satterthwaite limit.  None when the differences
    vary within some level (the ordinary fit applies).
    """
    cnt = np.bincount(codes)
    used = cnt > 0
    T = int(np.count_nonzero(used))
    within = float(np.sum((d - (np.bincount(codes, weights=d) / np.maximum(cnt, 1))[codes]) ** 2))
    total = float(np.sum((d - d.mean()) ** 2))
    if T < 2 or total <= 0 or within > 1e-20 * total:
        return None
    means = exact_group_sums(codes, d)[used] / cnt[used]
    tau2 = float(np.var(means, ddof=1))
    if tau2 <= 0:
        return None
    weights = np.full(T, 1.0 / T) if w is None else np.bincount(codes, weights=w)[used]
    estimate = exact_mean(means) if est_w is None else est_w
    comps = {t: float("nan") for t in names}
    comps.update({term: tau2, "residual": 0.0})
    return PairFit(model_a=a, model_b=b, n=n, only_a=only_a, only_b=only_b, estimate=estimate,
                   variance=tau2 * float(np.sum(weights ** 2)), df=float(T - 1),
                   sigma_d=sigma_d, components=comps, criterion=float("nan"),
                   boundary=("residual",),
                   message=f"residual variance 0: the differences are constant within each level "
                           f"of {term!r}; the sigma^2 -> 0 limit over {T} level means",
                   gls_estimate=exact_mean(means), gls_variance=tau2 / T)


def _aggregate(frame: Frame, mask: np.ndarray, full: bool, d: np.ndarray, a: str, b: str,
               n: int, only_a: int, only_b: int, sigma_d: float) -> PairFit:
    spec = frame.spec
    if spec.unit is None:
        unit_means = d
        unit = "cell"
    else:
        unit = spec.unit
        codes = frame.term_codes[unit] if full else frame.term_codes[unit][mask]
        cnt = np.bincount(codes, minlength=frame.term_levels[unit])
        sums = exact_group_sums(codes, d, frame.term_levels[unit])
        used = cnt > 0
        unit_means = sums[used] / cnt[used]
    T = len(unit_means)
    if T < 2:
        raise DesignError(f"method='aggregate' needs at least 2 levels of {unit!r} with common "
                          f"cells for {a!r} vs {b!r}; found {T}")
    est = exact_mean(unit_means)
    var_u = float(np.var(unit_means, ddof=1))
    if var_u <= 0:
        raise DesignError(f"all {unit!r}-level mean differences of {a!r} vs {b!r} are identical; "
                          "no standard error can be estimated")
    return PairFit(model_a=a, model_b=b, n=n, only_a=only_a, only_b=only_b, estimate=est,
                   variance=var_u / T, df=float(T - 1), sigma_d=sigma_d,
                   components={f"{unit} means": var_u}, message=f"aggregate over {T} {unit} levels")


def fit_pairs(frame: Frame, pairs: list[tuple[int, int]], *, method: str = "reml",
              estimand: str = "gls", control: Control = DEFAULT_CONTROL,
              flag_degenerate: bool = False,
              starts: Mapping[tuple[int, int], Mapping[str, float]] | None = None
              ) -> list[PairFit]:
    """Fit ``pairs`` (index pairs into ``frame.models``) with the native engine.

    ``starts``: per index pair, a warm start ``{term: sigma_r^2 / sigma^2}``
    (e.g. from the full fit, for leave-one-out refits); the accepted optimum
    is still the KKT-certified one (:func:`mixrank.engine.lmm.reml.optimise`).

    With ``flag_degenerate`` a degenerate pair (:func:`degenerate_pair`) is
    returned as its flagged row, detected on the differences the fit
    computes anyway; otherwise it raises :class:`~mixrank.errors.DesignError`
    in the fit.
    """
    if method not in METHODS:
        raise DesignError(f"method={method!r}; expected one of {METHODS}")
    if estimand not in ESTIMANDS:
        raise OptionError(f"estimand={estimand!r}; expected one of {list(ESTIMANDS)}"
                          f"{did_you_mean(estimand, ESTIMANDS)}")
    cache: StructureCache[tuple[Structure, list[str]]] = StructureCache()
    q2 = sum(sorted(frame.term_levels.values())[:-1]) if frame.term_levels else 0
    lattice = None
    if method == "reml" and any(frame.stats.n_common[j, k] == frame.n_cells for j, k in pairs):
        lattice = build_lattice(frame, control.orthogonality_tol)
    cols = _columns(frame)

    def task(p: tuple[int, int]) -> PairFit:
        return _snapped(frame, _fit_one(frame, p[0], p[1], method, estimand, cache, lattice,
                                        control, cols, flag_degenerate,
                                        None if starts is None else starts.get(p)))

    return run_pair_tasks(task, pairs, frame, control, one_blas_thread=q2 < 600)
