"""Inputs of tests/reference/clubsandwich.R: mixrank's CR2 sandwiches as clubSandwich calls.

Run from the repository root (only if the designs below change):

    python tests/reference/make_clubsandwich_cases.py
    Rscript tests/reference/clubsandwich.R

Three unbalanced designs for each of mixrank's three CR2 sandwiches (docs/methods.md §9,
"CR2 and clubSandwich"):

* ``lm``: every pair of ``fit(..., df="cr2")`` with ``(1|subject)``, estimands
  ``cells``, ``units`` and ``gls``: the pair's paired differences ``d``, their unit
  codes, the estimator's cell weights ``w`` and the fitted working covariance in units of
  the residual variance, ``I + ratio ZZ'`` (ratio = subject component / the others);
  clubSandwich fits ``lm(d ~ 1, weights = w)``.
* ``glm``: an arena battle log (no ties, ``prior=0``) clustered by question; clubSandwich
  refits ``glm(y ~ 0 + Z, binomial)`` and tests every pair with ``linear_contrast``.
* ``judge``: the judge correction's PPI++ mean at one unit (``mixrank.judge.ppi.ppi_mean``):
  ``z = y - lam yhat`` on the labelled cells, ``lam yhat`` on the unlabelled ones, two
  intercepts whose sum is the estimate; working covariance diagonal with each part's
  variance.

The inputs depend only on the seeds (the data) and on mixrank's fitted working model
(weights, ratio, lambda): the sandwich algebra given them is what clubSandwich checks.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).parent / "clubsandwich_cases.json"
SEED = 20261206
#: (models, subjects, questions per subject, family, missing, sd_model_subject)
LM_DESIGNS = {
    "gaussian_12_subjects": (3, [4, 9, 6, 30, 5, 8, 10, 7, 6, 20, 3, 12], "gaussian", 0.1, 0.6),
    "binary_20_subjects": (3, [5, 12, 40, 8, 7, 22, 6, 9, 15, 11, 5, 30, 8, 6, 18, 7, 10, 25, 6, 9],
                           "binomial", 0.2, 0.5),
    "binary_8_subjects": (4, [3, 60, 12, 8, 25, 5, 40, 9], "binomial", 0.15, 0.7),
}
#: (models, clusters, largest cluster)
ARENA_DESIGNS = {"arena_4_models": (4, 30, 8), "arena_5_models": (5, 50, 5),
                 "arena_3_models": (3, 25, 12)}
#: (labelled, unlabelled, units)
JUDGE_DESIGNS = {"judge_9_units": (60, 300, 9), "judge_12_units": (90, 200, 12),
                 "judge_7_units": (40, 500, 7)}


def lm_cases(seed: int) -> list[dict]:
    import mixrank
    from mixrank.engine.lmm.unit_se import _unit_ratio, pair_unit_data, unit_weights

    out = []
    for i, (name, (k, q, family, missing, sd)) in enumerate(LM_DESIGNS.items()):
        d = mixrank.simulate(models=k, subjects=len(q), questions=q, family=family,
                             missing=missing, sd_model_subject=sd, sd_model_question=0.0,
                             sd_residual=1.0, rng=np.random.default_rng(seed + i))
        for est in ("cells", "units", "gls"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mixrank.MixrankWarning)
                fit = mixrank.fit("correct ~ model + (1|subject)", d, estimand=est, df="cr2")
            for p, (var, df) in zip(fit.pairs, fit.inference):
                diff, codes = pair_unit_data(fit.frame, p, "subject")
                w = unit_weights(est, codes, p, "subject")
                out.append(dict(kind="lm", design=name, estimand=est,
                                pair=f"{p.model_a} - {p.model_b}", d=diff.tolist(),
                                cluster=codes.tolist(), w=w.tolist(),
                                ratio=_unit_ratio(p, "subject"),
                                mixrank=dict(se=float(np.sqrt(var)), df=float(df))))
    return out


def battles(k: int, clusters: int, largest: int, rng: np.random.Generator) -> pd.DataFrame:
    """A battle log: clusters of 1..largest battles, a question effect shared in a cluster."""
    strength = np.linspace(-0.6, 0.6, k)
    rows = []
    for g in range(clusters):
        u = rng.normal(0, 0.6)
        for _ in range(int(rng.integers(1, largest + 1))):
            a, b = rng.choice(k, 2, replace=False)
            p = 1 / (1 + np.exp(-(strength[a] - strength[b] + u * (a - b) / k)))
            rows.append(dict(model_a=f"m{a}", model_b=f"m{b}", question=f"q{g:03d}",
                             winner="model_a" if rng.random() < p else "model_b"))
    return pd.DataFrame(rows)


def glm_cases(seed: int) -> list[dict]:
    import mixrank

    out = []
    for i, (name, (k, g, m)) in enumerate(ARENA_DESIGNS.items()):
        bat = battles(k, g, m, np.random.default_rng(seed + 10 + i))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mixrank.MixrankWarning)
            res = mixrank.arena(bat, cluster="question", scale="logit")
            tab = res.contrasts(scale="logit", adjust="none")
        out.append(dict(kind="glm", design=name, models=list(res.models),
                        a=bat["model_a"].tolist(), b=bat["model_b"].tolist(),
                        y=(bat["winner"] == "model_a").astype(int).tolist(),
                        cluster=bat["question"].tolist(),
                        pairs=[f"{a} - {b}" for a, b in zip(tab["model_a"], tab["model_b"])],
                        mixrank=dict(se=tab["std_error"].tolist(), df=tab["df"].tolist())))
    return out


def judge_cases(seed: int) -> list[dict]:
    from mixrank.judge.ppi import ppi_mean

    out = []
    for i, (name, (n_l, n_u, g)) in enumerate(JUDGE_DESIGNS.items()):
        rng = np.random.default_rng(seed + 20 + i)
        size = rng.gamma(1.0, 1.0, g) + 0.2                   # unequal units
        cl = rng.choice(g, n_l, p=size / size.sum())
        cu = rng.choice(g, n_u, p=size / size.sum())
        u = rng.normal(0, 0.5, g)
        y = u[cl] + rng.normal(0, 1, n_l)
        yhat = y + rng.normal(0.2, 0.6, n_l)
        yhat_u = u[cu] + rng.normal(0.2, 1.1, n_u)
        e = ppi_mean(y, yhat, yhat_u, groups_l=[cl], groups_u=[cu])
        r = y - e.lam * yhat
        out.append(dict(kind="judge", design=name, z=[*r.tolist(), *(e.lam * yhat_u).tolist()],
                        labelled=[1] * n_l + [0] * n_u,
                        cluster=[*cl.tolist(), *cu.tolist()], var_labelled=float(np.var(r)),
                        var_unlabelled=float(e.lam ** 2 * np.var(yhat_u)), units=int(g),
                        mixrank=dict(se=e.std_error, df=e.df)))
    return out


def cases(seed: int = SEED) -> list[dict]:
    """Every case of the three kinds, with mixrank's own SE and df beside the inputs."""
    return [*lm_cases(seed), *glm_cases(seed), *judge_cases(seed)]


if __name__ == "__main__":
    OUT.write_text(json.dumps(dict(seed=SEED, cases=cases()), separators=(",", ":")))
    print("wrote", OUT)
