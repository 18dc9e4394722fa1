"""Stage inference: the exact sign test of a pair without an estimable variance.

Inputs: a :class:`~mixrank.frame.Frame` and one degenerate
:class:`~mixrank.engine.records.PairFit` (identical paired differences, or
identical unit means under ``method="aggregate"``).
Outputs: the two-sided and one-sided p-values of the exact sign test and the
number of independent signs it counts (:func:`degenerate_sign_test`).

Why (docs/hardening.md §1): a pair whose differences are all equal to the same
non-zero value has no variance for the mixed model's t, but it is the
strongest evidence a sign test can see.  Every one of the ``n`` independent
units agrees on the sign, so under "no difference" (each sign ± with
probability ½) ``P = 2 · 0.5^n`` two-sided and ``0.5^n`` one-sided in the
observed direction -- McNemar's exact test for 0/1 scores, where ``n`` is
the number of discordant cells.  The units are the coarsest of the formula's
random terms (the fewest levels with common cells): signs within one level of
a random term are not independent.  Without random terms the cells are the
units.  Identical score vectors (differences exactly 0) keep p = 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.estimability import levels_used

__all__ = ["degenerate_sign_test", "sign_units"]


def sign_units(frame: Any, model_a: str, model_b: str) -> int:
    """Independent signs of a pair: the fewest levels with common cells over the formula's
    random terms, or the number of common cells without random terms."""
    j, k = frame.model_index(model_a), frame.model_index(model_b)
    mask = frame.common_mask(j, k)
    counts = [levels_used(frame, t, mask) for t in frame.spec.term_names]
    return min(counts) if counts else int(np.count_nonzero(mask))


def degenerate_sign_test(frame: Any, pair: Any) -> tuple[float, float, int]:
    """``(p_value, p_greater, n)`` of the exact sign test of a degenerate pair.

    ``p_greater`` tests H1 "model_a better" (``estimate > 0``).  A zero estimate
    (identical vectors) or a pair whose signs cannot all be counted as one
    direction gives ``(1, 1, n)``; ``n`` is :func:`sign_units`.

    Validated against ``scipy.stats.binomtest(n, n, 0.5)`` and
    :func:`mixrank.mcnemar` (exact) on consistent 0/1 gaps, where all ``n``
    discordant cells favour one model (``tests/test_hostile_fits.py``).
    """
    n = sign_units(frame, pair.model_a, pair.model_b)
    est = float(pair.estimate)
    if est == 0.0 or not np.isfinite(est) or n < 1:
        return 1.0, 1.0, n
    one = float(0.5 ** n)
    return min(1.0, 2.0 * one), (one if est > 0 else 1.0), n
