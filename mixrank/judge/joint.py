"""Stage judge: the joint covariance of the corrected contrasts (docs/judge.md §3).

Inputs: :class:`~mixrank.judge.data.JudgeData`, the fitted pairs and their
PPI++ estimates.  Outputs: :func:`contrast_covariance_ppi` -- the (P, P)
covariance of the corrected contrasts that ``contrasts(adjust="maxt")`` and
``rank_probabilities`` draw from.

Each contrast is a sum of per-cell influences (docs/judge.md §3); two
contrasts co-vary through the cells, and the units, they share.  The
cluster-robust cross-products of the influences summed within the unit's
levels (with one unit each cell's influence scaled by its CR2 factor, as in
:func:`~mixrank.judge.ppi.ppi_mean`) (multiway by inclusion-exclusion, as for one contrast) give the
correlation; it is projected to the nearest PSD correlation (negative
eigenvalues clipped, diagonal rescaled to 1) and scaled by each contrast's
own variance, so the diagonal is exactly the reported variances.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine.records import PairFit
from .data import JudgeData
from .estimate import Corrected
from .ppi import CR2

__all__ = ["pair_influence", "contrast_covariance_ppi"]


def pair_influence(jd: JudgeData, pf: PairFit, c: Corrected) -> np.ndarray:
    """Per-cell influence on the pair's corrected estimate (zeros off its cells or without a
    correction), orientation ``model_a - model_b`` of ``pf``."""
    fr = jd.frame
    out = np.zeros(fr.n_cells)
    if c.ppi is None:
        return out
    j, k = fr.model_index(pf.model_a), fr.model_index(pf.model_b)
    common = fr.common_mask(j, k)
    lab = common & jd.labelled[:, j] & jd.labelled[:, k]
    unl = common & ~lab
    lam = c.ppi.lam
    yhat = fr.scores[:, j] - fr.scores[:, k]
    r = jd.gold[lab, j] - jd.gold[lab, k] - lam * yhat[lab]
    out[lab] = (r - r.mean()) / lab.sum()
    if unl.any():
        out[unl] = lam * (yhat[unl] - yhat[unl].mean()) / unl.sum()
    terms = fr.spec.term_names
    if len(terms) == 1:   # one unit: the CR2 scaling of ppi_mean, so the diagonal is its variance
        codes = fr.term_codes[terms[0]].astype(np.int64)
        cr2 = CR2(codes[lab], codes[unl], int(lab.sum()), int(unl.sum()))
        out[lab] *= cr2.sL[codes[lab]]
        out[unl] *= cr2.sU[codes[unl]]
    return out


def contrast_covariance_ppi(jd: JudgeData, pairs: Sequence[PairFit],
                            corrections: Sequence[Corrected]) -> tuple[np.ndarray, dict[str, Any]]:
    """Joint covariance of the corrected contrasts (pair order); zero rows for pairs
    without a correction.  ``info``: ``psd_clipped`` (share of the correlation's
    spectrum removed by the projection)."""
    fr = jd.frame
    Psi = np.column_stack([pair_influence(jd, p, c) for p, c in zip(pairs, corrections)])
    terms = list(fr.spec.term_names)
    own = np.array([p.variance for p in pairs], dtype=float)
    live = own > 0
    if not terms:
        S = Psi.T @ Psi
    else:
        S = np.zeros((Psi.shape[1], Psi.shape[1]))
        oneway = []
        for r in range(1, len(terms) + 1):
            for sub in itertools.combinations(terms, r):
                codes = (fr.term_codes[sub[0]].astype(np.int64) if r == 1 else np.unique(
                    np.column_stack([fr.term_codes[t] for t in sub]), axis=0,
                    return_inverse=True)[1].ravel())
                sums = np.zeros((int(codes.max()) + 1, Psi.shape[1]))
                np.add.at(sums, codes, Psi)
                part = sums.T @ sums
                S += (1 if r % 2 else -1) * part
                if r == 1:
                    oneway.append(part)
        if np.any(np.diag(S)[live] <= 0):   # multiway sum not positive: the widest one-way
            S = max(oneway, key=lambda m: float(np.trace(m)))
    ok = live & (np.diag(S) > 0)
    R = np.zeros_like(S)
    sd = np.sqrt(np.diag(S)[ok])
    R[np.ix_(ok, ok)] = S[np.ix_(ok, ok)] / np.outer(sd, sd)
    lone = np.flatnonzero(live & ~ok)
    R[lone, lone] = 1.0                       # no influence left: uncorrelated with the rest
    w, U = np.linalg.eigh(R[np.ix_(live, live)]) if live.any() else (np.zeros(0), None)
    clipped = float(np.abs(np.minimum(w, 0)).sum() / np.abs(w).sum()) if w.size else 0.0
    if U is not None and clipped > 0:
        Rl = (U * np.clip(w, 0, None)) @ U.T
        d = np.sqrt(np.clip(np.diag(Rl), 1e-300, None))
        R[np.ix_(live, live)] = Rl / np.outer(d, d)
    root = np.sqrt(np.where(live, own, 0.0))
    return R * np.outer(root, root), dict(psd_clipped=clipped)
