"""Stage inference: compact letter display of pairwise decisions (Piepho 2004).

Inputs: the models in display order (best first) and a symmetric boolean
matrix of rejected pairs (each pair's family-wise test at the chosen level).
Outputs: one letter string per model (:func:`compact_letters`) and the 0/1
letter matrix behind it (:func:`letter_matrix`): two models share a letter
exactly when their pair is not rejected.

Contents: Piepho's insert-and-absorb algorithm as R's
``multcompView::multcompLetters`` (0.1-8) implements it, step for step -- the
rejected pairs visited in the order of the lower triangle (column by column),
each splitting every letter column both models carry into two (one without
each model), redundant columns (a subset of another) absorbed after each
insertion, the columns sorted by their first model (neighbours that tie: by the rows below, recursively)
and named ``a, ..., z, A, ..., Z`` then ``.a, .b, ...`` as multcompLetters'
``makeLtrs``.  So the same decisions give the same letters as multcompLetters,
not only the same grouping (tests/inference/test_letters.py and the live R
comparison tests/inference/test_letters_live.py).

References: Piepho, H.-P. (2004). An algorithm for a letter-based
representation of all-pairwise comparisons. Journal of Computational and
Graphical Statistics 13(2), 456-466.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import numpy as np

from mixrank.errors import DesignError

__all__ = ["compact_letters", "letter_matrix", "letter_names"]

#: multcompLetters' default ``Letters``: ``c(letters, LETTERS, ".")``.
LETTERS: tuple[str, ...] = (*string.ascii_lowercase, *string.ascii_uppercase, ".")


def _absorb(A: np.ndarray) -> np.ndarray:
    """Drop every column contained in another (multcompLetters' ``absorb``): the first pair
    of columns ``i < j`` (in row-major order) where one holds the other, ``j`` dropped if
    inside ``i``, else ``i``; then again from the start."""
    while A.shape[1] > 1:
        # outside[j, i]: rows where column j is TRUE and column i is not (0: j inside i)
        outside = A.T.astype(np.int32) @ (~A).astype(np.int32)
        inside = outside == 0
        hit = np.argwhere(np.triu(inside | inside.T, 1))
        if not len(hit):
            break
        i, j = hit[0]
        A = np.delete(A, j if inside[j, i] else i, axis=1)
    return A


def _sort_columns(B: np.ndarray) -> np.ndarray:
    """multcompLetters' ``sortCols``: columns ordered by their first TRUE row (stably); then
    for each two neighbours that start on the same row, left to right, those two columns
    sorted again on the rows below it (recursively)."""
    first = np.array([int(np.argmax(c)) for c in B.T])
    B = B[:, np.argsort(first, kind="stable")]
    first = np.array([int(np.argmax(c)) for c in B.T])
    k = B.shape[0]
    for i in np.flatnonzero(np.diff(first) == 0):
        if first[i] + 1 >= k:           # two identical columns: absorbed before, never here
            continue
        rows = slice(first[i] + 1, k)
        B[rows, i:i + 2] = _sort_columns(B[rows, i:i + 2].copy())
    return B


def letter_names(k: int, letters: Sequence[str] = LETTERS) -> list[str]:
    """The names of ``k`` letter columns: multcompLetters' ``makeLtrs`` (``a``...``Z``, then
    the last symbol ``.`` prefixed: ``.a``, ``.b``, ...)."""
    letters = list(letters)
    n = len(letters)
    if k < n:
        return letters[:k]
    deeper = [letters[-1] + x for x in letters[:-1]] + [letters[-1]]
    return letters[:-1] + letter_names(k - n + 1, deeper)


def letter_matrix(rejected: np.ndarray) -> np.ndarray:
    """The boolean letter matrix (models x letters) of a symmetric rejection matrix.

    ``rejected[i, j]`` True: models i and j differ (their pair is rejected).
    Row i column c True: model i carries letter c.  Two rows share a column
    exactly when their pair is not rejected (Piepho 2004, insert-and-absorb).
    """
    R = np.asarray(rejected, dtype=bool)
    n = R.shape[0]
    L = np.ones((n, 1), dtype=bool)
    # multcompLetters visits x[lower.tri(x)]: column j, rows i > j, as the pair (j, i)
    for j in range(n - 1):
        for i in range(j + 1, n):
            if not R[i, j]:
                continue
            both = L[j] & L[i]
            if not both.any():
                continue
            A1 = L[:, both].copy()
            A1[j, :] = False
            L[i, both] = False
            L = _absorb(np.concatenate([L, A1], axis=1))
    return _sort_columns(L)


def compact_letters(models: Sequence[str], rejected: np.ndarray) -> list[str]:
    """One letter string per model (``"a"``, ``"ab"``, ...): models share a letter exactly
    when their pair is not rejected.

    Parameters
    ----------
    models : sequence of str
        The models in display order; the first model's letters start at ``a``
        (order them best first for a leaderboard).
    rejected : array of bool, shape (M, M)
        Symmetric; ``rejected[i, j]`` True when models i and j differ.

    Returns
    -------
    list of str
        The letters of each model, in the order of ``models``.

    Raises
    ------
    DesignError
        Fewer than three models (one pair needs no letters: read its test), a
        matrix that is not M x M or not symmetric.

    Examples
    --------
    >>> import numpy as np
    >>> r = np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=bool)
    >>> compact_letters(["x", "y", "z"], r)
    ['a', 'ab', 'b']
    """
    names = [str(m) for m in models]
    R = np.asarray(rejected, dtype=bool)
    if len(names) < 3:
        raise DesignError(f"a compact letter display needs at least 3 models; got "
                          f"{len(names)} ({', '.join(map(repr, names))}): with one pair, read "
                          "its test in contrasts() (p_adjusted)")
    if R.shape != (len(names), len(names)):
        raise DesignError(f"the rejection matrix is {R.shape}, expected "
                          f"({len(names)}, {len(names)}) for the {len(names)} models")
    if not np.array_equal(R, R.T):
        raise DesignError("the rejection matrix is not symmetric: a pair is rejected or not "
                          "whichever way round it is written")
    L = letter_matrix(R)
    cols = letter_names(L.shape[1])
    return ["".join(c for c, on in zip(cols, row) if on) for row in L]
