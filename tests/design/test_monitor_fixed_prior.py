"""The monitor's plan is fixed before the data (issue 21; docs/anytime.md, "A plan fixed
before the data").

References: prefix consistency is an identity (the first n rows of ``monitor(d)`` equal
``monitor(d[:n])``); Ville's inequality bounds the null crossing probability at any
stopping rule by alpha, here checked by seeded simulation with the monitor re-called
every 10 items (band: alpha + 2.5 binomial SE), next to the former behaviour (prior
re-tuned to each prefix's discordant count) on the same streams.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mixrank.design.anytime import monitor
from mixrank.design.eprocess import monitor_bernoulli

ALPHA = 0.05


@pytest.mark.parametrize("kw", [dict(), dict(n_plan=500), dict(d_plan=80),
                                dict(anytime="normal"), dict(anytime="normal", sigma=0.7),
                                dict(anytime="normal", variance="sample")])
def test_prefix_gives_the_same_path(kw):
    rng = np.random.default_rng(21)
    x = rng.binomial(1, 0.62, 700)
    y = np.where(rng.random(700) < 0.7, x, rng.binomial(1, 0.55, 700))
    full = monitor(x, y, **kw)
    for n in (10, 137, 500):
        part = monitor(x[:n], y[:n], **kw)
        pd.testing.assert_frame_equal(part, full.iloc[:n])
        meta_p, meta_f = part.attrs["mixrank"], full.attrs["mixrank"]
        for k in ("a", "d_plan", "n_plan", "rho0_per_variance"):
            assert meta_p.get(k) == meta_f.get(k), k


@pytest.mark.slow
def test_null_crossing_with_a_look_every_ten_items():
    """0/1 streams under McNemar's null (p10 = p01), N = 400, looks every 10 items."""
    R, N = 600, 400
    rng = np.random.default_rng(2121)
    looks = np.arange(10, N + 1, 10)
    fixed, retuned = [], []
    for r in range(R):
        disc = rng.random(N) < 0.3
        d = np.where(disc, rng.choice([-1.0, 1.0], size=N), 0.0)
        path = monitor(d, alpha=ALPHA)["crossed"].to_numpy()
        fixed.append(bool(path[looks - 1].any()))
        if r < 20:            # the looks themselves: re-calling on each prefix changes nothing
            again = [bool(monitor(d[:n], alpha=ALPHA)["crossed"].iloc[-1]) for n in looks]
            assert any(again) == fixed[-1]
        # the former default: the prior re-tuned to the prefix's own discordant count
        hit = False
        for n in looks:
            k = int(np.count_nonzero(d[:n]))
            if k and monitor_bernoulli(d[:n], alpha=ALPHA, d_plan=k)["crossed"].iloc[-1]:
                hit = True
                break
        retuned.append(hit)
    f, t = float(np.mean(fixed)), float(np.mean(retuned))
    print(f"\nnull crossing with a look every 10 items: fixed prior {f:.3f}, re-tuned {t:.3f}")
    assert f <= ALPHA + 2.5 * math.sqrt(ALPHA * (1 - ALPHA) / R)
    assert t >= f                                   # re-tuning only adds crossings
