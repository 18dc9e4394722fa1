"""One vocabulary, CLI = API.

* every ``adjust=`` value of the package is a ``--adjust`` choice of ``mixrank
  contrasts`` (the result type refuses those it does not take, as the API does);
* the CLI resolution table has the API's verdict columns (n_star_cluster,
  std_error, df, p_adjusted) and ``--design-effect``;
* ``mixrank plan`` names the pair its variance components come from;
* ``plan(labels=True)`` explains an infinite label count in the same row;
* a bad option value is an OptionError with "did you mean".
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.cli import main
from mixrank.cli.options import ADJUST_ALL
from mixrank.errors import OptionError
from mixrank.inference.multiplicity import ADJUST

F = "correct ~ model + (1|subject)"


def test_adjust_choices_are_the_registry():
    assert set(ADJUST_ALL) == set(ADJUST)


@pytest.mark.parametrize("adjust", ["bonferroni", "stepdown"])
def test_cli_contrasts_take_every_api_adjust(adjust, capsys):
    code = main(["contrasts", "example", "-f", F, "--adjust", adjust, "--format", "csv"])
    out, err = capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(F, mixrank.load_example())
    try:
        want = res.contrasts(adjust=adjust)
    except OptionError:                # the API refuses it: the CLI says the same, as a flag
        assert code == 2 and f"--adjust {adjust} is not supported by FitResult.contrasts()" \
            in err, err
        return
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    np.testing.assert_allclose(np.sort(got["p_adjusted"]), np.sort(want["p_adjusted"]),
                               rtol=1e-6)


def test_cli_resolution_has_the_api_columns(capsys):
    assert main(["resolution", "example", "-f", F, "--pairs", "all", "--wide"]) == 0
    out = capsys.readouterr().out
    # --wide: every column, in blocks of at most 100 characters (the key columns repeated)
    header = [c for line in out.splitlines() if line.strip().startswith("model_a")
              for c in line.split()]
    for col in ("estimate", "std_error", "df", "n_star_cluster", "resolved_cluster",
                "p_adjusted", "rejected", "resolved_all"):
        assert col in header, col
    assert max(len(line) for line in out.splitlines()) <= 100
    assert main(["resolution", "example", "-f", F, "--pairs", "all"]) == 0   # the default view
    header = [c for line in capsys.readouterr().out.splitlines()
              if line.strip().startswith("model_a") for c in line.split()]
    assert set(header) - {"model_a", "model_b"} == {
        "estimate", "n", "n_star", "q", "resolved", "resolved_multiplicity", "resolved_anytime",
        "resolved_cluster", "resolved_all", "p_adjusted"}
    assert main(["resolution", "example", "-f", F, "--design-effect", "anova",
                 "--format", "csv"]) == 0
    tab = pd.read_csv(io.StringIO(capsys.readouterr().out))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = mixrank.fit(F, mixrank.load_example()).resolution(columns="all", design_effect="anova")
    np.testing.assert_allclose(tab["design_effect"], want["design_effect"], rtol=1e-9)


def test_cli_plan_names_the_pair(capsys):
    assert main(["plan", "example", "-f", F, "--delta", "0.05", "--format", "csv"]) == 0
    tab = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert tab["model_a"].nunique() == 1 and tab["model_b"].nunique() == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = mixrank.fit(F, mixrank.load_example()).plan(0.05)
    assert (tab["model_a"].iloc[0], tab["model_b"].iloc[0]) == (
        want.attrs["mixrank"]["model_a"], want.attrs["mixrank"]["model_b"])


def test_plan_labels_explains_inf_in_the_row():
    from mixrank.judge.plan import plan_labels
    t = plan_labels(0.01, sigma=0.5, rho=0.9, n_judged=200, n_labels=50)
    row = t.iloc[0]
    assert np.isinf(row["n_labels_star"]) and np.isfinite(row["n_labels_only_star"])
    assert "n_labels_star = inf" in row["note"] and "judge more cells" in row["note"]
    assert plan_labels(0.05, sigma=0.5, rho=0.8, n_judged=5000).iloc[0]["note"] == ""


@pytest.mark.parametrize("call, match", [
    (lambda: mixrank.fit(F, mixrank.load_example(), estimand="cell"), "did you mean 'cells'"),
    (lambda: mixrank.fit(F, mixrank.load_example(), method="rmel"), "did you mean 'reml'"),
    (lambda: mixrank.fit(F, mixrank.load_example(), df="cr22"), "did you mean 'cr2'"),
    (lambda: mixrank.fit(F, mixrank.load_example(), family="binomal"),
     "did you mean 'binomial'"),
])
def test_misspelled_options_are_option_errors(call, match):
    with pytest.raises(OptionError, match=match):
        call()


def test_misspelled_accessor_options_are_option_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(F, mixrank.load_example())
    with pytest.raises(OptionError, match="did you mean 'holm'"):
        res.contrasts(adjust="hlm")
    with pytest.raises(OptionError, match="did you mean 'loso'"):
        res.sensitivity("lsoo")
    with pytest.raises(OptionError, match="did you mean 'gls'"):
        res.model_scores(estimand="gsl")
