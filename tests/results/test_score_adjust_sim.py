"""Coverage of the adjusted score (docs/methods.md §11) by a seeded simulation.

Four models, 8 subjects (one of 30 items, seven of 10), scores ``mu_model +
u_subject + v_item + w_model:subject + e``.  The first model is not scored on
its easiest subject -- the 30-item one, given the largest subject effect: 30%
of its items missing not at random.  Its population score is ``mu_0 +
E[item-weighted subject effect] = mu_0 + 0.2 sd_u E[max of 8 N(0, 1)]``.
The 95% interval (CR2 at the subject of the estimate's unit contributions,
Bell-McCaffrey df at most 7) must cover it at least 94%
of the time (the pass band of the issue; 600 replicates put the Monte Carlo
SE of a 95% coverage at 0.009), with a bias within 4 Monte Carlo SE, while
the plain mean of its own cells is biased down by more than 0.1.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

import mixrank
from mixrank.results.score_adjust import adjusted_scores

SU, SV, SW, SE = 0.5, 0.3, 0.15, 0.5
SIZES = [30] + [10] * 7
MU = np.array([0.0, 0.2, 0.4, 0.6])


def _one(seed: int):
    g = np.random.default_rng(seed)
    u = np.sort(g.normal(0, SU, len(SIZES)))[::-1]       # subject 0 the easiest
    w = g.normal(0, SW, (len(MU), len(SIZES)))
    rows = []
    for s, size in enumerate(SIZES):
        v = g.normal(0, SV, size)
        for q in range(size):
            for m in range(len(MU)):
                if m == 0 and s == 0:
                    continue
                rows.append((f"m{m}", f"s{s}", f"q{q}",
                             MU[m] + u[s] + v[q] + w[m, s] + g.normal(0, SE)))
    d = pd.DataFrame(rows, columns=["model", "subject", "question", "y"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fr = mixrank.build_frame(d, "y ~ model + (1|subject)")
    a = next(x for x in adjusted_scores(fr) if x.model == "m0")
    plain = float(d.loc[d.model == "m0", "y"].mean())
    return a.estimate, a.std_error, a.df, plain


@pytest.mark.slow
def test_adjusted_score_coverage_with_easiest_subject_missing():
    emax = integrate.quad(lambda x: x * 8 * stats.norm.pdf(x) * stats.norm.cdf(x) ** 7,
                          -12, 12)[0]
    truth = MU[0] + 0.2 * SU * emax
    R = 600
    out = np.array([_one(20261203 + r) for r in range(R)])
    est, se, df, plain = out.T
    q = stats.t.ppf(0.975, df)
    coverage = float(np.mean(np.abs(est - truth) <= q * se))
    assert coverage >= 0.94, coverage
    assert abs(est.mean() - truth) < 4 * est.std() / np.sqrt(R)
    assert plain.mean() - truth < -0.1               # what the plain mean would report
    assert ((df > 1) & (df <= 7)).all()
