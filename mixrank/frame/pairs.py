"""Stage frame: which pairs of models of a frame to fit (``fit(pairs=)``).

Inputs: a :class:`~mixrank.frame.Frame` and the ``pairs`` argument (None,
one pair of model names or a list of pairs).  Outputs: the index pairs
``(j, k)`` into ``frame.models``, each pair once, in the orientation first
given.  Used by :func:`mixrank.fit` (re-exported as
``mixrank.fit.resolve_pairs``) and the judge-corrected fit.

Contents: :func:`resolve_pairs`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from ..errors import DataError, MixrankWarning
from .frame import Frame

__all__ = ["resolve_pairs"]


def resolve_pairs(frame: Frame, pairs: Sequence[tuple[str, str]] | None) -> list[tuple[int, int]]:
    """Index pairs to fit; all pairs with >= 2 common cells when ``pairs`` is None.

    ``pairs`` is a list of 2-tuples (or 2-lists) of model names, or one pair
    given as a 2-tuple of strings; anything else is a :class:`DataError`.
    """
    M = frame.n_models
    if M < 2:
        raise DataError(f"comparison factor {frame.spec.comparison!r} has a single level "
                        f"{frame.models!r}; at least two models are needed for a paired comparison")
    if pairs is None:
        out, skipped = [], []
        for j in range(M):
            for k in range(j + 1, M):
                if frame.stats.n_common[j, k] >= 2:
                    out.append((j, k))
                else:
                    skipped.append((frame.models[j], frame.models[k]))
        if skipped:
            warnings.warn(f"{len(skipped)} pair(s) share fewer than 2 cells and were not fitted, "
                          f"e.g. {skipped[:3]}", MixrankWarning, stacklevel=3)
        if not out:
            raise DataError("no pair of models shares at least 2 cells; nothing to compare")
        return out
    out, seen, repeated = [], set(), []
    for pr in _pair_list(pairs):
        j, k = frame.model_index(pr[0]), frame.model_index(pr[1])
        if j == k:
            raise DataError(f"pair {tuple(pr)!r} compares a model with itself")
        if (min(j, k), max(j, k)) in seen:   # a repeat or the reverse of an earlier pair
            repeated.append(tuple(pr))
            continue
        seen.add((min(j, k), max(j, k)))
        out.append((j, k))
    if repeated:
        warnings.warn(f"pairs= (--pair) names {len(repeated)} pair(s) twice (repeated or reversed: "
                      f"{repeated[:3]}{' ...' if len(repeated) > 3 else ''}); each pair is fitted "
                      "once, in the orientation first given, and counts once in the "
                      "multiplicity family", MixrankWarning, stacklevel=3)
    return out


_PAIRS_HELP = ("expected pairs=[('model_a', 'model_b'), ...] (a list of 2-tuples of model names), "
               "or one pair as a 2-tuple ('model_a', 'model_b')")


def _pair_list(pairs: Any) -> list[tuple[Any, Any]]:
    """``pairs`` as a list of 2-tuples, or a :class:`DataError` naming the expected shape."""
    if isinstance(pairs, (str, bytes)):
        raise DataError(f"pairs={pairs!r} is a string; {_PAIRS_HELP}")
    if isinstance(pairs, tuple) and len(pairs) == 2 and all(
            not isinstance(x, (list, tuple)) for x in pairs):
        return [pairs]
    try:
        items = list(pairs)
    except TypeError:
        raise DataError(f"pairs={pairs!r} is not a sequence; {_PAIRS_HELP}") from None
    out = []
    for pr in items:
        if isinstance(pr, (str, bytes)) or not isinstance(pr, (list, tuple)) or len(pr) != 2:
            raise DataError(f"each pair must be (model_a, model_b); got {pr!r}: {_PAIRS_HELP}")
        out.append((pr[0], pr[1]))
    if not out:
        raise DataError(f"pairs={pairs!r} is empty; {_PAIRS_HELP}, or pairs=None for all pairs")
    return out
