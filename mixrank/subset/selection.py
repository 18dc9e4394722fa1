"""Stage subset (inference/design): which items to run -- a stratified probability sample.

Inputs: a reference leaderboard (long format, several models), the number
of items ``k``, the formula naming score, model and item, the stratum column.
Outputs: :func:`select_items`'s table of the sampled items with their
stratum, the stratum's size, the number drawn from it and the inclusion
probability (docs/subset.md §2).

The design: the items are split by subject (subjects too small to receive
``MIN_PER_SUBJECT`` items under a proportional allocation are pooled) and,
within a subject, into bins of equal size by the item difficulty the
reference models show; the ``k`` items are allocated to these strata in
proportion to ``N_h S_h`` (Neyman), ``S_h`` the root mean square residual
of the reference models under the fitted item model in stratum ``h`` -- the
anticipated residual spread of the estimator of
:mod:`mixrank.subset.estimator` -- with at least two items per stratum so
that every stratum's variance can be estimated; each stratum is then a
simple random sample without replacement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from mixrank._util import as_rng
from mixrank.errors import DataError, OptionError
from mixrank.subset.data import DEFAULT_FORMULA, Matrix, layout, matrix
from mixrank.subset.irt import ITEM_MODELS, ItemModel, fit_items

__all__ = ["select_items", "Design", "design", "draw", "allocate", "build_strata", "check_item_model",
           "MIN_PER_SUBJECT", "PER_BIN", "MAX_BINS", "SELECTION_COLUMNS"]

#: A subject with fewer items than this under proportional allocation is pooled with others.
MIN_PER_SUBJECT = 4
#: Expected sampled items per difficulty bin within a subject.
PER_BIN = 5
#: At most this many difficulty bins within a subject.
MAX_BINS = 5
#: The design columns of a selection table (besides the item keys).
SELECTION_COLUMNS = ("stratum", "stratum_size", "stratum_n", "inclusion_prob", "weight")


def check_item_model(item_model: str, dims: int) -> None:
    """An :class:`OptionError` for an unknown ``item_model`` or a bad ``dims``."""
    if item_model not in ITEM_MODELS:
        raise OptionError(f"item_model={item_model!r} is not an item model; expected one of "
                          f"{', '.join(map(repr, ITEM_MODELS))}")
    if isinstance(dims, bool) or not isinstance(dims, (int, np.integer)) or dims < 1:
        raise OptionError(f"dims={dims!r}: expected a positive integer (abilities per model of "
                          "item_model='2pl')")
    if item_model == "rasch" and dims != 1:
        raise OptionError(f"dims={dims} applies to item_model='2pl'; the Rasch model has one "
                          "ability per model: drop dims or pass item_model='2pl'")


def fit_reference(mat: Matrix, item_model: str, dims: int) -> ItemModel:
    """The item model fitted on the reference matrix (at least two models)."""
    if len(mat.models) < 2:
        raise DataError(f"the reference has {len(mat.models)} model(s); the item difficulties "
                        "are estimated from several reference models: pass at least 2 (the "
                        "more, the better the predictions)")
    return fit_items(mat.Y, item_model, dims)


def build_strata(mat: Matrix, difficulty: np.ndarray, k: int) -> np.ndarray:
    """The stratum label of every item: subject (small ones pooled) x difficulty bin."""
    N = mat.n_items
    subj = mat.strata
    names, counts = np.unique(subj, return_counts=True)
    alloc = k * counts / N
    small = set(names[alloc < MIN_PER_SUBJECT])
    group = np.array([("(pooled)" if s in small else s) for s in subj], dtype=object)
    if len(small) == 1:                      # one small subject stays as it is
        group = subj.astype(object)
    out = np.empty(N, dtype=object)
    for g in np.unique(group):
        idx = np.flatnonzero(group == g)
        bins = int(np.clip(np.floor(k * len(idx) / N / PER_BIN), 1, MAX_BINS))
        order = idx[np.lexsort((idx, difficulty[idx]))]      # ties broken by item order
        for j, part in enumerate(np.array_split(order, bins)):
            out[part] = f"{g} | difficulty {j + 1}/{bins}" if bins > 1 else str(g)
    return out


def allocate(sizes: np.ndarray, spread: np.ndarray, k: int, floor: int = 2) -> np.ndarray:
    """Neyman allocation of ``k`` items to strata of ``sizes`` with residual SDs ``spread``.

    ``n_h`` proportional to ``N_h S_h``, at least ``min(floor, N_h)`` and at
    most ``N_h``, integers summing to ``k`` (largest remainders; strata that
    hit a bound are fixed and the rest re-allocated).
    """
    sizes = np.asarray(sizes, int)
    lo = np.minimum(floor, sizes)
    if lo.sum() > k:
        raise DataError(f"k={k} items cannot give each of the {len(sizes)} strata {floor} "
                        f"items; pass k >= {int(lo.sum())} or fewer strata")
    s = np.asarray(spread, float)
    score = sizes * (s if np.any(s > 0) else np.ones_like(s))
    score = np.where(score > 0, score, 1e-9 * sizes)
    n = lo.astype(float)
    free = np.ones(len(sizes), bool)
    for _ in range(len(sizes) + 1):
        if not free.any():
            break
        left = k - n[~free].sum()
        target = left * score * free / score[free].sum()
        fixed = free & ((target < lo) | (target > sizes))
        if not fixed.any():
            n[free] = target[free]
            break
        n[fixed] = np.clip(target[fixed], lo[fixed], sizes[fixed])
        free &= ~fixed
    base = np.floor(n).astype(int)
    base = np.clip(base, lo, sizes)
    rest = k - base.sum()
    frac = n - base
    for h in np.argsort(-frac, kind="stable"):
        if rest <= 0:
            break
        if base[h] < sizes[h]:
            base[h] += 1
            rest -= 1
    while rest > 0:                             # spill into any stratum with room
        h = int(np.argmax(sizes - base))
        base[h] += 1
        rest -= 1
    return base


@dataclass(frozen=True)
class Design:
    """A stratified design: stratum names, each item's stratum code, N_h and n_h."""

    names: np.ndarray
    stratum: np.ndarray
    sizes: np.ndarray
    n: np.ndarray


def design(mat: Matrix, im: ItemModel, k: int) -> Design:
    """Strata (subject x difficulty bin) and the Neyman allocation of ``k`` items."""
    resid2 = np.nanmean((mat.Y - im.fitted()) ** 2, axis=0)
    labels = build_strata(mat, -im.b, k)
    names, inv = np.unique(labels, return_inverse=True)
    sizes = np.bincount(inv, minlength=len(names))
    spread = np.sqrt(np.bincount(inv, weights=resid2, minlength=len(names)) / sizes)
    return Design(names=names, stratum=inv, sizes=sizes, n=allocate(sizes, spread, k))


def draw(des: Design, rng: np.random.Generator) -> np.ndarray:
    """One stratified simple random sample: the chosen item indices, by stratum."""
    return np.concatenate([np.sort(rng.choice(np.flatnonzero(des.stratum == h), des.n[h],
                                              replace=False))
                           for h in range(len(des.names)) if des.n[h] > 0])


def select_items(reference: Any, k: int, *, formula: str = DEFAULT_FORMULA,
                 strata: str | None = None, item_model: Literal["rasch", "2pl"] = "rasch",
                 dims: int = 1,
                 rng: Any = None) -> pd.DataFrame:
    """A stratified probability sample of ``k`` items to run a new model on.

    Parameters
    ----------
    reference : pandas.DataFrame or path
        The reference leaderboard in long format: several models, each
        scored (0/1 or a proportion in [0, 1]) on the items.  Not modified.
    k : int
        Items to select, at least 2 and at most the number of items.
    formula : str
        ``score ~ model + (1|subject/question)``: the score column, the model
        column and the item (the random term with the most factors).
    strata : str or None
        Column whose levels are strata (constant within an item); None takes
        the formula's coarser random term (``subject``), if any.
    item_model : {"rasch", "2pl"}
        The item model fitted on the reference, whose residual spread sets
        the Neyman allocation and whose difficulties set the bins.
    dims : int
        Abilities per model of ``item_model="2pl"``.
    rng : numpy.random.Generator or int, optional
        Seed or generator; the same seed gives the same items.

    Returns
    -------
    pandas.DataFrame
        One row per selected item: the item key columns of the formula (and
        the stratum column), ``stratum`` (label: subject and difficulty
        bin), ``stratum_size`` (N_h, items of the stratum), ``stratum_n``
        (n_h, items drawn from it), ``inclusion_prob`` (n_h / N_h),
        ``weight`` (its inverse), ``difficulty`` (the item's difficulty on
        the logit scale, higher is harder) and ``reference_mean`` (the mean
        score of the reference models on it).  ``attrs["mixrank"]`` holds
        the formula, ``k``, ``n_items``, ``n_strata``, ``item_model`` and the
        design.

    Raises
    ------
    OptionError
        ``k`` not an integer in [2, items]; an unknown ``item_model``.
    DataError
        A missing column (score, model, item key or the ``strata`` column),
        scores outside [0, 1], fewer than 2 reference models.

    Notes
    -----
    Strata: subject x difficulty bin (module :mod:`mixrank.subset.selection`);
    allocation ``n_h ∝ N_h S_h`` with ``S_h`` the reference residual root
    mean square in the stratum, ``n_h >= 2``.  The inclusion probability of
    an item of stratum ``h`` is exactly ``n_h / N_h`` (checked against the
    empirical frequency over many seeds in tests/subset/test_selection.py).

    Examples
    --------
    >>> import mixrank
    >>> ref = mixrank.load_dataset("chembench").query("prompt == 'default'")
    >>> sel = mixrank.select_items(ref, 100, rng=1)
    >>> len(sel), round(float(sel["weight"].sum()))
    (100, 2788)
    """
    check_item_model(item_model, dims)
    lay = layout(formula, strata)
    mat = matrix(reference, lay, "reference")
    N = mat.n_items
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= N:
        raise OptionError(f"k={k!r}: expected an integer number of items between 2 and the "
                          f"reference's {N} items")
    k = int(k)
    im = fit_reference(mat, item_model, dims)
    des = design(mat, im, k)
    chosen = draw(des, as_rng(rng))
    names, inv, sizes, n = des.names, des.stratum, des.sizes, des.n
    difficulty = -im.b
    h = inv[chosen]
    out = mat.items.iloc[chosen].reset_index(drop=True)
    out["stratum"] = names[h].astype(str)
    out["stratum_size"] = sizes[h]
    out["stratum_n"] = n[h]
    out["inclusion_prob"] = n[h] / sizes[h]
    out["weight"] = sizes[h] / n[h]
    out["difficulty"] = difficulty[chosen]
    out["reference_mean"] = np.nanmean(mat.Y[:, chosen], axis=0)
    out.attrs["mixrank"] = {
        "formula": formula, "k": k, "n_items": N, "n_strata": len(names),
        "n_models": len(mat.models), "item_model": item_model, "dims": dims,
        "strata": lay.strata,
        "design": "stratified simple random sampling without replacement; strata subject x "
                  "difficulty bin; Neyman allocation on the reference residual spread, "
                  "at least 2 items per stratum",
    }
    return out
