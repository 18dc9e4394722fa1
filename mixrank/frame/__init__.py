"""Stage frame: DataFrame + Spec -> Frame (validated, encoded, paired).

Modules:

* :mod:`~mixrank.frame.frame` -- :class:`Frame`, the validated, encoded data
  every fit works from, and its sufficient statistics;
* :mod:`~mixrank.frame.family` -- :func:`build_frame`, the one frame builder
  with a ``family`` argument (``mixrank.build_frame``);
* :mod:`~mixrank.frame.build` -- validate and encode long-format rows for a
  formula (pairing rule, scores, missing values), and the options that only
  act while a frame is built;
* :mod:`~mixrank.frame.glmm` -- binomial data (0/1 rows or ``cbind`` counts)
  to a frame, with its input checks;
* :mod:`~mixrank.frame.cells` -- a Frame from an aggregated (model, cell)
  table instead of rows (the out-of-core backends' path);
* :mod:`~mixrank.frame.columns` -- the compressed (per-model) layout of a
  frame's scores;
* :mod:`~mixrank.frame.covariates` -- cell-level covariates of a model x
  covariate formula;
* :mod:`~mixrank.frame.encode` -- fast, canonical integer encoding of key columns;
* :mod:`~mixrank.frame.pairs` -- which pairs of models of a frame to fit
  (``fit(pairs=)``);
* :mod:`~mixrank.frame.memory` -- input size checked before the dense matrices
  are allocated;
* :mod:`~mixrank.frame.source` -- what an input is, and coercing long input
  into a pandas DataFrame.
"""

from .build import CONVENTIONAL_KEYS, default_pair_by, refuse_build_options
from .family import FRAME_FAMILIES, build_frame
from .frame import Frame, SufficientStats, compute_stats
from .source import to_pandas

__all__ = ["build_frame", "FRAME_FAMILIES", "default_pair_by", "refuse_build_options", "CONVENTIONAL_KEYS", "Frame", "SufficientStats",
           "compute_stats", "to_pandas"]
