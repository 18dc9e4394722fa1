"""Stage results: leaderboard scores on one common item set when models' cell sets differ.

Inputs: a :class:`~mixrank.frame.Frame` (cells x models scores, the formula's
random terms and unit).  Outputs: :func:`adjusted_scores` -- per model
missing cells, its score on the union of all cells, adjusted for the
difficulty of the cells it did not answer, with a unit-level jackknife
standard error.
Contents: :func:`additive_fit` (the additive model models + cells behind
the adjustment),
:func:`adjusted_scores`, :func:`missing_cells`.  Statistical notes:
docs/methods.md §11 ("Scores on unbalanced item sets").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..engine.estimability import missing_cells

if TYPE_CHECKING:
    from ..frame import Frame

__all__ = ["AdjustedScore", "additive_fit", "adjusted_scores", "missing_cells", "MAX_GROUPS"]

#: Most delete-a-group jackknife groups (units are dealt round-robin into them).
MAX_GROUPS = 50


@dataclass(frozen=True)
class AdjustedScore:
    """One model's score on the union of cells (``estimate``) and its jackknife SE and df."""

    model: str
    estimate: float
    std_error: float
    df: float
    n: int                      # cells the model was scored on
    n_cells: int                # cells of the union
    groups: int                 # jackknife groups (units, or groups of units)


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


def adjusted_scores(frame: Frame) -> list[AdjustedScore]:
    """Scores on the union of cells for every model missing some of them.

    Returns
    -------
    list of AdjustedScore
        One per model with missing cells (in the frame's model order): its
        ``estimate = mu_m + mean_c b_c`` over all cells of the frame (the
        additive fit of :func:`additive_fit`; a model scored on every cell
        would get its plain mean exactly),
        ``std_error`` from the delete-a-group jackknife over the formula's
        unit (its levels dealt into at most :data:`MAX_GROUPS` groups;
        cells when the formula has no random term) and ``df = groups - 1``.

    Notes
    -----
    The missing cells are predicted as ``mu_m + b_c``: the model's level
    plus the cell's difficulty, estimated from the models that were scored
    on that cell (lme4's prediction with the subject and item terms, in the
    limit of an item variance large against the residual one: a cell other
    models answered tells its difficulty directly, and no subject-level
    shrinkage can mistake an easy subject for an average one).  The
    jackknife recomputes the whole fit without each group of units, so the
    SE carries the variance of the difficulties as well as of the model's
    own cells.
    """
    miss = missing_cells(frame)
    which = [j for j, m in enumerate(frame.models) if m in miss]
    if not which:
        return []
    Y = np.asarray(frame.scores, dtype=float)
    obs = np.asarray(frame.observed, dtype=bool)
    spec = frame.spec
    full = _scores(Y, obs, which)
    unit = (np.asarray(frame.term_codes[spec.unit], dtype=np.int64) if spec.unit is not None
            else np.arange(frame.n_cells, dtype=np.int64))
    levels = np.unique(unit)
    K = int(min(len(levels), MAX_GROUPS))
    group_of = np.zeros(int(unit.max()) + 1, dtype=np.int64)
    group_of[levels] = np.arange(len(levels)) % max(K, 1)
    g = group_of[unit]
    reps = np.full((K, len(which)), np.nan)
    for k in range(K):
        keep = g != k
        o = obs[keep]
        if o[:, which].sum(axis=0).min() == 0:
            continue                       # a model without cells once the group is left out
        reps[k] = _scores(Y[keep], o, which)
    out = []
    n_obs = frame.n_observed()
    for i, j in enumerate(which):
        col = reps[:, i][np.isfinite(reps[:, i])]
        Kc = len(col)
        se = float(np.sqrt((Kc - 1) / Kc * np.sum((col - col.mean()) ** 2))) if Kc >= 3 \
            else float("nan")
        out.append(AdjustedScore(model=frame.models[j], estimate=float(full[i]), std_error=se,
                                 df=float(Kc - 1) if Kc >= 3 else float("nan"),
                                 n=int(n_obs[j]), n_cells=int(frame.n_cells), groups=Kc))
    return out
