"""Stage inference: the adjusted contrasts table of every pairwise result (one template).

Inputs: a :class:`PairEstimates` -- what a result type computed for its
pairs (one row per pair, and per level of a covariate: ``estimate,
std_error, df, statistic, p_value`` ...), the table's metadata, how the
p-values form the sets of tests adjusted together, and for max-t and
step-down the fit whose joint covariance (or unit randomization) the draws
come from -- and the checked ``adjust=`` value.
Outputs: the tidy contrasts table with ``p_adjusted`` right after
``p_value`` (:func:`adjusted_contrasts`), the table ``contrasts()`` returns
for every result type (:meth:`mixrank.results.base.ContrastsTemplate.contrasts`).

The p-value adjustments (``holm``, ``bonferroni``, ``bh``, ``none``) are
:func:`mixrank.inference.multiplicity.adjust_within`; max-t and step-down
are :func:`mixrank.inference.simultaneous.adjust_contrasts` for a fit's
pairs, and :func:`normal_maxt` when the contrasts are the pairwise
differences of one jointly normal coefficient vector
(:class:`NormalCoefficients`: the Bradley-Terry strengths of an arena fit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from mixrank._util import as_rng, check_max_draws, tidy
from mixrank.errors import DesignError
from mixrank.inference.multiplicity import adjust_within
from mixrank.inference.simultaneous import adjust_contrasts

__all__ = ["PairEstimates", "NormalCoefficients", "adjusted_contrasts", "normal_maxt", "JOINT"]

#: Adjustments drawn jointly over all the fitted pairs (they need :attr:`PairEstimates.joint`).
JOINT = ("maxt", "stepdown")


@dataclass(frozen=True, eq=False)
class PairEstimates:
    """A result type's pair estimates, before any adjustment.

    Attributes
    ----------
    rows : list of dict or pandas.DataFrame
        One row per pair (and level of ``within``) with at least ``p_value``;
        the column order of the table (``p_adjusted`` goes after ``p_value``).
    meta : dict
        The table's ``attrs["mixrank"]`` (``adjust`` is added here).
    within : str, optional
        A column: the pairs sharing its value are adjusted together (one set
        of tests per level of a covariate); None: all rows are one set.
    nan_p : {"exclude", "one"}
        ``"exclude"``: rows without a finite p-value keep NaN and are not
        counted in a set; ``"one"``: they enter the adjustment as p = 1
        (the binomial GLMM's rule).
    joint : object, optional
        The fit max-t and step-down draw from (its pairs, joint covariance or
        unit randomization); None where the result type has no joint draws.
    finish : callable, optional
        Applied to the adjusted table (rows the result type appends or columns
        it adds after the adjustment).
    """

    rows: list[dict[str, Any]] | pd.DataFrame
    meta: dict[str, Any]
    within: str | None = None
    nan_p: str = "exclude"
    joint: Any = None
    finish: Callable[[pd.DataFrame], pd.DataFrame] | None = None


@dataclass(frozen=True, eq=False)
class NormalCoefficients:
    """The joint law max-t draws from when every contrast is ``beta_a - beta_b`` of one
    coefficient vector with an (asymptotically) normal estimate.

    Attributes
    ----------
    cov : numpy.ndarray
        ``(K, K)`` covariance of the coefficients.
    ia, ib : numpy.ndarray
        For each row of the contrasts table, the coefficient of ``model_a`` and of
        ``model_b`` (in table order).
    estimate, std_error : numpy.ndarray
        Each contrast and its standard error on the coefficients' scale (table order).
    to_scale : callable, optional
        The table's (monotone) scale of an interval endpoint on the coefficients' scale
        (e.g. Elo points, a probability); None: the coefficients' scale itself.
    min_draws : int
        The fewest draws accepted (:func:`normal_maxt` refuses fewer).
    """

    cov: np.ndarray
    ia: np.ndarray
    ib: np.ndarray
    estimate: np.ndarray
    std_error: np.ndarray
    to_scale: Callable[[np.ndarray], np.ndarray] | None = None
    min_draws: int = 100


def normal_maxt(joint: NormalCoefficients, tab: pd.DataFrame, *, level: float, B: int,
                rng: Any) -> pd.DataFrame:
    """Single-step max-``|z|`` over the exact joint normal law of the contrasts.

    ``tab`` holds one row per contrast of ``joint`` (``estimate, std_error, df,
    statistic, p_value``, the interval); returned with ``p_adjusted`` after
    ``p_value`` and simultaneous ``ci_lower, ci_upper``.

    Draws ``e ~ N(0, cov)`` (``B`` of them, in chunks of 500, from ``rng``) give
    ``M = max_h |e_a - e_b| / sd_h``; with finite df each ``|t|`` is first mapped to
    the normal quantile of its t tail (a Gaussian copula with t margins), so
    ``p_adjusted = (1 + #{M >= |z|}) / (B + 1)`` (at most 1) and the interval is
    ``estimate -/+ q std_error`` on the coefficients' scale (then ``to_scale``) with
    ``q`` the t quantile of the normal tail of ``c``, the ``level`` quantile of M.  Metadata: ``family_size``, ``ci``
    ("simultaneous"), ``critical_value`` (c) and ``B``.
    """
    if not isinstance(B, (int, np.integer)) or isinstance(B, bool) or B < joint.min_draws:
        raise DesignError(f"draws={B!r} draws are too few for max-t; use an integer >= "
                          f"{joint.min_draws}")
    check_max_draws("draws", B, DesignError)
    dfr = tab["df"].to_numpy(dtype=float)
    z = stats.norm.isf(stats.t.sf(np.abs(tab["statistic"].to_numpy(dtype=float)), dfr))
    C, ia, ib = joint.cov, joint.ia, joint.ib
    w, V = np.linalg.eigh(C)
    L = V * np.sqrt(np.clip(w, 0, None))
    sd = np.sqrt(C[ia, ia] + C[ib, ib] - 2 * C[ia, ib])
    gen = as_rng(rng)
    mx = np.empty(B)
    for s in range(0, B, 500):
        e = gen.standard_normal((min(500, B - s), C.shape[0])) @ L.T
        mx[s:s + e.shape[0]] = np.max(np.abs(e[:, ia] - e[:, ib]) / sd, axis=1)
    crit = float(np.quantile(mx, level))
    padj = np.minimum((1 + np.sum(mx[None, :] >= np.abs(z)[:, None], axis=1)) / (B + 1), 1.0)
    out = tab.copy()
    out.attrs = {"mixrank": dict(tab.attrs.get("mixrank", {}))}
    out.insert(int(out.columns.get_loc("p_value")) + 1, "p_adjusted", padj)
    qt = stats.t.isf(stats.norm.sf(crit), dfr)
    lo, hi = joint.estimate - qt * joint.std_error, joint.estimate + qt * joint.std_error
    if joint.to_scale is not None:
        lo, hi = joint.to_scale(lo), joint.to_scale(hi)
    out["ci_lower"], out["ci_upper"] = lo, hi
    out.attrs["mixrank"].update(family_size=len(out), ci="simultaneous", critical_value=crit,
                                B=B)
    return out


def _groups(values: Any) -> list[np.ndarray]:
    """Row positions of each distinct value, in order of first appearance."""
    pos: dict[Any, list[int]] = {}
    for i, v in enumerate(values):
        pos.setdefault(v, []).append(i)
    return [np.asarray(g, dtype=np.int64) for g in pos.values()]


def adjusted_contrasts(est: PairEstimates, *, adjust: str, level: float, draws: int,
                       rng: Any) -> pd.DataFrame:
    """The contrasts table of ``est`` with ``p_adjusted`` after ``p_value``.

    ``adjust`` is a value the result type accepts (checked by the caller).
    ``holm``/``bonferroni``/``bh``/``none`` adjust within each set of pairs
    (:func:`~mixrank.inference.multiplicity.adjust_within`); ``maxt`` and
    ``stepdown`` go through
    :func:`~mixrank.inference.simultaneous.adjust_contrasts` with the fit
    ``est.joint`` (``draws`` draws from ``rng``), which also records the
    simultaneous intervals.  Metadata: ``adjust``; with one set of pairs also
    ``family_size`` (the p-values adjusted together) and ``ci``.
    """
    rows = est.rows
    if adjust in JOINT or not len(rows):
        if adjust in JOINT and est.within is not None:
            raise DesignError(f"adjust={adjust!r} is not available with by=; use 'holm', "
                              "'bh' or 'none'")
        tab = tidy(rows, **est.meta)
        if isinstance(est.joint, NormalCoefficients):
            tab = normal_maxt(est.joint, tab, level=level, B=draws, rng=rng)
        elif est.joint is not None:
            tab = adjust_contrasts(est.joint, tab, adjust=adjust, level=level, B=draws, rng=rng)
        tab.attrs["mixrank"]["adjust"] = adjust
        return tab if est.finish is None else est.finish(tab)
    if isinstance(rows, pd.DataFrame):
        p = rows["p_value"].to_numpy(dtype=float)
        groups = ([np.arange(len(p))] if est.within is None else
                  list(rows.groupby(est.within, sort=False).indices.values()))
    else:
        p = np.array([r["p_value"] for r in rows], dtype=float)
        groups = ([np.arange(len(p))] if est.within is None else
                  _groups(r[est.within] for r in rows))
    adj = adjust_within(p, groups, adjust, nan_p=est.nan_p)
    if isinstance(rows, pd.DataFrame):
        keep = np.sort(np.concatenate(groups))        # rows of no set (a NaN level) are left out
        out = rows.iloc[keep].copy() if len(keep) < len(rows) else rows.copy()
        out.insert(int(out.columns.get_loc("p_value")) + 1, "p_adjusted", adj[keep])
        tab = tidy(out, **est.meta)
    else:    # p_adjusted placed in the rows: the one DataFrame is built once
        with_adj = []
        for r, a in zip(rows, adj):
            row: dict[str, Any] = {}
            for k, v in r.items():
                row[k] = v
                if k == "p_value":
                    row["p_adjusted"] = a
            with_adj.append(row)
        tab = tidy(with_adj, **est.meta)
    meta = tab.attrs["mixrank"]
    meta["adjust"] = adjust
    if est.within is None:
        meta.update(family_size=int(np.isfinite(p).sum() if est.nan_p == "exclude" else len(p)),
                    ci="marginal")
    return tab if est.finish is None else est.finish(tab)
