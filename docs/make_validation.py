"""Write the number tables of the Validation page (docs/project/validation.md).

    python docs/make_validation.py                # both files (the simulations take minutes)
    python docs/make_validation.py references     # docs/project/validation_references.md
    python docs/make_validation.py simulations    # docs/project/validation_simulations.md

``references``: mixrank's answers on the designs of the reference suites against the
reference implementations, the largest differences over each suite -- lme4 1.1 + lmerTest
3.1 and lme4's glmer (the committed JSON of ``tests/reference/*.R``), R's clubSandwich
(``tests/reference/clubsandwich_chembench.json``, rewritten through Rscript by this script when R
is installed), ppi_py (the installed
``ppi-python`` package), FastChat's ``compute_mle_elo`` and statsmodels (re-fitted here).
``simulations``: the seeded validity grid of docs/methods.md §9 (``tests/validity/runner.py``,
the same replicates as ``benchmarks/bench_validity.py``).  Both files are committed and
included by the page; ``tests/test_docs_validation.py`` checks that they are what this
script writes (the simulation grid on its fastest design, marked slow).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mixrank  # noqa: E402

REF = ROOT / "tests" / "reference"
OUT = ROOT / "docs" / "project"
HEAD = ("<!-- written by docs/make_validation.py; do not edit "
        "(tests/test_docs_validation.py checks it) -->\n\n")


def _e(x: float) -> str:
    """A difference in scientific notation (two significant digits)."""
    return f"{x:.1e}" if np.isfinite(x) else "–"


def _table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _data(name: str) -> pd.DataFrame:
    return mixrank.load_dataset(name).copy()


# ----------------------------------------------------------------- lme4 + lmerTest
def lme4_table() -> str:
    from tests.reference.cases import case_frame
    from tests.reference.tolerances import discrepancies

    data = json.loads((REF / "lme4_engine.json").read_text())
    rows, worst = [], {}
    for case in data["cases"]:
        df = case_frame(case, _data, "engine_cases")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = mixrank.fit(case["formula"], df,
                              pairs=[(p["model_a"], p["model_b"]) for p in case["pairs"]],
                              pair_by=case["pair_by"], replicate=case["replicate"],
                              estimand="gls", df="satterthwaite")
        d = [discrepancies(fit, ref) for fit, ref in zip(res.pairs, case["pairs"])]
        interior = [x["df_rel"] for x, ref in zip(d, case["pairs"]) if not ref["isSingular"]]
        row = {"crit": max(x["criterion_excess"] for x in d),
               "comp": max(x["component_of_total"] for x in d),
               "est": max(x["estimate_rel"] for x in d),
               "se": max(x["std_error_rel"] for x in d),
               "df": max(interior) if interior else float("nan")}
        for k, v in row.items():
            worst[k] = np.nanmax([worst.get(k, -np.inf), v])
        rows.append([f"`{case['name']}`", len(case["pairs"]), f"{row['crit']:+.1e}",
                     _e(row["comp"]), _e(row["est"]), _e(row["se"]), _e(row["df"])])
    rows.append(["**largest**", sum(r[1] for r in rows), f"{worst['crit']:+.1e}",
                 *(f"**{_e(worst[k])}**" for k in ("comp", "est", "se", "df"))])
    v = data["versions"]
    return (f"### Paired mixed models vs lme4 {v['lme4']} + lmerTest {v['lmerTest']}\n\n"
            "`fit(..., estimand=\"gls\", df=\"satterthwaite\")` (lme4's answer) on every case "
            "of `tests/reference/lme4_engine.json` (`lme4_engine.R`: `lmer(d ~ 1 + ...)`, "
            "REML, bobyqa to `rhoend = 1e-12`). REML criterion excess (mixrank − lme4; "
            "negative: mixrank's optimum is better), the largest variance-component "
            "difference over the total variance, estimate difference relative to "
            "max(|estimate|, SE), SE and Satterthwaite df relative (df over pairs lme4 "
            "does not call singular). Contract: 1e-6 / 1e-4 / 1e-5 / 1e-5 / 1e-3.\n\n"
            + _table(["case", "pairs", "criterion excess", "components / total",
                      "estimate", "SE", "df"], rows))


# --------------------------------------------------------------------------- glmer
def glmer_table() -> str:
    from tests.reference.cases import case_frame

    data = json.loads((REF / "glmer.json").read_text())
    rows = []
    worst = {"fe": 0.0, "se": 0.0, "dev": -np.inf}
    for name, case in data["cases"].items():
        for q in (1, 0):
            ref = case["fits"][f"nagq{q}"]["tight"]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = mixrank.fit(case["formula"], case_frame(case, _data, "glmm_cases"),
                                  family="binomial", nagq=q, **(case.get("options") or {}))
            fe = res.fixed_effects()
            fe_d = float(np.max(np.abs(fe["estimate"].to_numpy()
                                       - np.array(list(ref["fixef"].values())))))
            se_d = float(np.max(np.abs(fe["std_error"].to_numpy()
                                       / np.array(list(ref["std_error"].values())) - 1)))
            dev = float(res.diagnostics().iloc[0]["deviance"] - ref["deviance"])
            worst = {"fe": max(worst["fe"], fe_d), "se": max(worst["se"], se_d),
                     "dev": max(worst["dev"], dev)}
            rows.append([f"`{name}`", q, len(fe), _e(fe_d), _e(se_d), f"{dev:+.1e}"])
    rows.append(["**largest**", "", "", f"**{_e(worst['fe'])}**", f"**{_e(worst['se'])}**",
                 f"{worst['dev']:+.1e}"])
    return (f"### Binomial GLMM vs lme4 {data['lme4_version']} `glmer`\n\n"
            "`fit(..., family=\"binomial\", nagq=...)` on every case of "
            "`tests/reference/glmer.json` (`glmer.R`, glmer converged tightly): the largest "
            "absolute difference of the fixed effects, of the SEs relative, and the deviance "
            "difference (mixrank − glmer; at most 1e-6 above glmer's, negative where "
            "mixrank's optimum is better). The two largest differences, `jailbreakbench` and "
            "`chembench4` at nAGQ = 1, are where glmer's optimum or its finite-difference "
            "Hessian is the less accurate side (docs/glmm.md §8).\n\n"
            + _table(["case", "nAGQ", "fixed effects", "fixed effects", "SE (relative)",
                      "deviance"], rows).replace("| case | nAGQ | fixed effects | fixed "
                                                 "effects |", "| case | nAGQ | terms | "
                                                 "fixed effects |"))


# ---------------------------------------------------------------------- clubSandwich
CS_PAIRS = [("gpt-4o", "claude3"), ("o1", "claude3.5"), ("llama3.1-70b-instruct", "gemma-2-9b-it"),
            ("mistral-large-2-123b", "paper-qa")]


def clubsandwich_numbers(refresh: bool = False) -> dict:
    """clubSandwich's CR2 SE and Satterthwaite (Bell-McCaffrey) df of ``lmer(d ~ 1 +
    (1|subject))`` on ChemBench pairs (9 topics of 40-1,001 questions): the committed
    ``tests/reference/clubsandwich_chembench.json``, first rewritten by R when ``refresh``."""
    import shutil
    import subprocess
    import tempfile

    path = REF / "clubsandwich_chembench.json"
    script = REF / "clubsandwich_chembench.R"
    if refresh and shutil.which("Rscript"):
        df = _data("chembench")
        df = df[df["prompt"] == "default"]
        with tempfile.TemporaryDirectory() as tmp:
            rows = []
            for a, b in CS_PAIRS:
                x = df[df.model == a].set_index("question")
                y = df[df.model == b].set_index("question")
                d = (x["correct"] - y.loc[x.index, "correct"]).rename("d").to_frame()
                d["subject"] = x["subject"]
                d["model_a"], d["model_b"] = a, b
                rows.append(d.reset_index())
            pd.concat(rows).to_csv(Path(tmp) / "d.csv", index=False)
            run = subprocess.run(["Rscript", str(script), str(Path(tmp) / "d.csv"), str(path)],
                                 capture_output=True, text=True, timeout=600)
            if run.returncode != 0:
                raise RuntimeError(run.stderr[-2000:])
    return json.loads(path.read_text())


def clubsandwich_table(refresh: bool = False) -> str:
    ref = clubsandwich_numbers(refresh)
    df = _data("chembench")
    df = df[df["prompt"] == "default"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("correct ~ model + (1|subject)", df, estimand="gls", df="cr2",
                          pairs=CS_PAIRS)
    con = res.contrasts(adjust="none", ci="t").set_index(["model_a", "model_b"])
    rows, worst = [], [0.0, 0.0, 0.0]
    for r in ref["pairs"]:
        m = con.loc[(r["model_a"], r["model_b"])]
        d = [abs(m["estimate"] - r["estimate"]), abs(m["std_error"] / r["std_error"] - 1),
             abs(m["df"] / r["df"] - 1)]
        worst = [max(w, x) for w, x in zip(worst, d)]
        rows.append([f"`{r['model_a']}` − `{r['model_b']}`", f"{m['std_error']:.5f}",
                     f"{r['std_error']:.5f}", f"{m['df']:.3f}", f"{r['df']:.3f}",
                     _e(d[0]), _e(d[1]), _e(d[2])])
    rows.append(["**largest**", "", "", "", "", *(f"**{_e(w)}**" for w in worst)])
    return (f"### CR2 and Bell–McCaffrey df vs clubSandwich {ref['versions']['clubSandwich']}\n\n"
            "The default SE and df of a paired mixed model whose only random term is the unit "
            "(`fit(..., estimand=\"gls\", df=\"cr2\")`) against clubSandwich's "
            "`coef_test(lmer(d ~ 1 + (1|subject)), vcov = \"CR2\", test = \"Satterthwaite\")` "
            "on ChemBench pairs (9 topics of 40–1,001 questions: unequal cluster sizes; "
            "`tests/reference/clubsandwich_chembench.R`): estimate difference, SE and df relative.\n\n"
            + _table(["pair", "SE mixrank", "SE clubSandwich", "df mixrank",
                      "df clubSandwich", "estimate", "SE", "df"], rows))


# ---------------------------------------------------------------------------- ppi_py
def ppi_table() -> str:
    import ppi_py
    from scipy import stats

    from tests.judge.simdata import simulate

    rows, worst = [], 0.0
    df, _ = simulate(11, models=3, subjects=15, questions=40, frac=0.2)

    def parts(model: str, other: str | None = None):
        a = df[df["model"] == model].set_index(["subject", "question"]).sort_index()
        if other is None:
            y, yh = a["human"].to_numpy(), a["score"].to_numpy()
        else:
            b = df[df["model"] == other].set_index(["subject", "question"]).sort_index()
            y, yh = (a["human"] - b["human"]).to_numpy(), (a["score"] - b["score"]).to_numpy()
        lab = np.isfinite(y)
        return y[lab], yh[lab], yh[~lab]

    for lam in (None, 0.3, 1.0):
        res = mixrank.fit("score ~ model", df, gold="human", lam=lam)
        sc = res.model_scores(level=0.95).set_index("model")
        con = res.contrasts(level=0.95, adjust="none").set_index(["model_a", "model_b"])
        for what, row, args in (("score m1", sc.loc["m1"], ("m1",)),
                                ("m0 − m2", con.loc[("m0", "m2")], ("m0", "m2"))):
            Y, Yh, Yu = parts(*args)
            est = float(np.ravel(ppi_py.ppi_mean_pointestimate(Y, Yh, Yu, lam=lam))[0])
            lo, hi = (float(np.ravel(x)[0])
                      for x in ppi_py.ppi_mean_ci(Y, Yh, Yu, alpha=0.05, lam=lam))
            d = max(abs(row["estimate"] - est), abs(row["ci_lower"] - lo),
                    abs(row["ci_upper"] - hi))
            worst = max(worst, d)
            rows.append([f"judge, cell unit, λ = {'tuned' if lam is None else lam}", what,
                         f"{est:.5f}", f"{row['estimate']:.5f}", _e(d)])
    # prediction-powered Bradley-Terry on the arena (ppi_logistic, PPI++)
    battles = _data("chatbot_arena")
    models = sorted(["gpt-4", "claude-v1", "vicuna-13b", "koala-13b", "alpaca-13b",
                     "chatglm-6b"])
    sub = battles[battles.model_a.isin(models) & battles.model_b.isin(models)]
    sub = sub[~sub.winner.str.startswith("tie") & ~sub.winner_gpt4.str.startswith("tie")]
    sub = sub.reset_index(drop=True)
    keep = np.zeros(len(sub), dtype=bool)
    keep[np.random.default_rng(3).choice(len(sub), 600, replace=False)] = True
    sub.loc[~keep, "winner"] = None
    res = mixrank.arena(sub, judge="winner_gpt4", cluster=False)
    idx = {m: i for i, m in enumerate(models)}
    X = np.zeros((len(sub), len(models)))
    X[np.arange(len(sub)), sub.model_a.map(idx).to_numpy()] = 1.0
    X[np.arange(len(sub)), sub.model_b.map(idx).to_numpy()] = -1.0
    X = X[:, 1:]
    y = sub.winner.map({"model_a": 1.0, "model_b": 0.0}).to_numpy(dtype=float)
    yh = sub.winner_gpt4.map({"model_a": 1.0, "model_b": 0.0}).to_numpy(dtype=float)
    lab = keep
    ref = ppi_py.ppi_logistic_pointestimate(X[lab], y[lab], yh[lab], X[~lab], yh[~lab])
    ours = res.fit.theta[1:len(models)]
    lo, hi = ppi_py.ppi_logistic_ci(X[lab], y[lab], yh[lab], X[~lab], yh[~lab], alpha=0.1,
                                    lam=float(res.judge.lam[0]))
    se = np.sqrt(np.diag(res.cov))[1:len(models)]
    q = stats.norm.ppf(0.95)
    d = max(float(np.max(np.abs(ours - ref))), float(np.max(np.abs(ours - q * se - lo))),
            float(np.max(np.abs(ours + q * se - hi))))
    worst = max(worst, d)
    rows.append(["arena, 600 human votes + GPT-4 judge (PPI++)", "5 strengths and 90% CIs",
                 f"{ref[0]:.5f}", f"{ours[0]:.5f}", _e(d)])
    rows.append(["**largest**", "", "", "", f"**{_e(worst)}**"])
    from importlib.metadata import version

    return (f"### Judge-corrected scores vs ppi_py {version('ppi-python')}\n\n"
            "Judge-corrected scores and contrasts at the cell unit (`fit(..., gold=, lam=)`) "
            "against `ppi_mean_pointestimate` / `ppi_mean_ci` (tuned and fixed λ; simulated "
            "data of `tests/judge/simdata.py`, seed 11), and prediction-powered "
            "Bradley–Terry (`arena(..., judge=)`) against `ppi_logistic_pointestimate` / "
            "`ppi_logistic_ci` on Chatbot Arena battles: the first reference value shown, "
            "mixrank's, and the largest absolute difference of the estimates and interval "
            "ends.\n\n"
            + _table(["fit", "quantity", "ppi_py", "mixrank", "largest difference"], rows))


# --------------------------------------------------------- FastChat and statsmodels
def arena_tables() -> str:
    import statsmodels.api as sm

    battles = _data("chatbot_arena")
    res = mixrank.arena(battles, cluster=False)
    models = sorted(set(battles.model_a) | set(battles.model_b))
    idx = {m: i for i, m in enumerate(models)}
    K = len(models)
    a, b = battles.model_a.map(idx).to_numpy(), battles.model_b.map(idx).to_numpy()
    w = battles.winner.to_numpy()
    win = np.zeros((K, K))
    np.add.at(win, (a[w == "model_a"], b[w == "model_a"]), 2.0)
    np.add.at(win, (b[w == "model_b"], a[w == "model_b"]), 2.0)
    tie = np.isin(w, ["tie", "tie (bothbad)"])
    np.add.at(win, (a[tie], b[tie]), 1.0)
    np.add.at(win, (b[tie], a[tie]), 1.0)
    rows, ys, wts = [], [], []
    for i in range(K):
        for j in range(K):
            if i != j:
                x = np.zeros(K)
                x[i], x[j] = np.log(10), -np.log(10)
                rows += [x, x]
                ys += [1.0, 0.0]
                wts += [win[i, j], win[j, i]]
    glm = sm.GLM(np.array(ys), np.array(rows)[:, 1:], family=sm.families.Binomial(),
                 freq_weights=np.array(wts)).fit(tol=1e-13)
    coef = np.concatenate([[0.0], glm.params])
    elo = 400 * (coef - coef.mean()) + 1000
    ours = res.model_scores().set_index("model").loc[models, "estimate"].to_numpy()
    top = np.argsort(-elo)[:5]
    fc = [[f"`{models[i]}`", f"{elo[i]:.3f}", f"{ours[i]:.3f}", _e(abs(elo[i] - ours[i]))]
          for i in top]
    fc.append([f"**all {K} models**", "", "", f"**{_e(float(np.max(np.abs(elo - ours))))}**"])
    fastchat = (f"### Arena Elo vs FastChat's `compute_mle_elo`\n\n"
                f"`arena(battles)` on the bundled Chatbot Arena log ({len(battles):,} "
                "battles) against FastChat's method (weighted logistic regression on the "
                "±log 10 design, ties as two half-wins, Elo = 400 · coefficient + 1000, "
                "coefficients summing to zero; re-implemented with statsmodels `GLM`): the "
                "five highest and the largest absolute difference over all models.\n\n"
                + _table(["model", "FastChat", "mixrank", "difference"], fc))
    # statsmodels Logit on the individual decisive battles: estimates, information SE, HC0
    dec = mixrank.arena(battles, ties="drop", cluster=False)
    hc0 = mixrank.arena(battles, ties="drop", se="sandwich", cluster=False)
    bt = dec.battles
    n, K2 = bt.n, len(bt.models)
    X = np.zeros((n, K2))
    X[np.arange(n), bt.a] += 1
    X[np.arange(n), bt.b] -= 1
    X = X[:, 1:]
    ref = sm.Logit(bt.outcome, X).fit(method="newton", tol=1e-14, maxiter=100, disp=0)
    ref_hc0 = sm.Logit(bt.outcome, X).fit(method="newton", tol=1e-14, maxiter=100, disp=0,
                                          cov_type="HC0")
    est = float(np.max(np.abs(dec.fit.theta[1:K2] - ref.params)))
    se = float(np.max(np.abs(np.sqrt(np.diag(dec.cov))[1:] / ref.bse - 1)))
    se0 = float(np.max(np.abs(np.sqrt(np.diag(hc0.cov))[1:] / ref_hc0.bse - 1)))
    sm_rows = [["Bradley–Terry strengths (log-odds)", K2 - 1, _e(est)],
               ["information SE (relative)", K2 - 1, _e(se)],
               ["HC0 sandwich SE (relative)", K2 - 1, _e(se0)]]
    stm = ("### Arena Bradley–Terry vs statsmodels `Logit`\n\n"
           f"`arena(battles, ties=\"drop\")` on the {n:,} decisive Chatbot Arena battles "
           "against statsmodels' `Logit` on one row per battle (design e_a − e_b without the "
           "first model; Newton to 1e-14): the largest differences.\n\n"
           + _table(["quantity", "values", "largest difference"], sm_rows))
    return fastchat + "\n" + stm


def references(refresh: bool = False) -> str:
    parts = [lme4_table(), glmer_table(), clubsandwich_table(refresh), ppi_table(),
             arena_tables()]
    return HEAD + "\n".join(parts)


# ------------------------------------------------------------------------ simulations
#: Data sets per design of the committed grid: the replicates (seeds 0..REPS-1) of
#: ``python benchmarks/bench_validity.py 300``, the run docs/methods.md §9 quotes.
REPS = 300


def simulation_grid(reps: int = REPS, only: str | None = None) -> str:
    import runpy

    from tests.validity.runner import run

    bench = runpy.run_path(str(ROOT / "benchmarks" / "bench_validity.py"))
    with warnings.catch_warnings():          # the estimand the runner's fits use: the default
        warnings.simplefilter("ignore")
        estimand = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example(),
                               pairs=[("m01", "m02")]).estimand
    grid, answers = bench["GRID"], bench["ANSWERS"]
    head = ["design", "df", "per-pair error", "CI coverage", "Holm FWER", "max-t FWER",
            "step-down FWER", "simult. rank coverage", "Holm power"]
    rows = []
    for name, args, kw in grid:
        if only is not None and only not in name:
            continue
        res = run(range(reps), *args, ranks=True, **kw)
        for how in ("cr2", "satterthwaite"):
            rows.append([name.replace(" x ", " × "), how] + [
                f"{res[k][0]:.3f} ({res[k][1]:.3f})" if (k := f"{how}_{a}") in res else "–"
                for a in answers])
    return ("### Validity with few units (docs/methods.md §9)\n\n"
            f"Seeded simulations, {reps} data sets per design (seeds 0–{reps - 1}; "
            f"`tests/validity/runner.py`), `correct ~ model + (1|subject)`, estimand `{estimand}` "
            "(the default): "
            "the mean and Monte Carlo SE of the per-pair type-I error at 0.05 under the null, "
            "the 95% CI coverage, the family-wise error of Holm, max-t (unit sign flips for "
            "`cr2`, Gaussian for `satterthwaite`) and the step-down, the coverage of the "
            "simultaneous rank intervals, and Holm's power on the non-null pairs of the gap "
            "designs. The promise: 0.05 error, 0.95 coverage.\n\n" + _table(head, rows))


def simulations() -> str:
    return HEAD + simulation_grid()


def main(which: str = "all") -> None:
    if which in ("all", "references"):
        (OUT / "validation_references.md").write_text(references(refresh=True),
                                                        encoding="utf-8")
    if which in ("all", "simulations"):
        (OUT / "validation_simulations.md").write_text(simulations(), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "all")
