"""Malformed harness output: every reader names the file and the position of the problem.

Each case copies a real fixture (``fixtures/generated``) into a temporary
folder, damages it the way it happens in practice (a run killed mid-write, a
log from another format version, a metric that was not computed, runs of
different models mixed together, bytes that are not UTF-8) and checks the
:class:`mixrank.DataError` message.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import mixrank
from mixrank import DataError

GEN = Path(__file__).resolve().parent / "fixtures" / "generated"


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copytree(GEN / name, dst)
    return dst


def _truncate(file: Path, keep: float = 0.5) -> None:
    raw = file.read_bytes()
    file.write_bytes(raw[: int(len(raw) * keep)])


def _bad_byte(file: Path, at: int) -> None:
    raw = bytearray(file.read_bytes())
    raw[at] = 0xFF
    file.write_bytes(bytes(raw))


def _first(folder: Path, pattern: str) -> Path:
    return sorted(folder.rglob(pattern))[0]


# ------------------------------------------------------------------ lm-eval
def test_lm_eval_truncated(tmp_path):
    root = _copy(tmp_path, "lm_eval")
    f = _first(root / "model-b", "samples_mx_colors_*.jsonl")
    lines = f.read_text().splitlines(keepends=True)
    f.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2])
    with pytest.raises(DataError, match=re.escape(f"{f}:3: invalid JSON")):
        mixrank.read(root)


def test_lm_eval_other_format_version(tmp_path):
    # lm_eval's sample lines carry no version: a line of another layout lacks doc_id
    root = _copy(tmp_path, "lm_eval")
    f = _first(root / "model-b", "samples_mx_colors_*.jsonl")
    lines = f.read_text().splitlines()
    obj = json.loads(lines[1])
    obj["id"] = obj.pop("doc_id")
    lines[1] = json.dumps(obj)
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=re.escape(f"{f}:2: missing field 'doc_id'")):
        mixrank.read(root)


def test_lm_eval_missing_metric(tmp_path):
    root = _copy(tmp_path, "lm_eval")
    with pytest.raises(DataError, match=r"samples_mx_arith_.*\.jsonl:1: metric 'f1' not found; "
                                        r"metrics present: \['acc', 'acc_norm'\]"):
        mixrank.read(root, metric="f1")


def test_lm_eval_mixed_models(tmp_path):
    root = _copy(tmp_path, "lm_eval")
    for f in (root / "model-b").iterdir():  # model-b's run dropped into model-a's folder
        shutil.move(str(f), root / "model-a" / f.name)
    with pytest.raises(DataError, match=r"model-a'? holds results of several models "
                                        r"\['model-a', 'model-b'\]"):
        mixrank.read(root)


def test_lm_eval_not_utf8(tmp_path):
    root = _copy(tmp_path, "lm_eval")
    f = _first(root / "model-b", "samples_mx_colors_*.jsonl")
    second = f.read_bytes().index(b"\n") + 1
    _bad_byte(f, second + 3)
    with pytest.raises(DataError, match=re.escape(f"{f}:2: byte 3") + r".*not valid UTF-8"):
        mixrank.read(root)


# ------------------------------------------------------------------ Inspect
def test_inspect_truncated_eval(tmp_path):
    pytest.importorskip("zstandard")
    root = _copy(tmp_path, "inspect")
    f = _first(root, "*.eval")
    _truncate(f)
    with pytest.raises(DataError, match=re.escape(f"{f}: not a readable .eval archive")):
        mixrank.read(root)


def test_inspect_truncated_json(tmp_path):
    root = _copy(tmp_path, "inspect_json")
    f = _first(root, "*.json")
    _truncate(f, 0.3)
    with pytest.raises(DataError, match=re.escape(str(f)) + r":\d+:\d+: invalid JSON .*truncated"):
        mixrank.read(root, format="inspect")


def test_inspect_wrong_version(tmp_path):
    root = _copy(tmp_path, "inspect_json")
    f = _first(root, "*.json")
    log = json.loads(f.read_text())
    log["version"] = 7
    f.write_text(json.dumps(log))
    with pytest.raises(DataError, match=re.escape(f"{f}: log format version 7 is not supported")):
        mixrank.read(root)


def test_inspect_missing_metric(tmp_path):
    with pytest.raises(DataError, match=r"_arith_.*\.json: metric 'f1' not found; metrics "
                                        r"present: \['match'\]"):
        mixrank.read(GEN / "inspect_json", metric="f1")


def test_inspect_mixed_models_in_one_folder_are_two_models(tmp_path):
    # An Inspect log has one eval spec, hence one model: a file cannot mix models.  Logs of
    # two models in one folder are two models; the same model and task twice keeps the latest.
    root = _copy(tmp_path, "inspect_json")
    f = _first(root, "*_arith_*.json")
    log = json.loads(f.read_text())
    log["eval"]["created"] = "2000-01-01T00:00:00+00:00"  # an older run of the same eval
    (root / "older.json").write_text(json.dumps(log))
    df = mixrank.read(root)
    assert df.model.nunique() == 2
    assert df.attrs["mixrank"]["superseded"] == [str(root / "older.json")]


def test_inspect_not_utf8(tmp_path):
    root = _copy(tmp_path, "inspect_json")
    f = _first(root, "*.json")
    text = f.read_bytes()
    at = text.index(b'"task"')
    _bad_byte(f, at + 1)
    line = text.count(b"\n", 0, at + 1) + 1
    with pytest.raises(DataError, match=re.escape(f"{f}: byte {at + 1} (line {line}) is not "
                                                  "valid UTF-8")):
        mixrank.read(root, format="inspect")


def test_inspect_bad_score_value(tmp_path):
    root = _copy(tmp_path, "inspect_json")
    f = _first(root, "*_arith_*.json")
    log = json.loads(f.read_text())
    log["samples"][3]["scores"]["match"]["value"] = ["C"]
    f.write_text(json.dumps(log))
    with pytest.raises(DataError, match=re.escape(f"{f}: samples[3]: score 'match' is ['C']")):
        mixrank.read(root)


# ------------------------------------------------------------------ HELM
def _helm_run(root: Path) -> Path:
    return sorted(p for p in (root / "runs" / "v1").iterdir())[0]


def test_helm_truncated(tmp_path):
    root = _copy(tmp_path, "helm")
    f = _helm_run(root) / "per_instance_stats.json"
    _truncate(f)
    with pytest.raises(DataError, match=re.escape(str(f)) + r":\d+:\d+: invalid JSON.*truncated"):
        mixrank.read(root)


def test_helm_wrong_version(tmp_path):
    root = _copy(tmp_path, "helm")
    f = _helm_run(root) / "per_instance_stats.json"
    entries = json.loads(f.read_text())
    f.write_text(json.dumps({"instances": entries}))  # not the list layout HELM >= 0.2 writes
    with pytest.raises(DataError, match=re.escape(f"{f}: not the per-instance format")):
        mixrank.read(root)


def test_helm_missing_metric(tmp_path):
    with pytest.raises(DataError, match=r"per_instance_stats.json: metric 'f1_score' not found; "
                                        r"metrics present: \['exact_match'\]"):
        mixrank.read(GEN / "helm", metric="f1_score")


def test_helm_mixed_models(tmp_path):
    root = _copy(tmp_path, "helm")
    f = _helm_run(root) / "run_spec.json"
    spec = json.loads(f.read_text())
    spec["adapter_spec"]["model"] = "other/model"
    f.write_text(json.dumps(spec))
    with pytest.raises(DataError, match=re.escape(f"{f}: the run name says model=")):
        mixrank.read(root)


def test_helm_not_utf8(tmp_path):
    root = _copy(tmp_path, "helm")
    f = _helm_run(root) / "per_instance_stats.json"
    _bad_byte(f, 40)
    with pytest.raises(DataError, match=re.escape(f"{f}: byte 40 (line ") + r"\d+\) is not valid"):
        mixrank.read(root)


# ------------------------------------------------------------------ lighteval
def test_lighteval_truncated(tmp_path):
    root = _copy(tmp_path, "lighteval")
    f = _first(root, "details_*.parquet")
    _truncate(f)
    with pytest.raises(DataError, match=re.escape(f"{f}: not a readable parquet file")):
        mixrank.read(root, metric="acc")


def test_lighteval_wrong_version(tmp_path):
    pd = pytest.importorskip("pandas")
    root = _copy(tmp_path, "lighteval")
    f = _first(root, "details_*.parquet")
    pd.read_parquet(f).rename(columns={"metric": "scores"}).to_parquet(f)
    with pytest.raises(DataError, match=re.escape(f"{f}: no 'metric' (lighteval >= 0.9) or "
                                                  "'metrics' column")):
        mixrank.read(root, metric="acc")


def test_lighteval_missing_metric():
    with pytest.raises(DataError, match=r"details_custom\|mx_arith\|0_.*parquet: metric 'pem' "
                                        r"not found; metrics present: \['acc', 'em'\]"):
        mixrank.read(GEN / "lighteval", metric="pem")


def test_lighteval_mixed_tasks_in_one_file(tmp_path):
    # a details file carries no model; what one file can mix is tasks (doc.task_name)
    pd = pytest.importorskip("pandas")
    root = _copy(tmp_path, "lighteval")
    f = _first(root, "details_*.parquet")
    df = pd.read_parquet(f)
    docs = list(df["doc"])
    docs[2] = dict(docs[2], task_name="custom|other|0")
    df["doc"] = docs
    df.to_parquet(f)
    with pytest.raises(DataError, match=re.escape(f"{f}: rows belong to several tasks")):
        mixrank.read(root, metric="acc")


def test_lighteval_results_not_utf8(tmp_path):
    root = _copy(tmp_path, "lighteval")
    f = _first(root, "results_*.json")
    _bad_byte(f, 10)
    with pytest.raises(DataError, match=re.escape(f"{f}: byte 10 (line ")):
        mixrank.read(root, metric="acc")


def test_lighteval_bad_value(tmp_path):
    pd = pytest.importorskip("pandas")
    root = _copy(tmp_path, "lighteval")
    f = _first(root, "details_*.parquet")
    df = pd.read_parquet(f)
    vals = [dict(m) for m in df["metric"]]
    vals[4]["acc"] = None  # a metric not computed for one example
    df["metric"] = vals
    df.to_parquet(f)
    with pytest.raises(DataError, match=re.escape(f"{f}: row 4: metric 'acc' missing")):
        mixrank.read(root, metric="acc")


# ------------------------------------------------------------------ read()
def test_read_unknown_format_and_option(tmp_path):
    # a bad option value is an OptionError (docs/vocabulary.md), a ValueError like DataError
    with pytest.raises(mixrank.OptionError,
                       match=r"format='nope' is unknown; expected 'auto' or one of"):
        mixrank.read(GEN / "helm", format="nope")
    with pytest.raises(mixrank.OptionError, match=r"option\(s\) \['subject_field'\] do not apply to "
                                        r"format 'helm'"):
        mixrank.read(GEN / "helm", subject_field="x")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(DataError, match="cannot tell the format of"):
        mixrank.read(tmp_path)


def test_inspect_eval_archive_mixing_models(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    import zipfile

    src = _first(GEN / "inspect", "*_arith_*.eval")
    dst = tmp_path / "mixed.eval"
    # rebuild the archive (stored members, as older Inspect versions could write) with the
    # header of the other model's log
    other = sorted((GEN / "inspect").glob("*_arith_*.eval"))[1]

    def members(path):
        from mixrank.io.inspect_logs import _member

        with zipfile.ZipFile(path) as z:
            return {n: _member(z, n, path) for n in z.namelist()}

    assert zstandard is not None
    body, head = members(src), members(other)
    body["header.json"] = head["header.json"]
    with zipfile.ZipFile(dst, "w") as z:
        for name, data in body.items():
            z.writestr(name, data)
    with pytest.raises(DataError, match=re.escape(f"{dst}: the archive mixes models: "
                                                  "_journal/start.json names")):
        mixrank.read(dst)
