"""Stage change: split-half reliability of one version (docs/methods.md §8).

Inputs: the items x K score matrix of one version (samples in sample-id
order), the split scheme and the error model in use.
Outputs: the half correlation and a dict with the reliability row of
``ReliableChange.summary().reliability``.
Contents: :func:`split_half`, :func:`reliability`; used by
:mod:`mixrank.change.rci`.
"""

from __future__ import annotations

import warnings

import numpy as np

from mixrank.errors import DesignError, MixrankWarning

__all__ = ["SPLITS", "split_half", "reliability"]

#: Split-half schemes over the samples (first/second half, even/odd positions).
SPLITS = ("halves", "odd_even")


def split_half(y: np.ndarray, split: str) -> tuple[float, int]:
    """Pearson r between half means (samples in sample-id order) and the samples used."""
    k = y.shape[1]
    k_used = k - (k % 2)
    if split == "halves":
        a, b = y[:, : k_used // 2], y[:, k_used // 2: k_used]
    else:
        a, b = y[:, 0:k_used:2], y[:, 1:k_used:2]
    ma, mb = a.mean(axis=1), b.mean(axis=1)
    if np.ptp(ma) <= 1e-12 or np.ptp(mb) <= 1e-12:
        return float("nan"), k_used
    return float(np.corrcoef(ma, mb)[0, 1]), k_used


def reliability(y: np.ndarray, split: str, label: str, role: str, sem: str) -> dict:
    r_half, k_used = split_half(y, split)
    p = y.mean(axis=1)
    sd = float(np.std(p, ddof=1))
    if np.isnan(r_half) and sem == "item":
        # descriptive only: the per-item classes do not use it
        warnings.warn(
            f"split-half reliability of {role} ({label}) is undefined (one half's item means do not "
            f"vary across the {y.shape[0]} items); r_xx, SEM and S_diff are reported as NaN. The "
            "per-item classes (sem='item') do not depend on them.", MixrankWarning, stacklevel=3)
        return {"n_items": int(y.shape[0]), "k": int(y.shape[1]), "k_split": k_used, "r_half": r_half,
                "r_xx": float("nan"), "std_dev": sd, "sem": float("nan")}
    if np.isnan(r_half):
        raise DesignError(
            f"split-half reliability of {role} ({label}) is undefined: one half's item means do not "
            f"vary across the {y.shape[0]} items. The RCI needs items that differ in difficulty and "
            "K >= 2 samples; use more items or samples."
        )
    r_xx = 2.0 * r_half / (1.0 + r_half) if r_half > -1 else float("-inf")
    if r_xx <= 0 and sem == "pooled":
        warnings.warn(
            f"split-half reliability of {role} ({label}) is r_xx = {r_xx:.4g} <= 0 (half correlation "
            f"{r_half:.4g}): the samples do not rank items consistently. SEM is computed with r_xx "
            "floored at 0 (SEM = SD: all variance treated as error), so no change will look reliable.",
            MixrankWarning, stacklevel=3)
    return {"n_items": int(y.shape[0]), "k": int(y.shape[1]), "k_split": k_used, "r_half": r_half,
            "r_xx": r_xx, "std_dev": sd, "sem": sd * float(np.sqrt(1.0 - max(r_xx, 0.0)))}
