"""One vocabulary (docs/vocabulary.md): every CLI flag is the API keyword it feeds.

For every registered subcommand (:data:`mixrank.cli.SUBCOMMANDS`) its
argparse parser is read and each flag ``--x-y`` must be the keyword ``x_y``
of one of the API functions or accessors that subcommand calls (their
signatures, read with :mod:`inspect`), or stand in the small table
:data:`CLI_ONLY` of flags that have no keyword of that name (each with the
reason).  A flag naming a concept by another word than its API keyword (say
``--rank-method`` for ``adjust=``) fails, and so does a former spelling
(:data:`FORMER`) listed as a primary flag.  The former flags still work for
one release: one test per flag, each checking the deprecation line and that
the answer equals the new flag's.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable

import numpy as np
import pytest

import mixrank
import mixrank.io
from mixrank.cli import SUBCOMMANDS, build_parser, main

F1 = "correct ~ model + (1|subject)"

#: The former spellings of docs/vocabulary.md (typed here, not read from the CLI).
FORMER = {"--rank-method": "--adjust", "--multiplicity": "--adjust", "--alpha": "--level",
          "--B": "--draws", "--judged": "--pairs", "--rci-method": "--method",
          "--model-column": "--model", "--all-columns": "--wide"}

#: Flags with no API keyword of their own name: (subcommand or "*", flag) -> what they are.
CLI_ONLY: dict[tuple[str, str], str] = {
    ("*", "--help"): "argparse's help",
    ("*", "--quiet"): "no progress bars: the API's progress= is left unset",
    ("*", "--output"): "the file the table (or report) is written to",
    ("*", "--format"): "the output format of the table (--input-format is read(format=))",
    ("*", "--input-format"): "read(format=): --format is taken by the output format",
    ("*", "--seed"): "rng= (an integer seed)",
    ("*", "--formula"): "the positional formula of fit() / arena()",
    ("*", "--pair"): "pairs= of fit(), one pair per (repeatable) flag",
    ("*", "--drop-incomplete"): "fit(incomplete='drop')",
    ("*", "--pass-at"): "pass_at_k(k=) before the fit",
    ("*", "--prompt-label"): "read_lm_eval(prompt=) (--prompt is no flag: prompt is a column)",
    ("*", "--table"): "which table of the result is printed",
    ("scores", "--score-estimand"): "model_scores(estimand=); --estimand is fit(estimand=)",
    ("scores", "--probabilities"): "also print rank_probabilities()",
    ("scores", "--letters"): "also print the column of letters()",
    ("resolution", "--no-anytime"): "resolution(anytime=False)",
    ("resolution", "--no-cluster"): "resolution(cluster=False)",
    ("*", "--wide"): "display: every column of each table in table/markdown output",
    ("resolution", "--sensitivity"): "sensitivity(kind=) of the verdicts",
    ("plan", "--plan-pair"): "plan(pair=); --pair restricts the fit",
    ("judge", "--plan"): "JudgeResult.plan(delta=, labels=True)",
    ("*", "--test"): "power_summary(method=) / omnibus(method=): --method is fit(method=)",
    ("power", "--level"): "power_summary(alpha=1 - level): the calculator still takes alpha=",
    ("report", "--delta"): "write_report(plan_delta=)",
    ("report", "--rci-before"): "reliable_change(before=) of the report's section",
    ("report", "--rci-after"): "reliable_change(after=) of the report's section",
    ("report", "--rci-sample"): "reliable_change(sample=) of the report's section",
    ("report", "--rci-sem"): "reliable_change(sem=) of the report's section",
    ("rci", "--greedy-sample"): "ReliableChange.vs_greedy(greedy=) as a sample id",
    ("rci", "--greedy-before"): "ReliableChange.vs_greedy(before=)",
    ("rci", "--greedy-after"): "ReliableChange.vs_greedy(after=)",
    ("arena", "--from-scores"): "battles_from_scores() before arena()",
    ("arena", "--report"): "the HTML report's path (render_report)",
}


def _api() -> dict[str, list[Callable]]:
    """The API calls behind each subcommand."""
    from mixrank.arena import ArenaResult, battles_from_scores
    from mixrank.arena.api import arena
    from mixrank.change import reliable_change
    from mixrank.change.result import ReliableChange
    from mixrank.design.power.audit import calculator_audit
    from mixrank.design.power.summary import power_summary
    from mixrank.judge.result import JudgeResult
    from mixrank.report.html import write_report
    from mixrank.results import FitResult, GlmmResult
    from mixrank.subset import SubsetResult, item_diagnostics, select_items, subset_score

    readers = [mixrank.read, mixrank.read_wide, mixrank.io.read_lm_eval, mixrank.io.read_inspect,
               mixrank.io.read_helm, mixrank.io.read_lighteval]
    fits = [mixrank.fit, *readers]
    return {
        "demo": [],
        "fit": [*fits, FitResult.summary],
        "contrasts": [*fits, FitResult.contrasts, GlmmResult.contrasts],
        "components": fits,
        "anova": [*fits, FitResult.anova],
        "scores": [*fits, FitResult.model_scores, GlmmResult.model_scores,
                   FitResult.rank_probabilities, FitResult.letters],
        "table": [*fits, FitResult.table, FitResult.letters],
        "ranks": [*fits, FitResult.rank_intervals, GlmmResult.rank_intervals],
        "resolution": [*fits, FitResult.resolution, GlmmResult.resolution,
                       FitResult.sensitivity],
        "plan": [*fits, FitResult.plan],
        "omnibus": [*fits, FitResult.omnibus],
        "judge": [*fits, JudgeResult.judge, JudgeResult.plan],
        "power": [power_summary, calculator_audit],
        "rci": [*readers, reliable_change, ReliableChange.vs_greedy],
        "report": [*fits, write_report, FitResult.rank_intervals, FitResult.resolution],
        "arena": [arena, battles_from_scores, ArenaResult.contrasts,
                  ArenaResult.model_scores, ArenaResult.rank_intervals],
        "select-items": [*readers, select_items, item_diagnostics],
        "subset-score": [*readers, subset_score, SubsetResult.scores, SubsetResult.contrasts],
    }


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    p = build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _primary_flags(p: argparse.ArgumentParser) -> list[str]:
    """The long flags ``--help`` lists (former flags are hidden: help=SUPPRESS)."""
    return [o for a in p._actions if a.help != argparse.SUPPRESS
            for o in a.option_strings if o.startswith("--")]


def _hidden_flags(p: argparse.ArgumentParser) -> list[str]:
    return [o for a in p._actions if a.help == argparse.SUPPRESS for o in a.option_strings]


def _keywords(fns: list[Callable]) -> set[str]:
    out: set[str] = set()
    for f in fns:
        out |= {n for n, q in inspect.signature(f).parameters.items()
                if q.kind not in (q.VAR_KEYWORD, q.VAR_POSITIONAL) and n != "self"}
    return out


def test_every_subcommand_is_mapped():
    subs = _subparsers()
    assert len(SUBCOMMANDS) >= 8
    assert set(subs) == set(_api()), "a new subcommand needs its API calls in _api()"


@pytest.mark.parametrize("name", sorted(_subparsers()))
def test_every_flag_is_the_api_keyword(name):
    p = _subparsers()[name]
    keywords = _keywords(_api()[name])
    wrong = []
    for flag in _primary_flags(p):
        if (name, flag) in CLI_ONLY or ("*", flag) in CLI_ONLY:
            continue
        if flag[2:].replace("-", "_") not in keywords:
            wrong.append(flag)
    assert not wrong, (f"mixrank {name}: {wrong} name no keyword of the API it calls "
                       "(flag --x-y is keyword x_y; a CLI-only flag goes in CLI_ONLY with its "
                       "reason)")


@pytest.mark.parametrize("name", sorted(_subparsers()))
def test_no_former_spelling_is_a_primary_flag(name):
    p = _subparsers()[name]
    listed = set(_primary_flags(p)) & set(FORMER)
    assert not listed, f"mixrank {name} lists former flags {listed} in --help"
    for flag in _hidden_flags(p):     # every hidden flag is a former one of docs/vocabulary.md
        assert flag in FORMER, (name, flag)


def test_family_names_only_the_distribution():
    for name, p in _subparsers().items():
        for a in p._actions:
            if "--family" in a.option_strings:
                assert a.metavar == "{gaussian,binomial}", name
                assert "judged" not in (a.help or "") and "pairs" not in (a.help or ""), name


def test_cli_only_table_is_small_and_used():
    assert len(CLI_ONLY) <= 33
    subs = _subparsers()
    for (name, flag), why in CLI_ONLY.items():
        assert why
        names = subs if name == "*" else {name: subs[name]}
        assert any(flag in _primary_flags(p) or flag == "--help" for p in names.values()), \
            (name, flag, "unused table entry")


def test_input_formats_are_one_list():
    """``--input-format`` takes exactly ``read(format=)``'s names (mixrank.io.read.INPUT_FORMATS)."""
    from mixrank.cli.options import input_format
    from mixrank.io.read import FORMATS, INPUT_FORMATS

    assert INPUT_FORMATS == ("auto", *FORMATS)
    for name in INPUT_FORMATS:
        assert input_format(name) == name
    with pytest.raises(argparse.ArgumentTypeError, match="mixrank.read"):
        input_format("csv")
    p = _subparsers()["fit"]
    action = next(a for a in p._actions if "--input-format" in a.option_strings)
    assert action.metavar == "{" + ",".join(INPUT_FORMATS) + "}"
    with pytest.raises(mixrank.OptionError, match="format='long' is unknown"):
        mixrank.read("x.csv", format="long")


# --------------------------------------------------------------- former flags still work

def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def _same(capsys, old: list[str], new: list[str], former: str, now: str) -> str:
    code_old, out_old, err_old = _run(capsys, *old)
    code_new, out_new, err_new = _run(capsys, *new)
    assert code_old == 0 and code_new == 0, (err_old, err_new)
    assert f"warning: {former} is the former name of {now}" in err_old
    assert "former name" not in err_new
    assert out_old == out_new
    return err_old


def test_former_rank_method(capsys):
    base = ["ranks", "example", "-f", F1, "--format", "csv", "--draws", "300", "--seed", "1"]
    _same(capsys, [*base, "--rank-method", "maxt"], [*base, "--adjust", "maxt"],
          "--rank-method", "--adjust")


def test_former_multiplicity(capsys):
    base = ["resolution", "example", "-f", F1, "--format", "csv", "--no-anytime"]
    _same(capsys, [*base, "--multiplicity", "bh"], [*base, "--adjust", "bh"],
          "--multiplicity", "--adjust")


def test_former_alpha_is_one_minus_level(capsys):
    base = ["resolution", "example", "-f", F1, "--format", "csv", "--no-anytime"]
    err = _same(capsys, [*base, "--alpha", "0.01"], [*base, "--level", "0.99"],
                "--alpha", "--level (level = 1 - alpha)")
    assert "docs/vocabulary.md" in err
    _same(capsys, ["power", "--sigma-d", "0.5", "--delta", "0.05", "--alpha", "0.1"],
          ["power", "--sigma-d", "0.5", "--delta", "0.05", "--level", "0.9"],
          "--alpha", "--level (level = 1 - alpha)")


def test_former_B(capsys):
    base = ["resolution", "example", "-f", F1, "--format", "csv", "--sensitivity",
            "bootstrap", "--seed", "2", "--pair", "m01,m02"]
    _same(capsys, [*base, "--B", "20"], [*base, "--draws", "20"], "--B", "--draws")


def test_former_judged(capsys):
    base = ["resolution", "example", "-f", F1, "--format", "csv", "--no-anytime"]
    _same(capsys, [*base, "--judged", "all"], [*base, "--pairs", "all"], "--judged", "--pairs")


def test_former_resolution_family_adjacent_all(capsys):
    base = ["resolution", "example", "-f", F1, "--format", "csv", "--no-anytime"]
    code, out, err = _run(capsys, *base, "--family", "all")
    code2, out2, _ = _run(capsys, *base, "--pairs", "all")
    assert code == 0 and code2 == 0 and out == out2
    assert "warning: resolution --family all is the former name of --pairs all" in err
    code, _, err = _run(capsys, *base, "--family", "all", "--pairs", "adjacent")
    assert code == 2 and "error:" in err and "--pairs" in err


def test_former_rci_method_and_model_column():
    p = _subparsers()["rci"]
    ns = p.parse_args(["example", "--before", "a", "--after", "b", "--rci-method", "eb",
                       "--model-column", "version"])
    assert ns.method == "eb" and ns.model == "version"


def test_former_report_flags_keep_their_section():
    """``report --rank-method`` still sets only the rank intervals, ``--multiplicity`` only
    the verdicts (``--adjust`` sets both)."""
    p = _subparsers()["report"]
    ns = p.parse_args(["example", "-f", F1, "--rank-method", "bh", "--multiplicity", "none"])
    assert ns.rank_adjust == "bh" and ns.verdict_adjust == "none" and ns.adjust is None


def test_former_input_format_names(capsys, tmp_path):
    f = tmp_path / "long.csv"
    mixrank.load_example().to_csv(f, index=False)
    base = ["contrasts", str(f), "-f", F1, "--format", "csv"]
    _same(capsys, [*base, "--input-format", "long"], [*base, "--input-format", "table"],
          "--input-format long", "--input-format table")


@pytest.mark.parametrize("argv, both", [
    (["resolution", "example", "-f", F1, "--alpha", "0.01", "--level", "0.9"], "--level"),
    (["ranks", "example", "-f", F1, "--rank-method", "bh", "--adjust", "holm"], "--adjust"),
    (["resolution", "example", "-f", F1, "--B", "10", "--draws", "20", "--sensitivity",
      "bootstrap"], "--draws"),
])
def test_both_spellings_with_different_values_is_an_error(capsys, argv, both):
    code, _, err = _run(capsys, *argv)
    assert code == 2 and f"error: got both {both}" in err and f"pass only {both}" in err


def test_bad_option_value_names_the_flag(capsys):
    """One rule: a value an option cannot take exits 2 with an ``error:`` line naming the flag."""
    code, _, err = _run(capsys, "ranks", "example", "-f", F1, "--adjust", "sidak")
    assert code == 2 and err.startswith("error:") and "--adjust" in err
    code, _, err = _run(capsys, "fit", "example", "-f", F1, "--input-format", "csv")
    assert code == 2 and err.startswith("error:") and "--input-format" in err
    code, _, err = _run(capsys, "fit", "example", "-f", F1, "--level", "1.5")
    assert code == 2 and err.startswith("error:") and "level" in err


def test_former_input_format_lm_eval(capsys):
    from mixrank.cli.options import input_format

    assert input_format("lm-eval") == "lm_eval"
    err = capsys.readouterr().err
    assert "warning: --input-format lm-eval is the former name of --input-format lm_eval" in err


# --------------------------------------------------------------------------- nouns
# One meaning per noun (docs/vocabulary.md): a suffix, a keyword or a word in a function's name
# means one thing across the API.

def _public_functions() -> list[tuple[str, Callable]]:
    """Every public function of every module of mixrank."""
    import importlib
    import pkgutil

    out = []
    for info in pkgutil.walk_packages(mixrank.__path__, "mixrank."):
        if info.name.endswith("__main__") or ".cli" in info.name:
            continue
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if (inspect.isfunction(obj) and not name.startswith("_")
                    and obj.__module__ == info.name):
                out.append((f"{info.name}.{name}", obj))
    return out


def test_the_fit_suffix_is_not_computed_from_a_fit():
    """``X_of(fit)`` is computed from a fit; a ``_fit`` suffix names something that fits (or,
    after ``check_``/``is_``, the fit a predicate is about)."""
    bad = [n for n, f in _public_functions()
           if n.endswith("_fit") and next(iter(inspect.signature(f).parameters), "") == "fit"
           and not n.rsplit(".", 1)[1].startswith(("check_", "is_"))]
    assert not bad, bad
    from mixrank.design.resolution import resolution_of
    with pytest.warns(mixrank.MixrankDeprecationWarning, match="resolution_fit has moved to "
                                                               ".*resolution_of"):
        from mixrank.design.resolution import resolution_fit
    assert resolution_fit is resolution_of


def test_the_anytime_boundary_has_one_keyword():
    from mixrank.results.pairwise_result import PairwiseResult

    assert "anytime" in inspect.signature(mixrank.monitor).parameters
    assert "anytime" in inspect.signature(PairwiseResult.resolution).parameters
    assert inspect.signature(mixrank.monitor).parameters["kind"].default is None   # former
    x, y = [1, 0, 1, 1, 0, 1] * 5, [0, 0, 1, 0, 0, 1] * 5
    with pytest.warns(mixrank.MixrankDeprecationWarning, match="kind= is the former name of "
                                                               "anytime="):
        old = mixrank.monitor(x, y, kind="normal")
    assert old.equals(mixrank.monitor(x, y, anytime="normal"))


def test_family_means_the_response_distribution():
    """``family=`` is a keyword only where it names the response distribution."""
    with_family = sorted(n for n, f in _public_functions()
                         if "family" in inspect.signature(f).parameters)
    assert with_family == ["mixrank.design.simulate.simulate", "mixrank.fit.fit",
                           "mixrank.frame.family.build_frame"], with_family


@pytest.fixture(scope="module")
def units_fit():
    """A fit whose estimand weights cells unequally (``units`` with unequal subject sizes), so
    the design effect and the variance ratio differ."""
    import warnings

    data = mixrank.load_example()
    data = data[~((data["subject"] == data["subject"].iloc[0])
                  & (data["question"].isin(data["question"].unique()[:3])))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return mixrank.fit(F1, data, estimand="units")


def test_design_effect_is_over_the_plain_cell_mean(units_fit):
    """``design_effect`` (every table and attribute of that name): ``Var(estimate) / (s^2/n)``,
    the iid variance of the plain cell mean -- one function, engine.records.design_effect."""
    from mixrank.engine.records import design_effect

    de = units_fit.design_effect()
    for r, p in zip(de.itertuples(index=False), units_fit.pairs):
        assert r.design_effect == design_effect(p.variance, p.sigma_d, p.n) == p.design_effect
        assert r.design_effect == pytest.approx(p.variance / (p.sigma_d ** 2 / p.n), rel=1e-12)
    sc = units_fit.model_scores(scoring="plain")
    np.testing.assert_allclose(sc["variance_ratio"], (sc["std_error"] / sc["iid_std_error"]) ** 2,
                               rtol=1e-12)
    # model_scores() follows the verdict table's rename: the former column kept one release
    np.testing.assert_array_equal(sc["design_effect"], sc["variance_ratio"])
    assert "design_effect" in sc.attrs["mixrank"]["deprecated_columns"]
    np.testing.assert_allclose(sc["iid_std_error"], sc["sigma_iid"] / np.sqrt(sc["n"]),
                               rtol=1e-12)


def test_variance_ratio_is_over_the_estimands_iid_variance(units_fit):
    """``variance_ratio`` (verdict and sensitivity tables): ``std_error^2 / variance_iid`` with
    ``variance_iid = sigma_d^2 weight_factor / n``; its former column name ``design_effect``
    carries the same numbers for one release and is declared deprecated."""
    tab = units_fit.resolution(columns="all", pairs="all")
    np.testing.assert_allclose(tab["variance_iid"],
                               tab["sigma_d"] ** 2 * tab["weight_factor"] / tab["n"], rtol=1e-12)
    np.testing.assert_allclose(tab["variance_ratio"], tab["std_error"] ** 2 / tab["variance_iid"],
                               rtol=1e-12)
    np.testing.assert_array_equal(tab["design_effect"], tab["variance_ratio"])   # former name
    assert "design_effect" in tab.attrs["mixrank"]["deprecated_columns"]
    # the two nouns are two formulas: they differ exactly by the weight factor
    assert (tab["weight_factor"] > 1 + 1e-6).any()
    de = units_fit.design_effect().set_index(["model_a", "model_b"])["design_effect"]
    for r in tab.itertuples(index=False):
        key = (r.model_a, r.model_b) if (r.model_a, r.model_b) in de.index else (r.model_b,
                                                                                r.model_a)
        assert r.variance_ratio * r.weight_factor == pytest.approx(
            r.std_error ** 2 / (r.sigma_d ** 2 / r.n), rel=1e-12)
        if r.weight_factor > 1 + 1e-6:
            assert r.variance_ratio != pytest.approx(de[key], rel=1e-6)


def test_no_table_uses_design_effect_for_the_estimands_ratio():
    """Source check: in the verdict, sensitivity and arena modules a ``design_effect*`` column or
    key (a keyword of a call, or a subscript assignment) is written only as the former-name
    alias of its ``variance_ratio*`` twin, on a line that says so."""
    import ast
    from pathlib import Path

    root = Path(mixrank.__file__).parent
    for rel in ("design/resolution.py", "design/estimand.py", "design/sensitivity/run.py",
                "design/sensitivity/stability.py", "arena/result.py"):
        text = (root / rel).read_text(encoding="utf-8")
        lines = text.splitlines()
        written = []
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.keyword) and (node.arg or "").startswith("design_effect") \
                    and not (isinstance(node.value, ast.Name) and node.value.id == node.arg):
                written.append(node.value.lineno)
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
                    and str(t.slice.value).startswith("design_effect") for t in node.targets):
                written.append(node.lineno)
        assert all("former" in lines[i - 1] for i in written), (rel, [lines[i - 1]
                                                                      for i in written])
        assert "variance_ratio" in text, rel


def test_resolution_table_reads_the_former_column_with_a_future_warning():
    import pandas as pd

    from mixrank.design.resolution import resolution_table

    new = pd.DataFrame({"model_a": ["a", "b"], "model_b": ["b", "c"], "estimate": [0.2, 0.05],
                        "n": [200, 200], "sigma_d": [0.5, 0.5], "variance_ratio": [2.0, 1.5]})
    want = resolution_table(new)
    with pytest.warns(mixrank.MixrankFutureWarning, match="'design_effect' is the former name "
                                                          "of 'variance_ratio'"):
        got = resolution_table(new.rename(columns={"variance_ratio": "design_effect"}))
    assert issubclass(mixrank.MixrankFutureWarning, FutureWarning)
    pd.testing.assert_frame_equal(got, want)
    both = new.assign(design_effect=[2.0, 1.0])
    with pytest.raises(mixrank.DesignError, match="both 'variance_ratio' and 'design_effect'"):
        resolution_table(both)
