"""Resolution verdict tables for a family of pairs (design stage).

Stage: design (on top of a fitted model, or of per-pair numbers).
Inputs: a :class:`~mixrank.results.FitResult` (:func:`resolution_fit`) or a
table with one row per pair -- ``model_a, model_b, estimate, n, sigma_d`` and,
for the clustered paradigm, ``design_effect`` (:func:`resolution_table`).
Outputs: a tidy verdict table, one row per pair, with N*, MDE, the resolution
ratio q and a resolved/unresolved verdict under four paradigms (fixed n,
multiplicity-adjusted, anytime-valid, clustered), plus the counts per paradigm
in ``attrs["mixrank"]``.
Contents (docs/methods.md §6, "Verdict table"): :func:`resolution_table`,
:func:`resolution_fit`.  The closed forms come from
:mod:`mixrank.design.power`, :mod:`mixrank.design.audit` (multiplicity) and
:mod:`mixrank.design.anytime` (the normal-mixture boundary).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from mixrank._util import tidy
from mixrank.design.anytime import anytime_inflation, anytime_n_star, anytime_x_star
from mixrank.design.audit import multiplicity_alpha, n_star_scale
from mixrank.design.checks import check_alpha, check_fit, check_power, z_quantile
from mixrank.design.power import mde, n_star
from mixrank.engine.records import pair_key, pair_lookup
from mixrank.errors import DesignError

if TYPE_CHECKING:
    from mixrank.results import FitResult

__all__ = ["resolution_table", "resolution_fit", "PARADIGMS", "MULTIPLICITY_METHODS"]

#: Paradigm names, in table order (the keys of ``attrs["mixrank"]["unresolved"]``).
PARADIGMS = ("fixed", "multiplicity", "anytime", "cluster")
#: Accepted values of ``multiplicity=`` (None drops the paradigm).
MULTIPLICITY_METHODS = ("holm", "bonferroni", "bh")
_PAIR_FAMILIES = ("adjacent", "all")
#: sigma_d / |delta| at or below which a row counts as noiseless (N* = 0 in every paradigm).
_NOISELESS = 1e-8


# ----------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------

def _check_scalar(name: str, value: Any) -> None:
    if np.ndim(value) != 0:
        raise DesignError(f"{name} must be a single number; received shape {np.shape(value)}.")


def _check_flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise DesignError(f"{name} must be True or False; received {value!r}.")
    return bool(value)


def _check_multiplicity(method: Any) -> str | None:
    if method is None:
        return None
    key = method.lower() if isinstance(method, str) else method
    if key not in MULTIPLICITY_METHODS:
        raise DesignError(
            f"multiplicity must be one of {list(MULTIPLICITY_METHODS)} or None (no "
            f"multiplicity paradigm); received {method!r}."
        )
    return key


def _column(table: pd.DataFrame, name: str, *, lo: float | None = None, lo_open: bool = False,
            what: str) -> np.ndarray:
    if name not in table.columns:
        raise DesignError(
            f"the pair table lacks column {name!r} ({what}); expected columns "
            f"['model_a', 'model_b', 'estimate', 'n', 'sigma_d'] (+ 'design_effect' with "
            f"cluster=True). Build it from a fit with resolution_fit()."
        )
    try:
        a = table[name].to_numpy(dtype=float)
    except (TypeError, ValueError) as exc:
        raise DesignError(f"column {name!r} ({what}) must be numeric; received dtype "
                          f"{table[name].dtype}.") from exc
    bad = ~np.isfinite(a)
    if lo is not None:
        bad |= (a <= lo) if lo_open else (a < lo)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        rng = "finite" if lo is None else f"finite and {'>' if lo_open else '>='} {lo:g}"
        raise DesignError(
            f"column {name!r} ({what}) must be {rng}; received {a[i]!r} in row {i} "
            f"({table['model_a'].iloc[i]!r} vs {table['model_b'].iloc[i]!r})."
        )
    return a


# ----------------------------------------------------------------------------
# the per-pair closed forms (degenerate rows handled explicitly)
# ----------------------------------------------------------------------------

def _fixed(est: np.ndarray, n: np.ndarray, sd: np.ndarray, alpha: float,
           pw: float) -> tuple[np.ndarray, np.ndarray]:
    """N* and MDE at level alpha; N* = inf for delta = 0, 0 for sigma_d = 0 < |delta|."""
    ns = np.where(est == 0, np.inf, 0.0)
    md = np.zeros_like(sd)
    ok = (est != 0) & ~_noiseless(est, sd)
    if np.any(ok):
        ns[ok] = np.asarray(n_star(est[ok], sigma_d=sd[ok], alpha=alpha, power=pw))
    pos = sd > 0
    if np.any(pos):
        md[pos] = np.asarray(mde(n[pos], sigma_d=sd[pos], alpha=alpha, power=pw))
    return ns, md


def _noiseless(est: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Rows treated as sigma_d = 0: no noise at all, or |delta| / sigma_d above 1e8."""
    return sd <= _NOISELESS * np.abs(est)


def _ratio(n: np.ndarray, ns: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return n / ns  # n / 0 = inf (resolved), n / inf = 0 (unresolved)


def _multiplicity(q: np.ndarray, ns: np.ndarray, md: np.ndarray, n: np.ndarray, alpha: float,
                  pw: float, method: str) -> dict[str, np.ndarray]:
    m = len(q)
    order = np.argsort(-q, kind="stable")      # step 1 = largest q = smallest fixed-n p-value
    rank = np.empty(m, dtype=int)
    rank[order] = np.arange(1, m + 1)
    if method == "bonferroni":
        a_prime = np.full(m, float(multiplicity_alpha(alpha, m, method="bonferroni")))
    else:
        a_prime = np.asarray(multiplicity_alpha(alpha, m, method=method, rank=rank), dtype=float)
        a_prime = np.broadcast_to(a_prime, (m,)).copy()
    scale = np.asarray(n_star_scale(a_prime, alpha, power=pw), dtype=float)
    scale = np.maximum(np.broadcast_to(scale, (m,)), 1.0)   # alpha' <= alpha: exact >= 1
    ns_m = ns * scale
    q_m = _ratio(n, ns_m)
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


def _anytime(est: np.ndarray, n: np.ndarray, sd: np.ndarray, alpha: float,
             pw: float) -> dict[str, np.ndarray]:
    ns = np.where(est == 0, np.inf, 0.0)
    ok = (est != 0) & ~_noiseless(est, sd)
    eff = np.where(ok, np.abs(est) / np.where(ok, sd, 1.0), 0.0)
    ns[ok & (eff < 1e-100)] = np.inf   # N* beyond 1e200 cells: outside the solver's range
    for i in np.flatnonzero(ok & (eff >= 1e-100)):  # depends on delta/sigma_d; rho0 tuned for n
        ns[i] = float(anytime_n_star(eff[i], 1.0, alpha=alpha, power=pw, n_plan=n[i]))
    q = _ratio(n, ns)
    # at n = n_plan the z-equivalent boundary is sqrt(x*) exactly (tune_rho0)
    md = (np.sqrt(float(anytime_x_star(alpha))) + float(z_quantile(pw))) * sd / np.sqrt(n)
    return {"n_star_anytime": ns, "mde_anytime": md, "q_anytime": q,
            "resolved_anytime": q >= 1}


def _cluster(ns: np.ndarray, md: np.ndarray, n: np.ndarray,
             de: np.ndarray) -> dict[str, np.ndarray]:
    de_used = np.maximum(de, 1.0)
    ns_c = ns * de_used
    q = _ratio(n, ns_c)
    return {"n_star_cluster": ns_c, "mde_cluster": md * np.sqrt(de_used), "q_cluster": q,
            "resolved_cluster": q >= 1}


def _count(resolved: np.ndarray) -> str:
    return f"{int((~resolved).sum())}/{len(resolved)} unresolved"


# ----------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------

def resolution_table(pairs: pd.DataFrame, *, alpha: float = 0.05, power: float = 0.8,
                     multiplicity: str | None = "holm", anytime: bool = True,
                     cluster: bool = True) -> pd.DataFrame:
    """Resolution verdicts for a family of pairs under four paradigms.

    Parameters
    ----------
    pairs : pandas.DataFrame
        One row per pair: ``model_a, model_b, estimate`` (the observed
        difference delta-hat, any sign), ``n`` (paired cells, > 0),
        ``sigma_d`` (SD of the per-cell differences, >= 0) and, when
        ``cluster=True``, ``design_effect`` (> 0).  ``std_error`` is carried
        through when present.  Not modified.
    alpha : float, default 0.05
        Two-sided level of the family, in (0, 1).
    power : float, default 0.8
        Target power ``1 - beta``, in (alpha, 1).
    multiplicity : {"holm", "bonferroni", "bh"} or None, default "holm"
        Correction of the multiplicity paradigm over the family (the rows);
        None leaves that paradigm out.
    anytime : bool, default True
        Include the anytime-valid paradigm.
    cluster : bool, default True
        Include the clustered paradigm (needs ``design_effect``).

    Returns
    -------
    pandas.DataFrame
        The input order, one row per pair, columns (paradigm blocks only when
        enabled):

        * ``model_a, model_b, estimate, n, sigma_d`` -- as given;
        * fixed n: ``mde`` (smallest |delta| resolved at n), ``n_star``
          (N*(delta-hat)), ``q = n / n_star``, ``resolved`` (q >= 1);
        * multiplicity: ``alpha_multiplicity`` (the per-comparison level of
          the pair's step), ``n_star_multiplicity``, ``mde_multiplicity``,
          ``q_multiplicity``, ``resolved_multiplicity`` (with the step rule,
          see Notes);
        * anytime-valid: ``n_star_anytime, mde_anytime, q_anytime,
          resolved_anytime``;
        * clustered: ``std_error`` (if given), ``design_effect``,
          ``n_star_cluster, mde_cluster, q_cluster, resolved_cluster``;
        * ``resolved_all`` -- resolved under every included paradigm.

        ``attrs["mixrank"]`` holds ``unresolved`` (e.g.
        ``{"fixed": "4/9 unresolved", ..., "all": ...}``), ``n_unresolved``
        (the counts as integers), ``n_pairs``, ``paradigms``, ``alpha``,
        ``power``, ``multiplicity``, ``anytime`` (boundary, rho0 choice,
        threshold ``inflation`` and the N* factor at the tuning point) and
        ``design_effect_below_1`` (pairs whose design effect was raised to 1).

    Raises
    ------
    DesignError
        alpha outside (0, 1), power outside (alpha, 1), an unknown
        multiplicity method, non-boolean flags, missing or invalid columns
        (n <= 0, sigma_d < 0, design_effect <= 0, non-finite values), an
        empty table.

    Notes
    -----
    With ``K = (z_{1-alpha/2} + z_{1-beta})^2`` (docs/methods.md §6):

    * Fixed n: ``N* = K sigma_d^2 / delta^2``, ``MDE = sqrt(K) sigma_d / sqrt(n)``,
      ``q = n / N*``; resolved iff ``q >= 1`` iff ``|delta| >= MDE``.  A zero
      estimate gives ``N* = inf`` (q = 0); ``sigma_d = 0`` with a non-zero
      estimate gives ``N* = 0`` (q = inf) in every paradigm, and so does
      ``sigma_d <= 1e-8 |delta|`` (N* below 1e-15 cells; the anytime
      solver cannot resolve such tiny N); the anytime N* is reported as inf
      when ``|delta| < 1e-100 sigma_d``.
    * Multiplicity: the family (the m rows) is ordered by the fixed-n
      p-value of the Wald test, i.e. by q descending (ties keep row order);
      step r is tested at ``alpha' = alpha/m`` (Bonferroni),
      ``alpha/(m - r + 1)`` (Holm) or ``r alpha/m`` (BH), and
      ``N*' = N* ((z_{1-alpha'/2} + z_{1-beta}) / (z_{1-alpha/2} + z_{1-beta}))^2``.
      ``q_multiplicity = n / N*'`` is the step's own ratio; the verdict also
      applies the procedure's step rule: Holm (step-down) resolves step r
      only if steps 1..r all have ``q' >= 1``; BH (step-up) resolves steps
      1..k for the largest k with ``q' >= 1``.  So under Holm a pair can have
      ``q_multiplicity >= 1`` and still be unresolved.
    * Anytime-valid: ``N*_anytime`` from
      :func:`mixrank.design.anytime.anytime_n_star` with the two-sided
      normal-mixture boundary of Howard et al. (2021) and rho0 tuned for
      the pair's own N (``n_plan = n``): the boundary is tightest at the
      benchmark's size, where its z-equivalent threshold is ``sqrt(x*)``
      (3.035 at alpha = 0.05, an inflation of 1.549 over 1.960) and
      ``MDE_anytime = (sqrt(x*) + z_{1-beta}) sigma_d / sqrt(n)``.
    * Clustered: ``N*_cluster = N* DE`` with the design effect of the fitted
      mixed model (docs/methods.md §4, ``DE = Var_REML(estimate) /
      (sigma_d^2 / n)``), so ``q_cluster = delta^2 / (K Var_REML)``: the
      Wald verdict with the mixed-model standard error (sigma_d cancels).
      A DE below 1 (REML total variance below the sample variance, e.g. a
      component at the boundary plus rounding) is raised to 1, so that the
      stress never loosens a verdict; such pairs are counted in
      ``attrs["mixrank"]["design_effect_below_1"]``.

    Every stress only tightens: ``alpha' <= alpha``, the anytime threshold
    exceeds ``z_{1-alpha/2}`` and ``max(DE, 1) >= 1``, so a pair resolved
    under any paradigm is resolved at fixed n (checked by property tests).

    Validated against :func:`mixrank.design.power.n_star`,
    :func:`mixrank.design.audit.n_star_scale` and
    :func:`mixrank.design.anytime.anytime_n_star` (tests), and the paper's
    MMLU-Pro example (N* 432 with DE 31.5 gives about 13,600 clustered).

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.
    Howard, S. R., Ramdas, A., McAuliffe, J. & Sekhon, J. (2021).
    Time-uniform, nonparametric, nonasymptotic confidence sequences.
    Ann. Statist. 49(2), 1055-1080.
    Holm, S. (1979). Scand. J. Statist. 6, 65-70.

    Examples
    --------
    >>> import pandas as pd
    >>> tab = pd.DataFrame({"model_a": ["a", "b"], "model_b": ["b", "c"],
    ...                     "estimate": [0.04, 0.01], "n": [2000, 2000],
    ...                     "sigma_d": [0.5, 0.5], "design_effect": [2.0, 2.0]})
    >>> out = resolution_table(tab)
    >>> out[["resolved", "resolved_cluster"]].values.tolist()
    [[True, False], [False, False]]
    >>> out.attrs["mixrank"]["unresolved"]["fixed"]
    '1/2 unresolved'
    """
    if not isinstance(pairs, pd.DataFrame):
        raise DesignError(
            f"pairs must be a DataFrame with one row per pair; received "
            f"{type(pairs).__name__}. Use resolution_fit(fit) to build it from a fit."
        )
    for name, v in (("alpha", alpha), ("power", power)):
        _check_scalar(name, v)
    al = float(check_alpha(alpha))
    pw = float(check_power(power, np.asarray(al)))
    method = _check_multiplicity(multiplicity)
    anytime = _check_flag("anytime", anytime)
    cluster = _check_flag("cluster", cluster)
    for c in ("model_a", "model_b"):
        if c not in pairs.columns:
            raise DesignError(f"the pair table lacks column {c!r}; expected model_a, model_b, "
                              "estimate, n, sigma_d (+ design_effect).")
    if len(pairs) == 0:
        raise DesignError("the pair table is empty; expected at least one pair of models.")
    est = _column(pairs, "estimate", what="the observed difference")
    n = _column(pairs, "n", lo=0, lo_open=True, what="paired cells")
    sd = _column(pairs, "sigma_d", lo=0, what="SD of the cell differences")
    de = (_column(pairs, "design_effect", lo=0, lo_open=True, what="design effect")
          if cluster else None)

    ns, md = _fixed(est, n, sd, al, pw)
    q = _ratio(n, ns)
    cols: dict[str, Any] = {
        "model_a": pairs["model_a"].to_numpy(), "model_b": pairs["model_b"].to_numpy(),
        "estimate": est, "n": pairs["n"].to_numpy(), "sigma_d": sd,
        "mde": md, "n_star": ns, "q": q, "resolved": q >= 1,
    }
    paradigms = ["fixed"]
    if method is not None:
        cols.update(_multiplicity(q, ns, md, n, al, pw, method))
        paradigms.append("multiplicity")
    if anytime:
        cols.update(_anytime(est, n, sd, al, pw))
        paradigms.append("anytime")
    if de is not None:
        if "std_error" in pairs.columns:
            cols["std_error"] = pairs["std_error"].to_numpy(dtype=float)
        cols["design_effect"] = de
        cols.update(_cluster(ns, md, n, de))
        paradigms.append("cluster")
    out = pd.DataFrame(cols)
    key = {"fixed": "resolved", "multiplicity": "resolved_multiplicity",
           "anytime": "resolved_anytime", "cluster": "resolved_cluster"}
    out["resolved_all"] = np.logical_and.reduce([out[key[p]].to_numpy() for p in paradigms])
    counts = {p: _count(out[key[p]].to_numpy()) for p in paradigms}
    counts["all"] = _count(out["resolved_all"].to_numpy())
    n_unres = {p: int((~out[key[p]].to_numpy()).sum()) for p in paradigms}
    n_unres["all"] = int((~out["resolved_all"].to_numpy()).sum())
    x_star = float(anytime_x_star(al))
    z_a, z_b = float(z_quantile(1 - al / 2)), float(z_quantile(pw))
    any_meta = None
    if anytime:
        any_meta = {
            "boundary": "two-sided normal mixture (Howard et al. 2021, eq. 14)",
            "rho0": "tune_rho0(n_plan=n): tuned for each pair's own N (the benchmark's size)",
            "inflation": float(anytime_inflation(1.0, al)),
            "threshold_z": float(np.sqrt(x_star)),
            "n_star_factor_at_n_plan": float(((np.sqrt(x_star) + z_b) / (z_a + z_b)) ** 2),
        }
    return tidy(
        out, table="resolution", paradigms=paradigms, unresolved=counts, n_unresolved=n_unres,
        n_pairs=len(out), alpha=al, power=pw, multiplicity=method,
        multiplicity_order="fixed-n Wald p-value (q descending)" if method else None,
        anytime=any_meta,
        design_effect_below_1=int(np.sum(de < 1)) if de is not None else None,
    )


def _family(fit: Any, pairs: Any, models: Sequence[str] | None,
            top: int | None) -> list[tuple[str, str]]:
    scores = fit.model_scores()
    order = sorted(zip(scores["model"].astype(str), scores["estimate"].astype(float)),
                   key=lambda t: (-t[1], t[0]))
    names = [m for m, _ in order]
    if models is not None:
        if isinstance(models, str):
            raise DesignError(f"models must be a list of model names; received the string "
                              f"{models!r}. Wrap it in a list.")
        wanted = [str(m) for m in models]
        unknown = [m for m in wanted if m not in names]
        if unknown:
            raise DesignError(f"models {unknown} are not levels of the fit's comparison factor; "
                              f"available: {names}.")
        if len(set(wanted)) < 2:
            raise DesignError(f"models must name at least two distinct models; received {wanted}.")
        names = [m for m in names if m in set(wanted)]
    if top is not None:
        if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or not 2 <= top:
            raise DesignError(f"top must be a whole number >= 2 (the best `top` models by "
                              f"score); received {top!r}.")
        names = names[: int(top)]
    if isinstance(pairs, str):
        if pairs not in _PAIR_FAMILIES:
            raise DesignError(f"pairs must be 'adjacent' (consecutive models in score order), "
                              f"'all' (every fitted pair) or a list of (model_a, model_b); "
                              f"received {pairs!r}.")
        if pairs == "adjacent":
            return list(zip(names[:-1], names[1:]))
        if pairs == "all":
            fitted = pair_lookup(fit.pairs)
            return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
                    if pair_key(a, b) in fitted]
    if not isinstance(pairs, Sequence):
        raise DesignError(f"pairs must be 'adjacent', 'all' or a list of (model_a, model_b); "
                          f"received {pairs!r}.")
    if models is not None or top is not None:
        raise DesignError(f"models= and top= select the models of an 'adjacent' or 'all' "
                          f"family; with explicit pairs leave them None (received "
                          f"models={models!r}, top={top!r}).")
    out = []
    for pr in pairs:
        if isinstance(pr, str) or not isinstance(pr, Sequence) or len(pr) != 2:
            raise DesignError(f"each pair must be (model_a, model_b); received {pr!r}.")
        a, b = str(pr[0]), str(pr[1])
        unknown = [m for m in (a, b) if m not in names]
        if unknown or a == b:
            raise DesignError(
                f"pair {tuple(pr)!r} must name two different models of the fit; "
                + (f"{unknown} not among {names}." if unknown else "both are the same model.")
            )
        out.append((a, b))
    if not out:
        raise DesignError("pairs is an empty list; pass at least one (model_a, model_b).")
    return out


def resolution_fit(fit: FitResult, *, alpha: float = 0.05, power: float = 0.8,
                   pairs: str | Sequence[tuple[str, str]] = "adjacent",
                   models: Sequence[str] | None = None, top: int | None = None,
                   multiplicity: str | None = "holm", anytime: bool = True,
                   cluster: bool = True) -> pd.DataFrame:
    """Resolution verdict table of a fitted model (``FitResult.resolution``).

    Parameters
    ----------
    fit : FitResult
        From :func:`mixrank.fit`; the pairs of the family must have been
        fitted (fit only those with ``mixrank.fit(..., pairs=[...])`` to save
        time).
    alpha : float, default 0.05
        Two-sided level, in (0, 1).
    power : float, default 0.8
        Target power, in (alpha, 1).
    pairs : {"adjacent", "all"} or sequence of (str, str), default "adjacent"
        The family: ``"adjacent"`` -- consecutive models in score order
        (best first; ``model_a`` is the better-scoring model); ``"all"`` --
        every fitted pair among the selected models (``model_a`` the better);
        or explicit pairs, kept in the orientation given.
    models : sequence of str, optional
        Restrict the family to these models.
    top : int, optional
        Keep only the ``top`` best-scoring models (after ``models``).
    multiplicity, anytime, cluster
        Paradigms, as in :func:`resolution_table`.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`resolution_table`, built from the fit:
        ``estimate`` is the pair's fitted estimate (the fit's estimand,
        oriented ``model_a - model_b``), ``n`` its common cells,
        ``sigma_d`` the sample SD of the cell differences (``PairFit.sigma_d``),
        ``std_error`` the mixed-model SE and ``design_effect`` the pair's
        ``PairFit.design_effect``.  ``attrs["mixrank"]`` adds ``formula``,
        ``estimand``, ``method``, ``pairs`` (``"adjacent"``, ``"all"`` or
        ``"explicit"``), ``family`` (the pairs, as tuples) and
        ``model_order`` (the score order used).

    Raises
    ------
    DesignError
        ``fit`` is not a FitResult; a pair of the family was not fitted;
        unknown models or family; bad ``top``; ``models``/``top`` with
        explicit pairs; and every error of
        :func:`resolution_table`.

    Notes
    -----
    Score order is :meth:`FitResult.model_scores` (each model's score under
    the fit's estimand), ties broken by model name.  The fixed-n,
    multiplicity and anytime paradigms treat the n cells as independent
    (sigma_d); the clustered one uses the fitted random terms, i.e. the
    formula's unit of inference.  See :func:`resolution_table` for the
    formulas.  One estimate serves every paradigm (so that each stress can
    only tighten): in balanced designs all estimands are the plain mean
    difference; in unbalanced ones fit with ``estimand="cells"`` to get the
    leaderboard difference ``p_A - p_B`` of the paper's fixed-n analysis
    (the default ``gls`` weights subjects by their information).

    Validated against :func:`resolution_table` on the same numbers and, on
    ChemBench, by the tightening of every paradigm (tests).

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.

    Examples
    --------
    >>> import mixrank
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> tab = res.resolution(pairs="adjacent")
    >>> list(tab.attrs["mixrank"]["unresolved"])
    ['fixed', 'multiplicity', 'anytime', 'cluster', 'all']
    """
    check_fit(fit, " For your own numbers use resolution_table().")
    family = _family(fit, pairs, models, top)
    if not family:
        raise DesignError(f"the family is empty: no fitted pair among the selected models "
                          f"with pairs={pairs!r}. Fit the pairs first (mixrank.fit(..., "
                          f"pairs=None) fits all).")
    lookup = pair_lookup(fit.pairs)
    rows = []
    missing = []
    for a, b in family:
        p = lookup.get(pair_key(a, b))
        if p is None or a == b:
            missing.append((a, b))
            continue
        sign = 1.0 if p.model_a == a else -1.0
        rows.append(dict(model_a=a, model_b=b, estimate=sign * p.estimate, n=p.n,
                         sigma_d=p.sigma_d, std_error=p.std_error,
                         design_effect=p.design_effect))
    if missing:
        raise DesignError(
            f"{len(missing)} pair(s) of the {pairs!r} family were not fitted, e.g. "
            f"{missing[:3]}; refit with mixrank.fit(..., pairs=[...]) including them "
            f"(or pairs=None for all)."
        )
    table = pd.DataFrame(rows)
    out = resolution_table(table, alpha=alpha, power=power, multiplicity=multiplicity,
                           anytime=anytime, cluster=cluster)
    meta = dict(out.attrs["mixrank"])
    scores = fit.model_scores().sort_values(["estimate", "model"], ascending=[False, True])
    meta.update(formula=fit.frame.spec.formula, estimand=fit.estimand, method=fit.method,
                pairs=pairs if isinstance(pairs, str) else "explicit",
                family=[tuple(x) for x in family],
                model_order=scores["model"].astype(str).tolist())
    out.attrs["mixrank"] = meta
    return out
