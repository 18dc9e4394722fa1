"""Stage subset (inference/design): how well subset scoring works on a leaderboard -- leave one model out.

Inputs: a complete leaderboard (long format), the number of items ``k``,
the seeds, the item model.  Outputs: :func:`leave_one_out`'s table: for each
model held out as the "new" model and each seed, each method's estimate of
its full-benchmark mean, the truth (its mean over all items), the error and
whether the interval covers the truth; :func:`loo_summary` averages it into
the error ratio and coverage of docs/subset.md §5.  The reference of a
held-out model is every other model (or, with ``n_reference``, a random
subset of them, drawn per seed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from mixrank._util import as_rng
from mixrank.errors import DataError, OptionError
from mixrank.subset.data import DEFAULT_FORMULA, Matrix, layout, matrix
from mixrank.subset.estimator import estimates
from mixrank.subset.irt import ItemModel, fit_items
from mixrank.subset.selection import Design, check_item_model, design, draw

__all__ = ["leave_one_out", "loo_summary"]


def _srs(y_all: np.ndarray, k: int, rng: np.random.Generator) -> tuple[float, float, float]:
    """A simple random sample of ``k`` items: its mean, design variance and df."""
    N = len(y_all)
    s = y_all[rng.choice(N, k, replace=False)]
    return float(s.mean()), float((1 - k / N) * s.var(ddof=1) / k), float(k - 1)


def leave_one_out(data: Any, k: int, *, formula: str = DEFAULT_FORMULA,
                  strata: str | None = None, item_model: str = "rasch", dims: int = 1,
                  seeds: int = 20, n_reference: int | None = None, level: float = 0.95,
                  rng: Any = 0) -> pd.DataFrame:
    """Each model's full-benchmark score from ``k`` items, the other models as reference.

    Parameters
    ----------
    data : pandas.DataFrame or path
        A complete leaderboard (every model on every item), long format.
    k : int
        Items per selection.
    formula, strata, item_model, dims
        As in :func:`mixrank.select_items`.
    seeds : int
        Selections per held-out model.
    n_reference : int, optional
        Reference models per fit: a random subset of the other models, drawn
        per seed (default: all of them).
    level : float
        Confidence level of the intervals.
    rng : numpy.random.Generator or int
        Seed of the selections and reference subsets.

    Returns
    -------
    pandas.DataFrame
        One row per held-out ``model``, ``seed`` and ``method``
        (``model_assisted``, ``stratified_mean``, ``irt`` and
        ``random_sample``: the mean of a simple random sample of ``k`` items):
        ``estimate``, ``truth``, ``error`` (estimate - truth), ``std_error``,
        ``ci_lower``, ``ci_upper``, ``covered``, ``n_reference``, ``level``.
    """
    check_item_model(item_model, dims)
    if not 0 < level < 1:
        raise OptionError(f"level={level!r}: expected a confidence level in (0, 1)")
    lay = layout(formula, strata)
    mat = matrix(data, lay, "data")
    gen = as_rng(rng)
    q = 1 - (1 - level) / 2
    M = len(mat.models)
    rows = []
    for m in range(M):
        others = np.delete(np.arange(M), m)
        truth = float(np.nanmean(mat.Y[m]))
        des: Design | None = None
        im: ItemModel | None = None
        for s in range(seeds):
            if des is None or im is None or n_reference is not None:
                pick = (others if n_reference is None
                        else np.sort(gen.choice(others, n_reference, replace=False)))
                ref = Matrix(Y=mat.Y[pick], models=[mat.models[i] for i in pick],
                             items=mat.items, strata=mat.strata)
                im = fit_items(ref.Y, item_model, dims)
                des = design(ref, im, k)
            idx = draw(des, gen)
            found = estimates(im, mat.Y[m, idx], idx, des.stratum[idx], des.sizes.astype(float))
            found["random_sample"] = _srs(mat.Y[m], k, gen)
            for method, (e, v, d) in found.items():
                se = float(np.sqrt(max(v, 0.0)))
                crit = float(stats.t.ppf(q, d)) if np.isfinite(d) else float(stats.norm.ppf(q))
                lo, hi = e - crit * se, e + crit * se
                rows.append({"model": mat.models[m], "seed": s, "method": method,
                             "estimate": e, "truth": truth, "error": e - truth,
                             "std_error": se, "ci_lower": lo, "ci_upper": hi,
                             "covered": bool(lo <= truth <= hi),
                             "n_reference": len(others) if n_reference is None else n_reference,
                             "level": level})
    return pd.DataFrame(rows)


def loo_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per method: mean absolute error, its ratio to the random sample's, coverage, mean SE.

    Returns
    -------
    pandas.DataFrame
        ``method``, ``mae``, ``mae_ratio`` (to ``random_sample``), ``coverage``,
        ``mean_std_error``, ``n`` (intervals).

    Raises
    ------
    DataError
        The table has no ``random_sample`` rows.

    Examples
    --------
    >>> import mixrank
    >>> from mixrank.subset.validation import leave_one_out, loo_summary
    >>> data = mixrank.load_dataset("chembench").query("prompt == 'default'")
    >>> four = data[data.model.isin(["claude3", "gpt-4", "gpt-4o", "o1"])]
    >>> s = loo_summary(leave_one_out(four, 100, seeds=2, rng=0))
    >>> float(s.loc[s.method == "random_sample", "mae_ratio"].iloc[0])
    1.0
    """
    g = table.assign(abs_error=table["error"].abs()).groupby("method", sort=False)
    out = g.agg(mae=("abs_error", "mean"), coverage=("covered", "mean"),
                mean_std_error=("std_error", "mean"), n=("covered", "size")).reset_index()
    if not (out["method"] == "random_sample").any():
        raise DataError("the table has no random_sample rows; pass the table leave_one_out() "
                        "returned")
    base = float(out.loc[out["method"] == "random_sample", "mae"].iloc[0])
    out.insert(2, "mae_ratio", out["mae"] / base)
    return out
