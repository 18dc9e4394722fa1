"""The verdicts' multiplicity paradigm from the unit-randomization step-down (design stage).

Stage: design (on top of a fitted model).
Inputs: a :class:`~mixrank.results.FitResult` on the CR2 path and the verdict family
(the rows of the resolution table).
Outputs: the multiplicity paradigm's default for a fit (:func:`verdict_adjust`) and,
for ``adjust="stepdown"``, each row's step and the per-comparison level the step spends
(:func:`stepdown_steps`), in place of Holm's order and ``alpha / (m - r + 1)``
(docs/methods.md §9, "Verdicts from the step-down").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from mixrank.engine.records import pair_key, pair_lookup
from mixrank.errors import DesignError
from mixrank.inference.multiplicity import check_adjust

__all__ = ["FIT_DEFAULT", "ORDER", "verdict_adjust", "stepdown_steps"]


class _FitDefault:
    """``resolution_of(adjust=)`` not given: the fit's own default (:func:`verdict_adjust`)."""

    def __repr__(self) -> str:
        return "default"


FIT_DEFAULT: Any = _FitDefault()


def verdict_adjust(fit: Any, adjust: Any = FIT_DEFAULT) -> str | None:
    """``adjust`` checked (``None`` drops the paradigm), or the multiplicity paradigm's
    default for ``fit`` when it is :data:`FIT_DEFAULT`: the result type's own
    (:meth:`~mixrank.results.pairwise_result.PairwiseResult._default_verdict_adjust`:
    ``"stepdown"`` where the fit's contrasts default to the unit-randomization step-down,
    the CR2 path with 6 to 14 units, so the verdicts and the contrasts come from the same
    flips); ``"holm"`` for a fit without one."""
    if adjust is not FIT_DEFAULT:
        return check_adjust(adjust, "resolution_fit", where="resolution", allow_none=True)
    default = getattr(fit, "_default_verdict_adjust", None)
    return default() if callable(default) else "holm"


def stepdown_steps(fit: Any, table: pd.DataFrame, alpha: float, adjust: str | None = "stepdown"
                   ) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None:
    """None unless ``adjust == "stepdown"``; else a function of the rows' ``q`` giving per
    row of ``table`` (the family) its step (q descending, as Holm's) and the per-comparison
    level the randomization step-down spends there (``alpha_step`` of
    :func:`mixrank.inference.randomization.scaled_stepdown` with the steps in that order:
    the step rejects iff the pair's CR2 ``|t|`` exceeds ``z = c s / SE``, ``c`` the
    ``1 - alpha`` quantile of the max-T over the unit sign flips of the pairs still in
    play, s the within-unit SE; the level is ``2 Phi(-z)``); pairs without 3 units get
    level 0 (they cannot be rejected)."""
    if adjust != "stepdown":
        return None
    from mixrank.inference.randomization import EXACT_MAX, scaled_stepdown
    from mixrank.inference.simultaneous import randomized

    unit = fit.frame.spec.unit
    if not (randomized(fit) and unit is not None
            and int(fit.frame.term_levels[unit]) <= EXACT_MAX):
        raise DesignError("adjust='stepdown' takes the verdicts' per-step levels from the "
                          "unit sign-flip step-down, which needs fit(df='cr2') (the default "
                          "with a unit of 3 to 14 levels); this fit uses df="
                          f"{getattr(fit, 'df_method', None)!r}"
                          + ("" if unit is None else f" with {fit.frame.term_levels[unit]} "
                             f"levels of {unit!r}") + ". Use adjust='holm'.")
    lookup, index = pair_lookup(fit.pairs), {id(p): i for i, p in enumerate(fit.pairs)}
    rows = np.array([index[id(lookup[pair_key(a, b)])]
                     for a, b in zip(table["model_a"], table["model_b"])], dtype=np.int64)

    def levels(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(-np.asarray(q, dtype=float), kind="stable")
        r = scaled_stepdown(fit, B=1000, rng=None, cols=rows[order], level=1.0 - alpha,
                            in_order=True)
        step = np.empty(len(rows))
        step[order] = np.arange(1, len(rows) + 1)
        a_step = r["alpha_step"][rows]
        return step, np.where(np.isfinite(a_step), a_step, 0.0)

    return levels


#: How the multiplicity paradigm orders its steps.
ORDER = {"holm": "fixed-n Wald p-value (q descending)",
         "stepdown": "fixed-n Wald p-value (q descending); each step's level from the "
                      "randomization step-down: 2 Phi(-z), z the pair's CR2 |t| at which "
                      "the max-T over the unit sign flips of the pairs still in play "
                      "(Westfall-Young) rejects it"}
