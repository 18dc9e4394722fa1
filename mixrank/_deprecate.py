"""Old spellings of arguments kept for one release (stage 0).

One vocabulary (docs/vocabulary.md): ``adjust=`` for every multiplicity
method, ``level=`` for every confidence level, ``draws=`` for every number of
Monte Carlo draws, ``pairs=`` for the set of pairs judged, ``family=`` only for
the distribution.  The former spellings still work for one release: they are
mapped onto the new keyword here, with a :class:`MixrankDeprecationWarning`
naming the new one.  Passing both spellings is an :class:`OptionError`.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .errors import MixrankDeprecationWarning, OptionError

__all__ = ["renamed", "warn_renamed", "warn_moved", "level_from_alpha", "former_names",
           "former_keywords", "former_column", "FORMER"]

_F = TypeVar("_F", bound=Callable[..., Any])

#: The name of the ``**`` parameter through which a function receives its former keyword
#: spellings (:func:`former_keywords` leaves it out of the signature it shows).
FORMER = "old"

#: Sentinel default for a keyword that was not passed.
_UNSET: Any = object()


def former_keywords(fn: _F) -> _F:
    """Show ``fn``'s real keywords only: its signature (``inspect.signature``, ``help()``,
    the API pages, IDEs that ask the interpreter) without the ``**old`` through which the
    former spellings still arrive.

    The function itself is unchanged (no wrapper): a former spelling still reaches ``old``,
    where :func:`renamed` / :func:`mixrank.inference.keywords.former` take it out with a
    :class:`MixrankDeprecationWarning` and
    :func:`mixrank.inference.keywords.unexpected_keywords` refuses anything left.
    """
    sig = inspect.signature(fn)
    shown = [p for p in sig.parameters.values()
             if not (p.kind is inspect.Parameter.VAR_KEYWORD and p.name == FORMER)]
    if len(shown) == len(sig.parameters):
        raise TypeError(f"{fn.__qualname__} has no **{FORMER} parameter to hide")
    setattr(fn, "__signature__", sig.replace(parameters=shown))  # noqa: B010
    return fn


def warn_renamed(old: str, new: str, *, where: str = "", stacklevel: int = 3) -> None:
    """Warn that ``old`` is the former spelling of ``new`` (one release of grace)."""
    site = f"{where}: " if where else ""
    warnings.warn(f"{site}{old} is the former name of {new}; it still works in this release "
                  f"and will be removed in the next -- write {new} instead "
                  "(docs/vocabulary.md)", MixrankDeprecationWarning, stacklevel=stacklevel)


def warn_moved(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that the name ``old`` moved to ``new`` (it still resolves for one release)."""
    warnings.warn(f"{old} has moved to {new}; the old name still works in this release and "
                  "will be removed in the next (docs/vocabulary.md)", MixrankDeprecationWarning,
                  stacklevel=stacklevel)


def former_names(module: str, names: Mapping[str, str],
                 namespace: Mapping[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) resolving the former names of its functions
    (``{old: new}``) for one release, with a :class:`MixrankDeprecationWarning`."""

    def __getattr__(name: str) -> Any:
        new = names.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warn_moved(f"{module}.{name}", f"{module}.{new}")
        return namespace[new]

    return __getattr__


def renamed(kwargs: dict[str, Any], old: str, new: str, value: Any, *, default: Any = None,
            where: str = "", stacklevel: int = 4) -> Any:
    """Resolve a renamed keyword: pop ``old`` from ``kwargs`` and reconcile it with ``new``.

    ``value`` is what the caller received for the new keyword (``default``
    when it was not passed).  Returns the value to use.  Raises
    :class:`OptionError` when both spellings were given with different values.
    """
    if old not in kwargs:
        return value
    legacy = kwargs.pop(old)
    warn_renamed(f"{old}=", f"{new}=", where=where, stacklevel=stacklevel)
    if value is not default and value is not _UNSET and legacy != value:
        raise OptionError(f"{where + ': ' if where else ''}got both {new}={value!r} and its "
                          f"former name {old}={legacy!r}; pass only {new}=")
    return legacy


def level_from_alpha(alpha: float | None, level: float | None, *, where: str = "",
                     stacklevel: int = 4) -> float | None:
    """Map a former ``alpha=`` onto ``level = 1 - alpha`` (with a deprecation warning).

    Returns ``level`` unchanged when ``alpha`` is None.
    """
    if alpha is None:
        return level
    warn_renamed("alpha=", "level= (level = 1 - alpha)", where=where, stacklevel=stacklevel)
    new = 1.0 - float(alpha)
    if level is not None and abs(float(level) - new) > 1e-12:
        raise OptionError(f"{where + ': ' if where else ''}got both level={level!r} and "
                          f"alpha={alpha!r} (level = 1 - alpha = {new:g}); pass only level=")
    return new


def former_column(table: Any, old: str, new: str) -> Any:
    """``table`` with the column ``old`` kept beside its new name ``new`` (same values, last)
    for one release, declared in ``attrs["mixrank"]["deprecated_columns"]``."""
    if new not in table.columns or old in table.columns:
        return table
    table[old] = table[new]
    meta = table.attrs.setdefault("mixrank", {})
    meta["deprecated_columns"] = {**meta.get("deprecated_columns", {}),
                                  old: f"{new} (removed in the next release)"}
    return table
