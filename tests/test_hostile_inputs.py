"""Seven bad inputs (a hostile-input battery of 190 probes; these 13 were
answered badly).  Each test states the expected answer; each failed before its fix."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank import DataQualityWarning, OptionError, SmallSampleWarning
from tests.cli.test_cli import run


def quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return fn(*a, **kw)


# ------------------------------------------------- 1. satterthwaite-vc without a random term
def test_satterthwaite_vc_needs_a_random_term(capsys, tmp_path):
    d = mixrank.simulate(models=3, subjects=6, questions=5, rng=1)
    with pytest.raises(OptionError, match=r"df='satterthwaite-vc' .* has none; add a random"):
        mixrank.fit("correct ~ model", d, df="satterthwaite-vc")
    d.to_csv(tmp_path / "d.csv", index=False)
    code, _, err = run(capsys, "fit", str(tmp_path / "d.csv"), "--formula", "correct ~ model",
                       "--df", "satterthwaite-vc")
    assert code == 2 and err.startswith("error:") and "random term" in err


# ------------------------------------------------- 2. an arena of ties: degenerate sandwich
def _ties(decisive: int) -> pd.DataFrame:
    n = 600
    d = pd.DataFrame(dict(model_a=["a", "b", "c"] * (n // 3), model_b=["b", "c", "a"] * (n // 3),
                          winner=["tie"] * n, question=[f"q{i // 3}" for i in range(n)]))
    d.loc[:decisive - 1, "winner"] = "model_a"
    return d


@pytest.mark.parametrize("decisive", [0, 1])
def test_a_sandwich_of_ties_is_replaced_by_the_information(decisive):
    """All ties (or 599 and one decisive battle): the clustered sandwich would give SE 0 (every
    model 1000 [1000, 1000]); the answer is the information's SE with a warning, and
    rank_intervals() answers on the same fit."""
    log = _ties(decisive)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.warns(SmallSampleWarning, match=r"decisive \(non-tie\) battles in fewer "
                                                    r"than 3 clusters of 'question'"):
            res = mixrank.arena(log)
        scores = res.model_scores()
        ranks = res.rank_intervals()
    info = mixrank.arena(log, cluster=False).model_scores()
    np.testing.assert_allclose(scores["std_error"], info["std_error"], rtol=1e-12)
    assert (scores["std_error"] > 10).all()          # about 11.6 Elo, not 0
    assert res.se == "information" and any("replaced" in n for n in res.notes)
    assert len(ranks) == 3 and (ranks["rank_upper"] == 3).all()


def test_a_sandwich_with_decisive_battles_is_kept():
    log = _ties(0)
    log["winner"] = np.where(np.arange(len(log)) % 3 == 0, "tie",
                             np.where(np.arange(len(log)) % 2 == 0, "model_a", "model_b"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        res = mixrank.arena(log)
    assert res.se == "sandwich"


# ------------------------------------------------- 4. a judge that always answers "model_a"
def test_a_judge_that_always_says_model_a():
    rng = np.random.default_rng(0)
    ms = ["a", "b", "c", "d"]
    rows = []
    for i in range(400):
        x, y = rng.choice(4, 2, replace=False)
        human = ("model_a" if rng.random() < 0.5 + 0.1 * (y - x) else "model_b") if i < 150 \
            else None
        rows.append(dict(model_a=ms[x], model_b=ms[y], winner=human, wj="model_a",
                         question=f"q{i // 4}"))
    with pytest.warns(DataQualityWarning, match=r"judge 'wj' answered model_a .* every decisive "
                                                r"battle \(first-position share 1.000\)"):
        res = mixrank.arena(pd.DataFrame(rows), judge="wj")
    j = res.judges().set_index("judge")
    assert j.loc["wj", "share_model_a"] == 1.0 and j.loc["wj", "position"] == np.inf
    assert bool(j.loc["wj", "position_differs"])
    assert np.isfinite(res.model_scores()["estimate"]).all()


# ------------------------------------------------- 5. judge-corrected fits have no flip CIs
def test_judge_corrected_fits_have_no_flip_intervals():
    from tests.judge.simdata import simulate

    d, _ = simulate(1, subjects=8)
    res = quiet(mixrank.fit, "score ~ model + (1|subject)", d, gold="human")
    with pytest.raises(mixrank.DesignError, match=r"judge-corrected fit \(gold=\) has no flip "
                                                  r"intervals.*Use ci='t'"):
        res.contrasts(ci="randomization")
    assert np.isfinite(res.contrasts(ci="t")["p_value"]).all()


# ------------------------------------------------- 6. no numpy warning reaches a user
def test_all_scores_equal_resolution_anova_has_no_numpy_warning():
    d = mixrank.simulate(models=3, subjects=6, questions=5, rng=1).assign(correct=1)
    fit = quiet(mixrank.fit, "correct ~ model + (1|subject)", d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        warnings.simplefilter("error", RuntimeWarning)
        tab = fit.resolution(design_effect="anova")
    assert (tab["estimate"] == 0).all()
    if "mde_multiplicity" in tab:                     # a noiseless pair keeps MDE 0
        assert (tab["mde_multiplicity"] == 0).all()


def test_score_interval_far_in_the_tail_has_no_overflow_warning():
    """A score near 1 with a huge t quantile (df near 0): its logit interval runs to (0, 1)
    without numpy's 'overflow encountered in exp' (rank_intervals() and model_scores())."""
    from mixrank.results.scores import score_interval

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        lo, hi, logit = score_interval(0.9999, 0.01, 0.05, 0.95, True)
    assert logit and lo == 0.0 and hi == 1.0


# ------------------------------------------------- 7. one rule for unused options
def test_unused_rng_and_draws_are_refused_by_contrasts():
    """One rule (docs/vocabulary.md, "No argument silently ignored"): an option the call's own
    options leave unused is an OptionError; where the data decide (maxt / stepdown: all sign
    flips enumerated up to 14 units, sampled above) a seed is accepted."""
    fit = quiet(mixrank.fit, "correct ~ model + (1|subject)", mixrank.load_example())
    for adjust in ("holm", "none", "bh"):
        with pytest.raises(OptionError, match="rng=1 set the draws .* would be ignored"):
            fit.contrasts(adjust=adjust, rng=1)
        with pytest.raises(OptionError, match="draws=5000 set the draws"):
            fit.contrasts(adjust=adjust, draws=5000)
    exact = fit.contrasts(adjust="stepdown", rng=1)
    assert exact.attrs["mixrank"]["exact"] is True
    pd.testing.assert_frame_equal(exact, fit.contrasts(adjust="stepdown"))


def test_arena_unused_rng_and_bad_level_are_option_errors():
    log = _ties(0)
    log["winner"] = np.where(np.arange(len(log)) % 2 == 0, "model_a", "model_b")
    with pytest.raises(OptionError, match="draws= and rng= set the bootstrap"):
        mixrank.arena(log, rng=1)
    with pytest.raises(OptionError, match="level=1"):
        mixrank.arena(log, level=1)
    with pytest.raises(OptionError, match="se='sandwich'"):
        mixrank.arena(log, cluster="question", se="information")


def test_a_mistyped_subcommand_gets_did_you_mean(capsys):
    code, _, err = run(capsys, "fitt")
    assert code == 2 and err.startswith("error:") and "(did you mean 'fit'?)" in err
    code, _, err = run(capsys, "contrast")
    assert code == 2 and "(did you mean 'contrasts'?)" in err


# ------------------------------------------------- 3. extreme score scales
def _gaussian() -> pd.DataFrame:
    return mixrank.simulate(models=3, subjects=8, questions=10, family="gaussian", sd_residual=1,
                            rng=2)


@pytest.mark.parametrize("factor, word", [(1e154, "overflow"), (1e-160, "underflow")])
def test_scores_beyond_double_precision_are_refused(factor, word):
    """x 1e154 used to make every pair 'degenerate: all paired differences identical' (SE 0,
    sign-test p-values), x 1e-160 a DesignError about a zero residual variance: now one
    DataError naming the magnitude and the change of unit (docs/hardening.md §2)."""
    d = _gaussian()
    d["correct"] *= factor
    with pytest.raises(mixrank.DataError, match=rf"magnitude 1e-?\d+: .* {word} .* divide the "
                                                r"scores by 1e"):
        mixrank.fit("correct ~ model + (1|subject)", d)


@pytest.mark.parametrize("factor", [1e60, 1e-75])
def test_scores_within_the_range_are_scale_invariant(factor):
    """Inside [1e-75, 1e75] every p-value equals the unscaled one, with no numpy warning."""
    d = _gaussian()
    base = quiet(mixrank.fit, "correct ~ model + (1|subject)", d)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        scaled = quiet(mixrank.fit, "correct ~ model + (1|subject)",
                       d.assign(correct=d["correct"] * factor))
        for ci in ("randomization", "t"):
            a, b = base.contrasts(ci=ci), scaled.contrasts(ci=ci)
            np.testing.assert_allclose(b["p_value"], a["p_value"], rtol=1e-12)
            np.testing.assert_allclose(b["p_adjusted"], a["p_adjusted"], rtol=1e-12)
            np.testing.assert_allclose(b["std_error"] / factor, a["std_error"], rtol=1e-12)
