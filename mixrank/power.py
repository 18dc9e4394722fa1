"""``mixrank.power``: closed-form resolution diagnostics in one namespace.

Re-exports (no code of its own) the functions of
:mod:`mixrank.design.power`, :mod:`mixrank.design.audit` and
:mod:`mixrank.design.anytime`: ``sigma_d``, ``n_star``, ``mde``,
``resolution_ratio``, ``power`` (solves for whichever of effect, n and power
is None), ``shortcut_n``, ``shortcut_constant``, ``shortcut_safe_delta``,
``calculator_audit``, ``multiplicity_alpha``, ``n_star_scale``, the
anytime-valid boundary functions, ``monitor`` and ``power_summary`` (the
table ``mixrank power`` prints).
"""

from .design.anytime import *  # noqa: F401,F403
from .design.anytime import __all__ as _any
from .design.audit import *  # noqa: F401,F403
from .design.audit import __all__ as _audit
from .design.power import *  # noqa: F401,F403
from .design.power import __all__ as _power
from .design.power_summary import power_summary

__all__ = list(_power) + list(_audit) + list(_any) + ["power_summary"]
