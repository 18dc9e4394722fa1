"""Property-based fuzzing of every public entry point.

Random long frames -- NaN, infinite and non-numeric scores, duplicated rows,
odd dtypes (int, bool, object, categorical keys), unicode / comma /
whitespace model names, single levels, disjoint items, replicates -- and
random formulas and options go into ``fit`` (and every accessor of its
result: ``test_fit_accessors`` calls contrasts with each ``adjust``,
model_scores, rank_intervals, resolution, every ``sensitivity`` kind with and
without ``summary``, plan, anova and the HTML report on fits that include
tied, zero-difference and constant-difference pairs), ``build_frame``, ``read_wide``, the paired tests, ``reliable_change``,
the power functions, ``power_summary`` and ``plan``.  Two properties:

* the only exceptions that escape are :class:`~mixrank.errors.MixrankError`
  subclasses (warnings are fine);
* every result's counts reconcile with its input: rows kept + dropped = rows
  read, each model's cells = paired + unpaired for every pair, wide cells =
  long rows + empty cells.

Examples per property: ``FAST`` (default, ~60; ``ACCESSORS``, 12, for the
accessor sweep, which refits for the sensitivity checks) in the ordinary run; the
``slow`` twins run ``SLOW`` (1,000) examples each -- CI's slow set.  The
counts can be overridden with ``MIXRANK_FUZZ_EXAMPLES`` /
``MIXRANK_FUZZ_SLOW_EXAMPLES``.  The examples are derandomized (the same on
every run, so CI is reproducible); ``MIXRANK_FUZZ_RANDOM=1`` draws fresh ones,
and each failure found that way is kept below as a fixed regression test.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.special
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mixrank
from mixrank.errors import MixrankError

FAST = int(os.environ.get("MIXRANK_FUZZ_EXAMPLES", "60"))
ACCESSORS = int(os.environ.get("MIXRANK_FUZZ_ACCESSOR_EXAMPLES", "12"))
SLOW = int(os.environ.get("MIXRANK_FUZZ_SLOW_EXAMPLES", "1000"))
RANDOM = os.environ.get("MIXRANK_FUZZ_RANDOM", "") not in ("", "0")

MODEL_NAMES = ["m1", "m2", "Acme, v2", " padded ", "ü-модель", "🙂", "1", "m1 ", "x\ty"]
GOOD_FORMULAS = [
    "correct ~ model",
    "correct ~ model + (1|subject)",
    "correct ~ model + (1|subject) + (1|prompt)",
    "correct ~ model + (1|subject) + (1|subject:question)",
    "correct ~ model + (1|question)",
    "correct ~ model + (1|prompt) + (1|subject)",
    "correct ~ model * x + (1|subject)",
]
BAD_FORMULAS = [
    "correct ~ modle + (1|subject)",
    "correct ~ model + (1|nowhere)",
    "score ~ model",
    "correct ~ model + (1|subject",
    "correct ~ model + (1||subject)",
    "correct ~ 1",
    "",
]


# ----------------------------------------------------------------- strategies
@st.composite
def long_frames(draw: Any) -> pd.DataFrame:
    """A small long table with every kind of oddity, each with modest probability."""
    n_models = draw(st.sampled_from([2, 3, 4, 2, 3, 1]))
    models = draw(st.lists(st.sampled_from(MODEL_NAMES), min_size=n_models, max_size=n_models,
                           unique=True))
    n_sub = draw(st.sampled_from([2, 3, 4, 2, 3, 1]))
    n_q, n_p = draw(st.sampled_from([2, 3, 4, 1])), draw(st.sampled_from([1, 2, 3]))
    cells = [(s, q, p) for s in range(n_sub) for q in range(n_q) for p in range(n_p)]
    kind = draw(st.sampled_from(["binary", "continuous", "tiny", "bool", "text"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    samples = 2 if rng.random() < 0.25 else 1
    keep = rng.random(len(cells) * n_models) < rng.choice([0.5, 0.9, 1.0])

    def rare(p: float) -> bool:    # hypothesis favours boundary integers; a seeded draw does not
        return bool(rng.random() < p)

    rows = []
    for i, m in enumerate(models):
        for c, (s, q, p) in enumerate(cells):
            if not keep[i * len(cells) + c]:
                continue
            for k in range(samples):
                y = float(rng.random() < 0.6) if kind in ("binary", "bool", "text") \
                    else float(rng.normal())
                rows.append(dict(model=m, subject=f"s{s}", question=f"q{q}", prompt=f"p{p}",
                                 sample=k, correct=y * (1e-9 if kind == "tiny" else 1.0)))
    df = pd.DataFrame(rows, columns=["model", "subject", "question", "prompt", "sample",
                                     "correct"])
    df["x"] = df["subject"].map(lambda v: "lo" if v in ("s0", "s2") else "hi")  # a covariate
    if len(df) and rare(0.2):
        df["x"] = rng.normal(size=len(df))          # numeric, varying within a cell
    if len(df) and kind == "bool":
        df["correct"] = df["correct"].astype(bool)
    if len(df) and kind == "text":
        df["correct"] = df["correct"].map(lambda v: "1" if v else "0")
    if len(df) and rare(0.25):                     # odd values in the score column
        i = draw(st.integers(0, len(df) - 1))
        df["correct"] = df["correct"].astype(object)
        df.loc[i, "correct"] = draw(st.sampled_from([np.nan, None, np.inf, "n/a", 2, -1, 100]))
    if len(df) and rare(0.1):                      # a duplicated row
        df = pd.concat([df, df.iloc[[draw(st.integers(0, len(df) - 1))]]], ignore_index=True)
    if len(df) and rare(0.12):                     # odd key dtypes
        col = draw(st.sampled_from(["subject", "question", "prompt", "model"]))
        how = draw(st.sampled_from(["int", "category", "mixed", "nan"]))
        if how == "int":
            df[col] = pd.factorize(df[col])[0]
        elif how == "category":
            df[col] = df[col].astype("category")
        elif how == "mixed":
            df[col] = df[col].astype(object)
            df.loc[0, col] = 7
        else:
            df[col] = df[col].astype(object)
            df.loc[0, col] = np.nan
    if len(df) and rare(0.3):                      # a tied / zero / constant-difference pair
        df = _with_partner(df, draw(st.sampled_from(["twin", "shift", "extremes"])), kind)
    if rare(0.03):                                 # a column named twice
        df = pd.concat([df, df[["correct"]]], axis=1)
    if rare(0.03):                                 # a missing column
        df = df.drop(columns=draw(st.sampled_from(["subject", "prompt", "sample"])))
    return df


def _with_partner(df: pd.DataFrame, how: str, kind: str) -> pd.DataFrame:
    """Add models that pair degenerately with the first: an identical copy (tied, zero
    difference), a copy shifted by a constant (continuous scores), or one model right on
    every cell beside one wrong on every cell (a consistent 0/1 gap)."""
    first = df[df["model"] == df["model"].iloc[0]]
    if how == "twin":
        return pd.concat([df, first.assign(model="twin")], ignore_index=True)
    if how == "shift" and kind in ("continuous", "tiny"):
        shifted = first.assign(model="shifted")
        shifted["correct"] = pd.to_numeric(shifted["correct"], errors="coerce") + 0.25
        return pd.concat([df, shifted], ignore_index=True)
    right, wrong = first.assign(model="right"), first.assign(model="wrong")
    one, zero = (("1", "0") if kind == "text" else (True, False) if kind == "bool"
                 else (1.0, 0.0))
    right["correct"], wrong["correct"] = one, zero
    return pd.concat([df, right, wrong], ignore_index=True)


def _mostly(good: list, bad: list) -> Any:
    """Good values, with a bad one about one time in ten."""
    return st.sampled_from(good * (9 * max(1, len(bad))) + bad * len(good))


fit_options = st.fixed_dictionaries({
    "method": _mostly(["reml", "reml", "aggregate"], ["bogus"]),
    "estimand": st.sampled_from(["gls", "cells", "units"]),
    "na": st.sampled_from(["error", "drop"]),
    "replicate": _mostly([None, "sample"], ["nope", "model", 3]),
    "level": _mostly([0.95, 0.9], [1.5, "0.9"]),
    "pairs": _mostly([None, None, None, [("m1", "m2")], ("m1", "m2")], ["m1,m2"]),
    "backend": _mostly(["pandas"], ["duckdb"]),
    "pair_by": _mostly([None], ["question", ("subject", 5), ["subject", "subject"], ["model"]]),
})


def _run(fn, *args: Any, **kw: Any) -> Any:
    """Call ``fn``; return its result or None on a MixrankError (anything else fails)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kw)
        except MixrankError:
            return None


# ----------------------------------------------------------------- properties
def check_fit(df: pd.DataFrame, formula: str, opts: dict) -> None:
    res = _run(mixrank.fit, formula, df, **opts)
    if res is None:
        return
    fr = res.frame
    # rows kept + dropped = rows read; replicate counts add up to the rows kept
    assert fr.n_rows + fr.n_dropped == len(df)
    assert int(fr.replicates.sum()) == fr.n_rows
    seen = fr.observed.sum(axis=0)
    for p in res.pairs:
        ja, jb = fr.model_index(p.model_a), fr.model_index(p.model_b)
        assert p.n + p.only_a == seen[ja] and p.n + p.only_b == seen[jb]
        assert p.n == int((fr.observed[:, ja] & fr.observed[:, jb]).sum())
    for accessor in (res.contrasts, res.variance_components, res.diagnostics,
                     res.design_effect, lambda: str(res.summary()), res.rank_intervals,
                     res.resolution, lambda: res.plan(0.1), lambda: res.plan(1e-12),
                     res.model_scores, lambda: res.contrasts(adjust="maxt", draws=200, rng=1),
                     lambda: res.contrasts(adjust="bh"),
                     lambda: res.rank_intervals(adjust="maxt", draws=200, rng=1),
                     lambda: res.rank_probabilities(draws=200, rng=1),
                     lambda: res.resolution(columns="all", pairs="all", adjust="bh"),
                     lambda: res.frame.summary_text(), lambda: res.frame.balance()):
        tab = _run(accessor)
        if isinstance(tab, pd.DataFrame) and "p_value" in tab:
            p = tab["p_value"].dropna()
            assert ((p >= 0) & (p <= 1)).all()
    if res.pairs:
        c = res.contrasts()   # fitted pairs, then the pairs kept as NaN rows (docs/messy.md §3)
        assert len(c) == len(res.pairs) + len(res.incomplete)
        assert c["estimate"].iloc[len(res.pairs):].isna().all()


#: Every accessor of a FitResult, each called on every fuzzed fit of the accessor sweep.
def _accessors(res: Any) -> list:
    from mixrank.report.html import render_report

    calls: list = [lambda a=a: res.contrasts(adjust=a) for a in ("holm", "none", "bh")]
    calls += [lambda: res.contrasts(adjust="maxt", draws=1000, rng=1)]
    calls += [res.model_scores, res.rank_intervals, res.resolution,
              lambda: res.resolution(columns="all", pairs="all", adjust="bh"),
              lambda: res.plan(0.05), res.anova, res.variance_components, res.diagnostics,
              res.design_effect, lambda: str(res.summary())]
    calls += [lambda k=k, s=s: res.sensitivity(k, summary=s, draws=20, n_random=5, rng=1)
              for k in ("loso", "bootstrap", "clusterings") for s in (False, True)]
    calls += [lambda: render_report(res)]
    return calls


def _kind(df: pd.DataFrame) -> str:
    y = df["correct"]
    if y.dtype == bool:
        return "bool"
    if y.dtype == object and y.map(lambda v: isinstance(v, str)).all():
        return "text"
    v = pd.to_numeric(y, errors="coerce")
    return "binary" if v.isin([0.0, 1.0]).all() else "continuous"


def check_fit_accessors(df: pd.DataFrame, formula: str, estimand: str, how: str) -> None:
    first = None
    if (len(df) and {"model", "correct"} <= set(df.columns) and how != "none"
            and not df.columns.duplicated().any()):   # duplicated columns: fit() refuses them
        first = str(df["model"].iloc[0])
        df = _with_partner(df, how, _kind(df))
    res = _run(mixrank.fit, formula, df, estimand=estimand)
    if res is None:
        return
    for call in _accessors(res):
        tab = _run(call)
        if isinstance(tab, pd.DataFrame):
            for col in ("p_value", "p_adjusted", "p_greater"):
                if col in tab:
                    p = tab[col].dropna()
                    assert ((p >= 0) & (p <= 1)).all(), col
    c = _run(res.contrasts)
    if c is None:
        return
    # identical vectors: a zero gap with p = 1; a consistent gap is evidence, never p = 1
    # (a NaN row is a pair the formula cannot estimate, with its reason in ``note``)
    for a, b, est, pv in zip(c.model_a, c.model_b, c.estimate, c.p_value):
        if est != est:
            continue
        if {a, b} == {"right", "wrong"} and pv == pv:
            n = res.pair(a, b).n
            assert abs(est) == 1.0 and (pv < 1 or n < 2 or res.frame.spec.random), (a, b, pv)
        if {str(a), str(b)} == {first, "twin"}:
            assert est == 0.0 and pv == 1.0, (a, b, est, pv)


def check_build_frame(df: pd.DataFrame, formula: str, na: str) -> None:
    fr = _run(mixrank.build_frame, df, formula, na=na, replicate="sample"
              if "sample" in df.columns else None)
    if fr is None:
        return
    assert fr.n_rows + fr.n_dropped == len(df)
    assert int(fr.replicates.sum()) == fr.n_rows
    assert fr.observed.shape == fr.scores.shape
    assert np.isfinite(fr.scores[fr.observed]).all() and np.isnan(fr.scores[~fr.observed]).all()


def check_paired(df: pd.DataFrame, which: str) -> None:
    models = [m for m in pd.unique(df["model"]) if m is not None] if "model" in df else []
    a, b = (models + ["m1", "m2"])[:2]
    fn = {"mcnemar": mixrank.mcnemar, "paired_t": mixrank.paired_t,
          "wilcoxon": mixrank.wilcoxon, "sign_flip": mixrank.sign_flip,
          "effect_sizes": mixrank.effect_sizes}[which]
    kw = dict(rng=1, n_resamples=200) if which == "sign_flip" else {}
    tab = _run(fn, df, a=a, b=b, **kw)
    if tab is None:
        return
    meta = tab.attrs["mixrank"]
    cells = df.drop_duplicates(subset=[c for c in ("subject", "question", "prompt", "model")
                                       if c in df.columns])
    for m, key in ((a, "n_unpaired_a"), (b, "n_unpaired_b")):
        seen = int((cells["model"] == m).sum())
        assert int(tab["n"].iloc[0]) + meta[key] == seen


def check_read_wide(wide: pd.DataFrame, na: str) -> None:
    out = _run(mixrank.read_wide, wide, na=na)
    if out is None:
        return
    n_models = wide.shape[1] - 2
    assert len(out) + out.attrs["mixrank"]["n_missing"] == len(wide) * n_models


def check_power(values: tuple) -> None:
    delta, sd, n, pa, pb, rho, alpha, pw = values
    finite = all(isinstance(v, (int, float)) and math.isfinite(v) for v in values)
    for call in (lambda: mixrank.n_star(delta, sigma_d=sd, alpha=alpha, power=pw),
                 lambda: mixrank.mde(n, sigma_d=sd, alpha=alpha, power=pw),
                 lambda: mixrank.power.power(delta, n, sigma_d=sd, alpha=alpha),
                 lambda: mixrank.n_star(p_a=pa, p_b=pb, rho=rho, method="connor"),
                 lambda: mixrank.power.calculator_audit(pa, pb, rho=rho),
                 lambda: mixrank.power_summary(sigma_d=sd, delta=delta, n=n, alpha=alpha,
                                               power=pw),
                 lambda: mixrank.power_summary(p_a=pa, p_b=pb, rho=rho, n=n)):
        out = _run(call)
        if finite and isinstance(out, (float, np.floating)):
            assert not math.isnan(out)      # a valid question gets a number (or inf)


def check_rci(df: pd.DataFrame) -> None:
    models = list(pd.unique(df["model"])) if "model" in df else []
    if len(models) < 2:
        models = models + ["m1", "m2"]
    res = _run(mixrank.reliable_change, df, before=models[0], after=models[1])
    if res is None:
        return
    items = _run(res.items)
    if items is not None:
        assert len(items) <= len(df)
    _run(res.summary)


# ----------------------------------------------------------------- harness
def _fuzz(strategy: Any, check: Any, n: int) -> None:
    # Derandomized by default so that CI is reproducible: the same examples on
    # every run.  MIXRANK_FUZZ_RANDOM=1 draws fresh examples (bug hunting).
    settings(max_examples=n, deadline=None, derandomize=not RANDOM, database=None,
             suppress_health_check=list(HealthCheck))(given(strategy)(check))()


def _both(fn):
    """A fast run in the ordinary suite and a 1,000-example run in the slow set."""
    return pytest.mark.parametrize("n", [pytest.param(FAST, id="fast"),
                                         pytest.param(SLOW, id="slow",
                                                      marks=pytest.mark.slow)])(fn)


@_both
def test_fit(n):
    _fuzz(st.tuples(long_frames(), _mostly(GOOD_FORMULAS, BAD_FORMULAS), fit_options),
          lambda t: check_fit(*t), n)


@pytest.mark.parametrize("n", [pytest.param(ACCESSORS, id="fast"),
                               pytest.param(max(ACCESSORS, SLOW // 40), id="slow",
                                            marks=pytest.mark.slow)])
def test_fit_accessors(n):
    pytest.importorskip("matplotlib")
    _fuzz(st.tuples(long_frames(), st.sampled_from(GOOD_FORMULAS),
                    st.sampled_from(["cells", "gls", "units"]),
                    st.sampled_from(["twin", "shift", "extremes", "none"])),
          lambda t: check_fit_accessors(*t), n)


@_both
def test_build_frame(n):
    _fuzz(st.tuples(long_frames(), _mostly(GOOD_FORMULAS, BAD_FORMULAS), st.sampled_from(["error", "drop"])),
          lambda t: check_build_frame(*t), n)


@_both
def test_paired_tests(n):
    _fuzz(st.tuples(long_frames(), st.sampled_from(["mcnemar", "paired_t", "wilcoxon",
                                                     "sign_flip", "effect_sizes"])),
          lambda t: check_paired(*t), n)


@st.composite
def wide_tables(draw: Any) -> pd.DataFrame:
    n_items, n_models = draw(st.integers(0, 5)), draw(st.integers(0, 3))
    cell = st.one_of(st.sampled_from([0, 1, 0.5, np.nan, None, "", "true", "x", np.inf]),
                     st.floats(allow_nan=True, allow_infinity=True))
    names = draw(st.lists(st.sampled_from(MODEL_NAMES + ["subject"]), min_size=n_models,
                          max_size=n_models))
    data = {"subject": [f"s{i % 2}" for i in range(n_items)],
            "question": draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q4", "q5", None]),
                                      min_size=n_items, max_size=n_items))}
    cols = [pd.Series(draw(st.lists(cell, min_size=n_items, max_size=n_items)), dtype=object,
                      name=name) for name in names]
    return pd.concat([pd.DataFrame(data), *cols], axis=1)   # a repeated name stays repeated


@_both
def test_read_wide(n):
    _fuzz(st.tuples(wide_tables(), st.sampled_from(["error", "drop"])),
          lambda t: check_read_wide(*t), n)


num = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 10**6),
                st.sampled_from([0, 1e-300, 1e300, -0.0]))


@_both
def test_power_functions(n):
    _fuzz(st.tuples(num, num, num, num, num, num, num, num), check_power, n)


@_both
def test_reliable_change(n):
    _fuzz(long_frames(), check_rci, n)


# ----------------------------------------------------------------- found by fuzzing
@pytest.mark.parametrize("backend", ["pandas", "duckdb", "dask"])
def test_empty_frame_is_a_data_error_on_every_backend(backend):
    # found by the random slow set: DuckDB's count_if over no rows is NULL, which
    # gave a raw TypeError instead of the "no rows" DataError
    pytest.importorskip(backend)
    empty = pd.DataFrame(columns=["model", "subject", "question", "prompt", "correct"])
    with pytest.raises(mixrank.errors.DataError, match="no rows"):
        mixrank.fit("correct ~ model", empty, backend=backend)


def test_power_at_a_vanishing_alpha_is_a_number():
    # found by the random slow set: 1 - alpha/2 rounded to 1 for alpha = 1e-300, so the
    # critical value was inf and the power NaN; -Phi^{-1}(alpha/2) is about 37.1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mixrank.power.power(1.8e158, 1e300, sigma_d=1.0, alpha=1e-300) == 1.0
        assert mixrank.power.power(1e-3, 10.0, sigma_d=1.0, alpha=1e-300) < 1e-290
        n = mixrank.n_star(0.1, sigma_d=1.0, alpha=1e-300, power=0.8)
    z = -float(scipy.special.ndtri(0.5e-300))
    assert n == pytest.approx(((z + float(scipy.special.ndtri(0.8))) / 0.1) ** 2, rel=1e-12)
