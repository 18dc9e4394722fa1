"""Stage engine: per-unit score contributions and information of a fitted binomial GLMM.

Inputs: the binomial :class:`~mixrank.frame.Frame`, its
:class:`~mixrank.formula.glmm_terms.GlmmFormula` and the fitted
:class:`~mixrank.engine.glmm.fit.GlmmFit` (with the covariate of a ``model * x``
fit).  Outputs: :class:`UnitScores` -- for every level t of the unit of
inference, the score ``U_t = X_t'(k_t - n_t mu_t)`` of the model effects at
the fitted ``beta`` and the conditional modes of the random effects, and the
unit's (linearised marginal) information ``I_t = X_t' V_t^{-1} X_t`` with
``V_t = W_t^{-1} + Z_t Lam Lam' Z_t'`` (the Schur complement of the unit's
block of the penalised IRLS Hessian).  The randomization max-T of the GLMM
contrasts (:mod:`mixrank.results.glmm.flips`) builds each contrast's unit
contributions from them (docs/glmm.md, "Randomization max-t and step-down").

The unit is the coarsest grouping of the random terms in which every other
term is nested (``subject`` in ``(1|subject) + (1|subject:model)``): the
marginal likelihood factorises over its levels.  Designs without one (a
crossed prompt term) are refused (:func:`flip_unit`).

Contents: :class:`UnitScores`, :func:`flip_unit`, :func:`unit_scores`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...errors import DesignError
from ...formula.glmm_terms import GlmmFormula
from ...frame import Frame
from .fit import GlmmFit
from .pirls import pirls
from .problem import _unit_codes, build_problem

__all__ = ["UnitScores", "flip_unit", "unit_scores"]

#: Largest dense block of random levels within one unit (beyond the diagonal term).
MAX_UNIT_BLOCK = 4000


@dataclass(frozen=True, eq=False)
class UnitScores:
    """Per-unit score and information of the model effects (engine record).

    Attributes
    ----------
    unit : str
        The unit's name (its factors joined by ``:``).
    score : ndarray (T, p)
        ``U_t``: unit t's score of ``beta`` at the fit (sums to ~0 over t).
    info : ndarray (T, p, p)
        ``I_t``: unit t's information (sums to the Schur complement of the
        model block, the inverse of the nAGQ = 0 covariance).
    """

    unit: str
    score: np.ndarray
    info: np.ndarray

    @property
    def n_units(self) -> int:
        return int(self.score.shape[0])


def _nested(inner: np.ndarray, outer: np.ndarray) -> bool:
    """Every level of ``inner`` (per cell) lies within one level of ``outer``."""
    pairs = np.unique(inner.astype(np.int64) * (int(outer.max()) + 1) + outer)
    return pairs.size == np.unique(inner).size


def flip_unit(frame: Frame, gf: GlmmFormula) -> tuple[str, np.ndarray]:
    """The unit whose levels are flipped and its code at every cell: the coarsest grouping
    of the random terms in which every other term is nested (``subject`` for
    ``(1|subject) + (1|subject:question:model)``; the model-by-unit term's unit on ties).

    Raises
    ------
    DesignError
        Fewer than 3 levels, or a random term not nested in the unit (its
        levels span several units: the units' contributions are not
        independent).
    """
    comp = gf.spec.comparison
    groups: list[tuple[str, str, np.ndarray]] = []   # (grouping, term as written, cell codes)
    for t in gf.model_terms:
        base = [f for f in t if f != comp]
        groups.append((":".join(base), ":".join(t), _unit_codes(frame, base)))
    for term in gf.spec.term_names:
        groups.append((term, term, np.asarray(frame.term_codes[term], dtype=np.int64)))
    # the coarsest grouping in which every random term is nested (the model-by-unit
    # term's unit when that qualifies: listed first, kept on ties)
    ok = [g for g in groups if all(_nested(other[2], g[2]) for other in groups)]
    if not ok:
        name, _, codes = groups[0]
        bad = next(g[1] for g in groups if not _nested(g[2], codes))
        raise DesignError(f"the randomization max-t flips the levels of {name!r}, but "
                          f"(1|{bad}) is not nested in it (its levels span several "
                          f"{name!r} levels), and no random term's grouping contains all "
                          "the others, so no unit's score contributions are independent. "
                          "Use adjust='holm' (or fit without the crossed term).")
    name, _, codes = min(ok, key=lambda g: np.unique(g[2]).size)
    T = int(np.unique(codes).size)
    if T < 3:
        raise DesignError(f"the randomization max-t flips the levels of the unit {name!r}, which "
                          f"has {T} level(s) in {gf.formula!r}; at least 3 are needed. Use "
                          "adjust='holm'.")
    return name, np.unique(codes, return_inverse=True)[1].ravel()


def _indicator(codes: np.ndarray, q: int) -> sp.csr_matrix:
    n = codes.size
    return sp.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, q))


def _unit_info(th: np.ndarray, codes: list[np.ndarray], w: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``X'WX - X'WZ Lam (Lam'Z'WZ Lam + I)^{-1} Lam'Z'WX`` of one unit (local level codes).

    The term with the most local levels is eliminated by a diagonal solve (its
    ``Z'WZ`` block is diagonal); the others form a small dense block."""
    q = [int(c.max()) + 1 for c in codes]
    big = int(np.argmax(q))
    Zb = _indicator(codes[big], q[big])
    rest = [r for r in range(len(codes)) if r != big and th[r] != 0.0]
    WX = w[:, None] * X
    XX = X.T @ WX
    if th[big] == 0.0 and not rest:
        return XX
    d = th[big] ** 2 * np.asarray(Zb.T @ w).ravel() + 1.0
    G0 = th[big] * np.asarray(Zb.T @ WX)                 # q_b x p
    out = XX - G0.T @ (G0 / d[:, None])
    if not rest:
        return out
    Zr = sp.hstack([th[r] * _indicator(codes[r], q[r]) for r in rest]).tocsr()
    m = Zr.shape[1]
    if m > MAX_UNIT_BLOCK:
        raise DesignError(f"{m} random levels outside the largest term within one unit: too many "
                          "for the randomization's per-unit information. Use adjust='holm'.")
    WZr = Zr.multiply(w[:, None]).tocsr()
    F = np.asarray((Zr.T @ WZr).todense()) + np.eye(m)
    E = th[big] * np.asarray((Zb.T @ WZr).todense())     # q_b x m
    Gr = np.asarray(Zr.T @ WX)                           # m x p
    F2 = F - E.T @ (E / d[:, None])
    Gr2 = Gr - E.T @ (G0 / d[:, None])
    sol = np.linalg.solve(F2, Gr2)
    out = out - Gr2.T @ sol
    return 0.5 * (out + out.T)


def _unit_terms(prob, unit: np.ndarray, T: int) -> np.ndarray | None:
    """Per term: 0 when its level is the unit's, 1 when it is the (unit, model)'s; None when
    a term is finer (or a covariate enters the fixed part): the general per-unit solve."""
    if prob.slope is not None or prob.n_fixed != prob.n_models:
        return None
    M = prob.n_models
    kind = np.zeros(len(prob.codes), dtype=np.int64)
    for i, (c, q) in enumerate(zip(prob.codes, prob.levels)):
        if q == T and np.unique(c.astype(np.int64) * T + unit).size == T:
            kind[i] = 0
        elif np.unique(c).size == np.unique(unit.astype(np.int64) * M + prob.model).size and \
                np.unique(c.astype(np.int64) * (T * M) + unit * M + prob.model).size \
                == np.unique(c).size:
            kind[i] = 1
        else:
            return None
    return kind


def _closed_form(name: str, prob, unit: np.ndarray, T: int, theta: np.ndarray,
                 kind: np.ndarray, w: np.ndarray, r: np.ndarray) -> UnitScores:
    """Unit-level and (unit, model)-level intercepts only: per unit, eliminating the
    (unit, model) effects (diagonal, ``d_m = 1 + s1^2 w_m``) and then the unit's effect
    gives ``I_t = diag(w/d) - s0^2 (w/d)(w/d)' / (1 + s0^2 sum w/d)`` with ``w_m`` the
    IRLS weights of model m in unit t and ``s0^2``, ``s1^2`` the summed variances of the
    terms of each kind (terms with the same grouping add)."""
    M = prob.n_models
    s0 = float(np.sum(theta[kind == 0] ** 2))
    s1 = float(np.sum(theta[kind == 1] ** 2))
    key = unit.astype(np.int64) * M + prob.model
    wm = np.bincount(key, weights=w, minlength=T * M).reshape(T, M)
    score = np.bincount(key, weights=r, minlength=T * M).reshape(T, M)
    v = wm / (1.0 + s1 * wm)
    info = np.einsum("tm,mk->tmk", v, np.eye(M)) - (
        s0 * v[:, :, None] * v[:, None, :] / (1.0 + s0 * v.sum(axis=1))[:, None, None])
    return UnitScores(unit=name, score=score, info=info)


def unit_scores(frame: Frame, gf: GlmmFormula, fit: GlmmFit, *,
                cell_level: np.ndarray | None = None,
                cell_x: np.ndarray | None = None) -> UnitScores:
    """Score and information of every unit at the fit (see module docstring).

    The conditional modes are recomputed by one penalised IRLS at the fitted
    ``theta`` and ``beta`` on the unmerged problem (one observation per
    scored (model, cell)).  ``cell_level``/``cell_x``: the covariate of a
    ``model * x`` fit, as passed to :func:`~mixrank.engine.glmm.fit.fit_glmm`.

    Raises
    ------
    DesignError
        As :func:`flip_unit`.
    """
    name, ucell = flip_unit(frame, gf)
    prob = build_problem(frame, gf, cell_level)
    if cell_x is not None and prob.cell is not None:
        prob.slope = np.asarray(cell_x, dtype=np.float64)[prob.cell]
    theta = np.array([fit.theta[list(gf.term_names).index(t)] for t in prob.names])
    mode = pirls(prob, theta, fit.beta, np.zeros(sum(prob.levels)), joint=False)
    mu = 1.0 / (1.0 + np.exp(-mode.eta))
    w = prob.n * mu * (1.0 - mu)
    r = prob.k - prob.n * mu
    M, p = prob.n_models, prob.n_fixed
    X = np.zeros((prob.n_obs, p))
    X[np.arange(prob.n_obs), prob.model] = 1.0
    if prob.slope is not None:
        X[np.arange(prob.n_obs), M + prob.model] = prob.slope
    unit = ucell[prob.cell] if prob.cell is not None else ucell[np.nonzero(frame.observed)[0]]
    T = int(ucell.max()) + 1
    fast = _unit_terms(prob, unit, T)
    if fast is not None:
        return _closed_form(name, prob, unit, T, theta, fast, w, r)
    order = np.argsort(unit, kind="stable")
    bounds = np.searchsorted(unit[order], np.arange(T + 1))
    score = np.zeros((T, p))
    info = np.zeros((T, p, p))
    for t in range(T):
        idx = order[bounds[t]:bounds[t + 1]]
        score[t] = X[idx].T @ r[idx]
        local = [np.unique(c[idx], return_inverse=True)[1].ravel() for c in prob.codes]
        info[t] = _unit_info(theta, local, w[idx], X[idx])
    return UnitScores(unit=name, score=score, info=info)
