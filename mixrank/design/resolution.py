"""Resolution verdict tables for a family of pairs (design stage).

Stage: design (on top of a fitted model, or of per-pair numbers).
Inputs: a :class:`~mixrank.results.FitResult` (:func:`resolution_of`) or a
table with one row per pair -- ``model_a, model_b, estimate, n, sigma_d`` and,
for the clustered paradigm, ``variance_ratio`` (:func:`resolution_table`).
Outputs: a tidy verdict table, one row per pair, with N*, MDE, the resolution
ratio q and a resolved/unresolved verdict under four paradigms (fixed n,
multiplicity-adjusted, anytime-valid, clustered), plus the counts per paradigm
in ``attrs["mixrank"]``.
Contents (docs/methods.md §6, "Verdict table"): :func:`resolution_table`,
:func:`resolution_of`.  The closed forms come from
:mod:`mixrank.design.power`, :mod:`mixrank.design.power.audit` (multiplicity) and
:mod:`mixrank.design.anytime` (the normal-mixture boundary).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from mixrank._deprecate import former_keywords, former_names
from mixrank._util import tidy
from mixrank.design.checks import (
    ANYTIME_METHODS,
    check_alpha,
    check_anytime,
    check_fit,
    check_flag,
    check_power,
    check_scalar,
)
from mixrank.design.estimand import pair_inputs
from mixrank.design.judged import default_pairs, select_pairs
from mixrank.design.paradigms import (
    DEPRECATED_COLUMNS,
    anova_design_effect,
    anytime_meta,
    bernoulli_columns,
    cluster_columns,
    fixed_columns,
    multiplicity_columns,
    normal_columns,
    ratio,
    ratio_column,
)
from mixrank.design.verdict_stepdown import FIT_DEFAULT, ORDER, stepdown_steps, verdict_adjust
from mixrank.design.verdict_view import verdict_columns
from mixrank.engine.records import pair_key, pair_lookup
from mixrank.errors import DesignError
from mixrank.inference.keywords import alpha_from, former, unexpected_keywords
from mixrank.inference.multiplicity import adjust_values, check_adjust

if TYPE_CHECKING:
    from mixrank.engine.records import FittedPairs

__all__ = ["resolution_table", "resolution_of", "contrast_lookup", "PARADIGMS",
           "MULTIPLICITY_METHODS", "ANYTIME_METHODS", "DESIGN_EFFECTS"]

#: Paradigm names, in table order (the keys of ``attrs["mixrank"]["unresolved"]``).
PARADIGMS = ("fixed", "multiplicity", "anytime", "cluster")
#: Accepted values of ``adjust=`` (None drops the paradigm); a subset of the one registry
#: :data:`mixrank.inference.multiplicity.ADJUST`.
MULTIPLICITY_METHODS = adjust_values("resolution")
#: ``resolution_fit(design_effect=)``: the default contrast's SE, or the published ANOVA recipe.
DESIGN_EFFECTS = ("model", "anova")


def contrast_lookup(fit: Any) -> dict:
    """``{(model_a, model_b): estimate, std_error, df, p_value, p_adjusted}`` of the fit's
    default contrasts table (``fit.contrasts()``), in both orientations, plus ``"adjust"``:
    the adjustment the table used (read from the fit, never assumed)."""
    tab = fit.contrasts()
    out: dict = {"adjust": tab.attrs.get("mixrank", {}).get("adjust")}
    for r in tab.itertuples(index=False):
        e = dict(estimate=float(r.estimate), std_error=float(r.std_error), df=float(r.df),
                 p_value=float(r.p_value), p_adjusted=float(getattr(r, "p_adjusted", r.p_value)))
        out[(str(r.model_a), str(r.model_b))] = e
        out[(str(r.model_b), str(r.model_a))] = dict(e, estimate=-e["estimate"])
    return out


def _anova_de(fit: Any, p: Any) -> float:
    """The published recipe's design effect of the pair's cell differences over the unit."""
    fr = fit.frame
    mask = fr.common_mask(fr.model_index(p.model_a), fr.model_index(p.model_b))
    d = fr.scores[mask, fr.model_index(p.model_a)] - fr.scores[mask, fr.model_index(p.model_b)]
    unit = fr.spec.unit
    if unit is None:
        return 1.0
    return anova_design_effect(d, np.asarray(fr.term_codes[unit])[mask])[1]


# ----------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------

def _check_multiplicity(method: Any) -> str | None:
    """The multiplicity paradigm's ``adjust=`` (None: no such paradigm)."""
    return check_adjust(method, "resolution", where="resolution", allow_none=True)


def _column(table: pd.DataFrame, name: str, *, lo: float | None = None, lo_open: bool = False,
            what: str) -> np.ndarray:
    if name not in table.columns:
        raise DesignError(
            f"the pair table lacks column {name!r} ({what}); expected columns "
            f"['model_a', 'model_b', 'estimate', 'n', 'sigma_d'] (+ 'variance_ratio', former "
            f"name 'design_effect', with cluster=True). Build it from a fit with resolution_of()."
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


def _count(resolved: np.ndarray) -> str:
    return f"{int((~resolved).sum())}/{len(resolved)} unresolved"


# ----------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------

@former_keywords
def resolution_table(pairs: pd.DataFrame, *, level: float | None = None, power: float = 0.8,
                     adjust: str | None = "holm", anytime: bool | str = "auto",
                     cluster: bool = True, **old: Any) -> pd.DataFrame:
    """Resolution verdicts for a family of pairs under four paradigms.

    Parameters
    ----------
    pairs : pandas.DataFrame
        One row per pair: ``model_a, model_b, estimate`` (the observed
        difference delta-hat, any sign), ``n`` (paired cells, > 0),
        ``sigma_d`` (SD of the per-cell differences, >= 0) and, when
        ``cluster=True``, ``variance_ratio`` (> 0; former name ``design_effect``).  Optional:
        ``weight_factor`` (``n sum w_c^2`` >= 1 of the estimand's weights,
        default 1 = the plain cell mean, see Notes), ``discordance`` (share
        of cells where exactly one model is right, 0/1 scores; needed by the
        Bernoulli e-process) and ``std_error`` (carried through).  Not
        modified.
    level : float, optional
        Confidence level of the family, in (0, 1); default 0.95.  The
        two-sided level is ``alpha = 1 - level`` (former keyword ``alpha=``,
        deprecated).
    power : float, default 0.8
        Target power ``1 - beta``, in (alpha, 1).
    adjust : {"holm", "bonferroni", "bh"} or None, default "holm"
        Correction of the multiplicity paradigm over the family (the rows);
        None leaves that paradigm out (former keyword ``multiplicity=``,
        deprecated).
    anytime : {"auto", "normal", "bernoulli"} or bool, default "auto"
        The anytime-valid paradigm: ``"bernoulli"`` -- the paired-Bernoulli
        mixture e-process (:mod:`mixrank.design.anytime.bernoulli`, needs
        ``discordance``); ``"normal"`` -- the normal-mixture boundary
        (:mod:`mixrank.design.anytime`); ``"auto"`` (or True) -- bernoulli
        when the table has a finite ``discordance`` for every pair, normal
        otherwise; False leaves the paradigm out.
    cluster : bool, default True
        Include the clustered paradigm (needs ``variance_ratio``).

    Returns
    -------
    pandas.DataFrame
        The input order, one row per pair, columns (paradigm blocks only when
        enabled):

        * ``model_a, model_b, estimate, n, sigma_d`` -- as given;
          ``weight_factor`` (1 when not given) and ``variance_iid``
          (``sigma_d^2 weight_factor / n``, the estimand's iid variance);
        * fixed n: ``mde`` (smallest |delta| resolved at n), ``n_star``
          (N*(delta-hat)), ``q = n / n_star``, ``resolved`` (q >= 1);
        * multiplicity: ``alpha_multiplicity`` (the per-comparison level of
          the pair's step), ``n_star_multiplicity``, ``mde_multiplicity``,
          ``q_multiplicity``, ``resolved_multiplicity`` (with the step rule,
          see Notes);
        * anytime-valid: ``discordance`` (bernoulli), ``inflation_anytime``
          (z-equivalent threshold at n over ``z_{1-alpha/2}``),
          ``n_star_anytime, mde_anytime, q_anytime, resolved_anytime``;
        * clustered: ``std_error`` (if given), ``variance_ratio`` (``design_effect``: former
          name, one release), ``n_star_cluster, mde_cluster, q_cluster, resolved_cluster``;
        * ``resolved_all`` -- resolved under every included paradigm.

        ``attrs["mixrank"]`` holds ``unresolved`` (e.g.
        ``{"fixed": "4/9 unresolved", ..., "all": ...}``), ``n_unresolved``
        (the counts as integers), ``n_pairs``, ``paradigms``, ``alpha``,
        ``power``, ``multiplicity``, ``anytime`` (method, boundary, tuning,
        threshold ``inflation`` (median over pairs for bernoulli) and the N*
        factor at the tuning point), ``estimand_variance``, ``variance_ratio_below_1``
        (pairs raised to 1; former key ``design_effect_below_1``) and ``deprecated_columns``.

    Raises
    ------
    DesignError
        alpha outside (0, 1), power outside (alpha, 1), an unknown
        multiplicity method, non-boolean flags, missing or invalid columns
        (n <= 0, sigma_d < 0, variance_ratio <= 0, non-finite values), an
        empty table.

    Notes
    -----
    With ``K = (z_{1-alpha/2} + z_{1-beta})^2`` (docs/methods.md §6) and
    ``s^2 = sigma_d^2 weight_factor`` (docs/sensitivity.md, "One estimand
    per verdict row": for an estimate ``w' d`` of independent cells the
    variance is ``sigma_d^2 sum w_c^2 = s^2 / n``; s = sigma_d for cells):

    * Fixed n: ``N* = K s^2 / delta^2``, ``MDE = sqrt(K) s / sqrt(n)``,
      ``q = n / N* = delta^2 / (K sigma_d^2 sum w_c^2)``; resolved iff
      ``q >= 1`` iff ``|delta| >= MDE``.  A zero
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
    * Anytime-valid, ``"bernoulli"``: the e-process on the discordant cells
      with a ``Beta(a, a)`` prior tuned at ``D = n psi`` discordant cells;
      its z-equivalent threshold at N is ``z_any(N) = max(c(N psi) /
      sqrt(N psi), z_{1-alpha/2})`` (``c`` the boundary on ``|S|``),
      ``MDE_anytime = (z_any(n) + z_{1-beta}) s / sqrt(n)`` and
      ``N*_anytime`` the smallest N with ``|delta| sqrt(N) / s >= z_any(N)
      + z_{1-beta}`` (:func:`mixrank.design.anytime.bernoulli.bernoulli_n_star`).
    * Anytime-valid, ``"normal"``: ``N*_anytime`` from
      :func:`mixrank.design.anytime.anytime_n_star` with the two-sided
      normal-mixture boundary of Howard et al. (2021) and rho0 tuned for
      the pair's own N (``n_plan = n``): the boundary is tightest at the
      benchmark's size, where its z-equivalent threshold is ``sqrt(x*)``
      (3.035 at alpha = 0.05, an inflation of 1.549 over 1.960) and
      ``MDE_anytime = (sqrt(x*) + z_{1-beta}) s / sqrt(n)``.
    * Clustered: ``N*_cluster = N* DE`` with ``DE = variance_ratio`` of the fitted
      mixed model over the estimand's iid variance (``DE = Var_REML(estimate)
      / (sigma_d^2 sum w_c^2)``; docs/methods.md §4 for cells, docs/vocabulary.md), so
      ``q_cluster = delta^2 / (K Var_REML)``: the
      Wald verdict with the mixed-model standard error (sigma_d cancels).
      A DE below 1 (REML total variance below the sample variance, e.g. a
      component at the boundary plus rounding) is raised to 1, so that the
      stress never loosens a verdict; such pairs are counted in
      ``attrs["mixrank"]["variance_ratio_below_1"]``.

    Every stress only tightens: ``alpha' <= alpha``, the anytime threshold
    exceeds ``z_{1-alpha/2}`` and ``max(DE, 1) >= 1``, so a pair resolved
    under any paradigm is resolved at fixed n (checked by property tests).

    Validated against :func:`mixrank.design.power.n_star`,
    :func:`mixrank.design.power.audit.n_star_scale` and
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
    ...                     "sigma_d": [0.5, 0.5], "variance_ratio": [2.0, 2.0]})
    >>> out = resolution_table(tab)
    >>> out[["resolved", "resolved_cluster"]].values.tolist()
    [[True, False], [False, False]]
    >>> out.attrs["mixrank"]["unresolved"]["fixed"]
    '1/2 unresolved'
    """
    where = "resolution_table"
    adjust = former(old, "multiplicity", "adjust", adjust, "holm", where=where)
    check_scalar("level", level if level is not None else 0.95)
    if "alpha" in old:
        check_scalar("alpha", old["alpha"])
    alpha = alpha_from(level, old, default=0.95, where=where)
    unexpected_keywords(old, where, ("level", "power", "adjust", "anytime", "cluster"))
    return _verdicts(pairs, alpha=alpha, power=power, adjust=adjust, anytime=anytime,
                     cluster=cluster)


def _verdicts(pairs: pd.DataFrame, *, alpha: float, power: float, adjust: str | None,
              anytime: bool | str, cluster: bool, steps: Any = None) -> pd.DataFrame:
    """:func:`resolution_table` at the two-sided ``alpha`` (keywords already resolved)."""
    if not isinstance(pairs, pd.DataFrame):
        raise DesignError(
            f"pairs must be a DataFrame with one row per pair; received "
            f"{type(pairs).__name__}. Use resolution_of(fit) to build it from a fit."
        )
    check_scalar("power", power)
    al = float(check_alpha(alpha))
    pw = float(check_power(power, np.asarray(al)))
    method = "stepdown" if steps is not None else _check_multiplicity(adjust)
    cluster = check_flag("cluster", cluster)
    for c in ("model_a", "model_b"):
        if c not in pairs.columns:
            raise DesignError(f"the pair table lacks column {c!r}; expected model_a, model_b, "
                              "estimate, n, sigma_d (+ variance_ratio).")
    if len(pairs) == 0:
        raise DesignError("the pair table is empty; expected at least one pair of models.")
    est = _column(pairs, "estimate", what="the observed difference")
    n = _column(pairs, "n", lo=0, lo_open=True, what="paired cells")
    sd = _column(pairs, "sigma_d", lo=0, what="SD of the cell differences")
    de = (_column(pairs, ratio_column(pairs), lo=0, lo_open=True,
                  what="variance over the iid variance") if cluster else None)
    wf = (_column(pairs, "weight_factor", lo=0, lo_open=True, what="n sum w_c^2 of the "
                  "estimand's weights") if "weight_factor" in pairs.columns
          else np.ones(len(pairs)))
    has_psi = "discordance" in pairs.columns and bool(np.all(np.isfinite(
        pd.to_numeric(pairs["discordance"], errors="coerce"))))
    any_method = check_anytime(anytime, has_psi)
    psi = (_column(pairs, "discordance", lo=0, what="discordance p10 + p01")
           if any_method == "bernoulli" else None)
    sde = sd if "weight_factor" not in pairs.columns else sd * np.sqrt(wf)

    ns, md = fixed_columns(est, n, sde, al, pw)
    q = ratio(n, ns)
    cols: dict[str, Any] = {
        "model_a": pairs["model_a"].to_numpy(), "model_b": pairs["model_b"].to_numpy(),
        "estimate": est, "n": pairs["n"].to_numpy(), "sigma_d": sd, "weight_factor": wf,
        "variance_iid": sde**2 / n, "mde": md, "n_star": ns, "q": q, "resolved": q >= 1,
    }
    paradigms = ["fixed"]
    if method is not None:
        cols.update(multiplicity_columns(q, ns, md, n, al, pw, method, steps=steps))
        paradigms.append("multiplicity")
    if any_method == "normal":
        cols.update(normal_columns(est, n, sde, al, pw))
    elif any_method == "bernoulli" and psi is not None:
        cols.update(bernoulli_columns(est, n, sde, psi, al, pw))
    if any_method is not None:
        paradigms.append("anytime")
    dfs = (pd.to_numeric(pairs["df"], errors="coerce").to_numpy(dtype=float)
           if "df" in pairs.columns else None)
    if de is not None:
        if "std_error" in pairs.columns:
            cols["std_error"] = pairs["std_error"].to_numpy(dtype=float)
        if dfs is not None:
            cols["df"] = dfs
        cols["variance_ratio"] = de
        cols["design_effect"] = de        # former name of variance_ratio: one release
        cols.update(cluster_columns(ns, md, n, de, dfs, al, pw))
        paradigms.append("cluster")
    out = pd.DataFrame(cols)
    key = {"fixed": "resolved", "multiplicity": "resolved_multiplicity",
           "anytime": "resolved_anytime", "cluster": "resolved_cluster"}
    conj = [out[key[p]].to_numpy() for p in paradigms]
    if "p_adjusted" in pairs.columns:      # the default adjusted contrast (resolution_fit)
        out["p_adjusted"] = pd.to_numeric(pairs["p_adjusted"], errors="coerce").to_numpy()
        out["rejected"] = out["p_adjusted"].to_numpy() < al
        conj.append(out["rejected"].to_numpy())
    out["resolved_all"] = np.logical_and.reduce(conj)
    counts = {p: _count(out[key[p]].to_numpy()) for p in paradigms}
    counts["all"] = _count(out["resolved_all"].to_numpy())
    n_unres = {p: int((~out[key[p]].to_numpy()).sum()) for p in paradigms}
    n_unres["all"] = int((~out["resolved_all"].to_numpy()).sum())
    any_meta = anytime_meta(any_method, out, al, pw)
    return tidy(
        out, table="resolution", paradigms=paradigms, unresolved=counts, n_unresolved=n_unres,
        n_pairs=len(out), alpha=al, power=pw, multiplicity=method,
        multiplicity_order=ORDER.get(str(method), ORDER["holm"]) if method else None,
        anytime=any_meta,
        estimand_variance="sigma_d^2 * weight_factor / n (the estimand's iid variance)",
        variance_ratio_below_1=int(np.sum(de < 1)) if de is not None else None,
        deprecated_columns=DEPRECATED_COLUMNS, design_effect_below_1=None if de is None  # former
        else int(np.sum(de < 1)),
    )


@former_keywords
def resolution_of(fit: FittedPairs, *, level: float | None = None, power: float = 0.8,
                   pairs: str | Sequence[tuple[str, str]] | None = None,
                   models: Sequence[str] | None = None, top: int | None = None,
                   adjust: Any = FIT_DEFAULT, anytime: bool | str = "auto",
                   cluster: bool | None = None, design_effect: str | None = None,
                   columns: str | Sequence[str] = "default", **old: Any) -> pd.DataFrame:
    """Resolution verdict table of a fitted model (``FitResult.resolution``).

    Parameters
    ----------
    fit : FitResult
        From :func:`mixrank.fit`; the pairs of the family must have been
        fitted (fit only those with ``mixrank.fit(..., pairs=[...])`` to save
        time).
    level : float, optional
        Confidence level; default the fit's ``level`` (two-sided ``alpha =
        1 - level``, 0.05 for the default fit; former keyword ``alpha=``,
        deprecated).
    power : float, default 0.8
        Target power, in (alpha, 1).
    pairs : {"adjacent", "all"}, sequence of (str, str) or None, default None
        The family: ``"adjacent"`` -- consecutive models in score order
        (best first; ``model_a`` is the model the pair's own contrast
        favours, so every estimate is >= 0); ``"all"`` -- every fitted pair
        among the selected models (oriented likewise); or explicit pairs,
        kept in the orientation given.  None: the fitted pairs of a fit
        restricted with ``fit(..., pairs=)``, else ``"adjacent"``
        (docs/messy.md §4).
    models : sequence of str, optional
        Restrict the family to these models.
    top : int, optional
        Keep only the ``top`` best-scoring models (after ``models``).
    adjust, anytime, cluster
        Paradigms, as in :func:`resolution_table` (``adjust``: former
        keyword ``multiplicity=``, deprecated; ``cluster`` None: True); ``anytime="auto"`` is the
        Bernoulli e-process when every pair's cell scores are 0/1.  ``adjust="stepdown"``
        (the default where ``fit.contrasts()`` defaults to it, else ``"holm"``): see Notes.
    design_effect : {"model", "anova"}, optional
        The clustered column's ``variance_ratio``: ``"model"`` -- the default
        contrast's own SE (CR2 at the unit where it applies) over the
        estimand's iid variance, tested with the contrast's df; ``"anova"``
        -- the published recipe, ``DE = 1 + (m_bar - 1) ICC`` with the
        one-way ANOVA ICC of the pair's cell differences over the unit
        (:func:`mixrank.design.paradigms.anova_design_effect`), normal
        reference, to reproduce published verdict tables.
    columns : {"default", "all"} or list of str, default "default"
        The view (:func:`mixrank.design.verdict_view.verdict_columns`): the
        default 12 to 14 columns, every column, or the columns named.

    Returns
    -------
    pandas.DataFrame
        With ``columns="all"``, the columns of :func:`resolution_table`, built from the fit:
        ``estimate`` is the pair's fitted estimate (the fit's estimand,
        oriented ``model_a - model_b``), ``n`` its common cells,
        ``sigma_d`` the sample SD of the cell differences (``PairFit.sigma_d``),
        ``weight_factor`` ``n sum w_c^2`` of the estimand's weights
        (:func:`mixrank.design.estimand.weight_factor`), ``discordance``
        (0/1 scores), ``std_error`` and ``df`` the default contrast's
        (``fit.contrasts()``: the same numbers as the contrasts table),
        ``variance_ratio = std_error^2 / variance_iid`` (or the ANOVA one),
        ``p_adjusted`` (the default contrast's adjusted p-value) and
        ``rejected`` (``p_adjusted < alpha``).  The paradigm columns are
        separate stress tests of the fixed-n verdict; ``resolved_all`` is
        their conjunction together with ``rejected``, so a pair resolved
        under all is one the default adjusted contrast rejects.
        ``attrs["mixrank"]`` adds ``formula``,
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
    the fit's estimand), ties broken by model name.  One estimand per
    row (docs/sensitivity.md): every paradigm tests the fit's estimate
    ``w' d``; the fixed-n, multiplicity and anytime paradigms treat the n
    cells as independent, with that estimand's iid variance ``sigma_d^2
    sum w_c^2``, and the clustered one uses its variance under the fitted
    random terms (the formula's unit of inference).  So for ``gls`` and
    ``units``, ``q = delta^2 / (K sigma_d^2 sum w_c^2)``; for ``cells``
    (``sum w_c^2 = 1/n``) the table is the paper's: fit with
    ``estimand="cells"`` to reproduce its numbers (the leaderboard
    difference ``p_A - p_B``).  See :func:`resolution_table` for the
    formulas.  The estimand is in ``attrs["mixrank"]["estimand"]``.

    ``adjust="stepdown"``: the multiplicity paradigm's order and per-step levels
    come from the unit sign-flip step-down over the family
    (:mod:`mixrank.design.verdict_stepdown`), in place of Holm's.

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
    where = "resolution"
    adjust = verdict_adjust(fit, former(old, "multiplicity", "adjust", adjust, FIT_DEFAULT,
                                        where=where))
    alpha = alpha_from(level, old, default=fit.level, where=where)
    unexpected_keywords(old, where)
    if isinstance(columns, str) or not isinstance(columns, Sequence) or not columns:
        verdict_columns(pd.DataFrame(), columns)     # a bad view: refused before the verdicts
    design_effect = "model" if design_effect is None else design_effect
    if design_effect not in DESIGN_EFFECTS:
        from mixrank._util import did_you_mean
        from mixrank.errors import OptionError
        raise OptionError(f"design_effect={design_effect!r}"
                          f"{did_you_mean(design_effect, DESIGN_EFFECTS)}; expected one of "
                          f"{list(DESIGN_EFFECTS)}")
    contrast = contrast_lookup(fit)
    cluster = True if cluster is None else cluster
    pairs = default_pairs(fit, pairs, models, top)
    family = select_pairs(fit, pairs, models, top)
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
        row = {k: v for k, v in pair_inputs(fit, a, b).items() if k != "design_effect"}  # former
        c = contrast.get((a, b))
        if c is not None:              # one estimate, SE and df per pair: the contrasts'
            iid = row["sigma_d"] ** 2 * row["weight_factor"] / row["n"]
            row.update(estimate=c["estimate"], std_error=c["std_error"], df=c["df"],
                       p_adjusted=c["p_adjusted"])
            de = c["std_error"] ** 2 / iid if iid > 0 else float("nan")
            if np.isfinite(de) and de > 0:   # else (a zero SE) the model-based DE stays
                row["variance_ratio"] = de
        if design_effect == "anova":
            row.update(variance_ratio=_anova_de(fit, p), df=float("inf"))
        row["observed"] = row["estimate"]
        if p.degenerate:
            # a degenerate pair (no estimable variance) is judged as no evidence: delta 0
            row.update(estimate=0.0, variance_ratio=1.0)
        rows.append(row)
    if missing:
        raise DesignError(
            f"{len(missing)} pair(s) of the {pairs!r} family were not fitted, e.g. "
            f"{missing[:3]}; refit with mixrank.fit(..., pairs=[...]) including them "
            f"(or pairs=None for all)."
        )
    table = pd.DataFrame(rows)
    if table["discordance"].isna().any():
        table = table.drop(columns="discordance")
    observed = table.pop("observed").to_numpy()
    out = _verdicts(table, alpha=alpha, power=power, adjust=adjust, anytime=anytime,
                    cluster=cluster, steps=stepdown_steps(fit, table, alpha, adjust))
    out["estimate"] = observed
    meta = dict(out.attrs["mixrank"])
    scores = fit.model_scores().sort_values(["estimate", "model"], ascending=[False, True])
    unit = fit.frame.spec.unit
    if meta.get("anytime") and unit is not None:
        meta["anytime"] = dict(meta["anytime"], null=(
            f"cell-level: the anytime column treats cells as independent, so it tests the "
            f"per-cell null, not the null at the unit {unit!r}; with effects that vary by "
            f"{unit} it can cross when the average gap is 0 (docs/methods.md, 'Validity with "
            "few units'). Use the cluster column for the unit-level verdict."))
    meta.update(design_effect=design_effect, contrasts_adjust=contrast.get("adjust"),
                columns=("each paradigm is a separate stress test of the fixed-n verdict; "
                         "resolved_all is their conjunction with the default adjusted "
                         "contrast's rejection ('rejected')"))
    meta.update(formula=fit.frame.spec.formula, estimand=fit.estimand, method=fit.method,
                pairs=pairs if isinstance(pairs, str) else "explicit",
                family=[tuple(x) for x in family],
                model_order=scores["model"].astype(str).tolist())
    out.attrs["mixrank"] = meta
    return verdict_columns(out, columns)


#: Former names (``X_fit`` meant "computed from a fit"; ``X_of(fit)`` now): one release.
__getattr__ = former_names('mixrank.design.resolution', {'resolution_fit': 'resolution_of'}, globals())
