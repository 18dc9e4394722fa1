"""mixrank.design.sensitivity: how robust the clustered verdict is to the clusters (design stage).

Stage: design (on top of a fitted model; refits with the native engine).
The entry point is :func:`sensitivity_of` (``FitResult.sensitivity``);
docs/sensitivity.md describes the checks and their statistics.

Modules, by concept:

* :mod:`~mixrank.design.sensitivity.run` -- the checks (leave-one-out,
  cluster bootstrap, other clusterings) and their verdict rows:
  :func:`sensitivity_of`, :data:`KINDS`;
* :mod:`~mixrank.design.sensitivity.frames` -- what a replicate is: the
  re-sampled and re-grouped frames and the unit they resample;
* :mod:`~mixrank.design.sensitivity.refit` -- replicates refitted with the
  engine (warm starts, one call per judged, GLS weights);
* :mod:`~mixrank.design.sensitivity.oneway` -- the vectorised one-way REML
  fast path (one random term);
* :mod:`~mixrank.design.sensitivity.fast` and
  :mod:`~mixrank.design.sensitivity.crossed` -- leave-one-out and the
  cluster bootstrap with several random terms from per-cluster sums (no
  refits; the batched REML over all replicates);
* :mod:`~mixrank.design.sensitivity.stability` -- the per-pair stability
  summary of a replicate table (:func:`stability`).
"""

from mixrank._deprecate import former_names
from mixrank.design.sensitivity.run import KINDS, sensitivity_of
from mixrank.design.sensitivity.stability import stability

__all__ = ["sensitivity_of", "stability", "KINDS"]


#: Former names (``X_fit`` meant "computed from a fit"; ``X_of(fit)`` now): one release.
__getattr__ = former_names('mixrank.design.sensitivity', {'sensitivity_fit': 'sensitivity_of'}, globals())
