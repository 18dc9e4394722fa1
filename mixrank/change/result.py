"""Stage change: the result objects of a reliable-change analysis (docs/methods.md §8).

Inputs: the per-item table, reliability rows and metadata computed by
:func:`mixrank.change.rci.reliable_change`.
Outputs: tidy tables from the accessors of :class:`ReliableChange`
(``items()``, ``summary()``, ``by_subject()``, ``vs_greedy()``).
Contents: :class:`ReliableChange`, :class:`ReliableChangeSummary`,
:data:`CLASSES`.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mixrank._util import TextDisplay, tidy
from mixrank.change.difficulty import DIFFICULTY_EDGES, change_by_difficulty, smallest_item_p
from mixrank.change.versions import check_columns, check_scores, select_version
from mixrank.errors import DataError, DesignError, MissingDataWarning

__all__ = ["ReliableChange", "ReliableChangeSummary", "CLASSES"]

#: Item classes, in reporting order.
CLASSES = ("improved", "deteriorated", "no_change", "floor_ceiling")
_CHANGED = ("improved", "deteriorated")


@dataclass(frozen=True, repr=False)
class ReliableChangeSummary(TextDisplay):
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
        deteriorated) / n, median ``|delta p|`` among reliably changed items.
    reliability : pandas.DataFrame
        ``version, role, n_items, k, k_split, r_half, r_xx, std_dev, sem``
        per version (``k_split`` samples entered the split; ``r_half`` the
        half correlation; ``std_dev`` the SD of p over items).
    s_diff, threshold : float
        Standard error of the difference (docs/methods.md §8; it decides the classes
        only with ``sem="pooled"``) and the ``|RCI|`` cut-off.
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
    min_p_value : float
        The smallest p-value an item's own test can reach with the K at hand
        (``sem="item"``; 0/1 scores: Fisher at complete separation, e.g.
        0.1 at K = 3 + 3, so no item reaches alpha = 0.05; continuous: 0).
        NaN with ``sem="pooled"``.

    Examples
    --------
    >>> import mixrank
    >>> runs = mixrank.load_dataset("llm_stability")     # one model, five identical runs
    >>> rc = mixrank.reliable_change(runs, before={"sample": [0, 1]},
    ...                  after={"sample": [2, 3]}, sem="pooled")
    >>> s = rc.summary()
    >>> s.n_items, s.n_analysable, s.reliability["k"].tolist()
    (1407, 272, [2, 2])
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
    min_p_value: float = float("nan")

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
            if np.isfinite(self.min_p_value):
                reach = ("no item can reach it" if self.min_p_value >= m.get("alpha", 0.05)
                         else "reachable")
                lines.append(f"  smallest attainable p-value with these K: "
                             f"{self.min_p_value:.4g} ({reach})")
        else:
            lines.append("  classes: sem=pooled, |delta| / S_diff > threshold (classical RCI)")
        for r in self.change.itertuples(index=False):
            lines.append(f"  [{r.method}/{r.subset}] churn={r.churn:.3f} net={r.net_change:+.3f} "
                         f"median|dp|={r.median_abs_delta:.3f} (n={r.n}, changed={r.n_changed})")
        if self.eb is not None:
            lines.append(f"  EB: mu={self.eb['mu']:+.4f} tau^2={self.eb['tau2']:.4g} "
                         f"pi0={self.eb['pi0']:.3f} FDR target={self.eb['fdr']}")
        return "\n".join(lines)


@dataclass(frozen=True, repr=False)
class ReliableChange(TextDisplay):
    """Result of :func:`reliable_change`; accessors return fresh tidy tables.

    Attributes
    ----------
    before, after : str
        Labels of the two versions (model name or selector text).
    method, sem, split : str
        As passed to :func:`reliable_change`.
    threshold, fdr : float
        ``|RCI|`` cut-off and target FDR of the empirical-Bayes classes.

    Examples
    --------
    >>> import mixrank
    >>> runs = mixrank.load_dataset("llm_stability")     # one model, five identical runs
    >>> rc = mixrank.reliable_change(runs, before={"sample": [0, 1]},
    ...                  after={"sample": [2, 3]}, sem="pooled")
    >>> print(rc)
    <ReliableChange 'sample in [0, 1]' -> 'sample in [2, 3]': 1407 items, method=rci, sem=pooled>
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

    def __str__(self) -> str:
        return (f"<ReliableChange {self.before!r} -> {self.after!r}: {len(self._items)} items, "
                f"method={self.method}, sem={self.sem}>")

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

        Examples
        --------
        >>> import mixrank
        >>> runs = mixrank.load_dataset("llm_stability")     # one model, five identical runs
        >>> rc = mixrank.reliable_change(runs, before={"sample": [0, 1]},
        ...                              after={"sample": [2, 3]}, sem="pooled")
        >>> it = rc.items()
        >>> it.columns.tolist()
        ['subject', 'question', 'p_before', 'p_after', 'delta', 'rci', 'class']
        >>> int((it["class"] == "improved").sum())
        116
        """
        return self._table(self._items.copy(), "items")

    def summary(self) -> ReliableChangeSummary:
        """Class shares, churn, reliability per version, SEM and S_diff.

        Returns
        -------
        ReliableChangeSummary
            See its attributes.

        Examples
        --------
        >>> import mixrank
        >>> runs = mixrank.load_dataset("llm_stability")     # one model, five identical runs
        >>> rc = mixrank.reliable_change(runs, before={"sample": [0, 1]},
        ...                              after={"sample": [2, 3]}, sem="pooled")
        >>> s = rc.summary()
        >>> s.n_items, s.n_analysable, round(s.s_diff, 3)
        (1407, 272, 0.232)
        >>> s.classes.query("subset == 'all'")[["class", "n"]].values.tolist()
        [['improved', 116], ['deteriorated', 97], ['no_change', 59], ['floor_ceiling', 1135]]
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
            min_p_value=self._min_p(),
        )

    def _min_p(self) -> float:
        if self.sem != "item":
            return float("nan")
        k = {r.role: int(r.k) for r in self._reliability.itertuples(index=False)}
        return smallest_item_p(k["before"], k["after"], binary=bool(self._meta["binary"]))

    def by_difficulty(self, *, edges: Sequence[float] = DIFFICULTY_EDGES) -> pd.DataFrame:
        """Change by item difficulty ``p_before`` (regression to the middle).

        Parameters
        ----------
        edges : list of float, optional
            Bin edges of ``p_before`` in [0, 1] (default :data:`DIFFICULTY_EDGES`).

        Returns
        -------
        pandas.DataFrame
            One row per (method, bin): ``method`` and the columns of
            :func:`mixrank.change.difficulty.change_by_difficulty`: ``p_lower,
            p_upper`` (``0, 0`` and ``1, 1`` for the exact extremes), ``n``
            (items), ``mean_p_before, mean_delta, headroom_up`` (mean ``1 -
            p_before``), ``headroom_down`` (mean ``p_before``), ``n_improved,
            n_deteriorated, n_no_change, n_floor_ceiling, share_improved,
            share_deteriorated`` (of the bin's items).

        Raises
        ------
        DesignError
            ``edges`` not increasing values strictly between 0 and 1.

        Examples
        --------
        >>> import mixrank
        >>> runs = mixrank.load_dataset("llm_stability")     # one model, five identical runs
        >>> rc = mixrank.reliable_change(runs, before={"sample": [0, 1]},
        ...                              after={"sample": [2, 3]}, sem="pooled")
        >>> rc.by_difficulty()["n"].tolist()    # items at p = 0, (0, .25], ..., at p = 1
        [206, 0, 144, 0, 0, 1057]
        """
        parts = []
        for name, col in self._methods():
            t = change_by_difficulty(self._items, class_column=col, edges=edges)
            t.insert(0, "method", name)
            parts.append(t)
        return self._table(pd.concat(parts, ignore_index=True), "by_difficulty")

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

        Examples
        --------
        >>> import mixrank
        >>> runs = mixrank.load_dataset("llm_stability")     # one model, five identical runs
        >>> rc = mixrank.reliable_change(runs, before={"sample": [0, 1]},
        ...                              after={"sample": [2, 3]}, sem="pooled")
        >>> rc.by_subject()[["subject", "n_analysable", "reversal"]].values.tolist()[:2]
        [['college_mathematics', 32, True], ['high_school_european_history', 8, False]]
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

        Examples
        --------
        >>> import mixrank
        >>> runs = mixrank.load_dataset("llm_stability")     # one model, five identical runs
        >>> rc = mixrank.reliable_change(runs, before={"sample": [0, 1]},
        ...                              after={"sample": [2, 3]}, sem="pooled")
        >>> g = rc.vs_greedy(runs, before={"sample": 0}, after={"sample": 2})
        >>> g["outcome"].tolist()
        ['agree_change', 'false_negative', 'opposite_flip', 'false_positive', 'agree_no_change']
        >>> g["n"].tolist()
        [113, 100, 0, 29, 1165]
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
