"""The binomial GLMM's family-wise answers at few units (marker ``slow``;
docs/glmm.md §12, docs/methods.md §9 "GLMM randomization").

Design (tests/validity/glmm_cells.py): 0/1 outcomes from exactly the fitted GLMM
(``correct ~ model + (1|subject) + (1|subject:model)``, subject sd 0.7, model x subject
sd 0.5, subjects of 5-60 questions), the defaults of ``mixrank.fit(..., family="binomial")``
(Laplace; contrasts' default the unit sign-flip step-down, all 2^(T-1) flips).  Pass bands
from the Monte Carlo SE at the nominal rate: family-wise error within
[0.02, 0.05 + 2 SE] at 8 models x 6 subjects (the issue's cell: Holm with the containment
t never rejects there), at most 0.05 + 2 SE at 10 x 10, and power with five models 1.0
logit apart at least Holm's (printed beside it).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from .glmm_cells import glmm_replicate, summarise

pytestmark = pytest.mark.slow

NOMINAL = 0.05


def _upper(R: int) -> float:
    return NOMINAL + 2 * math.sqrt(NOMINAL * (1 - NOMINAL) / R)


def test_glmm_eight_models_six_subjects_familywise_error():
    R = 300
    res = summarise([glmm_replicate(seed, 8, 6) for seed in range(R)])
    print({k: (round(v[0], 3), round(v[1], 3)) for k, v in res.items()})
    assert res["default_is_stepdown"][0] == 1.0
    assert 0.02 <= res["default_fwer"][0] <= _upper(R), res["default_fwer"]
    assert res["maxt_fwer"][0] <= _upper(R), res["maxt_fwer"]
    # the level Holm with the containment t wastes (0 / 200)
    assert res["holm_fwer"][0] < res["default_fwer"][0]


def test_glmm_ten_models_ten_subjects_null_and_power_beside_holm():
    R0, R1 = 200, 150
    null = summarise([glmm_replicate(10000 + s, 10, 10) for s in range(R0)])
    gaps = np.r_[np.zeros(5), np.full(5, 1.0)]
    alt = summarise([glmm_replicate(20000 + s, 10, 10, gaps) for s in range(R1)])
    print("null", {k: (round(v[0], 3), round(v[1], 3)) for k, v in null.items()})
    print("gaps", {k: (round(v[0], 3), round(v[1], 3)) for k, v in alt.items()})
    for res, R in ((null, R0), (alt, R1)):
        assert res["default_fwer"][0] <= _upper(R), res["default_fwer"]
        assert res["maxt_fwer"][0] <= _upper(R), res["maxt_fwer"]
    assert alt["default_power"][0] >= alt["holm_power"][0], (alt["default_power"],
                                                             alt["holm_power"])
    assert alt["default_power"][0] >= alt["maxt_power"][0]
