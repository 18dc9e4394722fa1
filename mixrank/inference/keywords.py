"""Stage inference: keyword helpers of the one vocabulary (docs/vocabulary.md).

Inputs: the keyword arguments an API function received.  Outputs: the value
of the new keyword (:func:`former`, :func:`alpha_from`) after taking out its
former spelling with a :class:`~mixrank.MixrankDeprecationWarning`
(:mod:`mixrank._deprecate`), and the one :class:`~mixrank.OptionError` for
a keyword left over (:func:`unexpected_keywords`).  The registry of
``adjust=`` values is :data:`mixrank.inference.multiplicity.ADJUST`.
"""

from __future__ import annotations

from typing import Any

from mixrank._deprecate import level_from_alpha, renamed
from mixrank._util import check_level
from mixrank.errors import OptionError

__all__ = ["former", "alpha_from", "unexpected_keywords"]


def former(kwargs: dict[str, Any], old: str, new: str, value: Any, default: Any, *,
           where: str = "") -> Any:
    """The value of keyword ``new`` given its former spelling ``old`` (popped from ``kwargs``).

    :func:`mixrank._deprecate.renamed` (a deprecation warning; both
    spellings with different values are an :class:`OptionError`), with
    ``value == default`` read as "``new`` not passed".
    """
    if old not in kwargs:
        return value
    unset = value is default or (type(value) is type(default) and value == default)
    return renamed(kwargs, old, new, value, default=value if unset else default, where=where,
                   stacklevel=5)


def alpha_from(level: float | None, kwargs: dict[str, Any], *, default: float,
               where: str = "") -> float:
    """The two-sided alpha of ``level`` (None: ``default``), or of a former ``alpha=``.

    ``alpha = 1 - level`` rounded to 12 digits (so level 0.95 gives alpha
    0.05 exactly, the number the verdict formulas were validated with).  A
    former ``alpha=`` in ``kwargs`` is popped with a deprecation warning and
    used as given (its range is checked by the caller); ``level=`` and a
    different ``alpha=`` together are an :class:`OptionError`.
    """
    alpha = kwargs.pop("alpha", None)
    if alpha is not None:
        level_from_alpha(alpha, level, where=where, stacklevel=5)
        return alpha
    lev = default if level is None else check_level(level, OptionError)
    return round(1.0 - lev, 12)


def unexpected_keywords(kwargs: dict[str, Any], where: str, allowed: Any = ()) -> None:
    """Refuse the keywords left in ``kwargs`` after the former spellings were taken out."""
    if kwargs:
        names = ", ".join(f"{k}=" for k in kwargs)
        ok = f"; its keywords are {', '.join(f'{a}=' for a in allowed)}" if allowed else ""
        raise OptionError(f"{where}() got unexpected keyword(s) {names}{ok}")
