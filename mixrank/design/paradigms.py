"""Per-pair closed forms of the verdict-table paradigms (design stage).

Stage: design (no fitted model).
Inputs: arrays over the pairs of a family -- estimate, n, the estimand's
per-cell SD ``s = sigma_d sqrt(weight_factor)``, variance ratio, discordance.
Outputs: dicts of columns (N*, MDE, q, verdict) for
:func:`mixrank.design.resolution.resolution_table`.
Contents (docs/methods.md §6, docs/anytime.md): :func:`fixed_columns`,
:func:`multiplicity_columns`, :func:`normal_columns` (normal mixture),
:func:`bernoulli_columns` (paired-Bernoulli e-process), :func:`cluster_columns`,
:func:`anova_design_effect` (the published recipe's one-way ANOVA ICC),
:func:`anytime_meta`, and the helpers :func:`ratio`, :func:`noiseless`, :func:`ratio_column` (the
clustered input column, ``variance_ratio`` or its former name ``design_effect``);
degenerate rows (delta = 0, sigma = 0) are handled explicitly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mixrank.design.anytime.bernoulli import n_star_effect, tune_beta, z_equivalent
from mixrank.design.anytime.normal import anytime_inflation, anytime_n_star, anytime_x_star
from mixrank.design.checks import z_quantile, z_upper
from mixrank.design.power.audit import multiplicity_alpha, n_star_scale
from mixrank.design.power.closed_form import mde, n_star
from mixrank.errors import DesignError, MixrankFutureWarning

#: Former column names of the verdict table, kept one release beside the new ones.
DEPRECATED_COLUMNS = {"design_effect": "variance_ratio (removed in the next release)"}

#: sigma_d / |delta| at or below which a row counts as noiseless (N* = 0 in every paradigm).
_NOISELESS = 1e-8



def fixed_columns(est: np.ndarray, n: np.ndarray, sd: np.ndarray, alpha: float,
           pw: float) -> tuple[np.ndarray, np.ndarray]:
    """N* and MDE at level alpha; N* = inf for delta = 0, 0 for sigma_d = 0 < |delta|."""
    ns = np.where(est == 0, np.inf, 0.0)
    md = np.zeros_like(sd)
    ok = (est != 0) & ~noiseless(est, sd)
    if np.any(ok):
        ns[ok] = np.asarray(n_star(est[ok], sigma_d=sd[ok], alpha=alpha, power=pw))
    pos = sd > 0
    if np.any(pos):
        md[pos] = np.asarray(mde(n[pos], sigma_d=sd[pos], alpha=alpha, power=pw))
    return ns, md


def noiseless(est: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Rows treated as sigma_d = 0: no noise at all, or |delta| / sigma_d above 1e8."""
    return sd <= _NOISELESS * np.abs(est)


def ratio(n: np.ndarray, ns: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return n / ns  # n / 0 = inf (resolved), n / inf = 0 (unresolved)


def multiplicity_columns(q: np.ndarray, ns: np.ndarray, md: np.ndarray, n: np.ndarray, alpha: float,
                  pw: float, method: str, steps: Any = None) -> dict[str, np.ndarray]:
    """The multiplicity paradigm's columns.  ``steps`` (``method="stepdown"``): a callable
    taking ``q`` and giving ``(step, alpha_step)`` per row -- the steps in q order (as
    Holm's) and the per-comparison level the randomization step-down spends at each, in
    place of Holm's ``alpha / (m - r + 1)`` (0: the step cannot reject)."""
    m = len(q)
    order = np.argsort(-q, kind="stable")      # step 1 = largest q = smallest fixed-n p-value
    rank = np.empty(m, dtype=int)
    rank[order] = np.arange(1, m + 1)
    if method == "stepdown":
        step, a_prime = (np.asarray(x, dtype=float) for x in steps(q))
        order = np.argsort(step, kind="stable")
        ok = a_prime > 0
        scale = np.full(m, np.inf)
        if ok.any():
            scale[ok] = np.asarray(n_star_scale(a_prime[ok], alpha, power=pw), dtype=float)
        scale = np.maximum(scale, 1.0)
        ns_m = np.where(ns == 0, 0.0, ns * scale)      # a noiseless pair stays resolved
        q_m = ratio(n, ns_m)
        resolved = np.empty(m, dtype=bool)
        resolved[order] = np.cumprod((q_m >= 1)[order]).astype(bool)   # stop at a failure
        with np.errstate(invalid="ignore"):     # a noiseless pair (MDE 0) keeps MDE 0
            mde_m = np.where(md == 0, 0.0, md * np.sqrt(scale))
        return {"alpha_multiplicity": a_prime, "n_star_multiplicity": ns_m,
                "mde_multiplicity": mde_m, "q_multiplicity": q_m,
                "resolved_multiplicity": resolved}
    if method == "bonferroni":
        a_prime = np.full(m, float(multiplicity_alpha(alpha, m, method="bonferroni")))
    else:
        a_prime = np.asarray(multiplicity_alpha(alpha, m, method=method, rank=rank), dtype=float)
        a_prime = np.broadcast_to(a_prime, (m,)).copy()
    scale = np.asarray(n_star_scale(a_prime, alpha, power=pw), dtype=float)
    scale = np.maximum(np.broadcast_to(scale, (m,)), 1.0)   # alpha' <= alpha: exact >= 1
    ns_m = ns * scale
    q_m = ratio(n, ns_m)
    pass_step = (q_m >= 1)[order]                 # in step order
    if method == "holm":                          # step-down: stop at the first failure
        step_ok = np.cumprod(pass_step).astype(bool)
    elif method == "bh":                          # step-up: everything up to the last success
        last = np.flatnonzero(pass_step)
        step_ok = np.zeros(m, dtype=bool)
        if last.size:
            step_ok[: last[-1] + 1] = True
    else:
        step_ok = pass_step
    resolved = np.empty(m, dtype=bool)
    resolved[order] = step_ok
    return {"alpha_multiplicity": a_prime, "n_star_multiplicity": ns_m,
            "mde_multiplicity": md * np.sqrt(scale), "q_multiplicity": q_m,
            "resolved_multiplicity": resolved}


def normal_columns(est: np.ndarray, n: np.ndarray, sd: np.ndarray, alpha: float,
             pw: float) -> dict[str, np.ndarray]:
    """Normal-mixture boundary (anytime/normal.py); ``sd`` is the estimand's per-cell SD."""
    ns = np.where(est == 0, np.inf, 0.0)
    ok = (est != 0) & ~noiseless(est, sd)
    eff = np.where(ok, np.abs(est) / np.where(ok, sd, 1.0), 0.0)
    ns[ok & (eff < 1e-100)] = np.inf   # N* beyond 1e200 cells: outside the solver's range
    for i in np.flatnonzero(ok & (eff >= 1e-100)):  # depends on delta/sigma_d; rho0 tuned for n
        ns[i] = float(anytime_n_star(eff[i], 1.0, alpha=alpha, power=pw, n_plan=n[i]))
    q = ratio(n, ns)
    # at n = n_plan the z-equivalent boundary is sqrt(x*) exactly (tune_rho0)
    z_any = float(np.sqrt(anytime_x_star(alpha)))   # tuned at n: the z-equivalent sqrt(x*)
    md = (z_any + float(z_quantile(pw))) * sd / np.sqrt(n)
    return {"inflation_anytime": np.full(len(est), float(anytime_inflation(1.0, alpha))),
            "n_star_anytime": ns, "mde_anytime": md, "q_anytime": q,
            "resolved_anytime": q >= 1}


def bernoulli_columns(est: np.ndarray, n: np.ndarray, sd: np.ndarray, psi: np.ndarray,
                       alpha: float, pw: float) -> dict[str, np.ndarray]:
    """Paired-Bernoulli mixture e-process (anytime/bernoulli.py), prior tuned at D = n psi."""
    m = len(est)
    za, zb = float(z_upper(alpha / 2)), float(z_quantile(pw))
    ns = np.where(est == 0, np.inf, 0.0)
    infl, md = np.full(m, np.nan), np.zeros(m)
    ok = (est != 0) & ~noiseless(est, sd)
    for i in range(m):
        if psi[i] <= 0:                 # no discordant cell: estimate 0, N* = inf
            continue
        a = float(tune_beta(n[i] * psi[i], alpha=alpha))
        z_any = float(z_equivalent(np.array([n[i]]), float(psi[i]), a, alpha)[0])
        infl[i] = z_any / za
        md[i] = (z_any + zb) * sd[i] / np.sqrt(n[i])
        if ok[i]:
            ns[i] = n_star_effect(abs(est[i]) / sd[i], float(psi[i]), a, alpha, zb)
    q = ratio(n, ns)
    return {"discordance": psi, "inflation_anytime": infl, "n_star_anytime": ns,
            "mde_anytime": md, "q_anytime": q, "resolved_anytime": q >= 1}


def cluster_columns(ns: np.ndarray, md: np.ndarray, n: np.ndarray, de: np.ndarray,
                    df: np.ndarray | None = None, alpha: float = 0.05,
                    power: float = 0.8) -> dict[str, np.ndarray]:
    """The clustered paradigm: N* and MDE scaled by the design effect (at least 1) and, when
    the pairs' ``df`` are given (the contrasts' df at the unit), by ``K_t / K_z`` with
    ``K_t = (t_{df, 1-alpha/2} + t_{df, power})^2``: the contrast's own t reference."""
    de_used = np.maximum(de, 1.0)
    scale = de_used.astype(float)
    if df is not None:
        from scipy import stats
        dfa = np.asarray(df, dtype=float)
        kz = (z_upper(alpha / 2) + z_quantile(power)) ** 2
        ok = np.isfinite(dfa) & (dfa > 0)
        kt = np.where(ok, (stats.t.ppf(1 - alpha / 2, np.where(ok, dfa, 1.0))
                           + stats.t.ppf(power, np.where(ok, dfa, 1.0))) ** 2, kz)
        scale = scale * np.maximum(kt / kz, 1.0)
    ns_c = ns * scale
    q = ratio(n, ns_c)
    return {"n_star_cluster": ns_c, "mde_cluster": md * np.sqrt(scale), "q_cluster": q,
            "resolved_cluster": q >= 1}


def anova_design_effect(d: np.ndarray, groups: np.ndarray) -> tuple[float, float, float]:
    """``(icc, design_effect, m_bar)``: the published recipe's design effect of a mean of ``d``.

    The one-way ANOVA intraclass correlation of ``d`` over ``groups`` (the
    formula's unit): with G groups of sizes ``m_i`` summing to N,
    ``MSB = sum m_i (dbar_i - dbar)^2 / (G - 1)``, ``MSW = sum (d - dbar_i)^2 /
    (N - G)``, ``n0 = (N - sum m_i^2 / N) / (G - 1)``, ``ICC = (MSB - MSW) /
    (MSB + (n0 - 1) MSW)`` (0 when negative), and ``DE = 1 + (m_bar - 1) ICC``
    with ``m_bar = N / G`` (Kish; arXiv:2605.30315).  NaN with fewer than 2
    groups or no within-group degrees of freedom.  Checked against a hand
    computation in tests/design/test_verdict_coherence.py.
    """
    d = np.asarray(d, dtype=float)
    codes = np.unique(np.asarray(groups), return_inverse=True)[1]
    G, N = int(codes.max()) + 1 if len(codes) else 0, len(d)
    if G < 2 or N - G < 1:
        return float("nan"), float("nan"), float(N / G) if G else float("nan")
    m = np.bincount(codes, minlength=G).astype(float)
    means = np.bincount(codes, weights=d, minlength=G) / m
    grand = float(d.mean())
    msb = float(np.sum(m * (means - grand) ** 2) / (G - 1))
    msw = float(np.sum((d - means[codes]) ** 2) / (N - G))
    n0 = (N - float(np.sum(m ** 2)) / N) / (G - 1)
    den = msb + (n0 - 1) * msw
    icc = max((msb - msw) / den, 0.0) if den > 0 else 0.0
    m_bar = N / G
    return icc, 1.0 + (m_bar - 1.0) * icc, m_bar


def anytime_meta(method: str | None, out: Any, alpha: float, power: float) -> dict | None:
    """``attrs["mixrank"]["anytime"]`` of a verdict table: boundary, tuning and inflation."""
    z_a, z_b = float(z_upper(alpha / 2)), float(z_quantile(power))
    if method == "bernoulli":
        infl = out["inflation_anytime"].to_numpy()
        z_med = float(np.nanmedian(infl)) * z_a if np.any(np.isfinite(infl)) else float("nan")
        return {
            "method": "bernoulli",
            "boundary": "paired-Bernoulli mixture e-process on discordant cells, "
                        "Beta(a, a) prior (docs/anytime.md)",
            "tuning": "a = tune_beta(n * discordance): tightest at each pair's own N",
            "inflation": z_med / z_a,
            "threshold_z": z_med,
            "n_star_factor_at_n_plan": float(((z_med + z_b) / (z_a + z_b)) ** 2),
        }
    if method == "normal":
        z_any = float(np.sqrt(anytime_x_star(alpha)))      # tuned at N
        return {
            "method": "normal",
            "boundary": "two-sided normal mixture (Howard et al. 2021, eq. 14)",
            "rho0": "tune_rho0(n_plan=n): tuned for each pair's own N (the benchmark's size)",
            "inflation": float(anytime_inflation(1.0, alpha)),
            "threshold_z": z_any,
            "n_star_factor_at_n_plan": float(((z_any + z_b) / (z_a + z_b)) ** 2),
        }
    return None


def ratio_column(pairs: pd.DataFrame) -> str:
    """The clustered input column of a pair table: ``"variance_ratio"``, or its former name
    ``"design_effect"`` with a :class:`~mixrank.MixrankFutureWarning` (one release).  Both
    given with different values: a :class:`~mixrank.DesignError`."""
    if "design_effect" not in pairs.columns:
        return "variance_ratio"
    if "variance_ratio" in pairs.columns:
        new, old = (pd.to_numeric(pairs[c], errors="coerce").to_numpy(float)
                    for c in ("variance_ratio", "design_effect"))
        if not np.array_equal(new, old, equal_nan=True):
            raise DesignError("the pair table has both 'variance_ratio' and 'design_effect' "
                              "(its former name) with different values; keep 'variance_ratio'.")
        return "variance_ratio"
    import warnings

    warnings.warn("resolution_table: the pair table's column 'design_effect' is the former name "
                  "of 'variance_ratio' (the estimate's variance over its iid variance "
                  "sigma_d^2 weight_factor / n); it is read in this release and not in the next "
                  "-- rename the column to 'variance_ratio'", MixrankFutureWarning, stacklevel=4)
    return "design_effect"
