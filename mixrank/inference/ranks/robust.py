"""Stage inference: robust one-sided tests of a pair's unit means for rank intervals.

Inputs: one pair's unit-level mean differences (from
:func:`mixrank.inference.ranks.data.pair_unit_means`), a random generator.
Outputs: ``(estimate, std_error, df, stat_jk, stat_kj, p_jk, p_kj)`` like
:func:`~mixrank.inference.ranks.data.unit_mean_tests`.
Contents (docs/sensitivity.md §4, the rank-uncertainty paper's robust
alternatives): :func:`bootstrap_t_tests` (paired bootstrap-t),
:func:`sign_flip_tests` (sign-flip permutation), :data:`ROBUST_TESTS`.
"""

from __future__ import annotations

import numpy as np

from mixrank.inference.paired_resampling import sign_flip

__all__ = ["bootstrap_t_tests", "sign_flip_tests", "ROBUST_TESTS"]

#: The resampling tests of ``rank_intervals(test=...)``.
ROBUST_TESTS = ("bootstrap", "permutation")
_CHUNK = 2_000_000  # unit means per resampling batch


def bootstrap_t_tests(um: np.ndarray, *, B: int,
                      gen: np.random.Generator) -> tuple[float, ...]:
    """Paired bootstrap-t on the unit means: one-sided p-values both ways.

    ``t = mean / (sd / sqrt(T))``; each resample of the T unit means gives
    ``t*_b = (mean*_b - mean) / (sd*_b / sqrt(T))`` (the null distribution of
    the studentised mean, re-centred at the estimate).  ``p_jk = (1 + #{t*_b
    >= t}) / (1 + B')`` tests ``H_jk: mu_j <= mu_k`` and ``p_kj = (1 + #{t*_b
    <= t}) / (1 + B')``; resamples with ``sd* = 0`` (all drawn means equal)
    have no t and are left out (B' counts the rest).  All unit means equal
    gives p = 1 both ways (no evidence), like the t-test.
    """
    T = um.size
    est = float(um.mean())
    sd = float(um.std(ddof=1))
    if sd == 0.0:
        return est, 0.0, float(T - 1), 0.0, 0.0, 1.0, 1.0
    se = sd / np.sqrt(T)
    t = est / se
    step = max(1, _CHUNK // T)
    ts = []
    for i in range(0, B, step):
        draw = um[gen.integers(0, T, size=(min(step, B - i), T))]
        sds = draw.std(axis=1, ddof=1)
        ok = sds > 1e-12 * sd
        ts.append((draw.mean(axis=1)[ok] - est) / (sds[ok] / np.sqrt(T)))
    tb = np.concatenate(ts)
    n = tb.size
    p_jk = (1 + int(np.sum(tb >= t))) / (1 + n)
    p_kj = (1 + int(np.sum(tb <= t))) / (1 + n)
    return est, float(se), float(T - 1), float(t), float(-t), float(p_jk), float(p_kj)


def sign_flip_tests(um: np.ndarray, *, B: int,
                    gen: np.random.Generator) -> tuple[float, ...]:
    """Sign-flip permutation test of the unit means, one-sided both ways.

    Exact enumeration of the ``2^m`` sign patterns up to m = 20 non-zero unit
    means, Monte Carlo with ``B`` patterns beyond
    (:func:`mixrank.inference.paired_resampling.sign_flip`); the statistic is
    the mean of the unit means.
    """
    est = float(um.mean())
    if not np.any(um != 0):
        return est, float("nan"), float("nan"), 0.0, 0.0, 1.0, 1.0
    zeros = np.zeros_like(um)
    g = sign_flip(um, zeros, alternative="greater", n_resamples=int(B), rng=gen)
    seed = int(gen.integers(0, 2**63 - 1))
    r = sign_flip(-um, zeros, alternative="greater", n_resamples=int(B), rng=seed)
    return (est, float("nan"), float("nan"), est, -est, float(g["p_value"].iloc[0]),
            float(r["p_value"].iloc[0]))
