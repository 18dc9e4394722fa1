"""ArenaResult accessors: scales, anchor, rank intervals, resolution, the CLI."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mixrank
from mixrank.arena.result import ELO
from mixrank.cli import main
from mixrank.errors import DesignError
from mixrank.inference.ranks import rank_intervals_from_contrasts

from .conftest import simulate_battles

BETA = np.array([0.0, 0.4, -0.3, 0.9, 0.1, -0.8])


@pytest.fixture(scope="module")
def res():
    return mixrank.arena(simulate_battles(5000, BETA, rng=21, tie_rate=0.1))


def test_scales_of_contrasts(res):
    lo = res.contrasts(adjust="none", scale="logit")
    elo = res.contrasts(adjust="none")                 # the fit's scale: Elo by default
    assert elo.attrs["mixrank"]["scale"] == "elo"
    pr = res.contrasts(adjust="none", scale="probability")
    np.testing.assert_allclose(elo["estimate"], ELO * lo["estimate"])
    np.testing.assert_allclose(elo["ci_upper"], ELO * lo["ci_upper"])
    np.testing.assert_allclose(pr["estimate"], stats.logistic.cdf(lo["estimate"]))
    np.testing.assert_allclose(pr["ci_lower"], stats.logistic.cdf(lo["ci_lower"]))
    np.testing.assert_array_equal(pr["p_value"], lo["p_value"])
    assert ELO == pytest.approx(173.7178, abs=1e-4)
    assert list(lo.columns[:12]) == ["model_a", "model_b", "estimate", "std_error", "df",
                                     "statistic", "p_value", "p_adjusted", "p_greater",
                                     "ci_lower", "ci_upper", "level"]
    assert (lo["n"] == lo["wins_a"] + lo["wins_b"] + lo["ties"]).all()
    holm = res.contrasts()
    np.testing.assert_allclose(holm["p_adjusted"], mixrank.adjust(lo["p_value"], "holm"))
    with pytest.raises(DesignError, match="scale"):
        res.contrasts(scale="odds")


def test_model_scores_centre_and_anchor(res):
    sc = res.model_scores()
    assert sc["estimate"].mean() == pytest.approx(1000.0)
    b = res.fit.beta
    np.testing.assert_allclose(sc["estimate"], 1000 + ELO * (b - b.mean()))
    an = res.model_scores(anchor=("m03", 1250.0)).set_index("model")
    assert an.loc["m03", "estimate"] == pytest.approx(1250.0)
    assert an.loc["m03", "std_error"] == 0.0
    c = res.contrasts(adjust="none", scale="elo").set_index(["model_a", "model_b"])
    assert an.loc["m01", "std_error"] == pytest.approx(c.loc[("m01", "m03"), "std_error"])
    # the interval of a centred score: Var(beta_j - mean beta) from the covariance
    K = len(res.models)
    w = np.eye(K)[0] - 1 / K
    assert sc.loc[0, "std_error"] == pytest.approx(ELO * np.sqrt(w @ res.cov[:K, :K] @ w))
    assert (sc["n"] == sc["wins"] + sc["losses"] + sc["ties"]).all()
    with pytest.raises(DesignError, match="anchor"):
        res.model_scores(anchor=("nobody", 1000))


def test_rank_intervals_are_those_of_the_contrast_table(res):
    ri = res.rank_intervals()
    ref = rank_intervals_from_contrasts(res.model_scores(scale="logit")[["model", "estimate",
                                                                         "n"]],
                                        res.contrasts(adjust="none"))
    pd.testing.assert_frame_equal(ri[["model", "rank", "rank_lower", "rank_upper"]],
                                  ref[["model", "rank", "rank_lower", "rank_upper"]])
    assert ri.set_index("model").loc["m03", "rank"] == 1
    sim = res.rank_intervals(coverage="simultaneous")
    assert ((sim.rank_upper - sim.rank_lower) >= (ri.rank_upper - ri.rank_lower)).all()


def test_maxt_is_between_none_and_bonferroni(res):
    none = res.contrasts(adjust="none")
    mt = res.contrasts(adjust="maxt", rng=1, draws=4000)
    bonf = res.contrasts(adjust="bonferroni")
    assert (mt["p_adjusted"] >= none["p_value"] - 1e-3).all()
    assert (mt["p_adjusted"] <= bonf["p_adjusted"] + 3 * np.sqrt(0.05 / 4000) + 1e-3).all()
    assert mt.attrs["mixrank"]["ci"] == "simultaneous"


def test_resolution_from_the_information_per_battle(res):
    r = res.resolution(columns="all")
    assert len(r) == len(res.models) - 1
    N = res.n_battles
    assert (r["n"] == N).all()
    c = res.contrasts(adjust="none", scale="logit").set_index(["model_a", "model_b"])
    zsum = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    for row in r.itertuples():
        key = (row.model_a, row.model_b) if (row.model_a, row.model_b) in c.index else (
            row.model_b, row.model_a)
        se = c.loc[key, "std_error"]
        assert row.sigma_d == pytest.approx(se * np.sqrt(N))
        # N* overall battles at the current sampling: (z+z)^2 Var(one battle) / delta^2
        assert row.n_star == pytest.approx(zsum ** 2 * se ** 2 * N / row.estimate ** 2)
        assert row.resolved == (abs(row.estimate) / se >= zsum)
        assert row.n_pair == c.loc[key, "n"]
    assert (r["estimate"] >= 0).all()          # adjacent pairs, higher score first
    assert r.attrs["mixrank"]["anytime"]["method"] == "normal"
    assert (r["n_star_anytime"] > r["n_star"]).all()
    with pytest.raises(DesignError, match="anytime"):
        res.resolution(columns="all", anytime="bernoulli")


def test_summary_and_repr(res):
    text = str(res.summary())
    assert "Bradley-Terry" in text and "5,000 battles" in text
    assert "ArenaResult" in repr(res)


def test_cli_arena(tmp_path, capsys):
    log = simulate_battles(2000, BETA, rng=5, n_prompts=50, prompt_sd=0.3)
    log.to_csv(tmp_path / "b.csv", index=False)
    assert main(["arena", str(tmp_path / "b.csv"), "--format", "csv"]) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out))
    ref = mixrank.arena(log).model_scores().sort_values("estimate", ascending=False)
    np.testing.assert_allclose(out["estimate"], ref["estimate"])
    assert main(["arena", str(tmp_path / "b.csv"), "-f", "winner ~ style(len)", "--cluster",
                 "prompt", "--table", "all", "--format", "json"]) == 0
    text = capsys.readouterr().out
    assert '"covariates"' in text and '"resolution"' in text
    # a per-item score file needs --from-scores; bad options are usage errors
    assert main(["arena", "example"]) == 2
    assert "--from-scores" in capsys.readouterr().err
    assert main(["arena", str(tmp_path / "b.csv"), "--draws", "100"]) == 2
    assert main(["arena", str(tmp_path / "b.csv"), "--anchor", "m01"]) == 2
    err = capsys.readouterr().err
    assert "--se bootstrap" in err and "MODEL=VALUE" in err


def test_html_report(tmp_path, capsys):
    log = simulate_battles(1500, BETA, rng=8)
    log.to_csv(tmp_path / "b.csv", index=False)
    out = tmp_path / "r.html"
    assert main(["arena", str(tmp_path / "b.csv"), "-f", "winner ~ style(len)", "--report",
                 str(out)]) == 0
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<script" not in text
    for sid in ("battles", "leaderboard", "covariates", "contrasts", "ranks", "resolution"):
        assert f'<section id="{sid}">' in text
    assert 'data-plot="scores"' in text and 'data-plot="ranks"' in text
    assert "class=\"omitted\"" not in text
    assert main(["arena", str(tmp_path / "b.csv"), "--report", str(tmp_path / "no" / "r.html")
                 ]) == 2
    assert "--report" in capsys.readouterr().err


def test_resolution_selects_models(res):
    top = res.resolution(columns="all", top=3)
    order = res.model_scores().sort_values("estimate", ascending=False)["model"].tolist()
    assert list(zip(top.model_a, top.model_b)) == list(zip(order[:2], order[1:3]))
    sub = res.resolution(columns="all", pairs="all", models=["m00", "m01", "m02"])
    assert len(sub) == 3
    explicit = res.resolution(columns="all", pairs=[("m00", "m05")])
    assert explicit[["model_a", "model_b"]].values.tolist() == [["m00", "m05"]]
    with pytest.raises(DesignError, match="top"):
        res.resolution(columns="all", top=1)
    with pytest.raises(DesignError, match="models="):
        res.resolution(columns="all", models=["nobody"])


def test_arena_report_has_the_judge_section_and_the_scale_on_the_axis(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from mixrank.report.html import render_report
    from mixrank.report.plots_scores import plot_model_scores

    log = simulate_battles(1500, BETA, rng=31)
    g = np.random.default_rng(2)
    log["judge_llm"] = np.where(g.random(len(log)) < 0.8, log["winner"],
                                np.where(g.random(len(log)) < 0.7, "model_a", "model_b"))
    log.loc[g.random(len(log)) > 0.3, "winner"] = None
    res = mixrank.arena(log, judge="judge_llm")
    page = render_report(res)
    assert "Judge correction" in page and "human_only" in page and "lam = judge_llm" in page
    ax = plot_model_scores(res.model_scores())
    assert ax.get_xlabel().startswith("Bradley-Terry score (Elo scale")
    ax = plot_model_scores(mixrank.arena(simulate_battles(500, BETA, rng=3),
                                         scale="logit").model_scores())
    assert ax.get_xlabel() == "Bradley-Terry score (log-strength)"
    plain = render_report(mixrank.arena(simulate_battles(500, BETA, rng=3)))
    assert "Judge correction" not in plain
