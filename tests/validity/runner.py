"""One replicate of the validity suite: every answer the suite checks, per df method.

Used by tests/validity/test_validity.py (seeded, slow) and
benchmarks/bench_validity.py (the table in docs/methods.md, "Validity with few units").
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

import mixrank

from .designs import simulate

FORMULA = "correct ~ model + (1|subject)"


ALL = ("pair", "cover", "holm", "maxt", "stepdown", "rank_cover", "power")


def _with_df(fit: mixrank.FitResult, how: str) -> mixrank.FitResult:
    """The same fit under another df method (no refit: the engine's pairs are shared)."""
    from mixrank.engine.lmm.unit_se import resolve_df

    got, inference = resolve_df(fit.frame, fit.pairs, method=fit.method, estimand=fit.estimand,
                                df=how)
    return replace(fit, df_method=got, inference=inference)


def replicate(seed: int, n_models: int, n_subjects: int, *, outcome: str = "binary",
              sd_model_subject: float = 0.3, sd_model_question: float = 0.0,
              gaps: np.ndarray | None = None, ranks: bool = False,
              methods: tuple[str, ...] = ("cr2", "satterthwaite"),
              answers: tuple[str, ...] = ALL) -> dict[str, float]:
    """Rejections of one data set: per method ``{method}_{answer}`` -> value.

    Answers: ``pair`` (share of null pairs rejected at 0.05 two-sided), ``cover`` (share
    of pairs whose 95% CI covers the true gap) -- both of the pair's t test and interval
    (``ci="t"``), and ``flip_pair``, ``flip_cover`` of the default per-pair test and
    interval where it is the unit sign flips --, ``holm``, ``maxt``, ``stepdown`` (any null
    pair rejected by the family-wise adjustment), ``power`` (share of non-null pairs
    rejected by Holm), ``rank_cover`` (the simultaneous max-t rank intervals contain every
    true rank; ``ranks=True``).
    """
    rng = np.random.default_rng(seed)
    gaps_arr = np.zeros(n_models) if gaps is None else np.asarray(gaps, float)
    data = simulate(n_models, n_subjects, rng, outcome=outcome, sd_model_subject=sd_model_subject,
                    sd_model_question=sd_model_question, gaps=gaps_arr)
    out: dict[str, float] = {}
    names = [f"m{m:02d}" for m in range(n_models)]
    true = dict(zip(names, gaps_arr))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = mixrank.fit(FORMULA, data, df="satterthwaite")
    for how in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = _with_df(base, how)
            c = fit.contrasts(adjust="holm", ci="t")        # the t test and interval
            mt = fit.contrasts(adjust="maxt", draws=2000, rng=seed) if "maxt" in answers else None
            # the default per-pair test where it is the unit sign flips (few units, CR2)
            flip = fit.contrasts(adjust="none") if fit._default_ci("none", None, 0.95) \
                == "randomization" else None
        gap = np.array([true[a] - true[b] for a, b in zip(c["model_a"], c["model_b"])])
        null = np.isclose(gap, 0.0)
        # latent gaps: on the 0/1 scale the true difference is 0 exactly when the gap is 0
        rej = (c["p_value"] < 0.05).to_numpy()
        if null.any():
            out[f"{how}_pair"] = float(rej[null].mean())
            out[f"{how}_holm"] = float((c["p_adjusted"] < 0.05).to_numpy()[null].any())
            if mt is not None:
                out[f"{how}_maxt"] = float((mt["p_adjusted"] < 0.05).to_numpy()[null].any())
            if how == "cr2" and "stepdown" in answers:
                sd = fit.contrasts(adjust="stepdown", draws=2000, rng=seed)
                out[f"{how}_stepdown"] = float((sd["p_adjusted"] < 0.05).to_numpy()[null].any())
        if flip is not None and null.any():
            out[f"{how}_flip_pair"] = float((flip["p_value"] < 0.05).to_numpy()[null].mean())
        if outcome != "binary" or null.all():
            lo, hi = c["ci_lower"].to_numpy(), c["ci_upper"].to_numpy()
            out[f"{how}_cover"] = float(np.mean((lo <= gap) & (gap <= hi)))
            if flip is not None:
                lo, hi = flip["ci_lower"].to_numpy(), flip["ci_upper"].to_numpy()
                out[f"{how}_flip_cover"] = float(np.mean((lo <= gap) & (gap <= hi)))
        if (~null).any():
            out[f"{how}_power"] = float((c["p_adjusted"] < 0.05).to_numpy()[~null].mean())
        if ranks and "rank_cover" in answers:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = fit.rank_intervals(coverage="simultaneous", adjust="maxt", draws=2000, rng=seed)
            rank = {m: 1 + sum(true[k] > true[m] for k in names) for m in names}
            lo_ok = [lo <= rank[m] <= hi for m, lo, hi in
                     zip(r["model"], r["rank_lower"], r["rank_upper"])]
            out[f"{how}_rank_cover"] = float(all(lo_ok))
    return out


def run(seeds: range, *args, **kw) -> dict[str, tuple[float, float]]:
    """Mean and Monte Carlo SE of each answer over the seeds."""
    rows = [replicate(s, *args, **kw) for s in seeds]
    keys = sorted(set().union(*rows))
    res = {}
    for k in keys:
        v = np.array([r[k] for r in rows if k in r])
        res[k] = (float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v))))
    return res
