"""Stage subset (inference/design): which items are broken -- per-item difficulty and discrimination.

Inputs: a reference leaderboard (long format, at least three models) and the
formula naming score, model and item.  Outputs: :func:`item_diagnostics`'s
table, one row per item, with its difficulty and discrimination and flags for
negative discrimination (stronger models get it wrong more often: the typical
sign of a wrong answer key) and for items nobody or everybody solves
(docs/subset.md §6).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import logit

from mixrank.errors import DataError, OptionError
from mixrank.subset.data import DEFAULT_FORMULA, layout, matrix
from mixrank.subset.irt import _newton_rows

__all__ = ["item_diagnostics", "item_rest_correlation"]


def item_rest_correlation(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item, the correlation over models of its score with the model's rest score.

    ``Y``: models x items (NaN = no answer).  The rest score of model ``m``
    for item ``i`` is its mean over the other items it answered.  Returns
    ``(r, n)``: the correlations (NaN when either side is constant) and the
    models counted.
    """
    W = np.isfinite(Y)
    Yf = np.where(W, Y, 0.0)
    tot = Yf.sum(1, keepdims=True)
    cnt = W.sum(1, keepdims=True)
    rest = np.where(W, (tot - Yf) / np.maximum(cnt - 1, 1), 0.0)
    n = W.sum(0).astype(float)
    nn = np.maximum(n, 1)
    my = Yf.sum(0) / nn
    mr = rest.sum(0) / nn
    dy = np.where(W, Yf - my, 0.0)
    dr = np.where(W, rest - mr, 0.0)
    sxy = (dy * dr).sum(0)
    sxx = (dy ** 2).sum(0)
    syy = (dr ** 2).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where((sxx > 1e-12) & (syy > 1e-12), sxy / np.sqrt(sxx * syy), np.nan)
    return r, n


def item_diagnostics(reference: Any, *, formula: str = DEFAULT_FORMULA,
                     strata: str | None = None, level: float = 0.95) -> pd.DataFrame:
    """Per-item difficulty and discrimination on a reference leaderboard, with flags.

    Parameters
    ----------
    reference : pandas.DataFrame or path
        Long format, at least three models scored (0/1 or in [0, 1]) on the
        items.  Not modified.
    formula : str
        ``score ~ model + (1|subject/question)``: score, model and item (the
        random term with the most factors).
    strata : str or None
        A column carried into the table beside the item keys (default: the
        formula's coarser term, ``subject``).
    level : float
        ``1 - level`` is the one-sided level of the test for negative
        discrimination.

    Returns
    -------
    pandas.DataFrame
        One row per item: the item key columns (and the stratum column),
        ``n`` (models that answered it), ``reference_mean`` (their mean
        score), ``difficulty`` (minus the intercept of the item's logistic
        regression on the models' standardised logit overall score: higher
        is harder), ``discrimination`` (its slope), ``item_rest_r`` (the
        correlation over models of the item's score with the model's mean on
        the other items), ``p_value`` (one-sided, for ``item_rest_r < 0``:
        Student's t with ``n - 2`` df), ``negative_discrimination``
        (``p_value < 1 - level``), ``nobody_solves``, ``everybody_solves``
        and ``flag`` (the flags as text, empty for a sound item).

    Raises
    ------
    DataError
        Fewer than three reference models; a missing column; scores outside
        [0, 1].
    OptionError
        ``level`` outside (0, 1).

    Notes
    -----
    A wrong answer key makes the models that know the answer score 0 on the
    item and those that pick the keyed option score 1, so the item's score
    falls with the models' ability: a negative item-rest correlation.  The
    test is the t-test of a Pearson correlation; items many models answer
    give it its power.  Validated by simulation: items with a flipped key
    among 30 models are flagged at >= 90% with <= 5% false flags
    (tests/subset/test_diagnostics.py).

    Examples
    --------
    >>> import mixrank
    >>> ref = mixrank.load_dataset("chembench").query("prompt == 'default'")
    >>> diag = mixrank.item_diagnostics(ref)
    >>> int(diag["negative_discrimination"].sum()) > 0
    True
    """
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise OptionError(f"level={level!r}: expected a confidence level in (0, 1), e.g. 0.95")
    lay = layout(formula, strata)
    mat = matrix(reference, lay, "reference")
    M = len(mat.models)
    if M < 3:
        raise DataError(f"the reference has {M} model(s); an item's discrimination compares "
                        "stronger and weaker models: pass at least 3 (the more, the better)")
    Y = mat.Y
    r, n = item_rest_correlation(Y)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = r * np.sqrt(np.maximum(n - 2, 1) / np.maximum(1 - r ** 2, 1e-12))
    p = np.where(np.isfinite(r) & (n > 2), stats.t.cdf(t, np.maximum(n - 2, 1)), np.nan)
    overall = np.nanmean(Y, axis=1)
    z = logit(np.clip(overall, 0.5 / Y.shape[1], 1 - 0.5 / Y.shape[1]))
    z = (z - z.mean()) / (z.std() if z.std() > 0 else 1.0)
    W = np.isfinite(Y).T.astype(float)
    X = np.column_stack([np.ones(M), z])
    pbar = np.clip(np.nanmean(Y, axis=0), 0.02, 0.98)
    start = np.column_stack([logit(pbar), np.zeros(Y.shape[1])])
    beta = _newton_rows(X, np.where(W > 0, Y.T, 0.0), W, np.zeros_like(W), start,
                        np.array([0.1, 0.1]), np.zeros(2), steps=30)
    lo = np.nanmin(Y, axis=0)
    hi = np.nanmax(Y, axis=0)
    out = mat.items.copy()
    out["n"] = n.astype(int)
    out["reference_mean"] = np.nanmean(Y, axis=0)
    out["difficulty"] = -beta[:, 0]
    out["discrimination"] = beta[:, 1]
    out["item_rest_r"] = r
    out["p_value"] = p
    out["negative_discrimination"] = np.nan_to_num(p, nan=1.0) < 1 - level
    out["nobody_solves"] = hi == 0
    out["everybody_solves"] = lo == 1
    names = ("negative discrimination", "nobody solves", "everybody solves")
    cols = np.column_stack([out[c].to_numpy() for c in ("negative_discrimination",
                                                        "nobody_solves", "everybody_solves")])
    out["flag"] = ["; ".join(nm for nm, f in zip(names, row) if f) for row in cols]
    out.attrs["mixrank"] = {"formula": formula, "n_models": M, "n_items": mat.n_items,
                            "level": level, "test": "one-sided t-test of the item-rest "
                            "correlation < 0, n - 2 df"}
    return out
