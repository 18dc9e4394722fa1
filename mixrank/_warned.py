"""The warnings a fit raised, kept beside its result for the report's first section.

:func:`mixrank.fit` records every warning raised while fitting (and re-raises it through
the caller's filters, so nothing is hidden); :func:`raised` gives them back as
``(category name, message)`` pairs (a report must not bury, e.g., an
``OmittedKeyWarning``).  Contents: :func:`recording`, :func:`raised`.
"""

from __future__ import annotations

import sys
import warnings
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["recording", "raised"]

_RAISED: weakref.WeakKeyDictionary[Any, list[tuple[str, str]]] = weakref.WeakKeyDictionary()
_REGISTRY: dict[Any, Any] = {}      # the re-raised warnings' "once per location" registry


def recording(run: Callable[[], Any]) -> Any:
    """``run()``, with every warning it raised recorded against its result and re-raised.

    A warning whose ``stacklevel`` pointed at the caller of :func:`mixrank.fit` now lands
    on this wrapper's frame; it is re-raised at the caller's line, where it was before.
    """
    caller = sys._getframe(2)        # recording <- mixrank.fit <- the user's line
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = run()
    seen: list[tuple[str, str]] = []
    for w in caught:
        key = (w.category.__name__, str(w.message))
        if key not in seen:
            seen.append(key)
    try:
        _RAISED[out] = seen
    except TypeError:             # a result that cannot be weakly referenced
        pass
    for w in caught:
        here = w.filename == __file__
        warnings.warn_explicit(w.message, w.category,
                               caller.f_code.co_filename if here else w.filename,
                               caller.f_lineno if here else (w.lineno or 0),
                               registry=_REGISTRY)
    return out


def raised(result: Any) -> list[tuple[str, str]]:
    """``(category name, message)`` of each distinct warning the fit of ``result`` raised."""
    try:
        return list(_RAISED.get(result, []))
    except TypeError:
        return []
