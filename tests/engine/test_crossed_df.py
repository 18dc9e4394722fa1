"""Satterthwaite df of the variance components (mixrank.engine.lmm.crossed_df), the default
on crossed designs, against independent references:

* R (tests/reference/crossed_cell.R, JSON beside it): the same df written with dense
  matrices at lme4's estimates, on every pair of two replicates of the validity suite's crossed
  cell, both estimands; and lmerTest's own Satterthwaite df for ``df="satterthwaite"``;
* a balanced subject x prompt design, one score a cell, interior REML fit: the textbook
  Satterthwaite df of the quasi-F combination ``MS_s + MS_p - MS_e`` (Satterthwaite 1946;
  Searle, Casella & McCulloch 1992 §4.8), with the REML variance equal to
  ``(MS_s + MS_p - MS_e) / (a b)``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.engine.lmm.crossed_df import variance_df

REF = Path(__file__).parents[1] / "reference"
DATA = json.loads((REF / "crossed_cell.json").read_text())
FORMULA = "score ~ model + (1|subject) + (1|prompt)"


def _fit(seed: int, **kw) -> mixrank.FitResult:
    d = pd.read_csv(REF / "crossed_cell" / f"seed{seed}.csv.gz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # singular fits, weak (1|prompt): the point here
        return mixrank.fit(FORMULA, d, **kw)


def _by_pair(tab: pd.DataFrame) -> dict[tuple[str, str], pd.Series]:
    return {(r.model_a, r.model_b): r for r in tab.itertuples()}


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: f"seed{c['seed']}")
def test_default_df_on_crossed_designs_equals_the_dense_r_computation(case):
    fit = _fit(case["seed"])                                  # defaults: cells estimand
    assert fit.df_method == "satterthwaite-vc"
    c = fit.contrasts()
    assert c.attrs["mixrank"]["df_method"] == ("REML SE, Satterthwaite df of the variance "
                                               "components")
    got = _by_pair(c)
    for p in case["pairs"]:
        r = got[(p["model_a"], p["model_b"])]
        assert r.df == pytest.approx(p["cells_df"], rel=1e-4)
        assert r.std_error ** 2 == pytest.approx(p["cells_variance"], rel=1e-4)
        assert r.estimate == pytest.approx(p["cells_estimate"], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: f"seed{c['seed']}")
def test_gls_estimand_and_explicit_satterthwaite_keep_lmertest(case):
    vc = _by_pair(_fit(case["seed"], estimand="gls", df="satterthwaite-vc").contrasts())
    lt = _by_pair(_fit(case["seed"], estimand="gls", df="satterthwaite").contrasts())
    for p in case["pairs"]:
        key = (p["model_a"], p["model_b"])
        assert vc[key].df == pytest.approx(p["gls_df"], rel=1e-4)
        assert lt[key].df == pytest.approx(p["lmer_df"], rel=1e-3)       # lmerTest's df
        assert lt[key].std_error == pytest.approx(p["lmer_std_error"], rel=1e-4)
        assert vc[key].std_error == lt[key].std_error


def test_a_prompt_variance_at_zero_keeps_the_prompt_levels_in_the_df():
    """Seed 14 (3 prompts), m01 vs m02: lme4 estimates the prompt variance at 0 and
    lmerTest's df (8.6) ignores the prompt term; in the variances the 3 prompts' 2 df stay
    in (3.3).  Both from R's own fits (the JSON)."""
    case = next(c for c in DATA["cases"] if c["seed"] == 14)
    p = next(p for p in case["pairs"] if (p["model_a"], p["model_b"]) == ("m01", "m02"))
    assert p["components"]["prompt"] < 1e-10 and p["lmer_df"] > 8
    assert 2 < p["gls_df"] < 4
    got = _by_pair(_fit(14, estimand="gls").contrasts())[("m01", "m02")]
    assert got.df == pytest.approx(p["gls_df"], rel=1e-4)


def _balanced(a: int, b: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = (0.3 + rng.normal(0, 1.0, a)[:, None] + rng.normal(0, 0.8, b)[None, :]
         + rng.normal(0, 0.7, (a, b)))
    rows = [dict(model=m, subject=f"s{i:02d}", prompt=f"p{j}", score=(d[i, j] if m == "a" else 0.0))
            for m in ("a", "b") for i in range(a) for j in range(b)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("a,b,seed", [(8, 4, 1), (12, 3, 2), (6, 5, 3)])
def test_balanced_crossed_design_gives_the_quasi_f_satterthwaite_df(a, b, seed):
    data = _balanced(a, b, seed)
    d = data[data.model == "a"].pivot(index="subject", columns="prompt", values="score")
    y = d.to_numpy()
    ms_s = b * y.mean(1).var(ddof=1)
    ms_p = a * y.mean(0).var(ddof=1)
    e = y - y.mean(1, keepdims=True) - y.mean(0, keepdims=True) + y.mean()
    ms_e = float((e ** 2).sum()) / ((a - 1) * (b - 1))
    assert ms_s > ms_e and ms_p > ms_e                       # interior REML = ANOVA
    V = (ms_s + ms_p - ms_e) / (a * b)
    df = (ms_s + ms_p - ms_e) ** 2 / (ms_s ** 2 / (a - 1) + ms_p ** 2 / (b - 1)
                                      + ms_e ** 2 / ((a - 1) * (b - 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit(FORMULA, data)
    row = fit.contrasts().iloc[0]
    assert fit.df_method == "satterthwaite-vc"
    assert row.std_error ** 2 == pytest.approx(V, rel=1e-5)
    assert row.df == pytest.approx(df, rel=1e-5)


def test_variance_df_of_one_balanced_term_is_its_levels_minus_one():
    """One random term, balanced, interior: the estimate's variance is MS_between / n and its
    df the between stratum's, L - 1, for both the mean (cells) and GLS weights."""
    L, m = 5, 7
    codes = np.repeat(np.arange(L), m)
    psi = np.array([0.6, 1.3])
    for w in (np.full(L * m, 1.0 / (L * m)), None):
        V, df = variance_df([codes], psi, w)
        assert V == pytest.approx((1.3 + m * 0.6) / (L * m))
        assert df == pytest.approx(L - 1)
    V, df = variance_df([codes], np.array([0.6, 0.0]), None)
    assert np.isnan(V) and np.isnan(df)


def test_pairs_with_too_many_levels_keep_lmertest_df_and_warn(monkeypatch):
    from mixrank.engine.lmm import crossed_df

    monkeypatch.setattr(crossed_df, "MAX_LEVELS", 10)     # the cell has 10 subjects + 3 prompts
    d = pd.read_csv(REF / "crossed_cell" / "seed14.csv.gz")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fit = mixrank.fit(FORMULA, d, estimand="gls")
    msgs = [str(x.message) for x in w if issubclass(x.category, mixrank.SmallSampleWarning)]
    case = next(c for c in DATA["cases"] if c["seed"] == 14)
    # the warning names the pairs whose lme4 fit puts a variance at zero (singular in R)
    n_zero = sum(min(v for k, v in p["components"].items() if k != "residual") < 1e-8
                 for p in case["pairs"])
    assert n_zero > 0
    assert any(f"{n_zero} pair(s) have more than 10 random-effect levels and a variance "
               "component estimated at zero" in m for m in msgs), msgs
    got = _by_pair(fit.contrasts())
    for p in case["pairs"]:
        assert got[(p["model_a"], p["model_b"])].df == pytest.approx(p["lmer_df"], rel=1e-3)


def test_above_the_cheap_size_only_pairs_with_a_variance_at_zero_take_these_df(monkeypatch):
    """Over :data:`CHEAP_LEVELS` levels an interior pair keeps lmerTest's df (the per-fit
    cost stays lme4's) and a pair with a variance at zero, where lmerTest's df are liberal,
    takes the variance components' df -- both from R's own fits (the JSON)."""
    from mixrank.engine.lmm import crossed_df

    monkeypatch.setattr(crossed_df, "CHEAP_LEVELS", 5)      # the cell has 10 + 3 levels
    case = next(c for c in DATA["cases"] if c["seed"] == 14)
    got = _by_pair(_fit(14, estimand="gls").contrasts())
    kinds = set()
    for p in case["pairs"]:
        zero = min(v for k, v in p["components"].items() if k != "residual") < 1e-8
        r = got[(p["model_a"], p["model_b"])]
        assert r.df == pytest.approx(p["gls_df"] if zero else p["lmer_df"],
                                     rel=1e-4 if zero else 1e-3)
        kinds.add(zero)
    assert kinds == {True, False}


def _crossed_frame(seed: int, missing: float, models: int = 4, subjects: int = 40,
                   questions: int = 30, prompts: int = 7):
    """0/1 scores on subject/question x prompt cells, each model missing ``missing`` of them
    (rows shuffled, so the frame's cell order is not the generator's)."""
    rng = np.random.default_rng(seed)
    s, q, p = np.meshgrid(np.arange(subjects), np.arange(questions), np.arange(prompts),
                          indexing="ij")
    cells = pd.DataFrame({"subject": s.ravel(), "question": (s * questions + q).ravel(),
                          "prompt": p.ravel()})
    parts = []
    for m in range(models):
        keep = rng.random(len(cells)) >= missing * (m + 1) / models   # unequal missingness
        parts.append(cells[keep].assign(model=f"m{m}", correct=rng.integers(0, 2, keep.sum())))
    d = pd.concat(parts, ignore_index=True)
    return d.sample(frac=1.0, random_state=seed).reset_index(drop=True)


@pytest.mark.parametrize("seed,missing", [(1, 0.0), (2, 0.3), (3, 0.9), (4, 0.995)])
@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("chunk", [7, 1 << 14])
def test_levels_exceed_decides_as_counting_every_level(seed, missing, compressed, chunk,
                                                       monkeypatch):
    """The chunked lower bound decides "more than ``bound`` levels" exactly as the count of
    distinct codes over the pair's common cells (np.unique), for bounds around that count,
    on dense and compressed frames, full and sparse pairs (down to a handful of cells), read
    in one chunk or in many growing ones."""
    from mixrank.engine.lmm import crossed_df

    monkeypatch.setattr(crossed_df, "_FIRST_CHUNK", chunk)
    from mixrank.engine.lmm.native import _columns
    from mixrank.frame import build_frame
    from mixrank.frame.columns import compress_frame

    f = "correct ~ model + (1|subject/question) + (1|prompt)"
    frame = build_frame(_crossed_frame(seed, missing), f)
    if compressed:
        frame = compress_frame(frame)
    cols = _columns(frame)
    names = list(frame.spec.term_names)
    codes = [frame.term_codes[t] for t in names]
    sizes = [frame.term_levels[t] for t in names]
    obs = frame.observed if not compressed else None
    checked = 0
    for j in range(len(frame.models)):
        for k in range(j + 1, len(frame.models)):
            if obs is not None:
                both = obs[:, j] & obs[:, k]
            else:
                both = np.zeros(frame.n_cells, dtype=bool)
                both[np.intersect1d(cols.cells[j], cols.cells[k])] = True
            exact = sum(np.unique(c[both]).size for c in codes)
            for bound in sorted({0, max(exact - 1, 0), exact, exact + 1, 5 * exact + 3}):
                got = crossed_df.levels_exceed(cols, j, k, codes, sizes, bound)
                assert got == (exact > bound), (j, k, exact, bound)
                checked += 1
    assert checked >= 6 * 4
