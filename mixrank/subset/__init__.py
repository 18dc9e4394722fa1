"""mixrank.subset: score a new model on a fraction of the items (docs/subset.md).

Stage: results (stage 6 of tests/test_import_graph.py); imports
``formula``, ``frame``, the shared helpers and the contrasts template of
``results/base.py`` (:class:`~mixrank.subset.SubsetResult` is a result type).  A reference
leaderboard (several models, every item) gives the items' difficulties; a
stratified probability sample of items is run on a new model; the
model-assisted (difference) estimator turns its answers into its score on
the whole benchmark with a design-based interval; the same item fit flags
broken items.

Modules:

* :mod:`~mixrank.subset.data` -- the long leaderboard as a models x items
  matrix, the roles the formula gives the columns;
* :mod:`~mixrank.subset.irt` -- the item-response models (Rasch, 2PL /
  low-rank) fitted on the reference, a new model's ability;
* :mod:`~mixrank.subset.selection` -- :func:`select_items`: strata, Neyman
  allocation, the sample and its inclusion probabilities;
* :mod:`~mixrank.subset.estimator` -- :func:`subset_score`: the difference
  estimator, its stratified design variance, the model-based IRT estimate;
* :mod:`~mixrank.subset.result` -- :class:`SubsetResult` (scores, contrasts
  against the reference models, rank intervals);
* :mod:`~mixrank.subset.diagnostics` -- :func:`item_diagnostics`: per-item
  difficulty and discrimination, flags for a likely wrong answer key and
  for items nobody or everybody solves;
* :mod:`~mixrank.subset.validation` -- :func:`~mixrank.subset.validation.leave_one_out`:
  each model of a complete leaderboard scored from ``k`` items with the
  others as reference, against its true full score (docs/subset.md §5).
"""

from .diagnostics import item_diagnostics
from .estimator import subset_score
from .result import SubsetResult
from .selection import select_items

__all__ = ["select_items", "subset_score", "item_diagnostics", "SubsetResult"]
