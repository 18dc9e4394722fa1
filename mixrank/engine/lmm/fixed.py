"""Stage engine: fit every pair of a model x covariate formula (p fixed columns).

Inputs: a :class:`~mixrank.frame.Frame` whose ``cells`` carry the covariates
of an :class:`~mixrank.formula.InteractionSpec` (see
:func:`mixrank.frame.covariates.attach_covariates`), the pairs and the
estimand.  Outputs: one :class:`~mixrank.engine.records.PairFit` per pair whose
``estimate``/``variance``/``df`` are the overall gap (the estimand-weighted
average of the fitted cell differences, docs/interactions.md §3) and whose
``fixed`` holds the :class:`FixedPair` (the p-column REML fit and
what contrasts by level need).

Contents: :class:`Design` (the fixed model matrix of the paired differences
over the frame's cells, built once with formulaic: categorical coding,
numeric terms, interactions among covariates) and :func:`fit_pairs_fixed`.
Pairs scored on every cell share one structure and take their sums from
per-level sufficient statistics (``X'Y`` over all cells, per-level sums of
each model), so the per-pair work does not touch the cells.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from ..._util import did_you_mean
from ...errors import DesignError, OptionError
from ...formula.fixed import InteractionSpec
from ...frame import Frame
from ..control import DEFAULT_CONTROL, Control
from ..records import PairFit
from ..structure import Structure, build_structure
from .driver import (
    StructureCache,
    cells_key,
    check_common,
    flagged_row,
    run_pair_tasks,
    warn_dropped_terms,
)
from .estimand import ESTIMANDS, estimand_weights
from .native import term_levels_used
from .reml_fixed import FixedFit, FixedSums, fit_reml_fixed, group_sums

__all__ = ["Design", "FixedPair", "build_design", "design_from_cells", "pair_design",
           "fit_pairs_fixed", "fit_models_fixed", "kept_columns"]


@dataclass(frozen=True, eq=False)
class Design:
    """The fixed model matrix of the paired differences over all cells.

    Attributes
    ----------
    X : ndarray (n_cells, p)
    columns : tuple of str
        formulaic's column names, e.g. ``("Intercept", "x[T.b]", "z")``.
    term_columns : dict
        d-term label (``"x"``, ``"x:z"``) -> column indices; ``"1"`` the intercept.
    model_spec : formulaic ModelSpec
        Re-encodes a reference grid exactly as the cells were encoded.
    numeric : tuple of str
        Numeric covariates; the others are categorical.
    levels : dict
        Categorical covariate -> its levels (sorted).
    """

    X: np.ndarray
    columns: tuple[str, ...]
    term_columns: dict[str, list[int]]
    model_spec: Any
    numeric: tuple[str, ...]
    levels: dict[str, tuple[str, ...]]

    def grid_matrix(self, grid: pd.DataFrame) -> np.ndarray:
        """The model matrix of reference-grid rows (covariate columns as in ``cells``)."""
        g = grid.copy()
        for c, levs in self.levels.items():
            g[c] = pd.Categorical(g[c], categories=list(levs))
        return np.asarray(self.model_spec.get_model_matrix(g), dtype=np.float64)


def design_from_cells(cells: pd.DataFrame, spec: InteractionSpec) -> Design:
    """The fixed model matrix ``1 + x + ...`` of ``spec`` over a table of cells."""
    import formulaic

    data = cells[list(spec.covariates)]
    try:
        mm = formulaic.model_matrix(spec.d_formula, data)
    except Exception as exc:  # formulaic's errors, re-raised as ours at the stage boundary
        raise DesignError(f"the fixed part {spec.d_formula!r} could not be encoded over the "
                          f"cells ({exc}); check the covariate columns") from None
    ms = mm.model_spec
    term_cols = {str(t): list(ix) for t, ix in ms.term_indices.items()}
    numeric = tuple(c for c in spec.covariates
                    if not isinstance(data[c].dtype, pd.CategoricalDtype))
    levels = {c: tuple(str(v) for v in data[c].cat.categories)
              for c in spec.covariates if c not in numeric}
    return Design(X=np.asarray(mm, dtype=np.float64), columns=tuple(ms.column_names),
                  term_columns=term_cols, model_spec=ms, numeric=numeric, levels=levels)


def build_design(frame: Frame, spec: InteractionSpec) -> Design:
    """The fixed model matrix of ``spec`` over all of ``frame.cells``."""
    return design_from_cells(frame.cells, spec)


def pair_design(frame: Frame, design: Design, mask: np.ndarray) -> Design | None:
    """The design recoded over a pair's cells when some covariate level has none of them.

    As lme4 (``model.frame(drop.unused.levels = TRUE)``), absent levels are
    dropped before coding, so the reference level of a treatment coding is
    the first level present.  None when every level is present.
    """
    cells = frame.cells.loc[mask, list(frame.spec.covariates)]  # type: ignore[attr-defined]
    absent = [c for c in design.levels if cells[c].nunique() < len(design.levels[c])]
    if not absent:
        return None
    for c in absent:
        cells[c] = cells[c].cat.remove_unused_categories()
    return design_from_cells(cells, frame.spec)  # type: ignore[arg-type]


def kept_columns(XtX: np.ndarray, tol: float = 1e-7) -> tuple[list[int], list[np.ndarray]]:
    """Columns kept in order (a column dependent on earlier ones is dropped, as R's
    ``qr(X, LAPACK = FALSE)`` pivots it out) and a null-space vector per dropped column."""
    p = XtX.shape[0]
    kept: list[int] = []
    null: list[np.ndarray] = []
    for k in range(p):
        diag = XtX[k, k]
        if kept:
            G = XtX[np.ix_(kept, kept)]
            coef = np.linalg.solve(G, XtX[kept, k])
            resid = diag - float(XtX[k, kept] @ coef)
        else:
            coef, resid = np.zeros(0), diag
        if diag > 0 and resid > tol * tol * diag:
            kept.append(k)
        else:
            v = np.zeros(p)
            v[k] = 1.0
            v[kept] = -coef
            null.append(v)
    return kept, null


@dataclass
class FixedPair:
    """What the results layer needs of one pair's p-column fit.

    ``fit`` works on the kept columns ``kept`` of the design; ``null`` spans
    the null space of the pair's X (a contrast L is estimable iff L is
    orthogonal to it); ``design`` is the frame's design, or (``own_design``)
    its recoding over the pair's cells when levels are absent; ``numeric_means`` and ``level_counts`` (cells per level
    of each categorical covariate) describe the pair's common cells;
    ``overall`` is the L of the overall gap (full length p).
    """

    fit: FixedFit
    kept: list[int]
    null: list[np.ndarray]
    numeric_means: dict[str, float]
    level_counts: dict[str, dict[str, int]]
    overall: np.ndarray
    XtX: np.ndarray
    design: Design
    own_design: bool = False

    def estimable(self, L: np.ndarray) -> bool:
        scale = max(float(np.abs(L).max()), 1e-300)
        return all(abs(float(L @ v)) <= 1e-8 * scale * max(1.0, float(np.abs(v).max()))
                   for v in self.null)

    def contrast(self, L: np.ndarray) -> tuple[float, float, float]:
        """``(estimate, variance, df)`` of the estimable ``L' beta`` (L over all columns)."""
        return self.fit.contrast(L[self.kept])


@dataclass
class _Shared:
    """d-independent parts for pairs on the same common cells."""

    st: Structure
    used: list[str]
    kept: list[int]
    null: list[np.ndarray]
    XtX: np.ndarray
    ZX: tuple[np.ndarray, ...]
    P: np.ndarray | None
    H: np.ndarray | None
    W2: np.ndarray | None
    units: np.ndarray | None
    design: Design
    own: bool
    X: np.ndarray
    means: dict
    counts: dict


def _shared(frame: Frame, design: Design, mask: np.ndarray | None, a: str, b: str) -> _Shared:
    names = list(frame.spec.term_names)
    own = None if mask is None else pair_design(frame, design, mask)
    X = design.X if mask is None else own.X if own is not None else design.X[mask]
    n = X.shape[0]
    codes = {t: frame.term_codes[t] if mask is None else frame.term_codes[t][mask] for t in names}
    used = list(term_levels_used(codes, n, a, b))
    st = build_structure([codes[t] for t in used], [frame.term_levels[t] for t in used], used, n=n)
    XtX_all = X.T @ X
    kept, null = kept_columns(XtX_all)
    Xk = X[:, kept]
    ZX = tuple(np.stack([np.bincount(c, weights=Xk[:, j], minlength=L) for j in range(len(kept))],
                        axis=1) for c, L in zip(st.codes, st.levels))
    P = H = W2 = None
    if st.mode == "dense":
        P, H, W2 = group_sums(st, ZX)
    unit = codes[names[0]] if names else None
    used_design = design if own is None else own
    means, counts = _describe(frame, used_design, mask)
    return _Shared(st=st, used=used, kept=kept, null=null, XtX=XtX_all, ZX=ZX, P=P, H=H, W2=W2,
                   units=unit, design=used_design, own=own is not None, X=Xk, means=means,
                   counts=counts)


def _sums(sh: _Shared, Xtd: np.ndarray, dtd: float, zd: tuple[np.ndarray, ...]) -> FixedSums:
    p = len(sh.kept)
    T = np.empty((p + 1, p + 1))
    T[:p, :p] = sh.XtX[np.ix_(sh.kept, sh.kept)]
    T[:p, p] = T[p, :p] = Xtd
    T[p, p] = dtd
    ZW = tuple(np.column_stack([zx, s]) for zx, s in zip(sh.ZX, zd))
    if sh.st.mode != "dense":
        return FixedSums(n=sh.st.n, p=p, T=T, ZW=ZW)
    st = sh.st
    P0, H0, W20 = cast(np.ndarray, sh.P), cast(np.ndarray, sh.H), cast(np.ndarray, sh.W2)
    nG = P0.shape[0]
    groups = cast(np.ndarray, st.groups)
    s1 = zd[0]
    U1 = sh.ZX[0]
    P = np.empty((nG, p + 1, p + 1))
    P[:, :p, :p] = P0
    cross = np.zeros((nG, p))
    np.add.at(cross, groups, U1 * s1[:, None])
    P[:, :p, p] = P[:, p, :p] = cross
    P[:, p, p] = np.bincount(groups, weights=s1 * s1, minlength=nG)
    q2 = W20.shape[0]
    H = np.empty((nG, q2, p + 1))
    H[:, :, :p] = H0
    if q2:
        H[:, :, p] = np.asarray(st.onehot @ (cast(np.ndarray, st.z12) * s1[:, None]))
    W2 = np.empty((q2, p + 1))
    W2[:, :p] = W20
    W2[:, p] = np.concatenate(zd[1:]) if len(zd) > 1 else np.zeros(0)
    return FixedSums(n=st.n, p=p, T=T, ZW=ZW, P=P, H=H, W2=W2)


def _overall(estimand: str, sh: _Shared, fit: FixedFit) -> np.ndarray:
    """L (kept columns) of the overall gap under ``estimand`` (docs/interactions.md §3)."""
    if estimand == "cells":          # the weights 1/n: the columns' means, summed pairwise
        return sh.X.mean(axis=0)
    w = estimand_weights(estimand, sh.X.shape[0], sh.units)
    if w is not None:
        return w @ sh.X
    info = np.linalg.inv(fit.cov)               # X'V^-1 X up to the factor 1/sigma^2
    return info[:, 0] / info[0, 0]              # column 0: the intercept


def _describe(frame: Frame, design: Design, mask: np.ndarray | None) -> tuple[dict, dict]:
    cells = frame.cells if mask is None else frame.cells[mask]
    means = {c: float(cells[c].to_numpy(dtype=np.float64).mean()) for c in design.numeric}
    counts = {c: {str(k): int(v) for k, v in cells[c].value_counts(sort=False).items()}
              for c in design.levels}
    return means, counts


def _fit_one(frame: Frame, design: Design, XtY: np.ndarray, j: int, k: int | None,
             estimand: str, cache: StructureCache[_Shared], gram: np.ndarray,
             control: Control = DEFAULT_CONTROL) -> PairFit:
    """One pair ``d = y_j - y_k`` or (``k`` None) one model's own scores ``y_j``
    (the steps of :mod:`mixrank.engine.lmm.driver`)."""
    both = frame.observed[:, j] if k is None else frame.common_mask(j, k)
    n = int(np.count_nonzero(both))
    only = (0, 0) if k is None else (int(np.count_nonzero(frame.observed[:, j])) - n,
                                     int(np.count_nonzero(frame.observed[:, k])) - n)
    a, b = frame.models[j], frame.models[k] if k is not None else ""
    check_common(n, a, b)
    full = n == frame.n_cells
    mask = None if full else both
    sh = cache.get(cells_key(both, full), lambda: _shared(frame, design, mask, a, b))
    names = list(frame.spec.term_names)
    st = frame.stats
    kk = j if k is None else k
    sign = 0.0 if k is None else 1.0
    if full:   # sums from X'Y and Y'Y (column 0 of X is the intercept: sum of d)
        Xtd_all = XtY[:, j] - sign * XtY[:, kk]
        Xtd = Xtd_all[sh.kept]
        dtd = gram[j, j] + sign * (gram[kk, kk] - 2.0 * gram[j, kk])
        sd = math.sqrt(max(dtd - Xtd_all[0] ** 2 / n, 0.0) / (n - 1))
        zd: tuple[np.ndarray, ...] = tuple(
            np.asarray(st.level_sums[t][:, j] - sign * st.level_sums[t][:, kk], dtype=np.float64)
            for t in sh.st.names)
    else:
        d = (frame.scores[:, j] - sign * np.nan_to_num(frame.scores[:, kk]))[both]
        Xtd, dtd = sh.X.T @ d, float(d @ d)
        sd = float(np.std(d, ddof=1))
        zd = tuple(np.bincount(c, weights=d, minlength=L) for c, L in zip(sh.st.codes, sh.st.levels))
    warn_dropped_terms(names, sh.used, n, a, b)
    fs = _sums(sh, Xtd, float(dtd), zd)
    try:
        ff = fit_reml_fixed(sh.st, fs, sh.used, control=control)
    except DesignError as exc:   # no residual variation: a flagged row, as degenerate pairs
        row = flagged_row(frame, j, j if k is None else k, n, float(Xtd[0]) / n, sd, names,
                          str(exc), only=only)
        return row if k is not None else dataclasses.replace(row, model_b="")
    Lk = _overall(estimand, sh, ff)
    L = np.zeros(sh.design.X.shape[1])
    L[sh.kept] = Lk
    est, var, df = ff.contrast(Lk)
    comps = {t: float("nan") for t in names}
    comps.update(zip(ff.names, (float(v) for v in ff.variances)))
    fp = FixedPair(fit=ff, kept=sh.kept, null=sh.null, numeric_means=sh.means, level_counts=sh.counts,
                   overall=L, XtX=sh.XtX, design=sh.design, own_design=sh.own)
    g_est, g_var, _ = ff.contrast(_overall("gls", sh, ff)) if estimand != "gls" else (est, var, df)
    return PairFit(model_a=a, model_b=b, n=n, only_a=only[0], only_b=only[1], estimate=est, variance=var, df=df, sigma_d=sd, components=comps,
                   criterion=ff.criterion, converged=ff.converged, boundary=ff.boundary,
                   message=ff.message, nfev=ff.nfev, gls_estimate=g_est, gls_variance=g_var,
                   fixed=fp)


def fit_models_fixed(frame: Frame, design: Design, *, estimand: str = "gls",
                     control: Control = DEFAULT_CONTROL) -> list[PairFit]:
    """Each model's own cell scores fitted by ``y ~ 1 + x + (random terms)`` (p columns).

    Returns one :class:`~mixrank.engine.records.PairFit` per model (``model_b``
    empty; ``fixed`` the model's :class:`FixedPair`), used for
    scores by covariate level (docs/interactions.md §4).
    """
    check_control(control)
    y0 = np.where(frame.observed, frame.scores, 0.0)
    XtY, gram = design.X.T @ y0, y0.T @ y0
    cache: StructureCache[_Shared] = StructureCache()
    return run_pair_tasks(lambda p: _fit_one(frame, design, XtY, p[0], None, estimand, cache,
                                             gram, control),
                          [(j, j) for j in range(frame.n_models)], frame, control)


def fit_pairs_fixed(frame: Frame, design: Design, pairs: list[tuple[int, int]], *,
                    estimand: str = "gls", control: Control = DEFAULT_CONTROL) -> list[PairFit]:
    """Fit ``pairs`` (index pairs into ``frame.models``) with p fixed columns.

    Parameters
    ----------
    frame : Frame
        With the covariates in ``frame.cells``.
    design : Design
        :func:`build_design` of the frame.
    pairs : list of (int, int)
    estimand : {"gls", "cells", "units"}
        Weights of the overall gap (docs/interactions.md §3).
    control : Control
        As for the intercept-only fit (the one optimiser: tolerances, starts,
        ``certify``, ``check_faces``, ``boundary_tol``, the KKT test,
        finite-difference steps; ``workers``); ``orthogonality_tol`` is
        refused (:func:`check_control`).

    Returns
    -------
    list of PairFit
        ``fixed`` is the pair's :class:`FixedPair`.

    Raises
    ------
    DesignError
        Unknown estimand; a pair with fewer common cells than fixed columns
        + 1; a random term confounded with the residual for a pair.
    OptionError
        A non-default ``control.orthogonality_tol``.
    """
    if estimand not in ESTIMANDS:
        raise OptionError(f"estimand={estimand!r}; expected one of {list(ESTIMANDS)}"
                          f"{did_you_mean(estimand, ESTIMANDS)}")
    check_control(control)
    y0 = np.where(frame.observed, frame.scores, 0.0)
    XtY, gram = design.X.T @ y0, y0.T @ y0      # X'Y and Y'Y over all cells (full pairs)
    cache: StructureCache[_Shared] = StructureCache()
    return run_pair_tasks(lambda p: _fit_one(frame, design, XtY, p[0], p[1], estimand, cache,
                                             gram, control), pairs, frame, control)


def check_control(control: Control) -> None:
    """Refuse the :class:`~mixrank.engine.control.Control` fields the p-column fit cannot act on.

    Every field acts on this path as on the intercept-only one (the one
    optimiser, its certificate and faces, the finite-difference steps, the
    per-check actions, ``workers``) except ``orthogonality_tol``: it tunes the
    balanced closed form of ``d ~ 1``, which a model x covariate fit does not
    have, so a value other than the default is an
    :class:`~mixrank.errors.OptionError` rather than silently ignored.
    """
    if control.orthogonality_tol != DEFAULT_CONTROL.orthogonality_tol:
        raise OptionError(f"Control(orthogonality_tol={control.orthogonality_tol!r}) tunes the "
                          "balanced closed form of the intercept-only fit; a model x covariate "
                          "formula has none, so it cannot act here. Leave orthogonality_tol at "
                          f"its default ({DEFAULT_CONTROL.orthogonality_tol!r})")
