"""Arena (pairwise-preference) leaderboards: Bradley-Terry with intervals (docs/arena.md).

Stage: between results and the entry points -- it reads battle logs,
fits Bradley-Terry by Newton's method on pair counts and answers through
:class:`ArenaResult`, whose accessors reuse the inference and design
stages (rank intervals, multiplicity, resolution, e-processes).
Modules: :mod:`.data` (reading, validation, counts), :mod:`.estimate`
(likelihood, Newton, sandwich, bootstrap), :mod:`.clusters` (cluster
detection, CR2 sandwich, Bell-McCaffrey df), :mod:`.ppi`
(prediction-powered BT: PPI++ with LLM judges), :mod:`.judged` (judge
diagnostics, side-by-side leaderboards), :mod:`.fitting` (the clustered
and judge-corrected paths), :mod:`.result` (:class:`ArenaResult`),
:mod:`.monitor` (sequential e-process monitor), :mod:`.api`
(:func:`arena`).  This module only re-exports.  The top-level name
``mixrank.arena`` is the function :func:`mixrank.arena.api.arena` (its
real signature for ``inspect`` and ``help()``); ``import mixrank.arena.data``
and ``from mixrank.arena import ArenaMonitor`` reach this package, which
stays callable for code that holds the module itself.
"""

import sys
import types
from typing import Any

from .api import arena
from .data import battles_from_scores, read_battles
from .monitor import ArenaMonitor
from .result import ArenaResult, ArenaSummary

__all__ = ["arena", "ArenaMonitor", "ArenaResult", "ArenaSummary", "battles_from_scores",
           "read_battles"]


class _CallableModule(types.ModuleType):
    """This package, callable as :func:`arena`."""

    def __call__(self, *args: Any, **kwargs: Any) -> ArenaResult:
        return arena(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
