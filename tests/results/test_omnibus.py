"""``res.omnibus()``: the test that every model's score is equal (docs/methods.md §12).

* ``cr2``: clubSandwich's ``Wald_test(lm(score ~ 0 + model), constrain_equal(...),
  vcov = "CR2", test = "HTZ")`` clustered by the unit, statistic and df to 1e-6 (relative),
  on balanced and unbalanced subjects, 0/1 scores and cells a model did not score: the
  stored reference (``tests/reference/omnibus.R`` -> ``omnibus.json``, inputs from
  ``tests/reference/make_omnibus_cases.py``) on every run, and a live run of the same
  script on fresh seeds (marker ``r``; skipped without R and clubSandwich unless
  ``MIXRANK_REQUIRE_R=1``);
* ``friedman`` / ``cochran``: :func:`scipy.stats.friedmanchisquare` and statsmodels'
  ``cochrans_q`` on the same cells;
* bad input: one model, an unknown method, incomplete cells for the cell-level tests,
  non-0/1 scores for Cochran's Q, the CR2 test on a fit whose contrasts do not use CR2.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mixrank
from mixrank.errors import DataError, DesignError, OptionError
from tests.reference.live_r import require_rscript, run_live
from tests.reference.make_omnibus_cases import SEED, cases

REF = Path(__file__).resolve().parents[1] / "reference"
SCRIPT = REF / "omnibus.R"
REL = 1e-6
FORMULA = "correct ~ model + (1|subject)"


def _fit(case: dict, **kw) -> mixrank.FitResult:
    d = pd.DataFrame({k: case[k] for k in ("model", "subject", "question", "correct")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit(FORMULA, d, **kw)


def _check(ours: list[dict], ref: list[dict]) -> None:
    assert [c["design"] for c in ours] == [r["design"] for r in ref]
    for case, r in zip(ours, ref):
        res = _fit(case)
        assert res.df_method == "cr2", case["design"]
        om = res.omnibus()
        assert om.shape == (1, 6) and om.loc[0, "method"] == "cr2"
        assert om.loc[0, "unit"] == "subject"
        for col in ("statistic", "df_num", "df_den", "p_value"):
            got, want = float(om.loc[0, col]), float(r[col])
            assert abs(got - want) <= REL * abs(want), (case["design"], col, got, want)


def test_inputs_are_the_stored_ones():
    stored = json.loads((REF / "omnibus_cases.json").read_text())
    assert stored["seed"] == SEED
    assert stored["cases"] == cases(SEED)


def test_cr2_htz_matches_stored_clubsandwich():
    ref = json.loads((REF / "omnibus.json").read_text())
    _check(cases(SEED), ref["cases"])


@pytest.mark.r
def test_cr2_htz_matches_live_clubsandwich(tmp_path):
    rscript = require_rscript("clubSandwich", "jsonlite", debian="r-cran-clubsandwich")
    ours = cases(SEED + 1000)
    _check(ours, run_live(rscript, SCRIPT, dict(seed=SEED + 1000, cases=ours), tmp_path)["cases"])


def test_two_models_is_the_squared_cr2_t():
    """With two models the HTZ statistic is the squared CR2 t of the gap (the ``cells``
    estimand on complete cells: the same lm and sandwich).  Its df are the Bell-McCaffrey
    df under the identity working model (clubSandwich's default), not the contrasts' df
    under the fitted covariance (methods.md §9), so they differ."""
    case = cases(SEED)[1]
    keep = [m in ("m01", "m02") for m in case["model"]]
    two = {k: [v for v, kk in zip(case[k], keep) if kk] for k in ("model", "subject",
                                                                  "question", "correct")}
    two["design"] = "two"
    res = _fit(two)
    om = res.omnibus()
    ct = res.contrasts(adjust="none")
    t = float(ct.loc[0, "estimate"] / ct.loc[0, "std_error"])
    assert om.loc[0, "statistic"] == pytest.approx(t * t, rel=1e-8)
    assert om.loc[0, "df_den"] != pytest.approx(float(ct.loc[0, "df"]), rel=1e-3)


@pytest.fixture(scope="module")
def binary_fit() -> mixrank.FitResult:
    return _fit(cases(SEED)[2])


@pytest.fixture(scope="module")
def gaussian_fit() -> mixrank.FitResult:
    return _fit(cases(SEED)[1])


def test_friedman_matches_scipy(gaussian_fit, binary_fit):
    for res in (gaussian_fit, binary_fit):
        om = res.omnibus(method="friedman")
        ref = stats.friedmanchisquare(*res.frame.scores.T)
        assert om.loc[0, "statistic"] == pytest.approx(ref.statistic, rel=1e-12)
        assert om.loc[0, "p_value"] == pytest.approx(ref.pvalue, rel=1e-10)
        assert om.loc[0, "df_num"] == res.frame.n_models - 1
        assert om.loc[0, "df_den"] == np.inf and om.loc[0, "unit"] == "cell"


def test_cochran_matches_statsmodels(binary_fit):
    from statsmodels.stats.contingency_tables import cochrans_q

    om = binary_fit.omnibus(method="cochran")
    ref = cochrans_q(binary_fit.frame.scores)
    assert om.loc[0, "statistic"] == pytest.approx(ref.statistic, rel=1e-12)
    assert om.loc[0, "p_value"] == pytest.approx(ref.pvalue, rel=1e-10)
    assert om.loc[0, "df_num"] == ref.df


def test_bad_inputs(gaussian_fit):
    with pytest.raises(OptionError, match="method='rank'"):
        gaussian_fit.omnibus(method="rank")
    with pytest.raises(DataError, match="0/1"):
        gaussian_fit.omnibus(method="cochran")
    missing = _fit(cases(SEED)[3])
    for method in ("friedman", "cochran"):
        with pytest.raises(DataError, match="complete"):
            missing.omnibus(method=method)
    fr = gaussian_fit.frame
    one = replace(gaussian_fit, frame=replace(fr, models=fr.models[:1], scores=fr.scores[:, :1],
                                              observed=fr.observed[:, :1]))
    with pytest.raises(DesignError, match="one model"):
        one.omnibus()
    reml = _fit(cases(SEED)[0], df="satterthwaite")
    for method in (None, "cr2"):
        with pytest.raises(OptionError, match="df='cr2'"):
            reml.omnibus(method=method)
    assert reml.omnibus(method="friedman").loc[0, "method"] == "friedman"


def test_singular_covariance_is_a_data_error():
    """A duplicated model (its scores those of another in every cell) and fewer units than
    models leave the CR2 covariance of the K - 1 contrasts singular."""
    case = cases(SEED)[1]
    dup = {k: list(case[k]) for k in ("model", "subject", "question", "correct")}
    for i, m in enumerate(case["model"]):
        if m == "m01":
            for k in ("subject", "question", "correct"):
                dup[k].append(case[k][i])
            dup["model"].append("m01copy")
    with pytest.raises(DataError, match="singular"):
        _fit(dup).omnibus()
    few = {k: [v for v, s in zip(case[k], case["subject"]) if s in ("s01", "s02", "s03")]
           for k in ("model", "subject", "question", "correct")}
    with pytest.raises(DataError, match="singular"):
        _fit(few, df="cr2").omnibus()


def _small(k: int, units: int, seed: int = 3) -> mixrank.FitResult:
    d = mixrank.simulate(models=k, subjects=units, questions=[3, 5, 2, 4, 6, 3, 4, 5][:units],
                         family="gaussian", missing=0.0, sd_model_subject=0.5,
                         sd_model_question=0.0, sd_residual=1.0,
                         rng=np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit(FORMULA, d, df="cr2")


def test_randomization_enumerates_every_permutation():
    """3 models x 4 units: the exact p-value equals a brute force over all 6^4 label
    permutations (no unit fixed), each scored by the CR2 HTZ test itself."""
    import itertools

    from mixrank.inference.omnibus import cr2_htz

    res = _small(3, 4)
    om = res.omnibus(method="randomization", draws=1000)
    meta = om.attrs["mixrank"]
    assert meta["exact"] and meta["permutations"] == 6 ** 3
    x, u = res.frame.scores, np.asarray(res.frame.term_codes["subject"])
    f_obs = cr2_htz(x, u).statistic
    assert om.loc[0, "statistic"] == pytest.approx(f_obs, rel=1e-12)
    hits = total = 0
    perms = list(itertools.permutations(range(3)))
    for combo in itertools.product(perms, repeat=4):
        y = x.copy()
        for j, p in enumerate(combo):
            y[u == j] = x[u == j][:, list(p)]
        hits += cr2_htz(y, u).statistic >= f_obs * (1 - 1e-9)
        total += 1
    assert om.loc[0, "p_value"] == pytest.approx(hits / total, abs=1e-12)


def test_randomization_monte_carlo_near_exact():
    res = _small(3, 4, seed=5)
    exact = float(res.omnibus(method="randomization", draws=1000).loc[0, "p_value"])
    mc = res.omnibus(method="randomization", draws=100, rng=7)
    assert not mc.attrs["mixrank"]["exact"] and mc.attrs["mixrank"]["permutations"] == 100
    se = np.sqrt(exact * (1 - exact) / 100)
    assert abs(float(mc.loc[0, "p_value"]) - exact) <= 4 * se + 1 / 101


def test_randomization_bad_inputs(gaussian_fit):
    with pytest.raises(OptionError, match="draws="):
        gaussian_fit.omnibus(draws=500)
    with pytest.raises(OptionError, match="draws="):
        gaussian_fit.omnibus(method="randomization", draws=5)
    with pytest.raises(DataError, match="complete"):
        _fit(cases(SEED)[3]).omnibus(method="randomization")


@pytest.mark.slow
def test_randomization_null_rejection_at_8_units():
    """4 equal models x 8 subjects of 2-12 questions, a model x subject variance: the
    randomization omnibus, and the CR2 HTZ test beside it, reject at 0.05 in at most
    0.05 + 2 MC SE of 1,000 data sets (methods.md §12 quotes the printed rates)."""
    rng = np.random.default_rng(20261208)
    rejected, rejected_cr2, reps = 0, 0, 1000
    for _ in range(reps):
        d = mixrank.simulate(models=4, subjects=8, questions=[2, 12, 4, 7, 3, 9, 5, 10],
                             family="gaussian", missing=0.0, sd_model_subject=0.6,
                             sd_model_question=0.0, sd_model_prompt=0.0, sd_residual=1.0,
                             effects=[0.0] * 4, rng=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.MixrankWarning)
            res = mixrank.fit(FORMULA, d, df="cr2")
        rejected += res.omnibus(method="randomization", draws=200,
                                rng=rng).loc[0, "p_value"] <= 0.05
        rejected_cr2 += res.omnibus().loc[0, "p_value"] <= 0.05
    rate, rate_cr2 = rejected / reps, rejected_cr2 / reps
    print(f"rejection rate: randomization {rate:.4f}, cr2 {rate_cr2:.4f}")
    bound = 0.05 + 2 * np.sqrt(0.05 * 0.95 / reps)
    assert rate <= bound and rate_cr2 <= bound, (rate, rate_cr2)
