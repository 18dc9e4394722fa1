"""Stage fit (composition): the options of :func:`mixrank.fit` as one record, and a route.

Inputs: the keywords of :func:`mixrank.fit` (or the command line's flags).
Outputs: :class:`FitOptions`, the frozen record of those keywords, checked
once (:meth:`FitOptions.checked`) and asked which were set away from their
defaults (:meth:`FitOptions.changed`, what a route refuses by name); and
:class:`Route`, what a route module of :mod:`mixrank.routes` declares: when
it applies, the options it accepts and its three steps (frame, estimate,
result), in the spirit of lme4's ``lFormula -> mkLmerDevfun ->
optimizeLmer -> mkMerMod``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from .._util import check_level, did_you_mean
from ..engine.lmm.native import ESTIMANDS, METHODS
from ..engine.lmm.unit_se import check_df
from ..errors import DesignError, OptionError

__all__ = ["FitOptions", "Route", "check_choice", "INCOMPLETE"]

#: Values of ``fit(incomplete=)``.
INCOMPLETE = ("keep", "drop")


def check_choice(option: str, value: Any, valid: Sequence[str], where: str = "") -> None:
    """The one :class:`OptionError` of an option outside its values (listed)."""
    if not isinstance(value, str) or value not in valid:
        raise OptionError(f"{option}={value!r} is not an option; expected one of "
                          f"{', '.join(repr(v) for v in valid)}{where}"
                          f"{did_you_mean(value, valid)}")


@dataclass(frozen=True)
class FitOptions:
    """The keywords of :func:`mixrank.fit` (everything but ``formula`` and ``data``).

    Field defaults are the defaults of :func:`mixrank.fit`; see its docstring
    for each option.  :meth:`checked` returns the record validated, with
    ``estimand`` filled in (``"units"`` for ``method="aggregate"``, else
    ``"cells"``).
    """

    method: str = "reml"
    engine: str = "auto"
    estimand: str | None = None
    pairs: Sequence[tuple[str, str]] | None = None
    level: float = 0.95
    pair_by: Sequence[str] | None = None
    replicate: str | None = None
    na: str = "error"
    backend: str = "pandas"
    client: Any = None
    backend_options: Mapping[str, Any] | None = None
    family: str = "gaussian"
    control: Any = None
    nagq: int | None = None
    progress: Callable[[int, int], Any] | bool | None = None
    gold: str | None = None
    lam: float | str | None = None
    incomplete: str = "keep"
    df: str | None = None

    def changed(self, among: Iterable[str] | None = None) -> dict[str, Any]:
        """The options set away from their defaults (``{name: value}``, in field order;
        ``among``: only those names).  ``estimand="cells"``, the default of
        ``method="reml"``, counts as unset."""
        keep = None if among is None else set(among)
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if keep is not None and f.name not in keep:
                continue
            same = v is None if f.default is None else (isinstance(v, str | float | int)
                                                          and v == f.default)
            if not same and not (f.name == "estimand" and v == "cells"):
                out[f.name] = v
        return out

    def checked(self, data: Any) -> FitOptions:
        """The record validated as every route needs it (level, build options against a
        prebuilt Frame, ``nagq`` without the binomial family, ``incomplete``, ``method``,
        ``estimand``, ``df``), ``level`` as a float and ``estimand`` filled in."""
        from ..frame import refuse_build_options

        level = check_level(self.level, DesignError)
        refuse_build_options(data, pair_by=self.pair_by, replicate=self.replicate, na=self.na,
                             backend=self.backend, client=self.client,
                             backend_options=self.backend_options)
        if self.nagq is not None and self.family != "binomial":
            raise OptionError(f"nagq={self.nagq!r} sets glmer's nAGQ of the binomial GLMM; with "
                              f"family={self.family!r} it would be ignored: drop it or pass "
                              "family='binomial'")
        check_choice("incomplete", self.incomplete, INCOMPLETE)
        check_choice("method", self.method, METHODS)
        estimand = self.estimand
        if estimand is None:
            estimand = "units" if self.method == "aggregate" else "cells"
        check_choice("estimand", estimand, ESTIMANDS)
        if self.method == "aggregate" and estimand != "units":
            raise OptionError(f"method='aggregate' averages the differences within the units "
                              f"and estimates their mean (estimand='units'); "
                              f"estimand={estimand!r} would be ignored: drop estimand= or use "
                              "method='reml'")
        if self.df is not None:
            check_df(self.df)
        out = copy.copy(self)      # dataclasses.replace re-runs __init__: 10x slower
        object.__setattr__(out, "level", level)
        object.__setattr__(out, "estimand", estimand)
        return out


#: ``route.frame(formula, data, options) -> state``; ``route.estimate(state, options) ->
#: state``; ``route.result(state, options) -> result``.  ``state``: the route's own dict.
Step = Callable[..., Any]


@dataclass(frozen=True)
class Route:
    """One way :func:`mixrank.fit` fits: when it applies, what it accepts, its three steps.

    Attributes
    ----------
    name : str
        The route's name (its module's name in :mod:`mixrank.routes`).
    applies : callable
        ``applies(options, formula) -> bool``: the routes are tried in the
        order of :data:`mixrank.routes.ROUTES`; the first that applies fits.
    accepts : frozenset of str
        The options of :class:`FitOptions` the route honours; the others, when
        set away from their defaults, are refused by the route's own message.
    frame, estimate, result : callable
        The three steps: data + formula -> the route's frame (and what it
        needs), -> the estimates, -> the result object.
    family : str, optional
        The response family the route fits (a key of :data:`mixrank.fit.FAMILIES`).
    engines : mapping, optional
        Engine name -> fitter of that family.
    """

    name: str
    applies: Callable[[FitOptions, Any], bool]
    accepts: frozenset[str]
    frame: Step
    estimate: Step
    result: Step
    family: str | None = None
    engines: Mapping[str, Callable[..., Any]] | None = None

    def refused(self, options: FitOptions) -> dict[str, Any]:
        """The options set away from their defaults that this route does not accept."""
        return {k: v for k, v in options.changed().items() if k not in self.accepts}

    def run(self, formula: Any, data: Any, options: FitOptions) -> Any:
        """The three steps in order."""
        return self.result(self.estimate(self.frame(formula, data, options), options), options)
