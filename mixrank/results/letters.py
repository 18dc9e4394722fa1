"""Stage results: the compact letter display of a result (``letters()``, every result type).

Inputs: a result with ``contrasts()`` (:class:`~mixrank.results.base.ContrastsTemplate`)
and its hook ``_letter_scores(level)`` (each model's score, the order of the
display).  Outputs: :func:`letters_of`, the table behind ``res.letters()``:
``model, estimate, letters``, best first.  The letters come from
:func:`mixrank.inference.letters.compact_letters` (Piepho's insert-and-absorb,
as R's ``multcompView::multcompLetters``) applied to the family-wise decisions
of the result's own ``contrasts(adjust=)``: a pair is rejected when its
``p_adjusted < 1 - level``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._util import tidy
from ..errors import DesignError, MixrankError
from ..inference.letters import compact_letters, letter_matrix, letter_names

__all__ = ["LettersMixin", "letters_of", "scores_for_letters"]


def scores_for_letters(res: Any, level: float) -> tuple[pd.DataFrame, str]:
    """``model, estimate`` of every model (the order of the display) and where they come from:
    ``model_scores(level)``; when a model's own score cannot be fitted (a
    :class:`~mixrank.MixrankError`), NaN scores ordered by each model's mean contrast
    against the others (said in the second value)."""
    try:
        sc = res.model_scores(level)
        if sc["model"].duplicated().any():       # several scores per model: order by gaps
            raise DesignError("one score per model is needed")
        return sc[["model", "estimate"]].reset_index(drop=True), "model_scores()"
    except MixrankError:
        con = res.contrasts(level)
        gap: dict[str, list[float]] = {m: [] for m in res.models}
        for a, b, e in zip(con["model_a"], con["model_b"], con["estimate"]):
            if np.isfinite(e):
                gap[a].append(e)
                gap[b].append(-e)
        order = sorted(res.models, key=lambda m: -np.mean(gap[m]) if gap[m] else np.inf)
        return (pd.DataFrame({"model": order, "estimate": np.nan}),
                "the mean of each model's contrasts (model_scores() could not be fitted)")


def letters_of(res: Any, adjust: Any = None, level: float | None = None) -> pd.DataFrame:
    """The compact letter display of ``res`` (see ``ContrastsTemplate.letters``)."""
    lev = res._level(level)
    alpha = res._alpha(level)
    con = res.contrasts(lev) if adjust is None else res.contrasts(lev, adjust=adjust)
    meta = con.attrs.get("mixrank", {})
    scores, source = res._letter_scores(lev)
    if scores["estimate"].notna().all():          # best first; ties by name
        scores = scores.assign(_key=-scores["estimate"]).sort_values(
            ["_key", "model"], kind="stable").reset_index(drop=True)
    models = [str(m) for m in scores["model"]]
    if len(models) < 3:
        raise DesignError(
            f"letters() needs at least 3 models; this {type(res).__name__} has "
            f"{len(models)} ({', '.join(map(repr, models))}): with one pair there is nothing "
            "to group, read its test in contrasts() (p_adjusted)")
    if "by" in meta or con.duplicated(["model_a", "model_b"]).any():
        raise DesignError("letters() needs one test per pair; contrasts() gave several rows "
                          "per pair")
    ix = {m: i for i, m in enumerate(models)}
    M = len(models)
    p = np.full((M, M), np.nan)
    for a, b, v in zip(con["model_a"], con["model_b"], con["p_adjusted"]):
        i, j = ix[str(a)], ix[str(b)]
        p[i, j] = p[j, i] = v
    for (a, b), rejected in res._known_pairs().items():   # pairs known exactly (no test)
        i, j = ix[a], ix[b]
        p[i, j] = p[j, i] = 0.0 if rejected else 1.0
    np.fill_diagonal(p, 1.0)
    missing = [(models[i], models[j]) for i in range(M) for j in range(i + 1, M)
               if np.isnan(p[i, j]) and not _listed(con, models[i], models[j])]
    if missing:
        raise DesignError(
            f"letters() needs a test of every pair; contrasts() has no row for {len(missing)} "
            f"of the {M * (M - 1) // 2} pairs, e.g. {missing[:3]} (a fit restricted with "
            "pairs=): refit with every pair")
    untested = int(np.isnan(p[np.triu_indices(M, 1)]).sum())
    rejected = np.nan_to_num(p, nan=1.0) < alpha        # no test: not rejected
    letters = compact_letters(models, rejected)
    tab = pd.DataFrame({"model": models, "estimate": scores["estimate"].to_numpy(float),
                        "letters": letters})
    return tidy(tab, table="letters", adjust=meta.get("adjust"), level=lev, alpha=alpha,
                family_size=meta.get("family_size"), scores=source,
                rejected_pairs=int(rejected[np.triu_indices(M, 1)].sum()),
                untested_pairs=untested, df_method=meta.get("df_method"),
                letter_names=letter_names(letter_matrix(rejected).shape[1]),
                method="Piepho (2004) insert-and-absorb, as multcompView::multcompLetters: "
                       "two models share a letter exactly when p_adjusted >= alpha "
                       "(a pair without a test counts as not rejected)")


def _listed(con: pd.DataFrame, a: str, b: str) -> bool:
    """Whether ``con`` has a row for the pair (a NaN p-value: shown, not testable)."""
    return bool(((con["model_a"] == a) & (con["model_b"] == b)).any()
                or ((con["model_a"] == b) & (con["model_b"] == a)).any())


class LettersMixin:
    """``letters()`` of every result with a contrasts table (a base of
    :class:`~mixrank.results.base.ContrastsTemplate`), with its two hooks."""

    def letters(self, adjust: Any = None, level: float | None = None) -> pd.DataFrame:
        """Compact letter display: models sharing a letter are not told apart (emmeans' ``cld``).

        Parameters
        ----------
        adjust : str, optional
            The family-wise adjustment of the pairwise tests, any value
            ``contrasts(adjust=)`` takes; default the fit's own (that of
            ``contrasts()``).
        level : float, optional
            Default the fit's ``level``; a pair is rejected when its
            ``p_adjusted < 1 - level``.

        Returns
        -------
        pandas.DataFrame
            ``model, estimate`` (the model's score, ``model_scores()``; the
            new and reference models' scores for a subset score), ``letters``
            (e.g. ``"ab"``), best first.  ``attrs["mixrank"]`` records
            ``adjust, level, alpha, family_size, rejected_pairs,
            untested_pairs`` (pairs without a test: they share a letter),
            ``letter_names`` and ``method``.

        Raises
        ------
        DesignError
            Fewer than 3 models (one pair: read its ``contrasts()`` row); a
            fit restricted to some pairs (``pairs=``); a subset score of more
            than one new model.
        OptionError
            An ``adjust`` or ``level`` ``contrasts()`` refuses.

        Notes
        -----
        Piepho's (2004) insert-and-absorb algorithm exactly as R's
        ``multcompView::multcompLetters``
        (:mod:`mixrank.inference.letters`): two models share a letter exactly
        when their family-wise contrast is not rejected at ``level``.
        Validated against multcompView 0.1-8 (``tests/reference/letters.R``).

        Examples
        --------
        >>> import mixrank
        >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        >>> cld = res.letters()
        >>> list(cld.columns), cld.attrs["mixrank"]["adjust"]
        (['model', 'estimate', 'letters'], 'stepdown')
        """
        return letters_of(self, adjust, level)

    def _letter_scores(self, level: float) -> tuple[pd.DataFrame, str]:
        """The hook of :meth:`letters`: ``model, estimate`` of every model and their source."""
        return scores_for_letters(self, level)

    def _known_pairs(self) -> dict[tuple[str, str], bool]:
        """Pairs of :meth:`letters` known without a test: ``{(a, b): differ}`` (none here)."""
        return {}
