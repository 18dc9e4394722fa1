"""Per-pair stability of the clustered verdict across sensitivity replicates (design stage).

Stage: design (summarises a table of :func:`mixrank.design.sensitivity.sensitivity_of`).
Inputs: the replicate table (one row per replicate and pair) with its
``attrs["mixrank"]["full"]`` (the full fit's rows).
Outputs: one row per (check, pair) (:func:`stability`).
Contents (docs/sensitivity.md, "Stability summary"): :func:`stability`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mixrank._util import tidy
from mixrank.errors import DesignError

__all__ = ["stability", "small_cluster_factor"]


def small_cluster_factor(n_units: int) -> float:
    """The small-cluster correction ``T / (T - 1)`` of the plug-in cluster bootstrap.

    Resampling T clusters with replacement gives a variance of a cluster mean
    about ``(T - 1) / T`` of the cluster-level variance (the plug-in bias);
    multiplying by ``T / (T - 1)`` removes it (docs/sensitivity.md, "Small-cluster
    correction"; the CR1 factor of cluster-robust variances).  NaN below 2 units.
    """
    return float(n_units) / (n_units - 1) if n_units >= 2 else float("nan")


def _boot_columns(g: pd.DataFrame, full: dict[str, Any], kk: float,
                  n_units: int) -> dict[str, float]:
    """Cluster-bootstrap N* beside the model-based N* x DE (small-cluster corrected)."""
    est = g["estimate"].to_numpy(float)
    est = est[np.isfinite(est)]
    raw = float(np.var(est, ddof=1)) if est.size > 1 else float("nan")
    var_boot = raw * small_cluster_factor(n_units)
    # numpy floats: an estimate of exactly 0 (or no spread) gives N* = inf, not a
    # ZeroDivisionError (docs/hardening.md §6: N* of a vanishing difference is inf)
    iid = np.float64(full["sigma_d"]) ** 2 * full["weight_factor"] / full["n"]
    delta2 = np.float64(full["estimate"]) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return dict(variance_bootstrap=var_boot, variance_bootstrap_raw=raw,
                    variance_ratio_bootstrap=var_boot / iid,
                    design_effect_bootstrap=var_boot / iid,     # former name: one release
                    n_star_cluster=kk * full["n"] * max(full["std_error"] ** 2, iid) / delta2,
                    n_star_bootstrap=kk * full["n"] * var_boot / delta2)


def _random_columns(g: pd.DataFrame, full: dict[str, Any]) -> dict[str, float]:
    """The random-clustering null: where the fit's own variance ratio falls in it."""
    de = g["variance_ratio"].to_numpy(float)
    de = de[np.isfinite(de)]
    mean, median = float(np.mean(de)), float(np.median(de))
    return dict(variance_ratio_mean=mean, variance_ratio_median=median,
                design_effect_mean=mean, design_effect_median=median,   # former names
                p_value=float((1 + np.sum(de >= full["variance_ratio"])) / (1 + de.size)))


def stability(table: pd.DataFrame, *, level: float = 0.95) -> pd.DataFrame:
    """Per pair and check: how often the replicates keep the full fit's verdict.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`mixrank.design.sensitivity.sensitivity_of` (not modified).
    level : float, default 0.95
        Coverage of the replicate quantile interval of the estimate.

    Returns
    -------
    pandas.DataFrame
        One row per (kind, label group, pair): ``kind``, ``grouping`` (the
        unit for loso / bootstrap, the grouping's name or ``"random"``),
        ``model_a, model_b``, ``replicates`` (fitted), ``failed`` (could not
        be fitted), ``estimate``, ``q_cluster``, ``resolved_cluster``,
        ``variance_ratio`` (the full fit's), ``stability`` (share of fitted
        replicates whose clustered verdict equals the full fit's),
        ``share_resolved``, ``share_resolved_cluster``, ``share_same_sign``,
        ``ci_lower, ci_upper, level`` (replicate quantiles of the estimate),
        ``q_cluster_median``, ``q_cluster_min``, ``q_cluster_max``; for the
        bootstrap also ``variance_bootstrap`` (the replicates' variance of the
        estimate times the small-cluster factor ``T / (T - 1)``),
        ``variance_bootstrap_raw`` (uncorrected), ``variance_ratio_bootstrap``,
        ``n_star_cluster`` (``N* DE``, model-based) and ``n_star_bootstrap``
        (``K n Var_boot(estimate) / delta^2``, the item-level cluster-bootstrap
        N*); for random clusterings ``variance_ratio_mean``,
        ``variance_ratio_median`` and ``p_value`` (share of random
        clusterings with a variance ratio at least the fit's, ``(1 + #) / (1 +
        R)``).  Columns that do not apply are NaN.  Each ``variance_ratio*``
        column is also given under its former name ``design_effect*`` for one
        release (removed in the next).

    Raises
    ------
    DesignError
        A table without the sensitivity metadata.

    Notes
    -----
    ``K = (z_{1-alpha/2} + z_{1-beta})^2`` at the table's alpha and power.
    The bootstrap variance of a mean of T resampled clusters is about
    ``(T - 1) / T`` of the cluster-level variance (the plug-in bootstrap);
    ``variance_bootstrap`` and ``n_star_bootstrap`` carry the correction
    :func:`small_cluster_factor` (docs/sensitivity.md, "Small-cluster
    correction").  Validated by the tests of
    :func:`~mixrank.design.sensitivity.sensitivity_of` (balanced: ratio 1 to the
    model; 12 unequal clusters: variance ratio to the true variance 1 within
    Monte Carlo error).
    """
    meta = table.attrs.get("mixrank", {})
    if meta.get("table") != "sensitivity":
        raise DesignError("stability() needs the table of FitResult.sensitivity() (its "
                          "attrs['mixrank'] carry the full fit); received another table.")
    from scipy import stats

    kk = float((stats.norm.ppf(1 - meta["alpha"] / 2) + stats.norm.ppf(meta["power"])) ** 2)
    full = {(r["model_a"], r["model_b"]): r for r in meta["full"]}
    lo, hi = (1 - level) / 2, 1 - (1 - level) / 2
    # without the metadata: pandas deep-copies attrs into every slice of the groups
    plain = pd.DataFrame({c: table[c].to_numpy() for c in table.columns})
    group = np.where(plain["label"].isin(["draw"]) | (plain["kind"] == "loso"), meta["unit"],
                     plain["label"])
    rows = []
    for (kind, grouping, a, b), g in plain.assign(grouping=group).groupby(
            ["kind", "grouping", "model_a", "model_b"], sort=False):
        f = full[(a, b)]
        ok = g[g["fitted"]]
        est = ok["estimate"].to_numpy(float)
        row: dict[str, Any] = dict(
            kind=kind, grouping=grouping, model_a=a, model_b=b, replicates=len(ok),
            failed=int(len(g) - len(ok)), estimate=f["estimate"], q_cluster=f["q_cluster"],
            resolved_cluster=bool(f["resolved_cluster"]), variance_ratio=f["variance_ratio"],
            design_effect=f["variance_ratio"],     # former name of variance_ratio: one release
            stability=float(np.mean(ok["resolved_cluster"] == f["resolved_cluster"]))
            if len(ok) else float("nan"),
            share_resolved=float(ok["resolved"].mean()) if len(ok) else float("nan"),
            share_resolved_cluster=float(ok["resolved_cluster"].mean()) if len(ok)
            else float("nan"),
            share_same_sign=float(ok["same_sign"].mean()) if len(ok) else float("nan"),
            ci_lower=float(np.quantile(est, lo)) if est.size else float("nan"),
            ci_upper=float(np.quantile(est, hi)) if est.size else float("nan"), level=level,
            q_cluster_median=float(ok["q_cluster"].median()), q_cluster_min=float(
                ok["q_cluster"].min()), q_cluster_max=float(ok["q_cluster"].max()))
        if kind == "bootstrap":
            row.update(_boot_columns(ok, f, kk, int(meta.get("n_units", 0))))
        if grouping == "random" and kind == "clusterings":
            row.update(_random_columns(ok, f))
        rows.append(row)
    return tidy(pd.DataFrame(rows), **{k: v for k, v in meta.items() if k != "full"},
                summary="stability")
