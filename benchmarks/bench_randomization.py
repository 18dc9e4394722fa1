"""Randomization max-t and rank probabilities against the fit, on the 58-model leaderboard.

The leaderboard of benchmarks/bench_engine.py (part 3: 58 models x 805 items in
9 subjects of unequal size, ``correct ~ model + (1|subject)``, 1,653 pairs):
times the fit (default df="cr2"), ``contrasts(adjust="maxt")`` and
``contrasts(adjust="stepdown")`` (all 2^8 sign flips of the 9 subjects),
``rank_probabilities()`` (all 2^9 Rademacher flips) and the simultaneous max-t
rank intervals, each the best of ``repeats`` runs, in the same process (the
peer timed in the same run).  Issue 21 asks the randomization answers to take
no longer than the fit.

    python benchmarks/bench_randomization.py [repeats]
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import mixrank

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best  # noqa: E402
from bench_engine import leaderboard  # noqa: E402


def main(repeats: int = 3) -> dict[str, float]:
    formula = "correct ~ model + (1|subject)"
    fr = mixrank.build_frame(leaderboard(), formula)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(formula, fr)
        out = {"fit": best(lambda: mixrank.fit(formula, fr), repeats),
               "contrasts(adjust='maxt')": best(lambda: res.contrasts(adjust="maxt"), repeats),
               "contrasts(adjust='stepdown')": best(lambda: res.contrasts(adjust="stepdown"),
                                                    repeats),
               "rank_probabilities()": best(lambda: res.rank_probabilities(), repeats),
               "rank_intervals(simultaneous, maxt)": best(
                   lambda: res.rank_intervals(coverage="simultaneous", method="maxt"), repeats)}
    for k, v in out.items():
        print(f"{k:40s} {v:8.3f} s   ({v / out['fit']:.2f} x the fit)")
    return out


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
