"""Stage judge: how the judge departs from the reference on the labelled cells (docs/judge.md §4).

Inputs: :class:`~mixrank.judge.data.JudgeData` and a confidence level.
Outputs: :func:`judge_table` -- per model the judge's bias (judge minus
reference) with its interval at the formula's unit, the judge-reference
correlation, Cohen's kappa for 0/1 scores, the corrected score's lambda and
effective labels (for 0/1 scores whose labelled differences are all equal --
e.g. no disagreement -- the interval is the exact Clopper-Pearson bound on the
disagreement rate instead of the zero-width Wald one, :func:`exact_bias_interval`); :func:`differential_bias` -- the test that the bias is
the same for every model (the ``model x source`` interaction on the
labelled cells), a cluster-robust Wald test.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from .._util import tidy
from .data import JudgeData
from .estimate import Corrected
from .ppi import ppi_mean

__all__ = ["judge_table", "differential_bias", "cohen_kappa", "bias_covariance",
           "exact_bias_interval"]


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two 0/1 vectors (NaN when the chance agreement is 1)."""
    po = float(np.mean(a == b))
    pa, pb = float(np.mean(a)), float(np.mean(b))
    pe = pa * pb + (1 - pa) * (1 - pb)
    return (po - pe) / (1 - pe) if pe < 1 else float("nan")


def exact_bias_interval(c: float, n: int, level: float) -> tuple[float, float]:
    """Exact interval for the bias of 0/1 scores when all ``n`` labelled differences equal ``c``.

    Parameters
    ----------
    c : float
        The common difference judge - reference (-1, 0 or 1).
    n : int
        Labelled cells (n >= 1).
    level : float
        Confidence level.

    Returns
    -------
    tuple of float
        ``(ci_lower, ci_upper)``, always of positive width for finite ``n``.

    Notes
    -----
    Let ``q`` be the probability that a cell's difference is not ``c``; none
    of the ``n`` cells differs, so the one-sided Clopper-Pearson upper bound
    is ``U = 1 - (1 - level)^(1/n)`` (``scipy.stats.beta.ppf(level, 1, n)``).
    A difference of 0/1 scores lies in [-1, 1], so the bias lies in
    ``[c - q (1 + c), c + q (1 - c)]`` and, with ``q <= U``, in
    ``[c - U (1 + c), c + U (1 - c)]`` with probability at least ``level``.
    For no disagreement (``c = 0``) that is ``[-U, U]``: U bounds the
    disagreement rate, which bounds the bias's magnitude.  Checked against
    the hand formula and scipy's beta quantile in tests/judge/test_diagnostics.py.

    Examples
    --------
    >>> lo, hi = exact_bias_interval(0.0, 60, 0.95)
    >>> round(hi, 4)
    0.0487
    """
    u = float(stats.beta.ppf(level, 1, n))
    return max(-1.0, c - u * (1 + c)), min(1.0, c + u * (1 - c))


def _unit_codes(jd: JudgeData) -> np.ndarray:
    spec = jd.frame.spec
    return (jd.frame.term_codes[spec.unit] if spec.unit is not None
            else np.arange(jd.frame.n_cells))


def judge_table(jd: JudgeData, scores: list[Corrected], level: float) -> Any:
    """One row per model: the judge's bias and agreement on the model's labelled cells.

    Returns
    -------
    pandas.DataFrame
        ``model, n_labelled`` (labelled cells), ``judge_mean, reference_mean``
        (on the labelled cells), ``bias`` (judge - reference), ``std_error,
        df, ci_lower, ci_upper, level`` (of the bias, at the formula's unit;
        for 0/1 scores whose labelled differences are all equal, the exact
        interval of :func:`exact_bias_interval`, never of zero width),
        ``correlation`` (Pearson, judge vs reference), ``kappa`` (Cohen's, 0/1
        scores only, else NaN), ``lam`` (of the corrected score),
        ``n_effective`` (labels a labelled-only score would need for the same
        variance), ``note``.
    """
    fr = jd.frame
    spec = fr.spec
    binary = jd.binary and fr.binary
    rows = []
    for j, m in enumerate(fr.models):
        lab = jd.labelled[:, j]
        n = int(lab.sum())
        c = scores[j]
        row: dict[str, Any] = dict(model=m, n_labelled=n)
        if n < 2 or c.ppi is None:
            rows.append(dict(row, judge_mean=np.nan, reference_mean=np.nan, bias=np.nan,
                             std_error=np.nan, df=np.nan, ci_lower=np.nan, ci_upper=np.nan,
                             level=level, correlation=np.nan, kappa=np.nan, lam=np.nan,
                             n_effective=np.nan, note=c.note or "fewer than 2 labelled cells"))
            continue
        judge, ref = fr.scores[lab, j], jd.gold[lab, j]
        groups = [fr.term_codes[t][lab] for t in spec.term_names] or None
        b = ppi_mean(judge - ref, np.zeros(n), np.zeros(0), groups_l=groups,
                     groups_u=[np.zeros(0, dtype=np.int64)] * len(groups) if groups else None)
        q = float(stats.norm.ppf(0.5 + level / 2) if not np.isfinite(b.df)
                  else stats.t.ppf(0.5 + level / 2, b.df))
        lo, hi, note = b.estimate - q * b.std_error, b.estimate + q * b.std_error, ""
        d = judge - ref
        if binary and np.all(d == d[0]):
            lo, hi = exact_bias_interval(float(d[0]), n, level)
            note = (f"all {n} labelled differences equal {d[0]:g}: exact Clopper-Pearson "
                    "interval on the disagreement rate (the Wald interval has zero width)")
        corr = (float(np.corrcoef(judge, ref)[0, 1]) if np.std(judge) > 0 and np.std(ref) > 0
                else np.nan)
        rows.append(dict(row, judge_mean=float(judge.mean()), reference_mean=float(ref.mean()),
                         bias=b.estimate, std_error=b.std_error, df=b.df,
                         ci_lower=lo, ci_upper=hi, level=level,
                         correlation=corr, kappa=cohen_kappa(judge, ref) if binary else np.nan,
                         lam=c.ppi.lam, n_effective=c.ppi.n_effective, note=note))
    return tidy(rows, table="judge", formula=spec.formula, gold=jd.column,
                unit=spec.unit or "cell", differential_bias=differential_bias(jd))


def bias_covariance(jd: JudgeData, models: list[int], *, small_sample: bool = True
                    ) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-model mean bias (judge - reference) on the labelled cells and its cluster-robust
    covariance over the levels of the unit (the cells without random terms).

    Returns ``(bias, covariance, G)``; ``small_sample`` applies the CR1 factor
    ``G / (G - 1)``.  The covariance is the sandwich of the regression of the
    bias on model indicators, so with ``small_sample=False`` it equals
    statsmodels' ``OLS(...).fit(cov_type="cluster", cov_kwds={"groups": unit,
    "use_correction": False})`` (tests/judge/test_diagnostics.py).
    """
    fr = jd.frame
    codes = _unit_codes(jd)
    lab_any = np.zeros(fr.n_cells, dtype=bool)
    for j in models:
        lab_any |= jd.labelled[:, j]
    used = np.unique(codes[lab_any])
    G = len(used)
    where = np.full(int(codes.max()) + 1, -1)
    where[used] = np.arange(G)
    S = np.zeros((G, len(models)))
    bias = np.zeros(len(models))
    for i, j in enumerate(models):
        lab = jd.labelled[:, j]
        d = fr.scores[lab, j] - jd.gold[lab, j]
        bias[i] = d.mean()
        S[:, i] = np.bincount(where[codes[lab]], weights=(d - bias[i]) / lab.sum(), minlength=G)
    cov = S.T @ S * (G / (G - 1) if small_sample and G > 1 else 1.0)
    return bias, cov, G


def differential_bias(jd: JudgeData) -> dict[str, Any]:
    """Does the judge favour some models?  ``H0``: equal bias for every labelled model.

    Returns
    -------
    dict
        ``statistic`` (F), ``df1`` (models - 1), ``df2`` (units - df1),
        ``p_value``, ``chi2`` (the Wald statistic), ``models`` (those with at
        least 2 labelled cells), ``units`` (G), ``note``.

    Notes
    -----
    The bias vector ``b`` and its CR1 covariance ``Sigma`` come from
    :func:`bias_covariance`; with ``C`` the differences from the first model,
    ``W = (C b)' (C Sigma C')^-1 (C b)`` and ``F = W (G - q) / (q (G - 1))``
    referred to ``F(q, G - q)`` (the Hotelling-type small-sample scaling of a
    cluster-robust Wald test, q = models - 1).  This is the test of the
    ``model x source`` interaction in a regression of the scores on model,
    source (judge / reference) and their interaction over the labelled
    cells, with errors clustered by the unit.
    """
    models = [j for j in range(jd.frame.n_models) if jd.labelled[:, j].sum() >= 2]
    names = [jd.frame.models[j] for j in models]
    out: dict[str, Any] = dict(statistic=np.nan, df1=np.nan, df2=np.nan, p_value=np.nan,
                               chi2=np.nan, models=names, units=0, note="")
    q = len(models) - 1
    if q < 1:
        out["note"] = "fewer than 2 models with labelled cells"
        return out
    bias, cov, G = bias_covariance(jd, models)
    out["units"] = G
    C = np.hstack([-np.ones((q, 1)), np.eye(q)])
    cb = C @ bias
    V = C @ cov @ C.T
    if G - q < 1 or np.linalg.matrix_rank(V) < q:
        out["note"] = (f"{G} units cannot test {q + 1} models' biases (need more units than "
                       "models - 1 with an invertible covariance)")
        return out
    W = float(cb @ np.linalg.solve(V, cb))
    F = W * (G - q) / (q * (G - 1))
    out.update(statistic=F, df1=float(q), df2=float(G - q), chi2=W,
               p_value=float(stats.f.sf(F, q, G - q)))
    return out
