"""The small-pair path computed with fewer array operations (docs/speed.md §7).

References, each independent of the code it checks:

* Henderson's method-1 system written term by term from its definition
  (``SSB_r`` and ``k_rt`` of :func:`mixrank.engine.lmm.newton.henderson_start`'s
  docstring, with explicit cell-count tables) against the vectorised solve;
* the derivatives of the dense mode from the packed ``G`` (each evaluation
  unpacking it) against the unpacked copy a small structure keeps;
* the contrasts table built column by column against ``pandas.DataFrame(rows)``;
* the lazily computed level sums against the sums computed cell by cell;
* ``Frame.n_observed`` against a count over the observed mask;
* ``crossed_terms`` (which reads the frame's nesting map) against the direct
  check of every level, on designs with nested, crossed and equal-level terms;
* Holm / BH of a single p-value against statsmodels' ``multipletests``.
"""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from mixrank import build_frame
from mixrank._util import tidy
from mixrank.engine import structure
from mixrank.engine.lmm import reml, reml_hess
from mixrank.engine.lmm.newton import henderson_start
from mixrank.engine.lmm.unit_se import crossed_terms
from mixrank.engine.structure import build_structure, pair_sums
from mixrank.inference.multiplicity import adjust


def _design(seed: int, R: int, missing: float):
    rng = np.random.default_rng(seed)
    n_sub, n_q, n_p = 9, 5, 6
    item = np.repeat(np.arange(n_sub * n_q), n_p)
    sub = item // n_q
    prompt = np.tile(np.arange(n_p), n_sub * n_q)
    keep = rng.random(item.size) >= missing
    keep[prompt == n_p - 1] = False              # an empty level of a block-2 term
    all_codes = [item[keep], sub[keep], prompt[keep]]
    all_levels = [n_sub * n_q, n_sub, n_p]
    codes, levels = all_codes[:R], all_levels[:R]
    if R == 2:
        codes, levels = [item[keep], prompt[keep]], [n_sub * n_q, n_p]
    d = 0.1 + rng.normal(0, 1.0, keep.sum())
    for c, L in zip(codes, levels):
        d += rng.normal(0, 0.5, L)[c]
    st = build_structure(codes, levels, [f"t{i}" for i in range(R)])
    return st, pair_sums(st, d), codes, levels, d


def _henderson_by_definition(codes, levels, d):
    """Henderson's method 1 from its definition, term by term with explicit count tables."""
    n, R = len(d), len(codes)
    S = d.sum()
    counts = [np.bincount(c, minlength=L).astype(float) for c, L in zip(codes, levels)]
    K = np.zeros((R + 1, R + 1))
    rhs = np.zeros(R + 1)
    for r in range(R):
        used = counts[r] > 0
        s_r = np.bincount(codes[r], weights=d, minlength=levels[r])
        rhs[r] = np.sum(s_r[used] ** 2 / counts[r][used]) - S * S / n
        K[r, R] = used.sum() - 1
        for t in range(R):
            nlm = np.zeros((levels[r], levels[t]))
            np.add.at(nlm, (codes[r], codes[t]), 1.0)
            K[r, t] = np.sum(nlm[used] ** 2 / counts[r][used][:, None]) - np.sum(counts[t] ** 2) / n
    K[R, :R] = [n - np.sum(c ** 2) / n for c in counts]
    K[R, R] = n - 1
    rhs[R] = np.sum(d * d) - S * S / n
    x = np.linalg.solve(K, rhs)
    return np.maximum(x[:R], 0.0) / x[R]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("R", [2, 3])
def test_henderson_start_equals_the_system_written_from_its_definition(seed, R):
    st, ps, codes, levels, d = _design(seed, R, missing=0.3)
    got = henderson_start(reml.make_objective(st, ps))
    # the structure holds the terms in block order (most levels first)
    want = _henderson_by_definition([codes[r] for r in st.order], [levels[r] for r in st.order], d)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("seed", range(2))
def test_unpacked_g_gives_the_derivatives_of_the_packed_one(seed):
    st, ps, *_ = _design(seed, 3, missing=0.25)
    assert st.G is not None and st.G_full is not None
    q2 = st.z22.shape[0]
    np.testing.assert_array_equal(st.G_full.reshape(-1, q2, q2), reml_hess.unpack_many(st.G, q2))
    theta = np.array([0.7, 0.4, 0.3])
    kept = reml_hess._dense_hessian(st, ps, theta)
    packed_only = dataclasses.replace(st, G_full=None)   # unpacks at every evaluation
    ps.memo.clear()
    packed = reml_hess._dense_hessian(packed_only, ps, theta)
    for a, b in zip(kept, packed):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())


def test_large_structures_keep_only_the_packed_g(monkeypatch):
    monkeypatch.setattr(structure, "FULL_G_LIMIT", 10)
    st, *_ = _design(0, 3, missing=0.25)
    assert st.G is not None and st.G_full is None


ROW_SETS = [
    [dict(model_a="a", model_b="b", estimate=0.1, n=3, note=""),
     dict(model_a="a", model_b="c", estimate=np.float64(-0.2), n=np.int64(4), note="x")],
    [dict(a=1, b=2.5, c=True, d=None, e="s")],
    [dict(a=1, b=np.nan), dict(a=2.5, b=1)],                       # int and float mixed
    [dict(a="x", b=np.float32(1.5)), dict(a=None, b=np.float32(2))],
    [dict(a=1, b=2), dict(b=3, a=4)],                               # keys in another order
    [dict(a=1), dict(a=2, b=3)],                                    # a missing key
    [dict(a=2 ** 63, b="big")],                                     # beyond int64
    [],
]


@pytest.mark.parametrize("rows", ROW_SETS)
def test_tables_built_column_by_column_equal_pandas_from_rows(rows):
    got, want = tidy(rows), pd.DataFrame(rows)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.dtypes) == list(want.dtypes)


def _frame(seed: int = 0, models: int = 3):
    rng = np.random.default_rng(seed)
    rows = [dict(model=f"m{j}", subject=f"s{s}", question=f"s{s}q{q}", prompt=f"p{p}",
                 correct=float(rng.random() < 0.6))
            for j in range(models) for s in range(5) for q in range(4) for p in range(3)
            if rng.random() > 0.2]
    return build_frame(pd.DataFrame(rows),
                       "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)")


def test_level_sums_are_computed_when_read_and_equal_the_cell_sums():
    fr = _frame()
    sums = fr.stats.level_sums
    assert sums._done is None                                   # nothing computed by the build
    assert set(sums) == set(fr.spec.term_names) and len(sums) == 3
    back = pickle.loads(pickle.dumps(fr.stats)).level_sums     # picklable before it is read
    y0 = np.where(fr.observed, fr.scores, 0.0)
    for t in fr.spec.term_names:
        want = np.zeros((fr.term_levels[t], fr.n_models))
        np.add.at(want, fr.term_codes[t], y0)
        np.testing.assert_allclose(sums[t], want, rtol=1e-14, atol=1e-12)
        np.testing.assert_array_equal(back[t], sums[t])
    with pytest.raises(KeyError):
        sums["nope"]


def test_cells_per_model_are_the_observed_counts():
    fr = _frame(1, models=4)
    np.testing.assert_array_equal(fr.n_observed(), fr.observed.sum(axis=0))
    assert fr.n_observed().dtype == np.int64


def _crossed_directly(fr, unit):
    u = fr.term_codes[unit]
    out = []
    for t in fr.spec.term_names:
        if t == unit:
            continue
        levels_of_unit = pd.Series(u).groupby(fr.term_codes[t]).nunique()
        if (levels_of_unit > 1).any():
            out.append(t)
    return out


@pytest.mark.parametrize("unit", ["subject", "subject:question", "prompt"])
def test_crossed_terms_read_from_the_nesting_map_equal_the_direct_check(unit):
    fr = _frame(2)
    assert crossed_terms(fr, unit) == _crossed_directly(fr, unit)


def test_crossed_terms_with_as_many_levels_as_the_unit():
    # 'batch' has the levels of 'subject' relabelled (nested both ways) and 'mode' as many
    # levels crossed with it: the equal-level case is checked directly
    rows = [dict(model=m, subject=f"s{s}", batch=f"b{(s * 7) % 4}", mode=f"x{(s + p) % 4}",
                 prompt=f"p{p}", correct=float((s + p + j) % 3 == 0))
            for j, m in enumerate(["a", "b"]) for s in range(4) for p in range(4)]
    fr = build_frame(pd.DataFrame(rows),
                     "correct ~ model + (1|subject) + (1|batch) + (1|mode)",
                     pair_by=["subject", "prompt", "batch", "mode"])
    assert crossed_terms(fr, "subject") == _crossed_directly(fr, "subject") == ["mode"]


@pytest.mark.parametrize("method,sm", [("holm", "holm"), ("bh", "fdr_bh"),
                                        ("bonferroni", "bonferroni")])
@pytest.mark.parametrize("p", [0.0, 0.03, 0.7, 1.0])
def test_one_p_value_is_left_as_it_is(method, sm, p):
    assert adjust([p], method=method)[0] == multipletests([p], method=sm)[1][0] == p
