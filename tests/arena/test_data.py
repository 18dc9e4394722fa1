"""Battle-log input: spellings, readers (CSV/JSONL/parquet/FastChat JSON), bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.arena.data import encode_battles, parse_arena_formula
from mixrank.errors import DataError, DesignError, FormulaError, OptionError

from .conftest import simulate_battles

LOG = pd.DataFrame({"model_a": ["x", "y", "z", "x", "y", "z", "x", "z"],
                    "model_b": ["y", "z", "x", "z", "x", "y", "y", "y"],
                    "winner": ["model_a", "model_a", "model_b", "tie", "model_b",
                               "tie (bothbad)", "model_b", "model_a"]})


def test_fastchat_and_numeric_spellings_are_the_same_battles():
    num = LOG.assign(winner=LOG.winner.map({"model_a": 1, "model_b": 0, "tie": 0.5,
                                            "tie (bothbad)": 0.5}))
    a, b = mixrank.arena(LOG), mixrank.arena(num)
    np.testing.assert_array_equal(a.battles.outcome, b.battles.outcome)
    np.testing.assert_allclose(a.fit.theta, b.fit.theta)
    assert a.battles.outcome.tolist() == [1, 1, 0, .5, 0, .5, 0, 1]
    drop = mixrank.arena(LOG, ties="drop")
    assert drop.n_battles == 6 and drop.battles.n_ties_dropped == 2


def test_readers(tmp_path):
    log = simulate_battles(300, np.array([0.0, 0.5, -0.5]), rng=1)
    ref = mixrank.arena(log)
    log.to_csv(tmp_path / "b.csv", index=False)
    log.to_json(tmp_path / "b.jsonl", orient="records", lines=True)
    log.to_parquet(tmp_path / "b.parquet")
    for f in ("b.csv", "b.jsonl", "b.parquet"):
        np.testing.assert_allclose(mixrank.arena(tmp_path / f).fit.theta, ref.fit.theta)


def test_fastchat_clean_battle_json(tmp_path):
    recs = []
    for i, (a, b, w) in enumerate(LOG.itertuples(index=False)):
        recs.append({"question_id": f"q{i}", "model_a": a, "model_b": b, "winner": w,
                     "judge": "u1", "turn": 1, "anony": True, "language": "English",
                     "conv_metadata": {"sum_user_tokens": 10,
                                       "sum_assistant_a_tokens": 100 + 10 * i,
                                       "sum_assistant_b_tokens": 120,
                                       "header_count_a": {"h1": 1, "h2": i % 2},
                                       "header_count_b": {"h1": 0, "h2": 0},
                                       "list_count_a": {"ordered": 0, "unordered": 2},
                                       "list_count_b": {"ordered": 1, "unordered": 0},
                                       "bold_count_a": {"**": 1, "__": 0},
                                       "bold_count_b": {"**": 0, "__": 0}}})
    (tmp_path / "clean_battle.json").write_text(json.dumps(recs))
    df = mixrank.read_battles(tmp_path / "clean_battle.json")
    assert {"len_a", "len_b", "header_a", "list_b", "bold_a"} <= set(df.columns)
    assert df["len_a"].tolist()[:2] == [100, 110] and df["header_a"].tolist()[:2] == [1, 2]
    res = mixrank.arena(tmp_path / "clean_battle.json", "winner ~ style(len)")
    assert res.battles.features == ("len",)
    (tmp_path / "bad.json").write_text('{"a": 1}')
    with pytest.raises(DataError, match="not a JSON list"):
        mixrank.arena(tmp_path / "bad.json")


def test_unknown_winner_values_are_named():
    bad = LOG.assign(winner=LOG.winner.replace({"tie": "draw"}))
    with pytest.raises(DataError, match=r"unknown winner value.*row 3.*'draw'.*model_a"):
        mixrank.arena(bad)
    with pytest.raises(DataError, match="unknown winner"):
        mixrank.arena(LOG.assign(winner=[1, 0, 0.7, 1, 0, 1, 0, 1]))


def test_self_battles_refused_with_row():
    bad = LOG.copy()
    bad.loc[4, "model_b"] = "y"
    with pytest.raises(DataError, match=r"self-battle.*row 4.*'y'"):
        mixrank.arena(bad)


def test_nan_covariates_refused_with_column_and_row():
    log = simulate_battles(200, np.array([0.0, 0.5, -0.5]), rng=2)
    log.loc[7, "len_b"] = np.nan
    with pytest.raises(DataError, match=r"'len_b'.*row 7"):
        mixrank.arena(log, "winner ~ style(len)")
    with pytest.raises(DataError, match="needs columns md_a and md_b"):
        mixrank.arena(log, "winner ~ style(md)")
    log2 = simulate_battles(200, np.array([0.0, 0.5, -0.5]), rng=2)
    log2["prompt"] = np.where(np.arange(200) == 3, None, "p")
    with pytest.raises(DataError, match=r"cluster column 'prompt' is missing in row 3"):
        mixrank.arena(log2, cluster="prompt")


def test_disconnected_graph_names_components():
    two = pd.concat([LOG, LOG.replace({"x": "u", "y": "v", "z": "w"})], ignore_index=True)
    with pytest.raises(DataError, match=r"disconnected: 2 groups.*'u', 'v', 'w'.*'x', 'y', 'z'"):
        mixrank.arena(two)


def test_never_loses_or_never_wins_says_so_and_prior_fixes_it():
    log = pd.concat([LOG, pd.DataFrame({"model_a": ["best", "z", "best"],
                                        "model_b": ["x", "best", "y"],
                                        "winner": ["model_a", "model_b", "model_a"]})],
                    ignore_index=True)
    with pytest.raises(DataError, match=r"infinite.*\{'best'\} never lost.*prior=0.5"):
        mixrank.arena(log)
    res = mixrank.arena(log, prior=0.5)
    sc = res.model_scores().set_index("model")
    assert sc["estimate"].idxmax() == "best" and np.isfinite(sc["std_error"]).all()
    never_wins = LOG.assign(winner=np.where(LOG.model_b == "z", "model_a",
                                            np.where(LOG.model_a == "z", "model_b", LOG.winner)))
    with pytest.raises(DataError, match=r"\{'z'\} never won"):
        mixrank.arena(never_wins)


def test_missing_columns_and_bad_options():
    with pytest.raises(DataError, match="no column 'winner'"):
        mixrank.arena(LOG.drop(columns="winner"))
    with pytest.raises(DesignError, match="ties="):
        mixrank.arena(LOG, ties="ignore")
    with pytest.raises(DesignError, match="cluster="):
        mixrank.arena(LOG.assign(p=1), cluster="p", se="bootstrap")
    with pytest.raises(OptionError, match="se='sandwich'"):    # an unused option
        mixrank.arena(LOG.assign(p=1), cluster="p", se="information")
    with pytest.raises(DesignError, match="prior"):
        mixrank.arena(LOG, prior=-1)
    with pytest.raises(DesignError, match="draws="):
        mixrank.arena(LOG, se="bootstrap", draws=5)


@pytest.mark.parametrize("formula, where", [
    ("winner ~ style(len) + log(x)", "log(x)"),
    ("winner ~ style(len, 3)", "style(len, 3)"),
    ("winner + x ~ 1", "winner + x"),
])
def test_formula_errors_point_at_the_term(formula, where):
    with pytest.raises(FormulaError) as exc:
        parse_arena_formula(formula, None)
    assert exc.value.position == formula.index(where)


def test_battles_from_scores_ties_when_both_right_or_wrong():
    df = pd.DataFrame({"model": ["a", "b", "c"] * 2, "question": [1, 1, 1, 2, 2, 2],
                       "correct": [1, 0, 1, 0, 0, 1]})
    log = mixrank.battles_from_scores(df)
    assert log[["model_a", "model_b", "winner"]].values.tolist() == [
        ["a", "b", "model_a"], ["a", "b", "tie"], ["a", "c", "tie"], ["a", "c", "model_b"],
        ["b", "c", "model_b"], ["b", "c", "model_b"]]
    with pytest.raises(DataError, match="several rows"):
        mixrank.battles_from_scores(pd.concat([df, df.iloc[:1]]))
    with pytest.raises(DataError, match="missing or non-numeric"):
        mixrank.battles_from_scores(df.assign(correct=[1, None, 1, 0, 0, 1]))


def test_encode_never_modifies_input():
    before = LOG.copy()
    encode_battles(LOG)
    pd.testing.assert_frame_equal(LOG, before)


def test_bootstrap_with_prior_resamples_the_battles_only():
    log = pd.concat([LOG] * 30 + [pd.DataFrame({"model_a": ["best"] * 5, "model_b": ["x"] * 5,
                                                "winner": ["model_a"] * 5})], ignore_index=True)
    res = mixrank.arena(log, prior=0.5, se="bootstrap", draws=200, rng=3)
    assert res.draws.shape == (200, 4)
    # each resample has N = the real battles; the prior's pseudo-wins are added, not drawn
    info = mixrank.arena(log, prior=0.5)
    np.testing.assert_allclose(res.fit.theta, info.fit.theta)
    assert np.isfinite(res.draws).all()
    cb, ci = res.contrasts(adjust="none"), info.contrasts(adjust="none")
    rest = (cb.model_a != "best") & (cb.model_b != "best")   # pairs the data inform well
    assert (cb.std_error[rest] / ci.std_error[rest]).between(0.7, 1.4).all()


def test_relabelling_models_relabels_the_results():
    log = simulate_battles(1500, np.array([0.0, 0.5, -0.5, 0.2]), rng=9)
    names = {"m00": "zeta", "m01": "alpha", "m02": "mu", "m03": "beta"}
    other = log.assign(model_a=log.model_a.map(names), model_b=log.model_b.map(names))
    a = mixrank.arena(log).model_scores().assign(model=lambda d: d.model.map(names))
    b = mixrank.arena(other).model_scores()
    pd.testing.assert_frame_equal(a.sort_values("model").reset_index(drop=True),
                                  b.sort_values("model").reset_index(drop=True),
                                  check_exact=False, rtol=1e-9)


def test_covariates_without_variation_or_collinear_are_refused():
    log = simulate_battles(300, np.array([0.0, 0.5, -0.5]), rng=4)
    with pytest.raises(DataError, match=r"covariate\(s\) \['len'\] cannot be estimated"):
        mixrank.arena(log.assign(len_a=0.0, len_b=0.0), "winner ~ style(len)")
    per_model = {"m00": 1.0, "m01": 2.0, "m02": 5.0}   # a feature constant per model
    same = log.assign(t_a=log.model_a.map(per_model), t_b=log.model_b.map(per_model))
    with pytest.raises(DataError, match="combination of the models' strengths"):
        mixrank.arena(same, "winner ~ t")


def test_davidson_needs_ties_and_decisive_battles():
    with pytest.raises(DataError, match="0 tie.*runs to zero.*ties='half'"):
        mixrank.arena(LOG[~LOG.winner.str.startswith("tie")], ties="davidson")
    with pytest.raises(DataError, match="runs to infinity"):
        mixrank.arena(LOG.assign(winner="tie"), ties="davidson")
