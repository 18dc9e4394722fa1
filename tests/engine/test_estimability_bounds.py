"""The estimability and weak-design screens decide from per-model level counts when they can
(engine/estimability.py ``level_bounds``) and count exactly otherwise: their answers must be
those of the exact common-cell counts on every design, dense or compressed."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.engine import estimability as es
from mixrank.frame.columns import compress_frame

FORMULA = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"


def _design(seed: int, models: int = 6) -> pd.DataFrame:
    """Random designs: whole levels, single cells and prompt modes missing per model, so
    that some pairs are weak, some confounded and some fine."""
    rng = np.random.default_rng(seed)
    subjects, questions, prompts = rng.integers(2, 7), rng.integers(1, 4), rng.integers(2, 4)
    rows = []
    for m in range(models):
        keep_s = rng.random(subjects) >= rng.choice([0.0, 0.3, 0.6])
        keep_p = rng.random(prompts) >= rng.choice([0.0, 0.5])
        miss = rng.choice([0.0, 0.2, 0.5])
        for s, q, p in itertools.product(range(subjects), range(questions), range(prompts)):
            if keep_s[s] and keep_p[p] and rng.random() >= miss:
                rows.append((f"m{m}", f"s{s}", f"s{s}q{q}", f"p{p}", int(rng.random() < 0.5)))
    return pd.DataFrame(rows, columns=["model", "subject", "question", "prompt", "correct"])


def _exact_levels(frame, j, k):
    mask = frame.observed[:, j] & frame.observed[:, k]
    return tuple(int(np.count_nonzero(np.bincount(frame.term_codes[t][mask],
                                                  minlength=frame.term_levels[t])))
                 for t in frame.spec.term_names)


def _exact_reason(frame, j, k):
    n = int(np.count_nonzero(frame.observed[:, j] & frame.observed[:, k]))
    if n < 2:
        return True
    return any(2 <= u == n for u in _exact_levels(frame, j, k))


@pytest.mark.parametrize("seed", range(40))
def test_bounds_bracket_the_exact_counts_and_the_screens_agree(seed):
    data = _design(seed)
    if seed == 21:      # a model sharing no cell: the frame builder refuses it, and says so
        with pytest.raises(mixrank.DataError, match="share no cell"):
            mixrank.build_frame(data, FORMULA)
        return
    _check_screens(data)


@pytest.mark.parametrize("seed", [s for s in range(60) if s % 3 == 0])
def test_few_models_count_exactly_with_the_same_answers(seed):
    """Up to BOUNDS_FROM_MODELS - 1 models the screens count each pair exactly (cheaper than
    the per-model level counts there): the same answers."""
    data = _design(seed, models=int(2 + seed % 2))
    try:
        frame = mixrank.build_frame(data, FORMULA)
    except mixrank.DataError:        # a model sharing no cell: refused (tested above)
        return
    assert not es._bounds_pay(frame)
    _check_screens(data)


def _check_screens(data: pd.DataFrame) -> None:
    dense = mixrank.build_frame(data, FORMULA)
    for frame in (dense, compress_frame(dense)):
        es._PAIR_LEVELS[:] = [None, {}]
        idx = list(itertools.combinations(range(frame.n_models), 2))
        for j, k in idx:
            exact = _exact_levels(dense, j, k)
            assert bool(es.not_estimable(frame, j, k)) == _exact_reason(dense, j, k)
            assert es.pair_levels(frame, j, k) == exact
            lo, hi, two = es.level_bounds(frame, j, k)
            assert all(a <= e <= b for a, e, b in zip(lo, exact, hi))
            mask = dense.observed[:, j] & dense.observed[:, k]
            for t, tw in zip(frame.spec.term_names, two):
                per = np.bincount(dense.term_codes[t][mask], minlength=dense.term_levels[t])
                assert not tw or per.max() >= 2
            assert bool(es.not_estimable(frame, j, k)) == _exact_reason(dense, j, k)
        for threshold in (2, 3, 5):
            es._PAIR_LEVELS[:] = [None, {}]
            got = {(w.term, w.levels, w.n_pairs) for w in es.weak_terms(frame, idx, threshold)}
            want = set()
            for i, t in enumerate(frame.spec.term_names):
                used = [_exact_levels(dense, j, k)[i] for j, k in idx]
                few = [u for u in used if u < threshold]
                if few:
                    want.add((t, min(few), len(few)))
            assert got == want


def test_level_counts_are_each_models_cells_per_level():
    data = _design(3)
    frame = mixrank.build_frame(data, FORMULA)
    for f in (frame, compress_frame(frame)):
        for t in f.spec.term_names:
            total, per = f.level_counts(t)
            codes = frame.term_codes[t]
            assert total.tolist() == np.bincount(codes, minlength=frame.term_levels[t]).tolist()
            for j in range(frame.n_models):
                want = np.bincount(codes[frame.observed[:, j]], minlength=frame.term_levels[t])
                assert per[j].tolist() == want.tolist()
            assert per.dtype == np.uint8       # levels of at most 255 cells: one byte each
