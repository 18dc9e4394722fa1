"""p-column engine (model x covariate formulas) vs lme4 1.1-31 + lmerTest 3.1-3.

Reference: ``tests/reference/interactions.json``, written by
``Rscript tests/reference/interactions.R`` from the simulated designs in
``tests/reference/interaction_cases/`` (``make_interaction_cases.py``:
balanced, unbalanced with a categorical and a numeric covariate, numeric only,
``model * difficulty * fmt`` with main effects and their interaction)
and from JailbreakBench (``correct ~ model * prompt + (1|subject)``: pairs
share 3-6 attack methods, so some levels have no common cells).  R fits
``lmer(d ~ 1 + x + (1|...))`` per pair and records the REML criterion,
components, coefficients (SE, Satterthwaite df), ``anova(type = 3)``,
``contest`` on emmeans-style reference grids, and ``lmer(d ~ 0 + x + ...)``.

Contract: the engine tolerances of ``tests/reference/tolerances.py`` (LME4):
criterion not worse than lme4's + 1e-6, components within 1e-4 x total,
estimates and SE within 1e-5 relative, df within 1e-3 relative (non-singular
fits); F within ``F_rel`` relative, denominator df within ``df_rel``.

Measured maxima over each case's pairs (criterion excess = native - lme4;
df and den_df only over non-singular pairs)::

    case            pairs sing crit     comp/tot est_rel  se_rel   df_rel   F_rel    ddf_rel
    balanced            3    1 +8.0e-13 3.4e-08  1.3e-14  5.2e-08  2.8e-07  5.8e-08  7.7e-09
    unbalanced          3    0 +3.4e-13 5.8e-08  3.4e-08  8.8e-08  5.0e-07  4.2e-08  2.6e-08
    numeric             3    1 +3.4e-13 2.5e-08  6.3e-09  1.7e-08  2.4e-07  2.2e-08  9.9e-08
    crossed_xz          3    1 +2.3e-13 7.8e-09  5.5e-09  1.2e-08  1.7e-07  1.2e-08  1.4e-08
    jailbreakbench      6    0 +1.6e-12 1.6e-08  1.3e-14  5.2e-08  3.3e-07  5.9e-09  4.5e-08

Coding: levels are sorted as mixrank sorts them (the R script sorts in C
locale) and, as lme4 drops unused levels, a pair missing a level is recoded
over its own cells (``mixrank.engine.lmm.fixed.pair_design``), so coefficient
names and values match lme4's one to one.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import mixrank
from tests.reference.cases import case_frame
from tests.reference.tolerances import LME4

REF = Path(__file__).resolve().parents[1] / "reference"
DATA = json.loads((REF / "interactions.json").read_text())
CASES = {c["name"]: c for c in DATA["cases"]}
_FITS: dict[str, mixrank.FitResult] = {}


def _fit(name: str, shared_data) -> mixrank.FitResult:
    if name not in _FITS:
        case = CASES[name]
        df = case_frame(case, shared_data, "interaction_cases")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.SingularFitWarning)
            _FITS[name] = mixrank.fit(case["formula"], df,
                                      pairs=[(p["model_a"], p["model_b"]) for p in case["pairs"]],
                                      df="satterthwaite")   # lmerTest's answer
    return _FITS[name]


def _params():
    return [pytest.param(c["name"], i, id=f"{c['name']}-{p['model_a']}-{p['model_b']}")
            for c in DATA["cases"] for i, p in enumerate(c["pairs"])]


def _r_name(col: str) -> str:
    """formulaic's column name as R's: Intercept -> (Intercept), x[T.b] -> xb."""
    if col == "Intercept":
        return "(Intercept)"
    return ":".join(part.replace("[T.", "").replace("]", "") for part in col.split(":"))


def _pair(name, i, shared_data):
    res = _fit(name, shared_data)
    ref = CASES[name]["pairs"][i]
    p = res.pairs[i]
    assert (p.model_a, p.model_b) == (ref["model_a"], ref["model_b"])
    return res, p, ref


def check_fit(p, ref) -> None:
    """Cells, criterion, components, coefficients with SE and df of one pair."""
    fp = p.fixed
    assert (p.n, p.only_a, p.only_b) == (ref["n"], ref["only_a"], ref["only_b"])
    assert p.criterion <= ref["REMLcrit"] + LME4["criterion_excess"]
    total = sum(ref["components"].values())
    for g, v in ref["components"].items():
        assert abs(p.components[g] - v) <= LME4["component_of_total"] * total, (g, p.components)
    co = ref["coefficients"]
    names = [_r_name(fp.design.columns[k]) for k in fp.kept]
    assert names == co["name"]
    se = np.sqrt(np.diag(fp.fit.cov))
    for k, nm in enumerate(names):
        scale = max(abs(co["estimate"][k]), co["std_error"][k])
        assert abs(fp.fit.beta[k] - co["estimate"][k]) <= LME4["estimate_rel"] * scale, nm
        assert abs(se[k] - co["std_error"][k]) <= LME4["std_error_rel"] * co["std_error"][k], nm
        if not ref["isSingular"]:
            df = fp.fit.contrast(np.eye(len(names))[k])[2]
            assert abs(df - co["df"][k]) <= LME4["df_rel"] * co["df"][k], (nm, df, co["df"][k])


def check_anova(res, p, ref) -> None:
    tab = res.anova()
    tab = tab[(tab.model_a == p.model_a) & (tab.model_b == p.model_b)]
    an = ref["anova"]
    assert list(tab["term"]) == [f"model:{t}" for t in an["term"]]
    for k in range(len(an["term"])):
        row = tab.iloc[k]
        assert row["num_df"] == an["num_df"][k]
        assert abs(row["F"] - an["F"][k]) <= LME4["F_rel"] * an["F"][k]
        if not ref["isSingular"]:
            assert abs(row["den_df"] - an["den_df"][k]) <= LME4["df_rel"] * an["den_df"][k]


def check_levels(rows, ref, by, *, blank_note: bool) -> None:
    """Rows indexed by the levels of ``by`` vs R's contest rows for ``by``: estimate, SE and
    (unless R's fit is singular) df; a level R cannot estimate is NaN with a note in mixrank;
    ``blank_note``: estimable rows carry no note."""
    got = {c["level"]: c for c in ref["contrasts"] if c["by"] == by}
    for lev, row in rows.iterrows():
        if lev not in got:
            assert np.isnan(row["estimate"]) and row["note"], (lev, row)
            continue
        c = got[lev]
        scale = max(abs(c["estimate"]), c["std_error"])
        assert abs(row["estimate"] - c["estimate"]) <= LME4["estimate_rel"] * scale
        assert abs(row["std_error"] - c["std_error"]) <= LME4["std_error_rel"] * c["std_error"]
        if not ref["isSingular"]:
            assert abs(row["df"] - c["df"]) <= LME4["df_rel"] * c["df"]
        if blank_note:
            assert row["note"] == ""


def check_contrasts(res, p, ref, by_list) -> None:
    """Per-level gaps (and numeric slopes) vs contest on the same reference grid; a level
    R cannot estimate is NaN with a note in mixrank."""
    for by in by_list:
        tab = res.contrasts(by=by)
        tab = tab[(tab.model_a == p.model_a) & (tab.model_b == p.model_b)].set_index(by)
        check_levels(tab, ref, by, blank_note=True)


@pytest.mark.parametrize("name,i", _params())
def test_fit_matches_lmer(name, i, shared_data):
    _, p, ref = _pair(name, i, shared_data)
    check_fit(p, ref)


@pytest.mark.parametrize("name,i", _params())
def test_anova_matches_lmertest_type3(name, i, shared_data):
    res, p, ref = _pair(name, i, shared_data)
    check_anova(res, p, ref)


@pytest.mark.parametrize("name,i", _params())
def test_contrasts_by_match_contest(name, i, shared_data):
    res, p, ref = _pair(name, i, shared_data)
    check_contrasts(res, p, ref, CASES[name]["by"])


@pytest.mark.parametrize("name,i", [pr for pr in _params()
                                    if CASES[pr.values[0]]["pairs"][pr.values[1]]["direct"]])
def test_level_gaps_equal_the_cell_means_fit(name, i, shared_data):
    """lmer(d ~ 0 + x + ...) estimates each level's gap directly: the same numbers."""
    res, p, ref = _pair(name, i, shared_data)
    by = CASES[name]["by"][0]
    tab = res.contrasts(by=by)
    tab = tab[(tab.model_a == p.model_a) & (tab.model_b == p.model_b)].set_index(by)
    direct = ref["direct"]
    for lev, est, se in zip(direct["level"], direct["estimate"], direct["std_error"]):
        assert abs(tab.loc[lev, "estimate"] - est) <= LME4["estimate_rel"] * max(abs(est), se)
        assert abs(tab.loc[lev, "std_error"] - se) <= LME4["std_error_rel"] * se


def test_reference_provenance():
    assert DATA["generator"] == "tests/reference/interactions.R"
    assert DATA["versions"]["lmerTest"].startswith("3.1")
    assert {"balanced", "unbalanced", "numeric", "crossed_xz", "jailbreakbench"} <= set(CASES)
    # the real case has pairs with levels without common cells
    jb = CASES["jailbreakbench"]
    assert any(len([c for c in p["contrasts"]]) < 6 for p in jb["pairs"])


def check_model_scores(res, case) -> None:
    """model_scores(by=): each model's y ~ 1 + x + (1|g) on the same grid as R's contest."""
    for by in case["by"]:
        tab = res.model_scores(by=by)
        for ref in case["models"]:
            check_levels(tab[tab.model == ref["model"]].set_index(by), ref, by, blank_note=False)


@pytest.mark.parametrize("name", list(CASES))
def test_model_scores_by_match_lmer(name, shared_data):
    check_model_scores(_fit(name, shared_data), CASES[name])
