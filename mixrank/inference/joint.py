"""Stage inference: the joint covariance of all fitted pairwise contrasts.

Inputs: a :class:`~mixrank.frame.Frame`, its fitted pairs
(:class:`~mixrank.engine.records.PairFit`: estimate, variance, variance
components), the fit's method and estimand.  Outputs: :func:`contrast_covariance`
(the P x P covariance of the P pair estimates) and :func:`pair_weights` (each
estimate as a linear combination of its pair's cell differences).

Derivation (docs/model_scores.md §3).  Every pair estimate is linear in the
cell scores, ``est_h = w_h' (y_j - y_k)`` over the pair's common cells, with
``w_h`` the GLS weights ``V_h^-1 1 / (1' V_h^-1 1)`` (estimand ``gls``), ``1/n``
(``cells``) or ``1 / (T n_u)`` (``units``); the weights are held at their
fitted values, as for each pair's own standard error.  The joint model of
the scores is ``y_jc = mu_j + sum_r b_{r,j,g_r(c)} + e_jc`` with the random
effects of different models on the same level correlated:
``Cov(b_{r,j,g}, b_{r,l,g}) = C_r[j, l]`` (likewise ``C_e`` for the residual).
A pair's fitted component is the variance of the difference,
``v_r[j, k] = C_r[j,j] + C_r[k,k] - 2 C_r[j,k]``, so the covariance of two
pairs' difference effects follows by polarisation:
``gamma_r(h, g) = (v_r[j,m] + v_r[k,l] - v_r[j,l] - v_r[k,m]) / 2`` for
``h = (j, k)``, ``g = (l, m)`` (separately fitted pairs need not be jointly
consistent, so the result is projected to PSD once, at the end, on the
correlation scale).  Then::

    Cov(est_h, est_g) = sum_r gamma_r(h, g) (Z_r' w_h)' (Z_r' w_g) + gamma_e(h, g) w_h' w_g

which reproduces each pair's own variance on the diagonal exactly; the
projection clips the negative eigenvalues of the correlation matrix and
rescales it to a unit diagonal, so the diagonal stays each pair's own.  ``method="aggregate"``: the pairwise-complete
covariance of the unit means, scaled like the pairs' own ``s^2 / T``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from mixrank.engine.lmm.estimand import estimand_weights
from mixrank.engine.records import missing_pairs
from mixrank.errors import DesignError
from mixrank.frame import Frame
from mixrank.inference.ranks.maxt import joint_covariance

__all__ = ["contrast_covariance", "pair_weights", "MAX_WEIGHT_ENTRIES"]

#: Largest pairs x cells weight matrix held in memory (8 bytes each, 400 MB).
MAX_WEIGHT_ENTRIES = 50_000_000


def _compact(codes: np.ndarray) -> tuple[np.ndarray, int]:
    u, inv = np.unique(codes, return_inverse=True)
    return inv.astype(np.int64), len(u)


def _gls_weights(n: int, codes: list[np.ndarray], comps: list[float], sigma2: float) -> np.ndarray:
    """``V^-1 1 / (1' V^-1 1)`` for ``V = sigma2 I + sum_r comps_r Z_r Z_r'`` (Woodbury)."""
    blocks, prec = [], []
    for c, s2 in zip(codes, comps):
        if not (np.isfinite(s2) and s2 > 0):
            continue
        cc, L = _compact(c)
        blocks.append(sp.csc_matrix((np.ones(len(cc)), (np.arange(len(cc)), cc)), shape=(len(cc), L)))
        prec.append(np.full(L, sigma2 / s2))
    one = np.ones(n)
    if blocks:
        Z = sp.hstack(blocks).tocsc()
        A = (Z.T @ Z + sp.diags(np.concatenate(prec))).tocsc()
        x = spla.splu(A).solve(np.asarray(Z.T @ one).ravel())
        vinv1 = one - Z @ x
    else:
        vinv1 = one
    return vinv1 / vinv1.sum()


def pair_weights(frame: Frame, pairs: Sequence[Any], method: str, estimand: str) -> np.ndarray:
    """Weights ``W`` (P x n_cells): ``est_h = W[h] @ (y_j - y_k)`` (zero off the common cells)."""
    P, n = len(pairs), frame.n_cells
    if P * n > MAX_WEIGHT_ENTRIES:
        raise DesignError(f"the joint covariance of {P} pairs over {n:,} cells needs a "
                          f"{P} x {n:,} weight matrix (over {MAX_WEIGHT_ENTRIES:,} entries); use "
                          "adjust='holm' or 'bh', or fit fewer pairs (pairs=[...])")
    spec = frame.spec
    names = list(spec.term_names)
    pos = {m: i for i, m in enumerate(frame.models)}
    W = np.zeros((P, n))
    for h, p in enumerate(pairs):
        idx = np.flatnonzero(frame.common_mask(pos[p.model_a], pos[p.model_b]))
        codes = [frame.term_codes[t][idx] for t in names]
        how = "units" if method == "aggregate" else estimand
        if (how == "units" and not names) or p.degenerate:  # degenerate: estimate = mean d
            how = "cells"
        if how in ("cells", "units"):   # the one definition (engine/lmm/estimand.py)
            w = estimand_weights(how, len(idx), _compact(codes[0])[0] if how == "units" else None)
        else:
            sigma2 = float(p.components.get("residual", np.nan))
            if not (np.isfinite(sigma2) and sigma2 > 0):
                raise DesignError(f"pair {p.model_a!r} vs {p.model_b!r} has residual variance "
                                  f"{sigma2!r}; the GLS weights need a positive residual")
            w = _gls_weights(len(idx), codes, [float(p.components.get(t, np.nan)) for t in names], sigma2)
        W[h, idx] = w
    return W


def _component_v(pairs: Sequence[Any], models: list[str], key: str) -> np.ndarray:
    """The pairwise variances ``v[j, k]`` of one component (NaN, a dropped term: 0)."""
    pos = {m: i for i, m in enumerate(models)}
    v = np.zeros((len(models), len(models)))
    for p in pairs:
        j, k = pos[p.model_a], pos[p.model_b]
        x = float(p.components.get(key, np.nan))
        v[j, k] = v[k, j] = x if np.isfinite(x) else 0.0
    return v


def _component_gamma(pairs: Sequence[Any], models: list[str], key: str) -> np.ndarray:
    """``gamma(h, g) = (v[j,m] + v[k,l] - v[j,l] - v[k,m]) / 2`` of one component."""
    v = _component_v(pairs, models, key)
    pos = {m: i for i, m in enumerate(models)}
    a = np.array([pos[p.model_a] for p in pairs])
    b = np.array([pos[p.model_b] for p in pairs])
    return 0.5 * (v[np.ix_(a, b)] + v[np.ix_(b, a)] - v[np.ix_(a, a)] - v[np.ix_(b, b)])


def _check_complete(pairs: Sequence[Any]) -> list[str]:
    models = sorted({m for p in pairs for m in (p.model_a, p.model_b)})
    missing = missing_pairs(pairs, models)
    if missing:
        raise DesignError(f"the joint covariance of the contrasts needs every pair among the "
                          f"models compared; {len(missing)} pair(s) were not fitted, e.g. "
                          f"{missing[:3]}. Refit with pairs=None, or use adjust='holm'")
    return models


def _aggregate_cov(frame: Frame, pairs: Sequence[Any]) -> np.ndarray:
    """Pairwise-complete covariance of the unit-mean differences, scaled by 1 / (T_h T_g)."""
    unit = frame.spec.unit
    pos = {m: i for i, m in enumerate(frame.models)}
    if unit is not None:
        codes, L = frame.term_codes[unit], frame.term_levels[unit]
    else:
        codes, L = np.arange(frame.n_cells), frame.n_cells
    U = np.full((L, len(pairs)), np.nan)
    for h, p in enumerate(pairs):
        j, k = pos[p.model_a], pos[p.model_b]
        mask = frame.common_mask(j, k)
        d = frame.scores[mask, j] - frame.scores[mask, k]
        cnt = np.bincount(codes[mask], minlength=L)
        s = np.bincount(codes[mask], weights=d, minlength=L)
        U[cnt > 0, h] = s[cnt > 0] / cnt[cnt > 0]
    ok = np.isfinite(U)
    T = ok.sum(axis=0).astype(float)
    X = np.where(ok, U - np.nanmean(U, axis=0), 0.0)
    both = ok.T.astype(float) @ ok.astype(float)
    S = (X.T @ X) / np.maximum(both - 1.0, 1.0)
    return S * both / np.outer(T, T)


def contrast_covariance(frame: Frame, pairs: Sequence[Any], *, method: str = "reml",
                        estimand: str = "gls") -> tuple[np.ndarray, dict[str, float]]:
    """Joint covariance of the pair estimates (in the order of ``pairs``).

    Parameters
    ----------
    frame : Frame
    pairs : sequence of PairFit
        Every pair among the models they involve (DesignError otherwise).
    method, estimand : str
        As the fit's.

    Returns
    -------
    cov : ndarray (P, P)
        PSD covariance of the estimates (orientation ``model_a - model_b``);
        its diagonal is each pair's own variance (zero rows for pairs with
        no variance).
    info : dict
        ``psd_clipped``: share of the correlation matrix's spectrum (absolute
        mass) removed by the projection to PSD; ``diag_rel``: largest change
        of a diagonal entry of the correlation by the clipping, before it is
        rescaled to 1 (0 when nothing was clipped); ``component_inconsistency``:
        the largest such share of one component's model-level matrix
        ``-J v_r J / 2`` (0 when the pairs' components are jointly
        consistent, e.g. all pairs on the same cells with interior fits).

    Raises
    ------
    DesignError
        Pairs missing among the models compared; a weight matrix over
        :data:`MAX_WEIGHT_ENTRIES` entries; a non-positive residual.
    """
    models = _check_complete(pairs)
    own = np.array([p.variance for p in pairs], dtype=float)
    if method == "aggregate":
        cov = _aggregate_cov(frame, pairs)
        clipped = 0.0
    else:
        W = pair_weights(frame, pairs, method, estimand)
        keys = list(frame.spec.term_names)
        cov = _component_gamma(pairs, models, "residual") * (W @ W.T)
        for t in keys:
            Zt = sp.csc_matrix((np.ones(frame.n_cells), (np.arange(frame.n_cells),
                                frame.term_codes[t])), shape=(frame.n_cells, frame.term_levels[t]))
            S = np.asarray((Zt.T @ W.T).T)
            cov += _component_gamma(pairs, models, t) * (S @ S.T)
        clipped = max(joint_covariance(_component_v(pairs, models, t))[1]
                      for t in keys + ["residual"])
    return _project(0.5 * (cov + cov.T), own, float(clipped))


def _project(cov: np.ndarray, own: np.ndarray, inconsistency: float) -> tuple[np.ndarray, dict]:
    """Nearest PSD matrix on the correlation scale, rescaled to the pairs' own variances.

    Projecting the correlation (not the covariance) treats every pair alike
    whatever the size of its variance; pairs with no variance (degenerate
    fits) are constants: zero rows.
    """
    live = np.isfinite(own) & (own > 0)
    out = np.zeros_like(cov)
    info = dict(diag_rel=0.0, component_inconsistency=inconsistency, psd_clipped=0.0)
    if not live.any():
        return out, info
    sd = np.sqrt(own[live])
    R = cov[np.ix_(live, live)] / np.outer(sd, sd)
    w, U = np.linalg.eigh(R)
    tot = float(np.sum(np.abs(w)))
    info["psd_clipped"] = float(np.sum(np.abs(w[w < 0])) / tot) if tot > 0 else 0.0
    Rp = (U * np.clip(w, 0.0, None)) @ U.T
    dg = np.sqrt(np.clip(np.diag(Rp), 1e-300, None))
    info["diag_rel"] = float(np.max(np.abs(np.diag(R) - np.diag(Rp))))
    Rp = Rp / np.outer(dg, dg)
    out[np.ix_(live, live)] = Rp * np.outer(sd, sd)
    return out, info
