"""Replicate refits of the sensitivity checks at interactive speed (design stage).

Stage: design (drives the native engine over many replicate frames).
Inputs: a (model-restricted) :class:`~mixrank.frame.Frame`, the judged
pairs, the fit's method and estimand, and a list of replicates (the cells
each keeps, with the draw numbers of a cluster bootstrap).
Outputs: per replicate, one row per pair with ``estimate, n, sigma_d,
weight_factor, variance`` -- the numbers the verdict table needs -- in the
order of the replicates (:func:`replicate_rows`).
Contents (docs/sensitivity.md, "Speed"): :func:`refit` (one frame),
:func:`replicate_rows` (many replicates), :func:`gls_weights`, :func:`warm_starts`.

Three things make a replicate cheap (docs/sensitivity.md, "Speed"):

* the judged pairs are fitted in **one** engine call per replicate, so pairs on the
  same common cells (all of them in a complete leaderboard) share one
  random-effects structure (:func:`refit`);
* the estimand's weight factor ``n sum w_c^2`` of a GLS estimate is solved
  through the Schur complement onto the smaller terms (the largest term's
  block of ``Z'Z`` is diagonal), not by a sparse LU of the whole system
  (:func:`gls_weights`, equal to :func:`mixrank.inference.joint.pair_weights`
  to rounding, tests/design/test_sensitivity_refit.py);
* replicates are independent, so they run on the available cores in forked
  workers (:func:`mixrank.engine.parallel.run_pairs`), in a few rounds so
  that ``progress`` can report between them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from mixrank.design.sensitivity.frames import subset_frame
from mixrank.engine.control import Control
from mixrank.engine.lmm.native import PairFit, fit_pairs
from mixrank.engine.parallel import available_cores, blas_controller, run_pairs
from mixrank.engine.records import pair_key, pair_lookup
from mixrank.errors import DesignError, MixrankWarning
from mixrank.frame import Frame

__all__ = ["refit", "replicate_rows", "rows_of", "gls_weights", "warm_starts", "MakeReplicate"]

#: Replicate i -> (kept cell indices, draw number of each kept cell or None)
MakeReplicate = Callable[[int], tuple[np.ndarray, "np.ndarray | None"]]

#: Largest Schur complement (smaller terms' levels) solved densely; above it, sparse LU.
_SCHUR_LIMIT = 2500
#: Largest (largest term's levels x other levels) count matrix held densely.
_DENSE_LIMIT = 20_000_000
#: Below this many replicate x pair fits, one process (forking costs more than it saves).
_PARALLEL_MIN = 200


#: Replicate refits run in this process: forking workers per replicate costs more than it saves.
_SERIAL = Control(workers=1)


def refit(frame: Frame, judged: Sequence[tuple[str, str]], *, method: str,
          estimand: str, control: Control | None = None,
          starts: Mapping[tuple[str, str], Mapping[str, float]] | None = None
          ) -> list[PairFit | None]:
    """Fit each judged pair on ``frame`` (None where it cannot be fitted there).

    A pair without two common cells, or whose random term has a single level
    left, cannot be compared on the frame; it gets None (counted by the
    caller) instead of stopping the whole check.  Warnings of the engine
    (boundary fits, dropped terms) are expected across many replicates and
    silenced.  ``starts``: per pair of the judged, a warm start for its
    fit (:func:`mixrank.engine.lmm.native.fit_pairs`).
    """
    control = _SERIAL if control is None else control
    idx = [(frame.model_index(a), frame.model_index(b)) for a, b in judged]
    ok = [h for h, (j, k) in enumerate(idx) if frame.stats.n_common[j, k] >= 3]
    warm = None if starts is None else {idx[h]: starts[judged[h]] for h in ok
                                        if judged[h] in starts}
    out: list[PairFit | None] = [None] * len(judged)
    fits: list[PairFit | None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixrankWarning)
        try:      # one engine call: pairs on the same cells share structure and lattice
            fits = list(fit_pairs(frame, [idx[h] for h in ok], method=method,
                                  estimand=estimand, control=control, starts=warm))
        except DesignError:                    # some pair cannot be fitted: find it alone
            fits = []
            for h in ok:
                try:
                    fits.append(fit_pairs(frame, [idx[h]], method=method, estimand=estimand,
                                          control=control, starts=warm)[0])
                except DesignError:
                    fits.append(None)
    for h, p in zip(ok, fits):
        out[h] = p
    return out


def _compact(codes: np.ndarray) -> tuple[np.ndarray, int]:
    u, inv = np.unique(codes, return_inverse=True)
    return inv.astype(np.int64).ravel(), len(u)


def gls_weights(codes: Sequence[np.ndarray], comps: Sequence[float], sigma2: float
                ) -> np.ndarray:
    """GLS weights ``V^-1 1 / (1' V^-1 1)`` of ``V = sigma2 I + sum_r comps_r Z_r Z_r'``.

    Parameters
    ----------
    codes : sequence of ndarray
        Each random term's level codes over the cells.
    comps : sequence of float
        Each term's variance; terms with a variance that is not positive
        (boundary, dropped: NaN) contribute nothing.
    sigma2 : float
        The residual variance (> 0).

    Returns
    -------
    ndarray
        One weight per cell, summing to 1.

    Notes
    -----
    Woodbury: ``V^-1 1 = (1 - Z x) / sigma2`` with ``(Z'Z + P) x = Z'1`` and
    ``P`` the precision ratios ``sigma2 / comps_r``.  The term with most
    levels has a diagonal block, so the system is reduced to the Schur
    complement on the other terms' levels and solved densely; with more than
    ``_SCHUR_LIMIT`` such levels it falls back to a sparse LU.  Validated
    against :func:`mixrank.inference.joint.pair_weights`
    (tests/design/test_sensitivity_refit.py).
    """
    n = len(codes[0]) if codes else 0
    terms = [(_compact(c), sigma2 / s2) for c, s2 in zip(codes, comps)
             if np.isfinite(s2) and s2 > 0]
    one = np.ones(n)
    if not terms:
        return one / n
    terms.sort(key=lambda t: -t[0][1])
    (c1, L1), p1 = terms[0]
    rest = terms[1:]
    q2 = sum(L for (_, L), _ in rest)
    if q2 > _SCHUR_LIMIT or L1 * q2 > _DENSE_LIMIT:
        from mixrank.inference.joint import _gls_weights

        return _gls_weights(n, list(codes), list(comps), sigma2)
    cnt1 = np.bincount(c1, minlength=L1).astype(float)
    a11 = cnt1 + p1                                       # diagonal block
    if not rest:
        x1 = cnt1 / a11
        v = one - x1[c1]
        return v / v.sum()
    offs = np.cumsum([0] + [L for (_, L), _ in rest])
    c2 = [c + o for ((c, _), _), o in zip(rest, offs[:-1])]
    flat = np.zeros(L1 * q2)
    a22 = np.zeros((q2, q2))
    b2 = np.zeros(q2)
    for i, ci in enumerate(c2):
        flat += np.bincount(c1 * q2 + ci, minlength=L1 * q2)
        b2 += np.bincount(ci, minlength=q2)
        for cj in c2[i:]:
            block = np.bincount(ci * q2 + cj, minlength=q2 * q2).reshape(q2, q2).astype(float)
            a22 += block if cj is ci else block + block.T
    a12 = flat.reshape(L1, q2)
    a22[np.diag_indices(q2)] += np.concatenate([np.full(L, p) for (_, L), p in rest])
    s = a22 - a12.T @ (a12 / a11[:, None])
    x2 = np.linalg.solve(s, b2 - a12.T @ (cnt1 / a11))
    x1 = (cnt1 - a12 @ x2) / a11
    v = one - x1[c1]
    for ci in c2:
        v -= x2[ci]
    return v / v.sum()


def _weight_factor(frame: Frame, p: PairFit, mask: np.ndarray, method: str,
                   estimand: str) -> float:
    """``n sum w_c^2`` of the pair's estimate (as :func:`mixrank.design.estimand.weight_factor`)."""
    names = list(frame.spec.term_names)
    how = "units" if method == "aggregate" else estimand
    if (how == "units" and not names) or p.degenerate or how == "cells":
        return 1.0
    idx = np.flatnonzero(mask)
    if how == "units":
        u, _ = _compact(frame.term_codes[names[0]][idx])
        cnt = np.bincount(u)
        w = 1.0 / (len(cnt) * cnt[u])
    else:
        sigma2 = float(p.components.get("residual", np.nan))
        if not (np.isfinite(sigma2) and sigma2 > 0):
            return float("nan")
        w = gls_weights([frame.term_codes[t][idx] for t in names],
                        [float(p.components.get(t, np.nan)) for t in names], sigma2)
    return float(w.size * np.dot(w, w))


def rows_of(frame: Frame, judged: Sequence[tuple[str, str]], fits: Sequence[PairFit | None],
            method: str, estimand: str) -> list[dict[str, float]]:
    """Per pair ``estimate, n, sigma_d, weight_factor, variance`` of the fits ({} if None)."""
    out: list[dict[str, float]] = []
    for (a, b), p in zip(judged, fits):
        if p is None:
            out.append({})
            continue
        j, k = frame.model_index(a), frame.model_index(b)
        mask = frame.common_mask(j, k)
        out.append(dict(estimate=p.estimate, n=p.n, sigma_d=p.sigma_d,
                        weight_factor=_weight_factor(frame, p, mask, method, estimand),
                        variance=p.std_error ** 2))
    return out


def warm_starts(full: Sequence[PairFit], judged: Sequence[tuple[str, str]]
                ) -> dict[tuple[str, str], dict[str, float]]:
    """Per judged pair, the full fit's ``{term: sigma_r^2 / sigma^2}`` (pairs fitted there)."""
    by = pair_lookup(full)
    out: dict[tuple[str, str], dict[str, float]] = {}
    for a, b in judged:
        p = by.get(pair_key(a, b))
        s2 = np.nan if p is None else float(p.components.get("residual", np.nan))
        if p is None or not (np.isfinite(s2) and s2 > 0):
            continue
        out[(a, b)] = {t: float(v) / s2 for t, v in p.components.items() if t != "residual"}
    return out


def replicate_rows(frame: Frame, judged: Sequence[tuple[str, str]],
                   n_replicates: int, make: MakeReplicate, *, unit: str, method: str, estimand: str,
                   progress: Callable[[int], Any] | None = None,
                   full: Sequence[PairFit] | None = None) -> list[list[dict[str, float]]]:
    """Refit the judged pairs on each replicate frame; per replicate, one dict per pair.

    Parameters
    ----------
    frame : Frame
        The fit's frame restricted to the judged pairs' models.
    judged : sequence of (model_a, model_b)
    n_replicates : int
    make : callable
        ``make(i) -> (rows, copy)``: the cells replicate ``i`` keeps
        (``rows``, repeats allowed) and, for a cluster bootstrap, the draw
        each kept cell came from (``copy``, else None; the unit and the terms
        nested in it get a level per draw).  Called in the worker, so no
        replicate's cells are held longer than its fit.
    unit : str
        The resampled random term.
    method, estimand : str
        The fit's.
    progress : callable, optional
        Called with the number of replicates just finished.
    full : sequence of PairFit, optional
        The full fit's pairs: each replicate fit starts from the full fit's
        variance ratios (a warm start; the optimum is still the certified
        one).

    Returns
    -------
    list of list of dict
        ``estimate, n, sigma_d, weight_factor, variance`` per (replicate,
        pair); an empty dict where the pair could not be fitted.  Equal to
        :func:`~mixrank.design.estimand.pair_inputs_from` on refits of each
        replicate frame (tests/design/test_sensitivity_refit.py).
    """
    starts = None if full is None else warm_starts(full, judged)

    def task(item: tuple[int, int]) -> list[dict[str, float]]:
        rows, copy = make(item[0])
        sub = subset_frame(frame, rows, copy=copy, unit=unit if copy is not None else None)
        fits = refit(sub, judged, method=method, estimand=estimand, starts=starts)
        return rows_of(sub, judged, fits, method, estimand)

    items = [(i, 0) for i in range(n_replicates)]
    cores = available_cores()
    workers = cores if cores > 1 and len(items) * len(judged) >= _PARALLEL_MIN else 1
    rounds = 1 if progress is None else min(len(items), 10)
    out: list[list[dict[str, float]]] = []
    for r in range(rounds):
        part = items[r * len(items) // rounds:(r + 1) * len(items) // rounds]
        if workers > 1 and len(part) >= 2 * workers:
            out += run_pairs(task, part, workers)     # workers limit BLAS to one thread
        else:
            with blas_controller().limit(limits=1, user_api="blas"):
                out += [task(it) for it in part]
        if progress is not None:
            progress(len(part))
    return out
