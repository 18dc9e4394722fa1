"""Stage results: FitResult (immutable, cheap accessors), Summary, and GlmmResult (binomial GLMM;
GlmmByResult for ``model * x`` with a categorical x, GlmmSlopeResult with a numeric x).

Modules:

* :mod:`~mixrank.results.base` -- :class:`PairwiseResult`, the one base of
  every pairwise result (level, judged pairs, supported options);
* :mod:`~mixrank.results.fit_result` -- :class:`FitResult`, the fitted object
  over all pairs and its tidy accessors;
* :mod:`~mixrank.results.summary` -- printable summaries;
* :mod:`~mixrank.results.scores` -- each model's score with its uncertainty at
  the formula's unit, with :mod:`~mixrank.results.score_adjust` (scores on the
  union of cells when models' cell sets differ);
* :mod:`~mixrank.results.interactions` -- contrasts by covariate level of a
  model x covariate fit, with :mod:`~mixrank.results.anova` (per-pair F tests
  that the gap is the same at every level) and
  :mod:`~mixrank.results.ranks_by` (rank intervals per level);
* :mod:`~mixrank.results.glmm_result` -- :class:`GlmmResult`, the binomial GLMM
  fit; :mod:`~mixrank.results.glmm_by` (``model * x``, categorical x) and
  :mod:`~mixrank.results.glmm_slope` (numeric x).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .fit_result import FitResult
from .summary import Summary

if TYPE_CHECKING:
    from .glmm_by import GlmmByResult
    from .glmm_result import GlmmResult
    from .glmm_slope import GlmmSlopeResult

__all__ = ["FitResult", "GlmmResult", "GlmmByResult", "GlmmSlopeResult", "Summary"]

#: The GLMM results, imported on first access (PEP 562): a gaussian fit does not need them.
_LAZY = {"GlmmResult": ".glmm_result", "GlmmByResult": ".glmm_by",
         "GlmmSlopeResult": ".glmm_slope"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
