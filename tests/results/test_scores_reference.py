"""Model scores vs lme4 1.1-31 + lmerTest 3.1-3 (stored reference fits).

Reference: ``tests/reference/model_scores.json``, written by
``Rscript tests/reference/model_scores.R`` from the simulated designs of
``tests/reference/engine_cases/`` (balanced nested, crossed, unbalanced) and
from the shared real data (ChemBench default prompt, six models;
JailbreakBench, all models).  R builds each model's cell scores itself and
fits ``lmerTest::lmer(y ~ 1 + (1|...), REML = TRUE)``.  No R is needed here.

Contract: the engine tolerances of the lme4 reference suite
(``LME4`` in ``tests/reference/tolerances.py``): criterion not worse than
lme4's, components within 1e-4 x total, estimate and SE within 1e-5
relative, Satterthwaite df within 1e-3 relative where lme4's fit is not
singular.

Measured maxima over each case's models (criterion excess = native - lme4)::

    case             models crit_excess comp/total est_rel se_rel  df_rel
    nested_balanced       3    6.8e-13    7.3e-08  2.6e-14 9.8e-08 2.8e-07
    crossed               3    4.3e-12    4.9e-08  6.8e-14 6.8e-08 1.8e-07
    unbalanced            3    4.5e-13    2.0e-08  5.4e-09 3.6e-08 2.2e-07
    chembench             6    1.4e-10    4.3e-07  2.6e-08 1.8e-06 6.3e-06
    jailbreakbench        4    1.7e-12    1.4e-06  8.0e-14 7.7e-07 5.4e-06
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import mixrank
from mixrank.results.scores import model_fits
from tests.reference.cases import case_frame
from tests.reference.tolerances import LME4, discrepancies

REF = Path(__file__).resolve().parents[1] / "reference"
DATA = json.loads((REF / "model_scores.json").read_text())
CASES = {c["name"]: c for c in DATA["cases"]}
_FITS: dict[str, mixrank.FitResult] = {}


def _fit(name: str, shared_data, **kw) -> mixrank.FitResult:
    key = name + repr(sorted(kw.items()))
    if key not in _FITS:
        case = CASES[name]
        df = case_frame(case, shared_data, "engine_cases")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.MixrankWarning)
            _FITS[key] = mixrank.fit(case["formula"], df, pair_by=case["pair_by"],
                                     estimand="gls", pairs=[tuple(sorted(set(df["model"])))[:2]],
                                     **kw)
    return _FITS[key]


def _params(only_interior: bool = False):
    return [pytest.param(c["name"], i, id=f"{c['name']}-{m['model']}")
            for c in DATA["cases"] for i, m in enumerate(c["models"])
            if not (only_interior and m["isSingular"])]


def _one(name: str, i: int, shared_data):
    ref = CASES[name]["models"][i]
    fit = _fit(name, shared_data)
    mf = {m.model: m for m in model_fits(fit, "gls")}[ref["model"]]
    return mf, ref


def test_reference_provenance():
    assert DATA["generator"] == "tests/reference/model_scores.R"
    assert DATA["versions"]["lme4"].startswith("1.1")
    assert {"nested_balanced", "crossed", "unbalanced", "chembench",
            "jailbreakbench"} <= set(CASES)
    flags = [m["isSingular"] for c in DATA["cases"] for m in c["models"]]
    assert any(flags) and not all(flags)


@pytest.mark.parametrize("name,i", _params())
def test_model_fit_matches_lme4(name, i, shared_data):
    mf, ref = _one(name, i, shared_data)
    assert mf.n == ref["n"]
    d = discrepancies(mf, ref)
    assert d["criterion_excess"] <= LME4["criterion_excess"], d
    assert d["component_of_total"] <= LME4["component_of_total"], (mf.components, ref)
    assert d["estimate_rel"] <= LME4["estimate_rel"], (mf.estimate, ref["estimate"])
    assert d["std_error_rel"] <= LME4["std_error_rel"], (mf.std_error, ref["std_error"])


@pytest.mark.parametrize("name,i", _params(only_interior=True))
def test_model_df_matches_lmertest(name, i, shared_data):
    mf, ref = _one(name, i, shared_data)
    assert discrepancies(mf, ref)["df_rel"] <= LME4["df_rel"], (mf.df, ref["df"])


@pytest.mark.parametrize("name", list(CASES))
def test_table_carries_the_fits(name, shared_data):
    """model_scores() of a df='satterthwaite' fit (the contrasts' method: lme4 + lmerTest's)
    reports the reference numbers and a t CI with lmerTest's df."""
    from scipy import stats

    fit = _fit(name, shared_data, df="satterthwaite")
    # the per-model lme4 fits: the plain rows (JailbreakBench's models have different cell
    # sets, so their default scores are adjusted to the union of cells, docs/methods.md §11)
    tab = fit.model_scores(scoring="plain").set_index("model")
    for ref in CASES[name]["models"]:
        row = tab.loc[ref["model"]]
        assert row["estimate"] == pytest.approx(ref["estimate"], rel=1e-5, abs=1e-5 * ref["std_error"])
        assert row["std_error"] == pytest.approx(ref["std_error"], rel=LME4["std_error_rel"])
        q = stats.t.ppf(0.975, row["df"])
        if "logit scale" in row["note"]:     # the t interval left [0, 1]
            p, se = row["estimate"], row["std_error"] / (row["estimate"] * (1 - row["estimate"]))
            eta = np.log(p / (1 - p)) + q * se
            assert row["ci_upper"] == pytest.approx(1 / (1 + np.exp(-eta)), rel=1e-12)
            assert p + q * row["std_error"] > 1 or p - q * row["std_error"] < 0
        else:
            assert row["ci_upper"] - row["estimate"] == pytest.approx(q * row["std_error"],
                                                                      rel=1e-12)
        assert row["variance_ratio"] == pytest.approx(
            (row["std_error"] / row["iid_std_error"]) ** 2, rel=1e-12)
