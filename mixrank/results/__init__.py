"""Stage results: FitResult (immutable, cheap accessors), Summary, and GlmmResult (binomial GLMM;
GlmmByResult for ``model * x`` with a categorical x, GlmmSlopeResult with a numeric x).

Modules:

* :mod:`~mixrank.results.base` -- :class:`~mixrank.results.base.ContrastsTemplate`, the one base of every
  result (level, supported options, ``contrasts()``);
* :mod:`~mixrank.results.pairwise_result` -- :class:`~mixrank.results.pairwise_result.PairwiseResult`, the base of every
  pairwise result (judged pairs, ``rank_intervals()``, ``resolution()``);
* :mod:`~mixrank.results.fit_result` -- :class:`FitResult`, the fitted object
  over all pairs and its tidy accessors;
* :mod:`~mixrank.results.estimable` -- the estimable parts of a fit
  (``estimable_part()``, ``score_group_fits()``, ``weak_terms()``; a base of
  :class:`FitResult`);
* :mod:`~mixrank.results.summary` -- printable summaries;
* :mod:`~mixrank.results.letters` -- ``letters()``, the compact letter display
  of every result, and :mod:`~mixrank.results.paper_table` -- ``table()``, the
  leaderboard for a paper (LaTeX, Markdown, HTML);
* :mod:`~mixrank.results.omnibus` -- ``omnibus()``, the test that every model's score is
  equal (a mixin of :class:`FitResult`);
* :mod:`~mixrank.results.scores` -- each model's score with its uncertainty at
  the formula's unit, with :mod:`~mixrank.results.score_adjust` (scores on the
  union of cells when models' cell sets differ) and :mod:`~mixrank.results.score_se`
  (every row's SE and df by the contrasts' method);
* :mod:`~mixrank.results.interactions` -- contrasts by covariate level of a
  model x covariate fit, with :mod:`~mixrank.results.anova` (per-pair F tests
  that the gap is the same at every level) and
  :mod:`~mixrank.results.ranks_by` (rank intervals per level);
* :mod:`~mixrank.results.glmm` -- the binomial GLMM's results (a subpackage):
  :class:`GlmmResult`, :class:`GlmmByResult` (``model * x``, categorical x)
  and :class:`GlmmSlopeResult` (numeric x).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .fit_result import FitResult
from .summary import Summary

if TYPE_CHECKING:
    from .glmm.by import GlmmByResult
    from .glmm.result import GlmmResult
    from .glmm.slope import GlmmSlopeResult

__all__ = ["FitResult", "GlmmResult", "GlmmByResult", "GlmmSlopeResult", "Summary"]

#: The GLMM results, imported on first access (PEP 562): a gaussian fit does not need them.
_LAZY = {"GlmmResult": ".glmm.result", "GlmmByResult": ".glmm.by",
         "GlmmSlopeResult": ".glmm.slope"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
