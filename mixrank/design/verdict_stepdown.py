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
    default for ``fit`` when it is :data:`FIT_DEFAULT`: ``"stepdown"`` where the fit's
    contrasts default to the unit-randomization step-down (the CR2 path with at most 14
    units), so the verdicts and the contrasts come from the same flips; else ``"holm"``."""
    if adjust is not FIT_DEFAULT:
        return check_adjust(adjust, "resolution_fit", where="resolution", allow_none=True)
    default = getattr(fit, "_default_adjust", None)
    return "stepdown" if callable(default) and default() == "stepdown" else "holm"


def stepdown_steps(fit: Any, table: pd.DataFrame, alpha: float, adjust: str | None = "stepdown"
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """None unless ``adjust == "stepdown"``; else per row of ``table`` (the family): the
    randomization step-down's step and the
    per-comparison level it spends (``alpha_step`` of
    :func:`mixrank.inference.randomization.scaled_stepdown` over the family's pairs: the
    max-T critical value over the pairs still in play, as a two-sided normal level in
    units of the pair's own flip SD); pairs without 3 units come last with level 0."""
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
    cols = np.array([index[id(lookup[pair_key(a, b)])]
                     for a, b in zip(table["model_a"], table["model_b"])], dtype=np.int64)
    r = scaled_stepdown(fit, B=1000, rng=None, cols=np.unique(cols), level=1.0 - alpha)
    step, a_step = r["step"][cols], r["alpha_step"][cols]
    step = np.where(np.isfinite(step), step, np.inf)
    return step, np.where(np.isfinite(a_step), a_step, 0.0)


#: How the multiplicity paradigm orders its steps.
ORDER = {"holm": "fixed-n Wald p-value (q descending)",
         "stepdown": "the randomization step-down's: |total| / within-unit SE descending; "
                      "each step's level is 2 Phi(-z), z the max-T critical value over the "
                      "unit sign flips of the pairs still in play (Westfall-Young) in units "
                      "of the pair's own flip SD"}
