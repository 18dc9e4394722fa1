"""Summaries the resolution papers report: unresolved share by effect size, shortcut and bootstrap N* (design stage).

Stage: design.
Inputs: a verdict table (:func:`mixrank.design.resolution.resolution_table`
or :meth:`FitResult.resolution`) for :func:`unresolved_by_effect`; a
:class:`~mixrank.results.FitResult` for :func:`pair_audit`.
Outputs: tidy tables.
Contents (docs/sensitivity.md, "Summaries"): :func:`unresolved_by_effect`
(share of unresolved pairs per |delta| bucket, median and worst
``r = N*/N``), :func:`pair_audit` (per pair the shortcut-to-exact ratio
``n_h / N*`` and the bootstrap-based N* beside the Wald N*).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from mixrank._deprecate import former_keywords
from mixrank._util import as_rng, check_max_draws, tidy
from mixrank.design.checks import check_alpha, check_fit, check_power, z_quantile, z_upper
from mixrank.design.judged import select_pairs
from mixrank.design.power.audit import shortcut_n
from mixrank.errors import DesignError
from mixrank.inference.keywords import alpha_from, former, unexpected_keywords

__all__ = ["unresolved_by_effect", "pair_audit", "DEFAULT_EDGES"]

#: Default |delta| bucket edges (score units; 0.01 = one percentage point for accuracies).
DEFAULT_EDGES = (0.0, 0.01, 0.02, 0.05, 0.10, np.inf)
_VERDICTS = {"fixed": ("q", "resolved"), "multiplicity": ("q_multiplicity",
                                                           "resolved_multiplicity"),
             "anytime": ("q_anytime", "resolved_anytime"),
             "cluster": ("q_cluster", "resolved_cluster")}


def _edges(edges: Any) -> np.ndarray:
    try:
        e = np.asarray(edges, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DesignError(f"edges must be increasing numbers >= 0 (|delta| bucket bounds); "
                          f"received {edges!r}.") from exc
    if e.ndim != 1 or e.size < 2 or np.any(np.diff(e) <= 0) or e[0] < 0:
        raise DesignError(f"edges must be at least two increasing numbers >= 0 (|delta| "
                          f"bucket bounds, e.g. [0, 0.01, 0.05, inf]); received {edges!r}.")
    return e


def unresolved_by_effect(table: pd.DataFrame, *, edges: Sequence[float] = DEFAULT_EDGES,
                         paradigms: Sequence[str] | None = None) -> pd.DataFrame:
    """Share of unresolved pairs per |delta| bucket, with the median and worst ``r = N*/N``.

    Parameters
    ----------
    table : pandas.DataFrame
        A verdict table (not modified).
    edges : sequence of float
        Bucket bounds on ``|estimate|``; bucket i is ``[edges[i], edges[i+1])``.
    paradigms : sequence of str, optional
        Among ``fixed, multiplicity, anytime, cluster``; default every
        paradigm in the table.

    Returns
    -------
    pandas.DataFrame
        One row per (paradigm, bucket), buckets without pairs included:
        ``paradigm``, ``delta_lower, delta_upper``, ``n_pairs``,
        ``n_unresolved``, ``share_unresolved`` (NaN for an empty bucket),
        ``r_median`` and ``r_worst`` (median and largest ``N*/N = 1/q`` of
        the bucket's pairs; inf for delta = 0).  ``attrs["mixrank"]``
        carries the verdict table's ``estimand``, ``alpha`` and ``power``.

    Raises
    ------
    DesignError
        Not a verdict table; bad edges; a paradigm the table lacks.

    Notes
    -----
    ``r = N*/N`` is the factor by which the benchmark would have to grow to
    resolve the pair at its observed gap; r <= 1 iff resolved (methods §6).
    Validated against an independent pandas computation and a hand-worked
    table (tests/design/test_summaries.py).
    """
    if "q" not in getattr(table, "columns", []) or "estimate" not in table.columns:
        raise DesignError("table must be a verdict table with columns estimate and q "
                          "(FitResult.resolution() or resolution_table()).")
    meta = table.attrs.get("mixrank", {})
    lacking = [p for p in meta.get("paradigms", []) if p in _VERDICTS
               and _VERDICTS[p][0] not in table.columns]
    if meta.get("view", "all") != "all" and lacking:
        raise DesignError(f"the verdict table is resolution()'s {meta['view']!r} view, without "
                          f"the q of {lacking}; pass resolution(columns='all').")
    e = _edges(edges)
    have = [p for p, (q, _) in _VERDICTS.items() if q in table.columns]
    use = have if paradigms is None else [str(p) for p in paradigms]
    bad = [p for p in use if p not in have]
    if bad:
        raise DesignError(f"paradigms {bad} are not in the table; available: {have}.")
    absd = np.abs(table["estimate"].to_numpy(float))
    bucket = np.searchsorted(e, absd, side="right") - 1      # [e_i, e_{i+1})
    rows = []
    for p in use:
        qcol, vcol = _VERDICTS[p]
        with np.errstate(divide="ignore"):
            r = 1.0 / table[qcol].to_numpy(float)
        unres = ~table[vcol].to_numpy(bool)
        for i in range(len(e) - 1):
            inb = bucket == i
            k = int(inb.sum())
            rows.append(dict(paradigm=p, delta_lower=float(e[i]), delta_upper=float(e[i + 1]),
                             n_pairs=k, n_unresolved=int(unres[inb].sum()),
                             share_unresolved=float(unres[inb].mean()) if k else float("nan"),
                             r_median=float(np.median(r[inb])) if k else float("nan"),
                             r_worst=float(np.max(r[inb])) if k else float("nan")))
    meta = table.attrs.get("mixrank", {})
    return tidy(rows, table="unresolved_by_effect", estimand=meta.get("estimand"),
                alpha=meta.get("alpha"), power=meta.get("power"), edges=[float(x) for x in e])


def _boot_n_star(d: np.ndarray, alpha: float, power: float, B: int,
                 gen: np.random.Generator) -> float:
    """Bootstrap N*: ``n ((q_{1-alpha/2} - q_beta) / |delta|)^2`` from the centred bootstrap."""
    n = d.size
    est = float(d.mean())
    if est == 0:
        return float("inf")
    step = max(1, 2_000_000 // n)                          # memory: ~16 MB of indices
    means = np.concatenate([d[gen.integers(0, n, size=(min(step, B - i), n))].mean(axis=1)
                            for i in range(0, B, step)])
    dev = np.sign(est) * (means - est)
    spread = np.quantile(dev, 1 - alpha / 2) - np.quantile(dev, 1 - power)
    return float(n * (spread / abs(est)) ** 2)


@former_keywords
def pair_audit(fit: Any, *, pairs: str | Sequence[tuple[str, str]] = "adjacent",
               models: Sequence[str] | None = None, top: int | None = None,
               level: float | None = None, power: float = 0.8, draws: int = 2000,
               rng: Any = None, **old: Any) -> pd.DataFrame:
    """Per pair: the shortcut-to-exact ratio ``n_h / N*`` and the bootstrap N* beside the Wald N*.

    Parameters
    ----------
    fit : FitResult
    pairs, models, top
        The family, as in :meth:`FitResult.resolution`.
    level : float, optional
        Default the fit's (two-sided ``alpha = 1 - level``; former keyword
        ``alpha=``, deprecated).
    power : float
    draws : int, default 2000
        Cell-level paired bootstrap replicates for ``n_star_bootstrap``
        (former name ``B=``, deprecated).
    rng : Generator or int, optional

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``model_a, model_b``, ``estimate`` (``p_A - p_B``,
        the plain mean difference over the n common cells), ``n``,
        ``sigma_d``, ``p_a, p_b, rho`` (accuracies and the correlation of
        the two score vectors over the common cells), ``n_star`` (Wald,
        ``K sigma_d^2 / delta^2``), ``shortcut_n`` (``n_h = K (1 - rho) /
        h^2``, :func:`mixrank.design.power.audit.shortcut_n`; 0/1 scores only,
        else NaN), ``shortcut_ratio`` (``n_h / N*``, about 1/2 for small
        effects), ``n_star_bootstrap`` (see Notes) and ``bootstrap_ratio``
        (``n_star_bootstrap / n_star``).

    Raises
    ------
    DesignError
        Bad family, draws < 100.

    Notes
    -----
    Bootstrap N* (our reading of the papers' Definition 2): resample the
    common cells B times; with ``u_b = sign(delta) (delta*_b - delta)``,
    ``N*_boot = n ((Q_u(1 - alpha/2) - Q_u(beta)) / |delta|)^2`` -- the N at
    which the bootstrap percentile test, with the spread scaled by
    ``sqrt(n/N)``, rejects with probability ``1 - beta``.  For normal
    differences ``Q_u(1 - alpha/2) = z_{1-alpha/2} SE`` and ``Q_u(beta) =
    -z_{1-beta} SE``, which gives the Wald N*; skewed bounded scores move it.
    The cells are treated as independent (the fixed-n paradigm); the
    clustered counterpart is the cluster bootstrap of
    :meth:`FitResult.sensitivity`.  Validated: n_h against
    :func:`~mixrank.design.power.audit.shortcut_n`, N*_boot against the Wald N*
    on Gaussian differences (tests).
    """
    check_fit(fit)
    B = former(old, "B", "draws", draws, 2000, where="pair_audit")
    alpha = alpha_from(level, old, default=fit.level, where="pair_audit")
    unexpected_keywords(old, "pair_audit")
    if isinstance(B, bool) or not isinstance(B, (int, np.integer)) or B < 100:
        raise DesignError(f"draws must be a whole number >= 100 (bootstrap replicates); "
                          f"received {B!r}.")
    check_max_draws("draws", B, DesignError)
    al, pw = float(check_alpha(alpha)), float(check_power(power, check_alpha(alpha)))
    kk = float((z_upper(al / 2) + z_quantile(pw)) ** 2)
    gen = as_rng(rng)
    f = fit.frame
    rows = []
    for a, b in select_pairs(fit, pairs, models, top):
        j, k = f.model_index(a), f.model_index(b)
        m = f.common_mask(j, k)
        ya, yb = f.scores[m, j], f.scores[m, k]
        d = ya - yb
        est, sd = float(d.mean()), float(d.std(ddof=1))
        binary = bool(np.all(np.isin(ya, (0.0, 1.0))) and np.all(np.isin(yb, (0.0, 1.0))))
        rho = float(np.corrcoef(ya, yb)[0, 1]) if ya.std() > 0 and yb.std() > 0 else float("nan")
        ns = kk * sd**2 / est**2 if est != 0 else float("inf")
        nh = float("nan")
        if binary and est != 0 and np.isfinite(rho) and 0 < ya.mean() < 1 and 0 < yb.mean() < 1:
            nh = float(shortcut_n(float(ya.mean()), float(yb.mean()), rho=rho, alpha=al,
                                  power=pw))
        nb = _boot_n_star(d, al, pw, int(B), gen)
        rows.append(dict(model_a=a, model_b=b, estimate=est, n=int(m.sum()), sigma_d=sd,
                         p_a=float(ya.mean()), p_b=float(yb.mean()), rho=rho, n_star=ns,
                         shortcut_n=nh, shortcut_ratio=nh / ns, n_star_bootstrap=nb,
                         bootstrap_ratio=nb / ns))
    return tidy(rows, table="pair_audit", alpha=al, power=pw, B=int(B),
                estimand="cells (plain mean over common cells)")
