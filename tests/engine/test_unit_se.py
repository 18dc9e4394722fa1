"""SE and df at the unit: mixrank.engine.lmm.unit_se and fit(df=) (docs/methods.md, "Validity with few units").

References: a dense-matrix implementation of CR2 (Bell & McCaffrey 2002; Pustejovsky &
Tipton 2018: adjustment matrices ``(I - H_tt)^{-1/2}`` by eigendecomposition, df
``tr(M)^2 / tr(M^2)`` with ``M = C' Omega C``) written from the definitions, independent
of the closed form; and the balanced interior case, where REML equals the t-test on unit
means, so CR2 must reproduce lmerTest's SE with df = T - 1.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.engine.lmm.unit_se import cr2_bell_mccaffrey
from mixrank.errors import DesignError, SmallSampleWarning


def _dense_cr2(d, codes, w, tau2_ratio):
    """CR2 of the weighted mean w'd and its BM df, from n x n matrices."""
    n = d.size
    one = np.ones(n)
    H = np.outer(one, w)                       # fitted = 1 (w'd): hat matrix of the weighted mean
    e = d - H @ d
    T = codes.max() + 1
    Z = np.eye(T)[codes]
    omega = np.eye(n) + tau2_ratio * Z @ Z.T
    cols, var = [], 0.0
    for t in range(T):
        idx = np.flatnonzero(codes == t)
        Htt = H[np.ix_(idx, idx)]
        lam, U = np.linalg.eig(np.eye(idx.size) - Htt)   # I - H_tt (not symmetric)
        A = (U @ np.diag(lam.real ** -0.5) @ np.linalg.inv(U)).real
        var += float((w[idx] @ A @ e[idx]) ** 2)
        g = np.zeros(n)                          # the t-th CR2 contrast vector over all cells
        g[idx] = A.T @ w[idx]
        cols.append((np.eye(n) - H).T @ g)
    C = np.column_stack(cols)
    M = C.T @ omega @ C
    return var, float(np.trace(M) ** 2 / np.sum(M * M))


@pytest.mark.parametrize("seed,ratio", [(1, 0.0), (2, 0.4), (3, 2.0)])
def test_cr2_closed_form_equals_dense_definition(seed, ratio):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 9, size=7)
    codes = np.repeat(np.arange(7), sizes)
    d = rng.normal(size=codes.size) + rng.normal(size=7)[codes]
    w = rng.uniform(0.5, 2.0, size=7)[codes]
    w /= w.sum()
    got = cr2_bell_mccaffrey(d, codes, w, ratio)
    want = _dense_cr2(d, codes, w, ratio)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_balanced_interior_cr2_equals_lmertest():
    """Balanced, interior: REML = the t over unit means; CR2 gives the same SE, df T - 1."""
    ex = mixrank.load_example()
    s = mixrank.fit("correct ~ model + (1|subject)", ex, df="satterthwaite")
    c = mixrank.fit("correct ~ model + (1|subject)", ex)          # default: cr2
    assert c.df_method == "cr2" and s.df_method == "satterthwaite"
    interior = np.array([not p.boundary for p in s.pairs])
    assert interior.sum() >= 10
    a, b = s.contrasts(adjust="none"), c.contrasts(adjust="none")
    np.testing.assert_allclose(b["std_error"][interior], a["std_error"][interior], rtol=1e-6)
    np.testing.assert_allclose(b["df"][interior], 11.0)
    np.testing.assert_allclose(a["df"][interior], 11.0, rtol=1e-4)
    assert "CR2" in b.attrs["mixrank"]["df_method"]
    assert "satterthwaite" in a.attrs["mixrank"]["df_method"]


def _two_subjects():
    rng = np.random.default_rng(0)
    rows = [dict(model=m, subject=f"s{q % 2}", question=f"q{q}", correct=float(rng.random() < .6))
            for q in range(40) for m in ("A", "B", "C")]
    return pd.DataFrame(rows)


def test_df_validated_with_valid_values_listed():
    ex = mixrank.load_example()
    with pytest.raises(DesignError, match=r"df='kr'.*\['cr2', 'containment', 'satterthwaite', 'satterthwaite-vc'\]"):
        mixrank.fit("correct ~ model + (1|subject)", ex, df="kr")
    with pytest.raises(DesignError, match="aggregate"):
        mixrank.fit("correct ~ model + (1|subject)", ex, method="aggregate", df="cr2")


def test_unit_with_fewer_than_three_levels():
    data = _two_subjects()
    with pytest.raises(DesignError, match="'subject' has 2 level.*at least 3"):
        mixrank.fit("correct ~ model + (1|subject)", data, df="cr2")
    with pytest.warns(SmallSampleWarning, match="'subject' has 2 level"):
        res = mixrank.fit("correct ~ model + (1|subject)", data)
    assert res.df_method == "satterthwaite"
    with pytest.raises(DesignError, match="at least 3"):
        res.contrasts(adjust="stepdown")


def test_containment_keeps_reml_se_with_units_minus_one():
    ex = mixrank.load_example()
    s = mixrank.fit("correct ~ model + (1|subject)", ex, df="satterthwaite").contrasts()
    c = mixrank.fit("correct ~ model + (1|subject)", ex, df="containment").contrasts()
    np.testing.assert_allclose(c["std_error"], s["std_error"])
    assert (c["df"] == 11).all()


def test_summary_and_cli_say_which_df(tmp_path, capsys):
    ex = mixrank.load_example()
    res = mixrank.fit("correct ~ model + (1|subject)", ex)
    assert "SE and df: CR2 at 'subject', Bell-McCaffrey df" in str(res.summary())
    one = mixrank.fit("correct ~ model + (1|subject)", ex, pairs=[("m01", "m02")],
                      df="satterthwaite")
    assert "Satterthwaite's method" in str(one.summary())
    from mixrank.cli import main
    assert main(["fit", "example", "-f", "correct ~ model + (1|subject)", "--df",
                 "satterthwaite", "--pair", "m01,m02"]) == 0
    assert "Satterthwaite" in capsys.readouterr().out
    assert main(["fit", "example", "-f", "correct ~ model + (1|subject)", "--df", "kr"]) != 0
    assert "invalid choice: 'kr'" in capsys.readouterr().err


def test_interaction_formula_refuses_unit_df():
    ex = mixrank.load_example()
    ex = ex.assign(x=(ex["subject"].str[-1:].astype(int) % 2).astype(float))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DesignError, match="model x covariate"):
            mixrank.fit("correct ~ model * x + (1|subject)", ex, df="cr2")


def test_crossed_term_keeps_the_reml_variance_by_default_and_refuses_cr2():
    """(1|prompt) crossed with (1|subject): a subject-robust variance cannot see the prompt
    variance shared across subjects (the crossed coverage simulation measured 0.891 with
    it), so the default keeps lme4's REML variance (with the variance components'
    Satterthwaite df, tests/engine/test_crossed_df.py) and an explicit df='cr2' is refused."""
    import warnings

    import pytest

    import mixrank

    d = mixrank.simulate(3, 6, 4, 4, rng=5)
    crossed = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit(crossed, d)
        assert res.df_method == "satterthwaite-vc"
        assert mixrank.fit("correct ~ model + (1|subject) + (1|subject:question)",
                           d).df_method == "cr2"
        with pytest.raises(mixrank.DesignError, match=r"\['prompt'\] are crossed with it"):
            mixrank.fit(crossed, d, df="cr2")


@pytest.mark.parametrize("estimand", ["cells", "units", "gls"])
@pytest.mark.parametrize("missing", [0.0, 0.15])
def test_complete_pairs_batched_equal_the_pair_by_pair_cr2(estimand, missing, monkeypatch):
    """The CR2 variance and df of the pairs scored on every cell, formed for many pairs at
    once (unit_se._complete_cr2), are those of the pair-by-pair path, bit for bit."""
    from mixrank.engine.lmm import unit_se

    rng = np.random.default_rng(7)
    rows = []
    for m in range(7):
        for s in range(6):
            u = rng.normal(0, 0.5)
            for q in range(rng.integers(3, 9) if m == 0 else 8):
                if m >= 4 and rng.random() < missing:
                    continue
                rows.append((f"m{m}", f"s{s}", f"s{s}q{q}", float(u + rng.normal() + m / 5)))
    data = pd.DataFrame(rows, columns=["model", "subject", "question", "correct"])
    data = data[data.groupby(["subject", "question"]).model.transform("size") > 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mixrank.fit("correct ~ model + (1|subject)", data, estimand=estimand)
    fits = list(res.pairs)
    assert sum(p.n == res.frame.n_cells for p in fits) >= 2
    complete = sum(p.n == res.frame.n_cells for p in fits)
    assert len(unit_se._complete_cr2(res.frame, fits, estimand, "subject")) == \
        (0 if estimand == "gls" else complete)
    batched = unit_se.unit_inference(res.frame, fits, estimand, "cr2", "subject")
    monkeypatch.setattr(unit_se, "_complete_cr2", lambda *a, **k: {})
    single = unit_se.unit_inference(res.frame, fits, estimand, "cr2", "subject")
    assert batched == single
