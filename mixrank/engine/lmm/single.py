"""Stage engine: each model's own scores fitted with the formula's random terms.

Inputs: a :class:`~mixrank.frame.Frame`, model indices, the method, estimand
and engine of a fit.  Outputs: one :class:`ModelFit` per model.

Model (docs/model_scores.md §1): the cell scores ``y`` of one model over the
cells it was scored on follow ``y = mu 1 + sum_r Z_r b_r + e`` with the
formula's random terms, i.e. lme4's ``lmer(y ~ 1 + (1|g1) + ...)``.  This is
exactly the paired-difference model of the engine with ``d = y - 0``, so the
fit goes through the engine's public entry (:func:`~mixrank.engine.lmm.native.fit_pairs`,
or the statsmodels / lme4 adapters): a two-column frame holds the model's
scores and a zero "partner" scored on the same cells.  The same rules apply
as for pairs (REML or aggregate, the gls / cells / units estimand,
Satterthwaite df, the balanced closed form, a random term confounded with the
residual is an error naming the term).  A model whose fit is impossible
(fewer than 2 cells, identical scores on every cell) gets NaN uncertainty and
a ``note`` instead of failing the whole table.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ...errors import DesignError, IncompletePairWarning, MixrankWarning
from ...frame import Frame, compute_stats
from ..control import DEFAULT_CONTROL, Control
from ..records import design_effect
from .native import PairFit, fit_pairs

__all__ = ["ModelFit", "fit_models", "model_frame"]

_PARTNER = "0"      # the zero partner of the synthetic pair (d = y - 0)


@dataclass(frozen=True)
class ModelFit:
    """Fit of one model's own cell scores (``y ~ 1 + random terms``)."""

    model: str
    n: int                          # cells scored
    estimate: float
    variance: float                 # Var(estimate); NaN when not estimable
    df: float
    sigma_iid: float                # sample SD of the model's cell scores
    components: dict[str, float] = field(default_factory=dict)
    criterion: float = float("nan")  # REML criterion (-2 l_R)
    converged: bool = True
    boundary: tuple[str, ...] = ()
    note: str = ""

    @property
    def std_error(self) -> float:
        return math.sqrt(self.variance) if self.variance >= 0 else float("nan")

    @property
    def iid_std_error(self) -> float:
        """``sigma_iid / sqrt(n)``: the sample standard error lm-evaluation-harness reports."""
        return self.sigma_iid / math.sqrt(self.n) if self.n > 0 else float("nan")

    @property
    def design_effect(self) -> float:
        """``variance / (sigma_iid^2 / n)`` (:func:`~mixrank.engine.records.design_effect`)."""
        return design_effect(self.variance, self.sigma_iid, self.n)


def model_frame(frame: Frame, j: int) -> Frame:
    """A two-model frame: model ``j``'s scores and a zero partner on the same cells.

    The pair ``(0, 1)`` of the returned frame has differences ``d = y_j``
    over the cells model ``j`` was scored on; everything else (cells, term
    codes, spec) is the original frame's.
    """
    obs = frame.observed[:, j]
    y = frame.scores[:, j]
    scores = np.column_stack([y, np.where(obs, 0.0, np.nan)])
    observed = np.column_stack([obs, obs])
    replicates = np.column_stack([frame.replicates[:, j], frame.replicates[:, j]])
    stats = compute_stats(scores, observed, frame.term_codes, frame.term_levels)
    return Frame(spec=frame.spec, models=(frame.models[j], _PARTNER), pair_by=frame.pair_by,
                 replicate=frame.replicate, cells=frame.cells, term_codes=frame.term_codes,
                 term_levels=frame.term_levels, term_labels=frame.term_labels, scores=scores,
                 observed=observed, replicates=replicates, binary=frame.binary,
                 n_rows=frame.n_rows, n_dropped=frame.n_dropped, stats=stats)


def _engine_fit(mf: Frame, method: str, estimand: str, engine: str,
                control: Control | None = None) -> PairFit:
    if engine == "native" or method == "aggregate":
        return fit_pairs(mf, [(0, 1)], method=method, estimand=estimand,
                         control=DEFAULT_CONTROL if control is None else control)[0]
    if engine == "statsmodels":
        from ..crosscheck.statsmodels_engine import fit_pairs_statsmodels

        return fit_pairs_statsmodels(mf, [(0, 1)], estimand=estimand)[0]
    if engine == "lme4":
        from ..crosscheck.lme4_engine import fit_pairs_lme4

        return fit_pairs_lme4(mf, [(0, 1)], estimand=estimand)[0]
    raise DesignError(f"engine={engine!r}; expected one of ('native', 'statsmodels', 'lme4')")


def _unfit(model: str, y: np.ndarray, why: str) -> ModelFit:
    n = len(y)
    sd = float(np.std(y, ddof=1)) if n > 1 else float("nan")
    est = float(np.mean(y)) if n else float("nan")
    return ModelFit(model=model, n=n, estimate=est, variance=float("nan"), df=float("nan"),
                    sigma_iid=sd, converged=False, note=why)


def _reword(msg: str, model: str) -> str:
    return msg.replace(f"{model!r} vs {_PARTNER!r}", f"model {model!r}").replace(
        "paired differences", "cell scores")


def fit_models(frame: Frame, models: list[int] | None = None, *, method: str = "reml",
               estimand: str = "gls", engine: str = "native",
               control: Control | None = None) -> list[ModelFit]:
    """Fit ``y ~ 1 + (random terms)`` to each model's own cell scores.

    Parameters
    ----------
    frame : Frame
    models : list of int, optional
        Indices into ``frame.models``; default all.
    method, estimand, engine
        As the fit's (see :func:`mixrank.fit`).
    control : Control, optional
        The fit's :class:`~mixrank.Control` (native engine); default ``Control()``.

    Returns
    -------
    list of ModelFit

    Raises
    ------
    DesignError
        A random term confounded with the residual among every model's cells
        (one cell per level) or two terms grouping them identically: the same
        rule as for pairs, with the model named (when only some models are
        affected, their rows get NaN uncertainty, a note and one
        :class:`~mixrank.errors.IncompletePairWarning`).  Unknown method,
        estimand or engine.

    Warns
    -----
    MixrankWarning
        A model whose uncertainty cannot be estimated (fewer than 2 cells,
        one score on every cell): its row has NaN standard error and a note.
    """
    idx = range(frame.n_models) if models is None else models
    out = []
    failed: list[str] = []
    for j in idx:
        name = frame.models[j]
        y = frame.scores[frame.observed[:, j], j]
        if len(y) < 2 or float(np.ptp(y)) == 0.0:
            why = (f"{len(y)} cell(s) scored" if len(y) < 2 else
                   f"the same score ({y[0]:.6g}) on all {len(y)} cells")
            warnings.warn(f"model {name!r}: {why}, so its score's standard error cannot be "
                          "estimated; its row has NaN uncertainty", MixrankWarning, stacklevel=3)
            out.append(_unfit(name, y, why))
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                p = _engine_fit(model_frame(frame, j), method, estimand, engine, control)
            except DesignError as exc:
                why = (f"fitting y ~ 1 + random terms to the {len(y)} cells of model {name!r} "
                       f"alone failed: {_reword(str(exc), name)}")
                failed.append(why)
                out.append(_unfit(name, y, f"not estimable: {why}"))
                continue
        for w in caught:
            if issubclass(w.category, MixrankWarning):
                warnings.warn(_reword(str(w.message), name), w.category, stacklevel=3)
        out.append(ModelFit(model=name, n=p.n, estimate=p.estimate, variance=p.variance,
                            df=p.df, sigma_iid=p.sigma_d, components=dict(p.components),
                            criterion=p.criterion, converged=p.converged, boundary=p.boundary,
                            note="" if p.converged else p.message))
    if failed and len(failed) == len(out):
        raise DesignError(f"model_scores: {failed[0]}")
    if failed:
        warnings.warn(f"model_scores: {len(failed)} model(s) cannot be scored under the "
                      f"formula and have NaN uncertainty with the reason in 'note' "
                      f"(docs/messy.md §3): {'; '.join(failed[:3])}"
                      f"{'; ...' if len(failed) > 3 else ''}", IncompletePairWarning,
                      stacklevel=3)
    return out
