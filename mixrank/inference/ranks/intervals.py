"""Stage inference: rank confidence intervals from one-sided pairwise tests (docs/methods.md §7).

Inputs: either a :class:`~mixrank.results.FitResult` (p-values from the
fitted paired mixed models, at the formula's unit of inference), raw
long-format data (the published "aggregate over units, then paired tests"
procedure), a table of pairwise contrasts, or a hand-made table of one-sided
p-values.  Outputs: a tidy table, one row per model, with the point rank and
the rank interval ``[rank_lower, rank_upper]``; the directed hypotheses
behind it in ``attrs["mixrank"]["pairwise"]`` (a list of records:
``pd.DataFrame(tab.attrs["mixrank"]["pairwise"])`` gives the table).

Contents: :func:`rank_intervals_of` (what ``FitResult.rank_intervals``
calls), :func:`rank_intervals_from_contrasts` and
:func:`rank_intervals_from_flips` (the unit sign-flip step-down); re-exported here so that
this module stays the one public home of rank intervals:
:func:`rank_intervals` (from raw data, no mixed model;
:mod:`mixrank.inference.ranks.data`) and :func:`rank_intervals_from_tests`
(the pure core, with the checks and the table builder;
:mod:`mixrank.inference.ranks.core`).  The contrast-table reader and the
bootstrap max-t step live in :mod:`mixrank.inference.ranks.maxt`.

Convention: rank 1 is the best (highest score); ``H_jk: mu_j <= mu_k`` and
rejecting it means "j is better than k".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from mixrank._deprecate import former_keywords, former_names
from mixrank._util import as_rng, check_draws, listed
from mixrank.engine.records import missing_pairs
from mixrank.errors import DataError, DesignError
from mixrank.inference.keywords import former, unexpected_keywords
from mixrank.inference.mvt import small_df
from mixrank.inference.ranks.core import (
    COVERAGES,
    RANK_METHODS,
    adjust_families,
    alpha_from_level,
    assemble,
    check_options,
    fill_doc,
    rank_intervals_from_tests,
    read_scores,
)
from mixrank.inference.ranks.data import rank_intervals
from mixrank.inference.ranks.maxt import contrast_matrices, joint_covariance, stepdown_maxt

if TYPE_CHECKING:
    from mixrank.engine.records import FittedPairs

__all__ = ["rank_intervals", "rank_intervals_of", "rank_intervals_from_contrasts",
           "rank_intervals_from_flips", "rank_intervals_from_tests", "COVERAGES",
           "RANK_METHODS"]


@former_keywords
def rank_intervals_from_contrasts(scores: Any, contrasts: pd.DataFrame, *, level: float = 0.95,
                                  coverage: str = "marginal", adjust: str = "holm",
                                  draws: int = 2000, rng: Any = None,
                                  **old: Any) -> pd.DataFrame:
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
    adjust : {"holm", "bonferroni", "bh", "maxt"}, default "holm"
        The multiplicity method (former name ``method=``, deprecated).
    draws : int, default 2000
        Gaussian draws for ``adjust="maxt"`` (former name ``B=``, deprecated).
    rng : Generator or int, optional
        Randomness for ``adjust="maxt"``.

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
    method = former(old, "method", "adjust", adjust, "holm", where="rank_intervals_from_contrasts")
    B = former(old, "B", "draws", draws, 2000, where="rank_intervals_from_contrasts")
    unexpected_keywords(old, "rank_intervals_from_contrasts")
    alpha = alpha_from_level(level)
    check_options(coverage, method)
    models, est, n = read_scores(scores)
    if not isinstance(contrasts, pd.DataFrame):
        raise DataError(f"contrasts must be a DataFrame (as FitResult.contrasts() returns); got "
                        f"{type(contrasts).__name__}")
    mats = contrast_matrices(contrasts, models)
    meta: dict[str, Any] = {}
    if method == "maxt":
        B = check_draws(B, "draws", 100, DesignError)
        C, clipped = joint_covariance(mats["variance"])
        gen = as_rng(rng)
        adj_a, adj_b = stepdown_maxt(mats["p"], C, coverage=coverage, B=B, rng=gen,
                                     df=mats["df"])
        if coverage == "simultaneous":   # the union with the marginal sets (assemble)
            meta["marginal"] = stepdown_maxt(mats["p"], C, coverage="marginal", B=B, rng=gen,
                                             df=mats["df"])
        meta.update(B=B, psd_clipped=clipped, reference="t margins, Gaussian copula" if not
                    small_df(mats["df"][np.triu_indices(len(models), 1)]).any() else
                    "multivariate t at the pairs' df below 30, Gaussian copula above")
    else:
        adj_a, adj_b = adjust_families(mats["p"], coverage, method)
    extra = dict(estimate=mats["estimate"], std_error=np.sqrt(mats["variance"]), df=mats["df"],
                 statistic=mats["statistic"], n=mats["n"])
    return assemble(models, est, n, mats["p"], adj_a, adj_b, alpha=alpha,
                     coverage=coverage, method=method, extra=extra, source="contrasts", **meta)


@former_keywords
def rank_intervals_of(fit: FittedPairs, *, level: float = 0.95, coverage: str = "marginal",
                       adjust: str = "holm", draws: int = 2000, rng: Any = None,
                       **old: Any) -> pd.DataFrame:
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
    ``estimate`` is each model's score (``FitResult.model_scores``, the fit's estimand);
    the tests use the fitted contrasts ``FitResult.contrasts``: one-sided
    p-values from ``t = estimate / std_error`` with the pair's df under the
    fit's df method (CR2/Bell-McCaffrey at the unit where it applies, Satterthwaite
    otherwise, units - 1 for the aggregate method); where the contrasts' own
    tests are the unit sign flips (``attrs["mixrank"]["ci_method"] ==
    "randomization"``, the default on the step-down path), their one-sided
    flip p-values instead (docs/methods.md §9).  See
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
    method = former(old, "method", "adjust", adjust, "holm", where="rank_intervals_of")
    B = former(old, "B", "draws", draws, 2000, where="rank_intervals_of")
    unexpected_keywords(old, "rank_intervals_of")
    models = list(fit.models)
    if len(models) < 2:
        raise DataError(f"rank intervals need at least two models; the fit has {models}")
    missing = missing_pairs(fit.pairs, models)
    if missing:
        raise DataError(f"{len(missing)} pair(s) of models were not fitted: {listed(missing)}. "
                        "Ranking needs every pair; pairs without (enough) common cells cannot be "
                        "fitted: drop one model of each such pair from the data, or refit with "
                        "pairs=None")
    spec = fit.frame.spec
    if method == "maxt":          # checked before any fit work, on every max-t path
        B = check_draws(B, "draws", 100, DesignError)
        as_rng(rng)
    if method == "maxt" and getattr(fit, "df_method", "") == "cr2":
        tab = _randomization_ranks(fit, level=level, coverage=coverage, B=B, rng=rng)
    else:
        tab = rank_intervals_from_contrasts(fit.model_scores(), fit.contrasts(), level=level,
                                            coverage=coverage, adjust=method, draws=B,
                                            rng=rng)
    tab.attrs["mixrank"].update(source="fit", formula=spec.formula,
                                unit=spec.unit or "cell",
                                fit_method=fit.method, estimand=fit.estimand, engine=fit.engine)
    return tab


def _randomization_ranks(fit: FittedPairs, *, level: float, coverage: str, B: int,
                         rng: Any) -> pd.DataFrame:
    """Rank intervals from the unit sign-flip step-down (``df="cr2"`` fits, ``method="maxt"``)."""
    return rank_intervals_from_flips(fit.model_scores(), fit.contrasts(adjust="none"), fit,
                                     level=level, coverage=coverage, draws=B, rng=rng)


def rank_intervals_from_flips(scores: Any, contrasts: pd.DataFrame, source: Any, *,
                              level: float = 0.95, coverage: str = "marginal",
                              draws: int = 2000, rng: Any = None) -> pd.DataFrame:
    """Rank intervals from the unit sign-flip step-down of the directed hypotheses.

    Parameters
    ----------
    scores : mapping, Series or DataFrame
        Point scores (see :func:`rank_intervals_from_tests`).
    contrasts : DataFrame
        One row per pair (``model_a, model_b, estimate, std_error, df``), as
        :func:`rank_intervals_from_contrasts` reads it (the one-sided p-values
        reported beside the intervals).
    source : object
        The unit contributions of every pair
        (:func:`mixrank.inference.randomization.contributions_of`): a
        ``df="cr2"`` :class:`~mixrank.results.FitResult` or the binomial
        GLMM's :class:`~mixrank.results.glmm.flips.GlmmFlips`.
    level : float, default 0.95
    coverage : {"marginal", "simultaneous"}, default "marginal"
    draws : int, default 2000
        Seeded flips when the unit has more than 14 levels (else all flips).
    rng : Generator or int, optional

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`rank_intervals_from_contrasts` (``model,
        estimate, rank, rank_lower, rank_upper, level, n``); ``method`` is
        ``"maxt"`` and ``attrs["mixrank"]["reference"]`` names the flips.

    Raises
    ------
    DataError
        As :func:`rank_intervals_from_contrasts`.
    DesignError
        ``source`` has no unit of at least 3 levels.

    Notes
    -----
    The adjusted p-values of the directed hypotheses are
    :func:`mixrank.inference.randomization.directed_stepdown`: the CR2-type
    ``t`` of each pair and its negation under the same sign flip of every
    unit, Westfall-Young step-down, marginal families at ``alpha/2`` each.
    Validated by brute-force enumeration (tests/inference/test_randomization.py,
    tests/results/test_glmm_flips.py) and the seeded coverage simulations of
    tests/validity/.

    Examples
    --------
    >>> import mixrank
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> tab = rank_intervals_from_flips(res.model_scores(), res.contrasts(adjust="none"), res)
    >>> tab.attrs["mixrank"]["method"]
    'maxt'
    """
    from mixrank.inference.randomization import directed_stepdown, own_contributions

    fit, B = source, draws
    alpha = alpha_from_level(level)
    check_options(coverage, "maxt")
    models, est, n = read_scores(scores)
    mats = contrast_matrices(contrasts, models)
    gen = as_rng(rng)
    # the contrasts' step-down statistic: the scaled totals of a linear fit; the studentized
    # contrasts of a source with its own contributions (the binomial GLMM's score flips)
    # (both families share the fit's contributions: unit_contributions keeps them per fit)
    scaled = not own_contributions(fit)
    adj_a, adj_b = directed_stepdown(fit, models, coverage=coverage, B=max(int(B), 100), rng=gen,
                                     scaled=scaled)
    marginal = directed_stepdown(fit, models, coverage="marginal", B=max(int(B), 100),
                                 rng=gen, scaled=scaled) if coverage == "simultaneous" else None
    extra = dict(estimate=mats["estimate"], std_error=np.sqrt(mats["variance"]), df=mats["df"],
                 statistic=mats["statistic"], n=mats["n"])
    return assemble(models, est, n, mats["p"], adj_a, adj_b, alpha=alpha, coverage=coverage,
                    method="maxt", extra=extra, source="contrasts", marginal=marginal,
                    reference="randomization: sign flips of the unit's contrast totals, each "
                    + ("scaled by its within-unit SE" if scaled else "studentized"))


for _f in (rank_intervals_from_contrasts, rank_intervals_of):
    if _f.__doc__:
        _f.__doc__ = fill_doc(_f.__doc__)


#: Former names (``X_fit`` meant "computed from a fit"; ``X_of(fit)`` now): one release.
__getattr__ = former_names('mixrank.inference.ranks.intervals', {'rank_intervals_fit': 'rank_intervals_of'}, globals())
