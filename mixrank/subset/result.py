"""Stage subset (results): :class:`SubsetResult`, the answer of :func:`mixrank.subset_score`.

Inputs: the per-model estimates of the estimator and the reference models'
full-benchmark means.  Outputs: tidy tables -- :meth:`SubsetResult.scores`,
``SubsetResult.contrasts`` (a new model against each reference model: the
one template of :class:`~mixrank.results.base.ContrastsTemplate`, this
module supplying the pair estimates) and :meth:`SubsetResult.rank_intervals`
(its rank among them).  A reference model's full mean is known exactly
(every item was run), so a contrast carries the new model's sampling error
alone and the rank interval is the set of ranks the score interval allows.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from scipy import stats

from mixrank.errors import DesignError, OptionError
from mixrank.inference.multiplicity import adjust_values
from mixrank.results.base import ContrastsTemplate, OptionTable, PairEstimates

__all__ = ["SubsetResult", "METHODS"]

#: The estimates of :func:`mixrank.subset_score`: design-based first, then model-based.
METHODS = ("model_assisted", "stratified_mean", "irt")


class SubsetResult(ContrastsTemplate):
    """A new model's full-benchmark score estimated from a probability sample of items.

    Attributes
    ----------
    level : float
        Confidence level of every interval.
    meta : dict
        Formula, item model, items, strata, reference models (copied into
        each table's ``attrs["mixrank"]``).

    Examples
    --------
    >>> import mixrank
    >>> data = mixrank.load_dataset("chembench").query("prompt == 'default'")
    >>> ref, new = data[data.model != "o1"], data[data.model == "o1"]
    >>> sel = mixrank.select_items(ref, 100, rng=2)
    >>> res = mixrank.subset_score(ref, new[new.question.isin(sel.question)], selection=sel)
    >>> res.level, res.meta["n_reference_models"]
    (0.95, 24)
    """

    #: Options per accessor (:attr:`~mixrank.results.base.ContrastsTemplate.OPTIONS`).
    OPTIONS: ClassVar[OptionTable] = {
        "contrasts": {"method": METHODS, "adjust": adjust_values("subset_contrasts")},
        "scores": {"method": METHODS}, "rank_intervals": {"method": METHODS}}
    #: At most one of a new model's contrasts can be null: unadjusted p-values are the
    #: closed-testing answer (see ``contrasts``'s Notes).
    DEFAULT_ADJUST: ClassVar[str] = "none"

    def __init__(self, scores: pd.DataFrame, reference: pd.DataFrame, level: float,
                 meta: dict[str, Any]) -> None:
        self.scores_table = scores
        self.reference = reference
        self.level = level
        self.meta = dict(meta)

    def __str__(self) -> str:
        models = self.scores_table["model"].nunique()
        return (f"SubsetResult({models} new model(s), {self.meta.get('k')} of "
                f"{self.meta.get('n_items')} items, level {self.level})")

    def _attrs(self, df: pd.DataFrame, **extra: Any) -> pd.DataFrame:
        df.attrs["mixrank"] = {**self.meta, "level": self.level, **extra}
        return df

    def _method(self, method: str) -> pd.DataFrame:
        if method not in METHODS:
            raise OptionError(f"method={method!r} is not an estimate of subset_score; expected "
                              f"one of {', '.join(map(repr, METHODS))}")
        return self.scores_table[self.scores_table["method"] == method]

    def scores(self, method: Literal["model_assisted", "stratified_mean", "irt"] | None = None
               ) -> pd.DataFrame:
        """Each new model's estimated mean over all reference items.

        Parameters
        ----------
        method : str, optional
            One of ``"model_assisted"`` (design-based, the default answer),
            ``"stratified_mean"`` (design-based, no item model) and ``"irt"``
            (model-based: valid only if the item model is right); None: all.

        Returns
        -------
        pandas.DataFrame
            ``model``, ``method``, ``estimate``, ``std_error``, ``df`` (inf for
            the model-based normal interval), ``ci_lower``, ``ci_upper``,
            ``level``, ``n`` (items run), ``n_items`` (items of the benchmark).

        Raises
        ------
        OptionError
            An unknown ``method``.

        Examples
        --------
        >>> import mixrank
        >>> data = mixrank.load_dataset("chembench").query("prompt == 'default'")
        >>> ref, new = data[data.model != "o1"], data[data.model == "o1"]
        >>> sel = mixrank.select_items(ref, 100, rng=2)
        >>> res = mixrank.subset_score(ref, new[new.question.isin(sel.question)], selection=sel)
        >>> res.scores("model_assisted")["n"].tolist()
        [100]
        """
        tab = self.scores_table if method is None else self._method(method)
        return self._attrs(tab.reset_index(drop=True).copy(), method=method or "all")

    def _pair_estimates(self, level: float, *,
                        method: str = "model_assisted") -> PairEstimates:
        """The pair estimates of :meth:`~mixrank.results.base.ContrastsTemplate.contrasts`:
        each new model (estimate ``method``) minus each reference model's full mean, with
        the new model's standard error and df (t; normal for ``irt``), adjusted within
        each new model."""
        tab = self._method(method)
        q = 1 - (1 - level) / 2
        rows = []
        for r in tab.itertuples(index=False):
            crit = float(stats.t.ppf(q, r.df)) if np.isfinite(r.df) else float(stats.norm.ppf(q))
            for ref in self.reference.itertuples(index=False):
                est = r.estimate - ref.estimate
                z = est / r.std_error if r.std_error > 0 else np.inf * np.sign(est)
                p = (2 * (stats.t.sf(abs(z), r.df) if np.isfinite(r.df) else stats.norm.sf(abs(z)))
                     if np.isfinite(z) else (0.0 if est != 0 else 1.0))
                rows.append({"model_a": r.model, "model_b": ref.model, "estimate": est,
                             "std_error": r.std_error, "df": r.df, "statistic": z,
                             "p_value": float(p), "ci_lower": est - crit * r.std_error,
                             "ci_upper": est + crit * r.std_error, "level": level})
        meta = {**self.meta, "level": level, "method": method,
                "family": "each new model against every reference model"}
        return PairEstimates(rows, meta, within="model_a")

    def _letter_scores(self, level: float) -> tuple[pd.DataFrame, str]:
        """The hook of ``letters()``: the new model's ``model_assisted`` score and the
        reference models' full means (one new model: the contrasts compare it with each
        reference model, not new models with each other)."""
        new = self._method("model_assisted")
        if len(new) != 1:
            raise DesignError(
                f"letters() on a subset score needs one new model; this result scores "
                f"{len(new)} ({', '.join(map(repr, new['model']))}), whose contrasts with each "
                "other are not estimated: score one new model at a time")
        tab = pd.concat([new[["model", "estimate"]], self.reference[["model", "estimate"]]],
                        ignore_index=True)
        return tab, "scores('model_assisted') and the reference models' full means"

    def _known_pairs(self) -> dict[tuple[str, str], bool]:
        """Two reference models' full means are known exactly: they differ unless equal."""
        ref = list(zip(self.reference["model"], self.reference["estimate"]))
        return {(a, b): bool(x != y) for i, (a, x) in enumerate(ref) for b, y in ref[i + 1:]}

    def rank_intervals(self, method: Literal["model_assisted", "stratified_mean", "irt"]
                       = "model_assisted") -> pd.DataFrame:
        """Each new model's rank among the reference models (1 = best), with its interval.

        The interval holds every rank the score's confidence interval allows:
        ``rank_lower = 1 + #{reference > ci_upper}``, ``rank_upper = 1 +
        #{reference >= ci_lower}``; its coverage is the score interval's.

        Parameters
        ----------
        method : str
            The estimate of the new model (see :meth:`scores`).

        Returns
        -------
        pandas.DataFrame
            ``model``, ``estimate``, ``rank``, ``rank_lower``, ``rank_upper``,
            ``n`` (reference models + 1), ``level``.

        Raises
        ------
        OptionError
            An unknown ``method``.

        Examples
        --------
        >>> import mixrank
        >>> data = mixrank.load_dataset("chembench").query("prompt == 'default'")
        >>> ref, new = data[data.model != "o1"], data[data.model == "o1"]
        >>> sel = mixrank.select_items(ref, 100, rng=2)
        >>> res = mixrank.subset_score(ref, new[new.question.isin(sel.question)], selection=sel)
        >>> r = res.rank_intervals().iloc[0]
        >>> bool(r.rank_lower <= r["rank"] <= r.rank_upper)
        True
        """
        tab = self._method(method)
        ref = self.reference["estimate"].to_numpy(float)
        rows = [{"model": r.model, "estimate": r.estimate,
                 "rank": int(1 + np.sum(ref > r.estimate)),
                 "rank_lower": int(1 + np.sum(ref > r.ci_upper)),
                 "rank_upper": int(1 + np.sum(ref >= r.ci_lower)),
                 "n": len(ref) + 1, "level": self.level} for r in tab.itertuples(index=False)]
        return self._attrs(pd.DataFrame(rows), method=method, table="rank_intervals",
                           comparisons=("none: each new model's interval is its score "
                                        "interval against the reference models' scores, "
                                        f"not adjusted over its {len(ref)} comparisons"),
                           n_comparisons=1)
