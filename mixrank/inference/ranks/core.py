"""Stage inference: the core of the rank confidence intervals (docs/methods.md §7).

Inputs: point scores of M models and one-sided p-values of the M(M-1)
directed hypotheses ``H_jk: mu_j <= mu_k`` (rejecting it means "j is better
than k").
Outputs: a tidy table, one row per model, with the point rank and the rank
interval ``[rank_lower, rank_upper]``; the directed hypotheses behind it in
``attrs["mixrank"]["pairwise"]``.
Contents: :func:`rank_intervals_from_tests` (the pure core), the option and
input checks (:func:`alpha_from_level`, :func:`check_options`,
:func:`read_scores`), the multiplicity step (:func:`adjust_families`), the
table builder (:func:`assemble`) and the shared docstring parts
(:data:`RETURNS_DOC`, :data:`NOTES_DOC`, :func:`fill_doc`).  The entry points
that start from a fit, contrasts or raw data are in
:mod:`mixrank.inference.ranks` and :mod:`mixrank.inference.ranks.data`.

Convention: rank 1 is the best (highest score).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from mixrank._deprecate import former_keywords
from mixrank._util import check_level, listed, tidy
from mixrank.errors import DataError, DesignError, MixrankWarning, OptionError
from mixrank.inference.keywords import former, unexpected_keywords
from mixrank.inference.multiplicity import ADJUST_FOR, adjust, adjust_values, check_adjust
from mixrank.inference.ranks.agreement import comparisons_meta

__all__ = ["rank_intervals_from_tests", "alpha_from_level", "check_options", "read_scores",
           "adjust_families", "assemble", "fill_doc", "COVERAGES", "RANK_METHODS", "RETURNS_DOC",
           "NOTES_DOC"]

#: Accepted values of ``coverage=``.
COVERAGES = ("marginal", "simultaneous")
#: ``holm`` (the guarantee of docs/methods.md §7), ``bonferroni``, ``bh``
#: (looser, FDR-style, no coverage guarantee) and ``maxt`` (bootstrap max-t).
RANK_METHODS = adjust_values("rank_intervals")

RETURNS_DOC = """pandas.DataFrame
        One row per model, sorted by ``rank`` (then model): ``model``,
        ``estimate`` (mean score over the cells the model was scored on),
        ``rank`` (point rank by ``estimate``, 1 = best; equal scores share
        the smallest rank), ``rank_lower``, ``rank_upper`` (the interval,
        ``1 <= rank_lower <= rank_upper <= M``), ``level``, ``n``.
        ``attrs["mixrank"]`` holds ``coverage``, ``method``, ``alpha``,
        ``level`` and ``pairwise``: one row per directed hypothesis (both
        orientations of every pair), with ``model_a, model_b``: the row
        tests ``H0: mu_a <= mu_b`` against ``H1: model_a better than
        model_b``; ``estimate`` (of ``model_a - model_b``),
        ``std_error, df, statistic``, ``n`` (common cells, or units tested
        by :func:`rank_intervals`), ``p_value`` (one-sided, H1: model_a
        better), ``p_adjusted`` and ``rejected`` (in the family that
        bounds ``rank_upper`` of ``model_a``: a rejection counts one model
        surely worse than model_a), ``p_adjusted_b`` and ``rejected_b``
        (in the family that bounds ``rank_lower`` of ``model_b``: a
        rejection counts one model surely better than model_b).  Adjusted
        p-values are on the scale of ``alpha``: ``rejected`` is
        ``p_adjusted <= alpha``."""

NOTES_DOC = """``L_j = 1 + #{k : H_kj rejected}`` (models significantly better than
    j) and ``U_j = M - #{k : H_jk rejected}`` (models significantly worse).
    *Marginal* coverage (``P(r_j in [L_j, U_j]) >= 1 - alpha`` for each j):
    for each j, Holm at ``alpha/2`` over its M-1 hypotheses "j beats k"
    (giving ``U_j``) and separately at ``alpha/2`` over its M-1 hypotheses
    "k beats j" (giving ``L_j``); reported adjusted p-values are therefore
    ``min(1, 2 * holm)``.  *Simultaneous* coverage (all j at once): one Holm
    at ``alpha`` over all M(M-1) directed hypotheses.  ``bonferroni`` is the
    same with Bonferroni; ``bh`` replaces Holm by Benjamini-Hochberg, a
    looser FDR-style variant without the coverage guarantee.  If the true
    means tie, the guarantee is for the whole tied range of ranks."""



def fill_doc(doc: str) -> str:
    """Fill the ``{returns}`` and ``{notes}`` slots of a rank-interval docstring."""
    return (doc.replace("{returns}", RETURNS_DOC).replace("{notes}", NOTES_DOC)
            .replace("{{", "{").replace("}}", "}"))


# ------------------------------------------------------------------ checks --

def alpha_from_level(level: Any) -> float:
    """``1 - level`` after checking that ``level`` is a confidence level."""
    return 1.0 - check_level(level, DesignError)


def check_options(coverage: str, method: str, *, maxt: bool = True) -> None:
    """Reject an unknown ``coverage`` or ``method`` (``maxt`` only where variances are known)."""
    if coverage not in COVERAGES:
        raise OptionError(f"coverage={coverage!r}; expected one of {COVERAGES} ('marginal': each "
                          "model's interval holds its rank with probability >= level; "
                          "'simultaneous': all intervals at once)")
    if method == "maxt" and not maxt:
        raise OptionError("adjust='maxt' is not supported by rank intervals from p-values "
                          f"alone; supported values: {list(adjust_values('rank_tests'))} "
                          "('maxt' needs the pairwise variances: use "
                          "rank_intervals_from_contrasts or "
                          "mixrank.fit(...).rank_intervals(adjust='maxt'))")
    check_adjust(method, "rank_intervals" if maxt else "rank_tests", where="rank_intervals")


def read_scores(scores: Any) -> tuple[list[str], np.ndarray, np.ndarray]:
    """models, estimates and n from a mapping, Series or DataFrame (model, estimate[, n])."""
    if isinstance(scores, pd.DataFrame):
        for c in ("model", "estimate"):
            if c not in scores.columns:
                raise DataError(f"scores table lacks column {c!r}; expected columns 'model', "
                                f"'estimate' (and optionally 'n'); got {list(scores.columns)}")
        models = [str(m) for m in scores["model"]]
        est = pd.to_numeric(scores["estimate"], errors="coerce").to_numpy(dtype=float)
        n = (scores["n"].to_numpy(dtype=float) if "n" in scores.columns
             else np.full(len(models), np.nan))
    elif isinstance(scores, (Mapping, pd.Series)):
        items = list(scores.items())
        models = [str(m) for m, _ in items]
        est = np.array([float(v) for _, v in items])
        n = np.full(len(models), np.nan)
    else:
        raise DataError(f"scores must be a mapping model -> score, a Series indexed by model or a "
                        f"DataFrame with 'model' and 'estimate'; got {type(scores).__name__}")
    if len(models) < 2:
        raise DataError(f"rank intervals need at least two models; got {len(models)} "
                        f"({models}). Add models or drop the ranking")
    if len(set(models)) != len(models):
        dup = sorted({m for m in models if models.count(m) > 1})
        raise DataError(f"models {dup} appear more than once in the scores; give one score per "
                        "model")
    bad = [m for m, e in zip(models, est, strict=True) if not np.isfinite(e)]
    if bad:
        raise DataError(f"model score is NaN or infinite for {listed(bad)}; every model needs a "
                        "finite estimate to be ranked (drop these models or fix their scores)")
    return models, est, n


#: Columns of a long table of one-sided p-values: the row's p-value is for
#: "model_a better than model_b" (the orientation of ``pairwise``).
_LONG = ("model_a", "model_b", "p_value")


def _check_long_columns(p_values: pd.DataFrame, models: list[str]) -> bool:
    """True for a long p-value table; DesignError for a long table with wrong column names."""
    cols = {str(c) for c in p_values.columns}
    if set(_LONG) <= cols:
        return True
    named = cols & {"model_a", "model_b", "p_value", "model", "other"}
    if named and not set(models) <= cols:
        hint = (" (rename model -> model_a, other -> model_b: the row's p-value is for "
                "'model_a better than model_b')" if {"model", "other"} <= cols else "")
        raise DesignError(f"the long p-value table has columns {listed(sorted(cols))}; expected "
                          f"columns {listed(list(_LONG))}{hint}, or a square table indexed "
                          "(rows and columns) by model")
    return False


def _p_matrix(p_values: Any, models: list[str]) -> np.ndarray:
    """The (M, M) matrix of one-sided p-values ``P[j, k]`` for "j better than k"."""
    M = len(models)
    pos = {m: i for i, m in enumerate(models)}
    if isinstance(p_values, pd.DataFrame) and _check_long_columns(p_values, models):
        P = np.full((M, M), np.nan)
        seen = np.zeros((M, M), dtype=bool)
        unknown = sorted({str(m) for c in ("model_a", "model_b") for m in p_values[c]} - set(pos))
        if unknown:
            raise DataError(f"the p-value table names models {listed(unknown)} that are not in "
                            f"the scores ({listed(models)}); give scores for every model")
        for a, b, p in zip(p_values["model_a"], p_values["model_b"], p_values["p_value"],
                           strict=True):
            j, k = pos[str(a)], pos[str(b)]
            if j == k or seen[j, k]:
                raise DataError(f"the p-value table has {'a self-comparison' if j == k else 'a duplicate row'} "
                                f"({a!r}, {b!r}); expected one row per ordered pair of distinct models")
            seen[j, k] = True
            P[j, k] = float(p)
    elif isinstance(p_values, pd.DataFrame):
        try:
            P = p_values.loc[models, models].to_numpy(dtype=float, copy=True)
        except KeyError:
            raise DataError("a square p-value table must be indexed (rows and columns) by the "
                            f"models {listed(models)}; got rows {listed(list(p_values.index))}, "
                            "or pass a long table with columns model_a, model_b, p_value") from None
        seen = ~np.eye(M, dtype=bool)
    else:
        P = np.asarray(p_values, dtype=float)
        if P.shape != (M, M):
            raise DataError(f"p_values has shape {P.shape}; expected ({M}, {M}) for the {M} "
                            "models in the order given, or a long table (model_a, model_b, p_value)")
        P = P.copy()
        seen = ~np.eye(M, dtype=bool)
    off = ~np.eye(M, dtype=bool)
    missing = [(models[j], models[k]) for j, k in np.argwhere(off & ~seen)]
    if missing:
        raise DataError(f"no test for {len(missing)} ordered pair(s), e.g. {listed(missing)}; "
                        "every pair of models must be compared (pairs without common cells "
                        "cannot be ranked against each other: drop one of the models)")
    nan = [(models[j], models[k]) for j, k in np.argwhere(off & np.isnan(P))]
    if nan:
        raise DataError(f"p-value is NaN for {len(nan)} ordered pair(s), e.g. {listed(nan)}; "
                        "every directed hypothesis needs a p-value")
    badp = [(models[j], models[k]) for j, k in np.argwhere(off & ((P < 0) | (P > 1)))]
    if badp:
        raise DataError(f"p-values outside [0, 1] for {listed(badp)}")
    np.fill_diagonal(P, np.nan)
    return P


# -------------------------------------------------------------- the core --

def _point_ranks(est: np.ndarray) -> np.ndarray:
    return 1 + np.sum(est[None, :] > est[:, None], axis=1)


def adjust_families(P: np.ndarray, coverage: str, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Adjusted p-values on the scale of alpha: (family of U of model_a, family of L of model_b)."""
    M = P.shape[0]
    off = ~np.eye(M, dtype=bool)
    adj_a = np.full((M, M), np.nan)
    adj_b = np.full((M, M), np.nan)
    if coverage == "simultaneous":
        jj, kk = np.nonzero(off)
        a = adjust(P[jj, kk], method)
        adj_a[jj, kk] = a
        adj_b[jj, kk] = a
        return adj_a, adj_b
    for j in range(M):
        others = np.array([k for k in range(M) if k != j], dtype=np.int64)
        # each side at alpha/2: reject when adjusted <= alpha/2, i.e. 2 * adjusted <= alpha
        adj_a[j, others] = np.minimum(1.0, 2.0 * adjust(P[j, others], method))
        adj_b[others, j] = np.minimum(1.0, 2.0 * adjust(P[others, j], method))
    return adj_a, adj_b


def assemble(models: list[str], est: np.ndarray, n: np.ndarray, P: np.ndarray,
              adj_a: np.ndarray, adj_b: np.ndarray, *, alpha: float, coverage: str,
              method: str, extra: dict[str, np.ndarray] | None = None,
              marginal: tuple[np.ndarray, np.ndarray] | None = None,
              **meta: Any) -> pd.DataFrame:
    """The rank table (and its pairwise records) from the p-values and their adjustments.

    Simultaneous coverage: each model's interval is the union of its simultaneous
    interval and its marginal one under the same method (``marginal``: the marginal
    families' adjusted p-values; computed here for the p-value methods), so a
    simultaneous interval is never narrower than the marginal one (issue 36).  The
    models widened are listed in ``attrs["mixrank"]["widened_to_marginal"]``.
    """
    M = len(models)
    tol = 1e-12                         # adjusted p-values equal to alpha up to rounding reject
    rej_a = adj_a <= alpha * (1 + tol)
    rej_b = adj_b <= alpha * (1 + tol)
    np.fill_diagonal(rej_a, False)
    np.fill_diagonal(rej_b, False)
    upper = M - rej_a.sum(axis=1)
    lower = 1 + rej_b.sum(axis=0)
    if coverage == "simultaneous":
        if marginal is None and method in ADJUST_FOR["rank_tests"]:
            marginal = adjust_families(P, "marginal", method)
        if marginal is not None:
            ma = marginal[0] <= alpha * (1 + tol)
            mb = marginal[1] <= alpha * (1 + tol)
            np.fill_diagonal(ma, False)
            np.fill_diagonal(mb, False)
            up_m, lo_m = M - ma.sum(axis=1), 1 + mb.sum(axis=0)
            wide = (up_m > upper) | (lo_m < lower)
            upper, lower = np.maximum(upper, up_m), np.minimum(lower, lo_m)
            meta["widened_to_marginal"] = [models[j] for j in np.flatnonzero(wide)]
    rank = _point_ranks(est)
    level = 1.0 - alpha
    rows = [dict(model=models[j], estimate=float(est[j]), rank=int(rank[j]),
                 rank_lower=int(lower[j]), rank_upper=int(upper[j]), level=level,
                 n=(int(n[j]) if np.isfinite(n[j]) else np.nan)) for j in range(M)]
    off = ~np.eye(M, dtype=bool)
    jj, kk = np.nonzero(off)
    pw: dict[str, list[str] | np.ndarray] = {"model_a": [models[j] for j in jj],
                                              "model_b": [models[k] for k in kk]}
    extra = extra or {}
    for col in ("estimate", "std_error", "df", "statistic", "n"):
        pw[col] = extra[col][jj, kk] if col in extra else np.full(len(jj), np.nan)
    pw.update(p_value=P[jj, kk], p_adjusted=adj_a[jj, kk], rejected=rej_a[jj, kk],
              p_adjusted_b=adj_b[jj, kk], rejected_b=rej_b[jj, kk])
    pairwise = tidy(pd.DataFrame(pw), table="rank_pairwise", coverage=coverage, method=method,
                    alpha=alpha)
    out = pd.DataFrame(rows).sort_values(["rank", "model"], kind="stable")
    odd = out[(out["rank"] < out["rank_lower"]) | (out["rank"] > out["rank_upper"])]
    if len(odd):
        warnings.warn(
            f"the point rank of {listed(odd['model'].tolist())} lies outside its rank interval: "
            "the mean scores order these models differently from the pairwise contrasts (e.g. a "
            "GLS or unit-average estimand in an unbalanced design). Compare the 'estimate' "
            "columns of the table and of attrs['mixrank']['pairwise']",
            MixrankWarning, stacklevel=3)
    # attrs keep plain records, not a DataFrame, so that tables with these attrs can be
    # compared and concatenated (pd.concat compares attrs): pd.DataFrame(records) restores it
    meta = {**comparisons_meta(coverage, M, method), **meta}
    return tidy(out, table="rank_intervals", coverage=coverage, method=method, alpha=alpha,
                level=level, n_models=M, pairwise=pairwise.to_dict("records"), **meta)


@former_keywords
def rank_intervals_from_tests(scores: Any, p_values: Any, *, level: float = 0.95,
                              coverage: str = "marginal", adjust: str = "holm",
                              **old: Any) -> pd.DataFrame:
    """Rank confidence intervals from given one-sided pairwise p-values.

    The pure core of the rank-interval procedures: no data, no fitting.

    Parameters
    ----------
    scores : mapping, Series or DataFrame
        The point scores that order the leaderboard: ``{model: score}``, a
        Series indexed by model, or a DataFrame with columns ``model``,
        ``estimate`` (and optionally ``n``).
    p_values : DataFrame or array-like
        One-sided p-values of ``H_jk: mu_j <= mu_k`` (small = "j better
        than k") for every ordered pair of distinct models: a long table
        with columns ``model_a, model_b, p_value`` (the p-value of "model_a
        better than model_b"; optional ``estimate`` of ``model_a - model_b``,
        ``std_error``, ``df``, ``statistic``, ``n`` are carried into
        ``attrs["mixrank"]["pairwise"]``), a square DataFrame indexed
        and columned by model (row j, column k), or an (M, M) array in the
        order of ``scores`` (diagonal ignored).
    level : float, default 0.95
        Coverage probability ``1 - alpha``.
    coverage : {"marginal", "simultaneous"}, default "marginal"
    adjust : {"holm", "bonferroni", "bh"}, default "holm"
        The multiplicity method (former name ``method=``, deprecated).

    Returns
    -------
    {returns}

    Raises
    ------
    DataError
        Fewer than two models, duplicated models, a NaN or infinite score,
        a missing ordered pair (e.g. models without common cells), a NaN
        p-value or one outside [0, 1].
    DesignError
        Unknown ``coverage`` or ``method`` (``maxt`` needs variances: see
        :func:`rank_intervals_from_contrasts`), ``level`` outside (0, 1), a
        long p-value table without the columns ``model_a, model_b,
        p_value`` (e.g. the old names ``model, other``).

    Warns
    -----
    MixrankWarning
        When a point rank lies outside its interval.

    Notes
    -----
    {notes}

    Validated against hand-worked leaderboards of 3-5 models whose every
    rejection is traced in ``tests/inference/test_ranks.py``, and by seeded
    coverage simulations (``tests/inference/test_ranks_sim.py``).

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test
    procedure. Scand. J. Statist. 6, 65-70.  "Quantifying rank uncertainty
    in LLM benchmarks", arXiv 2607.16259.  Mogstad, M., Romano, J. P.,
    Shaikh, A. M. & Wilhelm, D. (2024). Inference for ranks with
    applications to mobility across neighbourhoods and academic
    achievement across countries. Rev. Econ. Stud. 91, 476-518.

    Examples
    --------
    >>> import numpy as np
    >>> from mixrank.inference.ranks import rank_intervals_from_tests
    >>> P = np.array([[np.nan, 0.001, 0.0001], [0.999, np.nan, 0.2], [0.9999, 0.8, np.nan]])
    >>> t = rank_intervals_from_tests({{"a": 0.9, "b": 0.7, "c": 0.65}}, P)
    >>> t[["model", "rank", "rank_lower", "rank_upper"]].to_numpy().tolist()
    [['a', 1, 1, 1], ['b', 2, 2, 3], ['c', 3, 2, 3]]
    """
    method = former(old, "method", "adjust", adjust, "holm", where="rank_intervals_from_tests")
    unexpected_keywords(old, "rank_intervals_from_tests")
    alpha = alpha_from_level(level)
    check_options(coverage, method, maxt=False)
    models, est, n = read_scores(scores)
    P = _p_matrix(p_values, models)
    adj_a, adj_b = adjust_families(P, coverage, method)
    extra = None
    if isinstance(p_values, pd.DataFrame) and set(_LONG) <= set(p_values.columns):
        extra = _extra_from_long(p_values, models)
    return assemble(models, est, n, P, adj_a, adj_b, alpha=alpha, coverage=coverage,
                     method=method, extra=extra, source="tests")


def _extra_from_long(table: pd.DataFrame, models: list[str]) -> dict[str, np.ndarray]:
    pos = {m: i for i, m in enumerate(models)}
    M = len(models)
    out = {}
    for col in ("estimate", "std_error", "df", "statistic", "n"):
        if col in table.columns:
            arr = np.full((M, M), np.nan)
            for a, b, v in zip(table["model_a"], table["model_b"], table[col], strict=True):
                arr[pos[str(a)], pos[str(b)]] = float(v)
            out[col] = arr
    return out


for _f in (rank_intervals_from_tests,):
    if _f.__doc__:
        _f.__doc__ = fill_doc(_f.__doc__)
