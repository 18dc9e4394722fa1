"""Stage results: per-pair F tests that the gap is the same at every level of a covariate term.

Inputs: a :class:`~mixrank.results.FitResult` of an interaction formula.
Outputs: :func:`anova_table` — one row per pair and interaction term
(``model:x``): F, numerator and Satterthwaite denominator df, p-value.

The hypothesis matrices follow lmerTest's ``anova(type = 3)`` for the pair's
model ``d ~ 1 + x + ...`` with treatment coding (docs/interactions.md §5):
with a single term, the rows of the term in the Doolittle factor of
``X'X`` (lmerTest falls back to type I there); with several terms, the
"type III" contrasts of the cell-means columns projected on ``X`` and
orthogonalised against the terms that contain them.  The F statistic and its
denominator df follow lmerTest's ``contestMD``: eigen-directions of
``L Cov(beta) L'``, a Satterthwaite df per direction, combined as
``2E / (E - q)`` with ``E = sum nu / (nu - 2)``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from .._util import tidy
from ..engine.lmm.fixed import Design, FixedPair
from ..errors import DesignError
from .interactions import fixed_pairs

if TYPE_CHECKING:
    from .fit_result import FitResult

__all__ = ["anova_table", "doolittle", "type3_hypotheses", "contest_md"]


def zapsmall(x: np.ndarray, digits: int = 7) -> np.ndarray:
    """R's ``zapsmall``: round to ``digits`` significant to the largest entry."""
    mx = float(np.nanmax(np.abs(x))) if x.size else 0.0
    nd = max(0, digits - math.ceil(math.log10(mx))) if mx > 0 else digits
    return np.round(x, nd)


def doolittle(x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Unit lower-triangular L of the Doolittle decomposition ``x = L U`` (small entries zeroed)."""
    n = x.shape[0]
    L = np.eye(n)
    U = np.zeros((n, n))
    for i in range(n):
        U[i, :] = x[i, :] - L[i, :i] @ U[:i, :]
        for j in range(i + 1, n):
            v = x[j, i] - L[j, :i] @ U[:i, i]
            L[j, i] = 0.0 if abs(U[i, i]) < eps else v / U[i, i]
    L[np.abs(L) < eps] = 0.0
    return L


def _plain(name: str) -> str:
    """formulaic's treatment-coded column name as a cell-means column name: x[T.b] -> x[b]."""
    return name.replace("[T.", "[")


def type3_hypotheses(design: Design, terms: list[str], kept: list[int], XtX: np.ndarray,
                     Xt_rd: np.ndarray | None, rd_names: list[str]) -> dict[str, np.ndarray]:
    """lmerTest's type III hypothesis matrices (over the kept columns) per term.

    ``Xt_rd`` is ``X' rdX`` over the pair's cells, ``rdX`` the intercept and
    each term's full dummy coding (``rd_names`` its column names); None with a
    single term, where lmerTest uses the type I (Doolittle) rows.
    """
    names = [design.columns[k] for k in kept]
    cols = {t: [i for i, k in enumerate(kept) if k in design.term_columns[t]] for t in terms}
    if Xt_rd is None:
        Lt = doolittle(XtX).T
        return {t: Lt[cols[t], :] for t in terms}
    L = zapsmall(np.linalg.solve(XtX, Xt_rd).T)       # t(ginv(X) rdX): (ncol rdX) x p
    var = {t: set(t.split(":")) for t in terms}
    num = {t: var[t] & set(design.numeric) for t in terms}
    order = sorted(terms, key=lambda t: -len(var[t]))  # stable: R's order(decreasing = TRUE)
    for t in order:
        contains = [u for u in terms if var[t] < var[u] and num[t] == num[u]]
        if contains:
            Xc = L[:, [i for u in contains for i in cols[u]]]
            Y = L[:, cols[t]]
            coef, *_ = np.linalg.lstsq(Xc, Y, rcond=None)
            L[:, cols[t]] = zapsmall(Y - Xc @ coef)
    index = {n: i for i, n in enumerate(rd_names)}
    L = L[[index[_plain(n)] for n in names], :]
    out = {}
    for t in terms:
        Lt = L[:, cols[t]].T
        out[t] = Lt[np.abs(Lt).sum(axis=1) > 1e-8]
    return out


def contest_md(fp: FixedPair, L: np.ndarray) -> tuple[float, float, float]:
    """``(F, num_df, den_df)`` of ``L beta = 0`` (L over the kept columns), as lmerTest."""
    ff = fp.fit
    if L.shape[0] == 0:
        return float("nan"), 0.0, float("nan")
    if L.shape[0] == 1:
        est, var, df = ff.contrast(L[0])
        return est * est / var, 1.0, df
    V = L @ ff.cov @ L.T
    d, P = np.linalg.eigh(V)
    d, P = d[::-1], P[:, ::-1]
    q = int(np.sum(d > max(np.sqrt(np.finfo(float).eps) * d[0], 0.0)))
    PtL = (P.T @ L)[:q]
    if q == 1:
        est, var, df = ff.contrast(PtL[0])
        return est * est / var, 1.0, df
    t2 = (PtL @ ff.beta) ** 2 / d[:q]
    F = float(t2.sum() / q)
    nu = np.array([ff.contrast(row)[2] for row in PtL])
    if ff.exact_df is not None or np.all(np.abs(np.diff(nu)) < 1e-8):
        ddf = float(nu.mean())
    elif np.any(nu <= 2):
        ddf = 2.0
    else:
        E = float(np.sum(nu / (nu - 2)))
        ddf = 2 * E / (E - q)
    return F, float(q), ddf


def _rd(frame, design: Design, terms: list[str], mask: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """``rdX`` (intercept + each term's full dummy coding) over the pair's cells."""
    import formulaic

    cells = frame.cells.loc[mask, [c for c in design.numeric] + list(design.levels)]
    blocks = [np.ones((len(cells), 1))]
    names = ["Intercept"]
    for t in terms:
        mm = formulaic.model_matrix("0 + " + t, cells, ensure_full_rank=False)
        blocks.append(np.asarray(mm, dtype=np.float64))
        names += list(mm.model_spec.column_names)
    return np.hstack(blocks), names


def _holm(p: np.ndarray) -> np.ndarray:
    out = np.full(len(p), np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    run = 0.0
    for r, i in enumerate(order):
        run = max(run, min(1.0, (m - r) * p[i]))
        out[i] = run
    return out


def anova_table(fit: FitResult, adjust: str = "none") -> pd.DataFrame:
    """Per pair and interaction term, the F test that the gap is the same at every level.

    Returns
    -------
    pandas.DataFrame
        ``model_a, model_b, term`` (the interaction as in the formula, e.g.
        ``model:x``), ``F, num_df, den_df`` (Satterthwaite), ``p_value``,
        ``p_adjusted`` (Holm across the pairs, per term; only with
        ``adjust="holm"``), ``note`` (why a row is NaN).

    Notes
    -----
    Hypotheses and F as lmerTest's ``anova(type = 3)`` on the pair's
    ``lmer(d ~ 1 + x + ...)`` (docs/interactions.md §5).  Validated against
    lme4 1.1 + lmerTest 3.1 (``tests/reference/interactions.R``): F within
    1e-5 and the denominator df within 1e-3 relative (measured <= 1e-7).
    """
    if adjust not in ("none", "holm"):
        raise DesignError(f"adjust={adjust!r}; expected 'none' or 'holm'")
    fps = fixed_pairs(fit)
    spec = fit.frame.spec
    terms = [":".join(t) for t in getattr(spec, "fixed_terms", ())]
    labels = dict(zip(terms, spec.interaction_names))  # type: ignore[attr-defined]
    fr = fit.frame
    rows = []
    for p, fp in zip(fit.pairs, fps):
        if fp is None:   # degenerate pair: no variance estimable
            rows += [dict(model_a=p.model_a, model_b=p.model_b, term=labels[t], F=np.nan,
                          num_df=0.0, den_df=np.nan, p_value=np.nan, note=p.degenerate)
                     for t in terms]
            continue
        Xt_rd: np.ndarray | None = None
        rd_names: list[str] = []
        if len(terms) > 1:
            j, k = fr.model_index(p.model_a), fr.model_index(p.model_b)
            mask = fr.common_mask(j, k)
            rd, rd_names = _rd(fr, fp.design, terms, mask)
            X = fp.design.X if fp.own_design else fp.design.X[mask]
            Xt_rd = X[:, fp.kept].T @ rd
        XtX = fp.XtX[np.ix_(fp.kept, fp.kept)]
        hyp = type3_hypotheses(fp.design, terms, fp.kept, XtX, Xt_rd, rd_names)
        for t in terms:
            F, q, ddf = contest_md(fp, hyp[t])
            note = "" if q > 0 else f"no estimable contrast of {labels[t]} for this pair"
            rows.append(dict(model_a=p.model_a, model_b=p.model_b, term=labels[t], F=F,
                             num_df=q, den_df=ddf,
                             p_value=float(stats.f.sf(F, q, ddf)) if q > 0 else float("nan"),
                             note=note))
    out = pd.DataFrame(rows)
    if adjust == "holm":
        out["p_adjusted"] = np.nan
        for t in out["term"].unique():
            sel = (out["term"] == t).to_numpy()
            out.loc[sel, "p_adjusted"] = _holm(out.loc[sel, "p_value"].to_numpy())
        out = out[["model_a", "model_b", "term", "F", "num_df", "den_df", "p_value",
                   "p_adjusted", "note"]]
    return tidy(out, **fit._meta("anova", type="III (lmerTest)", adjust=adjust))
