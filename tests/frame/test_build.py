"""Frame building: validation of malformed input, real-data counts, replicates."""

from __future__ import annotations

import gzip
import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank import DataError, build_frame
from mixrank.errors import MissingDataWarning

F1 = "correct ~ model + (1|subject)"


def small():
    return mixrank.simulate(3, 4, 5, 2, rng=7)


# ---------------------------------------------------------------- malformed
def test_empty_file(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("")
    with pytest.raises(DataError, match="empty"):
        build_frame(p, F1)


def test_header_only_file(tmp_path):
    p = tmp_path / "header.csv"
    p.write_text("model,subject,question,prompt,correct\n")
    with pytest.raises(DataError, match="no rows"):
        build_frame(p, F1)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        build_frame(tmp_path / "nope.csv", F1)


def test_unsupported_suffix(tmp_path):
    p = tmp_path / "x.xlsx"
    p.write_text("a")
    with pytest.raises(DataError, match="unsupported file type"):
        build_frame(p, F1)


def test_missing_column_lists_available_and_closest():
    df = small().rename(columns={"subject": "subjects"})
    with pytest.raises(DataError) as e:
        build_frame(df, F1)
    msg = str(e.value)
    assert "'subject'" in msg and "Did you mean 'subjects'?" in msg and "Available columns" in msg


def test_missing_response_column():
    with pytest.raises(DataError, match="'score' .*the score"):
        build_frame(small(), "score ~ model + (1|subject)")


@pytest.mark.row_order   # the message names a row position
def test_text_in_score():
    df = small()
    df["correct"] = df["correct"].astype(object)
    df.loc[5, "correct"] = "yes"
    with pytest.raises(DataError, match=r"must be numeric, but row 5 holds 'yes'"):
        build_frame(df, F1)


@pytest.mark.row_order   # the message names a row position
def test_nan_scores_error_and_drop():
    df = small()
    df["correct"] = df["correct"].astype(float)
    df.loc[[3, 8], "correct"] = np.nan
    with pytest.raises(DataError, match=r"2 missing value\(s\) \(first at row 3\).*na='drop'"):
        build_frame(df, F1)
    with pytest.warns(MissingDataWarning, match="dropped 2"):
        fr = build_frame(df, F1, na="drop")
    assert fr.n_dropped == 2 and fr.n_rows == len(df) - 2
    assert df["correct"].isna().sum() == 2  # caller's data untouched


def test_infinite_score():
    df = small()
    df["correct"] = df["correct"].astype(float)
    df.loc[2, "correct"] = np.inf
    with pytest.raises(DataError, match="infinite"):
        build_frame(df, F1)


def test_mixed_types_in_key_column():
    df = small()
    df["question"] = df["question"].astype(object)
    df.loc[0, "question"] = 17
    with pytest.raises(DataError, match=r"column 'question' mixes value types \['int', 'str'\]"):
        build_frame(df, F1)


@pytest.mark.row_order   # the message names a row position
def test_missing_key_value():
    df = small()
    df["subject"] = df["subject"].astype(object)
    df.loc[4, "subject"] = None
    with pytest.raises(DataError, match=r"column 'subject' has a missing value \(first at row 4\)"):
        build_frame(df, F1)


def test_duplicate_keys_named():
    df = small()
    df = pd.concat([df, df.iloc[[10]]], ignore_index=True)
    row = df.iloc[10]
    with pytest.raises(DataError) as e:
        build_frame(df, F1)
    msg = str(e.value)
    assert "1 (model, cell) combination(s) have several rows" in msg
    assert repr(row["question"]) in msg and repr(row["model"]) in msg
    assert "replicate='sample'" in msg


def test_grouping_with_one_level():
    df = small()
    df["subject"] = "only"
    df["question"] = df["question"]  # still unique per cell
    with pytest.raises(DataError, match=r"random term \(1\|subject\) has a single level"):
        build_frame(df, F1)


def test_model_with_no_common_cells():
    df = small()
    extra = df[df.model == "m01"].copy()
    extra["model"] = "loner"
    extra["prompt"] = "other-" + extra["prompt"]
    df = pd.concat([df, extra], ignore_index=True)
    with pytest.raises(DataError, match=r"\['loner'\] share no cell with any other model"):
        build_frame(df, F1)


def test_random_term_outside_pair_by():
    with pytest.raises(DataError, match="not a pairing key"):
        build_frame(small(), F1, pair_by=["question", "prompt"])


def test_bad_type_of_data():
    with pytest.raises(DataError, match="not supported"):
        build_frame([1, 2, 3], F1)


def test_replicate_duplicates_rejected():
    df = mixrank.simulate(2, 2, 3, 1, samples=2, rng=1)
    df.loc[1, "sample"] = 0
    with pytest.raises(DataError, match="replicate 'sample'=0 appears more than once"):
        build_frame(df, F1, replicate="sample")


def test_single_model_frame_cannot_be_fit():
    df = small()
    df = df[df.model == "m01"]
    fr = build_frame(df, F1)
    assert fr.n_models == 1
    with pytest.raises(DataError, match="single level"):
        mixrank.fit(F1, fr)


# ---------------------------------------------------------------- readers
@pytest.mark.parametrize("kind", ["csv", "csv.gz", "parquet", "jsonl", "polars", "arrow"])
def test_inputs_of_every_supported_kind(tmp_path, kind):
    df = small()
    ref = build_frame(df, F1)
    if kind == "csv":
        src = tmp_path / "d.csv"
        df.to_csv(src, index=False)
    elif kind == "csv.gz":
        src = tmp_path / "d.csv.gz"
        df.to_csv(src, index=False)
    elif kind == "parquet":
        src = tmp_path / "d.parquet"
        df.to_parquet(src)
    elif kind == "jsonl":
        src = tmp_path / "d.jsonl"
        df.to_json(src, orient="records", lines=True)
    elif kind == "polars":
        pl = pytest.importorskip("polars")
        src = pl.from_pandas(df)
    else:
        pa = pytest.importorskip("pyarrow")
        src = pa.Table.from_pandas(df)
    fr = build_frame(src, F1)
    np.testing.assert_array_equal(fr.scores, ref.scores)
    assert fr.models == ref.models


def test_truncated_gzip(tmp_path):
    df = small()
    p = tmp_path / "d.csv.gz"
    df.to_csv(p, index=False)
    raw = p.read_bytes()
    p.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DataError, match="could not read"):
        build_frame(p, F1)


# ---------------------------------------------------------------- semantics
def test_default_pair_by_ignores_extra_columns(shared_data):
    d = shared_data("chembench")
    fr = build_frame(d, F1)
    assert fr.pair_by == ("subject", "question", "prompt")
    assert "temperature" not in fr.pair_by


def test_binary_and_continuous_detection():
    assert build_frame(small(), F1).binary
    g = mixrank.simulate(2, 3, 4, 1, family="gaussian", sd_residual=1, rng=2)
    assert not build_frame(g, F1).binary


def test_input_not_modified():
    df = small()
    before = df.copy()
    build_frame(df, F1)
    pd.testing.assert_frame_equal(df, before)


# ---------------------------------------------------------------- real data
def test_chembench_counts(shared_data):
    d = shared_data("chembench", reruns=True)
    fr = build_frame(shared_data("chembench"), F1)  # the default: the published run
    assert fr.n_models == 25
    assert fr.n_cells == 2788
    assert fr.term_levels["subject"] == 9
    assert fr.observed.all()
    assert fr.n_rows == 25 * 2788
    full = build_frame(d, F1)  # the 7 re-run models add the temp1_rerun prompt
    assert full.n_cells == 2 * 2788
    assert int(full.observed.sum()) == 25 * 2788 + 7 * 2788


def test_jailbreakbench_counts(shared_data):
    d = shared_data("jailbreakbench")
    fr = build_frame(d, "correct ~ model + (1|subject) + (1|prompt)")
    assert fr.n_models == 4
    assert fr.term_levels["prompt"] == 6
    assert fr.term_levels["subject"] == 10
    assert d["question"].nunique() == 100
    assert fr.n_cells == 6 * 100
    # 18 of the 24 model x attack combinations exist
    obs = pd.DataFrame(fr.observed, columns=fr.models)
    obs["prompt"] = fr.cells["prompt"].to_numpy()
    per = obs.groupby("prompt").sum()
    assert int((per > 0).to_numpy().sum()) == 18
    assert set(np.unique(per.to_numpy())) == {0, 100}


def test_llm_stability_with_replicates(shared_data):
    d = shared_data("llm_stability")
    with pytest.raises(DataError, match="replicate='sample'"):
        build_frame(d, F1)
    fr = build_frame(d, F1, replicate="sample")
    assert fr.n_models == 1 and fr.n_cells == 1407
    assert (fr.replicates[:, 0] == 5).all()
    means = d.groupby(["subject", "question", "prompt"])["correct"].mean().to_numpy()
    np.testing.assert_allclose(np.sort(fr.scores[:, 0]), np.sort(means))


def test_humans_partly_overlapping(shared_data):
    h = shared_data("chembench_humans")
    # the published file leaves 239 rows without a topic: a loud error, not a silent drop
    with pytest.raises(DataError, match="column 'subject' has a missing value"):
        build_frame(h, F1)
    h["subject"] = h["subject"].fillna("(no topic)")
    fr = build_frame(h, F1)
    assert fr.n_models == 20
    assert fr.n_rows == len(h)
    bal = fr.balance()
    # every pair of chemists overlaps on part of the questions (unbalanced design)
    assert bal["n"].min() > 0 and (~bal["complete"]).any()
    # tool and notool questions never coincide: comparing the two conditions by pairing
    # on (subject, question) is impossible, and the frame says so
    with pytest.raises(DataError, match="share no cell"):
        build_frame(h, "correct ~ prompt + (1|subject)", replicate="model",
                    pair_by=["subject", "question"])


def test_example_dataset():
    df = mixrank.load_example()
    assert df.shape == (5760, 5)
    fr = build_frame(df, "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)")
    assert fr.n_cells == 12 * 20 * 4 and fr.observed.all()


def test_gz_written_by_gzip_module(tmp_path):
    df = small()
    p = tmp_path / "d.jsonl.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(df.to_json(orient="records", lines=True))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fr = build_frame(p, F1)
    assert fr.n_rows == len(df)


@pytest.mark.parametrize("kw, msg", [
    (dict(pair_by=("subject", 5)), r"\[5\] are not column names"),
    (dict(pair_by=["subject", "question", "question"]), "names a column twice"),
    (dict(replicate="model"), "is the formula's comparison factor"),
    (dict(replicate="correct"), "is the formula's score"),
    (dict(replicate=3), "expected the name of the column"),
])
def test_pairing_options_are_checked(kw, msg):
    """Found by the fuzz suite: a TypeError, and a replicate equal to the model column accepted."""
    with pytest.raises(DataError, match=msg):
        mixrank.fit(F1, small(), **kw)


def test_pair_by_as_one_column_name():
    """pair_by="question" used to be split into the characters 'q', 'u', ..."""
    fr = build_frame(mixrank.simulate(3, 4, 5, 1, rng=7), "correct ~ model", pair_by="question")
    assert fr.pair_by == ("question",)


@pytest.mark.parametrize("M", [1, 2, 8, 9, 20])
def test_level_sums_are_the_per_model_level_sums_in_cell_order(M):
    """compute_stats counts model by model up to 8 models and through one (level, model)
    index above: both add each level's cells in cell order, so the sums are exactly the
    per-model weighted counts (and n_common the pairwise common-cell counts)."""
    from mixrank.frame.frame import compute_stats

    rng = np.random.default_rng(M)
    n, L = 500, 37
    scores = rng.random((n, M)) * rng.choice([1e-3, 1.0, 1e3], (n, M))
    observed = rng.random((n, M)) > 0.3
    scores[~observed] = np.nan
    codes = rng.integers(0, L, n).astype(np.int32)
    st = compute_stats(scores, observed, {"t": codes}, {"t": L})
    y0 = np.where(observed, scores, 0.0)
    want = np.stack([np.bincount(codes, weights=y0[:, j], minlength=L) for j in range(M)], axis=1)
    assert st.level_sums["t"].shape == (L, M)
    assert np.array_equal(st.level_sums["t"], want)
    m = observed.astype(int)
    assert np.array_equal(st.n_common, m.T @ m)


def test_balance_columns_agree():
    """A pair marked ``complete: no`` with only_a = only_b = 0 (cells only a third
    model has) now shows them as ``neither``; the columns add up to every cell."""
    d = pd.DataFrame({"model": ["a", "b", "c", "a", "b", "c", "c"],
                      "subject": ["s1", "s1", "s1", "s2", "s2", "s2", "s3"],
                      "question": ["q"] * 7, "correct": [1, 0, 1, 0, 1, 1, 0]})
    bal = build_frame(d, F1).balance().set_index(["model_a", "model_b"])
    ab = bal.loc[("a", "b")]
    assert (ab["n"], ab["only_a"], ab["only_b"], ab["neither"]) == (2, 0, 0, 1)
    assert not ab["complete"]
    assert (bal["n"] + bal["only_a"] + bal["only_b"] + bal["neither"] == 3).all()
    assert (bal["complete"] == ((bal["only_a"] == 0) & (bal["only_b"] == 0)
                                & (bal["neither"] == 0))).all()
