"""The monitor's plan is fixed before the data (docs/anytime.md, "A plan fixed
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
from mixrank.design.anytime.bernoulli import DEFAULT_D_PLAN, bernoulli_log_e, tune_beta

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
    """0/1 streams under McNemar's null (p10 = p01), N = 400, looks every 10 items: the fixed
    prior's crossing share over 4,000 streams beside the former default, the prior re-tuned
    to each prefix's own discordant count (one tuning per look), on the same streams."""
    R, N = 4000, 400
    rng = np.random.default_rng(2121)
    looks = np.arange(10, N + 1, 10)
    disc = rng.random((R, N)) < 0.3
    d = np.where(disc, rng.choice([-1.0, 1.0], size=(R, N)), 0.0)
    S, D = np.cumsum(d, axis=1)[:, looks - 1], np.cumsum(disc, axis=1)[:, looks - 1]
    thr = np.log(1 / ALPHA)
    a_fixed = float(tune_beta(DEFAULT_D_PLAN))
    pos = D > 0
    log_fixed = np.zeros(S.shape)
    log_fixed[pos] = bernoulli_log_e(S[pos], D[pos], a=a_fixed)
    a_cache = {k: float(tune_beta(k)) for k in np.unique(D[pos])}
    log_old = np.zeros(S.shape)
    log_old[pos] = bernoulli_log_e(S[pos], D[pos], a=np.vectorize(a_cache.get)(D[pos]))
    fixed = (log_fixed >= thr).any(axis=1)
    retuned = (log_old >= thr).any(axis=1)
    for r in range(5):       # the monitor itself, re-called on every prefix, says the same
        again = [bool(monitor(d[r, :n], alpha=ALPHA)["crossed"].iloc[-1]) for n in looks]
        assert any(again) == bool(fixed[r])
        assert monitor(d[r], alpha=ALPHA).attrs["mixrank"]["a"] == pytest.approx(a_fixed)
    f, t = float(fixed.mean()), float(retuned.mean())
    print(f"\nnull crossing, a look every 10 items ({R} streams): fixed prior {f:.4f}, "
          f"re-tuned per look {t:.4f}")
    assert f <= ALPHA + 2.5 * math.sqrt(ALPHA * (1 - ALPHA) / R)


def test_resolution_anytime_column_states_its_cell_level_null():
    import mixrank

    fit = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    meta = fit.resolution(columns="all").attrs["mixrank"]["anytime"]
    assert "per-cell null" in meta["null"] and "'subject'" in meta["null"]
    cells = mixrank.fit("correct ~ model", mixrank.load_example())
    assert "null" not in (cells.resolution(columns="all").attrs["mixrank"]["anytime"] or {})


def test_monitor_anytime_is_the_one_keyword_and_kind_still_works():
    from mixrank import MixrankDeprecationWarning, OptionError
    from mixrank.design.anytime.bernoulli import monitor_bernoulli

    rng = np.random.default_rng(3)
    x, y = rng.binomial(1, 0.6, 300), rng.binomial(1, 0.5, 300)
    d = (x - y).astype(float)
    pd.testing.assert_frame_equal(monitor(x, y, anytime="bernoulli"), monitor_bernoulli(d))
    normal = monitor(x, y, anytime="normal")
    assert normal.attrs["mixrank"]["method"] == "normal_mixture"
    with pytest.warns(MixrankDeprecationWarning, match="kind= is the former name of anytime="):
        old = monitor(x, y, kind="normal")
    pd.testing.assert_frame_equal(old, normal)
    with pytest.raises(OptionError, match=r"anytime='gauss'.*'auto', 'normal', 'bernoulli'"):
        monitor(x, y, anytime="gauss")
