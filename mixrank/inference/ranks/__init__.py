"""mixrank.inference.ranks: confidence intervals for ranks (inference stage).

docs/methods.md describes the statistics.

Modules:

* :mod:`~mixrank.inference.ranks.intervals` -- the entry points
  ``rank_intervals_of`` (from a fit) and ``rank_intervals_from_contrasts``
  (from a contrasts table);
* :mod:`~mixrank.inference.ranks.core` -- ``rank_intervals_from_tests``: the
  rank table from directional tests, and the option checks shared by all;
* :mod:`~mixrank.inference.ranks.data` -- ``rank_intervals``: the published
  raw-data procedure (per-unit means, paired tests);
* :mod:`~mixrank.inference.ranks.maxt` -- the contrast-table reader and the
  bootstrap max-t step-down;
* :mod:`~mixrank.inference.ranks.robust` -- the bootstrap-t and sign-flip
  tests of the raw-data procedure;
* :mod:`~mixrank.inference.ranks.agreement` -- which comparisons a rank interval is
  adjusted over (``attrs["mixrank"]["comparisons"]``), and the pairs where the rank
  intervals and the contrasts answer differently, with why.
"""

from mixrank._deprecate import former_names
from mixrank.inference.ranks.intervals import (
    COVERAGES,
    RANK_METHODS,
    rank_intervals,
    rank_intervals_from_contrasts,
    rank_intervals_from_tests,
    rank_intervals_of,
)

__all__ = ["rank_intervals", "rank_intervals_of", "rank_intervals_from_contrasts",
           "rank_intervals_from_tests", "COVERAGES", "RANK_METHODS"]


#: Former names (``X_fit`` meant "computed from a fit"; ``X_of(fit)`` now): one release.
__getattr__ = former_names('mixrank.inference.ranks', {'rank_intervals_fit': 'rank_intervals_of'}, globals())
