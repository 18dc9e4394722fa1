"""Stage engine: cross-check adapter fitting each pair with statsmodels MixedLM.

Inputs: :class:`~mixrank.frame.Frame` and index pairs into ``frame.models``.
Outputs: one :class:`~mixrank.engine.records.PairFit` per pair, with the same
fields as the native engine.

Contents: :func:`fit_pairs_statsmodels`.  The paired differences
``d = y_a - y_b`` over the pair's common cells are fitted by REML with
statsmodels' variance-components interface: one group spanning all cells
(``groups = 1``) and one variance component per random term
(``vc_formula = {"t0": "0 + C(t0)", ...}``, ``t0`` holding the term's level
codes, so crossed and interaction terms need no special handling).  This
engine exists to cross-check the native engine; it is slow (dense
random-effects algebra) and meant for designs of a few thousand cells.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import scipy.linalg as la

from ...errors import DesignError
from ...frame import Frame
from ..lmm.objective import make_objective
from ..lmm.satterthwaite import satterthwaite
from ..records import CrossCheck, PairFit
from ..structure import build_structure, pair_sums

__all__ = ["fit_pairs_statsmodels", "gls_variance", "BOUNDARY_THETA", "GRADIENT_TOL"]

# A component whose relative SD sigma_r / sigma is below this is reported as
# a boundary (singular) component; the same tolerance as lme4's isSingular().
BOUNDARY_THETA = 1e-4
# statsmodels flags a polished optimum as "not converged" when BFGS loses
# precision (line search) at gradients of 1e-8 to 1e-5; an optimum whose REML
# score (max absolute value over statsmodels' variance parameters) is below
# this counts as converged (scipy's default BFGS gtol is 1e-5).
GRADIENT_TOL = 1e-4


def _compact(codes: np.ndarray) -> tuple[np.ndarray, int]:
    levels, inv = np.unique(codes, return_inverse=True)
    return inv.astype(np.int64), len(levels)


def gls_variance(codes: list[np.ndarray], levels: list[int], theta: np.ndarray,
                 sigma2: float) -> float:
    """``(1' V^-1 1)^-1`` with ``V = sigma2 (I + sum_r theta_r^2 Z_r Z_r')``.

    Dense Woodbury form: ``1'V^-1 1 = (n - c' L (L Z'Z L + I)^-1 L c) / sigma2``
    with ``L = diag(theta)`` per level and ``c`` the level counts.
    """
    n = len(codes[0])
    offs = np.cumsum([0] + list(levels))
    q = int(offs[-1])
    Z = np.zeros((n, q))
    rows = np.arange(n)
    for r, c in enumerate(codes):
        Z[rows, offs[r] + c] = 1.0
    lam = np.concatenate([np.full(L, t) for L, t in zip(levels, theta, strict=True)])
    ZL = Z * lam[None, :]
    A = ZL.T @ ZL
    A[np.diag_indices_from(A)] += 1.0
    lc = ZL.sum(axis=0)
    cf = la.cho_factor(A, lower=True, check_finite=False)
    rx2 = n - float(lc @ la.cho_solve(cf, lc, check_finite=False))
    return sigma2 / rx2


def _run(model: Any, **kwargs: Any) -> tuple[Any, list[str]]:
    """``model.fit(reml=True, **kwargs)`` and the distinct warning messages it raised."""
    with warnings.catch_warnings(record=True) as wlist:
        warnings.simplefilter("always")
        res = model.fit(reml=True, **kwargs)
    caught: list[str] = []
    for w in wlist:
        if issubclass(w.category, Warning) and not issubclass(w.category, FutureWarning):
            msg = " ".join(str(w.message).split())
            if msg not in caught:
                caught.append(msg)
    return res, caught


def _fit_one(frame: Frame, j: int, k: int) -> PairFit:
    from statsmodels.regression.mixed_linear_model import MixedLM

    spec = frame.spec
    names = list(spec.term_names)
    a, b = frame.models[j], frame.models[k]
    mask = frame.common_mask(j, k)
    n = int(mask.sum())
    if n < 3:
        raise DesignError(f"models {a!r} and {b!r} share {n} cell(s); the statsmodels engine "
                          "needs at least 3 common cells. Exclude the pair with pairs=[...]")
    d = (frame.scores[:, j] - frame.scores[:, k])[mask]
    if float(np.ptp(d)) == 0.0:
        raise DesignError(f"all paired differences of {a!r} vs {b!r} are identical; no variance "
                          "can be estimated. Compare them with an exact test instead")
    codes, levels = [], []
    for t in names:
        c, L = _compact(frame.term_codes[t][mask])
        codes.append(c)
        levels.append(L)
    data = pd.DataFrame({"d": d, **{f"t{i}": c for i, c in enumerate(codes)}})
    vcf = {f"t{i}": f"0 + C(t{i})" for i in range(len(names))}
    model = MixedLM.from_formula("d ~ 1", data=data, groups=np.ones(n), re_formula="0",
                                 vc_formula=vcf)
    res, caught = _run(model)
    # statsmodels' default stopping rule leaves errors of ~1e-5 in the
    # components: polish with a tight BFGS from its optimum, keep the better.
    try:
        pol, pcaught = _run(model, start_params=res.params_object, method=["bfgs"],
                            gtol=1e-10, maxiter=2000)
        if np.isfinite(pol.llf) and pol.llf > res.llf:
            res, caught = pol, pcaught
    except (np.linalg.LinAlgError, ValueError):  # pragma: no cover - keep the first fit
        pass
    sigma2 = float(res.scale)
    vc_by_key = dict(zip(model.exog_vc.names, (float(v) for v in np.asarray(res.vcomp)),
                         strict=True))
    variances = np.array([max(vc_by_key[f"t{i}"], 0.0) for i in range(len(names))])
    theta = np.sqrt(variances / sigma2)
    estimate = float(np.asarray(res.fe_params)[0])
    variance = gls_variance(codes, levels, theta, sigma2)
    st = build_structure(codes, levels, names)
    ps = pair_sums(st, d)
    df, _, _ = satterthwaite(make_objective(st, ps), theta[list(st.order)], math.sqrt(sigma2))
    try:
        score = np.asarray(model.score(res.params_object, profile_fe=False))[model.k_fe:]
        gradient = float(np.max(np.abs(score))) if score.size else 0.0
    except Exception:  # pragma: no cover - diagnostic only
        gradient = float("nan")
    comps = {t: float(v) for t, v in zip(names, variances, strict=True)}
    comps["residual"] = sigma2
    boundary = tuple(t for t, th in zip(names, theta, strict=True) if th < BOUNDARY_THETA)
    return PairFit(model_a=a, model_b=b, n=n, only_a=int(frame.observed[:, j].sum()) - n,
                   only_b=int(frame.observed[:, k].sum()) - n,
                   estimate=estimate, variance=variance, df=float(df),
                   sigma_d=float(np.std(d, ddof=1)), components=comps,
                   criterion=float(-2.0 * res.llf),
                   converged=bool(res.converged) or gradient <= GRADIENT_TOL,
                   boundary=boundary, gradient=gradient,
                   message="; ".join(caught) if caught else "ok", nfev=0,
                   crosscheck=CrossCheck(engine="statsmodels",
                                         df_method="mixrank satterthwaite at statsmodels' estimates",
                                         bse_fe=float(np.asarray(res.bse_fe)[0])))


def fit_pairs_statsmodels(frame: Frame, pairs: list[tuple[int, int]], *,
                          estimand: str = "gls") -> list[PairFit]:
    """Fit ``pairs`` with statsmodels MixedLM (REML), as a cross-check engine.

    Parameters
    ----------
    frame : Frame
        The encoded data (:func:`mixrank.build_frame`).
    pairs : list of (int, int)
        Index pairs ``(j, k)`` into ``frame.models``; ``d = y_j - y_k``.
    estimand : {"gls"}
        Only the GLS fixed effect is available from statsmodels.

    Returns
    -------
    list of PairFit
        One per pair, fields as for the native engine: ``estimate`` (GLS
        intercept ``fe_params``), ``variance`` (``(1'V^-1 1)^-1`` at
        statsmodels' components), ``df`` (Satterthwaite, see Notes),
        ``components`` (``vcomp`` per term and ``scale`` as ``residual``),
        ``criterion`` (``-2 llf``, the REML criterion on lme4's scale),
        ``converged`` (statsmodels' flag), ``boundary`` (terms with
        ``sigma_r / sigma < 1e-4``, lme4's ``isSingular`` tolerance),
        ``gradient`` (max absolute REML score over statsmodels' variance
        parameters), ``message`` (statsmodels' warnings) and ``nfev = 0``
        (not reported by statsmodels).

    Raises
    ------
    DesignError
        ``estimand`` other than ``"gls"``, a formula without random terms,
        fewer than 3 common cells, or identical differences.

    Notes
    -----
    statsmodels has no Satterthwaite df: ``df`` is lmerTest's Satterthwaite
    approximation computed by :func:`mixrank.engine.lmm.satterthwaite.satterthwaite` (the
    native engine's code) at statsmodels' variance estimates, so it differs
    from the native df only through the estimates.  ``variance`` uses the GLS
    formula of docs/methods.md §3 rather than statsmodels' ``bse_fe`` (which
    inverts the joint information of all parameters and differs from lme4's
    SE by about 1e-5 relative); ``bse_fe`` is kept in ``crosscheck.bse_fe``.
    statsmodels' REML log-likelihood equals ``-REMLcrit / 2`` of lme4, so
    criteria are comparable across engines.

    Validated against the native engine (``tests/engine/test_cross_engines.py``)
    with the looser tolerances of ``tests/reference/tolerances.py``.

    References
    ----------
    statsmodels ``MixedLM`` (variance components via ``vc_formula``);
    Kuznetsova, Brockhoff & Christensen (2017), lmerTest, J. Stat. Softw. 82(13).
    """
    if estimand != "gls":
        raise DesignError(f"estimand={estimand!r} is not available from the statsmodels engine, "
                          "which reports only the GLS fixed effect; use estimand='gls' or "
                          "engine='native'")
    if not frame.spec.random:
        raise DesignError(f"formula {frame.spec.formula!r} has no random term; the statsmodels "
                          "engine fits mixed models only. Use engine='native' (a paired t-test "
                          "on cells) or add a term such as (1|subject)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return [_fit_one(frame, j, k) for j, k in pairs]
