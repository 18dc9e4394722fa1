"""Stage inference: family-wise answers for the pairwise contrasts of a fit.

Inputs: a :class:`~mixrank.results.FitResult` and its contrasts table.
Outputs: the table with ``p_adjusted`` (Holm, BH or single-step max-t across
the pairs shown) and, for max-t, simultaneous confidence intervals
(:func:`adjust_contrasts`); the distribution of each model's rank from the
same Gaussian draws (:func:`rank_probabilities_of`).  Contents:
:data:`ADJUST`, :func:`adjust_contrasts`, :func:`contrast_draws`,
:func:`rank_probabilities_of`.

Draws (docs/model_scores.md §3-§4): ``Z ~ N(0, R)`` with ``R`` the correlation
of the joint covariance of all contrasts
(:func:`mixrank.inference.joint.contrast_covariance`); each contrast keeps
its own reference distribution (t with its df) through the Gaussian copula
``T_h = F_{t,df_h}^-1(Phi(Z_h))``, as the max-t rank intervals of
:mod:`mixrank.inference.ranks.maxt`; pairs with few df (crossed designs with
Satterthwaite df) get multivariate-t draws instead (:mod:`mixrank.inference.mvt`).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from mixrank._deprecate import former_names
from mixrank._util import as_rng, check_max_draws, tidy
from mixrank.engine.parallel import blas_controller
from mixrank.engine.records import missing_pairs
from mixrank.errors import DataError, DesignError
from mixrank.inference.joint import contrast_covariance
from mixrank.inference.multiplicity import adjust as adjust_p
from mixrank.inference.multiplicity import adjust_values
from mixrank.inference.multiplicity import check_adjust as _check_adjust
from mixrank.inference.mvt import DF_SHARED, normal_scores, small_df
from mixrank.inference.randomization import (
    flip_draws,
    own_contributions,
    randomization_maxt,
    scaled_stepdown,
)

__all__ = ["ADJUST", "adjust_contrasts", "contrast_draws", "rank_probabilities_of"]

#: Adjustments of ``FitResult.contrasts(adjust=...)``.
ADJUST = adjust_values("contrasts")
_CHUNK = 2048


def check_adjust(adjust: Any, where: str = "FitResult.contrasts") -> str:
    return str(_check_adjust(adjust, "contrasts", where=where))


def check_draws(B: Any) -> int:
    ok = isinstance(B, (int, np.integer)) and not isinstance(B, bool) and int(B) >= 1000
    if not ok:
        raise DesignError(f"draws={B!r} is not a usable number of draws; expected an integer "
                          ">= 1000 (default 10000)")
    check_max_draws("draws", B, DesignError)
    return int(B)


def _live(fit: Any) -> np.ndarray:
    """Pairs with a variance and df (degenerate fits, variance 0, are left out of the draws)."""
    return np.array([p.variance > 0 and np.isfinite(p.variance) and p.df > 0
                     for p in _pairs(fit)], dtype=bool)


def _pairs(fit: Any) -> tuple:
    """The fit's pairs with the variance and df of its df method."""
    return fit.inference_pairs() if hasattr(fit, "inference_pairs") else fit.pairs


def randomized(fit: Any) -> bool:
    """True when the fit's family-wise answers come from unit sign flips (``df="cr2"``, or a
    source with its own ``unit_contributions()`` such as the binomial GLMM's)."""
    return (getattr(fit, "df_method", "satterthwaite") == "cr2"
            or own_contributions(fit))


def _correlation(fit: Any) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    own = getattr(fit, "contrast_covariance", None)   # e.g. judge-corrected fits (PPI++)
    cov, info = own() if callable(own) else contrast_covariance(
        fit.frame, _pairs(fit), method=fit.method, estimand=fit.estimand)
    live = _live(fit)
    sd = np.sqrt(np.diag(cov)[live])
    return cov[np.ix_(live, live)] / np.outer(sd, sd), live, info


def _gaussian(gen: np.random.Generator, shape: tuple[int, int], root: np.ndarray) -> np.ndarray:
    """One draw of ``N(0, root root')`` of ``shape`` (rows x columns of ``root``)."""
    return gen.standard_normal(shape) @ root.T


def contrast_draws(fit: Any, *, B: int, rng: Any) -> tuple[Iterator[np.ndarray], np.ndarray,
                                                           dict[str, Any]]:
    """Chunks of null draws on the normal score scale (B rows in all), one column per pair
    with a variance.

    ``Z ~ N(0, R)`` with ``R`` the correlation of
    :func:`~mixrank.inference.joint.contrast_covariance` over the pairs flagged in
    the returned boolean mask (pair order; pairs without a variance, degenerate
    fits, are constants and have no column); pairs with fewer than
    :data:`~mixrank.inference.mvt.DF_SHARED` df get multivariate-t draws mapped
    to the normal scale (:func:`mixrank.inference.mvt.normal_scores`).  Equal
    ``B`` and ``rng`` give the same draws in every caller.
    """
    R, live, info = _correlation(fit)
    w, U = np.linalg.eigh(R) if len(R) else (np.zeros(0), np.zeros((0, 0)))
    root = U * np.sqrt(np.clip(w, 0.0, None))
    gen = as_rng(rng)
    df = np.array([p.df for p in _pairs(fit)], dtype=float)[live]
    small = bool(small_df(df).any())

    def chunks() -> Iterator[np.ndarray]:
        done = 0
        while done < B:
            b = min(_CHUNK, B - done)
            z = gen.standard_normal((b, R.shape[0])) @ root.T
            if small:   # multivariate-t draws for the pairs with few df (mvt.py)
                z = normal_scores(z, df, partial(_gaussian, gen, (b, R.shape[0]), root), gen)
            yield z
            done += b

    ref = ("multivariate t at the pairs' df (shared-correlation variance estimates) below "
           f"{DF_SHARED:g} df, Gaussian copula above" if small
           else "Gaussian copula of the pairs' t distributions")
    return chunks(), live, dict(info, B=B, reference=ref)


def _maxt(fit: Any, tab: pd.DataFrame, level: float, B: int, rng: Any) -> dict[str, Any]:
    """Single-step max-|T| adjusted p-values and simultaneous CIs, in place on ``tab``."""
    if len(tab) != len(fit.pairs):
        raise DesignError("adjust='maxt' needs the contrasts of every fitted pair")
    draws, live, info = contrast_draws(fit, B=B, rng=rng)
    mx = np.concatenate([np.max(np.abs(z), axis=1) if z.shape[1] else np.zeros(len(z))
                         for z in draws])
    p = tab["p_value"].to_numpy(dtype=float)
    z_obs = -special.ndtri(np.clip(p / 2.0, 1e-300, 0.5))      # |Z| with the same tail as |t|
    mx.sort()
    exceed = len(mx) - np.searchsorted(mx, z_obs, side="left")
    adj = np.where(np.isfinite(p), np.minimum(1.0, exceed / len(mx)), np.nan)
    tab["p_adjusted"] = np.where(live, adj, tab["p_value"])   # no variance: p stays as reported
    c = float(np.quantile(mx, level))
    q = stats.t.ppf(special.ndtr(c), tab["df"].to_numpy(dtype=float))
    se = tab["std_error"].to_numpy(dtype=float)
    tab["ci_lower"] = np.where(live, tab["estimate"] - q * se, tab["ci_lower"])
    tab["ci_upper"] = np.where(live, tab["estimate"] + q * se, tab["ci_upper"])
    return dict(info, critical_value_normal=c, ci="simultaneous (max-t)",
                p_adjusted="single-step max-t over the pairs shown",
                mc_se_of_p=f"<= {0.5 / np.sqrt(B):.2g}")


def _randomization(fit: Any, tab: pd.DataFrame, level: float, B: int, rng: Any,
                   stepdown: bool) -> dict[str, Any]:
    """Randomization (unit sign-flip) max-t or step-down, in place on ``tab``."""
    if len(tab) != len(fit.pairs):
        raise DesignError(f"adjust={'stepdown' if stepdown else 'maxt'!r} needs the contrasts "
                          "of every fitted pair")
    # A source with its own contributions (the binomial GLMM's score flips) has no
    # within-unit scale: its step-down flips the studentized statistic (docs/glmm.md §12).
    scaled = stepdown and not own_contributions(fit)
    r = (scaled_stepdown(fit, B=B, rng=rng) if scaled
         else randomization_maxt(fit, level=level, B=B, rng=rng, stepdown=stepdown))
    p = tab["p_value"].to_numpy(dtype=float)
    live = r["live"] & np.isfinite(p)
    # a linear fit's step-down rejection also needs the pair's own test: p_adjusted >= p_value
    # (already so when p_value is the pair's flip test, the step-down's first step; with
    # ci="t" the t p-value could sit above it; docs/methods.md §9).  Not the GLMM's: its
    # t(T - 1) reference is conservative at few units (docs/glmm.md §12)
    tab["p_adjusted"] = np.where(live, np.maximum(r["p_adjusted"], p) if scaled
                                 else r["p_adjusted"], p)
    meta = dict(flips=r["flips"], exact=r["exact"], unit=r["unit"], n_units=r["n_units"],
                mc_se_of_p="0 (all flips)" if r["exact"] else f"<= {0.5 / np.sqrt(B):.2g}",
                assumes="unit effects exchangeable and symmetric about 0 under the null")
    if scaled:
        return dict(meta, ci="marginal", p_adjusted="randomization step-down max-T "
                    "(Westfall-Young) over unit sign flips of the pairs' totals, each scaled "
                    "by its within-unit SE (flip-invariant)")
    if stepdown:
        return dict(meta, ci="marginal", p_adjusted="randomization step-down max-t "
                    "(Westfall-Young) over unit sign flips of the studentized contrasts")
    c = r["critical_value"]
    se = r["std_error"]
    est = tab["estimate"].to_numpy(dtype=float)
    tab["ci_lower"] = np.where(live, est - c * se, tab["ci_lower"])
    tab["ci_upper"] = np.where(live, est + c * se, tab["ci_upper"])
    return dict(meta, critical_value_t=c, ci="simultaneous (randomization max-t)",
                p_adjusted="single-step randomization max-t over unit sign flips")


def adjust_contrasts(fit: Any, tab: pd.DataFrame, *, adjust: str, level: float, B: int,
                     rng: Any) -> pd.DataFrame:
    """Add ``p_adjusted`` after ``p_value`` (and simultaneous CIs for ``maxt``).

    The family is the rows of ``tab`` with a finite p-value; other rows get
    NaN.  Metadata (``adjust``, ``family_size``, ``ci``) go to
    ``attrs["mixrank"]``.
    """
    how = check_adjust(adjust)
    out = tab.copy()
    out.attrs = {"mixrank": dict(tab.attrs.get("mixrank", {}))}
    p = out["p_value"].to_numpy(dtype=float)
    ok = np.isfinite(p)
    meta: dict[str, Any] = dict(adjust=how, family_size=int(ok.sum()), ci="marginal")
    if how == "stepdown" and not randomized(fit):
        raise DesignError("adjust='stepdown' is the randomization step-down over unit sign "
                          "flips; it needs fit(df='cr2') (the default with a unit of at least "
                          f"3 levels); this fit uses df={getattr(fit, 'df_method', None)!r}. Use "
                          "adjust='holm' or 'maxt'.")
    if how in ("maxt", "stepdown") and randomized(fit):
        out.insert(int(out.columns.get_loc("p_value")) + 1, "p_adjusted", np.nan)
        meta.update(_randomization(fit, out, level, check_draws(B), rng, how == "stepdown"))
    elif how == "maxt":
        out.insert(int(out.columns.get_loc("p_value")) + 1, "p_adjusted", np.nan)
        with blas_controller().limit(limits=1, user_api="blas"):   # small matrices: threads only contend (10x slower)
            meta.update(_maxt(fit, out, level, check_draws(B), rng))
    else:
        adj = np.full(len(p), np.nan)
        if how == "none":
            adj[ok] = p[ok]
        elif ok.any():
            adj[ok] = adjust_p(p[ok], how)
        out.insert(int(out.columns.get_loc("p_value")) + 1, "p_adjusted", adj)
    out.attrs["mixrank"].update(meta)
    return out


def rank_probabilities_of(fit: Any, *, B: int = 10000, rng: Any = None) -> pd.DataFrame:
    """P(rank = r) and P(best) per model from the max-t draws of the contrasts.

    See :meth:`mixrank.results.FitResult.rank_probabilities`.
    """
    B = check_draws(B)
    models = list(fit.models)
    M = len(models)
    if M < 2:
        raise DataError(f"rank probabilities need at least two models; the fit has {models}")
    if missing_pairs(fit.pairs, models):
        raise DataError("rank probabilities need every pair of models fitted; refit with "
                        "pairs=None (pairs without common cells cannot be ranked)")
    pos = {m: i for i, m in enumerate(models)}
    pairs = _pairs(fit)
    a = np.array([pos[p.model_a] for p in pairs])
    b = np.array([pos[p.model_b] for p in pairs])
    counts = np.zeros((M, M))
    for d in _rank_draws(fit, pairs, B, rng):
        beaten = np.zeros((d.shape[0], M), dtype=np.int64)     # models that beat each model
        np.add.at(beaten.T, b, (d > 0).T)
        np.add.at(beaten.T, a, (d < 0).T)
        for j in range(M):
            counts[j] += np.bincount(beaten[:, j], minlength=M)[:M]
    prob = counts / counts[0].sum()
    scores = fit.model_scores().set_index("model")["estimate"]
    rows = [dict(model=m, rank=r + 1, probability=prob[j, r], p_best=prob[j, 0])
            for j, m in sorted(enumerate(models), key=lambda t: (-scores[t[1]], t[1]))
            for r in range(M)]
    return tidy(rows, table="rank_probabilities", formula=fit.frame.spec.formula,
                method=fit.method, estimand=fit.estimand, engine=fit.engine,
                draws=int(counts[0].sum()), df_method=getattr(fit, "df_label", "satterthwaite"),
                draw_method="Rademacher sign flips of the units' CR2 residual totals (all "
                "flips when the unit has at most 14 levels)" if randomized(fit) else
                "Gaussian copula of the contrasts' t distributions (multivariate t below "
                f"{DF_SHARED:g} df)",
                rank="1 + number of models whose contrast draw is above this model's",
                no_model_beats_all=float(1.0 - prob[:, 0].sum()))


def _rank_draws(fit: Any, pairs: tuple, B: int, rng: Any) -> Iterator[np.ndarray]:
    """Chunks of joint draws of all contrasts ``model_a - model_b`` (draws x pairs)."""
    if randomized(fit):
        chunks, _, _ = flip_draws(fit, B=B, rng=rng)
        yield from chunks
        return
    est = np.array([p.estimate for p in pairs])
    se = np.array([p.std_error for p in pairs])
    df = np.array([p.df for p in pairs])
    with blas_controller().limit(limits=1, user_api="blas"):   # small matrices: threads only contend (10x slower)
        draws, live, _ = contrast_draws(fit, B=B, rng=rng)
        chunks_g = list(draws)
    for z in chunks_g:
        d = np.tile(est, (len(z), 1))
        d[:, live] += se[live] * special.stdtrit(df[live], special.ndtr(z))
        yield d


#: Former names (``X_fit`` meant "computed from a fit"; ``X_of(fit)`` now): one release.
__getattr__ = former_names('mixrank.inference.simultaneous', {'rank_probabilities_fit': 'rank_probabilities_of'}, globals())
