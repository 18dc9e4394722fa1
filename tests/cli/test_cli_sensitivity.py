"""CLI: mixrank resolution --sensitivity / --anytime and mixrank report --sensitivity."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.cli import main

F1 = "correct ~ model + (1|subject)"


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("MIXRANK_PROGRESS", "0")


def _api():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(F1, mixrank.load_example())


def test_resolution_sensitivity_csv_is_the_stability_table(capsys):
    code = main(["resolution", "example", "-f", F1, "--sensitivity", "loso,bootstrap",
                 "--draws", "200", "--seed", "4", "--format", "csv"])
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err
    got = pd.read_csv(io.StringIO(out))
    want = _api().sensitivity("loso,bootstrap", draws=200, rng=4, summary=True)
    assert list(got.columns) == list(want.columns)
    np.testing.assert_allclose(got["stability"], want["stability"], rtol=1e-12)
    assert got["kind"].tolist() == want["kind"].tolist()


def test_resolution_table_shows_both_and_anytime_choice(capsys):
    code = main(["resolution", "example", "-f", F1, "--sensitivity", "loso"])
    out, _ = capsys.readouterr()
    assert code == 0 and "Stability of the clustered verdict (loso)" in out
    code = main(["resolution", "example", "-f", F1, "--anytime", "normal", "--format", "csv"])
    out, _ = capsys.readouterr()
    got = pd.read_csv(io.StringIO(out))
    want = _api().resolution(columns="all", anytime="normal")
    np.testing.assert_allclose(got["q_anytime"], want["q_anytime"], rtol=1e-12)
    assert "discordance" not in got.columns
    code = main(["resolution", "example", "-f", F1, "--sensitivity", "jackknife"])
    _, err = capsys.readouterr()
    assert code != 0 and "loso" in err


def test_report_sensitivity(tmp_path, capsys):
    out = tmp_path / "r.html"
    code = main(["report", "example", "-f", F1, "-o", str(out), "--sensitivity", "loso"])
    assert code == 0
    assert "How robust is the clustered verdict?" in out.read_text()
