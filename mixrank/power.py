"""``mixrank.power``: closed-form resolution diagnostics in one namespace.

Re-exports (no code of its own) :mod:`mixrank.design.power` (``sigma_d``,
``n_star``, ``mde``, ``resolution_ratio``, ``power`` -- which solves for
whichever of effect, n and power is None --, ``shortcut_n``,
``shortcut_constant``, ``shortcut_safe_delta``, ``calculator_audit``,
``multiplicity_alpha``, ``n_star_scale`` and ``power_summary``, the table
``mixrank power`` prints) and the normal-mixture functions of
:mod:`mixrank.design.anytime` (the anytime-valid boundary and ``monitor``).
"""

from .design.anytime.normal import *  # noqa: F401,F403
from .design.anytime.normal import __all__ as _any
from .design.power import *  # noqa: F401,F403
from .design.power import __all__ as _power

__all__ = list(_power) + list(_any)
