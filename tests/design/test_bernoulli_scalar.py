"""The scalar bisection of the paired-Bernoulli boundary equals the array bisection bit for bit."""

import numpy as np

from mixrank.design.anytime.bernoulli import _BISECT, _log_e, _threshold


def _array_bisection(d: np.ndarray, a: np.ndarray, log_target: float) -> np.ndarray:
    """The array path of _threshold, written out (every element solved together)."""
    out = np.full(d.shape, np.inf)
    top = _log_e(d, d, a) >= log_target
    lo, hi = np.zeros(int(top.sum())), d[top].copy()
    dd, aa = d[top], a[top]
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        up = _log_e(mid, dd, aa) >= log_target
        hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
    out[top] = hi
    return out


def test_scalar_threshold_is_the_array_threshold():
    rng = np.random.default_rng(3)
    d = np.concatenate([[0.5, 1.0, 3.0, 7.0], rng.uniform(0.5, 5000.0, 60)])
    a = np.exp(rng.uniform(-3.0, 6.0, d.size))
    for alpha in (0.05, 0.01, 0.2):
        lt = float(np.log(1.0 / alpha))
        ref = _array_bisection(d, a, lt)
        assert np.isinf(ref).any() and np.isfinite(ref).any()   # both branches exercised
        one = np.array([float(_threshold(np.array(x), np.array(y), lt)) for x, y in zip(d, a)])
        assert np.array_equal(one, ref)
        assert np.array_equal(_threshold(d, a, lt), ref)        # the array path itself
        shaped = _threshold(np.array([d[5]]), np.array([a[5]]), lt)
        assert shaped.shape == (1,) and shaped[0] == ref[5]
