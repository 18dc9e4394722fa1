"""``mixrank omnibus``: the table of ``FitResult.omnibus`` (``--test`` is its ``method=``),
and the refusals as one ``error:`` line with exit 2."""

from __future__ import annotations

import pytest

from tests.cli.test_cli import F1, api_fit, assert_same, csv_of, run


@pytest.mark.parametrize("test", [None, "friedman", "cochran"])
def test_omnibus_table_is_the_api_table(capsys, test):
    code, out, _ = run(capsys, "omnibus", "example", "-f", F1, "--format", "csv",
                       *(["--test", test] if test else []))
    assert code == 0
    want = api_fit().omnibus(method=test)
    assert_same(csv_of(out), want)


@pytest.mark.parametrize("extra, needle", [
    (["-f", F1 + " + (1|prompt)"], "--test friedman"),           # not a CR2 fit
    (["-f", F1, "--family", "binomial"], "--family binomial"),
    (["-f", F1, "--test", "rank"], "invalid choice"),
])
def test_omnibus_refusals(capsys, extra, needle):
    code, _, err = run(capsys, "omnibus", "example", *extra)
    assert code == 2
    assert err.strip().splitlines()[-1].startswith("error:") and needle in err


def test_omnibus_randomization_flags_are_the_api_keywords(capsys):
    code, out, _ = run(capsys, "omnibus", "example", "-f", F1, "--format", "csv",
                       "--test", "randomization", "--draws", "300", "--seed", "4")
    assert code == 0
    assert_same(csv_of(out), api_fit().omnibus(method="randomization", draws=300, rng=4))
    code, _, err = run(capsys, "omnibus", "example", "-f", F1, "--draws", "300")
    assert code == 2 and "--test randomization" in err
