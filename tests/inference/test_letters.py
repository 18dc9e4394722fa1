"""Compact letter display (:mod:`mixrank.inference.letters`) against R's multcompView.

* ``tests/reference/letters.json`` (written by ``tests/reference/letters.R``):
  50 p-value matrices (3 to 30 models) with the letters
  ``multcompView::multcompLetters(p, threshold = 0.05)`` 0.1-8 gives; the same
  decisions give the same letters, character for character.
* The defining property on seeded random decision matrices: two models share
  a letter exactly when their pair is not rejected.
* Bad input: fewer than 3 models, a matrix of the wrong shape or not symmetric.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mixrank.errors import DesignError
from mixrank.inference.letters import compact_letters, letter_matrix, letter_names

REF = Path(__file__).resolve().parents[1] / "reference" / "letters.json"


def grouping(models, letters):
    """The letter display up to relabelling: the set of model sets, one per letter."""
    groups: dict[str, set] = {}
    for m, s in zip(models, letters):
        for ch in _symbols(s):
            groups.setdefault(ch, set()).add(m)
    return {frozenset(g) for g in groups.values()}


def _symbols(s):
    """A letter string split into letters (``.a`` is one letter after ``Z``)."""
    out, i = [], 0
    while i < len(s):
        j = i + 1
        while s[i:j] and s[j - 1] == "." and j < len(s):
            j += 1
        out.append(s[i:j])
        i = j
    return out


def share_iff_not_rejected(models, letters, rejected):
    sets = [set(_symbols(s)) for s in letters]
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            assert bool(sets[i] & sets[j]) == (not rejected[i, j]), (models[i], models[j])


def test_letters_equal_multcompview_on_the_stored_cases():
    cases = json.loads(REF.read_text())["cases"]
    assert len(cases) == 50
    for c in cases:
        p = np.array(c["p"], dtype=float)
        got = compact_letters(c["models"], p < c["alpha"])
        assert got == c["letters"], (len(c["models"]), got, c["letters"])
        assert grouping(c["models"], got) == grouping(c["models"], c["letters"])
        share_iff_not_rejected(c["models"], got, p < c["alpha"])


@pytest.mark.parametrize("seed", range(40))
def test_share_a_letter_iff_not_rejected(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 26))
    R = np.triu(rng.random((n, n)) < rng.uniform(0.05, 0.95), 1)
    R = R | R.T
    models = [f"model_{k}" for k in range(n)]
    letters = compact_letters(models, R)
    share_iff_not_rejected(models, letters, R)
    L = letter_matrix(R)
    assert L.any(axis=0).all()                      # no empty letter
    assert not any((L[:, a] <= L[:, b]).all() for a in range(L.shape[1])   # none redundant
                   for b in range(L.shape[1]) if a != b)


def test_hand_examples():
    none = np.zeros((4, 4), dtype=bool)
    assert compact_letters(list("wxyz"), none) == ["a"] * 4
    every = ~np.eye(4, dtype=bool)
    assert compact_letters(list("wxyz"), every) == ["a", "b", "c", "d"]
    # a chain: w-x, x-y, y-z not rejected, every other pair rejected
    chain = every.copy()
    for i in range(3):
        chain[i, i + 1] = chain[i + 1, i] = False
    assert compact_letters(list("wxyz"), chain) == ["a", "ab", "bc", "c"]


def test_letter_names_past_z_follow_multcompview():
    names = letter_names(60)
    assert names[:3] == ["a", "b", "c"] and names[25:27] == ["z", "A"] and names[51] == "Z"
    assert names[52:55] == [".a", ".b", ".c"] and len(set(names)) == 60


def test_bad_input():
    with pytest.raises(DesignError, match="at least 3 models; got 2"):
        compact_letters(["a", "b"], np.array([[False, True], [True, False]]))
    with pytest.raises(DesignError, match="at least 3 models; got 1"):
        compact_letters(["a"], np.zeros((1, 1), dtype=bool))
    with pytest.raises(DesignError, match=r"is \(2, 2\), expected \(3, 3\)"):
        compact_letters(["a", "b", "c"], np.zeros((2, 2), dtype=bool))
    R = np.zeros((3, 3), dtype=bool)
    R[0, 1] = True
    with pytest.raises(DesignError, match="not symmetric"):
        compact_letters(["a", "b", "c"], R)
