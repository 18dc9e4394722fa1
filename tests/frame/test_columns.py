"""The compressed (per-model) frame layout against the dense one (docs/scale.md).

The compressed layout must give the dense layout's fit value for value: the
same common cells, differences, statistics and therefore contrasts and
variance components (checked to 1e-10 on random unbalanced data with several
formulas, methods and estimands; the dense path itself is checked against
lme4 in tests/engine/test_lme4_reference.py, run here on compressed frames too).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.frame import build_frame
from mixrank.frame.columns import CompressedFrame, ModelColumns, compress_frame

TOL = 1e-10


def unbalanced(seed: int, models: int = 6, subjects: int = 8, questions: int = 12,
               prompts: int = 3, missing: float = 0.25, samples: int = 1,
               binary: bool = True) -> pd.DataFrame:
    """Crossed subject/question x prompt data, each model missing its own random cells."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(models):
        miss = rng.uniform(0.0, 2 * missing)           # unequal missing shares
        for s in range(subjects):
            for q in range(questions):
                for p in range(prompts):
                    if rng.random() < miss:
                        continue
                    eta = 0.2 * m + rng.normal(0, 0.5) + 0.3 * s - 0.1 * p
                    for r in range(samples):
                        y = float(rng.random() < 1 / (1 + np.exp(-eta))) if binary \
                            else eta + rng.normal()
                        rows.append((f"m{m}", f"s{s}", f"q{s}_{q}", f"p{p}", r, y))
    return pd.DataFrame(rows, columns=["model", "subject", "question", "prompt", "sample",
                                       "correct"])


def _quiet_fit(formula: str, frame, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit(formula, frame, **kw)


def _assert_same(a, b) -> None:
    ca, cb = a.contrasts(), b.contrasts()
    assert list(ca["model_a"]) == list(cb["model_a"]) and list(ca["n"]) == list(cb["n"])
    for col in ("estimate", "std_error", "df", "p_value"):
        np.testing.assert_allclose(cb[col], ca[col], rtol=TOL, atol=TOL, err_msg=col)
    va, vb = a.variance_components(), b.variance_components()
    np.testing.assert_allclose(vb["variance"], va["variance"], rtol=TOL, atol=TOL)


@pytest.mark.parametrize("formula", [
    "correct ~ model + (1|subject)",
    "correct ~ model + (1|subject) + (1|subject:question)",
    "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)",
    "correct ~ model + (1|question) + (1|prompt)",
])
@pytest.mark.parametrize("kw", [{}, {"estimand": "cells"}, {"estimand": "units"},
                                {"method": "aggregate"}])
def test_fit_equals_dense(formula, kw):
    frame = build_frame(unbalanced(3), formula)
    comp = compress_frame(frame)
    assert isinstance(comp, CompressedFrame) and comp.columns is not None
    _assert_same(_quiet_fit(formula, frame, **kw), _quiet_fit(formula, comp, **kw))
    assert comp.__dict__.get("observed") is None      # the fit never built the dense matrix


@pytest.mark.parametrize("binary,samples", [(False, 1), (True, 3)])
def test_continuous_and_replicates(binary, samples):
    formula = "correct ~ model + (1|subject) + (1|prompt)"
    frame = build_frame(unbalanced(5, samples=samples, binary=binary), formula,
                        replicate="sample" if samples > 1 else None)
    comp = compress_frame(frame)
    assert comp.columns is not None
    assert comp.columns.values[0].dtype == np.float64
    assert (comp.columns.counts is not None) == (samples > 1)
    _assert_same(_quiet_fit(formula, frame), _quiet_fit(formula, comp))


def test_pairs_stats_and_dense_views():
    frame = build_frame(unbalanced(7, samples=2), "correct ~ model + (1|subject) + (1|prompt)",
                        replicate="sample")
    cols = ModelColumns.from_dense(frame.scores, frame.observed, frame.replicates)
    M = frame.n_models
    for j in range(M):
        for k in range(M):
            if j == k:
                continue
            pc = cols.pair(j, k)
            mask = frame.observed[:, j] & frame.observed[:, k]
            np.testing.assert_array_equal(pc.mask, mask)
            np.testing.assert_array_equal(pc.idx, np.flatnonzero(mask))
            np.testing.assert_array_equal(pc.d, (frame.scores[:, j] - frame.scores[:, k])[mask])
            assert pc.only_a == frame.observed[:, j].sum() - mask.sum()
            np.testing.assert_array_equal(cols.common_mask(j, k), mask)
    st = cols.stats(frame.term_codes, frame.term_levels)
    np.testing.assert_array_equal(st.n_common, frame.stats.n_common)
    for t, s in frame.stats.level_sums.items():
        np.testing.assert_allclose(st.level_sums[t], s, rtol=1e-14, atol=1e-12)
    comp = compress_frame(frame)
    np.testing.assert_array_equal(comp.n_observed(), frame.observed.sum(axis=0))
    pd.testing.assert_frame_equal(comp.balance(), frame.balance())
    # the dense views are built on demand and equal the original matrices
    np.testing.assert_array_equal(comp.scores, frame.scores)
    np.testing.assert_array_equal(comp.observed, frame.observed)
    np.testing.assert_array_equal(comp.replicates, frame.replicates)


def test_complete_pair_and_binary_storage():
    formula = "correct ~ model + (1|subject) + (1|subject:question)"
    frame = build_frame(unbalanced(11, missing=0.0), formula)   # balanced: closed form
    comp = compress_frame(frame)
    assert comp.columns is not None and comp.columns.values[0].dtype == np.uint8
    assert comp.columns.pair(0, 1).idx is None
    _assert_same(_quiet_fit(formula, frame), _quiet_fit(formula, comp))


def _reference_cases():
    import json
    from pathlib import Path

    ref = Path(__file__).resolve().parents[1] / "reference"
    data = json.loads((ref / "lme4_engine.json").read_text())
    return ref, [c for c in data["cases"] if c["source"] == "simulated"]


@pytest.mark.parametrize("case", _reference_cases()[1], ids=lambda c: c["name"])
def test_compressed_meets_lme4_reference(case):
    """The lme4 + lmerTest reference fits (tests/reference/lme4_engine.R) hold on compressed frames."""
    from tests.reference.tolerances import LME4, discrepancies

    ref_dir, _ = _reference_cases()
    df = pd.read_csv(ref_dir / "engine_cases" / case["file"])
    frame = compress_frame(build_frame(df, case["formula"], pair_by=case["pair_by"],
                                       replicate=case["replicate"]))
    res = _quiet_fit(case["formula"], frame, estimand="gls",     # lme4's fixed effect
                     pairs=[(p["model_a"], p["model_b"]) for p in case["pairs"]])
    for fit, ref in zip(res.pairs, case["pairs"]):
        assert (fit.n, fit.only_a, fit.only_b) == (ref["n"], ref["only_a"], ref["only_b"])
        d = discrepancies(fit, ref)
        assert d["criterion_excess"] <= LME4["criterion_excess"]
        assert d["component_of_total"] <= LME4["component_of_total"]
        assert d["estimate_rel"] <= LME4["estimate_rel"]
        assert d["std_error_rel"] <= LME4["std_error_rel"]
        if not ref["isSingular"]:
            assert d["df_rel"] <= LME4["df_rel"]


def test_common_counts_across_blocks(monkeypatch):
    """The blockwise common-cell counts do not depend on the block size."""
    from mixrank.frame import columns as columns_mod

    frame = build_frame(unbalanced(13), "correct ~ model + (1|subject)")
    cols = compress_frame(frame).columns
    assert cols is not None
    for size in (1, 7, 64, frame.n_cells + 5):
        monkeypatch.setattr(columns_mod, "_CHUNK", size)
        np.testing.assert_array_equal(cols.n_common(), frame.stats.n_common)
