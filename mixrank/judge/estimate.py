"""Stage judge: PPI++ estimates per model and per pair of models (docs/judge.md §2-§3).

Inputs: :class:`~mixrank.judge.data.JudgeData`, model indices, an optional
fixed lambda.  Outputs: :class:`Corrected` -- a :class:`~mixrank.judge.ppi.PPIEstimate`
(or None with a note) for one model's cells (:func:`model_estimate`) or one
pair's common cells (:func:`pair_estimate`); :func:`pair_record` packages a
pair as the engine's :class:`~mixrank.engine.records.PairFit` so that every
accessor downstream of the contrasts (multiplicity, rank intervals, verdict
tables, the report) works on the corrected numbers unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.records import PairFit
from .data import JudgeData, labelled_units
from .ppi import PPIEstimate, ppi_mean

__all__ = ["Corrected", "model_estimate", "pair_estimate", "pair_record", "correct"]


@dataclass(frozen=True)
class Corrected:
    """The PPI++ estimate of one model or pair over its cells, or why there is none."""

    ppi: PPIEstimate | None
    n: int            # cells scored by the judge (a model's cells; a pair's common cells)
    note: str = ""


def correct(jd: JudgeData, cells: np.ndarray, y: np.ndarray, yhat: np.ndarray,
            labelled: np.ndarray, lam: float | str | None) -> Corrected:
    """PPI++ over the cells ``cells`` (bool mask) with labels ``y`` (NaN unlabelled) and
    judge scores ``yhat`` (full-length arrays), at the formula's unit."""
    spec = jd.frame.spec
    lab = cells & labelled
    unl = cells & ~labelled
    n = int(np.count_nonzero(cells))
    nl = int(np.count_nonzero(lab))
    if nl == 0:
        return Corrected(None, n, "no reference labels on these cells")
    units = labelled_units(spec, jd.frame, lab)
    if nl < 2 or units < 2:
        what = f"level(s) of {spec.unit!r}" if spec.unit else "cell(s)"
        return Corrected(None, n, f"reference labels in only {units} {what}; 2 are needed")
    groups_l = [jd.frame.term_codes[t][lab] for t in spec.term_names] or None
    groups_u = [jd.frame.term_codes[t][unl] for t in spec.term_names] or None
    est = ppi_mean(y[lab], yhat[lab], yhat[unl], groups_l=groups_l, groups_u=groups_u, lam=lam)
    if not (est.variance > 0 and np.isfinite(est.variance)):
        return Corrected(None, n, f"no variance: the corrected values are constant "
                                  f"(estimate {est.estimate:.6g}); nothing to test")
    return Corrected(est, n)


def model_estimate(jd: JudgeData, j: int, lam: float | str | None = None) -> Corrected:
    """PPI++ estimate of model ``j``'s mean reference label over the cells it was judged on."""
    lab = jd.labelled[:, j]
    return correct(jd, jd.frame.observed[:, j], jd.gold[:, j], jd.frame.scores[:, j], lab, lam)


def pair_estimate(jd: JudgeData, j: int, k: int, lam: float | str | None = None) -> Corrected:
    """PPI++ estimate of the paired difference ``model j - model k`` over their common cells.

    A common cell counts as labelled when both models' outputs are labelled
    there (the paired difference of the labels is known); cells labelled for
    one model only count as unlabelled for the pair.
    """
    fr = jd.frame
    common = fr.common_mask(j, k)
    lab = jd.labelled[:, j] & jd.labelled[:, k]
    y = jd.gold[:, j] - jd.gold[:, k]
    yhat = fr.scores[:, j] - fr.scores[:, k]
    return correct(jd, common, y, yhat, lab, lam)


def pair_record(jd: JudgeData, j: int, k: int, c: Corrected) -> PairFit:
    """The engine record of a corrected pair.

    ``variance`` and ``df`` are the PPI++ ones at the unit; ``n`` the common
    judged cells; ``sigma_d = sqrt(n variance_cell)`` so that ``sigma_d^2 /
    n`` is the cell-unit PPI++ variance and ``design_effect`` the clustering
    effect of the unit (docs/judge.md §3).  A pair without a correction is
    a degenerate record (variance 0, df NaN, p-value 1) naming the reason.
    """
    fr = jd.frame
    oa, ob = fr.observed[:, j], fr.observed[:, k]
    base: dict[str, Any] = dict(model_a=fr.models[j], model_b=fr.models[k], n=c.n,
                only_a=int(np.count_nonzero(oa & ~ob)), only_b=int(np.count_nonzero(ob & ~oa)),
                components={})
    if c.ppi is None:
        return PairFit(**base, estimate=float("nan"), variance=0.0, df=float("nan"),
                       sigma_d=0.0, message=c.note, degenerate=c.note)
    p = c.ppi
    return PairFit(**base, estimate=p.estimate, variance=p.variance, df=p.df,
                   sigma_d=math.sqrt(max(p.variance_cell, 0.0) * c.n),
                   message=(f"PPI++ lam={p.lam:.4g}, {p.n_labelled} labelled / "
                            f"{p.n_unlabelled} unlabelled cells, {p.n_units} units"))
