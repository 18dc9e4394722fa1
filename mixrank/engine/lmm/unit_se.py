"""Stage engine: standard errors and df at the unit (the ``df=`` option of :func:`mixrank.fit`).

Inputs: a :class:`~mixrank.frame.Frame`, the engine's :class:`~mixrank.engine.records.PairFit`
rows, the estimand and the df method.
Outputs: per pair ``(variance, df)`` of the estimate under the chosen method
(:func:`unit_inference`), and the per-unit weighted contrast totals the
randomization max-t flips (:func:`unit_totals`).
Contents (docs/methods.md, "Validity with few units"):

* ``"satterthwaite"`` -- the engine's REML variance with lmerTest's df (lme4's answer);
* ``"satterthwaite-vc"`` -- the engine's REML variance with the Satterthwaite df of the
  variance components' expected information (:mod:`mixrank.engine.lmm.crossed_df`; the
  default when a random term is crossed with the unit);
* ``"containment"`` -- the engine's REML variance with df = T_pair - 1 (units on the
  pair's common cells minus one; the between-within / containment df);
* ``"cr2"`` -- a cluster-robust CR2 variance at the unit with Bell-McCaffrey df
  (working covariance from the fitted unit and residual components).

:data:`DF_METHODS` lists the valid values; :func:`check_df` validates a value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..._util import did_you_mean
from ...errors import DesignError, OptionError
from ...frame import Frame
from ..records import PairFit

__all__ = ["DF_METHODS", "UNIT_METHODS", "check_df", "crossed_terms", "resolve_df", "unit_inference", "pair_unit_data",
           "cr2_bell_mccaffrey", "unit_weights"]

#: valid values of ``fit(df=)``.
DF_METHODS = ("cr2", "containment", "satterthwaite", "satterthwaite-vc")
#: the methods that need the unit's levels (at least 3 of them).
UNIT_METHODS = ("cr2", "containment")


def crossed_terms(frame: Frame, unit: str) -> list[str]:
    """The random terms whose levels are not nested in one level of ``unit`` (crossed with it).

    A term with more levels than the unit is nested exactly when the frame's nesting map
    (found once per frame for the fits) says so; one with fewer levels cannot be; one with
    as many is checked here.
    """
    from .native import _nesting

    nest = _nesting(frame)
    lv = frame.term_levels
    u = np.asarray(frame.term_codes[unit], dtype=np.int64)
    out = []
    for name in frame.spec.term_names:
        if name == unit:
            continue
        if lv[name] != lv[unit]:
            if (name, unit) not in nest:
                out.append(name)
            continue
        t = np.asarray(frame.term_codes[name], dtype=np.int64)
        # nested: every cell of a level of the term has the unit that one of them has
        seen = np.zeros(int(t.max(initial=-1)) + 1, dtype=np.int64)
        seen[t] = u
        if not np.array_equal(seen[t], u):   # some level of the term meets several units
            out.append(name)
    return out


def check_df(df: object) -> str:
    """``df`` if valid, else a DesignError listing :data:`DF_METHODS`."""
    if not isinstance(df, str) or df not in DF_METHODS:
        raise OptionError(f"df={df!r} is not a df/SE method; expected one of "
                          f"{list(DF_METHODS)} ('satterthwaite' is lme4 + lmerTest's answer; "
                          f"docs/methods.md, 'Validity with few units')."
                          f"{did_you_mean(df, DF_METHODS)}")
    return df


def pair_unit_data(frame: Frame, pair: PairFit, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """``d = y_a - y_b`` over the pair's common cells and their unit codes (0..T_pair-1)."""
    from .native import _columns

    j, k = frame.model_index(pair.model_a), frame.model_index(pair.model_b)
    cells = _columns(frame).pair(j, k)
    codes = frame.term_codes[unit]
    codes = codes if cells.idx is None else codes[cells.idx]
    return np.asarray(cells.d, dtype=float), _renumbered(codes, frame.term_levels[unit])


def _renumbered(codes: np.ndarray, levels: int) -> np.ndarray:
    """The levels present in ``codes`` renumbered 0..T-1 in order: np.unique's inverse, by a
    count instead of a sort."""
    present = np.bincount(codes, minlength=levels) > 0
    return (np.cumsum(present) - 1)[codes]


def unit_weights(estimand: str, codes: np.ndarray, pair: PairFit, unit: str) -> np.ndarray:
    """Cell weights (summing to 1) of the estimator at the unit.

    ``cells``: ``1/n``; ``units``: ``1/(T n_t)``; ``gls``: the GLS weights of the
    unit-level working model ``sigma_e^2 / (sigma_e^2 + n_t tau^2)`` with ``tau^2`` the
    unit's fitted component and ``sigma_e^2`` the sum of the other components
    (exact for ``(1|unit)`` alone).
    """
    counts = np.bincount(codes).astype(float)
    if estimand == "cells":
        w = np.ones(codes.size)
    elif estimand == "units":
        w = 1.0 / counts[codes]
    else:
        comps = {k: float(v) for k, v in pair.components.items()}
        tau2 = comps.get(unit, 0.0)
        tau2 = tau2 if np.isfinite(tau2) else 0.0
        other = sum(v for k, v in comps.items() if k != unit and np.isfinite(v))
        other = other if other > 0 else 1.0
        w = 1.0 / (other + counts[codes] * tau2)
    return w / w.sum()


def cr2_df_parts(codes: np.ndarray, w: np.ndarray, T: int
                 ) -> tuple[np.ndarray, np.ndarray, tuple[float, float, float, float, float]]:
    """What the CR2 variance and its Bell-McCaffrey df need of the cells' units and weights
    alone: the units' weights ``W``, ``1 - W`` and the traces of ``M = M0 + r M1``
    (:func:`cr2_bell_mccaffrey`) as a polynomial in ``r``: ``tr M0, tr M1, tr M0^2,
    tr M0 M1, tr M1^2``.  Pairs on the same cells with the same weights share them."""
    W = np.bincount(codes, weights=w, minlength=T)
    one_minus = np.clip(1.0 - W, 1e-12, None)
    Q = np.bincount(codes, weights=w * w, minlength=T)
    Qs, WW = float(Q.sum()), float(W @ W)
    s = 1.0 / np.sqrt(one_minus)
    S = np.outer(s, s)
    WWt = np.outer(W, W)
    M0 = (np.diag(Q) - np.outer(W, Q) - np.outer(Q, W) + WWt * Qs) * S
    M1 = WWt * (np.eye(T) - W[:, None] - W[None, :] + WW) * S
    traces = (float(np.trace(M0)), float(np.trace(M1)), float(np.sum(M0 * M0)),
              float(np.sum(M0 * M1)), float(np.sum(M1 * M1)))
    return W, one_minus, traces


def cr2_bell_mccaffrey(d: np.ndarray, codes: np.ndarray, w: np.ndarray,
                       tau2_ratio: float = 0.0,
                       parts: tuple[np.ndarray, np.ndarray, tuple[float, ...]] | None = None
                       ) -> tuple[float, float]:
    """CR2 variance of ``w'd`` clustered by ``codes`` and its Bell-McCaffrey df.

    With ``W_t`` the weight of unit t and ``e_t = sum_{i in t} w_i (d_i - w'd)``,
    ``V = sum_t e_t^2 / (1 - W_t)``.  The df are ``tr(M)^2 / tr(M^2)`` with
    ``M = C' Omega C`` (``C`` the CR2 contrast vectors, ``Omega = I + tau2_ratio Z Z'``
    the working covariance in units of the residual variance); closed form, O(T^2).
    ``M = M0 + tau2_ratio M1`` with ``M0``, ``M1`` positive semi-definite, so
    ``tr(M^2)`` is a sum of non-negative terms in ``tau2_ratio``; ``parts``:
    :func:`cr2_df_parts` of these ``codes`` and ``w``, when the caller has them.
    """
    T = int(codes.max()) + 1
    W, one_minus, (t0, t1, b00, b01, b11) = cr2_df_parts(codes, w, T) if parts is None \
        else parts
    est = float(w @ d)
    e = np.bincount(codes, weights=w * d, minlength=T) - W * est
    var = float(np.sum(e * e / one_minus))
    return var, _bell_mccaffrey_df((t0, t1, b00, b01, b11), tau2_ratio)


def _bell_mccaffrey_df(traces: tuple[float, ...], tau2_ratio: float) -> float:
    """``tr(M)^2 / tr(M^2)`` at ``M = M0 + r M1`` from the traces of :func:`cr2_df_parts`."""
    t0, t1, b00, b01, b11 = traces
    r = tau2_ratio if tau2_ratio > 0 else 0.0
    tr2 = b00 + r * (2.0 * b01 + r * b11)
    return float((t0 + r * t1) ** 2 / tr2) if tr2 > 0 else float("nan")


def unit_inference(frame: Frame, pairs: Sequence[PairFit], estimand: str, how: str,
                   unit: str) -> list[tuple[float, float, int]]:
    """Per pair ``(variance, df, units)`` under ``how`` (see the module docstring).

    A degenerate pair, and a pair whose common cells fall in fewer than 3 units,
    keeps the engine's variance and df (the caller warns).
    """
    out: list[tuple[float, float, int]] = []
    shared: dict[tuple[bytes, bytes], tuple] = {}    # cr2_df_parts by (cells' units, weights)
    batched = _complete_cr2(frame, pairs, estimand, unit) if how == "cr2" else {}
    for i, p in enumerate(pairs):
        if how == "satterthwaite" or p.degenerate:
            out.append((p.variance, p.df, 0))
            continue
        if i in batched:
            out.append(batched[i])
            continue
        d, codes = pair_unit_data(frame, p, unit)
        T = int(codes.max()) + 1 if codes.size else 0
        if T < 3:
            out.append((p.variance, p.df, T))
            continue
        if how == "containment":
            out.append((p.variance, float(T - 1), T))
            continue
        w = unit_weights(estimand, codes, p, unit)
        ratio = _unit_ratio(p, unit)
        key = (codes.tobytes(), w.tobytes())
        if key not in shared:
            shared[key] = cr2_df_parts(codes, w, T)
        var, df = cr2_bell_mccaffrey(d, codes, w, ratio, shared[key])
        out.append((var, min(df, float(T - 1)), T))
    return out


def _variance_df(frame: Frame, fits: Sequence[PairFit], estimand: str
                 ) -> tuple[str, tuple[tuple[float, float], ...]]:
    """``("satterthwaite-vc", rows)`` of :func:`~mixrank.engine.lmm.crossed_df.crossed_inference`,
    warning about the pairs too large for it (they keep lmerTest's df)."""
    import warnings

    from ...errors import SmallSampleWarning
    from .crossed_df import MAX_LEVELS, crossed_inference

    rows, kept = crossed_inference(frame, fits, estimand)
    if kept:
        warnings.warn(f"{len(kept)} pair(s) have more than {MAX_LEVELS} random-effect levels "
                      f"and a variance component estimated at zero ({', '.join(kept[:3])}"
                      f"{' ...' if len(kept) > 3 else ''}); they keep lmerTest's Satterthwaite "
                      "df, which drop that term and can be liberal (docs/methods.md §9)",
                      SmallSampleWarning, stacklevel=4)
    return "satterthwaite-vc", rows


def _unit_ratio(p: PairFit, unit: str) -> float:
    """The unit's fitted component over the sum of the others (the CR2 working covariance)."""
    comps = {k: float(v) for k, v in p.components.items()}
    tau2 = comps.get(unit, 0.0)
    other = sum(v for k, v in comps.items() if k != unit and np.isfinite(v))
    return tau2 / other if other > 0 and math.isfinite(tau2) else 0.0


#: Cells x pairs entries of paired differences formed at once by :func:`_complete_cr2`.
_BATCH_ENTRIES = 1 << 22


def _complete_cr2(frame: Frame, pairs: Sequence[PairFit], estimand: str, unit: str
                  ) -> dict[int, tuple[float, float, int]]:
    """:func:`cr2_bell_mccaffrey` of the pairs scored on every cell of a dense frame, many
    pairs at once: ``{position in pairs: (variance, df, units)}``.

    Such pairs share their cells' units and (for the ``cells`` and ``units`` estimands)
    weights, so :func:`cr2_df_parts` is computed once and the per-unit sums of all
    their differences in blocks of pairs; each unit's sum runs over its cells in cell
    order as :func:`numpy.bincount` does pair by pair, so the numbers are those of the
    pair-by-pair path.  Empty for a compressed frame, the ``gls`` estimand (weights
    from each pair's components) or fewer than 3 units.
    """
    from ...frame.columns import CompressedFrame
    from .native import _Columns, _columns

    if estimand == "gls" or (isinstance(frame, CompressedFrame) and frame.columns is not None):
        return {}
    n = frame.n_cells
    todo = [i for i, p in enumerate(pairs) if not p.degenerate and p.n == n]
    if len(todo) < 2:
        return {}
    codes = _renumbered(frame.term_codes[unit], frame.term_levels[unit])
    T = int(codes.max()) + 1 if codes.size else 0
    if T < 3:
        return {}
    w = unit_weights(estimand, codes, pairs[todo[0]], unit)
    W, one_minus, traces = cr2_df_parts(codes, w, T)
    cols = _columns(frame)
    assert isinstance(cols, _Columns)            # a dense frame: model-major matrices
    index = {m: i for i, m in enumerate(frame.models)}
    out: dict[int, tuple[float, float, int]] = {}
    step = max(1, _BATCH_ENTRIES // max(n, 1))
    for start in range(0, len(todo), step):
        block = todo[start:start + step]
        a = np.array([index[pairs[i].model_a] for i in block])
        b = np.array([index[pairs[i].model_b] for i in block])
        D = cols.scores[a] - cols.scores[b]                          # (pairs, cells)
        est = np.array([float(w @ d) for d in D])
        flat = (codes[None, :] + T * np.arange(len(block))[:, None]).ravel()
        e = np.bincount(flat, weights=(D * w).ravel(), minlength=T * len(block))
        e = e.reshape(len(block), T) - W[None, :] * est[:, None]
        var = np.sum(e * e / one_minus[None, :], axis=1)
        for i, v in zip(block, var):
            df = _bell_mccaffrey_df(traces, _unit_ratio(pairs[i], unit))
            out[i] = (float(v), min(df, float(T - 1)), T)
    return out


def resolve_df(frame: Frame, fits: Sequence[PairFit], *, method: str, estimand: str,
               df: str | None) -> tuple[str, tuple[tuple[float, float], ...]]:
    """The df method a fit uses and its per-pair ``(variance, df)`` (empty for the engine's).

    ``df=None`` picks ``"cr2"`` for REML with a unit of at least 3 levels in which every
    other random term is nested (a crossed term, e.g. ``(1|prompt)`` beside
    ``(1|subject)``, gives ``"satterthwaite-vc"``: a unit-robust variance would ignore
    the crossed term's variance, docs/methods.md §9), else the
    engine's own (``"satterthwaite"``, or ``"units - 1"`` for the aggregate method)
    with a :class:`~mixrank.errors.SmallSampleWarning` when the unit has fewer than
    3 levels.  An explicit unit-level method where it cannot apply is a DesignError.
    """
    import warnings

    from ...errors import SmallSampleWarning

    if method == "aggregate":
        if df is not None:
            raise DesignError(f"df={df!r} with method='aggregate': the aggregate method already "
                              "tests at the unit (t over unit means, df = units - 1); leave df "
                              "unset or use method='reml'.")
        return "units - 1", ()
    how = "cr2" if df is None else check_df(df)
    if how == "satterthwaite":
        return how, ()
    if how == "satterthwaite-vc":
        if not frame.spec.term_names:
            raise OptionError(f"df='satterthwaite-vc' takes its df from the variance components "
                              f"of the random terms, but the formula {frame.spec.formula!r} has "
                              "none; add a random term (e.g. + (1|subject)) or leave df unset "
                              "(cells are then the units: the paired t test)")
        return _variance_df(frame, fits, estimand)
    unit = frame.spec.unit
    levels = 0 if unit is None else int(frame.term_levels[unit])
    if levels < 3:
        why = (f"the formula {frame.spec.formula!r} has no random term naming a unit"
               if unit is None else f"the unit {unit!r} has {levels} level(s)")
        if df is not None:
            raise DesignError(f"df={df!r} corrects the inference at the unit, but {why}; at "
                              "least 3 are needed. Use df='satterthwaite' (lme4's answer) or "
                              "add units.")
        if unit is not None:
            warnings.warn(f"{why}: too few for a unit-level correction, so the contrasts use "
                          "lme4's Satterthwaite df (df='satterthwaite'), which is not valid "
                          "with this few units (docs/methods.md, 'Validity with few units')",
                          SmallSampleWarning, stacklevel=3)
        return "satterthwaite", ()
    crossed = crossed_terms(frame, str(unit)) if how == "cr2" else []
    if crossed and df is None:
        # a term crossed with the unit (e.g. (1|prompt) beside (1|subject)) adds variance
        # shared across units, which a unit-robust variance cannot see: lme4's REML variance
        # with the df of the variance components (lmerTest's drops a crossed term at zero)
        return _variance_df(frame, fits, estimand)
    if crossed:
        raise DesignError(f"df={df!r} treats the levels of {unit!r} as independent, but the "
                          f"random term(s) {crossed} are crossed with it (their levels span "
                          f"several {unit!r} levels), so it would ignore their variance. Use "
                          "df='satterthwaite' (the default for crossed designs) or "
                          "method='aggregate' over the unit (docs/methods.md §9).")
    rows = unit_inference(frame, fits, estimand, how, str(unit))
    few = [f"{p.model_a} vs {p.model_b}" for p, r in zip(fits, rows)
           if not p.degenerate and r[2] < 3]
    if few:
        warnings.warn(f"{len(few)} pair(s) have common cells in fewer than 3 levels of "
                      f"{unit!r} ({', '.join(few[:5])}{' ...' if len(few) > 5 else ''}); they "
                      "keep lme4's Satterthwaite SE and df", SmallSampleWarning, stacklevel=3)
    return how, tuple((v, d) for v, d, _ in rows)
