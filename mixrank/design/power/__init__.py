"""mixrank.design.power: closed-form power, sample size and their audit (design stage).

Stage: design (needs no fitted model).  docs/methods.md §4 describes the
statistics; :mod:`mixrank.power` is the user-facing namespace that gathers
these functions with the anytime-valid ones.

Modules:

* :mod:`~mixrank.design.power.closed_form` -- ``sigma_d``, ``n_star``,
  ``mde``, ``resolution_ratio`` and ``power`` for one paired comparison;
* :mod:`~mixrank.design.power.audit` -- the Cohen-h shortcut lemma, the
  calculator audit and multiplicity-adjusted levels;
* :mod:`~mixrank.design.power.summary` -- ``power_summary``, the table
  ``mixrank power`` prints.
"""

from mixrank.design.power.audit import *  # noqa: F401,F403
from mixrank.design.power.audit import __all__ as _audit
from mixrank.design.power.closed_form import *  # noqa: F401,F403
from mixrank.design.power.closed_form import __all__ as _closed_form
from mixrank.design.power.summary import power_summary

__all__ = list(_closed_form) + list(_audit) + ["power_summary"]
