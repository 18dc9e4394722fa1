"""Stage arena/fitting: the clustered and the judge-corrected paths of :func:`mixrank.arena`.

Inputs: encoded battles, their pattern counts and the BT fit (clustered
path); the battle log with a human winner column and judge columns (judged
path).
Outputs: a clustered covariance with per-pair / per-score df
(:func:`clustered`); an :class:`~mixrank.arena.result.ArenaResult` of the
prediction-powered BT fit with its :class:`~mixrank.arena.judged.JudgeInfo`
(:func:`judged_arena`); :func:`with_position` and :func:`check_rng`.
Contents (docs/arena.md §4 "Clusters", §8).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from mixrank.arena.clusters import (
    MAX_BM_CLUSTERS,
    MAX_CR2_SIZE,
    battle_rows,
    cluster_codes,
    clusters_per_pair,
    cr2,
)
from mixrank.arena.data import Battles, Patterns, encode_battles, patterns
from mixrank.arena.estimate import BTFit, check_graph, pad, sandwich
from mixrank.arena.judged import (
    JudgeInfo,
    diagnostics,
    judge_columns,
    judge_outcomes,
    leaderboards,
)
from mixrank.arena.ppi import design, design_rows, fit_ppbt
from mixrank.arena.result import ArenaResult, check_rng
from mixrank.errors import DataError, OptionError, SmallSampleWarning

__all__ = ["clustered", "judged_arena", "with_position", "check_rng", "MIN_CLUSTERS",
           "thin_sandwich", "MIN_DECISIVE"]

#: Fewer clusters touching a pair than this: a SmallSampleWarning.
MIN_CLUSTERS = 20
#: A model needs decisive (non-tie) battles in at least this many clusters (battles, unclustered)
#: for a sandwich variance; below it the sandwich is degenerate (:func:`thin_sandwich`).
MIN_DECISIVE = 3
#: Largest battles x parameters for which CR2 forms the per-battle design (160 MB); above: CR1.
MAX_DENSE = 20_000_000


def with_position(bt: Battles) -> Battles:
    """Add the first-position (home advantage) term: a covariate difference of 1 (a minus b)."""
    if "position" in bt.features:
        raise DataError("position=True adds the term 'position'; the formula already has a "
                        "feature of that name: rename it")
    return replace(bt, x=np.column_stack([bt.x, np.ones(bt.n)]),
                   features=bt.features + ("position",))


def thin_sandwich(bt: Battles, ties: str) -> list[str]:
    """Models whose decisive battles fall in fewer than :data:`MIN_DECISIVE` clusters (or
    than the clusters their battles touch, when those are fewer).

    With ``ties="half"`` a tie scores 0.5 for each side, so near a fitted 50 % it leaves no
    residual: a sandwich variance of a model whose battles are (almost) all ties rests on the
    one or two clusters holding its decisive battles and collapses towards 0 (a log of ties
    only gives SE 0).  Davidson's model has a tie category with its own variance: never thin.
    """
    if ties == "davidson":
        return []
    cl = np.arange(bt.n) if bt.cluster is None else cluster_codes(bt.cluster)

    G = int(cl.max(initial=-1)) + 1

    def clusters(rows: np.ndarray) -> np.ndarray:
        seen = np.zeros(len(bt.models) * G, dtype=bool)          # (model, cluster) met
        c = cl[rows]
        seen[bt.a[rows] * G + c] = True
        seen[bt.b[rows] * G + c] = True
        return seen.reshape(len(bt.models), G).sum(axis=1)

    have = clusters(bt.outcome != 0.5)
    if have.min(initial=MIN_DECISIVE) >= MIN_DECISIVE:
        return []                                  # enough clusters whatever they touch
    # fewer clusters altogether is the cluster checks' business (_check_clusters)
    need = np.minimum(MIN_DECISIVE, clusters(np.ones(bt.n, dtype=bool)))
    return [m for m, n, k in zip(bt.models, have, need) if n < k]


def _combinations(K: int, p: int) -> np.ndarray:
    """(P-1, m) free-parameter combinations: pairs i<j, centred scores, covariates."""
    ia, ib = np.triu_indices(K, 1)
    P = K + p
    L = np.zeros((P, ia.size + K + p))
    L[ia, np.arange(ia.size)] = 1.0
    L[ib, np.arange(ia.size)] -= 1.0
    L[:K, ia.size:ia.size + K] = np.eye(K) - 1.0 / K
    L[K:, ia.size + K:] = np.eye(p)
    return L[1:]


def _check_clusters(cl: np.ndarray, bt: Battles, name: str | None) -> np.ndarray:
    """Refuse one cluster, warn at two or at fewer than 20 per pair; (K, K) clusters per pair."""
    G = int(cl.max()) + 1
    if G == 1:
        raise DataError(f"cluster column {name!r} has a single value: a clustered sandwich needs "
                        "at least two clusters (and 20+ per pair to be trusted). Pass "
                        "cluster=False, or a column that varies between battles")
    K = len(bt.models)
    cpp = clusters_per_pair(bt.a, bt.b, cl, K)
    ia, ib = np.triu_indices(K, 1)
    low = int(np.argmin(cpp[ia, ib]))
    if G == 2:
        warnings.warn(f"cluster column {name!r} has 2 values: the clustered sandwich has rank one "
                      "and its p-values are meaningless; use cluster=False or a finer grouping",
                      SmallSampleWarning, stacklevel=4)
    elif cpp[ia[low], ib[low]] < MIN_CLUSTERS:
        m = bt.models
        warnings.warn(f"only {int(cpp[ia[low], ib[low]])} clusters of {name!r} hold battles of "
                      f"{m[ia[low]]!r} or {m[ib[low]]!r} (fewer than {MIN_CLUSTERS}): its "
                      "clustered interval rests on few clusters (t reference with "
                      "Bell-McCaffrey df)", SmallSampleWarning, stacklevel=4)
    return cpp


def clustered(bt: Battles, pt: Patterns, fit: BTFit
              ) -> tuple[np.ndarray, dict[str, np.ndarray], str]:
    """Clustered covariance: CR2 with Bell-McCaffrey df, or CR1 with df = clusters - 1.

    CR1 (``G/(G-1)``) is used for Davidson ties and for clusters larger than
    :data:`MAX_CR2_SIZE` battles.
    """
    assert bt.cluster is not None
    cl = cluster_codes(bt.cluster)
    cpp = _check_clusters(cl, bt, bt.cluster_name)
    K, p = len(bt.models), fit.n_features
    G = int(cl.max()) + 1
    biggest = int(np.bincount(cl).max())
    if fit.ties == "davidson" or biggest > MAX_CR2_SIZE or bt.n * (K + p) > MAX_DENSE:
        cov = sandwich(pt, fit, bt.outcome, cl)
        why = ("Davidson ties" if fit.ties == "davidson" else f"a cluster of {biggest} battles"
               if biggest > MAX_CR2_SIZE else f"{bt.n:,} battles x {K + p} parameters")
        dfs = dict(pairs=np.maximum(cpp - 1.0, 1.0), scores=np.full(K, G - 1.0),
                   covariates=np.full(p + (fit.ties == "davidson"), G - 1.0))
        return cov, dfs, (f"clustered sandwich CR1 ({why}), t reference with df = clusters "
                          "touching the pair - 1")
    Z = battle_rows(bt) if G > MAX_BM_CLUSTERS else design(bt)    # no df: non-zeros only
    mu = _win_probability(Z, fit.theta[1:])
    if G > MAX_BM_CLUSTERS:
        cov_free, _ = cr2(Z, mu, bt.outcome - mu, cl)
        dfs = dict(pairs=np.maximum(cpp - 1.0, 1.0), scores=np.full(K, G - 1.0),
                   covariates=np.full(p, G - 1.0))
        return pad(cov_free), dfs, (f"clustered sandwich CR2 (small-sample adjusted), t "
                                    f"reference with df = clusters touching the pair - 1 ({G:,} "
                                    "clusters)")
    cov_free, df = cr2(Z, mu, bt.outcome - mu, cl, _combinations(K, p))
    assert df is not None
    ia, ib = np.triu_indices(K, 1)
    pairs = np.full((K, K), np.inf)
    pairs[ia, ib] = pairs[ib, ia] = df[:ia.size]
    dfs = dict(pairs=pairs, scores=df[ia.size:ia.size + K], covariates=df[ia.size + K:])
    return pad(cov_free), dfs, ("clustered sandwich CR2 (small-sample adjusted), t reference "
                                "with Bell-McCaffrey df per contrast")


def _win_probability(Z: Any, theta: np.ndarray) -> np.ndarray:
    """Fitted P(a wins) battle by battle; for :func:`battle_rows` without covariates from the
    pairs' table (the same numbers: an element-wise map of the same differences)."""
    if getattr(Z, "pair", None) is not None:
        s = np.r_[0.0, theta]
        return (0.5 * (1.0 + np.tanh(0.5 * (s[:, None] - s[None, :])))).ravel()[Z.pair]
    return 0.5 * (1.0 + np.tanh(0.5 * (Z @ theta)))


def _lam(lam: Any, J: int) -> np.ndarray | None:
    if lam is None:
        return None
    v = np.atleast_1d(np.asarray(lam, dtype=object))
    ok = v.size == J and all(isinstance(x, (int, float, np.integer, np.floating))
                             and not isinstance(x, bool) and 0 <= float(x) <= 1 for x in v)
    if not ok or float(np.sum(v.astype(float))) > 1 + 1e-12:
        raise OptionError(f"lam={lam!r}; expected {J} number(s) in [0, 1] (one per judge) with "
                          "sum at most 1, or None to tune them")
    return v.astype(float)


def judged_arena(df: pd.DataFrame, *, judge: Any, lam: Any, ties: str, prior: float, winner: str,
                 terms: Any, cl_name: str | None, detected: bool, se_: str, level: float,
                 model_a: str, model_b: str, position: bool, scale: str,
                 refit: Callable[..., ArenaResult]) -> ArenaResult:
    """Prediction-powered BT (docs/arena.md §8): the ``judge=`` path of :func:`mixrank.arena`.

    ``refit`` is :func:`mixrank.arena` itself, for the diagnostics' and the
    side-by-side boards' ordinary BT fits.
    """
    arena = refit
    judges = judge_columns(judge, df.columns, winner)
    if ties != "half":
        raise OptionError(f"judge= with ties={ties!r}: the judge correction scores a tie as half "
                          "a win for each side, for humans and judges alike (ties='half')")
    if prior:
        raise OptionError("judge= with prior > 0 is not available: the rectified loss has no "
                          "pseudo-battles; drop prior=")
    if se_ != "sandwich":
        raise OptionError(f"judge= with se={se_!r}: the prediction-powered fit has a sandwich "
                          "covariance only; drop se= (or pass se='sandwich')")
    lam_ = _lam(lam, len(judges))
    if winner not in df.columns:
        raise DataError(f"the battle log has no column {winner!r} (the human votes; missing "
                        "where a battle is unlabelled)")
    labelled = df[winner].notna().to_numpy()
    yhat = judge_outcomes(df, judges, np.ones(len(df), dtype=bool))
    enc = df.copy()
    enc.loc[~labelled, winner] = enc.loc[~labelled, judges[0]]
    bt = encode_battles(enc, winner=winner, terms=terms, ties=ties, cluster=cl_name,
                        model_a=model_a, model_b=model_b)
    if position:
        bt = with_position(bt)
    y = np.where(labelled, bt.outcome, np.nan)
    cl = None if bt.cluster is None else pd.factorize(bt.cluster)[0]
    check_graph(patterns(bt), bt.models, "half", finite=False)
    lab_bt = replace(bt, a=bt.a[labelled], b=bt.b[labelled], outcome=bt.outcome[labelled],
                     x=bt.x[labelled], cluster=None)
    if not labelled.any() or len(set(lab_bt.a) | set(lab_bt.b)) < len(bt.models):
        seen = set(lab_bt.a) | set(lab_bt.b)
        miss = [m for i, m in enumerate(bt.models) if i not in seen]
        raise DataError(f"model(s) {miss} have no human-labelled battle; the correction needs "
                        "labelled battles of every model (label some of theirs, or drop them)")
    try:
        check_graph(patterns(lab_bt), bt.models, "half", finite=False)
    except DataError as exc:
        raise DataError(f"among the human-labelled battles, {exc}") from None
    try:
        pp = fit_ppbt(design_rows(bt), y, yhat, lam=lam_, cluster=cl)
    except np.linalg.LinAlgError:
        raise DataError("the prediction-powered fit is not identified on these battles (too "
                        "few labelled battles per model, or a covariate/position term that "
                        "does not vary); label more battles") from None
    K, p = len(bt.models), bt.x.shape[1]
    sub = replace(bt, a=bt.a[labelled], b=bt.b[labelled], outcome=bt.outcome[labelled],
                  x=bt.x[labelled], cluster=None if bt.cluster is None
                  else bt.cluster[labelled])
    pt = patterns(sub)
    fit = BTFit(theta=pp.theta, n_models=K, n_features=p, ties="half", info=pp.info,
                loglik=float("nan"), iterations=0)
    dfs = None
    notes = [f"prediction-powered BT: {pp.n_labelled:,} human-labelled and {pp.n_unlabelled:,} "
             f"judge-only battles; lam = " + ", ".join(f"{j} {v:.3g}" for j, v in
                                                        zip(judges, pp.lam))]
    if cl is not None:
        cpp = _check_clusters(cl, bt, cl_name)
        G = int(cl.max()) + 1
        dfs = dict(pairs=np.maximum(cpp - 1.0, 1.0), scores=np.full(K, G - 1.0),
                   covariates=np.full(p, G - 1.0))
        notes.append(f"clustered by {cl_name!r}" + (" (detected)" if detected else "")
                     + ": CR1 sandwich of the rectified scores, t with df = clusters - 1")
    res = ArenaResult(battles=sub, counts=pt, fit=fit, cov=pp.cov, se="sandwich", ties="half",
                      level=level, formula=f"{winner} ~ " + (" + ".join(f for f in
                      bt.features) or "1") + f" | judge: {', '.join(judges)}", prior=0.0,
                      notes=tuple(notes), dfs=dfs, scale=scale, cluster_detected=detected)

    def fit_one(frame: pd.DataFrame, col: str) -> ArenaResult:
        return arena(frame.reset_index(drop=True), f"{col} ~ 1", position=True, cluster=False,
                     model_a=model_a, model_b=model_b, level=level)

    diag, agree = diagnostics(df, winner=winner, judges=judges, lam=pp.lam, labelled=labelled,
                              fit_one=fit_one, level=level, models=bt.models, model_a=model_a,
                              model_b=model_b)
    clu: Any = cl_name if cl_name is not None else False

    def boards() -> pd.DataFrame:
        tabs = {"human_only": arena(df[labelled].reset_index(drop=True), f"{winner} ~ 1",
                                    cluster=clu, model_a=model_a, model_b=model_b, level=level,
                                    scale=scale).model_scores()}
        for j in judges:
            tabs[f"judge_only_{j}"] = arena(df, f"{j} ~ 1", cluster=clu, model_a=model_a,
                                            model_b=model_b, level=level,
                                            scale=scale).model_scores()
        tabs["corrected"] = res.model_scores()
        return leaderboards(tabs)

    info_ = JudgeInfo(judges=judges, lam=pp.lam, n_labelled=pp.n_labelled,
                      n_unlabelled=pp.n_unlabelled, diagnostics=diag, agreement=agree,
                      make_boards=boards)
    return replace(res, judge=info_)
