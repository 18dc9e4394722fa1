"""Stage fit (composition): the routes of :func:`mixrank.fit`, one module per route.

A route declares when it applies, the options of :func:`mixrank.fit` it
accepts and its three steps -- frame, estimate, result -- as a
:class:`~mixrank.routes.options.Route` named ``ROUTE`` in its module.
:func:`mixrank.fit` checks the options once
(:class:`~mixrank.routes.options.FitOptions`), takes the first route of
:data:`ROUTES` that applies and runs its steps.

Modules:

* :mod:`~mixrank.routes.options` -- :class:`FitOptions` (the keywords of
  ``fit()`` as one frozen record, with ``changed()``; the command line builds
  the same record) and :class:`Route`;
* :mod:`~mixrank.routes.judge` -- ``gold=``: PPI++ judge-corrected fits;
* :mod:`~mixrank.routes.binomial` -- ``family="binomial"``: glmer over all
  models at once;
* :mod:`~mixrank.routes.interaction` -- model x covariate formulas;
* :mod:`~mixrank.routes.gaussian` -- the paired mixed model of every pair
  (the fallback; its engines are the gaussian family's fitters).

Adding a route: a new module here defining ``ROUTE`` and its name in
:data:`ROUTES` (before the routes it takes precedence over).  The route
modules import their heavy dependencies in their steps, so choosing a route
imports little.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from typing import Any

from .options import FitOptions, Route

__all__ = ["ROUTES", "FitOptions", "Route", "routes", "route_for", "families"]

#: The routes of ``fit()``, in the order they are tried (the first that applies fits).
ROUTES: tuple[str, ...] = (
    "judge",
    "binomial",
    "interaction",
    "gaussian",
)


def routes() -> tuple[Route, ...]:
    """The :class:`Route` of every module named in :data:`ROUTES`, in order."""
    return _load(ROUTES)


@functools.lru_cache(maxsize=8)
def _load(names: tuple[str, ...]) -> tuple[Route, ...]:
    return tuple(importlib.import_module(f"{__name__}.{name}").ROUTE for name in names)


def route_for(options: FitOptions, formula: Any) -> Route:
    """The first route that applies to ``options`` and ``formula``."""
    return next(r for r in routes() if r.applies(options, formula))


def families() -> dict[str, Mapping[str, Callable[..., Any]]]:
    """Response family -> {engine name -> fitter}, from the routes that fit a family
    (the fallback route's family first)."""
    return {r.family: r.engines or {} for r in reversed(routes()) if r.family}
