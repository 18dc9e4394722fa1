"""The valid defaults at group-by speed: two default paths, each timed against one
pandas group-by over the same rows and checked equal to the exact computation.

    python benchmarks/bench_defaults.py                 # both (~1 min idle)
    python benchmarks/bench_defaults.py --only crossed  # or --only arena

1. ``crossed``: 15 models x 57 subjects x 100 questions x 100 prompts, each model missing
   20% of its cells (6.84M rows), ``correct ~ model + (1|subject/question) + (1|prompt)``:
   ``mixrank.fit(formula, data)`` with the defaults (all 105 pairs, ``df="satterthwaite-vc"``
   chosen for the crossed prompts) against ``data.groupby([model, subject, question,
   prompt])["correct"].mean()`` (the cell table the fit reads).  Target <= 2x.  Check: every
   pair's (variance, df) equal to the exact computation, which counts each pair's levels with
   ``np.unique`` over its common cells and takes the same decision (docs/speed.md §8).
2. ``arena``: 1,000,000 battles x 20 models with a ``question`` column of 40,000 values (so
   the default clusters by it: CR2 over ~40,000 clusters of ~25 battles):
   ``mixrank.arena(log)`` + ``contrasts()`` + ``rank_intervals()`` against
   ``log.groupby([model_a, model_b, winner]).size()``.  Target <= 3x.  Check: the
   covariance equal to the exact CR2, ``(I - H_gg)^-1/2`` from an eigen-decomposition of
   every cluster's block (batched by cluster size), relative to its largest entry.  The
   same path with ``cluster=False`` is printed beside it for reference.

Both are the best of ``--repeats`` runs, the group-by and the fit alternating in one
process; the ratio is the figure (the machine may be shared).  ``bench_against.py`` times the
same two paths against a checkout of earlier code (bars ``crossed`` and ``arena``).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import big_design, machine  # noqa: E402
from bench_arena import battle_log  # noqa: E402

import mixrank  # noqa: E402

CROSSED = "correct ~ model + (1|subject/question) + (1|prompt)"
KEYS = ["model", "subject", "question", "prompt"]
TOL = 1e-10


def crossed_data() -> pd.DataFrame:
    """The 105-pair design less 20% of each model's cells (6.84M rows)."""
    return big_design(models=15, missing=0.2, seed=2)


def arena_log(n: int = 1_000_000, models: int = 20, questions: int = 40_000) -> pd.DataFrame:
    """``bench_arena``'s battle log with a ``question`` column (detected as the cluster)."""
    log = battle_log(n, models)
    log["question"] = np.random.default_rng(5).integers(0, questions, n)
    return log


def arena_run(log: pd.DataFrame, **kw):
    """The timed arena path: the fit, its contrasts and its rank intervals."""
    res = mixrank.arena(log, **kw)
    res.contrasts()
    res.rank_intervals()
    return res


def _best_pair(f, peer, repeats: int):
    """Best seconds of ``f`` and of ``peer``, called alternately; and ``f``'s last result."""
    tf, tp, out = np.inf, np.inf, None
    for _ in range(repeats):
        t = time.perf_counter()
        peer()
        tp = min(tp, time.perf_counter() - t)
        t = time.perf_counter()
        out = f()
        tf = min(tf, time.perf_counter() - t)
    return tf, tp, out


def crossed_reference(fit) -> list[tuple[float, float]]:
    """Each pair's (variance, df) by the exact computation: every level counted with
    ``np.unique`` over the pair's common cells, then the decision of docs/methods.md §9
    (:data:`MAX_LEVELS`, :data:`CHEAP_LEVELS`) and :func:`variance_df`."""
    from mixrank.engine.lmm.crossed_df import CHEAP_LEVELS, MAX_LEVELS, variance_df
    from mixrank.engine.lmm.estimand import estimand_weights

    frame = fit.frame
    names = list(frame.spec.term_names)
    out = []
    for p in fit.pairs:
        comps = dict(p.components)
        if p.degenerate or not np.isfinite(p.variance) or any(
                t not in comps for t in names) or "residual" not in comps:
            out.append((p.variance, p.df))
            continue
        j, k = frame.model_index(p.model_a), frame.model_index(p.model_b)
        both = frame.observed[:, j] & frame.observed[:, k]
        codes = [frame.term_codes[t][both] for t in names]
        psi = np.array([float(comps[t]) for t in names] + [float(comps["residual"])])
        levels = sum(int(np.unique(c).size) for c in codes)
        zero = bool(np.any(psi[:-1] <= 1e-10 * max(float(psi.sum()), 1e-300)))
        if levels > MAX_LEVELS or (levels > CHEAP_LEVELS and not zero):
            out.append((p.variance, p.df))
            continue
        _, df = variance_df(codes, psi, estimand_weights(fit.estimand, codes[0].size, codes[0]))
        out.append((p.variance, df if np.isfinite(df) else p.df))
    return out


def exact_cr2(res) -> np.ndarray:
    """The arena fit's CR2 covariance with every cluster's ``(I - H_gg)^-1/2`` from an
    eigen-decomposition (batched over the clusters of each size)."""
    from mixrank.arena.estimate import pad
    from mixrank.arena.ppi import design

    bt = res.battles
    Z = design(bt)
    mu = 0.5 * (1.0 + np.tanh(0.5 * (Z @ res.fit.theta[1:])))
    cl = pd.factorize(bt.cluster)[0]
    w = np.clip(mu * (1 - mu), 1e-12, None)
    sw = np.sqrt(w)
    Xt = Z * sw[:, None]
    B = np.linalg.inv(np.ascontiguousarray(Xt.T) @ Xt)
    r = (bt.outcome - mu) / sw
    order = np.argsort(cl, kind="stable")
    cs = cl[order]
    starts = np.flatnonzero(np.r_[True, cs[1:] != cs[:-1]])
    sizes = np.diff(np.r_[starts, cs.size])
    U = np.zeros((int(cl.max()) + 1, Z.shape[1]))
    for m in np.unique(sizes):
        idx = order[starts[sizes == m][:, None] + np.arange(m)[None, :]]
        X = Xt[idx]
        H = np.matmul(X @ B, np.swapaxes(X, 1, 2))
        lam, vec = np.linalg.eigh(np.eye(m)[None] - H)
        A = np.matmul(vec / np.sqrt(lam)[:, None, :], np.swapaxes(vec, 1, 2))
        U[cl[idx[:, 0]]] = np.matmul(np.swapaxes(X, 1, 2), np.matmul(A, r[idx][:, :, None]))[..., 0]
    return pad(B @ (U.T @ U) @ B)


def run_crossed(repeats: int, rows: list) -> None:
    d = crossed_data()
    gb = lambda: d.groupby(KEYS, observed=True)["correct"].mean()   # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mixrank.fit(CROSSED, d.iloc[::40])                  # imports and first-call costs
        t_fit, t_gb, fit = _best_pair(lambda: mixrank.fit(CROSSED, d), gb, repeats)
    assert fit.df_method == "satterthwaite-vc", fit.df_method
    ref = np.array(crossed_reference(fit))
    got = np.array(fit.inference)
    diff = float(np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)))
    ok = diff <= TOL
    print(f"crossed: fit {t_fit:.2f} s, group-by {t_gb:.2f} s -> {t_fit / t_gb:.2f}x (target <= "
          f"2x); {len(fit.pairs)} pairs' (variance, df) vs the exact computation: max relative "
          f"difference {diff:.1e} ({'equal' if ok else 'NOT EQUAL'} to {TOL:g})", flush=True)
    rows.append((f"crossed default: `{CROSSED}`, {len(d):,} rows, all {len(fit.pairs)} pairs "
                 "(df='satterthwaite-vc')", f"{t_fit:.2f} s",
                 f"one pandas group-by (cells' means) {t_gb:.2f} s",
                 f"{t_fit / t_gb:.2f}× (target ≤ 2×); equal to the exact computation "
                 f"({diff:.0e})"))
    if not ok:
        raise SystemExit("crossed: the numbers differ from the exact computation")


def run_arena(repeats: int, rows: list) -> None:
    log = arena_log()
    gb = lambda: log.groupby(["model_a", "model_b", "winner"]).size()   # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arena_run(log.iloc[::50])                            # imports and first-call costs
        t_fit, t_gb, res = _best_pair(lambda: arena_run(log), gb, repeats)
        t_plain, t_gb2, _ = _best_pair(lambda: arena_run(log, cluster=False), gb, repeats)
    assert res.battles.cluster_name == "question" and "CR2" in res.contrasts().attrs[
        "mixrank"]["df_method"]
    ref = exact_cr2(res)
    K = len(res.models)
    got = res.cov[:ref.shape[0], :ref.shape[1]]
    diff = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
    se = float(np.max(np.abs(np.sqrt(np.diag(got)[1:K]) / np.sqrt(np.diag(ref)[1:K]) - 1)))
    ok = diff <= TOL and se <= TOL
    G = res.battles.cluster.nunique() if hasattr(res.battles.cluster, "nunique") else len(
        np.unique(res.battles.cluster))
    print(f"arena: fit + contrasts + rank intervals {t_fit:.2f} s, group-by {t_gb:.2f} s -> "
          f"{t_fit / t_gb:.2f}x (target <= 3x); CR2 covariance vs the exact (eigen-decomposed) "
          f"CR2 over {G:,} clusters: max difference {diff:.1e} of its largest entry, SEs "
          f"{se:.1e} relative ({'equal' if ok else 'NOT EQUAL'} to {TOL:g}); for reference "
          f"cluster=False {t_plain:.2f} s -> {t_plain / t_gb2:.2f}x", flush=True)
    rows.append((f"clustered arena default: {len(log):,} battles × {K} models, {G:,} question "
                 "clusters (CR2): fit + contrasts + rank intervals", f"{t_fit:.2f} s",
                 f"one pandas group-by {t_gb:.2f} s",
                 f"{t_fit / t_gb:.2f}× (target ≤ 3×); equal to the exact CR2 ({diff:.0e})"))
    if not ok:
        raise SystemExit("arena: the covariance differs from the exact CR2")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="crossed,arena", help="crossed, arena or both")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    bad = [p for p in parts if p not in ("crossed", "arena")]
    if bad:
        raise SystemExit(f"--only: unknown part(s) {bad}; expected crossed, arena")
    header = machine()
    print("machine:", header)
    rows: list[tuple[str, str, str, str]] = []
    if "crossed" in parts:
        run_crossed(args.repeats, rows)
    if "arena" in parts:
        run_arena(args.repeats, rows)


if __name__ == "__main__":
    main()
