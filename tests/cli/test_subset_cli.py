"""``mixrank select-items`` and ``mixrank subset-score``: the round trip through files equals
the API, the diagnostics table, and usage errors (exit 2, one ``error:`` line)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.cli import main
from tests.subset.sim import board


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("subset_cli")
    data, _ = board(models=9, items=200, subjects=3, seed=4)
    ref, new = data[data.model != "m08"], data[data.model == "m08"]
    ref.to_csv(tmp / "ref.csv", index=False)
    new.to_csv(tmp / "new_all.csv", index=False)
    return tmp, ref, new


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_round_trip_equals_the_api(capsys, files):
    tmp, ref, new = files
    code, _, err = _run(capsys, ["select-items", str(tmp / "ref.csv"), "--k", "40", "--seed", "3",
                                 "--format", "csv", "-o", str(tmp / "sel.csv")])
    assert code == 0, err
    sel = pd.read_csv(tmp / "sel.csv")
    api_sel = mixrank.select_items(ref, 40, rng=3)
    assert sorted(sel["question"]) == sorted(api_sel["question"])
    new[new.question.isin(sel.question)].to_csv(tmp / "new.csv", index=False)
    code, out, err = _run(capsys, ["subset-score", str(tmp / "ref.csv"), "--new",
                                   str(tmp / "new.csv"), "--selection", str(tmp / "sel.csv"),
                                   "--format", "csv"])
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    want = mixrank.subset_score(ref, new[new.question.isin(api_sel.question)],
                                selection=api_sel).scores()
    np.testing.assert_allclose(got["estimate"], want["estimate"], rtol=1e-9)
    for table, col in (("contrasts", "model_b"), ("ranks", "rank_upper")):
        code, out, err = _run(capsys, ["subset-score", str(tmp / "ref.csv"), "--new",
                                       str(tmp / "new.csv"), "--selection", str(tmp / "sel.csv"),
                                       "--table", table, "--format", "csv"])
        assert code == 0 and col in pd.read_csv(io.StringIO(out)).columns, err


def test_diagnostics_table(capsys, files):
    tmp, ref, _ = files
    code, out, err = _run(capsys, ["select-items", str(tmp / "ref.csv"), "--table", "diagnostics",
                                   "--format", "csv"])
    assert code == 0, err
    assert len(pd.read_csv(io.StringIO(out))) == 200


@pytest.mark.parametrize("argv, message", [
    (["select-items", "{ref}"], "needs --k"),
    (["select-items", "{ref}", "--k", "999"], "--k 999: expected an integer"),
    (["select-items", "{ref}", "--k", "10", "--strata", "domain"], "no column 'domain'"),
    (["select-items", "{ref}", "--table", "diagnostics", "--k", "10"], "would be ignored"),
    (["subset-score", "{ref}", "--new", "{new_all}", "--selection", "{sel}"],
     "outside the selection"),
    (["subset-score", "{ref}", "--new", "{ref}", "--selection", "{sel}"],
     "both in the reference"),
])
def test_usage_errors(capsys, files, argv, message):
    tmp, ref, _ = files
    mixrank.select_items(ref, 20, rng=1).to_csv(tmp / "sel20.csv", index=False)
    paths = {"ref": tmp / "ref.csv", "new_all": tmp / "new_all.csv", "sel": tmp / "sel20.csv"}
    code, out, err = _run(capsys, [a.format(**paths) for a in argv])
    assert code == 2 and out == ""
    assert err.startswith("error:") and message in err and "Traceback" not in err


def test_adjust_flag_equals_the_api_and_is_refused_where_unused(capsys, files):
    tmp, ref, new = files
    sel = mixrank.select_items(ref, 40, rng=3)
    sel.to_csv(tmp / "sel40.csv", index=False)
    new[new.question.isin(sel.question)].to_csv(tmp / "new40.csv", index=False)
    base = ["subset-score", str(tmp / "ref.csv"), "--new", str(tmp / "new40.csv"),
            "--selection", str(tmp / "sel40.csv")]
    code, out, err = _run(capsys, [*base, "--table", "contrasts", "--adjust", "holm",
                                   "--format", "csv"])
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    want = mixrank.subset_score(ref, new[new.question.isin(sel.question)],
                                selection=sel).contrasts(adjust="holm")
    np.testing.assert_allclose(got["p_adjusted"], want["p_adjusted"], rtol=1e-9)
    code, out, err = _run(capsys, [*base, "--adjust", "holm"])
    assert code == 2 and out == "" and "would be ignored" in err
