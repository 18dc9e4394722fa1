"""The binomial GLMM's unit sign-flip max-t and step-down against its fit (issue 37 item 5).

Designs of benchmarks/bench_glmm.py:

* ``a``: 16 models x 349 questions in 3 subjects, k of 10 per (model, question),
  ``cbind(k, n - k) ~ model + (1|subject) + (1|question) + (1|subject:model)``
  (the unit: subject, all 2^2 flips; questions nested in subjects: the per-unit solve);
* ``u``: 20 models x 12 subjects x 40 questions, 0/1,
  ``correct ~ model + (1|subject) + (1|subject:model)`` (all 2^11 flips; the
  closed-form per-unit information; the step-down is the default here);
* ``b``: 12 models x 40,000 items, 0/1, ``correct ~ model + (1|question)`` (the unit:
  question, 40,000 levels: 10,000 seeded flips; never a default path).  Opt-in
  (``--designs b``): the shared flip machinery costs draws x units x pairs, about
  0.15 s a flip here -- far above the fit (see docs/glmm.md §12).

Times, in the same process and each the best of ``repeats`` runs: the fit (from the
DataFrame), ``contrasts(adjust="stepdown")``, ``contrasts(adjust="maxt")`` and the
simultaneous max-t rank intervals (the same flips).  The flips should take no longer
than the fit.

    python benchmarks/bench_glmm_randomization.py [repeats] [--designs a u]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import mixrank

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best  # noqa: E402
from bench_glmm import design_a, design_b  # noqa: E402


def design_u(rng: np.random.Generator) -> pd.DataFrame:
    M, S, Q = 20, 12, 40
    bm = rng.normal(0.0, 0.5, M)
    bs = rng.normal(0, 0.7, S)
    bsm = rng.normal(0, 0.4, (S, M))
    s = np.repeat(np.arange(S), Q)
    eta = bm[None, :] + bs[s][:, None] + bsm[s]
    y = rng.random(eta.shape) < 1 / (1 + np.exp(-eta))
    return pd.DataFrame({"model": np.tile([f"m{m:02d}" for m in range(M)], S * Q),
                         "subject": np.repeat([f"s{t:02d}" for t in s], M),
                         "question": np.repeat(np.arange(S * Q), M),
                         "correct": y.ravel().astype(int)})


DESIGNS = {
    "a": (design_a, "cbind(k, n - k) ~ model + (1|subject) + (1|question) + (1|subject:model)"),
    "u": (design_u, "correct ~ model + (1|subject) + (1|subject:model)"),
    "b": (design_b, "correct ~ model + (1|question)"),
}


def time_design(key: str, repeats: int) -> dict[str, float]:
    """Best-of-``repeats`` seconds of the fit and of the flips' answers on one design."""
    make, formula = DESIGNS[key]
    df = make(np.random.default_rng(20261203))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(formula, df, family="binomial")
        rows = {"fit": best(lambda: mixrank.fit(formula, df, family="binomial"), repeats),
                "contrasts(adjust='stepdown')": best(
                    lambda: res.contrasts(adjust="stepdown", rng=1), repeats),
                "contrasts(adjust='maxt')": best(
                    lambda: res.contrasts(adjust="maxt", rng=1), repeats),
                "rank_intervals(simultaneous, maxt)": best(
                    lambda: res.rank_intervals(coverage="simultaneous", adjust="maxt", rng=1),
                    repeats)}
        default = res.contrasts().attrs["mixrank"]["adjust"]
    print(f"design {key}: {formula} (default adjust: {default})")
    for k, v in rows.items():
        print(f"  {k:40s} {v:8.3f} s   ({v / rows['fit']:.2f} x the fit)")
    return rows


def main(repeats: int = 3, designs: tuple[str, ...] = ("a", "u")) -> dict:
    return {key: time_design(key, repeats) for key in designs}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("repeats", nargs="?", type=int, default=3)
    ap.add_argument("--designs", nargs="+", default=["a", "u"], choices=sorted(DESIGNS))
    a = ap.parse_args()
    main(a.repeats, tuple(a.designs))
