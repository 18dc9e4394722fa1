"""mixrank.design.anytime: anytime-valid resolution (boundaries that may be checked after every cell).

Stage: design (needs no fitted model).  docs/anytime.md and docs/methods.md §6
describe the statistics.

The public entry is one :func:`monitor` (``anytime="normal" | "bernoulli" | "auto"``);
the functions of the two boundaries stay importable from here.

Modules:

* :mod:`~mixrank.design.anytime.normal` -- the two-sided normal-mixture
  boundary (Howard et al. 2021): ``tune_rho0``, ``anytime_threshold``,
  ``anytime_inflation``, ``anytime_n_star`` and ``monitor`` (the entry for both kinds);
* :mod:`~mixrank.design.anytime.bernoulli` -- the paired-Bernoulli mixture
  e-process for 0/1 scores: ``bernoulli_log_e``, ``tune_beta``,
  ``bernoulli_threshold``, ``bernoulli_inflation``, ``bernoulli_n_star`` and
  ``monitor_bernoulli``.
"""

from mixrank.design.anytime.bernoulli import *  # noqa: F401,F403
from mixrank.design.anytime.bernoulli import __all__ as _bernoulli
from mixrank.design.anytime.normal import *  # noqa: F401,F403
from mixrank.design.anytime.normal import __all__ as _normal

__all__ = list(_normal) + list(_bernoulli)
