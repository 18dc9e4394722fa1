"""``mixrank report`` without ``--adjust`` uses the fit's own defaults, as the API does: the
rank intervals' method and the verdicts' multiplicity paradigm in the HTML are the ones
``fit.rank_intervals()`` and ``fit.resolution()`` record (the unit randomization on the
CR2 path with 12 subjects; Holm where the flips do not apply)."""

from __future__ import annotations

import re
import warnings

import pytest

import mixrank
from tests.cli.test_cli import run

NESTED = "correct ~ model + (1|subject) + (1|subject:question)"
CROSSED = "correct ~ model + (1|subject) + (1|prompt)"


@pytest.mark.parametrize("formula", [NESTED, CROSSED])
def test_report_sections_use_the_fits_defaults(capsys, tmp_path, formula):
    out = tmp_path / "r.html"
    code, _, err = run(capsys, "report", "example", "-f", formula, "-o", str(out))
    assert code == 0, err
    html = out.read_text(encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit(formula, mixrank.load_example())
        rank = fit.rank_intervals().attrs["mixrank"]["method"]
        verdict = fit.resolution(columns="all").attrs["mixrank"]["multiplicity"]
    assert f"method {rank}," in html
    assert re.search(rf"multiplicity {verdict}\b", html)
    if formula == NESTED:
        assert (rank, verdict) == ("maxt", "stepdown")
    else:
        assert (rank, verdict) == ("holm", "holm")
