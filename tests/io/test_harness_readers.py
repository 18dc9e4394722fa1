"""Harness readers on output the harnesses themselves wrote.

The fixtures under ``fixtures/generated/`` were written by
``tests/io/producers/generate.py`` (lm_eval 0.4.13 ``--model dummy``;
``inspect_ai.eval()`` 0.3.285 with an offline model provider; HELM 0.5.16 and
lighteval 0.13.0 schema classes and aggregation, see that script).  Every
check compares the reader's rows with the harness's own per-task aggregate:
the value it wrote to its results/stats file, and for lm_eval the table it
printed.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.io.read import FORMATS, detect_format

GEN = Path(__file__).resolve().parent / "fixtures" / "generated"


def _zstd_or_skip():
    try:
        import zstandard  # noqa: F401
    except ImportError:
        import os

        if os.environ.get("MIXRANK_REQUIRE_PRODUCERS") == "1":
            pytest.fail("zstandard is needed to read Inspect .eval logs (pip install -e '.[producers]')")
        pytest.skip("zstandard not installed (pip install 'mixrank[inspect]')")


def _means(df, by=("model", "subject")):
    return df.groupby(list(by))["correct"].mean()


# ------------------------------------------------------------------ detection
@pytest.mark.parametrize("folder,fmt", [("lm_eval", "lm_eval"), ("inspect", "inspect"),
                                        ("inspect_json", "inspect"), ("helm", "helm"),
                                        ("lighteval", "lighteval")])
def test_detect_format(folder, fmt):
    assert detect_format(GEN / folder) == fmt


def test_registry_lists_every_harness():
    assert {"lm_eval", "inspect", "helm", "lighteval", "table"} <= set(FORMATS)


# ------------------------------------------------------------------ lm-eval
def _lm_results(model: str) -> dict:
    files = sorted((GEN / "lm_eval" / model).glob("results_*.json"))
    return json.loads(files[-1].read_text())


def _printed(model: str, seed: str) -> dict[tuple[str, str], float]:
    """The table lm_eval printed: (task, metric) -> value."""
    out, task = {}, None
    for line in (GEN / "lm_eval" / model / f"stdout_{seed}.txt").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 7 or cells[0] in ("Tasks", "Groups") or set(cells[0]) <= {"-", ":"} \
                and cells[0]:
            continue
        name = re.sub(r"^[-\s]+", "", cells[0])
        task = name or task
        out.setdefault((task, cells[4]), float(cells[6]))
    return out


@pytest.mark.parametrize("metric", ["acc", "acc_norm"])
def test_lm_eval_matches_results_and_printed_table(metric):
    df = mixrank.read(GEN / "lm_eval", metric=metric)
    assert df.attrs["mixrank"]["reader"] == "read_lm_eval"
    for model, seed in [("model-a", "1"), ("model-b", "2")]:
        res = _lm_results(model)
        printed = _printed(model, seed)
        got = _means(df[df.model == model], by=["subject"])
        assert sorted(got.index) == ["mx_arith", "mx_capitals", "mx_colors"]
        for task, mean in got.items():
            assert mean == pytest.approx(res["results"][task][f"{metric},none"], abs=1e-12)
            assert round(mean, 4) == pytest.approx(printed[(task, metric)], abs=5e-5)
            rows = df[(df.model == model) & (df.subject == task)]
            assert len(rows) == res["n-samples"][task]["effective"]
            assert sorted(rows.question, key=int) == [str(i) for i in range(len(rows))]


def test_lm_eval_groups_of_groups_and_runs():
    df = mixrank.read(GEN / "lm_eval")
    groups = df.drop_duplicates("subject").set_index("subject")["group"].to_dict()
    assert groups == {"mx_arith": "mx_all", "mx_capitals": "mx_facts", "mx_colors": "mx_facts"}
    # a group of groups expands to its leaf tasks; a group to its own
    assert set(mixrank.read(GEN / "lm_eval", tasks="mx_all").subject) == set(groups)
    assert set(mixrank.read(GEN / "lm_eval", tasks="mx_facts").subject) == {"mx_capitals",
                                                                            "mx_colors"}
    # model-a has two runs in its folder: the later mx_arith is read, the earlier superseded
    sup = df.attrs["mixrank"]["superseded"]
    assert len(sup) == 1 and "model-a" in sup[0] and "samples_mx_arith" in sup[0]
    # pairing: both models answered the same documents of every task
    keys = df.groupby("model").apply(lambda g: set(zip(g.subject, g.question)),
                                     include_groups=False)
    assert keys["model-a"] == keys["model-b"] and len(keys["model-a"]) == 15


# ------------------------------------------------------------------ Inspect
def _inspect_headers():
    out = {}
    for f in sorted((GEN / "inspect_json").glob("*.json")):
        log = json.loads(f.read_text())
        out[(log["eval"]["model"], log["eval"]["task"])] = log
    return out


@pytest.mark.parametrize("folder", ["inspect", "inspect_json"])
def test_inspect_matches_log_accuracy(folder):
    if folder == "inspect":
        _zstd_or_skip()
    df = mixrank.read(GEN / folder)
    assert list(df.columns[:6]) == ["model", "subject", "question", "prompt", "sample", "correct"]
    headers = _inspect_headers()
    assert len(headers) == 4  # 2 models x 2 tasks
    for (model, task), log in headers.items():
        rows = df[(df.model == model) & (df.subject == task)]
        accuracy = log["results"]["scores"][0]["metrics"]["accuracy"]["value"]
        assert rows.correct.mean() == pytest.approx(accuracy, abs=1e-12)
        ids = [str(i) for i in log["eval"]["dataset"]["sample_ids"]]
        assert sorted(rows.question) == sorted(ids * 2)
        assert sorted(rows["sample"].unique()) == [1, 2]  # epochs
        # each (sample id, epoch) equals the log's own per-sample score letter
        letters = {(str(s["id"]), s["epoch"]): next(iter(s["scores"].values()))["value"]
                   for s in log["samples"]}
        for r in rows.itertuples():
            assert r.correct == {"C": 1.0, "I": 0.0}[letters[(r.question, r.sample)]]
    assert df.attrs["mixrank"]["metric"] == {"arith": "match", "words": "includes"}


def test_inspect_eval_and_json_agree():
    _zstd_or_skip()
    key = ["model", "subject", "question", "sample"]
    a = mixrank.read(GEN / "inspect").sort_values(key).reset_index(drop=True)
    b = mixrank.read(GEN / "inspect_json").sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, check_like=False)


def test_inspect_subject_and_prompt_fields():
    df = mixrank.read(GEN / "inspect_json", subject_field="level", prompt_field="level")
    assert set(df.subject) == {"easy", "hard"} and (df.subject == df.prompt).all()
    assert set(df.task) == {"arith", "words"}


# ------------------------------------------------------------------ HELM
def _helm_runs():
    return sorted(p for p in (GEN / "helm" / "runs" / "v1").iterdir() if p.is_dir())


def _helm_stat(run: Path, perturbation: str | None) -> float:
    for s in json.loads((run / "stats.json").read_text()):
        n = s["name"]
        p = n.get("perturbation")
        if n["name"] == "exact_match" and ((p is None and perturbation is None)
                                           or (p and p["name"] == perturbation
                                               and p["computed_on"] == "perturbed")):
            return s["mean"]
    raise AssertionError("stat not found")


def test_helm_matches_stats_json():
    df = mixrank.read(GEN / "helm", metric="exact_match")
    assert len(_helm_runs()) == 4  # 2 models x 2 scenarios
    for run in _helm_runs():
        spec = json.loads((run / "run_spec.json").read_text())
        rows = df[df.run == spec["name"]]
        assert (rows.model == spec["adapter_spec"]["model"]).all()
        for prompt, pert in [("original", None), ("typos", "typos")]:
            part = rows[rows.prompt == prompt]
            # HELM: mean over train trials of the mean over instances
            assert part.groupby("sample").correct.mean().mean() == pytest.approx(
                _helm_stat(run, pert), abs=1e-12)
            assert part.correct.mean() == pytest.approx(_helm_stat(run, pert), abs=1e-12)
        state = json.loads((run / "scenario_state.json").read_text())
        ids = {rs["instance"]["id"] for rs in state["request_states"]}
        assert set(rows.question) == ids
        assert sorted(rows["sample"].unique()) == [0, 1]
        assert len(rows) == len(state["request_states"])
    # pairing: the subject drops model=, so both models share each scenario's items
    assert set(df.subject) == {"mx_arith:level=easy", "mx_trivia"}
    keys = df.groupby("model").apply(lambda g: set(zip(g.subject, g.question, g.prompt, g["sample"])),
                                     include_groups=False)
    assert keys.iloc[0] == keys.iloc[1]


# ------------------------------------------------------------------ lighteval
@pytest.mark.parametrize("metric", ["acc", "em"])
def test_lighteval_matches_results(metric):
    df = mixrank.read(GEN / "lighteval", metric=metric)
    for f in sorted((GEN / "lighteval" / "results").rglob("results_*.json")):
        blob = json.loads(f.read_text())
        model = blob["config_general"]["model_name"]
        for task, values in blob["results"].items():
            rows = df[(df.model == model) & (df.task == task)]
            assert rows.correct.mean() == pytest.approx(values[metric], abs=1e-12)
            detail = next((GEN / "lighteval" / "details" / model).rglob(f"details_{task}_*.parquet"))
            ids = [d["id"] for d in pd.read_parquet(detail)["doc"]]
            assert list(rows.question) == ids
    assert set(df.subject) == {"mx_arith", "mx_words"}
    assert df.groupby("model").size().to_dict() == {"model-a": 10, "model-b": 10}


def test_lighteval_needs_a_metric_choice():
    with pytest.raises(mixrank.DataError, match=r"several metrics \['acc', 'em'\]"):
        mixrank.read(GEN / "lighteval")


# ------------------------------------------------------------------ all harnesses: a fit
@pytest.mark.filterwarnings("ignore::mixrank.SingularFitWarning")
@pytest.mark.parametrize("folder,opts", [("lm_eval", {}), ("inspect_json", {}), ("helm", {}),
                                         ("lighteval", {"metric": "acc"})])
def test_fit_on_harness_output(folder, opts):
    df = mixrank.read(GEN / folder, **opts)
    res = mixrank.fit("correct ~ model + (1|subject)", df.groupby(
        ["model", "subject", "question"], as_index=False)["correct"].mean())
    c = res.contrasts()
    a, b = c.model_a[0], c.model_b[0]
    # with every question answered by both models, the paired GLS estimate is a positively
    # weighted mean of the per-subject mean differences
    cell = df.groupby(["model", "subject", "question"])["correct"].mean().unstack("model")
    diff = (cell[a] - cell[b]).groupby(level="subject").mean()
    assert np.isfinite(c.estimate[0]) and len(c) == 1
    assert diff.min() - 1e-9 <= c.estimate[0] <= diff.max() + 1e-9


def test_inspect_archive_layout_is_what_the_reader_expects():
    names = zipfile.ZipFile(next((GEN / "inspect").glob("*.eval"))).namelist()
    assert "header.json" in names and any(n.startswith("samples/") for n in names)


# ------------------------------------------------------------------ formula left side = metric
@pytest.mark.filterwarnings("ignore::mixrank.SingularFitWarning")
def test_formula_left_side_selects_the_metric():
    by_formula = mixrank.fit("acc_norm ~ model + (1|subject)", str(GEN / "lm_eval"))
    table = mixrank.read(GEN / "lm_eval", metric="acc_norm").rename(columns={"correct": "acc_norm"})
    by_table = mixrank.fit("acc_norm ~ model + (1|subject)", table)
    pd.testing.assert_frame_equal(by_formula.contrasts(), by_table.contrasts())
    default = mixrank.fit("correct ~ model + (1|subject)", GEN / "lm_eval").contrasts()
    acc = mixrank.fit("acc ~ model + (1|subject)", GEN / "lm_eval").contrasts()
    assert default.estimate[0] == acc.estimate[0]
    # the two metrics give the same plain mean gap on this fixture; the scores differ
    acc_scores = mixrank.fit("acc ~ model + (1|subject)", GEN / "lm_eval").model_scores()
    assert (acc_scores.estimate.to_numpy() != by_formula.model_scores().estimate.to_numpy()).all()
    # replicated output: HELM train trials as replicates
    em = mixrank.fit("exact_match ~ model + (1|subject)", GEN / "helm", replicate="sample")
    assert em.frame.n_models == 2
    with pytest.raises(mixrank.DataError, match=r"metric 'f1' not found; metrics present: "
                                                r"\['acc', 'acc_norm'\]"):
        mixrank.fit("f1 ~ model + (1|subject)", GEN / "lm_eval")


def test_describe_names_mapping_metric_and_rows():
    from mixrank.io.read import describe, read_for_formula

    text = describe(mixrank.read(GEN / "helm"))
    assert "question <- instance_id" in text and "sample   <- train_trial_index" in text
    assert "rows per subject: mx_arith:level=easy 40, mx_trivia 32" in text
    text = describe(mixrank.read(GEN / "lm_eval", metric="acc_norm"))
    assert "metric: mx_arith=acc_norm" in text and "question <- doc_id" in text
    with pytest.raises(mixrank.DataError, match="left side names metric 'acc_norm' but "
                                                "metric='acc' was also given"):
        read_for_formula(str(GEN / "lm_eval"), "acc_norm ~ model", metric="acc")
    table = mixrank.load_example()
    assert read_for_formula(table, "correct ~ model") is table


@pytest.mark.parametrize("value,expected", [
    ("C", 1.0), ("P", 0.5), ("I", 0.0), ("N", 0.0), (True, 1.0), (False, 0.0), (0.25, 0.25),
    (3, 3.0), ("yes", 1.0), ("False", 0.0), ("0.75", 0.75),
])
def test_inspect_value_mapping(value, expected):
    from mixrank.io.inspect_logs import score_to_float

    assert score_to_float(value, "here", "m") == expected


@pytest.mark.parametrize("value", ["maybe", ["C"], {"a": 1}, None, float("nan")])
def test_inspect_value_mapping_rejects(value):
    from mixrank.io.inspect_logs import score_to_float

    with pytest.raises(mixrank.DataError, match="here: score 'm' is"):
        score_to_float(value, "here", "m")


def test_inspect_dict_valued_scorer_by_key(tmp_path):
    # a scorer returning a dict (e.g. several rubric items): each key is a metric
    src = sorted((GEN / "inspect_json").glob("*_words_*.json"))[0]
    log = json.loads(src.read_text())
    for s in log["samples"]:
        v = s["scores"]["includes"]["value"]
        s["scores"]["includes"]["value"] = {"hit": v, "len": len(str(s["id"]))}
    (tmp_path / "log.json").write_text(json.dumps(log))
    hit = mixrank.read(tmp_path / "log.json", metric="hit")
    assert hit.correct.mean() == pytest.approx(
        log["results"]["scores"][0]["metrics"]["accuracy"]["value"], abs=1e-12)
    same = mixrank.read(tmp_path / "log.json", metric="includes/len")
    assert (same.correct == 1.0).all()
    with pytest.raises(mixrank.DataError, match="several metrics"):
        mixrank.read(tmp_path / "log.json")


def test_lighteval_leaderboard_v1_layout(tmp_path):
    # Open LLM Leaderboard v1 details: a `metrics` column, no `doc`; question = example index
    date = "2023-10-01T12-00-00.000000"
    for model, scores in {"org__m1": [1.0, 0.0, 1.0], "org__m2": [0.0, 0.0, 1.0]}.items():
        folder = tmp_path / model
        folder.mkdir()
        pd.DataFrame({"example": ["q0", "q1", "q2"], "full_prompt": ["p0", "p1", "p2"],
                      "metrics": [{"acc": s, "acc_norm": 1 - s} for s in scores]}).to_parquet(
            folder / f"details_harness|arc:challenge|25_{date}.parquet")
    df = mixrank.read(tmp_path, metric="acc_norm")
    assert set(df.model) == {"org__m1", "org__m2"} and set(df.subject) == {"arc:challenge"}
    assert list(df[df.model == "org__m2"].correct) == [1.0, 1.0, 0.0]
    assert list(df.question[:3]) == ["0", "1", "2"]
