"""Stage results: leaderboard scores on one common item set when models' cell sets differ.

Inputs: a :class:`~mixrank.frame.Frame` (cells x models scores, the formula's
random terms and unit).  Outputs: :func:`adjusted_scores` -- per model
missing cells, its score on the union of all cells, adjusted for the
difficulty of the cells it did not answer, with the CR2 standard error at the
unit of its unit contributions and Bell-McCaffrey df (the contrasts' method).
Contents: :func:`additive_fit` (the additive model models + cells behind
the adjustment), :func:`cell_contributions` (the adjusted estimator's
linearisation), :func:`adjusted_scores`, :func:`missing_cells`.  Statistical notes:
docs/methods.md §11 ("Scores on unbalanced item sets").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..engine.estimability import missing_cells

if TYPE_CHECKING:
    from ..frame import Frame

__all__ = ["AdjustedScore", "additive_fit", "adjusted_scores", "cell_contributions",
           "missing_cells"]


@dataclass(frozen=True)
class AdjustedScore:
    """One model's score on the union of cells (``estimate``) and its CR2 SE and df."""

    model: str
    estimate: float
    std_error: float
    df: float
    n: int                      # cells the model was scored on
    n_cells: int                # cells of the union
    groups: int                 # units (clusters of the CR2 variance)


def additive_fit(Y: np.ndarray, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares fit of ``y[c, m] = mu_m + b_c`` on the observed cells (models x cells).

    Parameters
    ----------
    Y : ndarray (cells, models)
        Cell scores (any value where unobserved).
    obs : ndarray of bool (cells, models)
        Which cells each model was scored on.

    Returns
    -------
    (mu, b)
        ``mu`` per model and ``b`` per cell (its difficulty), determined up
        to a constant moved between them (which no score depends on).

    Notes
    -----
    Eliminating ``b_c = mean over the models scored on c of (y - mu)`` leaves
    the M x M system ``(diag(n_m) - W' diag(1/n_c) W) mu = sum_c w_mc (y_mc -
    ybar_c)``, solved by least squares (its null space is the constant, plus
    one direction per group of models that share no cell).
    """
    W = obs.astype(float)
    Yz = np.where(obs, Y, 0.0)
    n_c = W.sum(axis=1)
    inv = np.where(n_c > 0, 1.0 / np.maximum(n_c, 1), 0.0)
    ybar = Yz.sum(axis=1) * inv
    L = np.diag(W.sum(axis=0)) - (W * inv[:, None]).T @ W
    rhs = (W * (Yz - ybar[:, None])).sum(axis=0)
    mu = np.linalg.lstsq(L, rhs, rcond=None)[0]
    b = ybar - (W @ mu) * inv
    return mu, b


def _scores(Y: np.ndarray, obs: np.ndarray, which: list[int]) -> np.ndarray:
    """``mu_m + mean over the union of b`` for the models ``which``."""
    mu, b = additive_fit(Y, obs)
    return mu[which] + b.mean()


def cell_contributions(Y: np.ndarray, obs: np.ndarray, which: list[int]) -> np.ndarray:
    """Each cell's part of the adjusted scores' deviations: ``z[c, i] = sum_m a_i[c, m]
    (y[c, m] - s_m)`` for the models ``which`` (cells x len(which)).

    ``a_i`` are the weights of the adjusted score of model ``which[i]`` as a linear function
    of every observed score (``score = sum a_i[c, m] y[c, m]``; the additive fit's map,
    differentiated in closed form) and ``s_m`` every model's adjusted score.  The weights
    of a model's own cells sum to 1 and those of each other model to 0, so the
    contributions sum to 0 over the cells; every observed cell carries a total weight
    ``sum_m a_i[c, m] = 1 / N`` (N cells in the union), the plain mean's.

    Notes
    -----
    With ``L`` and ``n_c`` of :func:`additive_fit`, ``u = 1/N`` per cell, ``g = e_j -
    W' (u / n_c)`` and ``h = L^+ g``, the weight of ``y[c, m]`` is ``W[c, m] (h_m + (u_c -
    (W h)_c) / n_c)``.  So ``z = (W R) h + (u - W h) rs / n_c`` with ``R = y - s`` and
    ``rs`` its row sums over the observed models: no cells x models x models array.
    """
    W = obs.astype(float)
    n_c = W.sum(axis=1)
    inv = np.where(n_c > 0, 1.0 / np.maximum(n_c, 1), 0.0)
    N = int((n_c > 0).sum())
    u = np.where(n_c > 0, 1.0 / max(N, 1), 0.0)
    L = np.diag(W.sum(axis=0)) - (W * inv[:, None]).T @ W
    mu, b = additive_fit(Y, obs)
    s = mu + b[n_c > 0].mean()
    R = np.where(obs, Y - s[None, :], 0.0)
    G = -np.outer(W.T @ (inv * u), np.ones(len(which)))
    G[which, np.arange(len(which))] += 1.0
    H = np.linalg.pinv(L) @ G                                   # models x len(which)
    rs = R.sum(axis=1)
    return R @ H + ((u[:, None] - W @ H) * (inv * rs)[:, None])


def adjusted_scores(frame: Frame, ratios: dict[str, float] | None = None
                    ) -> list[AdjustedScore]:
    """Scores on the union of cells for every model missing some of them.

    Parameters
    ----------
    frame : Frame
    ratios : dict, optional
        Per model, its own fit's unit component over the sum of the others (the CR2
        working covariance of the Bell-McCaffrey df, as for a pair); default 0.

    Returns
    -------
    list of AdjustedScore
        One per model with missing cells (in the frame's model order): its
        ``estimate = mu_m + mean_c b_c`` over all cells of the frame (the
        additive fit of :func:`additive_fit`; a model scored on every cell
        would get its plain mean exactly); ``std_error`` the CR2 variance at the
        formula's unit of the estimate's unit contributions (cells when the formula
        has no random term) and ``df`` Bell-McCaffrey's, capped at units - 1, as a
        pair's (:func:`~mixrank.engine.lmm.unit_se.cr2_bell_mccaffrey`).

    Notes
    -----
    The missing cells are predicted as ``mu_m + b_c``: the model's level
    plus the cell's difficulty, estimated from the models that were scored
    on that cell (lme4's prediction with the subject and item terms, in the
    limit of an item variance large against the residual one: a cell other
    models answered tells its difficulty directly, and no subject-level
    shrinkage can mistake an easy subject for an average one).

    The estimate is linear in every observed score, ``sum a[c, m] y[c, m]``.  Its unit
    contributions ``e_t = sum_{c in t} sum_m a[c, m] (y[c, m] - s_m)``
    (:func:`cell_contributions`) carry the model's own cells and, for the cells it lacks,
    the other models' scores that gave their difficulty.  Every cell's total weight is
    ``1/N``, so unit t weighs ``W_t = N_t / N`` as in the plain mean, and ``V = sum_t
    e_t^2 / (1 - W_t)`` is the CR2 variance of the plain mean when nothing is missing
    (docs/methods.md §11).
    """
    from ..engine.lmm.unit_se import _bell_mccaffrey_df, _renumbered, cr2_df_parts

    miss = missing_cells(frame)
    which = [j for j, m in enumerate(frame.models) if m in miss]
    if not which:
        return []
    Y = np.asarray(frame.scores, dtype=float)
    obs = np.asarray(frame.observed, dtype=bool)
    spec = frame.spec
    full = _scores(Y, obs, which)
    seen = obs.any(axis=1)
    Z = cell_contributions(Y, obs, which)[seen]
    N = int(seen.sum())
    if spec.unit is not None:
        codes = _renumbered(np.asarray(frame.term_codes[spec.unit], dtype=np.int64)[seen],
                            int(frame.term_levels[spec.unit]))
    else:
        codes = np.arange(N, dtype=np.int64)
    T = int(codes.max()) + 1 if N else 0
    n_obs = frame.n_observed()
    out = []
    if T < 3:
        var = np.full(len(which), np.nan)
        dfs = np.full(len(which), np.nan)
    else:
        e = np.stack([np.bincount(codes, weights=Z[:, i], minlength=T)
                      for i in range(len(which))])
        Wt = np.bincount(codes, minlength=T) / N
        var = np.sum(e * e / np.clip(1.0 - Wt, 1e-12, None)[None, :], axis=1)
        if spec.unit is None:
            dfs = np.full(len(which), float(N - 1))   # HC2 of a mean: Bell-McCaffrey df N - 1
        else:
            parts = cr2_df_parts(codes, np.full(N, 1.0 / N), T)
            r = ratios or {}
            dfs = np.array([min(_bell_mccaffrey_df(parts[2], r.get(frame.models[j], 0.0)),
                                float(T - 1)) for j in which])
    for i, j in enumerate(which):
        out.append(AdjustedScore(model=frame.models[j], estimate=float(full[i]),
                                 std_error=float(np.sqrt(var[i])), df=float(dfs[i]),
                                 n=int(n_obs[j]), n_cells=int(frame.n_cells), groups=T))
    return out
