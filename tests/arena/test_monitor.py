"""The sequential arena monitor: null crossing rate, power, streaming = one pass."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mixrank.arena import ArenaMonitor
from mixrank.design.anytime.bernoulli import bernoulli_log_e
from mixrank.errors import DesignError


def _stream(n_pairs: int, n: int, p_a: float, tie: float, rng: int) -> pd.DataFrame:
    g = np.random.default_rng(rng)
    pair = np.repeat(np.arange(n_pairs), n)
    g.shuffle(pair)
    u = g.random(pair.size)
    out = np.where(u < tie, "tie", np.where(g.random(pair.size) < p_a, "model_a", "model_b"))
    flip = g.random(pair.size) < 0.5           # sides shown in random order
    a = np.array([f"a{i}" for i in range(n_pairs)], dtype=object)[pair]
    b = np.array([f"b{i}" for i in range(n_pairs)], dtype=object)[pair]
    winner = np.where(flip & (out != "tie"), np.where(out == "model_a", "model_b", "model_a"), out)
    return pd.DataFrame({"model_a": np.where(flip, b, a), "model_b": np.where(flip, a, b),
                         "winner": winner})


@pytest.mark.slow
def test_null_crossing_rate_at_most_alpha():
    # 3000 independent equal-strength pairs, 400 battles each (30% ties), checked after
    # every battle; P(ever cross) <= alpha = 0.05.  MC SE of the rate: sqrt(.05*.95/3000)=.004
    m, alpha = 3000, 0.05
    log = _stream(m, 400, 0.5, 0.3, rng=1)
    mon = ArenaMonitor([(f"a{i}", f"b{i}") for i in range(m)], alpha=alpha, d_plan=280,
                       adjust="none").update(log)
    rate = mon.status()["resolved"].mean()
    assert rate <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / m)


def test_detects_a_real_gap_and_names_the_winner():
    log = _stream(20, 600, 0.65, 0.2, rng=2)
    mon = ArenaMonitor([(f"a{i}", f"b{i}") for i in range(20)], d_plan=400).update(log)
    st = mon.status()
    assert st["resolved"].mean() > 0.8
    assert (st.loc[st.resolved, "winner"] == st.loc[st.resolved, "model_a"]).all()
    assert st.attrs["mixrank"]["alpha_pair"] == pytest.approx(0.05 / 20)


def test_chunked_stream_equals_one_pass_and_stops_at_the_crossing():
    log = _stream(5, 500, 0.62, 0.25, rng=3)
    pairs = [(f"a{i}", f"b{i}") for i in range(5)]
    one = ArenaMonitor(pairs, d_plan=300).update(log).status()
    mon = ArenaMonitor(pairs, d_plan=300)
    for chunk in np.array_split(np.arange(len(log)), 7):
        mon.update(log.iloc[chunk])
    many = mon.status()
    pd.testing.assert_frame_equal(one, many)
    # a resolved pair's counts stop at its crossing; its e-value is the one at that battle
    r = one[one.resolved].iloc[0]
    assert r["n"] == r["resolved_at"]
    s = r["wins_a"] - r["wins_b"]
    d = r["wins_a"] + r["wins_b"]
    assert r["log_e_value"] == pytest.approx(float(bernoulli_log_e(s, d, a=mon.a)))
    assert r["log_e_value"] >= np.log(1 / mon.alpha_pair)


def test_bad_monitor_options():
    with pytest.raises(DesignError, match="two different models"):
        ArenaMonitor([("x", "x")])
    with pytest.raises(DesignError, match="listed twice"):
        ArenaMonitor([("x", "y"), ("y", "x")])
    with pytest.raises(DesignError, match="adjust"):
        ArenaMonitor([("x", "y")], adjust="holm")


def test_monitor_shows_its_state():
    mon = ArenaMonitor([("x", "y"), ("x", "z")], d_plan=50)
    log = pd.DataFrame({"model_a": ["x"] * 40, "model_b": ["y"] * 40, "winner": ["model_a"] * 40})
    assert repr(mon) == "<ArenaMonitor: 2 pairs, 0 battles counted, 0 resolved, alpha=0.05 " \
                        "(bonferroni)>"
    mon.update(log)
    st = mon.status()
    assert repr(mon) == str(mon) == (f"<ArenaMonitor: 2 pairs, {int(st['n'].sum())} battles "
                                     "counted, 1 resolved, alpha=0.05 (bonferroni)>")
    assert mon._repr_html_() == "<pre>" + repr(mon).replace("<", "&lt;").replace(
        ">", "&gt;") + "</pre>"
