"""Stage inference: rank confidence intervals from raw data, no mixed model (docs/methods.md §7).

Inputs: long-format data (or a path/table :func:`mixrank.build_frame`
reads) and either a formula with at most one random term or the model,
score and unit column names.
Outputs: the rank table of :func:`mixrank.inference.ranks.core.assemble`.
Contents: :func:`rank_intervals` (the published "aggregate over units, then
paired tests" procedure), :func:`pair_unit_means` and
:func:`unit_mean_tests` (one pair's unit means and their one-sided tests).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from mixrank._deprecate import former_keywords
from mixrank._util import as_rng, check_max_draws, listed
from mixrank.errors import DataError, DesignError, MixrankWarning
from mixrank.formula import Spec, parse
from mixrank.frame import Frame, build_frame
from mixrank.inference.keywords import former, unexpected_keywords
from mixrank.inference.paired import wilcoxon
from mixrank.inference.ranks.core import (
    adjust_families,
    alpha_from_level,
    assemble,
    check_options,
    fill_doc,
)
from mixrank.inference.ranks.robust import ROBUST_TESTS, bootstrap_t_tests, sign_flip_tests

__all__ = ["rank_intervals", "pair_unit_means", "unit_mean_tests"]


def unit_mean_tests(um: np.ndarray, test: str, pair: tuple[str, str]) -> tuple[float, float, float,
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
    zeros = np.zeros(T)
    with warnings.catch_warnings():
        # all differences zero: V = 0 and p = 1 in both directions (no evidence)
        warnings.simplefilter("ignore", MixrankWarning)
        g = wilcoxon(um, zeros, alternative="greater")
        r = wilcoxon(-um, zeros, alternative="greater")
    return (est, float("nan"), float("nan"), float(g["statistic"].iloc[0]),
            float(r["statistic"].iloc[0]), float(g["p_value"].iloc[0]),
            float(r["p_value"].iloc[0]))


@former_keywords
def rank_intervals(data: Any, *, formula: Any = None, model: str = "model",
                   score: str = "correct", unit: str | None = "subject", test: str = "t",
                   level: float = 0.95, coverage: str = "marginal", adjust: str = "holm",
                   pair_by: Sequence[str] | None = None, draws: int = 2000,
                   rng: Any = None, **old: Any) -> pd.DataFrame:
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
    test : {"t", "wilcoxon", "bootstrap", "permutation"}, default "t"
        Paired t-test on the unit means (df = units - 1); Wilcoxon
        signed-rank (zeros dropped, exact below 50 units without ties,
        normal approximation otherwise; :func:`mixrank.inference.paired.wilcoxon`);
        ``"bootstrap"``: paired bootstrap-t of the unit means
        (:func:`mixrank.inference.ranks.robust.bootstrap_t_tests`);
        ``"permutation"``: sign-flip test of the unit means, exact up to 20
        non-zero units (:func:`mixrank.inference.ranks.robust.sign_flip_tests`).
    level : float, default 0.95
    coverage : {"marginal", "simultaneous"}, default "marginal"
    adjust : {"holm", "bonferroni", "bh"}, default "holm"
        The multiplicity method (former name ``method=``, deprecated).
    pair_by : sequence of str, optional
        Pairing keys of a cell (default: ``subject``, ``question``,
        ``prompt`` present in the data), passed to
        :func:`mixrank.build_frame`.
    draws : int, default 2000
        (Former name ``B=``, deprecated.)  Resamples of the bootstrap and Monte Carlo sign-flip tests.
    rng : Generator or int, optional
        Randomness of the resampling tests (seed for reproducibility).

    Returns
    -------
    {returns}
        For ``test="wilcoxon"`` the pairwise ``statistic`` is V (sum of the
        ranks of positive unit differences) and ``std_error``, ``df`` are
        NaN; for ``"permutation"`` the statistic is the mean unit
        difference and ``std_error``, ``df`` are NaN; for ``"bootstrap"`` it
        is t.  ``attrs["mixrank"]`` also records ``formula``, ``unit``,
        ``test`` and (resampling tests) ``B``.

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
    alpha = alpha_from_level(level)
    method = former(old, "method", "adjust", adjust, "holm", where="rank_intervals")
    B = former(old, "B", "draws", draws, 2000, where="rank_intervals")
    unexpected_keywords(old, "rank_intervals")
    check_options(coverage, method, maxt=False)
    if test not in ("t", "wilcoxon") + ROBUST_TESTS:
        raise DesignError(f"test={test!r}; expected 't' (paired t on unit means), 'wilcoxon' "
                          "(signed-rank on unit means), 'bootstrap' (paired bootstrap-t) or "
                          "'permutation' (sign-flip)")
    if isinstance(B, bool) or not isinstance(B, (int, np.integer)) or B < 100:
        raise DesignError(f"draws={B!r}; expected a whole number of resamples >= 100")
    check_max_draws("draws", B, DesignError)
    gen = as_rng(rng)
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
    uname = spec.unit
    E, S, D, STAT, P, N = (np.full((M, M), np.nan) for _ in range(6))
    no_common, few_units = [], []
    for j in range(M):
        for k in range(j + 1, M):
            um = pair_unit_means(frame, j, k, uname)
            if um is None:
                no_common.append((models[j], models[k]))
                continue
            if len(um) < 2:
                few_units.append((models[j], models[k]))
                continue
            if test == "bootstrap":
                e_jk, se, df, t_jk, t_kj, p_jk, p_kj = bootstrap_t_tests(um, B=int(B), gen=gen)
            elif test == "permutation":
                e_jk, se, df, t_jk, t_kj, p_jk, p_kj = sign_flip_tests(um, B=int(B), gen=gen)
            else:
                e_jk, se, df, t_jk, t_kj, p_jk, p_kj = unit_mean_tests(um, test,
                                                                       (models[j], models[k]))
            E[j, k], E[k, j] = e_jk, -e_jk
            S[j, k] = S[k, j] = se
            D[j, k] = D[k, j] = df
            STAT[j, k], STAT[k, j] = t_jk, t_kj
            P[j, k], P[k, j] = p_jk, p_kj
            N[j, k] = N[k, j] = len(um)
    if no_common:
        raise DataError(f"{len(no_common)} pair(s) of models share no cell: "
                        f"{listed(no_common)}. Ranking needs every pair to be compared on "
                        f"common cells (keyed by {list(frame.pair_by)}): drop one model of each "
                        "such pair, or check the key values / pair_by")
    if few_units:
        raise DataError(f"{len(few_units)} pair(s) of models have common cells in fewer than 2 "
                        f"levels of {uname or 'cell'!r}: {listed(few_units)}; a paired test "
                        "needs at least 2 units. Use a finer unit (unit=None for cells) or drop "
                        "a model")
    obs, Y = frame.observed, frame.scores
    n = obs.sum(axis=0).astype(float)
    est = np.array([float(np.mean(Y[obs[:, j], j])) for j in range(M)])
    adj_a, adj_b = adjust_families(P, coverage, method)
    return assemble(models, est, n, P, adj_a, adj_b, alpha=alpha, coverage=coverage,
                    method=method, extra=dict(estimate=E, std_error=S, df=D, statistic=STAT, n=N),
                    source="data", formula=spec.formula, unit=uname or "cell", test=test,
                    B=int(B) if test in ROBUST_TESTS else None)


def pair_unit_means(frame: Frame, j: int, k: int, unit: str | None) -> np.ndarray | None:
    """Mean difference ``model j - model k`` within each level of ``unit`` over their common
    cells (the cell differences themselves when ``unit`` is None); None without common cells."""
    obs, Y = frame.observed, frame.scores
    mask = obs[:, j] & obs[:, k]
    if not mask.any():
        return None
    d = Y[mask, j] - Y[mask, k]
    if unit is None:
        return d
    c = frame.term_codes[unit][mask]
    cnt = np.bincount(c, minlength=frame.term_levels[unit])
    sm = np.bincount(c, weights=d, minlength=frame.term_levels[unit])
    return sm[cnt > 0] / cnt[cnt > 0]

for _f in (rank_intervals,):
    if _f.__doc__:
        _f.__doc__ = fill_doc(_f.__doc__)
