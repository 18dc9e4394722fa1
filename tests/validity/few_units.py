"""Designs and replicates of the few-units cells of the validity suite (docs/methods.md §9).

* :func:`simulate_crossed` -- Gaussian scores, questions nested in subjects, every question
  asked with each of 3-5 prompts (crossed with the subjects), model x subject and
  model x prompt effects;
* :func:`crossed_replicate` -- the crossed design under ``(1|subject) + (1|prompt)``
  (the defaults: Satterthwaite df of the variance components, Holm): Holm, max-t and
  simultaneous rank intervals, and Holm with lmerTest's df;
* :func:`crossed_power_replicate` -- the crossed design with model gaps: Holm's power
  and error with the default df and with lmerTest's on the same fits;
* :func:`omitted_replicate` -- the same data fitted with ``(1|subject)``: does the
  :class:`~mixrank.OmittedKeyWarning` fire;
* :func:`unit_replicate` -- the nested 0/1 design of :mod:`tests.validity.designs` at
  given subject sizes and gaps: the default (step-down on the CR2 path), Holm with CR2
  and Holm with Satterthwaite, family-wise error over the null pairs and power over the
  others.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

import mixrank

from .designs import simulate

#: ChemBench's 9 topic sizes (questions per topic), the "9 unequal clusters" of the validity grid.
CHEMBENCH_SIZES = np.array([40, 84, 92, 149, 152, 165, 430, 675, 1001])


def simulate_crossed(n_models: int, n_subjects: int, rng: np.random.Generator, *,
                     sd_model_prompt: float = 0.5, sd_model_subject: float = 0.3
                     ) -> pd.DataFrame:
    """Long data ``model, subject, question, prompt, score`` (3-5 prompts, 3-8 questions a
    subject; subject 0.5, question 1, prompt 0.5, residual 1; every pair null)."""
    P = int(rng.integers(3, 6))
    sizes = rng.integers(3, 9, n_subjects)
    subj = np.repeat(np.arange(n_subjects), sizes)
    nq = subj.size
    qq, pp = np.repeat(np.arange(nq), P), np.tile(np.arange(P), nq)
    ss = subj[qq]
    base = (rng.normal(0, .5, n_subjects)[ss] + rng.normal(0, 1, nq)[qq]
            + rng.normal(0, .5, P)[pp])
    ms = rng.normal(0, sd_model_subject, (n_models, n_subjects))[:, ss]
    mp = rng.normal(0, sd_model_prompt, (n_models, P))[:, pp]
    y = base[None] + ms + mp + rng.normal(0, 1, (n_models, qq.size))
    n = qq.size
    return pd.DataFrame(dict(model=np.repeat([f"m{m:02d}" for m in range(n_models)], n),
                             subject=np.tile([f"s{t:02d}" for t in ss], n_models),
                             question=np.tile([f"q{i:04d}" for i in qq], n_models),
                             prompt=np.tile([f"p{i}" for i in pp], n_models),
                             score=y.ravel()))


def crossed_replicate(seed: int, draws: int = 1000) -> dict[str, float]:
    """Under the defaults (Satterthwaite df of the variance components, Holm; max-t from the
    multivariate t at those df): any null pair rejected by Holm / max-t; the simultaneous
    rank intervals (Holm, the default here, and max-t) cover (every interval [1, M]: all
    models tie).  ``satt_holm``: Holm with lmerTest's df on the same fits."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    d = simulate_crossed(8, 10, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit("score ~ model + (1|subject) + (1|prompt)", d)
        c = fit.contrasts()
        mt = fit.contrasts(adjust="maxt", draws=draws, rng=seed)
        r = fit.rank_intervals(coverage="simultaneous")                  # Holm by default
        rm = fit.rank_intervals(coverage="simultaneous", adjust="maxt", draws=draws, rng=seed)
    M = fit.frame.n_models
    t = np.array([p.estimate / np.sqrt(p.variance) for p in fit.pairs])
    p_satt = 2 * stats.t.sf(np.abs(t), [p.df for p in fit.pairs])   # lmerTest's df
    def cover(t: pd.DataFrame) -> float:
        return float(((t["rank_lower"] <= 1) & (t["rank_upper"] >= M)).all())

    return dict(default=float(c.attrs["mixrank"]["adjust"] == "holm"
                              and fit.df_method == "satterthwaite-vc"
                              and r.attrs["mixrank"]["method"] == "holm"),
                holm=float((c["p_adjusted"] < .05).any()),
                maxt=float((mt["p_adjusted"] < .05).any()),
                rank_cover=cover(r), rank_cover_maxt=cover(rm),
                satt_holm=float(np.min(p_satt) * len(p_satt) < .05))


def crossed_power_replicate(seed: int, sd_model_prompt: float, gap_max: float
                            ) -> dict[str, float]:
    """The crossed design with model gaps ``linspace(0, gap_max, 8)``, fitted once: for the
    default df (``vc``) and lmerTest's (``satt``), Holm's ``{how}_fwer`` over the tied
    pairs and ``{how}_power`` over the others, and the per-pair rejection rates at 0.05
    (``{how}_pair_null``, ``{how}_pair_power``); seeds 70,000+ in docs/methods.md §9."""
    from scipy import stats

    from mixrank.inference.multiplicity import adjust

    rng = np.random.default_rng(seed)
    d = simulate_crossed(8, 10, rng, sd_model_prompt=sd_model_prompt)
    gaps = np.linspace(0.0, gap_max, 8)
    d["score"] = d["score"] + gaps[d["model"].str[1:].astype(int).to_numpy()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit("score ~ model + (1|subject) + (1|prompt)", d)
    inf = fit.inference_pairs()
    t = np.array([p.estimate / np.sqrt(p.variance) for p in inf])
    gap = np.array([gaps[int(p.model_a[1:])] - gaps[int(p.model_b[1:])] for p in inf])
    null = np.isclose(gap, 0.0)
    out: dict[str, float] = {}
    for how, ps in (("vc", inf), ("satt", fit.pairs)):
        pv = 2 * stats.t.sf(np.abs(t), [p.df for p in ps])
        rej = adjust(pv, "holm") < 0.05
        if null.any():
            out[f"{how}_fwer"] = float(rej[null].any())
            out[f"{how}_pair_null"] = float((pv[null] < 0.05).mean())
        if (~null).any():
            out[f"{how}_power"] = float(rej[~null].mean())
            out[f"{how}_pair_power"] = float((pv[~null] < 0.05).mean())
    return out


def omitted_replicate(seed: int, sd_model_prompt: float) -> dict[str, float]:
    """``(1|subject)`` on the crossed data: warned, and Holm's family-wise error."""
    rng = np.random.default_rng(seed)
    d = simulate_crossed(8, 10, rng, sd_model_prompt=sd_model_prompt)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fit = mixrank.fit("score ~ model + (1|subject)", d)
        c = fit.contrasts(adjust="holm", ci="t")          # Holm on the pairs' t tests
        default = fit.contrasts()                          # the unit flips' step-down
    return dict(warned=float(any(issubclass(x.category, mixrank.OmittedKeyWarning) for x in w)),
                holm=float((c["p_adjusted"] < .05).any()),
                default=float((default["p_adjusted"] < .05).any()))


def _true_gaps(g: np.ndarray, sd: float = float(np.sqrt(0.5**2 + 1.0 + 0.3**2))) -> np.ndarray:
    """Each model's expected accuracy ``E expit(g + sd Z)`` under :func:`designs.simulate`'s
    defaults (subject 0.5, question 1, model x subject 0.3), by Gauss-Hermite quadrature:
    the cells estimand's target, ``model_a - model_b`` of these."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    return (w[None] / (1 + np.exp(-(np.asarray(g, float)[:, None] + sd * x[None])))).sum(1) \
        / w.sum()


def unit_replicate(seed: int, n_models: int, gaps: np.ndarray | None = None,
                   sizes: np.ndarray | None = None, n_subjects: int | None = None,
                   satterthwaite: bool = True, studentized: bool = False,
                   intervals: bool = False) -> dict[str, float]:
    """Default (step-down), CR2 + Holm and Satterthwaite + Holm on the nested 0/1 design:
    ``{how}_fwer`` (any null pair rejected) and ``{how}_power`` (share of non-null pairs
    rejected, either sign).  ``studentized``: also ``cr2_stepdown_*``, the step-down of the
    flipped CR2 t (the former default).  ``intervals``: per-pair
    95% coverage of the true gap (:func:`_true_gaps`), mean and median width
    (``{how}_cover``, ``{how}_width``, ``{how}_median_width``) for ``cr2_t`` (``ci="t"``),
    ``satt_t`` and ``flip`` (the inverted unit sign-flip test, the default intervals)."""
    rng = np.random.default_rng(seed)
    T = len(sizes) if sizes is not None else int(n_subjects or 0)
    g = np.zeros(n_models) if gaps is None else np.asarray(gaps, float)
    d = simulate(n_models, T, rng, gaps=g, sizes=sizes)
    out: dict[str, float] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit("correct ~ model + (1|subject)", d)
        tabs = {"default": fit.contrasts(), "cr2_holm": fit.contrasts(adjust="holm", ci="t")}
        if satterthwaite:
            sat = mixrank.fit("correct ~ model + (1|subject)", d, df="satterthwaite")
            tabs["satt_holm"] = sat.contrasts(adjust="holm")
    out["default_is_stepdown"] = float(tabs["default"].attrs["mixrank"]["adjust"] == "stepdown")
    if studentized:
        from mixrank.inference.randomization import randomization_maxt
        r = randomization_maxt(fit, level=0.95, B=1000, rng=0, stepdown=True)
        tabs["cr2_stepdown"] = tabs["cr2_holm"].assign(p_adjusted=r["p_adjusted"])
    names = [f"m{m:02d}" for m in range(n_models)]
    true = dict(zip(names, g))
    for how, c in tabs.items():
        gap = np.array([true[a] - true[b] for a, b in zip(c["model_a"], c["model_b"])])
        null = np.isclose(gap, 0.0)
        rej = (c["p_adjusted"] < 0.05).to_numpy()
        if null.any():
            out[f"{how}_fwer"] = float(rej[null].any())
        if (~null).any():
            out[f"{how}_power"] = float(rej[~null].mean())
    if intervals:
        from mixrank.inference.randomization import flip_intervals
        acc = dict(zip(names, _true_gaps(g)))
        c = tabs["cr2_holm"]                       # the CR2 t intervals (ci="t")
        truth = np.array([acc[a] - acc[b] for a, b in zip(c["model_a"], c["model_b"])])
        fl = flip_intervals(fit, level=0.95)
        cis = {"cr2_t": (c["ci_lower"].to_numpy(), c["ci_upper"].to_numpy()),
               "flip": (fl["ci_lower"], fl["ci_upper"])}
        if satterthwaite:
            s = tabs["satt_holm"]
            cis["satt_t"] = (s["ci_lower"].to_numpy(), s["ci_upper"].to_numpy())
        for how, (lo, hi) in cis.items():
            out[f"{how}_cover"] = float(np.mean((lo <= truth) & (truth <= hi)))
            out[f"{how}_width"] = float(np.mean(hi - lo))
            out[f"{how}_median_width"] = float(np.median(hi - lo))
    return out


def summarise(rows: list[dict[str, float]]) -> dict[str, tuple[float, float]]:
    """Mean and Monte Carlo SE of each answer."""
    keys = sorted(set().union(*rows))
    res = {}
    for k in keys:
        v = np.array([r[k] for r in rows if k in r], dtype=float)
        res[k] = (float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v))))
    return res
