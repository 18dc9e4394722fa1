"""Sensitivity of the clustered verdict: leave-one-out, cluster bootstrap, other clusterings (design stage).

Stage: design (on top of a fitted model; refits with the native engine).
Inputs: a :class:`~mixrank.results.FitResult`, the judged pairs (as in
:meth:`FitResult.resolution`) and the kind of check.
Outputs: a tidy table with one row per (replicate, pair) -- the estimate, its
variances, q and the fixed-n and clustered verdicts in that replicate -- or,
with ``summary=True``, one row per (check, pair) with the verdict's
stability (:func:`stability`).
Contents (docs/sensitivity.md): :func:`sensitivity_of` (``kind="loso"``,
``"bootstrap"``, ``"clusterings"``), :func:`stability`, :data:`KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from mixrank._deprecate import former_keywords, former_names
from mixrank._progress import Reporter, as_progress
from mixrank._util import as_rng, check_max_draws, did_you_mean, tidy
from mixrank.design.checks import check_alpha, check_fit, check_power, z_quantile, z_upper
from mixrank.design.estimand import pair_inputs_from
from mixrank.design.sensitivity.fast import fast_rows
from mixrank.design.sensitivity.frames import (
    choose_unit,
    regroup_frame,
    restrict_models,
    unit_codes,
)
from mixrank.design.sensitivity.oneway import level_sums, oneway_fit
from mixrank.design.sensitivity.refit import MakeReplicate, refit, replicate_rows
from mixrank.design.sensitivity.stability import stability
from mixrank.errors import DesignError, OptionError
from mixrank.frame import Frame
from mixrank.inference.keywords import alpha_from, former, unexpected_keywords

__all__ = ["sensitivity_of", "stability", "KINDS"]

#: The checks, in the order they are run when several are asked for.
KINDS = ("loso", "bootstrap", "clusterings")
#: Which path the last run of each replicate check took (for ``attrs["mixrank"]["engine_path"]``).
_PATHS: dict[str, str] = {}


def _k(alpha: float, power: float) -> float:
    return float((z_upper(alpha / 2) + z_quantile(power)) ** 2)


def _rows_from_fits(fit: Any, frame: Frame, judged: list[tuple[str, str]], *, kind: str,
                    replicate: int, label: str) -> list[dict]:
    """One row per pair from an engine refit of ``frame`` (NaN where it could not be fitted)."""
    fits = refit(frame, judged, method=fit.method, estimand=fit.estimand)
    done = [p for p in fits if p is not None]
    rows = []
    for (a, b), p in zip(judged, fits):
        row = dict(kind=kind, replicate=replicate, label=label, model_a=a, model_b=b)
        if p is None:
            rows.append(row)
            continue
        x = pair_inputs_from(frame, done, a, b, method=fit.method, estimand=fit.estimand)
        row.update(estimate=x["estimate"], n=x["n"], sigma_d=x["sigma_d"],
                   weight_factor=x["weight_factor"], variance=x["std_error"] ** 2)
        rows.append(row)
    return rows


def _finish(rows: list[dict], kk: float, full: pd.DataFrame) -> pd.DataFrame:
    """q, q_cluster and verdicts from estimate / variances; sign agreement with the full fit."""
    t = pd.DataFrame(rows)
    for c in ("estimate", "n", "sigma_d", "weight_factor", "variance"):
        if c not in t:
            t[c] = np.nan
    est, n = t["estimate"].to_numpy(float), t["n"].to_numpy(float)
    iid = t["sigma_d"].to_numpy(float) ** 2 * t["weight_factor"].to_numpy(float) / n
    var = t["variance"].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        t["std_error"] = np.sqrt(var)
        t["variance_ratio"] = var / iid
        t["design_effect"] = t["variance_ratio"]   # former name of variance_ratio: one release
        t["q"] = est**2 / (kk * iid)
        t["q_cluster"] = est**2 / (kk * np.maximum(var, iid))
    ok = np.isfinite(t["q"].to_numpy(float))
    t["resolved"] = np.where(ok, t["q"] >= 1, False)
    t["resolved_cluster"] = np.where(ok, t["q_cluster"] >= 1, False)
    # the full fit's row of each replicate row, matched on (model_a, model_b) by the index
    ref = full.set_index(["model_a", "model_b"])["estimate"]
    ref_sign = np.sign(ref.loc[list(zip(t["model_a"], t["model_b"]))].to_numpy(float))
    t["same_sign"] = [bool(np.sign(e) == s) if np.isfinite(e) else False
                      for e, s in zip(est, ref_sign)]
    t["fitted"] = ok
    return t.drop(columns=["variance"])


def _replicate_rows(kind: str, labels: Sequence[str], make: MakeReplicate, fit: Any,
                    frame: Frame, judged: list[tuple[str, str]], unit: str,
                    progress: Callable[[int], Any] | None,
                    plan: tuple[str, np.ndarray] | None = None) -> list[dict]:
    """Rows of the judged pairs on each replicate: from per-cluster sums where the structure
    allows (``plan``, docs/sensitivity.md "Several random terms"), else refits ("Speed")."""
    res = None if plan is None else fast_rows(fit, frame, judged, unit, plan, make, progress)
    _PATHS[kind] = "engine" if res is None else "per-cluster sums"
    if res is None:
        res = replicate_rows(frame, judged, len(labels), make, unit=unit, method=fit.method,
                             estimand=fit.estimand, progress=progress, full=fit.pairs)
    return [dict(kind=kind, replicate=i + 1, label=label, model_a=a, model_b=b, **r)
            for i, (label, per_pair) in enumerate(zip(labels, res))
            for (a, b), r in zip(judged, per_pair)]


def _loso(fit: Any, frame: Frame, judged: list[tuple[str, str]], unit: str | None,
          progress: Callable[[int], Any] | None = None) -> list[dict]:
    name, codes = unit_codes(frame, unit)
    levels = np.unique(codes)
    if len(levels) < 3:
        raise DesignError(f"leave-one-out over {name!r} needs at least 3 levels (2 stay to "
                          f"estimate its variance); the data have {len(levels)}.")
    labels = [str(frame.term_labels[name][lev]) for lev in levels]
    return _replicate_rows("loso", labels, lambda i: (np.flatnonzero(codes != levels[i]), None),
                           fit, frame, judged, name, progress, ("loso", levels))


def _pair_cells(frame: Frame, a: str, b: str, codes: np.ndarray) -> tuple[np.ndarray, ...]:
    j, k = frame.model_index(a), frame.model_index(b)
    m = frame.common_mask(j, k)
    return frame.scores[m, j] - frame.scores[m, k], codes[m]


def _fast_rows(kind: str, label: str, a: str, b: str, r: dict[str, np.ndarray]) -> list[dict]:
    return [dict(kind=kind, replicate=i + 1, label=label, model_a=a, model_b=b,
                 estimate=r["estimate"][i], n=r["n"][i], sigma_d=r["sigma_d"][i],
                 weight_factor=r["weight_factor"][i], variance=r["variance"][i])
            for i in range(len(r["n"]))]


def _bootstrap(fit: Any, frame: Frame, judged: list[tuple[str, str]], unit: str | None,
               B: int, gen: np.random.Generator,
               progress: Callable[[int], Any] | None = None) -> list[dict]:
    name, codes = unit_codes(frame, unit)
    T = frame.term_levels[name]
    draws = gen.integers(0, T, size=(B, T))
    if len(frame.spec.random) == 1 and fit.method == "reml":
        rows: list[dict] = []
        for a, b in judged:                      # fast path: one random term, same draws
            d, c = _pair_cells(frame, a, b, codes)
            m, s, ss = level_sums(d, c, T)
            r = oneway_fit(m[draws], s[draws], ss[draws], estimand=fit.estimand)
            rows += _fast_rows("bootstrap", "draw", a, b, r)
        if progress is not None:
            progress(B)
        return rows
    members = [np.flatnonzero(codes == lev) for lev in range(T)]

    def make(i: int) -> tuple[np.ndarray, np.ndarray]:   # general path: refit every draw
        idx = np.concatenate([members[u] for u in draws[i]])
        copy = np.concatenate([np.full(len(members[u]), t) for t, u in enumerate(draws[i])])
        return idx, copy

    return _replicate_rows("bootstrap", ["draw"] * B, make, fit, frame, judged, name, progress,
                           ("bootstrap", draws))


def _groupings(frame: Frame, groupings: Any) -> dict[str, np.ndarray]:
    if groupings is None:
        return {}
    if isinstance(groupings, str):
        groupings = [groupings]
    out: dict[str, np.ndarray] = {}
    items = groupings.items() if isinstance(groupings, Mapping) else [(g, None) for g in groupings]
    for key, value in items:
        name = str(key)
        if value is None:
            if name not in frame.cells.columns:
                raise DesignError(f"grouping {name!r} is not a pairing key of the cells; "
                                  f"available: {list(frame.cells.columns)}. Pass other "
                                  "groupings as a mapping name -> one label per cell.")
            out[name] = frame.cells[name].to_numpy()
        else:
            out[name] = np.asarray(value)
        if not name.isidentifier():
            raise DesignError(f"grouping name {name!r} must be a plain identifier (letters, "
                              "digits, underscores), e.g. 'topic_group'.")
    return out


def _clusterings(fit: Any, frame: Frame, judged: list[tuple[str, str]], unit: str | None,
                 groupings: Any, n_random: int,
                 gen: np.random.Generator) -> list[dict]:
    rows: list[dict] = []
    for name, labels in _groupings(frame, groupings).items():
        rows += _rows_from_fits(fit, regroup_frame(frame, name, labels), judged,
                                kind="clusterings", replicate=0, label=name)
    name, codes = unit_codes(frame, unit)
    perms = np.stack([gen.permutation(codes) for _ in range(n_random)])   # same cluster sizes
    T = frame.term_levels[name]
    for a, b in judged:
        j, k = frame.model_index(a), frame.model_index(b)
        mask = frame.common_mask(j, k)
        d = frame.scores[mask, j] - frame.scores[mask, k]
        sums = [level_sums(d, p[mask], T) for p in perms]
        m, s, ss = (np.stack([x[i] for x in sums]) for i in range(3))
        rows += _fast_rows("clusterings", "random", a, b,
                           oneway_fit(m, s, ss, estimand=fit.estimand))
    return rows


def _ticker(rep: Reporter, total: int) -> Callable[[int], None]:
    """``tick(k)``: ``k`` more replicates done, reported to ``rep`` as ``(done, total)``."""
    done = [0]

    def tick(k: int) -> None:
        done[0] += k
        rep(done[0], total)

    return tick


def _kinds(kind: Any) -> list[str]:
    ks = [kind] if isinstance(kind, str) else list(kind)
    ks = [k.strip() for x in ks for k in str(x).split(",") if k.strip()]
    bad = [k for k in ks if k not in KINDS]
    if bad or not ks:
        hint = did_you_mean(bad[0], KINDS) if bad else ""
        raise OptionError(f"kind must be one of {list(KINDS)} (or several, e.g. "
                          f"'loso,bootstrap'); received {kind!r}{hint}.")
    return [k for k in KINDS if k in ks]


def _whole(name: str, value: Any, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise DesignError(f"{name} must be a whole number >= {lo}; received {value!r}.")
    check_max_draws(name, value, DesignError)
    return int(value)


@former_keywords
def sensitivity_of(fit: Any, kind: str | Sequence[str] = "loso", *,
                    pairs: str | Sequence[tuple[str, str]] | None = None,
                    models: Sequence[str] | None = None, top: int | None = None,
                    level: float | None = None, power: float = 0.8, unit: str | None = None,
                    draws: int = 1000, groupings: Any = None, n_random: int = 200,
                    rng: Any = None, summary: bool = False,
                    progress: Any = None, **old: Any) -> pd.DataFrame:
    """How robust is the clustered verdict? Refit the judged pairs under perturbed clusterings.

    Parameters
    ----------
    fit : FitResult
        From :func:`mixrank.fit` with the judged pairs fitted.
    kind : {"loso", "bootstrap", "clusterings"} or a list / comma-separated string
        ``"loso"``: leave one level of the unit out and refit (one replicate
        per level); ``"bootstrap"``: cluster bootstrap over the unit's levels
        (B replicates; a level drawn twice counts as two levels);
        ``"clusterings"``: the clustered verdict with each grouping in
        ``groupings`` as the only random term, and with ``n_random`` random
        clusterings of the cells that keep the unit's cluster sizes (the null
        reference: their design effect centres on 1).
    pairs, models, top
        The judged, as in :meth:`FitResult.resolution`.
    level : float, optional
        Confidence level of the verdicts, default the fit's (two-sided
        ``alpha = 1 - level``; former keyword ``alpha=``, deprecated).
    power : float
        Target power of the verdicts.
    unit : str, optional
        The random term to leave out / resample / permute; default the
        formula's only one, or with several the one with the fewest levels
        among those with at least 3 (the binding unit; docs/messy.md §5).
        ``attrs["mixrank"]["unit_reason"]`` says which and why.
    draws : int, default 1000
        Bootstrap replicates (former name ``B=``, deprecated).
    groupings : str, sequence of str or mapping, optional
        Other clusterings for ``"clusterings"``: names of pairing-key
        columns, or a mapping ``name -> one label per cell`` (frame order,
        ``fit.frame.cells``).
    n_random : int, default 200
        Random clusterings.
    rng : Generator or int, optional
        Randomness of the bootstrap and of the random clusterings.
    summary : bool, default False
        Return :func:`stability` of the replicate table instead.
    progress : callable or bool, optional
        Progress of the checks that refit (leave-one-out; the bootstrap with
        several random terms): called as ``progress(done, total)`` in
        replicates, once per check in turn; ``True`` draws a bar on stderr
        (tqdm when installed).

    Returns
    -------
    pandas.DataFrame
        One row per (replicate, pair): ``kind``, ``replicate`` (1, 2, ...; 0
        for a named grouping), ``label`` (the left-out level, ``"draw"``,
        the grouping's name or ``"random"``), ``model_a, model_b`` (as in the
        judged), ``estimate`` (the fit's estimand on the replicate),
        ``n, sigma_d, weight_factor`` (as in the verdict table),
        ``std_error`` (model-based), ``variance_ratio`` (its square over the
        estimand's iid variance; also as ``design_effect``, its former name, for
        one release), ``q`` (fixed n), ``q_cluster``, ``resolved``,
        ``resolved_cluster``, ``same_sign`` (estimate has the full fit's
        sign) and ``fitted`` (False where the pair could not be fitted on
        the replicate, e.g. no common cells left).  ``attrs["mixrank"]``
        holds ``kinds``, ``unit``, ``judged``, ``alpha``, ``power``,
        ``estimand``, ``B``, ``n_random``, ``engine_path`` per kind and
        ``full`` (the full fit's verdict rows as records).

    Raises
    ------
    DesignError
        Unknown kind; no random term (and no ``unit``); a unit with fewer
        than 3 levels (loso); bad B / n_random; unknown grouping columns;
        every error of :meth:`FitResult.resolution` for the judged pairs.

    Notes
    -----
    Each replicate refits the pair's mixed model (the fit's method and
    estimand, always with the native engine) and recomputes ``q = delta^2 / (K sigma_d^2 sum w_c^2)`` and
    ``q_cluster = delta^2 / (K max(Var, iid))`` as in the verdict table
    (docs/sensitivity.md).  With one random term and REML, bootstrap and
    random clusterings use a vectorised one-way REML
    (:mod:`mixrank.design.sensitivity.oneway`, checked against the engine);
    with several terms, leave-one-out and the bootstrap use per-cluster sums
    where the structure allows (:mod:`mixrank.design.sensitivity.fast`,
    checked against fresh fits; ``engine_path`` says which); otherwise every
    replicate goes through the engine.  Validated: LOSO
    against refits of the raw data without the level and a hand-worked
    4-subject example; random clusterings' design effect against its null
    distribution; the cluster-bootstrap N* against N* x DE on a balanced
    simulated design (tests/design/test_sensitivity.py).

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315 (sensitivity analyses and proposed cluster bootstrap).
    Field, C. A. & Welsh, A. H. (2007). Bootstrapping clustered data.
    J. R. Statist. Soc. B 69(3), 369-390.

    Examples
    --------
    >>> import mixrank
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> tab = res.sensitivity("loso", top=3)
    >>> sorted(tab["label"].unique())[:3]
    ['s01', 's02', 's03']
    """
    check_fit(fit)
    kinds = _kinds(kind)
    B = former(old, "B", "draws", draws, 1000, where="sensitivity")
    alpha = alpha_from(level, old, default=fit.level, where="sensitivity")
    unexpected_keywords(old, "sensitivity")
    al, pw = float(check_alpha(alpha)), float(check_power(power, check_alpha(alpha)))
    B, n_random = _whole("draws", B, 2), _whole("n_random", n_random, 1)
    full = fit.resolution(pairs=pairs, models=models, top=top, level=1.0 - al, power=pw,
                          adjust=None, anytime=False, columns="all")
    judged = [(str(a), str(b)) for a, b in zip(full["model_a"], full["model_b"])]
    frame = restrict_models(fit.frame, sorted({m for p in judged for m in p}))
    uname, why = choose_unit(frame, unit)
    kk, gen = _k(al, pw), as_rng(rng)
    rows: list[dict] = []
    _PATHS.clear()
    fast = len(frame.spec.random) == 1 and fit.method == "reml"
    labels = {"loso": "leave-one-out", "bootstrap": "cluster bootstrap"}
    for k in kinds:
        rep = as_progress(progress, labels.get(k, k))
        tick = None if rep is None else _ticker(rep, B if k == "bootstrap" else
                                                 len(np.unique(unit_codes(frame, unit)[1])))
        try:
            if k == "loso":
                rows += _loso(fit, frame, judged, unit, tick)
            elif k == "bootstrap":
                rows += _bootstrap(fit, frame, judged, unit, B, gen, tick)
            else:
                rows += _clusterings(fit, frame, judged, unit, groupings, n_random, gen)
        finally:
            if rep is not None:
                rep.close()
    out = _finish(rows, kk, full)
    keep = ["model_a", "model_b", "estimate", "n", "sigma_d", "weight_factor", "std_error",
            "variance_ratio", "design_effect", "q", "q_cluster", "resolved", "resolved_cluster"]
    meta = dict(table="sensitivity", kinds=kinds, unit=uname, unit_reason=why,
                n_units=int(frame.term_levels[uname]), judged=judged,
                family=judged,   # former key of ``judged``: kept for one release (CHANGELOG.md)
                alpha=al,
                power=pw, estimand=fit.estimand, method=fit.method, B=B, n_random=n_random,
                formula=fit.frame.spec.formula,
                engine_path={"loso": _PATHS.get("loso", "engine"), "clusterings": "engine "
                             "(named), one-way REML (random)", "bootstrap": "one-way REML"
                             if fast else _PATHS.get("bootstrap", "engine")},
                full=full[keep].to_dict("records"))
    tab = tidy(out, **meta)
    return stability(tab) if summary else tab


#: Former names (``X_fit`` meant "computed from a fit"; ``X_of(fit)`` now): one release.
__getattr__ = former_names('mixrank.design.sensitivity.run', {'sensitivity_fit': 'sensitivity_of'}, globals())
