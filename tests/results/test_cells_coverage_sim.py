"""Seeded coverage simulation of the default ``cells`` estimand (docs/messy.md §1).

On an unbalanced design (subjects holding 2 to 24 questions, 10% of each
model's cells missing at random) each model's plain mean and each pair's
plain mean difference over its common cells estimate the model's true mean
and the true gap (every cell has the same expectation under the model).  Their
intervals, with SE and Satterthwaite df from the mixed model at the subject
unit, cover at the nominal 95%; the cells-as-units interval of the same plain
mean does not (subjects cluster the scores).

Band: with R replicates a coverage estimate has Monte Carlo SE
sqrt(0.95 * 0.05 / R); the test allows 3.5 SE (two-sided false alarm < 0.05%).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank

R = 500
MC_BAND = 3.5 * math.sqrt(0.95 * 0.05 / R)
MU = {"A": 0.6, "B": 0.3}
QUESTIONS = [2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24]     # per subject: unbalanced


def _draw(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for s, nq in enumerate(QUESTIONS):
        for m, mu in MU.items():
            a = rng.normal(0.0, 0.4)                   # model x subject effect
            for q in range(nq):
                if rng.random() < 0.1:                 # a missing cell of this model
                    continue
                rows.append((m, f"s{s:02d}", f"s{s:02d}q{q:02d}", mu + a + rng.normal(0, 1.0)))
    return pd.DataFrame(rows, columns=["model", "subject", "question", "correct"])


@pytest.mark.slow
def test_cells_estimand_covers_at_the_subject_unit_on_an_unbalanced_design():
    rng = np.random.default_rng(20261201)
    hit = dict(score_a=0, score_b=0, contrast=0, contrast_iid=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(R):
            d = _draw(rng)
            res = mixrank.fit("correct ~ model + (1|subject)", d)
            assert res.estimand == "cells"
            c = res.contrasts().iloc[0]
            sign = 1.0 if c.model_a == "A" else -1.0
            gap = sign * (MU["A"] - MU["B"])
            hit["contrast"] += c.ci_lower <= gap <= c.ci_upper
            c0 = mixrank.fit("correct ~ model", d).contrasts().iloc[0]
            assert abs(c0.estimate - c.estimate) <= 1e-12          # the same plain mean
            hit["contrast_iid"] += c0.ci_lower <= gap <= c0.ci_upper
            sc = res.model_scores().set_index("model")
            for m in MU:
                hit[f"score_{m.lower()}"] += sc.loc[m, "ci_lower"] <= MU[m] <= sc.loc[m, "ci_upper"]
    cov = {k: v / R for k, v in hit.items()}
    for k in ("score_a", "score_b", "contrast"):
        assert abs(cov[k] - 0.95) <= MC_BAND, (k, cov, MC_BAND)
    assert cov["contrast_iid"] < 0.95 - MC_BAND, cov
