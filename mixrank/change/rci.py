"""Stage change: item-level reliable change between two model versions (docs/methods.md §8).

Inputs: a long DataFrame with one row per (version, item, sample) and two
version selectors (model names, or column -> values mappings).
Outputs: a :class:`~mixrank.change.result.ReliableChange` whose accessors
return tidy tables.
Contents: :func:`reliable_change` and its steps (option checks, aligning the
two versions on shared items, classifying items).  The reliability lives in
:mod:`mixrank.change.reliability`, the per-item tests and the
empirical-Bayes arithmetic in :mod:`mixrank.change.eb`, the input checks in
:mod:`mixrank.change.versions`, the result objects in
:mod:`mixrank.change.result`.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from mixrank.change.eb import eb_item_changes, item_tests, smallest_fisher_p
from mixrank.change.reliability import SPLITS, reliability
from mixrank.change.result import ReliableChange
from mixrank.change.versions import check_columns, check_scores, select_version, version_matrix
from mixrank.errors import DataError, DesignError, MissingDataWarning, MixrankWarning
from mixrank.frame.source import check_unique_columns

__all__ = ["reliable_change"]

_METHODS = ("rci", "eb")
_SEMS = ("item", "pooled")


def reliable_change(
    data: pd.DataFrame,
    *,
    before: Hashable | Mapping[str, Any],
    after: Hashable | Mapping[str, Any],
    model: str = "model",
    item: str | Sequence[str] = ("subject", "question"),
    sample: str | None = "sample",
    score: str = "correct",
    split: Literal["halves", "odd_even"] = "halves",
    by: str | None = "subject",
    method: Literal["rci", "eb"] = "rci",
    sem: Literal["item", "pooled"] = "item",
    threshold: float = float(stats.norm.ppf(0.975)),
    fdr: float = 0.05,
) -> ReliableChange:
    """Item-level reliable change between two versions of a model (RCI, docs/methods.md §8).

    Parameters
    ----------
    data : pandas.DataFrame
        Long format, one row per (version, item, sample).  Not modified.
    before, after : hashable or mapping
        The two versions.  A scalar is a model name: the rows with
        ``data[model] == before``.  A mapping ``{column: value or list}``
        selects the rows where every named column takes one of the listed
        values, e.g. ``before={"sample": [0, 1]}, after={"sample": [2, 3]}``
        (one model re-run) or ``{"model": "m", "prompt": "p1"}``.  The two
        selections must not share rows.
    model : str, default "model"
        Column holding model names (used by scalar selectors).
    item : str or sequence of str, default ("subject", "question")
        Columns identifying an item.  Other columns (e.g. a constant
        ``prompt``) are ignored; if an item has several prompts, add
        ``"prompt"`` to ``item``.
    sample : str or None, default "sample"
        Column distinguishing the K repeated samples of an item (ordered by
        its values).  None means one row per item, which fails (K < 2).
    score : str, default "correct"
        Score column, 0/1 or a bounded score in [0, 1].
    split : {"halves", "odd_even"}, default "halves"
        Split-half scheme over the samples in sample-id order: first vs
        second half, or even vs odd positions.  With odd K the last sample is
        left out of the split (only of the reliability; ``p`` uses all K).
    by : str or None, default "subject"
        Column (constant within an item) for :meth:`ReliableChange.by_subject`.
    method : {"rci", "eb"}, default "rci"
        ``"eb"`` adds the empirical-Bayes columns (see Notes) beside the
        RCI classes.
    sem : {"item", "pooled"}, default "item"
        Error model of the RCI classes.  ``"pooled"`` is docs/methods.md §8
        as written (Jacobson-Truax): one SEM from the split-half
        reliability for all items.  ``"item"`` (a documented departure, see
        Notes) gives each item its own error: an exact test of no change
        (Fisher for 0/1 scores, Student t otherwise) at level ``alpha``.
    threshold : float, default z_0.975 = 1.959964
        ``|RCI|`` above which a change is reliable; with ``sem="item"`` this is
        the per-item level ``alpha = 2 (1 - Phi(threshold))`` = 0.05.
    fdr : float, default 0.05
        Target false discovery rate of the ``"eb"`` classes.

    Returns
    -------
    ReliableChange
        Accessors ``items()``, ``summary()``, ``by_subject()``,
        ``vs_greedy()``; attributes ``before``/``after`` (labels),
        ``method``, ``sem``, ``split``, ``threshold``, ``fdr``.

    Raises
    ------
    DataError
        Missing columns, scores outside [0, 1] or missing, a selector that
        matches nothing or overlaps the other, duplicate (item, sample) rows
        (the message suggests adding ``prompt`` to ``item`` when prompts
        differ), unequal K across items of a version, K < 2, or versions that
        share no items.
    DesignError
        Fewer than 3 shared items, an undefined split-half reliability (half
        means constant over items) with ``sem="pooled"``, or ``method="eb"``
        with fewer than 3 analysable items.

    Warns
    -----
    MissingDataWarning
        Items present in only one version (they are dropped; counts in the
        message and in ``summary().meta``).
    MixrankWarning
        ``sem="pooled"``: ``r_xx <= 0`` (SEM computed with ``r_xx`` floored
        at 0) or ``S_diff = 0`` (every non-zero change is reliable).
        ``sem="item"``: an undefined reliability (reported as NaN), or 0/1
        scores with so few samples that no item can reach level ``alpha``
        (K = 2 or 3 per version at 0.05).

    Notes
    -----
    With ``p(i, v)`` the mean score of item i over the K_v samples of version
    v (K may differ between versions, not between items of a version):

    * ``r_xx,v = 2 r / (1 + r)``, r the Pearson correlation across the shared
      items of the two half means (Spearman-Brown).
    * ``SEM_v = SD_i(p(., v)) sqrt(1 - r_xx,v)``, SD over all shared items
      (floor/ceiling included) with n - 1; ``S_diff = sqrt(SEM_1^2 +
      SEM_2^2)``; ``RCI_i = (p(i, after) - p(i, before)) / S_diff``.
    * class: ``floor_ceiling`` if ``p_before == p_after`` in {0, 1} (excluded
      from the analysable subset), else ``improved`` if RCI > threshold,
      ``deteriorated`` if RCI < -threshold, else ``no_change``.

    These are reported with either ``sem``.  With ``sem="pooled"`` the RCI
    and classes are exactly the above.  The classical RCI assumes one error
    variance for all items; with 0/1 samples the error variance ``p_i (1 -
    p_i) / K`` is far from constant (near zero for items a model always or
    never solves, which dominate the pooled SEM), so among truly unchanged
    analysable items it calls far more than 5% changed: 16-19% in seeded
    simulations (K = 4, Beta(0.5, 0.5) difficulties) and 15.1% of all items
    of a 2 + 2 null re-run of gpt-4o, above the 10.1% single-run flips.

    Departure from docs/methods.md §8 (the default, ``sem="item"``): each item is
    tested against its own error.  For 0/1 scores, Fisher's exact test of
    ``x_before/K_b`` vs ``x_after/K_a`` (conditional on the item's total,
    so valid for every item difficulty and K); for other scores, the
    Student pooled two-sample t test over the item's samples (exact under
    normal errors).  ``rci = sign(delta) z_{1 - p/2}`` is the test's
    z-equivalent, so ``|rci| > threshold`` exactly when ``p < alpha``;
    ``std_error`` is the null SD of ``delta`` (for 0/1 scores its exact
    value given the item's total, ``sqrt(pbar (1 - pbar) (1/K_b + 1/K_a)
    n/(n - 1))``, ``n = K_b + K_a``).  Unchanged items are then called
    with probability at most ``alpha`` whatever their difficulty (exact
    enumeration: at most 0.8% at K = 4 and 2.5% at K = 20 per version), at
    the price of power: with K = 2 or 3 0/1 samples per version no item
    can reach p < 0.05 (a warning says so).  ``r_xx``, SEM and ``S_diff``
    are still computed and reported; they no longer decide the classes.

    ``method="eb"`` adds false-discovery control across items: the same
    per-item p-values, Storey q-values and the classes
    ``improved``/``deteriorated`` for items with ``q <= fdr`` (FDR control
    for independent items), plus shrinkage estimates from the normal-normal
    mixed model ``delta_i ~ N(mu, tau^2 + s_i^2)`` fitted by REML (see
    :mod:`mixrank.change.eb`).  With few 0/1 samples (K = 4 gives a
    smallest Fisher p of 2/70) no item of a large benchmark survives FDR
    control, and the EB classes say no_change (the data cannot tell).

    Validated against hand-worked examples (six items, K = 4, both error
    models), seeded simulations (false alarms under homoscedastic errors
    for both, and under 0/1 samples against exact enumeration for
    ``sem="item"``; EB realised FDR), ``scipy.stats.fisher_exact``, R ``nlme::lme`` (ML) and the
    published metafor REML fit of the BCG trials.

    References
    ----------
    Jacobson, N. S. & Truax, P. (1991). Clinical significance: a statistical
    approach to defining meaningful change. J. Consult. Clin. Psychol. 59, 12-19.
    "Beyond the Mean: Within-Model Reliable Change Detection for LLM
    Evaluation".  Storey, J. D., Taylor, J. E. & Siegmund, D. (2004). J. R.
    Stat. Soc. B 66, 187-205.

    Examples
    --------
    >>> import pandas as pd
    >>> old = [[1, 1, 1, 1], [1, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1]]
    >>> new = [[1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0], [0, 0, 1, 1], [1, 0, 1, 1], [0, 0, 0, 0]]
    >>> rows = [{"model": m, "subject": "s", "question": i, "sample": k, "correct": y}
    ...         for m, mat in (("old", old), ("new", new))
    ...         for i, row in enumerate(mat) for k, y in enumerate(row)]
    >>> res = reliable_change(pd.DataFrame(rows), before="old", after="new")
    >>> res.items()["class"].tolist()  # Fisher p: 1, 1, 1, 1, 1/7, 1/35
    ['floor_ceiling', 'no_change', 'floor_ceiling', 'no_change', 'no_change', 'deteriorated']
    >>> classical = reliable_change(pd.DataFrame(rows), before="old", after="new", sem="pooled")
    >>> classical.items()["class"].tolist()  # delta / S_diff: 0, 0, 0, 0.87, 2.60, -3.46
    ['floor_ceiling', 'no_change', 'floor_ceiling', 'no_change', 'improved', 'deteriorated']
    >>> round(classical.summary().s_diff ** 2, 6)  # SEM^2: 1/60 + 1/15
    0.083333
    """
    item_cols = _check_options(data, item, split, method, sem, threshold, fdr)
    check_columns(data, item_cols + [score] + [c for c in (sample, by) if c is not None],
                  "item/score/sample/by")
    mask_b, label_b, spec_b = select_version(before, data, model, "before")
    mask_a, label_a, spec_a = select_version(after, data, model, "after")
    both = mask_b & mask_a
    if both.any():
        raise DataError(
            f"before ({label_b}) and after ({label_a}) share {int(both.sum())} rows; expected disjoint "
            "versions. Give each version its own model name or sample set."
        )
    keep = item_cols + ([sample] if sample is not None else []) + [score]
    rows_b, rows_a = data.loc[mask_b], data.loc[mask_a]
    y_all = check_scores(pd.concat([rows_b[score], rows_a[score]]), score)
    binary = bool(np.isin(y_all, (0.0, 1.0)).all())
    common, yb, ya, only_b, only_a = _shared_items(rows_b, rows_a, item_cols, sample, score,
                                                   label_b, label_a)

    rel_b = reliability(yb, split, label_b, "before", sem)
    rel_a = reliability(ya, split, label_a, "after", sem)
    s_diff = float(np.hypot(rel_b["sem"], rel_a["sem"]))
    p_b, p_a = yb.mean(axis=1), ya.mean(axis=1)
    delta = p_a - p_b
    # per-item tests: the classes of sem="item", the p-values of method="eb"
    tests = item_tests(yb, ya, binary=binary) if sem == "item" or method == "eb" else None
    alpha = float(2.0 * stats.norm.sf(threshold))
    rci = _rci(delta, s_diff, tests if sem == "item" else None, alpha, binary, yb.shape[1], ya.shape[1])
    fc = (p_b == p_a) & ((p_b == 0) | (p_b == 1))
    cls = np.where(fc, "floor_ceiling", np.where(rci > threshold, "improved",
                                                 np.where(rci < -threshold, "deteriorated", "no_change")))

    table = common.to_frame(index=False)
    if by is not None and by not in item_cols:
        table[by] = _item_groups(rows_b, rows_a, item_cols, by, common)
    table = table.assign(p_before=p_b, p_after=p_a, delta=delta)
    if tests is not None and sem == "item":
        table = table.assign(std_error=np.sqrt(tests[1]), p_value=tests[0])
    table = table.assign(rci=rci)
    table["class"] = cls.astype(object)
    eb_info = None
    if method == "eb":
        cols, eb_info = eb_item_changes(yb, ya, fc, fdr=fdr, binary=binary, tests=tests)
        table = table.assign(**cols)

    rel = pd.DataFrame([
        {"version": label_b, "role": "before", **rel_b},
        {"version": label_a, "role": "after", **rel_a},
    ])
    versions = {"before": rows_b[keep], "after": rows_a[keep]}
    meta = {
        "method": method, "sem": sem, "alpha": alpha, "split": split, "threshold": float(threshold),
        "fdr": float(fdr),
        "before": label_b, "after": label_a, "before_selector": spec_b, "after_selector": spec_a,
        "item": tuple(item_cols), "sample": sample, "score": score, "by": by, "binary": binary,
        "model": model, "n_items": int(len(common)), "n_only_before": only_b, "n_only_after": only_a,
        "s_diff": s_diff,
    }
    return ReliableChange(before=label_b, after=label_a, method=method, split=split,
                          threshold=float(threshold), fdr=float(fdr), sem=sem, _items=table,
                          _reliability=rel, _meta=meta, _eb=eb_info, _versions=versions)


def _check_options(data: Any, item: str | Sequence[str], split: str, method: str, sem: str,
                   threshold: float, fdr: float) -> list[str]:
    """Validate the options of :func:`reliable_change`; return the item columns."""
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"data must be a pandas DataFrame; received {type(data).__name__}.")
    check_unique_columns(data.columns)
    item_cols = [item] if isinstance(item, str) else list(item)
    if not item_cols:
        raise DataError("item=() names no columns; expected the item key, e.g. ('subject', 'question').")
    if split not in SPLITS:
        raise DataError(f"split={split!r}; expected one of {SPLITS}.")
    if method not in _METHODS:
        raise DataError(f"method={method!r}; expected one of {_METHODS}.")
    if sem not in _SEMS:
        raise DataError(f"sem={sem!r}; expected 'item' (per-item error, exact tests; the default) or "
                        "'pooled' (the classical RCI's single SEM, docs/methods.md §8).")
    if not (np.isfinite(threshold) and threshold > 0):
        raise DataError(f"threshold={threshold!r}; expected a positive number (default z_0.975 = 1.96).")
    if not (0 < fdr < 1):
        raise DataError(f"fdr={fdr!r}; expected a target false discovery rate in (0, 1), e.g. 0.05.")
    return item_cols


def _shared_items(rows_b: pd.DataFrame, rows_a: pd.DataFrame, item_cols: list[str],
                  sample: str | None, score: str, label_b: str, label_a: str
                  ) -> tuple[pd.MultiIndex, np.ndarray, np.ndarray, int, int]:
    """Both versions' items x K matrices on their shared items (warns about the others)."""
    idx_b, yb = version_matrix(rows_b, item_cols, sample, score, label_b, "before")
    idx_a, ya = version_matrix(rows_a, item_cols, sample, score, label_a, "after")
    common = idx_b[idx_b.isin(idx_a)]
    if len(common) == 0:
        raise DataError(
            f"before ({label_b}) and after ({label_a}) share no items (by {item_cols!r}); expected the "
            "same items scored in both versions. Check the selectors and the item key columns "
            "(e.g. differently spelled question ids)."
        )
    only_b = int(len(idx_b) - len(common))
    only_a = int(len(idx_a) - int(idx_a.isin(common).sum()))
    if only_b or only_a:
        warnings.warn(
            f"{only_b} item(s) appear only in before ({label_b}) and {only_a} only in after "
            f"({label_a}); they are dropped and the analysis uses the {len(common)} shared items.",
            MissingDataWarning, stacklevel=3)
    if len(common) < 3:
        raise DesignError(f"the versions share {len(common)} item(s); the split-half reliability needs "
                          "at least 3 items.")
    return common, yb[idx_b.get_indexer(common)], ya[idx_a.get_indexer(common)], only_b, only_a


def _rci(delta: np.ndarray, s_diff: float, tests: tuple[np.ndarray, np.ndarray] | None, alpha: float,
         binary: bool, k_before: int, k_after: int) -> np.ndarray:
    """The RCI of each item: the per-item test's z-equivalent (``tests`` given) or delta / S_diff."""
    if tests is not None:
        # z-equivalent of the exact per-item p-value: |rci| > threshold <=> p < alpha
        p_min = smallest_fisher_p(k_before, k_after) if binary else 0.0
        if p_min >= alpha:
            warnings.warn(
                f"with K = {k_before} (before) and {k_after} (after) 0/1 samples per item no item "
                f"can show a reliable change at level {alpha:.3g}: the smallest exact p-value of such an "
                f"item is {p_min:.3g}. Use more samples per version (K = 4 each reaches 2/70), or "
                "sem='pooled' for the classical RCI, which assumes one error variance for all items "
                "and calls unchanged items near p = 1/2 changed far more often than 5%.",
                MixrankWarning, stacklevel=3)
        return np.sign(delta) * stats.norm.isf(tests[0] / 2.0)
    if s_diff > 0:
        return delta / s_diff
    warnings.warn("S_diff = 0 (both versions have r_xx = 1): every non-zero change is reliable.",
                  MixrankWarning, stacklevel=3)
    return np.where(delta == 0, 0.0, np.sign(delta) * np.inf)


def _item_groups(rows_b: pd.DataFrame, rows_a: pd.DataFrame, item_cols: list[str], by: str,
                 common: pd.MultiIndex) -> np.ndarray:
    """The ``by`` value of each shared item (it must be constant within items)."""
    both_rows = pd.concat([rows_b[item_cols + [by]], rows_a[item_cols + [by]]])
    nun = both_rows.groupby(item_cols, sort=False, dropna=False)[by].nunique(dropna=False)
    if (nun > 1).any():
        raise DataError(f"by={by!r} is not constant within items (first: {nun[nun > 1].index[0]!r}); "
                        "expected one value per item. Pass a column that groups items, or by=None.")
    first = both_rows.drop_duplicates(item_cols).set_index(item_cols)[by]
    first.index = pd.MultiIndex.from_frame(first.index.to_frame(index=False))
    return first.reindex(common).to_numpy()
