"""Stage inference: rank confidence intervals from one-sided pairwise tests (docs/methods.md §7).

Inputs: either a :class:`~mixrank.results.FitResult` (p-values from the
fitted paired mixed models, at the formula's unit of inference), raw
long-format data (the published "aggregate over units, then paired tests"
procedure), a table of pairwise contrasts, or a hand-made table of one-sided
p-values.  Outputs: a tidy table, one row per model, with the point rank and
the rank interval ``[rank_lower, rank_upper]``; the directed hypotheses
behind it in ``attrs["mixrank"]["pairwise"]`` (a list of records:
``pd.DataFrame(tab.attrs["mixrank"]["pairwise"])`` gives the table).

Contents: :func:`rank_intervals_fit` (what ``FitResult.rank_intervals``
calls), :func:`rank_intervals` (from raw data, no mixed model),
:func:`rank_intervals_from_contrasts` and :func:`rank_intervals_from_tests`
(the pure core).  The contrast-table reader and the bootstrap max-t step
live in :mod:`mixrank.inference.ranks_maxt`.

Convention: rank 1 is the best (highest score); ``H_jk: mu_j <= mu_k`` and
rejecting it means "j is better than k".
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy import stats

from mixrank._util import as_rng, check_level, tidy
from mixrank.errors import DataError, DesignError, MixrankWarning
from mixrank.inference.multiplicity import adjust
from mixrank.inference.ranks_maxt import _listed, contrast_matrices

__all__ = ["rank_intervals", "rank_intervals_fit", "rank_intervals_from_contrasts",
           "rank_intervals_from_tests", "COVERAGES", "RANK_METHODS"]

COVERAGES = ("marginal", "simultaneous")
#: ``holm`` (the guarantee of docs/methods.md §7), ``bonferroni``, ``bh``
#: (looser, FDR-style, no coverage guarantee) and ``maxt`` (bootstrap max-t).
RANK_METHODS = ("holm", "bonferroni", "bh", "maxt")

_RETURNS = """pandas.DataFrame
        One row per model, sorted by ``rank`` (then model): ``model``,
        ``estimate`` (mean score over the cells the model was scored on),
        ``rank`` (point rank by ``estimate``, 1 = best; equal scores share
        the smallest rank), ``rank_lower``, ``rank_upper`` (the interval,
        ``1 <= rank_lower <= rank_upper <= M``), ``level``, ``n``.
        ``attrs["mixrank"]`` holds ``coverage``, ``method``, ``alpha``,
        ``level`` and ``pairwise``: one row per directed hypothesis
        ``H: model better than other``, with ``model, other``,
        ``estimate`` (of model - other), ``std_error, df, statistic``,
        ``n`` (common cells, or units tested by :func:`rank_intervals`),
        ``p_value`` (one-sided, H1: model better), ``p_adjusted`` and
        ``rejected`` (in the family that bounds ``rank_upper`` of
        ``model``), ``p_adjusted_other`` and ``rejected_other`` (in the
        family that bounds ``rank_lower`` of ``other``).  Adjusted
        p-values are on the scale of ``alpha``: ``rejected`` is
        ``p_adjusted <= alpha``."""

_NOTES = """``L_j = 1 + #{k : H_kj rejected}`` (models significantly better than
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


# ------------------------------------------------------------------ checks --

def _alpha(level: Any) -> float:
    return 1.0 - check_level(level, DesignError)


def _options(coverage: str, method: str, *, maxt: bool = True) -> None:
    if coverage not in COVERAGES:
        raise DesignError(f"coverage={coverage!r}; expected one of {COVERAGES} ('marginal': each "
                          "model's interval holds its rank with probability >= level; "
                          "'simultaneous': all intervals at once)")
    allowed = RANK_METHODS if maxt else tuple(m for m in RANK_METHODS if m != "maxt")
    if method not in allowed:
        hint = (" ('maxt' needs the pairwise variances: use rank_intervals_from_contrasts or "
                "mixrank.fit(...).rank_intervals(method='maxt'))" if method == "maxt" else "")
        raise DesignError(f"method={method!r}; expected one of {allowed}{hint}")


def _scores(scores: Any) -> tuple[list[str], np.ndarray, np.ndarray]:
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
        raise DataError(f"model score is NaN or infinite for {_listed(bad)}; every model needs a "
                        "finite estimate to be ranked (drop these models or fix their scores)")
    return models, est, n


def _p_matrix(p_values: Any, models: list[str]) -> np.ndarray:
    """The (M, M) matrix of one-sided p-values ``P[j, k]`` for "j better than k"."""
    M = len(models)
    pos = {m: i for i, m in enumerate(models)}
    if isinstance(p_values, pd.DataFrame) and {"model", "other", "p_value"} <= set(p_values.columns):
        P = np.full((M, M), np.nan)
        seen = np.zeros((M, M), dtype=bool)
        unknown = sorted({str(m) for c in ("model", "other") for m in p_values[c]} - set(pos))
        if unknown:
            raise DataError(f"the p-value table names models {_listed(unknown)} that are not in "
                            f"the scores ({_listed(models)}); give scores for every model")
        for a, b, p in zip(p_values["model"], p_values["other"], p_values["p_value"], strict=True):
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
                            f"models {_listed(models)}; got rows {_listed(list(p_values.index))}, "
                            "or pass a long table with columns model, other, p_value") from None
        seen = ~np.eye(M, dtype=bool)
    else:
        P = np.asarray(p_values, dtype=float)
        if P.shape != (M, M):
            raise DataError(f"p_values has shape {P.shape}; expected ({M}, {M}) for the {M} "
                            "models in the order given, or a long table (model, other, p_value)")
        P = P.copy()
        seen = ~np.eye(M, dtype=bool)
    off = ~np.eye(M, dtype=bool)
    missing = [(models[j], models[k]) for j, k in np.argwhere(off & ~seen)]
    if missing:
        raise DataError(f"no test for {len(missing)} ordered pair(s), e.g. {_listed(missing)}; "
                        "every pair of models must be compared (pairs without common cells "
                        "cannot be ranked against each other: drop one of the models)")
    nan = [(models[j], models[k]) for j, k in np.argwhere(off & np.isnan(P))]
    if nan:
        raise DataError(f"p-value is NaN for {len(nan)} ordered pair(s), e.g. {_listed(nan)}; "
                        "every directed hypothesis needs a p-value")
    badp = [(models[j], models[k]) for j, k in np.argwhere(off & ((P < 0) | (P > 1)))]
    if badp:
        raise DataError(f"p-values outside [0, 1] for {_listed(badp)}")
    np.fill_diagonal(P, np.nan)
    return P


# -------------------------------------------------------------- the core --

def _point_ranks(est: np.ndarray) -> np.ndarray:
    return 1 + np.sum(est[None, :] > est[:, None], axis=1)


def _adjust_families(P: np.ndarray, coverage: str, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Adjusted p-values on the scale of alpha: (family of U_model, family of L_other)."""
    M = P.shape[0]
    off = ~np.eye(M, dtype=bool)
    adj_model = np.full((M, M), np.nan)
    adj_other = np.full((M, M), np.nan)
    if coverage == "simultaneous":
        jj, kk = np.nonzero(off)
        a = adjust(P[jj, kk], method)
        adj_model[jj, kk] = a
        adj_other[jj, kk] = a
        return adj_model, adj_other
    for j in range(M):
        others = np.array([k for k in range(M) if k != j], dtype=np.int64)
        # each side at alpha/2: reject when adjusted <= alpha/2, i.e. 2 * adjusted <= alpha
        adj_model[j, others] = np.minimum(1.0, 2.0 * adjust(P[j, others], method))
        adj_other[others, j] = np.minimum(1.0, 2.0 * adjust(P[others, j], method))
    return adj_model, adj_other


def _assemble(models: list[str], est: np.ndarray, n: np.ndarray, P: np.ndarray,
              adj_model: np.ndarray, adj_other: np.ndarray, *, alpha: float, coverage: str,
              method: str, extra: dict[str, np.ndarray] | None = None,
              **meta: Any) -> pd.DataFrame:
    M = len(models)
    tol = 1e-12                         # adjusted p-values equal to alpha up to rounding reject
    rej_model = adj_model <= alpha * (1 + tol)
    rej_other = adj_other <= alpha * (1 + tol)
    np.fill_diagonal(rej_model, False)
    np.fill_diagonal(rej_other, False)
    upper = M - rej_model.sum(axis=1)
    lower = 1 + rej_other.sum(axis=0)
    rank = _point_ranks(est)
    level = 1.0 - alpha
    rows = [dict(model=models[j], estimate=float(est[j]), rank=int(rank[j]),
                 rank_lower=int(lower[j]), rank_upper=int(upper[j]), level=level,
                 n=(int(n[j]) if np.isfinite(n[j]) else np.nan)) for j in range(M)]
    off = ~np.eye(M, dtype=bool)
    jj, kk = np.nonzero(off)
    pw: dict[str, list[str] | np.ndarray] = {"model": [models[j] for j in jj],
                                              "other": [models[k] for k in kk]}
    extra = extra or {}
    for col in ("estimate", "std_error", "df", "statistic", "n"):
        pw[col] = extra[col][jj, kk] if col in extra else np.full(len(jj), np.nan)
    pw.update(p_value=P[jj, kk], p_adjusted=adj_model[jj, kk], rejected=rej_model[jj, kk],
              p_adjusted_other=adj_other[jj, kk], rejected_other=rej_other[jj, kk])
    pairwise = tidy(pd.DataFrame(pw), table="rank_pairwise", coverage=coverage, method=method,
                    alpha=alpha)
    out = pd.DataFrame(rows).sort_values(["rank", "model"], kind="stable")
    odd = out[(out["rank"] < out["rank_lower"]) | (out["rank"] > out["rank_upper"])]
    if len(odd):
        warnings.warn(
            f"the point rank of {_listed(odd['model'].tolist())} lies outside its rank interval: "
            "the mean scores order these models differently from the pairwise contrasts (e.g. a "
            "GLS or unit-average estimand in an unbalanced design). Compare the 'estimate' "
            "columns of the table and of attrs['mixrank']['pairwise']",
            MixrankWarning, stacklevel=3)
    # attrs keep plain records, not a DataFrame, so that tables with these attrs can be
    # compared and concatenated (pd.concat compares attrs): pd.DataFrame(records) restores it
    return tidy(out, table="rank_intervals", coverage=coverage, method=method, alpha=alpha,
                level=level, n_models=M, pairwise=pairwise.to_dict("records"), **meta)


def rank_intervals_from_tests(scores: Any, p_values: Any, *, level: float = 0.95,
                              coverage: str = "marginal", method: str = "holm") -> pd.DataFrame:
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
        with columns ``model, other, p_value``, a square DataFrame indexed
        and columned by model (row j, column k), or an (M, M) array in the
        order of ``scores`` (diagonal ignored).
    level : float, default 0.95
        Coverage probability ``1 - alpha``.
    coverage : {"marginal", "simultaneous"}, default "marginal"
    method : {"holm", "bonferroni", "bh"}, default "holm"

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
        :func:`rank_intervals_from_contrasts`), ``level`` outside (0, 1).

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
    alpha = _alpha(level)
    _options(coverage, method, maxt=False)
    models, est, n = _scores(scores)
    P = _p_matrix(p_values, models)
    adj_model, adj_other = _adjust_families(P, coverage, method)
    extra = None
    if isinstance(p_values, pd.DataFrame) and "other" in p_values.columns:
        extra = _extra_from_long(p_values, models)
    return _assemble(models, est, n, P, adj_model, adj_other, alpha=alpha, coverage=coverage,
                     method=method, extra=extra, source="tests")


def _extra_from_long(table: pd.DataFrame, models: list[str]) -> dict[str, np.ndarray]:
    pos = {m: i for i, m in enumerate(models)}
    M = len(models)
    out = {}
    for col in ("estimate", "std_error", "df", "statistic", "n"):
        if col in table.columns:
            arr = np.full((M, M), np.nan)
            for a, b, v in zip(table["model"], table["other"], table[col], strict=True):
                arr[pos[str(a)], pos[str(b)]] = float(v)
            out[col] = arr
    return out


# ------------------------------------------------------------- contrasts --

def rank_intervals_from_contrasts(scores: Any, contrasts: pd.DataFrame, *, level: float = 0.95,
                                  coverage: str = "marginal", method: str = "holm",
                                  B: int = 2000, rng: Any = None) -> pd.DataFrame:
    """Rank confidence intervals from pairwise contrasts (estimate, SE, df).

    Parameters
    ----------
    scores : mapping, Series or DataFrame
        Point scores (see :func:`rank_intervals_from_tests`).
    contrasts : DataFrame
        One row per pair of models with ``model_a, model_b, estimate``
        (of ``model_a - model_b``), ``std_error`` and ``df`` (``inf`` for a
        normal reference), as :meth:`FitResult.contrasts` returns.
    level : float, default 0.95
    coverage : {"marginal", "simultaneous"}, default "marginal"
    method : {"holm", "bonferroni", "bh", "maxt"}, default "holm"
    B : int, default 2000
        Gaussian draws for ``method="maxt"``.
    rng : Generator or int, optional
        Randomness for ``method="maxt"``.

    Returns
    -------
    {returns}

    Raises
    ------
    DataError
        As :func:`rank_intervals_from_tests`; a pair absent from
        ``contrasts``; a NaN estimate, a non-positive standard error or df.
    DesignError
        Unknown options, ``B < 100``.

    Notes
    -----
    ``t_jk = estimate_jk / std_error_jk``; the one-sided p-value of
    ``H_jk`` is ``P(t_df >= t_jk)`` with the pair's df.
    {notes}

    ``method="maxt"`` (beyond the papers): the step-down bootstrap max-t
    rank sets of Mogstad, Romano, Shaikh & Wilhelm (2024).  The joint
    covariance of all pairwise differences follows from the per-pair
    variances ``v_jk`` through ``Cov(X_j - X_k, X_l - X_m) = (v_jm + v_kl -
    v_jl - v_km) / 2`` and is projected to the nearest PSD matrix
    (eigenvalue clipping; the share clipped is ``attrs["mixrank"]
    ["psd_clipped"]``).  B Gaussian vectors are drawn from it.  Reference
    distribution: each pair keeps its own t_df reference -- its p-value is
    mapped to the normal scale, ``Phi^-1(1 - p)``, and compared with the
    maximum of the Gaussian draws (a Gaussian copula with t margins; with
    ``df = inf`` exactly the normal max-t).  The critical value is the
    ``1 - alpha`` quantile of the maximum over the directed hypotheses not
    yet rejected (step-down); for marginal coverage each model has the two
    families of Holm's marginal procedure, each at ``alpha/2``.  Adjusted
    p-values have Monte Carlo error of order ``sqrt(alpha / B)``.

    Validated by seeded coverage simulations
    (``tests/inference/test_ranks_sim.py``): coverage at least the nominal
    level minus Monte Carlo error, max-t sets no wider on average than
    Holm's simultaneous ones.

    References
    ----------
    Mogstad, M., Romano, J. P., Shaikh, A. M. & Wilhelm, D. (2024).
    Inference for ranks. Rev. Econ. Stud. 91, 476-518.  Romano, J. P. &
    Wolf, M. (2005). Exact and approximate stepdown methods for multiple
    hypothesis testing. JASA 100, 94-108.
    """
    alpha = _alpha(level)
    _options(coverage, method)
    models, est, n = _scores(scores)
    if not isinstance(contrasts, pd.DataFrame):
        raise DataError(f"contrasts must be a DataFrame (as FitResult.contrasts() returns); got "
                        f"{type(contrasts).__name__}")
    mats = contrast_matrices(contrasts, models)
    meta: dict[str, Any] = {}
    if method == "maxt":
        try:
            B = int(B)
        except (TypeError, ValueError):
            raise DesignError(f"B={B!r} must be an integer number of draws, e.g. 2000") from None
        if B < 100:
            raise DesignError(f"B={B} draws are too few for max-t critical values; use B >= 100 "
                              "(default 2000)")
        from mixrank.inference.ranks_maxt import joint_covariance, stepdown_maxt

        C, clipped = joint_covariance(mats["variance"])
        adj_model, adj_other = stepdown_maxt(mats["p"], C, coverage=coverage, B=B,
                                             rng=as_rng(rng))
        meta.update(B=B, psd_clipped=clipped, reference="t margins, Gaussian copula")
    else:
        adj_model, adj_other = _adjust_families(mats["p"], coverage, method)
    extra = dict(estimate=mats["estimate"], std_error=np.sqrt(mats["variance"]), df=mats["df"],
                 statistic=mats["statistic"], n=mats["n"])
    return _assemble(models, est, n, mats["p"], adj_model, adj_other, alpha=alpha,
                     coverage=coverage, method=method, extra=extra, source="contrasts", **meta)


def rank_intervals_fit(fit: Any, *, level: float = 0.95, coverage: str = "marginal",
                       method: str = "holm", B: int = 2000, rng: Any = None) -> pd.DataFrame:
    """Rank confidence intervals of a fitted :class:`~mixrank.results.FitResult`.

    Parameters
    ----------
    fit : FitResult
        From :func:`mixrank.fit` with every pair of models fitted.  The
        p-values are at the formula's unit of inference (its random terms).
    level : float, default 0.95
    coverage : {"marginal", "simultaneous"}, default "marginal"
    method : {"holm", "bonferroni", "bh", "maxt"}, default "holm"
    B : int, default 2000
        Gaussian draws for ``method="maxt"``.
    rng : Generator or int, optional
        Randomness for ``method="maxt"``.

    Returns
    -------
    {returns}
        ``attrs["mixrank"]`` also records ``formula``, ``unit`` (the first
        random term, or ``"cell"``), ``fit_method`` and ``estimand``.

    Raises
    ------
    DataError
        Pairs that were not fitted (e.g. no common cells), NaN estimates,
        a single model.
    DesignError
        Unknown options.

    Notes
    -----
    ``estimate`` is each model's mean score (``FitResult.model_scores``);
    the tests use the fitted contrasts ``FitResult.contrasts``: one-sided
    p-values from ``t = estimate / std_error`` with the pair's
    Satterthwaite df (REML) or units - 1 (aggregate).  See
    :func:`rank_intervals_from_contrasts` for the procedures.

    Validated as :func:`rank_intervals_from_contrasts`; on ChemBench and
    JailbreakBench the intervals with subject as the unit are at least as
    wide as with cells as units (``tests/inference/test_ranks.py``).

    Examples
    --------
    >>> import mixrank
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> tab = res.rank_intervals()
    >>> list(tab.columns)
    ['model', 'estimate', 'rank', 'rank_lower', 'rank_upper', 'level', 'n']
    """
    models = list(fit.models)
    if len(models) < 2:
        raise DataError(f"rank intervals need at least two models; the fit has {models}")
    fitted = {frozenset((p.model_a, p.model_b)) for p in fit.pairs}
    missing = [(models[j], models[k]) for j in range(len(models)) for k in range(j + 1, len(models))
               if frozenset((models[j], models[k])) not in fitted]
    if missing:
        raise DataError(f"{len(missing)} pair(s) of models were not fitted: {_listed(missing)}. "
                        "Ranking needs every pair; pairs without (enough) common cells cannot be "
                        "fitted: drop one model of each such pair from the data, or refit with "
                        "pairs=None")
    spec = fit.frame.spec
    tab = rank_intervals_from_contrasts(fit.model_scores(), fit.contrasts(), level=level,
                                        coverage=coverage, method=method, B=B, rng=rng)
    tab.attrs["mixrank"].update(source="fit", formula=spec.formula,
                                unit=spec.term_names[0] if spec.random else "cell",
                                fit_method=fit.method, estimand=fit.estimand, engine=fit.engine)
    return tab


# ------------------------------------------------------------- raw data --

def _unit_tests(um: np.ndarray, test: str, pair: tuple[str, str]) -> tuple[float, float, float,
                                                                              float, float, float,
                                                                              float]:
    """(estimate, std_error, df, stat_jk, stat_kj, p_jk, p_kj) of one pair's unit means."""
    T = len(um)
    est = float(np.mean(um))
    if test == "t":
        se = float(np.std(um, ddof=1) / np.sqrt(T))
        if se == 0.0:
            if est != 0.0:
                raise DataError(f"every unit-level mean difference of {pair[0]!r} - {pair[1]!r} "
                                f"equals {est!r}: the t statistic is undefined. Use "
                                "test='wilcoxon', or a finer unit")
            return est, se, float(T - 1), 0.0, 0.0, 1.0, 1.0
        t = est / se
        return (est, se, float(T - 1), t, -t, float(stats.t.sf(t, T - 1)),
                float(stats.t.sf(-t, T - 1)))
    from mixrank.inference.paired import wilcoxon

    zeros = np.zeros(T)
    with warnings.catch_warnings():
        # all differences zero: V = 0 and p = 1 in both directions (no evidence)
        warnings.simplefilter("ignore", MixrankWarning)
        g = wilcoxon(um, zeros, alternative="greater")
        r = wilcoxon(-um, zeros, alternative="greater")
    return (est, float("nan"), float("nan"), float(g["statistic"].iloc[0]),
            float(r["statistic"].iloc[0]), float(g["p_value"].iloc[0]),
            float(r["p_value"].iloc[0]))


def rank_intervals(data: Any, *, formula: Any = None, model: str = "model",
                   score: str = "correct", unit: str | None = "subject", test: str = "t",
                   level: float = 0.95, coverage: str = "marginal", method: str = "holm",
                   pair_by: Sequence[str] | None = None) -> pd.DataFrame:
    """Rank confidence intervals from raw data by the published aggregate procedure.

    No mixed model: for each pair of models, the paired differences are
    averaged within each level of the unit, and the unit means are tested
    with one-sided paired tests; then the Holm step of docs/methods.md §7.

    Parameters
    ----------
    data : DataFrame, polars/pyarrow table or path
        Long format, one row per (model, cell).
    formula : str or Spec, optional
        ``"correct ~ model + (1|subject)"`` (unit = the random term) or
        ``"correct ~ model"`` (cells are the units).  When given, it takes
        precedence: ``model``, ``score`` and ``unit`` are read from it.  At
        most one random term.
    model, score : str
        The comparison column and the score column (when ``formula`` is None).
    unit : str or None, default "subject"
        The unit of inference (when ``formula`` is None); ``None`` makes
        every cell a unit (the classic paired test on cells).
    test : {"t", "wilcoxon"}, default "t"
        Paired t-test on the unit means (df = units - 1), or Wilcoxon
        signed-rank (zeros dropped, exact below 50 units without ties,
        normal approximation otherwise; :func:`mixrank.inference.paired.wilcoxon`).
    level : float, default 0.95
    coverage : {"marginal", "simultaneous"}, default "marginal"
    method : {"holm", "bonferroni", "bh"}, default "holm"
    pair_by : sequence of str, optional
        Pairing keys of a cell (default: ``subject``, ``question``,
        ``prompt`` present in the data), passed to
        :func:`mixrank.build_frame`.

    Returns
    -------
    {returns}
        For ``test="wilcoxon"`` the pairwise ``statistic`` is V (sum of the
        ranks of positive unit differences) and ``std_error``, ``df`` are
        NaN.  ``attrs["mixrank"]`` also records ``formula``, ``unit`` and
        ``test``.

    Raises
    ------
    DataError
        A single model, a pair of models without common cells or with fewer
        than two common units, unit means all equal to a non-zero constant
        (t), plus everything :func:`mixrank.build_frame` rejects.
    DesignError
        Unknown ``test``, ``coverage`` or ``method``; a formula with more
        than one random term (use ``mixrank.fit(...).rank_intervals()``).

    Notes
    -----
    For pair (j, k) and unit level u with common cells ``c in u``:
    ``dbar_u = mean_c (y_jc - y_kc)``; t-test: ``t = mean_u dbar_u /
    (sd_u dbar_u / sqrt(T))`` on ``T - 1`` df; p-value of ``H_jk`` is
    ``P(t_(T-1) >= t)``, of ``H_kj`` ``P(t_(T-1) >= -t)``.  All differences
    zero gives p = 1 both ways.  With balanced units this equals
    ``mixrank.fit(formula, data, method="aggregate")`` and the REML fit with
    an interior subject component (docs/methods.md §3).
    {notes}

    Validated against ``mixrank.fit(..., method="aggregate")`` and the
    hand-worked leaderboards of ``tests/inference/test_ranks.py``.

    References
    ----------
    "Quantifying rank uncertainty in LLM benchmarks", arXiv 2607.16259.
    Holm, S. (1979). Scand. J. Statist. 6, 65-70.

    Examples
    --------
    >>> import mixrank
    >>> from mixrank.inference.ranks import rank_intervals
    >>> tab = rank_intervals(mixrank.load_example(), unit="subject")
    >>> int(tab["rank_lower"].min()), int(tab["rank_upper"].max())
    (1, 6)
    """
    from mixrank.formula import Spec, parse
    from mixrank.frame import build_frame

    alpha = _alpha(level)
    _options(coverage, method, maxt=False)
    if test not in ("t", "wilcoxon"):
        raise DesignError(f"test={test!r}; expected 't' (paired t on unit means) or 'wilcoxon' "
                          "(signed-rank on unit means)")
    if formula is None:
        formula = f"{score} ~ {model}" + (f" + (1|{unit})" if unit is not None else "")
    spec = formula if isinstance(formula, Spec) else parse(formula)
    if len(spec.random) > 1:
        raise DesignError(f"formula {spec.formula!r} has {len(spec.random)} random terms; the "
                          "aggregate procedure has one unit. Keep one term, or use "
                          "mixrank.fit(formula, data).rank_intervals() for several")
    frame = build_frame(data, spec, pair_by=pair_by)
    models = list(frame.models)
    M = len(models)
    if M < 2:
        raise DataError(f"rank intervals need at least two models; {spec.comparison!r} has "
                        f"{models}")
    uname = spec.term_names[0] if spec.random else None
    codes = frame.term_codes[uname] if uname else None
    E, S, D, STAT, P, N = (np.full((M, M), np.nan) for _ in range(6))
    no_common, few_units = [], []
    obs, Y = frame.observed, frame.scores
    for j in range(M):
        for k in range(j + 1, M):
            mask = obs[:, j] & obs[:, k]
            if not mask.any():
                no_common.append((models[j], models[k]))
                continue
            d = Y[mask, j] - Y[mask, k]
            if codes is None:
                um = d
            else:
                c = codes[mask]
                cnt = np.bincount(c, minlength=frame.term_levels[cast(str, uname)])
                sm = np.bincount(c, weights=d, minlength=frame.term_levels[cast(str, uname)])
                um = sm[cnt > 0] / cnt[cnt > 0]
            if len(um) < 2:
                few_units.append((models[j], models[k]))
                continue
            e_jk, se, df, t_jk, t_kj, p_jk, p_kj = _unit_tests(um, test, (models[j], models[k]))
            E[j, k], E[k, j] = e_jk, -e_jk
            S[j, k] = S[k, j] = se
            D[j, k] = D[k, j] = df
            STAT[j, k], STAT[k, j] = t_jk, t_kj
            P[j, k], P[k, j] = p_jk, p_kj
            N[j, k] = N[k, j] = len(um)
    if no_common:
        raise DataError(f"{len(no_common)} pair(s) of models share no cell: "
                        f"{_listed(no_common)}. Ranking needs every pair to be compared on "
                        f"common cells (keyed by {list(frame.pair_by)}): drop one model of each "
                        "such pair, or check the key values / pair_by")
    if few_units:
        raise DataError(f"{len(few_units)} pair(s) of models have common cells in fewer than 2 "
                        f"levels of {uname or 'cell'!r}: {_listed(few_units)}; a paired test "
                        "needs at least 2 units. Use a finer unit (unit=None for cells) or drop "
                        "a model")
    n = obs.sum(axis=0).astype(float)
    est = np.array([float(np.mean(Y[obs[:, j], j])) for j in range(M)])
    adj_model, adj_other = _adjust_families(P, coverage, method)
    return _assemble(models, est, n, P, adj_model, adj_other, alpha=alpha, coverage=coverage,
                     method=method, extra=dict(estimate=E, std_error=S, df=D, statistic=STAT, n=N),
                     source="data", formula=spec.formula, unit=uname or "cell", test=test)


for _f in (rank_intervals_from_tests, rank_intervals_from_contrasts, rank_intervals_fit,
           rank_intervals):
    if _f.__doc__:
        _f.__doc__ = _f.__doc__.replace("{returns}", _RETURNS).replace("{notes}", _NOTES) \
            .replace("{{", "{").replace("}}", "}")
