"""Stage subset (inference/design): a new model's full-benchmark score from the selected items.

Inputs: the reference leaderboard, the new models' scores on the items of a
:func:`~mixrank.subset.selection.select_items` table, the formula.  Outputs:
a :class:`~mixrank.subset.result.SubsetResult` holding, per new model, three
estimates of its mean over *all* reference items (docs/subset.md §3-§4):

* ``model_assisted`` -- the difference (GREG) estimator: the item model's
  predictions of the new model on every item plus the inclusion-weighted
  mean of its residuals on the sampled items; its variance is the
  stratified design variance of the residuals with the finite-population
  correction, its df Satterthwaite's.  Valid by the random selection
  whatever the item model;
* ``stratified_mean`` -- the stratified sample mean (no item model), design
  variance;
* ``irt`` -- the model-based estimate (tinyBenchmarks' reading): the
  observed scores on the sampled items plus the predictions on the others,
  its variance from the item model (Bernoulli variance of the unseen items
  and the ability's uncertainty), valid only when the item model is right.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from mixrank.errors import DataError, OptionError
from mixrank.frame.source import to_pandas
from mixrank.subset.data import DEFAULT_FORMULA, Layout, Matrix, item_index, layout, matrix
from mixrank.subset.irt import ItemModel, fit_ability
from mixrank.subset.result import SubsetResult
from mixrank.subset.selection import check_item_model, fit_reference

__all__ = ["subset_score", "estimates", "stratified_estimate", "design_variance"]


def design_variance(values: np.ndarray, stratum: np.ndarray, sizes: np.ndarray,
                    n_items: int) -> tuple[float, float, float]:
    """Stratified mean of ``values`` (one per sampled item), its design variance and df.

    ``stratum``: integer stratum of each value; ``sizes``: N_h per stratum.
    Returns ``(sum_h W_h ybar_h, sum_h W_h^2 (1 - n_h/N_h) s_h^2 / n_h, df)``
    with ``W_h = N_h / N`` and Satterthwaite's df
    ``(sum g_h s_h^2)^2 / sum (g_h s_h^2)^2 / (n_h - 1)``.
    """
    H = len(sizes)
    n = np.bincount(stratum, minlength=H).astype(float)
    tot = np.bincount(stratum, weights=values, minlength=H)
    mean = tot / np.maximum(n, 1)
    dev2 = np.bincount(stratum, weights=(values - mean[stratum]) ** 2, minlength=H)
    s2 = np.where(n > 1, dev2 / np.maximum(n - 1, 1), 0.0)
    W = sizes / n_items
    g = W ** 2 * (1 - n / sizes) / np.maximum(n, 1)
    est = float(np.sum(W * mean))
    parts = g * s2
    var = float(parts.sum())
    denom = np.sum(np.where(n > 1, parts ** 2 / np.maximum(n - 1, 1), 0.0))
    df = float(var ** 2 / denom) if denom > 0 else float(max(n.sum() - H, 1))
    return est, var, max(df, 1.0)


def stratified_estimate(y: np.ndarray, pred_all: np.ndarray, sampled: np.ndarray,
                        stratum: np.ndarray, sizes: np.ndarray) -> tuple[float, float, float]:
    """The difference estimator ``mean(pred_all) + sum_h W_h mean_h(y - pred)``, variance, df."""
    N = len(pred_all)
    resid = y - pred_all[sampled]
    corr, var, df = design_variance(resid, stratum, sizes, N)
    return float(pred_all.mean() + corr), var, df


def _irt(im: ItemModel, theta: np.ndarray, cov: np.ndarray, y: np.ndarray,
         sampled: np.ndarray) -> tuple[float, float]:
    """The model-based estimate (observed + predicted) and its model-based variance."""
    N = im.b.shape[0]
    p = im.predict(theta)
    unseen = np.ones(N, bool)
    unseen[sampled] = False
    est = (y.sum() + p[unseen].sum()) / N
    v = p[unseen] * (1 - p[unseen])
    grad = (v[:, None] * im.a[unseen]).sum(0)
    var = (v.sum() + grad @ cov @ grad) / N ** 2
    return float(est), float(var)


def estimates(im: ItemModel, y: np.ndarray, sampled: np.ndarray, stratum: np.ndarray,
              sizes: np.ndarray) -> dict[str, tuple[float, float, float]]:
    """The three estimates of one model's full mean: ``{method: (estimate, variance, df)}``.

    ``y``: its scores on the ``sampled`` items (reference item indices),
    ``stratum``: their stratum codes, ``sizes``: N_h.  The ability is fitted
    on the sampled items with weights ``N_h / n_h`` (rescaled to mean 1) for
    the model-assisted estimate, unweighted (as tinyBenchmarks fits it) for
    the model-based one.
    """
    N = im.b.shape[0]
    w = (sizes / np.bincount(stratum, minlength=len(sizes)))[stratum]
    theta, _ = fit_ability(im, y, sampled, weights=w / w.mean())
    pred = im.predict(theta)
    plain, cov = fit_ability(im, y, sampled)          # the model-based reading: unweighted
    return {"model_assisted": stratified_estimate(y, pred, sampled, stratum, sizes),
            "stratified_mean": design_variance(y, stratum, sizes, N),
            "irt": (*_irt(im, plain, cov, y, sampled), np.inf)}


def _selection(selection: Any, lay: Layout, mat: Matrix) -> tuple[np.ndarray, np.ndarray,
                                                                   np.ndarray]:
    """Reference item index, stratum code and the stratum sizes of a selection table."""
    if not isinstance(selection, pd.DataFrame):
        selection = to_pandas(selection)
    need = [*lay.item, "stratum", "stratum_size"]
    missing = [c for c in need if c not in selection.columns]
    if missing:
        raise DataError(f"the selection has no column {', '.join(map(repr, missing))}; pass the "
                        "table select_items() returned (with the same formula=)")
    idx = item_index(mat, selection, lay)
    if (idx < 0).any():
        bad = selection.loc[idx < 0, list(lay.item)].iloc[0].tolist()
        raise DataError(f"the selection holds item {bad} that the reference does not have; "
                        "select the items from this reference")
    if len(np.unique(idx)) != len(idx):
        raise DataError("the selection lists an item twice; items are drawn without replacement")
    codes, names = pd.factorize(selection["stratum"].astype(str), sort=True)
    sizes = selection.groupby(codes)["stratum_size"].agg(["min", "max"])
    if (sizes["min"] != sizes["max"]).any():
        raise DataError("the selection gives one stratum two stratum_size values; pass the "
                        "table select_items() returned, unedited")
    N_h = sizes["min"].to_numpy(float)
    n_h = np.bincount(codes, minlength=len(names))
    if N_h.sum() != mat.n_items or (n_h > N_h).any():
        raise DataError(f"the selection's strata hold {int(N_h.sum())} items but the reference "
                        f"has {mat.n_items}; pass the reference the selection was drawn from")
    return idx, codes, N_h


def subset_score(reference: Any, new: Any, *, selection: Any,
                 formula: str = DEFAULT_FORMULA, item_model: Literal["rasch", "2pl"] = "rasch",
                 dims: int = 1,
                 level: float = 0.95) -> SubsetResult:
    """Each new model's score on the whole benchmark from its answers on the selected items.

    Parameters
    ----------
    reference : pandas.DataFrame or path
        The reference leaderboard the selection was drawn from (long format).
        Not modified.
    new : pandas.DataFrame or path
        The new models' scores on exactly the selected items (long format,
        the same columns); one or more models, none of them in ``reference``.
    selection : pandas.DataFrame or path
        The table :func:`mixrank.select_items` returned (its item keys,
        ``stratum`` and ``stratum_size`` are read).
    formula : str
        As given to :func:`mixrank.select_items`.
    item_model : {"rasch", "2pl"}
        The item model whose predictions assist the estimate (``"rasch"``:
        the binomial model with model and item effects; ``"2pl"``: ``dims``
        abilities per model).  It changes the precision, not the validity,
        of the ``model_assisted`` estimate.
    dims : int
        Abilities per model of ``item_model="2pl"``.
    level : float
        Confidence level of the intervals.

    Returns
    -------
    SubsetResult
        ``scores()``: per new model and method (``model_assisted``,
        ``stratified_mean``, ``irt``) the estimate of its mean over all
        reference items with ``std_error``, ``df``, ``ci_lower``, ``ci_upper``;
        ``contrasts()`` against every reference model and
        ``rank_intervals()`` among them.

    Raises
    ------
    OptionError
        ``level`` outside (0, 1); an unknown ``item_model``.
    DataError
        Missing columns; a new model also in the reference; a new model
        scored on items outside the selection or missing a selected item; a
        selection from another reference.

    Notes
    -----
    With predictions ``p_i`` of the new model on all ``N`` items (ability
    fitted on the sampled items), residuals ``e_i = y_i - p_i`` and strata of
    ``N_h`` items, ``n_h`` sampled::

        T = (1/N) sum_i p_i + sum_h (N_h/N) mean_{i in s_h} e_i
        V = sum_h (N_h/N)^2 (1 - n_h/N_h) s_{e,h}^2 / n_h

    (Särndal, Swensson and Wretman 1992, §6.7), interval ``T ± t_df sqrt(V)``
    with Satterthwaite's df.  Validated against the exact variance over all
    samples of a tiny population (tests/subset/test_estimator.py), by
    coverage in seeded simulations where the item model is wrong
    (tests/validity/test_subset_validity.py) and leave-one-model-out on
    ChemBench (docs/subset.md §5).

    Examples
    --------
    >>> import mixrank
    >>> data = mixrank.load_dataset("chembench").query("prompt == 'default'")
    >>> ref, new = data[data.model != "gpt-4o"], data[data.model == "gpt-4o"]
    >>> sel = mixrank.select_items(ref, 100, rng=1)
    >>> new = new[new.question.isin(sel.question)]
    >>> res = mixrank.subset_score(ref, new, selection=sel)
    >>> list(res.scores()["method"])
    ['model_assisted', 'stratified_mean', 'irt']
    """
    check_item_model(item_model, dims)
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise OptionError(f"level={level!r}: expected a confidence level in (0, 1), e.g. 0.95")
    lay = layout(formula)
    lay = Layout(formula, lay.score, lay.model, lay.item, None)   # strata: from the selection
    mat = matrix(reference, lay, "reference")
    idx, codes, N_h = _selection(selection, lay, mat)
    im = fit_reference(mat, item_model, dims)
    new_df = to_pandas(new)
    newmat = matrix(new_df, lay, "new")
    both = sorted(set(map(str, newmat.models)) & set(map(str, mat.models)))
    if both:
        raise DataError(f"model {both[0]!r} is both in the reference and among the new models; "
                        "drop it from the reference to score it from the selected items")
    at = item_index(mat, newmat.items, lay)
    if (at < 0).any():
        bad = newmat.items[list(lay.item)].iloc[int(np.flatnonzero(at < 0)[0])].tolist()
        raise DataError(f"the new data hold item {bad}, which is not a reference item")
    pos = np.full(mat.n_items, -1)
    pos[idx] = np.arange(len(idx))
    spot = pos[at]
    if (spot < 0).any():
        bad = newmat.items[list(lay.item)].iloc[int(np.flatnonzero(spot < 0)[0])].tolist()
        raise DataError(f"the new models are scored on {int((spot < 0).sum())} item(s) outside "
                        f"the selection, e.g. {bad}; the design-based estimate uses the selected "
                        "items only: pass the new scores on the selected items")
    Ynew = np.full((len(newmat.models), len(idx)), np.nan)
    Ynew[:, spot] = newmat.Y
    rows = []
    q = 1 - (1 - level) / 2
    for j, name in enumerate(newmat.models):
        y = Ynew[j]
        if np.isnan(y).any():
            miss = mat.items[list(lay.item)].iloc[int(idx[np.flatnonzero(np.isnan(y))[0]])]
            raise DataError(f"new model {name!r} has no score on {int(np.isnan(y).sum())} "
                            f"selected item(s), e.g. {miss.tolist()}; every selected item must be "
                            "run (a skipped item breaks the random selection)")
        found = estimates(im, y, idx, codes, N_h)
        for method, (e, v, d) in found.items():
            se = float(np.sqrt(max(v, 0.0)))
            crit = float(stats.t.ppf(q, d)) if np.isfinite(d) else float(stats.norm.ppf(q))
            rows.append({"model": name, "method": method, "estimate": e, "std_error": se,
                         "df": d, "ci_lower": e - crit * se, "ci_upper": e + crit * se,
                         "level": level, "n": len(idx), "n_items": mat.n_items})
    scores = pd.DataFrame(rows)
    ref_scores = pd.DataFrame({"model": mat.models,
                               "estimate": np.nanmean(mat.Y, axis=1)})
    return SubsetResult(scores=scores, reference=ref_scores, level=level,
                        meta={"formula": formula, "item_model": item_model, "dims": dims,
                              "n_items": mat.n_items, "k": len(idx), "n_strata": len(N_h),
                              "n_reference_models": len(mat.models)})
