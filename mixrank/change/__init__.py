"""mixrank.change: item-level reliable change between two versions of a model.

Stage: change (needs no fitted model; sits beside ``inference`` and
``design`` in the one-way import order and imports only ``_util`` and
``errors``).  docs/methods.md §8 describes the statistics.

Modules:

* :mod:`~mixrank.change.rci` -- :func:`reliable_change`, the entry point:
  option checks, aligning the two versions on shared items, classifying items;
* :mod:`~mixrank.change.reliability` -- split-half reliability of one version;
* :mod:`~mixrank.change.eb` -- per-item exact tests, Storey q-values and the
  empirical-Bayes (normal-normal REML) shrinkage of item changes;
* :mod:`~mixrank.change.difficulty` -- reliable change by item difficulty and
  the attainable p-value (docs/sensitivity.md §5);
* :mod:`~mixrank.change.versions` -- selecting the two versions' rows and
  checking their columns, scores and items x K matrices;
* :mod:`~mixrank.change.result` -- :class:`ReliableChange` and
  :class:`ReliableChangeSummary`, whose accessors return tidy tables.
"""

from .rci import reliable_change
from .result import CLASSES, ReliableChange, ReliableChangeSummary

__all__ = ["reliable_change", "ReliableChange", "ReliableChangeSummary", "CLASSES"]
