"""power_summary(): the table `mixrank power` prints, value for value the public functions."""

from __future__ import annotations

import math

import pytest

import mixrank
from mixrank.design.power.audit import cohen_h, shortcut_n
from mixrank.design.power.summary import power_summary
from mixrank.errors import DesignError


def values(tab):
    return dict(zip(tab.quantity, tab.value))


def test_sigma_d_rows_match_the_functions():
    q = values(power_summary(sigma_d=0.5, delta=0.03, n=2000, alpha=0.01, power=0.9))
    assert q["n_star"] == mixrank.n_star(0.03, sigma_d=0.5, alpha=0.01, power=0.9)
    assert q["mde"] == mixrank.mde(2000, sigma_d=0.5, alpha=0.01, power=0.9)
    assert q["power"] == mixrank.power.power(0.03, 2000, sigma_d=0.5, alpha=0.01)
    assert q["q"] == pytest.approx(2000 / q["n_star"], rel=1e-12)


@pytest.mark.parametrize("method", ["wald", "connor"])
def test_marginal_rows_match_the_functions(method):
    tab = power_summary(p_a=0.65, p_b=0.60, rho=0.3, n=500, method=method)
    q = values(tab)
    assert q["n_star"] == mixrank.n_star(p_a=0.65, p_b=0.60, rho=0.3, method=method)
    assert q["delta"] == pytest.approx(0.05) and q["cohen_h"] == cohen_h(0.65, 0.60)
    assert q["shortcut_n"] == shortcut_n(0.65, 0.60, rho=0.3)
    assert tab.attrs["mixrank"]["method"] == method
    assert f"plan {math.ceil(q['n_star'])} cells" in tab.note[tab.quantity == "n_star"].iloc[0]


def test_vanishing_delta_is_infinite():
    tab = power_summary(sigma_d=0.5, delta=1e-300)
    assert tab.value.iloc[0] == math.inf and "no finite number" in tab.note.iloc[0]


@pytest.mark.parametrize("kw, msg", [
    (dict(p_a=0.6), "all three of p_a, p_b and rho"),
    (dict(), "describe the comparison"),
    (dict(sigma_d=0.5), "give delta"),
    (dict(sigma_d=0.5, delta=0.1, method="connor"), "needs the discordance"),
    (dict(p_a=0.6, p_b=0.5, rho=0.1, sigma_d=0.4), "already fix sigma_d"),
    (dict(sigma_d=0.5, delta=0.1, method="z"), "method='z' is not an option"),
])
def test_errors(kw, msg):
    with pytest.raises(DesignError, match=msg):
        power_summary(**kw)
