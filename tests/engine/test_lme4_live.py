"""Native REML engine vs a live R lme4 + lmerTest fit (``engine="lme4"``).

Needs R with lme4, lmerTest and jsonlite (Debian: apt-get install r-base-core
r-cran-lme4 r-cran-lmertest r-cran-jsonlite).  Skipped when they are missing,
unless ``MIXRANK_REQUIRE_R=1`` (then the tests fail).  Three fresh seeded
designs, compared under the same tolerances as the stored reference suite
(``LME4`` in ``tests/reference/tolerances.py``).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import mixrank
from mixrank.engine.crosscheck.lme4_engine import check_lme4
from tests.reference.tolerances import LME4, discrepancies

CROSSED = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
DESIGNS = {
    # binary scores, unequal subjects, 15% of each model's cells missing
    "unbalanced_binary": (CROSSED, dict(
        models=3, subjects=9, questions=[4, 9, 6, 12, 5, 8, 10, 7, 6], prompts=3,
        family="binomial", sd_model_subject=0.7, sd_model_question=1.0, sd_model_prompt=0.5,
        missing=0.15)),
    # gaussian crossed design with a true zero prompt component (boundary)
    "zero_prompt": (CROSSED, dict(
        models=3, subjects=6, questions=7, prompts=4, family="gaussian", sd_model_subject=0.5,
        sd_model_question=0.6, sd_model_prompt=0.0, sd_residual=1.0)),
    # replicated cells (samples averaged) and a nested formula
    "replicates": ("correct ~ model + (1|subject) + (1|subject:question)", dict(
        models=3, subjects=8, questions=6, prompts=2, samples=3, family="binomial",
        sd_model_subject=0.6, sd_model_question=0.9, sd_model_prompt=0.0)),
}
SEED = 20240717


def _require_r() -> None:
    try:
        check_lme4()
    except mixrank.MissingDependencyError as exc:
        if os.environ.get("MIXRANK_REQUIRE_R") == "1":
            pytest.fail(f"{exc} (MIXRANK_REQUIRE_R=1)")
        pytest.skip(str(exc))


@pytest.mark.r
@pytest.mark.parametrize("name", list(DESIGNS))
def test_native_matches_live_lme4(name):
    _require_r()
    formula, kw = DESIGNS[name]
    seed = SEED + list(DESIGNS).index(name)
    df = mixrank.simulate(**kw, rng=np.random.default_rng(seed))
    replicate = "sample" if "sample" in df.columns else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.SingularFitWarning)
        nat = mixrank.fit(formula, df, replicate=replicate, estimand="gls")
        ref = mixrank.fit(formula, df, replicate=replicate, engine="lme4", estimand="gls")
    assert ref.engine == "lme4" and len(ref.pairs) == len(nat.pairs) == 3
    for n, r in zip(nat.pairs, ref.pairs, strict=True):
        tag = f"{name} {n.model_a}-{n.model_b}"
        assert (n.model_a, n.model_b, n.n) == (r.model_a, r.model_b, r.n), tag
        assert r.converged, (tag, r.message)
        d = discrepancies(n, dict(REMLcrit=r.criterion, components=r.components,
                                  estimate=r.estimate, std_error=r.std_error, df=r.df))
        assert d["criterion_excess"] <= LME4["criterion_excess"], (tag, d)
        assert d["component_of_total"] <= LME4["component_of_total"], (tag, d)
        assert d["estimate_rel"] <= LME4["estimate_rel"], (tag, d)
        assert d["std_error_rel"] <= LME4["std_error_rel"], (tag, d)
        if not r.crosscheck.is_singular:
            assert d["df_rel"] <= LME4["df_rel"], (tag, d)


@pytest.mark.r
def test_lme4_engine_rejects_other_estimands():
    _require_r()
    df = mixrank.simulate(3, 4, 5, 2, family="gaussian", sd_residual=1.0, rng=1)
    with pytest.raises(mixrank.DesignError, match="estimand='units'"):
        mixrank.fit("correct ~ model + (1|subject)", df, engine="lme4", estimand="units")


def test_missing_rscript_message():
    """Without Rscript the engine raises MissingDependencyError naming the Debian packages."""
    df = mixrank.simulate(3, 4, 5, 2, family="gaussian", sd_residual=1.0, rng=1)
    frame = mixrank.build_frame(df, "correct ~ model + (1|subject)")
    from mixrank.engine.crosscheck.lme4_engine import fit_pairs_lme4

    with pytest.raises(mixrank.MissingDependencyError,
                       match="apt-get install r-base-core r-cran-lme4 r-cran-lmertest"):
        fit_pairs_lme4(frame, [(0, 1)], rscript="/nonexistent/Rscript")


def test_missing_package_message(tmp_path):
    """An R without lmerTest gives MissingDependencyError naming the package and the fix."""
    fake = tmp_path / "Rscript"
    fake.write_text("#!/bin/sh\necho 'MIXRANK|4.2.2|lme4=TRUE=1.1.31;lmerTest=FALSE=;"
                    "jsonlite=TRUE=1.8.4'\n")
    fake.chmod(0o755)
    with pytest.raises(mixrank.MissingDependencyError, match=r"\['lmerTest'\].*r-cran-lmertest"):
        check_lme4(str(fake))
