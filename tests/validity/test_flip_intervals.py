"""Per-pair intervals at 9 unequal clusters (seeded, slow; docs/methods.md §9,
"Intervals from the unit sign flips").

8 models on 9 topics of ChemBench's sizes (40-1,001 questions), 0/1 latent-logistic data
(tests/validity/designs.py: subject 0.5, question 1, model x subject 0.3), 4 models tied
and 4 at 0.5-1.5 logits; the true gap of a pair is the difference of the models' expected
accuracies (Gauss-Hermite quadrature, ``tests.validity.few_units._true_gaps``).  Per data set
the share of the 28 pairs whose 95% interval covers it and the mean width, for the
CR2 t interval with Bell-McCaffrey df (about 2 here), Satterthwaite's t interval and the
interval from inverting the unit sign-flip test
(:func:`mixrank.inference.randomization.flip_intervals`).  Band: coverage at least
0.95 - 2 Monte Carlo SE (the SE of the mean over data sets).
"""

from __future__ import annotations

import numpy as np
import pytest

from .few_units import CHEMBENCH_SIZES, summarise, unit_replicate

pytestmark = pytest.mark.slow

R = 300


def test_flip_intervals_cover_at_nine_unequal_clusters_and_are_narrower():
    gaps = np.r_[np.zeros(4), np.linspace(0.5, 1.5, 4)]
    res = summarise([unit_replicate(s, 8, gaps=gaps, sizes=CHEMBENCH_SIZES, intervals=True)
                     for s in range(70_000, 70_000 + R)])
    print({k: (round(v[0], 4), round(v[1], 4)) for k, v in res.items()})
    for how in ("flip", "cr2_t"):
        cover, se = res[f"{how}_cover"]
        assert cover >= 0.95 - 2 * se, (how, res[f"{how}_cover"])
    assert res["flip_width"][0] < 0.7 * res["cr2_t_width"][0]
