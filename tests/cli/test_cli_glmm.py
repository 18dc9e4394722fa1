"""The command line with ``--family binomial``: every fitting subcommand's output
against the :class:`~mixrank.results.glmm.result.GlmmResult` accessor it wraps
(the accessors themselves are checked against lme4's glmer in
``tests/engine/``), the unit-of-inference line and warning, and the options a
binomial fit does not take (exit 2, ``error:`` on stderr, no traceback)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import mixrank
from mixrank._display import format_at, se_decimals
from mixrank.cli import build_parser
from tests.cli.test_cli import assert_same as cli_assert_same
from tests.cli.test_cli import csv_of, run

FU = "correct ~ model + (1|subject) + (1|subject:model)"   # subject is the unit
FC = "correct ~ model + (1|subject)"                       # cells are the unit (warns)
BIN = ("--family", "binomial")


def api(formula: str = FU, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(formula, mixrank.load_example(), family="binomial", **kw)


def assert_same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    # the binomial fit's numbers pass through CSV at 1e-9 (PIRLS-converged values)
    cli_assert_same(got, want, rtol=1e-9, atol=1e-12)


def test_fit_prints_the_glmm_summary_with_its_unit_line(capsys):
    code, out, err = run(capsys, "fit", "example", "-f", FU, *BIN)
    assert code == 0, err
    assert "Generalized linear mixed model fit by maximum likelihood (Laplace" in out
    assert "Family: binomial" in out
    assert "family: binomial (logit), nAGQ 1" in out
    assert "Unit of inference for model contrasts: subject (via (1|subject:model))" in out
    want = api().fixed_effects()
    for term, est, se in zip(want.term, want.estimate, want.std_error):
        # each estimate to the decimal place its SE supports (SE: 2-3 significant digits)
        assert f"{term}" in out and f" {format_at(est, se_decimals(se))} " in out


def test_fit_nagq_0_and_csv_contrasts(capsys):
    code, out, _ = run(capsys, "fit", "example", "-f", FU, *BIN, "--nagq", "0")
    assert code == 0 and "nAGQ = 0" in out and "nAGQ 0" in out
    code, out, _ = run(capsys, "fit", "example", "-f", FU, *BIN, "--nagq", "0",
                       "--format", "csv")
    assert code == 0
    assert_same(csv_of(out), api(nagq=0).contrasts())


@pytest.mark.parametrize("scale", ["logit", "response"])
def test_contrasts_scale(capsys, scale):
    code, out, _ = run(capsys, "contrasts", "example", "-f", FU, *BIN, "--scale", scale,
                       "--adjust", "bh", "--format", "csv")
    assert code == 0
    got = csv_of(out)
    assert_same(got, api().contrasts(scale=scale, adjust="bh"))
    assert ("odds_ratio" in got.columns) == (scale == "logit")


def test_contrasts_default_scale_is_logit_and_pair_restricts_rows(capsys):
    code, out, _ = run(capsys, "contrasts", "example", "-f", FU, *BIN, "--pair", "m02,m01",
                       "--level", "0.9", "--format", "csv")
    assert code == 0
    got = csv_of(out)
    assert_same(got, api(pairs=[("m02", "m01")], level=0.9).contrasts())
    # the requested order and sign are kept: m02 - m01
    assert got[["model_a", "model_b"]].values.tolist() == [["m02", "m01"]]
    full = api().contrasts().set_index(["model_a", "model_b"])
    assert got.estimate.iloc[0] == pytest.approx(-full.loc[("m01", "m02"), "estimate"], abs=1e-6)
    assert got["level"].tolist() == [0.9]


def test_components_scores_ranks(capsys):
    res = api()
    code, out, _ = run(capsys, "components", "example", "-f", FU, *BIN, "--format", "csv")
    assert code == 0
    assert_same(csv_of(out), res.variance_components())
    code, out, _ = run(capsys, "scores", "example", "-f", FU, *BIN, "--format", "csv")
    assert code == 0
    want = res.model_scores().sort_values(["estimate", "model"], ascending=[False, True])
    assert_same(csv_of(out), want)
    code, out, _ = run(capsys, "ranks", "example", "-f", FU, *BIN, "--scale", "response",
                       "--format", "csv")
    assert code == 0
    assert_same(csv_of(out), res.rank_intervals(scale="response"))


def test_resolution(capsys):
    code, out, _ = run(capsys, "resolution", "example", "-f", FU, *BIN, "--pairs", "all",
                       "--adjust", "bh", "--format", "csv")
    assert code == 0
    assert_same(csv_of(out), api().resolution(columns="all", pairs="all", adjust="bh"))
    # --top: the result type declares it (GlmmResult.resolution(top=)), so the CLI passes it
    code, out, _ = run(capsys, "resolution", "example", "-f", FU, *BIN, "--top", "3",
                       "--format", "csv")
    assert code == 0
    assert_same(csv_of(out), api().resolution(columns="all", top=3))
    code, out, _ = run(capsys, "resolution", "example", "-f", FU, *BIN)
    assert code == 0
    assert "N*: logit-scale Wald test" in out
    assert "unit of inference for model contrasts: subject" in out


def test_resolution_former_family_values_still_judge_pairs(capsys):
    code, out, err = run(capsys, "resolution", "example", "-f", FC, "--family", "all",
                         "--format", "csv")
    assert code == 0
    assert "is the former name of --pairs all" in err
    code2, out2, _ = run(capsys, "resolution", "example", "-f", FC, "--pairs", "all",
                         "--format", "csv")
    assert code2 == 0 and out == out2
    code, _, err = run(capsys, "resolution", "example", "-f", FC, "--family", "all",
                       "--pairs", "adjacent")
    assert code == 2 and "contradicts" in err


def test_report_writes_the_glmm_page(capsys, tmp_path):
    path = tmp_path / "r.html"
    code, _, err = run(capsys, "report", "example", "-f", FU, *BIN, "--nagq", "0",
                       "-o", str(path))
    assert code == 0, err
    page = path.read_text()
    assert "family binomial" in page and "nAGQ 0" in page
    for title in ("Contrasts, logit scale", "Contrasts, response scale (probability)",
                  "Variance components (logit scale)", "Resolution verdicts"):
        assert title in page
    assert "unit of inference for model contrasts: subject" in page


def test_cell_unit_warns_on_stderr(capsys):
    code, out, err = run(capsys, "components", "example", "-f", FC, *BIN)
    assert code == 0
    assert "warning: Unit of inference for model contrasts: cells" in err
    assert "add (1|subject:model)" in err


def test_every_fitting_subcommand_takes_family_and_nagq():
    subs = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    fitting = set(_fitting_subcommands())
    assert {"fit", "contrasts", "components", "scores", "ranks", "resolution",
            "report"} <= fitting
    for name in fitting:
        opts = {a.dest: a for a in subs[name]._actions}
        assert {"gaussian", "binomial"} <= set(opts["family"].choices), name
        assert list(opts["nagq"].choices) == [0, 1], name


#: (argv, the option named in the message, the advice the message gives)
# Each refusal is the fit's or the result type's own message (PairwiseResult.check_option),
# asked before the fit, with the keyword written as the flag (docs/vocabulary.md).
BAD = [
    (["fit", "--estimand", "gls"], "--estimand gls", "the binomial GLMM is one joint"),
    (["fit", "--method", "aggregate"], "--method aggregate", "the binomial GLMM is one joint"),
    (["contrasts", "--by", "subject"], "--by subject", "write it as 'y ~ model * subject"),
    (["contrasts", "--seed", "1"], "--seed", "drop them or pass --adjust maxt"),
    (["scores", "--probabilities"], "--probabilities", "GlmmResult has no rank_probabilities()"),
    (["scores", "--score-estimand", "cells"], "--score-estimand cells",
     "not supported by GlmmResult.model_scores(); its options are --scale"),
    (["ranks", "--by", "subject"], "--by subject", "write it as 'y ~ model * subject"),
    (["resolution", "--no-cluster", "--top", "3"], "--no-cluster",
     "is not supported by GlmmResult.resolution(); its options are --power, --pairs"),
    (["resolution", "--sensitivity", "loso"], "--sensitivity loso",
     "GlmmResult has no sensitivity()"),
    (["resolution", "--no-cluster"], "--no-cluster", "not supported by GlmmResult.resolution()"),
    (["plan", "--delta", "0.05"], "plan", "GlmmResult has no plan()"),
    (["anova"], "anova", "write it as 'y ~ model * x"),
    (["report", "--delta", "0.05"], "--delta 0.05", "GlmmResult has no plan()"),
    (["report", "--sensitivity", "loso"], "--sensitivity loso", "GlmmResult has no sensitivity()"),
]


@pytest.mark.parametrize("how", ["stepdown", "maxt"])
def test_contrasts_take_the_unit_sign_flips(capsys, how):
    """--adjust maxt/stepdown are the GLMM's unit sign flips (all 2^11 of the
    example's 12 subjects), the same table as the API; the default is the step-down."""
    code, out, err = run(capsys, "contrasts", "example", "-f", FU, *BIN, "--nagq", "0",
                         "--adjust", how, "--format", "csv")
    assert code == 0, err
    assert_same(csv_of(out), api(nagq=0).contrasts(adjust=how))
    assert api(nagq=0).contrasts().attrs["mixrank"]["adjust"] == "stepdown"


def test_anytime_bernoulli_refused_for_the_glmm(capsys):
    """The GLMM has no discordance per pair: --anytime bernoulli exits 2 naming the fix (after
    the fit: the result type declares the value, the verdict table refuses it)."""
    code, out, err = run(capsys, "resolution", "example", "-f", FC, *BIN, "--anytime",
                         "bernoulli")
    assert code == 2 and out == ""
    assert "error: --anytime bernoulli" in err and "use --anytime normal" in err


def test_report_takes_the_rank_and_verdict_options_of_the_glmm(capsys, tmp_path):
    """The one page builder passes --adjust/--coverage to the GLMM's rank intervals (once
    refused: the binomial page had fixed sections)."""
    path = tmp_path / "r.html"
    code, _, err = run(capsys, "report", "example", "-f", FC, *BIN, "--nagq", "0", "--adjust",
                       "maxt", "--coverage", "simultaneous", "--draws", "500", "--seed", "1",
                       "-o", str(path))
    assert code == 0, err
    ranks = path.read_text(encoding="utf-8").split('<section id="ranks">')[1].split("</section>")[0]
    assert 'class="omitted"' not in ranks and 'data-plot="ranks"' in ranks


@pytest.mark.parametrize("argv, named, advice", BAD, ids=[" ".join(a) for a, _, _ in BAD])
def test_linear_only_options_exit_2(capsys, tmp_path, argv, named, advice):
    extra = ["-o", str(tmp_path / "r.html")] if argv[0] == "report" else []
    code, out, err = run(capsys, argv[0], "example", "-f", FC, *BIN, *argv[1:], *extra)
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and named in err and advice in err, err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("argv, named", [
    (["fit", "--nagq", "0"], "--nagq"),
    (["contrasts", "--scale", "response"], "--scale response"),
    (["ranks", "--scale", "logit"], "--scale logit"),
])
def test_binomial_only_options_refused_for_gaussian(capsys, argv, named):
    code, out, err = run(capsys, argv[0], "example", "-f", FC, *argv[1:])
    assert code == 2 and out == ""
    assert err.startswith("error: ") and named in err and "--family binomial" in err


def test_scores_outside_0_1_exit_2(capsys, tmp_path):
    df = mixrank.load_example().astype({"correct": float})
    df.loc[0, "correct"] = 0.5
    path = tmp_path / "half.csv"
    df.to_csv(path, index=False)
    code, out, err = run(capsys, "fit", str(path), "-f", FC, *BIN)
    assert code == 2 and out == ""
    assert "error: " in err and "(e.g. 0.5)" in err


@pytest.fixture(scope="module")
def small_inputs(tmp_path_factory) -> dict[str, str]:
    """A small simulated benchmark and malformed variants of it, as CSV paths."""
    tmp = tmp_path_factory.mktemp("glmm_contract")
    good = mixrank.simulate(3, 6, 4, 2, rng=3)
    variants = {"good": good,
                "twin": pd.concat([good, good[good.model == "m01"].assign(model="m01copy")],
                                  ignore_index=True),
                "always_right": pd.concat([good, good[good.model == "m01"].assign(
                    model="oracle", correct=1)], ignore_index=True),
                "stray": good.assign(correct=good.correct.where(good.index > 0, 100)),
                "one_model": good[good.model == "m01"]}
    paths = {}
    for name, df in variants.items():
        df.to_csv(tmp / f"{name}.csv", index=False)
        paths[name] = str(tmp / f"{name}.csv")
    return paths


def _fitting_subcommands() -> list[str]:
    subs = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    # arena (battle logs, Bradley-Terry), judge (PPI++ diagnostics) and the subset commands
    # (an item-response model of the reference leaderboard) fit other models
    return sorted(n for n, sp in subs.items()
                  if "--formula" in {o for a in sp._actions for o in a.option_strings}
                  and n not in ("arena", "judge", "select-items", "subset-score"))


@pytest.mark.parametrize("name", _fitting_subcommands())
@pytest.mark.parametrize("kind", ["good", "twin", "always_right", "stray", "one_model"])
def test_every_fitting_subcommand_binomial_contract(capsys, tmp_path, small_inputs, name, kind):
    argv = [name, small_inputs[kind], "-f", FU, *BIN]
    if name == "plan":
        argv += ["--delta", "0.05"]
    if name == "report":
        argv += ["-o", str(tmp_path / "r.html")]
    code, out, err = run(capsys, *argv)
    assert code in (0, 2)
    if code == 2:
        assert out == "" and "error: " in err
    # plan: no binomial planner; anova: FU crosses no covariate with the model; omnibus: no
    # binomial likelihood-ratio test yet (refused, pointing at --test cochran)
    refused = name in ("plan", "anova", "omnibus")
    if kind in ("good", "twin") and not refused:
        assert code == 0, err
    if kind in ("stray", "one_model", "always_right") or refused:
        assert code == 2, out


@pytest.mark.parametrize("scale", ["logit", "response"])
def test_scores_scale_and_headers(capsys, scale):
    code, out, _ = run(capsys, "scores", "example", "-f", FU, *BIN, "--nagq", "0",
                       "--scale", scale, "--format", "csv")
    assert code == 0
    want = api(nagq=0).model_scores(scale=scale)
    assert_same(csv_of(out), want.sort_values(["estimate", "model"], ascending=[False, True]))
    code, out, _ = run(capsys, "ranks", "example", "-f", FU, *BIN, "--nagq", "0",
                       "--scale", scale)
    assert code == 0
    assert "response: 0/1, 6 models, 960 cells (5,760 trials)" in out
    assert f"scale: {scale}; estimate = " + ("log-odds" if scale == "logit" else "probability") \
        in out
    code, out, err = run(capsys, "scores", "example", "-f", "correct ~ model + (1|subject)",
                         "--scale", scale)
    assert code == 2 and "pass --family binomial" in err


def test_header_names_the_response_form(capsys, tmp_path):
    df = mixrank.load_example()
    sub = df[df.model.isin(["m01", "m02", "m03"])]
    counts = (sub.groupby(["model", "subject", "question"], as_index=False)["correct"]
              .agg(k="sum", n="size"))
    path = tmp_path / "counts.csv"
    counts.to_csv(path, index=False)
    code, out, err = run(capsys, "contrasts", str(path), "-f",
                         "cbind(k, n - k) ~ model + (1|subject:question)", *BIN, "--nagq", "0")
    assert code == 0, err
    assert "response: counts (cbind(successes, failures)), 3 models, 240 cells (2,880 trials)" \
        in out
    assert "scores: binary" not in out
    reps = sub.rename(columns={"prompt": "sample"})
    path = tmp_path / "reps.csv"
    reps.to_csv(path, index=False)
    code, out, err = run(capsys, "contrasts", str(path), "-f",
                         "correct ~ model + (1|subject:question)", *BIN, "--nagq", "0",
                         "--replicate", "sample", "--pair", "m03,m01")
    assert code == 0, err
    assert "response: 0/1 with replicates, 3 models, 240 cells (2,880 trials)" in out
    body = next(ln for ln in out.splitlines() if ln.split()[:1] == ["model_a"])
    row = out.splitlines()[out.splitlines().index(body) + 1].split()
    assert row[:2] == ["m03", "m01"]


#: CLI subcommands of a model x covariate fit and the API call each must equal.
COVARIATE_COMMANDS = [
    (["contrasts", "--by", "difficulty", "--scale", "response"],
     lambda r: r.contrasts(scale="response", by="difficulty")),
    (["contrasts"], lambda r: r.contrasts()),
    (["scores", "--by", "difficulty"], lambda r: r.model_scores(by="difficulty")),
    (["ranks", "--by", "difficulty"], lambda r: r.rank_intervals(by="difficulty")),
    (["anova"], lambda r: r.anova()),
]

BY_CASE = "tests/reference/glmm_by_cases/levels3.csv.gz"
BY_FORMULA = ("cbind(k, n - k) ~ model * difficulty + (1|subject:question) + "
              "(1|subject:model)")


@pytest.mark.parametrize("cmd, call", COVARIATE_COMMANDS)
def test_model_by_covariate_on_the_command_line(capsys, cmd, call):
    df = pd.read_csv(BY_CASE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(BY_FORMULA, df, family="binomial", nagq=0)
    code, out, err = run(capsys, cmd[0], BY_CASE, "-f", BY_FORMULA, *BIN, "--nagq", "0",
                         *cmd[1:], "--format", "csv")
    assert code == 0, err
    got, want = csv_of(out), call(res)
    if "note" in want.columns:
        got["note"] = got["note"].fillna("").astype(str)
    assert_same(got, want)
    code, out, err = run(capsys, cmd[0], BY_CASE, "-f", BY_FORMULA, *BIN, "--nagq", "0",
                         *cmd[1:])
    assert code == 0 and "response: counts (cbind(successes, failures)), 4 models" in out


SLOPE_CASE = "tests/reference/glmm_slope_cases/counts.csv.gz"
SLOPE_FORMULA = "cbind(k, n - k) ~ model * difficulty + (1|subject) + (1|subject:question)"


@pytest.mark.parametrize("cmd, call", COVARIATE_COMMANDS)
def test_model_by_numeric_covariate_on_the_command_line(capsys, cmd, call):
    """A numeric covariate: the CLI's --by gives the rows at its quartiles (docs/glmm.md §11)."""
    df = pd.read_csv(SLOPE_CASE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(SLOPE_FORMULA, df, family="binomial", nagq=0)
    code, out, err = run(capsys, cmd[0], SLOPE_CASE, "-f", SLOPE_FORMULA, *BIN, "--nagq", "0",
                         *cmd[1:], "--format", "csv")
    assert code == 0, err
    assert_same(csv_of(out), call(res))
