"""Stage design: item-level reliable change between two model versions (docs/methods.md §8).

Inputs: a long DataFrame with one row per (version, item, sample) and two
version selectors (model names, or column -> values mappings).
Outputs: a :class:`ReliableChange` whose accessors return tidy tables:
``items()`` (one row per item: p before/after, change, RCI, class and, with
``method="eb"``, the empirical-Bayes columns), ``summary()`` (a
:class:`ReliableChangeSummary` with class shares, churn, reliability, SEM and
S_diff), ``by_subject()`` (net change, churn and reversals per subject) and
``vs_greedy()`` (what a single-run comparison gets right and wrong).
Contents: :func:`reliable_change`, :class:`ReliableChange`,
:class:`ReliableChangeSummary`.  The per-item tests and the empirical-Bayes
arithmetic live in :mod:`mixrank.design.rci_eb`, the input checks in
:mod:`mixrank.design.rci_input`.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from mixrank._util import tidy
from mixrank.design.rci_eb import eb_item_changes, item_tests, smallest_fisher_p
from mixrank.design.rci_input import check_columns, check_scores, select_version, version_matrix
from mixrank.errors import DataError, DesignError, MissingDataWarning, MixrankWarning

__all__ = ["reliable_change", "ReliableChange", "ReliableChangeSummary", "CLASSES"]

#: Item classes, in reporting order.
CLASSES = ("improved", "deteriorated", "no_change", "floor_ceiling")
_CHANGED = ("improved", "deteriorated")
_SPLITS = ("halves", "odd_even")
_METHODS = ("rci", "eb")
_SEMS = ("item", "pooled")


# --------------------------------------------------------------------------- reliability
def _split_half(y: np.ndarray, split: str) -> tuple[float, int]:
    """Pearson r between half means (samples in sample-id order) and the samples used."""
    k = y.shape[1]
    k_used = k - (k % 2)
    if split == "halves":
        a, b = y[:, : k_used // 2], y[:, k_used // 2: k_used]
    else:
        a, b = y[:, 0:k_used:2], y[:, 1:k_used:2]
    ma, mb = a.mean(axis=1), b.mean(axis=1)
    if np.ptp(ma) <= 1e-12 or np.ptp(mb) <= 1e-12:
        return float("nan"), k_used
    return float(np.corrcoef(ma, mb)[0, 1]), k_used


def _reliability(y: np.ndarray, split: str, label: str, role: str, sem: str) -> dict:
    r_half, k_used = _split_half(y, split)
    p = y.mean(axis=1)
    sd = float(np.std(p, ddof=1))
    if np.isnan(r_half) and sem == "item":
        # descriptive only: the per-item classes do not use it
        warnings.warn(
            f"split-half reliability of {role} ({label}) is undefined (one half's item means do not "
            f"vary across the {y.shape[0]} items); r_xx, SEM and S_diff are reported as NaN. The "
            "per-item classes (sem='item') do not depend on them.", MixrankWarning, stacklevel=3)
        return {"n_items": int(y.shape[0]), "k": int(y.shape[1]), "k_split": k_used, "r_half": r_half,
                "r_xx": float("nan"), "std_dev": sd, "sem": float("nan")}
    if np.isnan(r_half):
        raise DesignError(
            f"split-half reliability of {role} ({label}) is undefined: one half's item means do not "
            f"vary across the {y.shape[0]} items. The RCI needs items that differ in difficulty and "
            "K >= 2 samples; use more items or samples."
        )
    r_xx = 2.0 * r_half / (1.0 + r_half) if r_half > -1 else float("-inf")
    if r_xx <= 0 and sem == "pooled":
        warnings.warn(
            f"split-half reliability of {role} ({label}) is r_xx = {r_xx:.4g} <= 0 (half correlation "
            f"{r_half:.4g}): the samples do not rank items consistently. SEM is computed with r_xx "
            "floored at 0 (SEM = SD: all variance treated as error), so no change will look reliable.",
            MixrankWarning, stacklevel=3)
    return {"n_items": int(y.shape[0]), "k": int(y.shape[1]), "k_split": k_used, "r_half": r_half,
            "r_xx": r_xx, "std_dev": sd, "sem": sd * float(np.sqrt(1.0 - max(r_xx, 0.0)))}


# --------------------------------------------------------------------------- public entry
def reliable_change(
    data: pd.DataFrame,
    *,
    before: Hashable | Mapping[str, Any],
    after: Hashable | Mapping[str, Any],
    model: str = "model",
    item: str | Sequence[str] = ("subject", "question"),
    sample: str | None = "sample",
    score: str = "correct",
    split: str = "halves",
    by: str | None = "subject",
    method: str = "rci",
    sem: str = "item",
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
        |RCI| above which a change is reliable; with ``sem="item"`` this is
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
    :mod:`mixrank.design.rci_eb`).  With few 0/1 samples (K = 4 gives a
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
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"data must be a pandas DataFrame; received {type(data).__name__}.")
    item_cols = [item] if isinstance(item, str) else list(item)
    if not item_cols:
        raise DataError("item=() names no columns; expected the item key, e.g. ('subject', 'question').")
    if split not in _SPLITS:
        raise DataError(f"split={split!r}; expected one of {_SPLITS}.")
    if method not in _METHODS:
        raise DataError(f"method={method!r}; expected one of {_METHODS}.")
    if sem not in _SEMS:
        raise DataError(f"sem={sem!r}; expected 'item' (per-item error, exact tests; the default) or "
                        "'pooled' (the classical RCI's single SEM, docs/methods.md §8).")
    if not (np.isfinite(threshold) and threshold > 0):
        raise DataError(f"threshold={threshold!r}; expected a positive number (default z_0.975 = 1.96).")
    if not (0 < fdr < 1):
        raise DataError(f"fdr={fdr!r}; expected a target false discovery rate in (0, 1), e.g. 0.05.")
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
            MissingDataWarning, stacklevel=2)
    if len(common) < 3:
        raise DesignError(f"the versions share {len(common)} item(s); the split-half reliability needs "
                          "at least 3 items.")
    yb, ya = yb[idx_b.get_indexer(common)], ya[idx_a.get_indexer(common)]

    rel_b = _reliability(yb, split, label_b, "before", sem)
    rel_a = _reliability(ya, split, label_a, "after", sem)
    s_diff = float(np.hypot(rel_b["sem"], rel_a["sem"]))
    p_b, p_a = yb.mean(axis=1), ya.mean(axis=1)
    delta = p_a - p_b
    # per-item tests: the classes of sem="item", the p-values of method="eb"
    tests = item_tests(yb, ya, binary=binary) if sem == "item" or method == "eb" else None
    alpha = float(2.0 * stats.norm.sf(threshold))
    if tests is not None and sem == "item":
        # z-equivalent of the exact per-item p-value: |rci| > threshold <=> p < alpha
        rci = np.sign(delta) * stats.norm.isf(tests[0] / 2.0)
        p_min = smallest_fisher_p(yb.shape[1], ya.shape[1]) if binary else 0.0
        if p_min >= alpha:
            warnings.warn(
                f"with K = {yb.shape[1]} (before) and {ya.shape[1]} (after) 0/1 samples per item no item "
                f"can show a reliable change at level {alpha:.3g}: the smallest exact p-value of such an "
                f"item is {p_min:.3g}. Use more samples per version (K = 4 each reaches 2/70), or "
                "sem='pooled' for the classical RCI, which assumes one error variance for all items "
                "and calls unchanged items near p = 1/2 changed far more often than 5%.",
                MixrankWarning, stacklevel=2)
    elif s_diff > 0:
        rci = delta / s_diff
    else:
        warnings.warn("S_diff = 0 (both versions have r_xx = 1): every non-zero change is reliable.",
                      MixrankWarning, stacklevel=2)
        rci = np.where(delta == 0, 0.0, np.sign(delta) * np.inf)
    fc = (p_b == p_a) & ((p_b == 0) | (p_b == 1))
    cls = np.where(fc, "floor_ceiling", np.where(rci > threshold, "improved",
                                                 np.where(rci < -threshold, "deteriorated", "no_change")))

    table = common.to_frame(index=False)
    if by is not None and by not in item_cols:
        both_rows = pd.concat([rows_b[item_cols + [by]], rows_a[item_cols + [by]]])
        nun = both_rows.groupby(item_cols, sort=False, dropna=False)[by].nunique(dropna=False)
        if (nun > 1).any():
            raise DataError(f"by={by!r} is not constant within items (first: {nun[nun > 1].index[0]!r}); "
                            "expected one value per item. Pass a column that groups items, or by=None.")
        first = both_rows.drop_duplicates(item_cols).set_index(item_cols)[by]
        first.index = pd.MultiIndex.from_frame(first.index.to_frame(index=False))
        table[by] = first.reindex(common).to_numpy()
    table = table.assign(p_before=p_b, p_after=p_a, delta=delta)
    if tests is not None and sem == "item":
        table = table.assign(std_error=np.sqrt(tests[1]), p_value=tests[0])
    table = table.assign(rci=rci)
    table["class"] = cls.astype(object)
    eb_info = None
    if method == "eb":
        cols, eb_info = eb_item_changes(yb, ya, fc, fdr=fdr, binary=binary, tests=tests)
        table = table.assign(**cols)

    reliability = pd.DataFrame([
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
                          _reliability=reliability, _meta=meta, _eb=eb_info, _versions=versions)


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class ReliableChangeSummary:
    """Summary of a :class:`ReliableChange` (returned by ``summary()``; printing is separate).

    Attributes
    ----------
    classes : pandas.DataFrame
        ``method, subset, class, n, share``: counts and shares of each class,
        ``subset`` ``"all"`` (share of all items) or ``"analysable"`` (share of
        the items not at floor/ceiling, whose ``floor_ceiling`` row is 0).
    change : pandas.DataFrame
        ``method, subset, n, n_changed, churn, net_change, median_abs_delta``:
        churn = share reliably changed either way, net_change = (improved -
        deteriorated) / n, median |delta p| among reliably changed items.
    reliability : pandas.DataFrame
        ``version, role, n_items, k, k_split, r_half, r_xx, std_dev, sem``
        per version (``k_split`` samples entered the split; ``r_half`` the
        half correlation; ``std_dev`` the SD of p over items).
    s_diff, threshold : float
        Standard error of the difference (docs/methods.md §8; it decides the classes
        only with ``sem="pooled"``) and the |RCI| cut-off.
    mean_delta : float
        Mean change p_after - p_before over all items.
    n_items, n_analysable : int
        Shared items and those not at floor/ceiling in both versions.
    eb : dict or None
        ``method="eb"``: ``mu``, ``tau2``, ``mu_std_error`` (normal-normal fit),
        ``pi0``, ``lambda`` (Storey), ``fdr`` target, ``n_family``,
        ``n_discoveries``.
    meta : dict
        Selectors, split, method and column names.
    """

    classes: pd.DataFrame
    change: pd.DataFrame
    reliability: pd.DataFrame
    s_diff: float
    threshold: float
    mean_delta: float
    n_items: int
    n_analysable: int
    eb: dict | None = None
    meta: dict = field(default_factory=dict)

    def __str__(self) -> str:
        m = self.meta
        lines = [f"Reliable change: {m.get('before')} -> {m.get('after')} "
                 f"({self.n_items} items, {self.n_analysable} analysable; split={m.get('split')})"]
        for r in self.reliability.itertuples(index=False):
            lines.append(f"  {r.role:<6} K={r.k} r_xx={r.r_xx:.3f} SD={r.std_dev:.4f} SEM={r.sem:.4f}")
        lines.append(f"  S_diff={self.s_diff:.4f}  threshold={self.threshold:.3f}  "
                     f"mean delta={self.mean_delta:+.4f}")
        if m.get("sem") == "item":
            lines.append(f"  classes: sem=item, exact per-item test at level {m.get('alpha', 0.05):.3g} "
                         "(S_diff above is descriptive)")
        else:
            lines.append("  classes: sem=pooled, |delta| / S_diff > threshold (classical RCI)")
        for r in self.change.itertuples(index=False):
            lines.append(f"  [{r.method}/{r.subset}] churn={r.churn:.3f} net={r.net_change:+.3f} "
                         f"median|dp|={r.median_abs_delta:.3f} (n={r.n}, changed={r.n_changed})")
        if self.eb is not None:
            lines.append(f"  EB: mu={self.eb['mu']:+.4f} tau^2={self.eb['tau2']:.4g} "
                         f"pi0={self.eb['pi0']:.3f} FDR target={self.eb['fdr']}")
        return "\n".join(lines)


@dataclass(frozen=True)
class ReliableChange:
    """Result of :func:`reliable_change`; accessors return fresh tidy tables.

    Attributes
    ----------
    before, after : str
        Labels of the two versions (model name or selector text).
    method, sem, split : str
        As passed to :func:`reliable_change`.
    threshold, fdr : float
        |RCI| cut-off and target FDR of the empirical-Bayes classes.
    """

    before: str
    after: str
    method: str
    split: str
    threshold: float
    fdr: float
    sem: str
    _items: pd.DataFrame = field(repr=False)
    _reliability: pd.DataFrame = field(repr=False)
    _meta: dict = field(repr=False)
    _eb: dict | None = field(repr=False)
    _versions: dict = field(repr=False)

    def _methods(self) -> list[tuple[str, str]]:
        out = [("rci", "class")]
        if self._eb is not None:
            out.append(("eb", "eb_class"))
        return out

    def _table(self, df: pd.DataFrame, what: str) -> pd.DataFrame:
        meta = {k: v for k, v in self._meta.items() if k not in ("before_selector", "after_selector")}
        meta["before_selector"] = dict(self._meta["before_selector"])
        meta["after_selector"] = dict(self._meta["after_selector"])
        return tidy(df, table=what, **meta)

    # accessors ----------------------------------------------------------------
    def items(self) -> pd.DataFrame:
        """One row per shared item.

        Returns
        -------
        pandas.DataFrame
            The item columns, the ``by`` column (if not an item column),
            ``p_before``, ``p_after`` (mean score over the K samples),
            ``delta`` (= p_after - p_before), with ``sem="item"``
            ``std_error`` (null SD of delta) and ``p_value`` (Fisher exact or
            t test of no change), then ``rci`` (``sem="item"``: the
            z-equivalent ``sign(delta) z_{1-p/2}``; ``sem="pooled"``: delta /
            S_diff) and ``class`` (improved, deteriorated, no_change,
            floor_ceiling).  With ``method="eb"`` also ``std_error`` and
            ``p_value``, ``eb_estimate`` and ``eb_std_error`` (shrinkage
            estimate of the true change and its prediction SE), ``q_value``
            (Storey; NaN for floor/ceiling items, outside the family) and
            ``eb_class``.
        """
        return self._table(self._items.copy(), "items")

    def summary(self) -> ReliableChangeSummary:
        """Class shares, churn, reliability per version, SEM and S_diff.

        Returns
        -------
        ReliableChangeSummary
            See its attributes.
        """
        it = self._items
        fc = (it["class"] == "floor_ceiling").to_numpy()
        d = it["delta"].to_numpy()
        n_all, n_an = len(it), int((~fc).sum())
        cls_rows, chg_rows = [], []
        for name, col in self._methods():
            for subset, keep in (("all", np.ones_like(fc)), ("analysable", ~fc)):
                c, n = it[col].to_numpy()[keep], int(keep.sum())
                cnt = {k: int(np.sum(c == k)) for k in CLASSES}
                cls_rows += [{"method": name, "subset": subset, "class": k, "n": v,
                              "share": v / n if n else float("nan")} for k, v in cnt.items()]
                changed = np.isin(c, _CHANGED)
                chg_rows.append({
                    "method": name, "subset": subset, "n": n, "n_changed": int(changed.sum()),
                    "churn": changed.sum() / n if n else float("nan"),
                    "net_change": (cnt["improved"] - cnt["deteriorated"]) / n if n else float("nan"),
                    "median_abs_delta": float(np.median(np.abs(d[keep][changed]))) if changed.any()
                    else float("nan"),
                })
        return ReliableChangeSummary(
            classes=self._table(pd.DataFrame(cls_rows), "summary_classes"),
            change=self._table(pd.DataFrame(chg_rows), "summary_change"),
            reliability=self._table(self._reliability.copy(), "reliability"),
            s_diff=self._meta["s_diff"], threshold=self.threshold,
            mean_delta=float(it["delta"].mean()), n_items=n_all, n_analysable=n_an,
            eb=None if self._eb is None else dict(self._eb), meta=dict(self._meta),
        )

    def by_subject(self) -> pd.DataFrame:
        """Net change, churn and reversals per value of ``by`` (default ``subject``).

        Returns
        -------
        pandas.DataFrame
            One row per (``by`` value, method): the ``by`` column, ``method``
            (``rci``, and ``eb`` with ``method="eb"``), ``n`` (items),
            ``n_analysable``, ``n_improved``, ``n_deteriorated``,
            ``n_no_change``, ``n_floor_ceiling``, ``churn`` (share of the
            analysable items reliably changed), ``net_change`` ((improved -
            deteriorated) / analysable), ``mean_delta`` (mean p_after -
            p_before over all its items) and ``reversal`` (True when
            ``net_change`` is non-zero with the opposite sign of the overall
            net change of the same method; False when the overall one is 0).

        Raises
        ------
        DesignError
            The result was computed with ``by=None``.
        """
        by = self._meta["by"]
        if by is None:
            raise DesignError("by_subject() needs a grouping column; the result was computed with "
                              "by=None. Recompute with by='subject' (or another item grouping).")
        it = self._items
        d = it["delta"].to_numpy()
        groups = it.groupby(by, sort=True, dropna=False).indices
        rows = []
        for name, col in self._methods():
            c = it[col].to_numpy()
            n_an_all = int(np.sum(c != "floor_ceiling"))
            overall = (np.sum(c == "improved") - np.sum(c == "deteriorated")) / n_an_all if n_an_all else 0.0
            for key, idx in groups.items():
                cnt = {k: int(np.sum(c[idx] == k)) for k in CLASSES}
                n_an = idx.size - cnt["floor_ceiling"]
                net = (cnt["improved"] - cnt["deteriorated"]) / n_an if n_an else float("nan")
                rows.append({
                    by: key, "method": name, "n": int(idx.size), "n_analysable": int(n_an),
                    **{f"n_{k}": v for k, v in cnt.items()},
                    "churn": (cnt["improved"] + cnt["deteriorated"]) / n_an if n_an else float("nan"),
                    "net_change": net, "mean_delta": float(d[idx].mean()),
                    "reversal": bool(n_an and overall != 0 and net != 0 and np.sign(net) == -np.sign(overall)),
                })
        return self._table(pd.DataFrame(rows), "by_subject")

    def vs_greedy(self, greedy: pd.DataFrame | Hashable, *,
                  before: Hashable | Mapping[str, Any] | None = None,
                  after: Hashable | Mapping[str, Any] | None = None) -> pd.DataFrame:
        """Compare the reliable-change classes with a single-run (greedy) comparison.

        Parameters
        ----------
        greedy : pandas.DataFrame or scalar
            A long DataFrame with the same column names and one row per item
            per version (a greedy, K = 1 or T = 0, run of each version); or a
            ``sample`` value: the row with that sample id is taken from each
            version's rows of the analysed data.
        before, after : hashable or mapping, optional
            DataFrame form only: selectors of the greedy versions in
            ``greedy`` (as in :func:`reliable_change`); default the ones of
            this result.

        Returns
        -------
        pandas.DataFrame
            One row per (method, outcome): ``method`` (rci, eb), ``outcome``,
            ``n``, ``share`` (n / compared items), ``reference``,
            ``n_reference`` and ``rate`` (n / n_reference).  Outcomes (mutually
            exclusive), with their reference group:

            * ``agree_change``: reliable change, greedy flips the same way (reliable_change);
            * ``false_negative``: reliable change, greedy unchanged (reliable_change);
            * ``opposite_flip``: reliable change, greedy flips the other way
              (reliable_change); also a miss: the false negatives of
              docs/methods.md §8 are ``false_negative + opposite_flip``;
            * ``false_positive``: greedy flips, class no_change or
              floor_ceiling (greedy_flip);
            * ``agree_no_change``: neither (greedy_no_flip).

        Raises
        ------
        DataError
            Greedy versions with other than one row per item, or sharing no
            items with the result.

        Warns
        -----
        MissingDataWarning
            Result items missing from the greedy data (compared on the rest).

        Notes
        -----
        A greedy flip is ``y_after != y_before``; its direction the sign of
        ``y_after - y_before``.  All items take part, floor/ceiling ones as
        "no reliable change".
        """
        meta = self._meta
        item, sample, score = list(meta["item"]), meta["sample"], meta["score"]
        if isinstance(greedy, pd.DataFrame):
            check_columns(greedy, item + [score], "greedy item/score")
            sel_b = meta["before_selector"] if before is None else before
            sel_a = meta["after_selector"] if after is None else after
            mask_b, lab_b, _ = select_version(sel_b, greedy, meta["model"], "greedy before")
            mask_a, lab_a, _ = select_version(sel_a, greedy, meta["model"], "greedy after")
            g_b, g_a = greedy.loc[mask_b], greedy.loc[mask_a]
        else:
            if before is not None or after is not None:
                raise DataError("before=/after= apply to a greedy DataFrame only; with greedy="
                                f"{greedy!r} (a sample id) the versions are those of the result.")
            if sample is None:
                raise DataError("greedy as a sample id needs a sample column; the result has sample=None. "
                                "Pass the greedy runs as a DataFrame.")
            lab_b = lab_a = f"{sample} == {greedy!r}"
            g_b = self._versions["before"].loc[lambda d: d[sample] == greedy]
            g_a = self._versions["after"].loc[lambda d: d[sample] == greedy]
        ys = []
        for rows, lab, role in ((g_b, lab_b, "greedy before"), (g_a, lab_a, "greedy after")):
            if rows.empty:
                raise DataError(f"{role} ({lab}) selects no rows; expected one row per item.")
            if rows.duplicated(item).any():
                raise DataError(f"{role} ({lab}) has several rows for some items (first "
                                f"{rows.loc[rows.duplicated(item), item].iloc[0].to_dict()!r}); expected one "
                                "greedy run per item. Select a single sample, e.g. before={'sample': [0]}.")
            y = check_scores(rows[score], score)
            ys.append(pd.Series(y, index=pd.MultiIndex.from_frame(rows[item])))
        it = self._items
        idx = pd.MultiIndex.from_frame(it[item])
        ok = idx.isin(ys[0].index) & idx.isin(ys[1].index)
        if not ok.any():
            raise DataError(f"the greedy runs share no items with the result (by {item!r}); expected "
                            "the same items. Check the item columns and selectors.")
        if not ok.all():
            warnings.warn(f"{int((~ok).sum())} of {len(ok)} result items are missing from the greedy runs; "
                          "they are left out of the comparison.", MissingDataWarning, stacklevel=2)
        flip = np.sign(ys[1].reindex(idx[ok]).to_numpy() - ys[0].reindex(idx[ok]).to_numpy())
        n = int(ok.sum())
        rows_out = []
        for name, col in self._methods():
            c = it[col].to_numpy()[ok]
            sign = np.where(c == "improved", 1, np.where(c == "deteriorated", -1, 0))
            rel = sign != 0
            counts = {
                "agree_change": (int(np.sum(rel & (flip == sign))), "reliable_change", int(rel.sum())),
                "false_negative": (int(np.sum(rel & (flip == 0))), "reliable_change", int(rel.sum())),
                "opposite_flip": (int(np.sum(rel & (flip == -sign))), "reliable_change", int(rel.sum())),
                "false_positive": (int(np.sum(~rel & (flip != 0))), "greedy_flip", int(np.sum(flip != 0))),
                "agree_no_change": (int(np.sum(~rel & (flip == 0))), "greedy_no_flip",
                                    int(np.sum(flip == 0))),
            }
            for outcome, (k, ref, n_ref) in counts.items():
                rows_out.append({"method": name, "outcome": outcome, "n": k, "share": k / n,
                                 "reference": ref, "n_reference": n_ref,
                                 "rate": k / n_ref if n_ref else float("nan")})
        out = self._table(pd.DataFrame(rows_out), "vs_greedy")
        out.attrs["mixrank"].update(greedy_before=lab_b, greedy_after=lab_a, n_compared=n)
        return out
