"""Messy leaderboards (docs/messy.md): the defaults on public-shaped data built here.

Shapes of the five public leaderboards (docs/messy.md): difficulty with 3 levels
as the subject, 2 prompt modes, models missing a prompt mode, models judged
by disjoint annotators, one unpaired cell, a fit restricted to one pair.
References are plain pandas means (the leaderboard numbers), never mixrank.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank import (
    DesignError,
    IncompletePairWarning,
    MixrankWarning,
    SmallSampleWarning,
    UnpairedCellsWarning,
    WeakDesignWarning,
)

F_PROMPT = "correct ~ model + (1|question) + (1|prompt)"


def _quiet(formula, data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixrankWarning)
        return mixrank.fit(formula, data, **kw)


def _codegen(seed=1, n_q=40):
    """Code-generation shape: pass@1 per question, difficulty (3 levels) as subject."""
    rng = np.random.default_rng(seed)
    rows = []
    for mi in range(5):
        for q in range(n_q):
            diff = ("easy", "medium", "hard")[q % 3]
            p = 0.25 + 0.1 * mi - 0.15 * (q % 3)
            rows.append(dict(model=f"m{mi}", subject=diff, question=f"q{q:02d}",
                             correct=float(rng.binomial(10, min(max(p, 0.02), 0.98)) / 10)))
    return pd.DataFrame(rows)


def _prompt_modes(missing=("m4", "m5"), seed=2, n_q=30):
    """Code-execution shape: two prompt modes; ``missing`` models lack the 'cot' mode."""
    rng = np.random.default_rng(seed)
    rows = []
    for mi in range(6):
        for q in range(n_q):
            for p in ("plain", "cot"):
                if f"m{mi}" in missing and p == "cot":
                    continue
                rows.append(dict(model=f"m{mi}", question=f"q{q:02d}", prompt=p,
                                 correct=int(rng.random() < 0.3 + 0.08 * mi)))
    return pd.DataFrame(rows)


def _annotators(seed=3):
    """Instruction-following shape: models a0, a1 judged by annotator X, b0, b1 by Y."""
    rng = np.random.default_rng(seed)
    rows = []
    for m, judge in (("a0", "X"), ("a1", "X"), ("a2", "X"), ("b0", "Y"), ("b1", "Y")):
        for q in range(30):
            rows.append(dict(model=m, question=f"q{q:02d}", subject=f"s{q % 6}",
                             annotator=judge, correct=float(rng.normal(0.5, 0.2))))
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ §1 estimand

def test_default_estimand_is_the_plain_mean():
    df = _prompt_modes(missing=()).sample(frac=0.85, random_state=4)    # unbalanced
    res = _quiet(F_PROMPT, df)
    assert res.estimand == "cells"
    # the plain means are one keyword away (the default puts every model on the
    # union of cells when their cell sets differ, docs/methods.md §11)
    sc = res.model_scores(scoring="plain").set_index("model")
    means = df.groupby("model")["correct"].mean()
    np.testing.assert_allclose(sc.loc[means.index, "estimate"], means, rtol=0, atol=1e-12)
    assert sc["basis"].str.startswith("plain mean, scored on").all()
    assert sc.attrs["mixrank"]["estimand"] == "cells"
    wide = df.pivot_table(index=["question", "prompt"], columns="model", values="correct")
    c = res.contrasts()
    assert c.attrs["mixrank"]["estimand"] == "cells"
    for r in c.itertuples():
        both = wide[[r.model_a, r.model_b]].dropna()
        want = (both[r.model_a] - both[r.model_b]).mean()
        assert abs(r.estimate - want) <= 1e-12 and r.n == len(both)
    assert "Estimand: cells" in str(res.summary()) or "estimand cells" in str(res.summary())


def test_gls_stays_an_option_and_differs_on_unbalanced_data():
    df = _prompt_modes(missing=()).sample(frac=0.85, random_state=4)
    gls = _quiet(F_PROMPT, df, estimand="gls")
    cells = _quiet(F_PROMPT, df)
    assert gls.estimand == "gls"
    assert not np.allclose(gls.contrasts()["estimate"], cells.contrasts()["estimate"])
    # same fitted variance components: one model, two estimands
    assert gls.pairs[0].components == cells.pairs[0].components


def test_adjacent_verdict_rows_run_better_to_worse():
    df = _prompt_modes(missing=()).sample(frac=0.7, random_state=5)   # cells differ by pair
    res = _quiet(F_PROMPT, df)
    for fam in ("adjacent", "all"):
        tab = res.resolution(columns="all", pairs=fam, anytime=False)
        assert (tab["estimate"] >= 0).all(), tab[["model_a", "model_b", "estimate"]]


def test_contrast_plot_orients_every_pair_better_first():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from mixrank.report.plots import plot_contrasts

    res = _quiet(F_PROMPT, _prompt_modes(missing=()))
    c = res.contrasts()
    assert (c["estimate"] < 0).any()          # the table keeps the fitted orientation
    ax = plot_contrasts(c)
    xs = ax.collections[-1].get_offsets()[:, 0]
    assert (np.asarray(xs) >= 0).all()
    worse_first = c[c["estimate"] < 0].iloc[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert f"{worse_first.model_b} \u2212 {worse_first.model_a}" in labels


# ------------------------------------------------------------------ §2 weak designs

def test_three_level_subject_warns_once_naming_term_and_alternatives():
    with pytest.warns(WeakDesignWarning) as rec:
        mixrank.fit("correct ~ model + (1|subject)", _codegen())
    weak = [w for w in rec if issubclass(w.category, WeakDesignWarning)]
    assert len(weak) == 1 and issubclass(weak[0].category, SmallSampleWarning)
    msg = str(weak[0].message)
    assert "(1|subject) has 3 level(s)" in msg and "10 pair(s)" in msg
    assert "'model * subject'" in msg and "method='aggregate'" in msg
    assert "min_units=5" in msg


def test_two_level_prompt_warns_and_control_sets_the_action():
    df = _prompt_modes(missing=())
    with pytest.warns(WeakDesignWarning, match=r"\(1\|prompt\) has 2 level"):
        mixrank.fit(F_PROMPT, df, control=mixrank.Control(singular="ignore"))
    with pytest.raises(DesignError, match=r"\(1\|prompt\) has 2 level"):
        mixrank.fit(F_PROMPT, df, control=mixrank.Control(small_sample="error",
                                                          singular="ignore"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakDesignWarning)
        mixrank.fit(F_PROMPT, df, control=mixrank.Control(small_sample="ignore",
                                                          singular="ignore"))
        mixrank.fit(F_PROMPT, df, control=mixrank.Control(min_units=2, singular="ignore"))


def test_no_weak_design_warning_with_enough_levels():
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakDesignWarning)
        mixrank.fit("correct ~ model + (1|question)", _prompt_modes(missing=()),
                    pairs=[("m0", "m1")])


# ------------------------------------------------------------------ §3 incomplete models

def test_models_missing_a_prompt_mode_become_nan_rows():
    df = _prompt_modes()
    with pytest.warns(IncompletePairWarning) as rec:
        res = mixrank.fit(F_PROMPT, df, control=mixrank.Control(singular="ignore",
                                                                small_sample="ignore"))
    inc = [str(w.message) for w in rec if issubclass(w.category, IncompletePairWarning)]
    assert len(inc) == 1
    for m in ("m0", "m1", "m2", "m3", "m4", "m5"):
        assert re.search(rf"\b{m} \(\d+ pair\(s\)\)", inc[0]), inc[0]
    assert "m4 (5 pair(s))" in inc[0] and "incomplete='drop'" in inc[0]
    c = res.contrasts()
    bad = c[c["estimate"].isna()]
    assert len(bad) == 9 and len(c) == 15
    assert bad["note"].str.contains(r"\(1\|question\) has one cell per level").all()
    assert bad["p_value"].isna().all() and bad["p_adjusted"].isna().all()
    assert c.attrs["mixrank"]["family_size"] == 6
    good = c[c["estimate"].notna()]
    assert (good["note"] == "").all() and np.isfinite(good["p_adjusted"]).all()
    assert set(c.attrs["mixrank"]["not_estimable"]) == set(zip(bad.model_a, bad.model_b))
    d = res.diagnostics()
    assert d["message"].str.startswith("not estimable").sum() == 9


def test_accessors_work_on_the_estimable_part_and_say_what_they_left_out():
    res = _quiet(F_PROMPT, _prompt_modes())
    with pytest.warns(IncompletePairWarning, match="model 'm4'"):
        sc = res.model_scores().set_index("model")
    assert sc.loc[["m4", "m5"], "std_error"].isna().all()
    assert np.isfinite(sc.loc[["m0", "m1", "m2", "m3"], "std_error"]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixrankWarning)
        ri = res.rank_intervals()
        rs = res.resolution(columns="all", anytime=False)
        pl = res.plan(0.1)
        sens = res.sensitivity("loso")
        rp = res.rank_probabilities(draws=1000, rng=1)
    for tab in (ri, rs, pl, sens, rp):
        assert tab.attrs["mixrank"]["left_out"] == ["m4", "m5"]
    assert sorted(ri["model"]) == ["m0", "m1", "m2", "m3"]
    assert not set(rs["model_a"]) & {"m4", "m5"} and not set(rs["model_b"]) & {"m4", "m5"}


def test_incomplete_drop_removes_the_models_and_says_which():
    df = _prompt_modes()
    with pytest.warns(IncompletePairWarning, match=r"removed 2 model\(s\) \['m4', 'm5'\]"):
        res = mixrank.fit(F_PROMPT, df, incomplete="drop",
                          control=mixrank.Control(singular="ignore", small_sample="ignore"))
    assert res.models == ("m0", "m1", "m2", "m3") and len(res.pairs) == 6
    assert not res.incomplete and res.contrasts()["estimate"].notna().all()
    ref = _quiet(F_PROMPT, df[~df.model.isin(["m4", "m5"])])
    for a, b in zip(res.pairs, ref.pairs):
        assert (a.model_a, a.model_b) == (b.model_a, b.model_b)
        assert a.estimate == pytest.approx(b.estimate, abs=1e-12)
        assert a.std_error == pytest.approx(b.std_error, rel=1e-8)


@pytest.mark.parametrize("bad", ["skip", "DROP", None, 1])
def test_incomplete_bad_values_list_the_valid_ones(bad):
    with pytest.raises(DesignError, match=r"incomplete=.*'keep', 'drop'"):
        mixrank.fit(F_PROMPT, _prompt_modes(), incomplete=bad)


def test_every_pair_not_estimable_is_still_an_error():
    df = _prompt_modes(missing=("m0", "m1", "m2"))
    df = df[~(df.model.isin(["m3", "m4", "m5"]) & (df.prompt == "plain"))]   # one mode each
    with pytest.raises(DesignError, match="no pair can be estimated.*one cell per level"):
        _quiet(F_PROMPT, df)


def test_explicit_pair_without_common_cells_is_a_nan_row():
    df = _prompt_modes(missing=())
    df = df[~((df.model == "m5") & df.question.isin([f"q{i:02d}" for i in range(29)]))]
    df = df[~((df.model == "m4") & (df.question == "q29"))]          # m4, m5 share no cell
    res = _quiet(F_PROMPT, df, pairs=[("m0", "m1"), ("m4", "m5")])
    c = res.contrasts().set_index(["model_a", "model_b"])
    assert np.isnan(c.loc[("m4", "m5"), "estimate"])
    assert "share 0 cell(s)" in c.loc[("m4", "m5"), "note"]


# ------------------------------------------------------------------ §4 restricted / groups

def test_restricted_fit_keeps_defaults_for_its_pairs():
    res = _quiet(F_PROMPT, _prompt_modes(), pairs=[("m0", "m1")])
    assert res.restricted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixrankWarning)
        rs = res.resolution(columns="all", anytime=False)
        sens = res.sensitivity("loso", summary=True)
        pl = res.plan(0.1)
        sc = res.model_scores()          # the third model's own fit does not abort the table
    assert list(zip(rs.model_a, rs.model_b)) == [("m0", "m1")]
    assert set(zip(sens.model_a, sens.model_b)) == {("m0", "m1")}
    assert pl.attrs["mixrank"]["model_a"] in ("m0", "m1")
    assert len(sc) == 6
    with pytest.raises(DesignError, match="not fitted"):
        res.resolution(columns="all", pairs="adjacent")       # an explicit family still needs its pairs


def test_one_unpaired_cell_warns_with_counts_per_model():
    df = _prompt_modes(missing=())
    df = df.drop(df.index[(df.model == "m1") & (df.question == "q03") & (df.prompt == "cot")])
    with pytest.warns(UnpairedCellsWarning) as rec:
        mixrank.fit(F_PROMPT, df, control=mixrank.Control(singular="ignore",
                                                          small_sample="ignore"))
    msgs = [str(w.message) for w in rec if issubclass(w.category, UnpairedCellsWarning)]
    assert len(msgs) == 1
    # every other model has the one cell m1 lacks; m1 has none left out
    assert "{m0: 1, m2: 1, m3: 1, m4: 1, m5: 1}" in msgs[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnpairedCellsWarning)
        _quiet(F_PROMPT, _prompt_modes(missing=()), control=mixrank.Control(singular="ignore"))


def test_disjoint_annotators_get_one_score_table_per_group():
    df = _annotators()
    f = "correct ~ model + (1|subject)"
    res = _quiet(f, df, pair_by=["question", "subject", "annotator"])
    with pytest.warns(MixrankWarning, match=r"2 groups that share no cells"):
        sc = res.model_scores()
    assert dict(zip(sc.model, sc.group)) == {"a0": 1, "a1": 1, "a2": 1, "b0": 2, "b1": 2}
    assert "groups_note" in sc.attrs["mixrank"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixrankWarning)
        ri = res.rank_intervals()
        rp = res.rank_probabilities(draws=1000, rng=1)
    assert dict(zip(ri.model, ri.group)) == {"a0": 1, "a1": 1, "a2": 1, "b0": 2, "b1": 2}
    assert set(ri[ri.group == 2]["rank"]) <= {1, 2}
    assert dict(zip(rp.model, rp.group)) == dict(zip(ri.model, ri.group))
    assert rp.groupby("group")["rank"].max().to_dict() == {1: 3, 2: 2}   # ranks within a group
    # one group: no group column
    one = _quiet(f, df[df.annotator == "X"], pair_by=["question", "subject", "annotator"])
    assert "group" not in one.model_scores().columns


# ------------------------------------------------------------------ §5 sensitivity unit

def test_sensitivity_unit_is_the_term_with_fewest_levels():
    df = _prompt_modes(missing=())
    df["subject"] = "d" + (df["question"].str[1:].astype(int) % 3).astype(str)
    res = _quiet("correct ~ model + (1|question) + (1|subject)", df, pairs=[("m0", "m4")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixrankWarning)
        tab = res.sensitivity("loso")
    meta = tab.attrs["mixrank"]
    assert meta["unit"] == "subject"
    assert "fewest levels" in meta["unit_reason"] and "subject: 3" in meta["unit_reason"]
    assert tab["replicate"].nunique() == 3 if "replicate" in tab.columns else True


@pytest.mark.parametrize("bad", ["prompt", 3, "Question"])
def test_sensitivity_unit_bad_values_list_the_terms(bad):
    df = _prompt_modes(missing=())
    df["subject"] = "d" + (df["question"].str[1:].astype(int) % 3).astype(str)
    res = _quiet("correct ~ model + (1|question) + (1|subject)", df, pairs=[("m0", "m4")])
    with pytest.raises(DesignError, match=r"unit=.*expected one of \['question', 'subject'\]"):
        res.sensitivity("loso", unit=bad)


# ------------------------------------------------------------------ the report

def test_report_shows_the_warnings_next_to_the_tables():
    pytest.importorskip("matplotlib")
    from mixrank.report import render_report

    res = _quiet(F_PROMPT, _prompt_modes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixrankWarning)
        page = render_report(res, sensitivity="loso")
    assert "Weak design: (1|prompt) has 2 level(s)" in page
    assert "9 pair(s) cannot be estimated under the formula" in page
    assert "The rank intervals leave out m4, m5" in page
    assert "The verdicts leave out m4, m5" in page
    assert "Resampled unit: question (the formula&#x27;s only random term)" in page \
        or "Resampled unit: question (the random term with the fewest levels" in page
    assert "estimand cells" in page


# ------------------------------------------------------------------ the command line

def _cli(capsys, *argv):
    from mixrank.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_drop_incomplete_and_restricted_pair(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("MIXRANK_PROGRESS", "0")
    path = tmp_path / "pm.csv"
    _prompt_modes().to_csv(path, index=False)
    code, out, err = _cli(capsys, "fit", str(path), "-f", F_PROMPT, "--drop-incomplete",
                          "--format", "csv")
    assert code == 0 and "removed 2 model(s) ['m4', 'm5']" in err
    assert "m4" not in out and "m5" not in out
    # a fit of one unaffected pair keeps its scores table despite m4, m5
    code, out, err = _cli(capsys, "fit", str(path), "-f", F_PROMPT, "--pair", "m0,m1")
    assert code == 0 and "Model scores (" in out and "m5" in out
    assert "Traceback" not in err


def test_cli_scores_and_ranks_group_alike(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("MIXRANK_PROGRESS", "0")
    path = tmp_path / "ann.csv"
    _annotators().to_csv(path, index=False)
    args = ["-f", "correct ~ model + (1|subject)", "--pair-by", "question,subject,annotator",
            "--format", "csv"]
    code, out, err = _cli(capsys, "scores", str(path), *args)
    assert code == 0 and "2 groups that share no cells" in err
    sc = pd.read_csv(__import__("io").StringIO(out))
    code, out, _ = _cli(capsys, "ranks", str(path), *args)
    rk = pd.read_csv(__import__("io").StringIO(out))
    assert code == 0
    assert dict(zip(sc.model, sc.group)) == dict(zip(rk.model, rk.group))
    assert list(sc.group) == sorted(sc.group)


def test_anova_of_a_covariate_fit_works_on_the_estimable_part():
    df = _prompt_modes()
    df["difficulty"] = ["easy" if int(q[1:]) % 2 else "hard" for q in df.question]
    with pytest.warns(IncompletePairWarning, match=r"m4 \(5 pair\(s\)\)"):
        res = mixrank.fit("correct ~ model * difficulty + (1|question) + (1|prompt)", df,
                          control=mixrank.Control(singular="ignore", small_sample="ignore"))
    c = res.contrasts()
    assert c["estimate"].isna().sum() == 9 and c["note"].str.startswith("not estimable").sum() == 9
    an = res.anova()
    assert an.attrs["mixrank"]["left_out"] == ["m4", "m5"]
    assert len(an) == 6 and np.isfinite(an["p_value"]).all()
    with pytest.raises(DesignError, match="incomplete='drop' is not available for model x"):
        mixrank.fit("correct ~ model * difficulty + (1|question)", df, incomplete="drop")


def test_compressed_frame_gives_the_same_rows_and_warnings():
    from mixrank.frame.columns import compress_frame

    df = _prompt_modes()
    df = df.drop(df.index[(df.model == "m1") & (df.question == "q03")])
    dense = mixrank.build_frame(df, F_PROMPT)
    comp = compress_frame(dense)
    got = {}
    for name, fr in (("dense", dense), ("compressed", comp)):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            res = mixrank.fit(F_PROMPT, fr, control=mixrank.Control(singular="ignore"))
        got[name] = (res.contrasts(), sorted((w.category.__name__, str(w.message)) for w in rec))
    pd.testing.assert_frame_equal(got["dense"][0], got["compressed"][0])
    assert got["dense"][1] == got["compressed"][1]
    names = {n for n, _ in got["dense"][1]}
    assert {"UnpairedCellsWarning", "IncompletePairWarning", "WeakDesignWarning"} <= names
    with pytest.raises(DesignError, match="compressed.*filter these models"):
        _quiet(F_PROMPT, comp, incomplete="drop")


def test_adjacent_verdicts_stay_within_score_groups():
    res = _quiet("correct ~ model + (1|subject)", _annotators(),
                 pair_by=["question", "subject", "annotator"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixrankWarning)
        tab = res.resolution(columns="all", anytime=False)
        sc = res.model_scores()
    group = dict(zip(sc.model, sc.group))
    assert len(tab) == 3                       # 2 adjacent pairs among a0-a2, 1 among b0-b1
    assert all(group[a] == group[b] for a, b in zip(tab.model_a, tab.model_b))
    assert (tab["estimate"] >= 0).all()
