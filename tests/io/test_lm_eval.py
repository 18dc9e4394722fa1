"""Tests for mixrank.io.lm_eval.read_lm_eval.

The fixture tree ``fixtures/lm_eval`` is written by
``fixtures/make_lm_eval_fixtures.py`` in the on-disk format of
lm-evaluation-harness v0.4.x (sources cited there).  Expected scores below are
the per-document outcomes designed in that script (its comments), not values
computed by the reader.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from mixrank.errors import DataError, MixrankWarning
from mixrank.io.lm_eval import read_lm_eval

FIXTURE = Path(__file__).parent / "fixtures" / "lm_eval"
PYTHIA = "EleutherAI/pythia-160m"
QWEN = "Qwen/Qwen2.5-0.5B-Instruct"
PY_DIR = "EleutherAI__pythia-160m"
QW_DIR = "Qwen__Qwen2.5-0.5B-Instruct"
PY_DATE = "2024-06-05T14-03-11.482153"
QW_DATE_1 = "2024-06-06T10-22-05.907315"
QW_DATE_2 = "2024-06-06T11-40-19.551008"
METRIC = {"arc_easy": "acc", "gsm8k": "exact_match", "mmlu_stem_mini": "acc"}
G = "mmlu_stem_mini"

# (model, task, doc scores, group, filter) as designed in make_lm_eval_fixtures.py
DESIGN = [
    (PYTHIA, "arc_easy", [1, 0, 1, 0], None, "none"),
    (PYTHIA, "gsm8k", [0, 1, 0], None, "strict-match"),
    (PYTHIA, "mmlu_abstract_algebra", [0, 1, 1], G, "none"),
    (PYTHIA, "mmlu_astronomy", [1, 0, 0], G, "none"),
    (QWEN, "arc_easy", [1, 1, 0], None, "none"),  # latest run: doc 3 not run
    (QWEN, "gsm8k", [1, 1, 0], None, "strict-match"),
    (QWEN, "mmlu_abstract_algebra", [1, 1, 1], G, "none"),
    (QWEN, "mmlu_astronomy", [1, 1, 0], G, "none"),
]


def expected_frame(design=DESIGN, prompt="default"):
    rows = [
        {"model": m, "subject": t, "question": str(i), "prompt": prompt, "correct": float(s),
         "group": g, "filter": f}
        for m, t, scores, g, f in design for i, s in enumerate(scores)
    ]
    return pd.DataFrame(rows)


def assert_same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    # lm-eval's per-document hash is kept beside the design (test_prompt_is_the_template)
    assert got.columns[-1] == "prompt_hash"
    got = got.drop(columns="prompt_hash")
    assert list(got.columns) == list(want.columns)
    assert got.index.equals(pd.RangeIndex(len(got)))
    # compare as plain objects: the string dtype differs between pandas 2 and 3
    g = got.astype(object).where(got.notna(), None)
    w = want.astype(object).where(want.notna(), None)
    assert g.values.tolist() == w.values.tolist()


@pytest.fixture
def tree(tmp_path):
    """A writable copy of the fixture tree."""
    dst = tmp_path / "out"
    shutil.copytree(FIXTURE, dst)
    return dst


def sample_file(root: Path, folder: str, task: str, date: str) -> Path:
    return root / folder / f"samples_{task}_{date}.jsonl"


def edit_lines(file: Path, fn) -> None:
    """Rewrite a samples file: ``fn(list_of_dicts) -> list_of_dicts_or_raw_strings``."""
    objs = [json.loads(s) for s in file.read_text(encoding="utf-8").splitlines() if s.strip()]
    out = fn(objs)
    file.write_text(
        "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in out), encoding="utf-8"
    )


# ----------------------------------------------------------------- reading
def test_reads_two_models_three_tasks_with_group():
    df = read_lm_eval(FIXTURE, metric=METRIC, filter={"gsm8k": "strict-match"}, prompt="default")
    assert_same(df, expected_frame())
    assert df["correct"].dtype == "float64"
    meta = df.attrs["mixrank"]
    assert meta["reader"] == "read_lm_eval"
    assert meta["metric"] == {"arc_easy": "acc", "gsm8k": "exact_match",
                              "mmlu_abstract_algebra": "acc", "mmlu_astronomy": "acc"}
    assert meta["filter"]["gsm8k"] == "strict-match"
    assert len(meta["files"]) == 8


def test_latest_run_per_task_and_superseded_listed():
    df = read_lm_eval(FIXTURE, tasks="arc_easy", prompt="p")
    qwen = df[df.model == QWEN]
    # the 2024-06-04 run scored all four docs 0; the 2024-06-06 run (3 docs) is read
    assert qwen["question"].tolist() == ["0", "1", "2"]
    assert qwen["correct"].tolist() == [1.0, 1.0, 0.0]
    assert df.attrs["mixrank"]["superseded"] == [
        str(sample_file(FIXTURE, QW_DIR, "arc_easy", "2024-06-04T09-15-42.118201"))
    ]


def test_group_expands_to_leaf_tasks():
    df = read_lm_eval(FIXTURE, tasks=["mmlu_stem_mini"], prompt="x")
    assert sorted(df["subject"].unique()) == ["mmlu_abstract_algebra", "mmlu_astronomy"]
    assert set(df["group"]) == {G}
    assert len(df) == 12


def test_other_metric_and_filter():
    df = read_lm_eval(FIXTURE, tasks="arc_easy", metric="acc_norm", prompt="p")
    assert df[df.model == PYTHIA]["correct"].tolist() == [1.0, 1.0, 1.0, 0.0]
    g = read_lm_eval(FIXTURE, tasks="gsm8k", metric="exact_match", filter="flexible-extract")
    assert g[g.model == PYTHIA]["correct"].tolist() == [1.0, 1.0, 0.0]
    assert g[g.model == QWEN]["correct"].tolist() == [1.0, 1.0, 1.0]
    assert set(g["filter"]) == {"flexible-extract"}


def test_metric_mapping_task_entry_overrides_group_entry():
    df = read_lm_eval(FIXTURE, tasks=G, metric={G: "acc", "mmlu_astronomy": "acc"}, prompt="p")
    assert len(df) == 12


def test_prompt_is_the_template_and_the_hash_is_kept():
    """The per-document prompt_hash made 15 documents look like 15 prompts.

    ``prompt`` is the run's prompt configuration (constant across documents:
    the results files say 0-shot, no chat template); lm-eval's per-document
    hash is kept as ``prompt_hash``.
    """
    df = read_lm_eval(FIXTURE, tasks="arc_easy")
    ctx = "Question: Which of these is a source of light?\nAnswer:"
    want = hashlib.sha256(ctx.encode("utf-8")).hexdigest()
    first = df[(df.model == PYTHIA) & (df.question == "0")]
    assert first["prompt_hash"].tolist() == [want]
    assert set(df["prompt"]) == {"0-shot"}
    assert df["prompt_hash"].nunique() == df["question"].nunique() > 1
    # both models saw the same contexts: the same hash per document
    assert df.groupby("question")["prompt_hash"].nunique().max() == 1


def test_single_samples_file_and_model_folder(tree):
    one = read_lm_eval(sample_file(tree, PY_DIR, "arc_easy", PY_DATE), prompt="p")
    assert one["model"].unique().tolist() == [PYTHIA]
    assert one["correct"].tolist() == [1.0, 0.0, 1.0, 0.0]
    folder = read_lm_eval(tree / QW_DIR, metric=METRIC, filter={"gsm8k": "strict-match"},
                          prompt="default")
    assert_same(folder, expected_frame([d for d in DESIGN if d[0] == QWEN]))


def test_model_name_from_model_args_then_folder(tree):
    res = tree / PY_DIR / f"results_{PY_DATE}.json"
    blob = json.loads(res.read_text())
    del blob["model_name"]  # lm_eval < 0.4.3 wrote no model_name
    res.write_text(json.dumps(blob))
    df = read_lm_eval(tree, tasks="arc_easy", prompt="p")
    assert PYTHIA in set(df["model"])
    blob["config"]["model_args"] = {"pretrained": "org/dict-args", "dtype": "float32"}
    res.write_text(json.dumps(blob))
    assert "org/dict-args" in set(read_lm_eval(tree, tasks="arc_easy", prompt="p")["model"])
    res.unlink()
    df = read_lm_eval(tree, tasks="arc_easy", prompt="p")
    assert PY_DIR in set(df["model"])  # no results file: the folder name


def test_bool_metric_and_int_metric(tree):
    f = sample_file(tree, PY_DIR, "arc_easy", PY_DATE)
    edit_lines(f, lambda objs: [{**o, "acc": bool(o["acc"]), "hit": int(o["acc"])} for o in objs])
    df = read_lm_eval(f, prompt="p")
    assert df["correct"].tolist() == [1.0, 0.0, 1.0, 0.0]
    assert read_lm_eval(f, metric="hit", prompt="p")["correct"].tolist() == [1.0, 0.0, 1.0, 0.0]


def test_nested_groups_and_innermost_group(tree):
    res = tree / PY_DIR / f"results_{PY_DATE}.json"
    blob = json.loads(res.read_text())
    blob["group_subtasks"] = {"mmlu": [G], **blob["group_subtasks"]}
    res.write_text(json.dumps(blob))
    df = read_lm_eval(tree, tasks="mmlu", prompt="p")
    assert sorted(df["subject"].unique()) == ["mmlu_abstract_algebra", "mmlu_astronomy"]
    assert set(df["group"]) == {G}


def test_old_format_without_filter_and_group_subtasks(tree):
    """lm_eval 0.4.0-0.4.2: no 'filter'/'metrics' keys; groups named in task configs."""
    f = sample_file(tree, PY_DIR, "mmlu_astronomy", PY_DATE)
    edit_lines(f, lambda objs: [{k: v for k, v in o.items() if k not in ("filter", "metrics")}
                                for o in objs])
    res = tree / PY_DIR / f"results_{PY_DATE}.json"
    blob = json.loads(res.read_text())
    del blob["group_subtasks"]
    blob["configs"]["mmlu_astronomy"]["group"] = ["mmlu_stem_old"]
    res.write_text(json.dumps(blob))
    df = read_lm_eval(tree / PY_DIR, tasks="mmlu_astronomy", prompt="p")
    assert df["correct"].tolist() == [1.0, 0.0, 0.0]
    assert set(df["filter"]) == {"none"}
    assert set(df["group"]) == {"mmlu_stem_old"}


def test_unbalanced_doc_ids_across_models_are_legal(tree):
    f = sample_file(tree, QW_DIR, "mmlu_astronomy", QW_DATE_2)
    edit_lines(f, lambda objs: objs[1:])  # qwen lacks doc 0
    df = read_lm_eval(tree, tasks="mmlu_astronomy", prompt="p")
    assert df[df.model == QWEN]["question"].tolist() == ["1", "2"]
    assert df[df.model == PYTHIA]["question"].tolist() == ["0", "1", "2"]


def test_different_prompt_configurations_warn(tree):
    # a different per-document hash alone (same template) pairs: no warning
    f = sample_file(tree, QW_DIR, "mmlu_astronomy", QW_DATE_2)
    edit_lines(f, lambda objs: [{**o, "prompt_hash": "chat-" + o["prompt_hash"]} for o in objs])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = read_lm_eval(tree, tasks="mmlu_astronomy")
    assert set(df["prompt"]) == {"0-shot"}
    # a run with a chat template and 5 shots is another prompt configuration
    res = tree / QW_DIR / f"results_{QW_DATE_2}.json"
    blob = json.loads(res.read_text())
    blob["n-shot"]["mmlu_astronomy"] = 5
    blob["chat_template_sha"] = "abcdef0123456789"
    res.write_text(json.dumps(blob))
    with pytest.warns(MixrankWarning, match="1 task.*mmlu_astronomy.*0-shot.*5-shot"):
        df = read_lm_eval(tree, tasks="mmlu_astronomy")
    assert set(df[df.model == QWEN]["prompt"]) == {"5-shot +chat abcdef01"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_lm_eval(tree, tasks="mmlu_astronomy", prompt="zero-shot")


# ----------------------------------------------------------------- errors
def test_nonexistent_path(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_lm_eval(tmp_path / "nope")


def test_empty_folder(tmp_path):
    with pytest.raises(DataError, match=r"holds no samples_.*--log_samples"):
        read_lm_eval(tmp_path)


def test_folder_with_results_but_no_samples(tree):
    for p in tree.rglob("samples_*.jsonl"):
        p.unlink()
    with pytest.raises(DataError, match=r"holds results_\*\.json but no samples.*--log_samples"):
        read_lm_eval(tree)


def test_truncated_json_line_names_file_and_line(tree):
    f = sample_file(tree, PY_DIR, "arc_easy", PY_DATE)
    lines = f.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][: len(lines[2]) // 2]
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"{f.name}:3: invalid JSON.*truncated"):
        read_lm_eval(tree, tasks="arc_easy")


def test_truncated_results_json_names_file(tree):
    res = tree / QW_DIR / f"results_{QW_DATE_1}.json"
    res.write_text(res.read_text()[:500])
    with pytest.raises(DataError, match=rf"{res.name}:\d+: invalid JSON"):
        read_lm_eval(tree)


def test_missing_doc_id_names_line(tree):
    f = sample_file(tree, QW_DIR, "gsm8k", QW_DATE_1)
    edit_lines(f, lambda objs: [o if i != 4 else {k: v for k, v in o.items() if k != "doc_id"}
                                for i, o in enumerate(objs)])
    with pytest.raises(DataError, match=rf"{f.name}:5: missing field 'doc_id'"):
        read_lm_eval(tree, tasks="gsm8k", metric="exact_match", filter="strict-match")


def test_missing_metric_lists_metrics_present(tree):
    f = sample_file(tree, PY_DIR, "arc_easy", PY_DATE)
    edit_lines(f, lambda objs: [o if i != 1 else {k: v for k, v in o.items() if k != "acc"}
                                for i, o in enumerate(objs)])
    # line 2 lacks 'acc' but its 'metrics' list still names it: the message shows the list
    with pytest.raises(DataError, match=rf"{f.name}:2: metric 'acc' not found; metrics present"):
        read_lm_eval(tree, tasks="arc_easy")
    with pytest.raises(DataError, match=r"arc_easy.*:1: metric 'f1' not found; metrics present: "
                                        r"\['acc', 'acc_norm'\]"):
        read_lm_eval(FIXTURE, tasks="arc_easy", metric="f1")


def test_missing_metric_without_metrics_key_infers_fields(tree):
    f = sample_file(tree, PY_DIR, "gsm8k", PY_DATE)
    edit_lines(f, lambda objs: [{k: v for k, v in o.items() if k != "metrics"} for o in objs])
    with pytest.raises(DataError, match=r":1: metric 'acc' not found; metrics present: "
                                        r"\['exact_match'\]"):
        read_lm_eval(f, filter="strict-match")


def test_non_numeric_metric_names_line(tree):
    f = sample_file(tree, PY_DIR, "gsm8k", PY_DATE)
    edit_lines(f, lambda objs: [{**o, "bleu": [o["target"], o["filtered_resps"][0]]}
                                for o in objs])
    with pytest.raises(DataError, match=rf"{f.name}:1: metric 'bleu' is a list.*corpus-level"):
        read_lm_eval(f, metric="bleu", filter="strict-match")
    edit_lines(f, lambda objs: [{**o, "exact_match": "yes" if i == 2 else o["exact_match"]}
                                for i, o in enumerate(objs)])
    with pytest.raises(DataError, match=rf"{f.name}:3: metric 'exact_match' is a str"):
        read_lm_eval(f, metric="exact_match", filter="strict-match")
    edit_lines(f, lambda objs: [{**o, "exact_match": float("nan")} for o in objs])
    with pytest.raises(DataError, match=rf"{f.name}:1: .*expected a finite number"):
        read_lm_eval(f, metric="exact_match", filter="strict-match")


def test_duplicated_doc_id_within_task_names_both_lines(tree):
    f = sample_file(tree, PY_DIR, "mmlu_astronomy", PY_DATE)
    edit_lines(f, lambda objs: objs + [objs[1]])
    with pytest.raises(DataError, match=rf"{f.name}:4: duplicate doc_id 1 .*first seen on line 2"):
        read_lm_eval(tree, tasks=G)


def test_same_doc_id_under_different_filters_is_not_a_duplicate():
    # gsm8k files carry each doc once per filter (6 lines, doc_ids 0,1,2,0,1,2)
    df = read_lm_eval(FIXTURE, tasks="gsm8k", metric="exact_match", filter="strict-match")
    assert len(df) == 6


def test_several_filters_need_a_choice():
    with pytest.raises(DataError, match=r"several filters \['strict-match', 'flexible-extract'\]"):
        read_lm_eval(FIXTURE, tasks="gsm8k", metric="exact_match")
    with pytest.raises(DataError, match=r"no lines with filter 'maj@8'; filters present: "
                                        r"\['strict-match', 'flexible-extract'\]"):
        read_lm_eval(FIXTURE, tasks="gsm8k", metric="exact_match", filter="maj@8")


def test_doc_hash_mismatch_across_models(tree):
    f = sample_file(tree, QW_DIR, "mmlu_astronomy", QW_DATE_2)
    edit_lines(f, lambda objs: [{**o, "doc_hash": "0" * 64} if i == 2 else o
                                for i, o in enumerate(objs)])
    with pytest.raises(DataError, match=rf"{f.name}:3: task 'mmlu_astronomy' doc_id 2 is a "
                                        r"different document"):
        read_lm_eval(tree, tasks="mmlu_astronomy")
    assert len(read_lm_eval(tree, tasks="mmlu_astronomy", check_docs=False)) == 6


def test_file_mixing_document_structures(tree):
    f = sample_file(tree, PY_DIR, "mmlu_astronomy", PY_DATE)
    arc = [json.loads(s) for s in sample_file(tree, PY_DIR, "arc_easy", PY_DATE)
           .read_text().splitlines()]
    edit_lines(f, lambda objs: objs + [{**arc[3], "doc_id": 3}])
    with pytest.raises(DataError, match=rf"{f.name}:4: document fields .* differ from those on "
                                        r"line 1.*mixes tasks"):
        read_lm_eval(tree, tasks=G)


def test_line_naming_another_task(tree):
    f = sample_file(tree, PY_DIR, "mmlu_astronomy", PY_DATE)
    edit_lines(f, lambda objs: [{**o, "task": "mmlu_anatomy"} if i == 1 else o
                                for i, o in enumerate(objs)])
    with pytest.raises(DataError, match=rf"{f.name}:2: the line is for task 'mmlu_anatomy'"):
        read_lm_eval(tree, tasks=G)


def test_empty_samples_file(tree):
    f = sample_file(tree, PY_DIR, "mmlu_astronomy", PY_DATE)
    f.write_text("")
    with pytest.raises(DataError, match=rf"{f.name}: the samples file is empty"):
        read_lm_eval(tree, tasks=G)


def test_non_object_line(tree):
    f = sample_file(tree, PY_DIR, "mmlu_astronomy", PY_DATE)
    edit_lines(f, lambda objs: [objs[0], "[1, 2]", *objs[1:]])
    with pytest.raises(DataError, match=rf"{f.name}:2: expected a JSON object"):
        read_lm_eval(tree, tasks=G)


def test_bad_doc_id_type(tree):
    f = sample_file(tree, PY_DIR, "mmlu_astronomy", PY_DATE)
    edit_lines(f, lambda objs: [{**o, "doc_id": 1.5} if i == 1 else o for i, o in enumerate(objs)])
    with pytest.raises(DataError, match=rf"{f.name}:2: doc_id is 1.5"):
        read_lm_eval(tree, tasks=G)


def test_unparsable_samples_file_name(tree):
    (tree / PY_DIR / "samples_arc_easy.jsonl").write_text("")
    with pytest.raises(DataError, match="cannot parse the task and date"):
        read_lm_eval(tree)


def test_unknown_task_lists_available():
    with pytest.raises(DataError, match=r"tasks \['hellaswag'\] not found.*arc_easy.*"
                                        r"groups: \['mmlu_stem_mini'\]"):
        read_lm_eval(FIXTURE, tasks=["arc_easy", "hellaswag"])


def test_metric_mapping_must_cover_tasks():
    with pytest.raises(DataError, match=r"no entry for tasks \['gsm8k'\]"):
        read_lm_eval(FIXTURE, metric={"arc_easy": "acc", G: "acc"})
    with pytest.raises(DataError, match="neither a task nor a group"):
        read_lm_eval(FIXTURE, tasks="arc_easy", metric={"arc_easy": "acc", "boolq": "acc"})


def test_same_model_same_task_in_two_folders(tree):
    shutil.copytree(tree / PY_DIR, tree / "copy_of_pythia")
    with pytest.raises(DataError, match=r"model 'EleutherAI/pythia-160m' has task 'arc_easy' in "
                                        r"two folders"):
        read_lm_eval(tree, tasks="arc_easy")


def test_folder_with_two_models(tree):
    res = tree / QW_DIR / f"results_{QW_DATE_2}.json"
    blob = json.loads(res.read_text())
    blob["model_name"] = "someone/else"
    res.write_text(json.dumps(blob))
    with pytest.raises(DataError, match="holds results of several models"):
        read_lm_eval(tree)


def test_empty_tasks_list():
    with pytest.raises(DataError, match="non-empty list"):
        read_lm_eval(FIXTURE, tasks=[])


def test_invalid_utf8_names_file_and_line(tree):
    """A raw UnicodeDecodeError used to escape the API (and a traceback the CLI)."""
    f = sample_file(tree, PY_DIR, "arc_easy", PY_DATE)
    lines = f.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3][:10] + b"\xff\xfe" + lines[3][10:]
    f.write_bytes(b"".join(lines))
    with pytest.raises(DataError, match=rf"{f.name}:4: byte 10 .*not valid UTF-8"):
        read_lm_eval(tree, tasks="arc_easy")
    res = tree / QW_DIR / f"results_{QW_DATE_1}.json"
    res.write_bytes(b"\xff" + res.read_bytes())
    with pytest.raises(DataError, match=r"byte 0 \(line 1\) is not valid UTF-8"):
        read_lm_eval(tree)
