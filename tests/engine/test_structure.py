"""The grouped sums of mixrank.engine.structure against their definitions.

``G_g = sum_{i in g} z_i z_i'`` (packed), ``h_g = sum_{i in g} c1_i z_i`` and
``k_g = sum_{i in g} s1_i z_i`` are computed here directly from the count
matrix ``z12`` and the group of each term-1 level, in float64, on random
unbalanced designs: one whose counts allow the exact float32 products and
one whose counts exceed 2^24 in ``sum c1^2`` (float64 products).
"""

from __future__ import annotations

import numpy as np
import pytest

from mixrank.engine.structure import build_structure, pair_sums


def _design(kind: str, rng: np.random.Generator):
    if kind == "small":
        item = np.repeat(np.arange(300), 20)
        sub = item // 10
        prompt = np.tile(np.arange(20), 300)
        keep = rng.random(item.size) > 0.35
        return [item[keep], sub[keep], prompt[keep]], [300, 30, 20]
    item = np.repeat(np.arange(8), 5000)       # counts 5000: sum c1^2 per group > 2^24
    sub = item // 2
    prompt = rng.integers(0, 5, item.size)
    return [item, sub, prompt], [8, 4, 5]


@pytest.mark.parametrize("kind", ["small", "large_counts"])
def test_grouped_sums_match_their_definitions(kind):
    rng = np.random.default_rng(3)
    codes, levels = _design(kind, rng)
    counts = [np.bincount(c, minlength=L) for c, L in zip(codes, levels)]
    st = build_structure(codes, levels, ["item", "sub", "prompt"], counts=counts)
    plain = build_structure(codes, levels, ["item", "sub", "prompt"])
    assert st.mode == "dense" and st.G is not None and st.names[0] == "item"
    z12, grp, c1 = st.z12, st.groups, st.c1
    nG, q2 = len(st.group_values), z12.shape[1]
    if kind == "large_counts":
        assert float(st.cc1.max()) >= 2.0 ** 24
    iu = np.triu_indices(q2)
    want_G = np.stack([(z12[grp == g].T @ z12[grp == g])[iu] for g in range(nG)])
    np.testing.assert_array_equal(st.G, want_G)
    np.testing.assert_array_equal(plain.G, want_G)
    np.testing.assert_array_equal(st.h, np.stack([(z12[grp == g] * c1[grp == g, None]).sum(0)
                                                   for g in range(nG)]))
    d = rng.normal(size=codes[0].size)
    ps = pair_sums(st, d)
    s1 = np.bincount(codes[0], weights=d, minlength=levels[0])
    want_k = np.stack([(z12[grp == g] * s1[grp == g, None]).sum(0) for g in range(nG)])
    np.testing.assert_allclose(ps.k, want_k, rtol=1e-12, atol=1e-12 * np.abs(want_k).max())


def test_nested_first_term_gives_the_same_structure_and_sums():
    # items nested in subjects: with the parent map the subject block of z12 is placed,
    # not counted, and the subject sums come from the item sums; same numbers either way
    rng = np.random.default_rng(5)
    codes, levels = _design("small", rng)
    names = ["item", "sub", "prompt"]
    parents = {("item", "sub"): np.arange(300) // 10}
    fast = build_structure(codes, levels, names, parents=parents)
    plain = build_structure(codes, levels, names)
    assert [p is not None for p in fast.parents] == [True, False]
    assert fast.names == plain.names
    for field in ("G", "h", "z22", "c2", "zsort"):
        np.testing.assert_array_equal(getattr(fast, field), getattr(plain, field))
    np.testing.assert_array_equal(fast.z12, plain.z12)
    d = rng.normal(size=codes[0].size)
    pf, pp = pair_sums(fast, d), pair_sums(plain, d)
    for a, b in zip(pf.s, pp.s):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(pf.k, pp.k, rtol=1e-12, atol=1e-12)
