"""Compact letters vs a live R ``multcompView::multcompLetters`` on fresh p-value matrices.

Runs ``Rscript tests/reference/letters.R --live`` (the script that wrote the
stored cases) on seeded random p-value matrices -- unstructured ones and
leaderboard-like ones (Holm-adjusted z tests of score gaps) -- and on the
adjusted p-values of real fits' ``contrasts()``, and compares the grouping
(the letter sets up to relabelling) and the letters themselves.  Skipped when
R, multcompView or jsonlite is missing, unless ``MIXRANK_REQUIRE_R=1``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import mixrank
from mixrank.inference.letters import compact_letters
from mixrank.inference.multiplicity import adjust
from tests.inference.test_letters import grouping
from tests.reference.live_r import require_rscript, run_live

SCRIPT = Path(__file__).resolve().parents[1] / "reference" / "letters.R"


def _cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for _ in range(30):                         # unstructured
        n = int(rng.integers(3, 12))
        p = np.ones((n, n))
        iu = np.triu_indices(n, 1)
        small = rng.random(len(iu[0])) < rng.uniform(0.1, 0.9)
        p[iu] = np.where(small, rng.uniform(0, 0.05, len(small)), rng.uniform(0.05, 1, len(small)))
        cases.append(np.minimum(p, p.T))
    for _ in range(15):                         # leaderboard-like: Holm z tests of score gaps
        n = int(rng.integers(8, 31))
        x, se = rng.uniform(0, rng.uniform(3, 15), n), rng.uniform(0.5, 1.5, n)
        iu = np.triu_indices(n, 1)
        z = np.abs(x[iu[0]] - x[iu[1]]) / np.sqrt(se[iu[0]] ** 2 + se[iu[1]] ** 2)
        p = np.ones((n, n))
        p[iu] = adjust(2 * stats.norm.sf(z), "holm")
        cases.append(np.minimum(p, p.T))
    return [{"models": [f"m{k:02d}" for k in range(len(p))], "p": p.tolist(), "alpha": 0.05}
            for p in cases]


def _fit_case(res) -> dict:
    """A fit's letters input: its models (best first) and contrasts' p_adjusted matrix."""
    cld = res.letters()
    models = list(cld["model"])
    ix = {m: i for i, m in enumerate(models)}
    p = np.ones((len(models), len(models)))
    con = res.contrasts()
    for a, b, v in zip(con["model_a"], con["model_b"], con["p_adjusted"]):
        p[ix[a], ix[b]] = p[ix[b], ix[a]] = 1.0 if np.isnan(v) else v
    return {"models": models, "p": p.tolist(), "alpha": cld.attrs["mixrank"]["alpha"],
            "mixrank": list(cld["letters"])}


def _run_r(rscript: str, cases: list[dict], tmp_path: Path) -> list[dict]:
    return run_live(rscript, SCRIPT, {"cases": cases}, tmp_path)["cases"]


@pytest.mark.r
def test_random_p_value_matrices_group_as_multcompview(tmp_path):
    rscript = require_rscript("multcompView", "jsonlite", debian="r-cran-multcompview")
    cases = _cases(np.random.default_rng(20261206))
    out = _run_r(rscript, cases, tmp_path)
    assert len(out) == len(cases)
    for c in out:
        p = np.array(c["p"], dtype=float)
        ours = compact_letters(c["models"], p < c["alpha"])
        theirs = c["letters"] if isinstance(c["letters"], list) else [c["letters"]]
        assert grouping(c["models"], ours) == grouping(c["models"], theirs)
        assert ours == theirs


@pytest.mark.r
def test_fits_group_as_multcompview_given_their_adjusted_p_values(tmp_path):
    rscript = require_rscript("multcompView", "jsonlite", debian="r-cran-multcompview")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [mixrank.fit("correct ~ model + (1|subject)", mixrank.load_dataset("chembench")),
                mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example()),
                mixrank.arena(mixrank.load_dataset("chatbot_arena"))]
        cases = [_fit_case(r) for r in fits]
    out = _run_r(rscript, [{k: v for k, v in c.items() if k != "mixrank"} for c in cases],
                 tmp_path)
    for c, r in zip(cases, out):
        assert grouping(c["models"], c["mixrank"]) == grouping(c["models"], r["letters"])
        assert c["mixrank"] == r["letters"]
