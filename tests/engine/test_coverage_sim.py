"""Seeded coverage simulation (docs/methods.md §3): the mixed-model CI covers the true
difference at its nominal rate, the cells-as-units CI does not.

Band: with R replicates the coverage estimate has Monte Carlo SE
sqrt(0.95 * 0.05 / R); we allow 3.5 SE (two-sided false-alarm rate < 0.05%).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import mixrank

R = 1000
TRUE_DIFF = 0.3
MC_BAND = 3.5 * math.sqrt(0.95 * 0.05 / R)


@pytest.mark.slow
def test_crossed_design_coverage_vs_cells_as_units():
    rng = np.random.default_rng(20261129)
    hit_mixed = hit_cells = 0
    crossed = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(R):
            d = mixrank.simulate(2, 10, 6, 4, effects=[TRUE_DIFF, 0.0], family="gaussian",
                                 sd_residual=1.0, sd_model_subject=0.35,
                                 sd_model_question=0.5, sd_model_prompt=0.25, rng=rng)
            fr = mixrank.build_frame(d, crossed)
            c = mixrank.fit(crossed, fr).contrasts().iloc[0]
            hit_mixed += c.ci_lower <= TRUE_DIFF <= c.ci_upper
            c0 = mixrank.fit("correct ~ model", d).contrasts().iloc[0]
            hit_cells += c0.ci_lower <= TRUE_DIFF <= c0.ci_upper
    cov_mixed, cov_cells = hit_mixed / R, hit_cells / R
    assert abs(cov_mixed - 0.95) <= MC_BAND, (cov_mixed, MC_BAND)
    assert cov_cells < 0.95 - MC_BAND, cov_cells
