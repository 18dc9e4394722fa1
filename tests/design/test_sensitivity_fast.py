"""Leave-one-out and cluster bootstrap from per-cluster sums (mixrank.design.sensitivity.fast).

References, never the fast path itself: for leave-one-out a fresh
:func:`mixrank.fit` on the raw rows without the level; for the bootstrap a
fresh :func:`mixrank.fit` on the raw rows of the drawn levels, each draw's
copy relabelled as a level of its own (``q3#0``, ``q3#1``; terms built from
the unit's column follow), then :func:`mixrank.design.estimand.pair_inputs`
-- the whole public path.  Random designs with two and three random terms,
with and without missing cells, and with zero-variance (boundary) terms.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.design.estimand import pair_inputs
from mixrank.design.sensitivity.crossed import criterion
from mixrank.design.sensitivity.fast import _block_sums

COLS = ["estimate", "n", "sigma_d", "weight_factor", "std_error"]
TWO = "y ~ model + (1|question) + (1|prompt)"
THREE = "y ~ model + (1|question) + (1|prompt) + (1|template)"
NESTED = "y ~ model + (1|subject) + (1|subject:question) + (1|prompt)"


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def _design(models: int, questions: int, prompts: int, templates: int, *, missing: float,
            sd: tuple[float, float, float], seed: int, subjects: int = 0) -> pd.DataFrame:
    """Continuous scores; per model effects of question, prompt and template with SDs ``sd``."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(models):
        eq, ep, et = (rng.normal(0, s, n) for s, n in zip(sd, (questions, prompts, templates)))
        for q in range(questions):
            for p in range(prompts):
                for t in range(templates):
                    if rng.random() < missing:
                        continue
                    y = 0.3 * m + eq[q] + ep[p] + et[t] + rng.normal()
                    rows.append((f"m{m}", f"s{q % subjects if subjects else 0}", f"q{q:02d}",
                                 f"p{p}", f"t{t}", y))
    return pd.DataFrame(rows, columns=["model", "subject", "question", "prompt", "template", "y"])


def _check(got: pd.DataFrame, ref: mixrank.FitResult, what: str) -> None:
    for r in got.itertuples():
        x = pair_inputs(ref, r.model_a, r.model_b)
        for c in COLS:
            np.testing.assert_allclose(getattr(r, c), x[c], rtol=2e-6, atol=1e-9,
                                       err_msg=f"{what} {r.model_a}-{r.model_b} {c}")


CASES = [  # formula, unit, design, estimand
    (TWO, "question", dict(models=3, questions=12, prompts=4, templates=1, missing=0.0,
                           sd=(0.8, 0.3, 0.0), seed=1), "gls"),
    (TWO, "question", dict(models=3, questions=12, prompts=4, templates=1, missing=0.15,
                           sd=(0.8, 0.3, 0.0), seed=2), "units"),
    (TWO, "prompt", dict(models=3, questions=10, prompts=5, templates=1, missing=0.15,
                         sd=(0.8, 0.5, 0.0), seed=3), "gls"),
    (TWO, "prompt", dict(models=3, questions=10, prompts=5, templates=1, missing=0.0,
                         sd=(0.8, 0.5, 0.0), seed=4), "cells"),
    (THREE, "question", dict(models=3, questions=10, prompts=3, templates=2, missing=0.1,
                             sd=(0.8, 0.4, 0.3), seed=5), "gls"),
    (THREE, "question", dict(models=3, questions=10, prompts=3, templates=2, missing=0.0,
                             sd=(0.8, 0.4, 0.3), seed=6), "cells"),
    (NESTED, "subject:question", dict(models=3, questions=12, prompts=3, templates=1,
                                      missing=0.1, sd=(0.8, 0.4, 0.0), seed=7, subjects=3),
     "gls"),
    # no question effect: the block term's variance is 0 in 31 of the 36 leave-one-out refits
    (TWO, "question", dict(models=3, questions=12, prompts=4, templates=1, missing=0.1,
                           sd=(0.0, 0.5, 0.0), seed=12), "gls"),
    (TWO, "prompt", dict(models=3, questions=12, prompts=4, templates=1, missing=0.1,
                         sd=(0.0, 0.5, 0.0), seed=13), "gls"),
]


@pytest.mark.parametrize("formula,unit,design,estimand", CASES)
def test_fast_loso_equals_fresh_fits_without_the_level(formula, unit, design, estimand):
    data = _design(**design)
    fit = _quiet(mixrank.fit, formula, data, estimand=estimand)
    tab = _quiet(fit.sensitivity, "loso", unit=unit, pairs="all")
    assert tab.attrs["mixrank"]["engine_path"]["loso"] == "per-cluster sums"
    assert tab["fitted"].all()
    col = "question" if unit == "subject:question" else unit    # questions are unique
    labels = list(tab["label"].unique())
    assert sorted(lab.split(":")[-1] for lab in labels) == sorted(data[col].unique())
    for lab in labels:
        lev = lab.split(":")[-1]
        got = tab[tab["label"] == lab]
        assert len(got) == 3
        ref = _quiet(mixrank.fit, formula, data[data[col] != lev], estimand=estimand)
        _check(got, ref, f"{formula} without {lev}")


def _drawn(data: pd.DataFrame, col: str, levels: list[str], draw: np.ndarray) -> pd.DataFrame:
    """The rows of the drawn levels, copy t of level u relabelled ``u#t``."""
    parts = []
    for t, u in enumerate(draw):
        part = data[data[col] == levels[u]].copy()
        part[col] = f"{levels[u]}#{t}"
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("formula,unit,design,estimand", CASES)
def test_fast_bootstrap_equals_fresh_fits_of_the_drawn_clusters(formula, unit, design,
                                                                estimand):
    data = _design(**design)
    fit = _quiet(mixrank.fit, formula, data, estimand=estimand)
    B = 5
    tab = _quiet(fit.sensitivity, "bootstrap", unit=unit, pairs="all", B=B, rng=11)
    assert tab.attrs["mixrank"]["engine_path"]["bootstrap"] == "per-cluster sums"
    T = fit.frame.term_levels[unit]
    draws = np.random.default_rng(11).integers(0, T, size=(B, T))   # the check's draws
    col = "question" if unit == "subject:question" else unit
    levels = [str(x).split(":")[-1] for x in fit.frame.term_labels[unit]]   # in code order
    assert sorted(levels) == sorted(data[col].unique())
    for i in range(B):
        ref = _quiet(mixrank.fit, formula, _drawn(data, col, levels, draws[i]), estimand=estimand)
        _check(tab[tab["replicate"] == i + 1], ref, f"{formula} draw {i}")


def test_boundary_fits_are_among_the_replicates_and_agree():
    """Prompts without effect: many replicates sit on the boundary (prompt variance 0)."""
    data = _design(models=3, questions=14, prompts=4, templates=1, missing=0.1,
                   sd=(0.8, 0.0, 0.0), seed=21)
    fit = _quiet(mixrank.fit, TWO, data)
    tab = _quiet(fit.sensitivity, "loso", unit="question", pairs="all")
    zero = 0
    for lev in sorted(data["question"].unique()):
        ref = _quiet(mixrank.fit, TWO, data[data["question"] != lev])
        zero += sum(p.components["prompt"] == 0 for p in ref.pairs)
        _check(tab[tab["label"] == lev], ref, f"without {lev}")
    assert zero >= 5


def test_uncovered_structures_take_the_engine_path():
    data = _design(models=3, questions=8, prompts=3, templates=1, missing=0.0,
                   sd=(0.8, 0.3, 0.0), seed=8, subjects=4)
    fit = _quiet(mixrank.fit, NESTED, data)
    tab = _quiet(fit.sensitivity, "loso", unit="subject", pairs="all")
    assert tab.attrs["mixrank"]["engine_path"]["loso"] == "engine"


def test_criterion_matches_dense_reml_with_weights():
    """The per-size sums' criterion against the dense profiled REML of the expanded cells."""
    rng = np.random.default_rng(3)
    L, P, n = 9, 3, 40
    cb, cp = rng.integers(0, L, n), rng.integers(0, P, n)
    d = rng.normal(size=n)
    w = rng.integers(0, 3, L).astype(float)
    w[0] = 1.0
    th = np.array([0.7, 0.4])
    st = _block_sums(d, cb, L, [cp], P, w[None], np.ones(P, dtype=int), 2)
    # the expanded data: block l repeated w_l times, each copy its own level
    rows = [(c, t) for t in range(3) for c in range(n) if w[cb[c]] > t]
    idx = np.array([c for c, _ in rows])
    blk = np.array([cb[c] * 3 + t for c, t in rows])
    Z = np.hstack([np.eye(L * 3)[blk] * th[0], np.eye(P)[cp[idx]] * th[1]])
    V = np.eye(len(idx)) + Z @ Z.T
    y, one = d[idx], np.ones(len(idx))
    Vi = np.linalg.inv(V)
    xx = float(one @ Vi @ one)
    rss = float(y @ Vi @ y - (one @ Vi @ y) ** 2 / xx)
    ref = np.linalg.slogdet(V)[1] + np.log(xx) + (len(idx) - 1) * np.log(rss)
    np.testing.assert_allclose(criterion(st, th[None])[0], ref, rtol=1e-12)


def test_a_draw_of_one_level_only_is_not_fitted():
    """Resampling the 3 prompts: a draw of one prompt three times leaves no residual
    variation (each question's cells are copies of one cell); its rows are not fitted."""
    data = _design(models=3, questions=10, prompts=3, templates=1, missing=0.0,
                   sd=(0.8, 0.4, 0.0), seed=9)
    fit = _quiet(mixrank.fit, TWO, data)
    B = 40
    tab = _quiet(fit.sensitivity, "bootstrap", unit="prompt", pairs="all", B=B, rng=5)
    draws = np.random.default_rng(5).integers(0, 3, size=(B, 3))
    single = np.flatnonzero((draws == draws[:, :1]).all(axis=1)) + 1
    assert len(single) >= 1
    assert not tab[tab["replicate"].isin(single)]["fitted"].any()
    assert tab[~tab["replicate"].isin(single)]["fitted"].all()
