"""Cells of the validity suite (seeded, slow; docs/methods.md §9, the grid).

Each cell runs at least 300 replications; bands from the Monte Carlo SE: family-wise
error at most 0.05 + 2 SE, coverage at least 0.95 - 2 SE.  Designs and replicates:
tests/validity/few_units.py.  The numbers printed are the rows of docs/methods.md §9.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from .few_units import (
    CHEMBENCH_SIZES,
    crossed_replicate,
    omitted_replicate,
    summarise,
    unit_replicate,
)

pytestmark = pytest.mark.slow

R = 300
SE = math.sqrt(0.05 * 0.95 / R)


def test_crossed_holm_maxt_and_simultaneous_ranks_hold_their_level():
    """8 models x 10 subjects x 3-5 prompts, model x prompt sd 0.5, (1|subject) + (1|prompt),
    the defaults (Satterthwaite df of the variance components; docs/methods.md §9): Holm
    and max-t family-wise error at most 0.05 + 2 SE, simultaneous rank coverage (Holm, the
    default, and max-t) at least 0.95 - 2 SE.  With lmerTest's df (a prompt variance estimated at zero drops the prompt
    term from the df) Holm's error was 0.090, max-t 0.097 and rank coverage 0.890 on
    these data; satt_holm prints the first for comparison."""
    res = summarise([crossed_replicate(s, draws=1000) for s in range(R)])
    print({k: round(v[0], 3) for k, v in res.items()})
    assert res["default"][0] == 1.0          # Holm, the new df, max-t rank intervals
    assert res["holm"][0] <= 0.05 + 2 * SE, res["holm"]
    assert res["maxt"][0] <= 0.05 + 2 * SE, res["maxt"]
    assert res["rank_cover"][0] >= 0.95 - 2 * SE, res["rank_cover"]
    assert res["rank_cover_maxt"][0] >= 0.95 - 2 * SE, res["rank_cover_maxt"]


def test_omitted_prompt_warns_and_stays_silent_without_its_variance():
    """The same data fitted with (1|subject): warned on every data set with model x prompt
    sd 0.5 (Holm's FWER there is far above 0.05); false alarms at most 5% without it."""
    on = summarise([omitted_replicate(s, 0.5) for s in range(R)])
    off = summarise([omitted_replicate(10_000 + s, 0.0) for s in range(R)])
    print("with", {k: round(v[0], 3) for k, v in on.items()},
          "without", {k: round(v[0], 3) for k, v in off.items()})
    assert on["warned"][0] >= 0.95 and on["holm"][0] > 0.05 + 2 * SE
    assert off["warned"][0] <= 0.05


def test_stepdown_default_power_twenty_models_twelve_subjects():
    """20 models x 12 subjects (5-60 questions each), 0/1, half of the models tied, the others
    0.35-1.4 logits above (evenly spaced).  The issue's generator is unknown; the gaps were
    calibrated on CR2 + Holm alone so that its power matches the issue's 0.185 (100 data sets
    at 0.3-1.2: 0.124, at 0.36-1.44: 0.202; interpolated), never on the step-down's own
    number.  Power is the share of non-null pairs (different true gaps) rejected, FWER any
    tied pair rejected.  The default (Westfall-Young step-down over all 2^11 unit sign flips
    of the totals scaled by their within-unit SE) controls the FWER and reaches the issue's
    step-down power (0.248); the step-down of the flipped CR2 t (the default before) is
    printed beside it (docs/methods.md §9, "Step-down power")."""
    gaps = np.r_[np.zeros(10), np.linspace(0.35, 1.4, 10)]
    res = summarise([unit_replicate(s, 20, gaps=gaps, n_subjects=12, satterthwaite=False,
                                    studentized=True) for s in range(30_000, 30_000 + R)])
    print({k: (round(v[0], 3), round(v[1], 3)) for k, v in res.items()})
    assert res["default_is_stepdown"][0] == 1.0
    assert res["default_fwer"][0] <= 0.05 + 2 * SE
    holm, se = res["cr2_holm_power"]
    assert abs(holm - 0.185) <= 3 * se + 0.01, res["cr2_holm_power"]     # the calibration
    assert res["default_power"][0] >= 0.24, res["default_power"]
    assert res["default_power"][0] > res["cr2_stepdown_power"][0] > holm


def test_nine_unequal_clusters_familywise_and_power():
    """8 models on 9 topics of ChemBench's sizes (40-1,001 questions), 0/1: the default
    step-down's FWER under the global null is at most 0.05 + 2 SE (Satterthwaite + Holm and
    the studentized step-down reported on the same 300 data sets); with half the models
    0.5-1.5 logits apart its power is at least Holm's with CR2."""
    null = summarise([unit_replicate(s, 8, sizes=CHEMBENCH_SIZES, studentized=True)
                      for s in range(40_000, 40_000 + R)])
    print("null", {k: (round(v[0], 3), round(v[1], 3)) for k, v in null.items()})
    assert null["default_is_stepdown"][0] == 1.0
    assert null["default_fwer"][0] <= 0.05 + 2 * SE
    gaps = np.r_[np.zeros(4), np.linspace(0.5, 1.5, 4)]
    alt = summarise([unit_replicate(s, 8, gaps=gaps, sizes=CHEMBENCH_SIZES, studentized=True)
                     for s in range(50_000, 50_000 + 100)])
    print("gaps", {k: (round(v[0], 3), round(v[1], 3)) for k, v in alt.items()})
    assert alt["default_power"][0] >= alt["cr2_holm_power"][0]
