"""Design planning from fitted variance components (design stage).

Stage: design (on top of a fitted model).
Inputs: a :class:`~mixrank.results.FitResult`, a target difference ``delta``
and a hypothetical balanced design (T subjects, Q questions per subject,
V prompts; default: the fitted data's).
Outputs: a tidy table of alternative designs -- the current one, a grid
varying one factor at a time, and the smallest number of subjects,
questions or prompts that resolves ``delta`` with the others held fixed,
flagged ``unreachable`` when no number of that factor can do it.
Contents (docs/methods.md §6, "Design planning"): :func:`plan_of` and the
helper :func:`plan_divisors` (which factors of the design divide each
variance component).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from mixrank._deprecate import former_keywords, former_names
from mixrank._util import tidy
from mixrank.design.checks import (
    check_alpha,
    check_delta,
    check_fit,
    check_power,
    z_quantile,
    z_upper,
)
from mixrank.engine.records import pair_key, pair_lookup
from mixrank.errors import DesignError, MixrankWarning
from mixrank.inference.keywords import alpha_from, unexpected_keywords

if TYPE_CHECKING:
    from mixrank.engine.records import FittedPairs

__all__ = ["plan_of", "plan_divisors", "smallest_count", "MAX_COUNT", "ROLES"]

#: The design factors a hypothetical design is described by, and their argument names.
ROLES = ("subject", "question", "prompt")
_ARG = {"subject": "subjects", "question": "questions", "prompt": "prompts"}
_SYM = {"subject": "T", "question": "Q", "prompt": "V"}


# ----------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------

def _whole(name: str, value: Any) -> int | None:
    if value is None:
        return None
    ok = (not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, float, np.integer,
                                                                          np.floating))
          and math.isfinite(float(value)) and float(value) >= 1
          and float(value) == round(float(value)))
    if not ok:
        raise DesignError(
            f"{name} must be a whole number >= 1 (the interval [1, inf)); received {value!r}. "
            f"Pass e.g. {name}=20, or None to keep the fitted design's value."
        )
    return int(round(float(value)))


def _scalar(name: str, value: Any) -> None:
    if np.ndim(value) != 0:
        raise DesignError(f"{name} must be a single number; received shape {np.shape(value)}.")


def _role_map(frame: Any, roles: Mapping[str, str] | None) -> dict[str, str]:
    """Column -> role for the frame's pairing keys."""
    mapping = {r: r for r in ROLES}
    if roles is not None:
        if not isinstance(roles, Mapping):
            raise DesignError(f"roles must be a dict {{column: role}} with role in {list(ROLES)}; "
                              f"received {type(roles).__name__}.")
        for col, role in roles.items():
            if role not in ROLES:
                raise DesignError(f"roles[{col!r}] = {role!r}; expected one of {list(ROLES)}.")
            if col not in frame.pair_by:
                raise DesignError(f"roles names column {col!r}, which is not a pairing key of the "
                                  f"fit; pairing keys: {list(frame.pair_by)}.")
        mapping = {k: v for k, v in mapping.items() if k not in roles.values()}
        mapping.update(dict(roles))
    out = {c: mapping[c] for c in frame.pair_by if c in mapping}
    seen: dict[str, str] = {}
    for c, r in out.items():
        if r in seen:
            raise DesignError(f"columns {seen[r]!r} and {c!r} both play the role {r!r}; map each "
                              f"role to one column with roles={{...}}.")
        seen[r] = c
    return out


def plan_divisors(fit: Any, *, roles: Mapping[str, str] | None = None,
                  pair: tuple[str, str] | None = None) -> dict[str, tuple[str, ...]]:
    """Which design factors divide each variance component of the fit.

    Parameters
    ----------
    fit : FitResult
        A REML fit.
    roles : dict, optional
        Column -> role (``"subject"``, ``"question"`` or ``"prompt"``) for
        columns not conventionally named, e.g. ``{"task": "subject"}``.
    pair : (str, str), optional
        The pair whose common cells decide nesting; default all cells.

    Returns
    -------
    dict
        Component name (as in ``FitResult.variance_components``, including
        ``"residual"``) -> tuple of roles whose counts divide it, e.g.
        ``{"subject": ("subject",), "subject:question": ("subject",
        "question"), "prompt": ("prompt",), "residual": ("subject",
        "question", "prompt")}``.

    Raises
    ------
    DesignError
        A random term names a column that is not a subject, question or
        prompt (the message names the term), or a pairing key with more than
        one level has no role.

    Notes
    -----
    A term's divisor is its number of levels in a balanced design with T
    subjects, Q questions per subject and V prompts: the product of the
    counts of the factors it contains, where a question nested in its
    subject (every question label in one subject, as docs/methods.md §1
    has it) counts T Q levels.  The residual is one cell, so its divisor is
    the product over all pairing keys (T Q V).  Validated by reproducing the
    fitted variance of the estimate at the fitted balanced design (tests).
    """
    frame = fit.frame
    rmap = _role_map(frame, roles)
    mask = _pair_mask(fit, pair)
    cells = frame.cells.loc[mask]
    for term in frame.spec.random:
        bad = [f for f in term.factors if f not in rmap]
        if bad:
            raise DesignError(
                f"random term {term} names column(s) {bad} that are not a subject, question or "
                f"prompt, so its variance cannot be divided by a planned number of levels. Map "
                f"them with roles={{{bad[0]!r}: 'subject' | 'question' | 'prompt'}} or refit "
                f"without the term."
            )
    for col in frame.pair_by:
        if col not in rmap and cells[col].nunique() > 1:
            raise DesignError(
                f"pairing key {col!r} has {cells[col].nunique()} levels but no design role; "
                f"planning describes designs by subjects, questions and prompts. Map it with "
                f"roles={{{col!r}: 'subject' | 'question' | 'prompt'}}."
            )
    role_col = {r: c for c, r in rmap.items()}
    nested = False
    if "subject" in role_col and "question" in role_col:
        per_q = cells.groupby(role_col["question"], observed=True)[role_col["subject"]].nunique()
        nested = bool((per_q <= 1).all())

    def close(rs: set[str]) -> tuple[str, ...]:
        if "question" in rs and nested:
            rs = rs | {"subject"}
        return tuple(r for r in ROLES if r in rs)

    out: dict[str, tuple[str, ...]] = {}
    for term in frame.spec.random:
        out[term.name] = close({rmap[f] for f in term.factors})
    out["residual"] = close(set(rmap.values()))
    return out


def _pair_mask(fit: Any, pair: tuple[str, str] | None) -> np.ndarray:
    frame = fit.frame
    if pair is None:
        return np.ones(frame.n_cells, dtype=bool)
    j, k = frame.model_index(pair[0]), frame.model_index(pair[1])
    return frame.common_mask(j, k)


def _choose_pair(fit: Any, pair: Any) -> tuple[Any, str]:
    if pair is None:
        fits = sorted(fit.pairs, key=lambda p: (p.variance, p.model_a, p.model_b))
        return fits[(len(fits) - 1) // 2], "median variance of the estimate over fitted pairs"
    if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
        raise DesignError(f"pair must be (model_a, model_b); received {pair!r}.")
    found = pair_lookup(fit.pairs).get(pair_key(*pair))
    if found is not None:
        return found, "given"
    raise DesignError(
        f"pair {tuple(pair)!r} was not fitted; fitted pairs include "
        f"{[(p.model_a, p.model_b) for p in fit.pairs[:5]]}. Refit with "
        f"mixrank.fit(..., pairs=[...]) including it, or pass pair=None."
    )


def _base_design(cells: pd.DataFrame, role_col: dict[str, str]) -> dict[str, float]:
    base: dict[str, float] = {}
    if "subject" in role_col:
        base["subject"] = float(cells[role_col["subject"]].nunique())
    if "question" in role_col:
        keys = [role_col[r] for r in ("subject", "question") if r in role_col]
        items = len(cells[keys].drop_duplicates())
        base["question"] = items / base.get("subject", 1.0)
    if "prompt" in role_col:
        base["prompt"] = float(cells[role_col["prompt"]].nunique())
    return base


# ----------------------------------------------------------------------------
# the planner
# ----------------------------------------------------------------------------

#: Counts beyond this (2**53, where floats stop representing every integer) are
#: reported as unreachable rather than searched for.
MAX_COUNT = 2 ** 53


def smallest_count(ok: Callable[[int], bool], start: float) -> int | None:
    """Smallest whole count ``x >= 1`` with ``ok(x)``, for ``ok`` monotone in ``x``.

    ``start`` is the closed-form estimate (exact up to rounding).  The search
    is bounded: doubling from ``start`` to bracket the answer, then bisection
    (at most about 2 log2(MAX_COUNT) evaluations).  Returns None when no
    count up to :data:`MAX_COUNT` satisfies ``ok``.
    """
    hi = min(max(1, math.ceil(start)), MAX_COUNT) if math.isfinite(start) else MAX_COUNT
    while not ok(hi):
        if hi >= MAX_COUNT:
            return None
        hi = min(MAX_COUNT, 2 * hi)
    lo = 0  # ok(lo) is False or lo = 0 (counts start at 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


@former_keywords
def plan_of(fit: FittedPairs, delta: float, *, subjects: int | None = None,
             questions: int | None = None, prompts: int | None = None, power: float = 0.8,
             level: float | None = None, pair: tuple[str, str] | None = None,
             roles: Mapping[str, str] | None = None,
             grid: Sequence[float] = (0.5, 1, 2, 4, 8), labels: bool = False,
             **old: Any) -> pd.DataFrame:
    """Plan a balanced design that resolves ``delta`` from fitted components.

    Parameters
    ----------
    fit : FitResult
        A REML fit (``method="reml"``) from :func:`mixrank.fit`.
    delta : float
        The difference to resolve (non-zero; the sign is irrelevant).
    subjects, questions, prompts : int, optional
        The hypothetical design: T subjects, Q questions per subject, V
        prompts (whole numbers >= 1).  Default: the fitted data's (for the
        chosen pair's common cells; Q is the mean number of questions per
        subject, possibly fractional in unbalanced data).
    power : float, default 0.8
        Target power, in (alpha, 1).
    level : float, optional
        Confidence level, default the fit's; the two-sided ``alpha = 1 -
        level`` (former keyword ``alpha=``, deprecated).
    pair : (str, str), optional
        Whose components to use.  Default: the fitted pair with the median
        variance of its estimate (the lower median for an even count).
    roles : dict, optional
        Column -> role (``"subject"``, ``"question"``, ``"prompt"``) for
        columns not named conventionally, e.g. ``{"task": "subject"}``.
    grid : sequence of float, default (0.5, 1, 2, 4, 8)
        Multiples of the design's value tried for each factor.
    labels : bool, default False
        A reference-label budget instead: needs a judge-corrected fit
        (``mixrank.fit(..., gold=)``, whose ``plan`` answers it; docs/judge.md §5).

    Returns
    -------
    pandas.DataFrame
        One row per design, columns:

        * ``kind`` -- ``"current"`` (the fitted data's design), ``"design"``
          (the design you passed, when it differs), ``"grid"`` or
          ``"minimal"`` (the smallest value of ``vary`` that resolves delta);
        * ``vary`` -- the factor varied (``"subjects"``, ``"questions"``,
          ``"prompts"``; ``"none"`` for current/design rows);
        * ``subjects, questions, prompts`` -- T, Q, V (NaN for a factor the
          data do not have; NaN in ``vary`` when unreachable);
        * ``n`` -- cells ``T Q V``;
        * ``variance, std_error`` -- ``Var(mu_hat)`` and its square root;
        * ``mde`` -- ``(z_{1-alpha/2} + z_{1-beta}) std_error``;
        * ``q`` -- resolution ratio ``delta^2 / (K variance)``;
        * ``resolved`` -- ``q >= 1``;
        * ``unreachable`` -- the varied factor cannot resolve delta however
          large, or only beyond ``MAX_COUNT`` (2**53) levels (e.g. a tiny
          delta); the search is bounded either way (False for
          current/design rows);
        * ``limit_std_error`` -- the SE as the varied factor grows without
          bound (NaN for current/design rows);
        * ``model_a, model_b`` -- the pair whose variance components the
          plan uses (``pair``, else the median pair; ``attrs`` say which).

        An unreachable ``minimal`` row has NaN in its ``vary`` column,
        ``n`` and ``variance``, and reports the limit in ``std_error``,
        ``mde`` and ``q`` (the best any number of that factor can do).

        ``attrs["mixrank"]`` holds ``delta, alpha, power``, ``model_a,
        model_b`` and ``pair_choice``, ``components`` (fitted variances),
        ``divisors`` (e.g. ``{"subject": "T", "residual": "T*Q*V"}``),
        ``variance_formula``, ``roles``, ``current`` and ``design`` (T, Q,
        V), ``needed_std_error`` (``|delta| / (z_{1-alpha/2} +
        z_{1-beta})``), ``minimal`` and ``unreachable`` per factor.

    Raises
    ------
    DesignError
        delta = 0 or non-finite; a count that is not a whole number >= 1; a
        count for a factor the data lack; alpha outside (0, 1); power outside
        (alpha, 1); a fit by ``method="aggregate"``; an unfitted pair; a
        random term whose columns do not map onto subject/question/prompt
        (the message names the term); a bad grid.

    Warns
    -----
    MixrankWarning
        When a count is planned for a factor observed at a single level:
        its variance cannot be told apart from the residual, so the planned
        SE assumes that noise averages out over the new levels (optimistic).

    Notes
    -----
    For a balanced design every variance component ``sigma_r^2`` enters the
    variance of the mean difference divided by its number of levels
    (docs/methods.md §6), e.g. for ``(1|subject) + (1|subject:question) +
    (1|prompt)``::

        Var(mu_hat) = s_subject/T + s_subject:question/(T Q) + s_prompt/V
                      + s_residual/(T Q V)

    with divisors from :func:`plan_divisors`.  A comparison is resolved when
    ``z_{1-alpha/2} + z_{1-beta} <= |delta| / SE`` (Wald), i.e. when
    ``Var <= v* = delta^2 / K``.  Holding the other factors fixed,
    ``Var = A/X + B`` in the varied factor X; the smallest whole X is
    ``ceil(A / (v* - B))`` when ``B < v*`` and none exists when ``B >= v*``
    (``unreachable``): e.g. adding prompts cannot fix a subject-dominated
    variance, because ``s_subject/T`` alone stays.  The normal quantile is
    used; with few subjects a t quantile would ask for somewhat more.  In
    unbalanced data the ``current`` row is the balanced design with the same
    T, mean Q and V; the fitted ``Var(mu_hat)`` is somewhat larger when
    cluster sizes vary (docs/methods.md §4).

    Validated against the fitted ``Var(mu_hat)`` (exact at the fitted
    balanced design) and, by seeded simulation, against the empirical SD of
    ``mu_hat`` at a planned design (tests).

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.
    Raudenbush, S. W. (1997). Statistical analysis and optimal design for
    cluster randomized trials. Psychological Methods 2(2), 173-185.

    Examples
    --------
    >>> import mixrank
    >>> res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> tab = res.plan(0.05)
    >>> sorted(set(tab["kind"]))
    ['current', 'grid', 'minimal']
    """
    if labels:
        raise DesignError("plan(labels=True) plans reference labels for a judge-scored "
                          "benchmark: fit with mixrank.fit(..., gold='<label column>') first "
                          "(docs/judge.md §5)")
    check_fit(fit)
    alpha = alpha_from(level, old, default=fit.level, where="plan")
    unexpected_keywords(old, "plan")
    if fit.method != "reml":
        raise DesignError(f"planning needs the variance components of a REML fit; received a "
                          f"fit with method={fit.method!r}. Refit with method='reml'.")
    d, al, pw, mult = _plan_options(delta, alpha, power, grid)
    given = {"subject": _whole("subjects", subjects), "question": _whole("questions", questions),
             "prompt": _whole("prompts", prompts)}
    p, choice = _choose_pair(fit, pair)
    divs = plan_divisors(fit, roles=roles, pair=(p.model_a, p.model_b))
    rmap = _role_map(fit.frame, roles)
    role_col = {r: c for c, r in rmap.items()}
    cells = fit.frame.cells.loc[_pair_mask(fit, (p.model_a, p.model_b))]
    base = _base_design(cells, role_col)
    _check_given(given, base, fit.frame.pair_by)
    design = {r: b if (g := given[r]) is None else float(g) for r, b in base.items()}
    comps = {str(k): float(v) for k, v in p.components.items()}
    if set(comps) != set(divs):
        raise DesignError(  # pragma: no cover - engines always report one value per term
            f"the pair's components {sorted(comps)} do not match the formula's terms "
            f"{sorted(divs)}.")
    k_sum = float(z_upper(al / 2) + z_quantile(pw))
    plan = _Planner(comps, divs, k_sum, (d / k_sum) ** 2)

    rows = [plan.row("current", "none", base)]
    if design != base:
        rows.append(plan.row("design", "none", design))
    minimal: dict[str, int | None] = {}
    unreach: dict[str, bool] = {}
    for r in (r for r in base if base[r] > 1 or given[r] is not None):
        vary_rows, minimal[_ARG[r]], unreach[_ARG[r]] = plan.vary(r, design, mult)
        rows += vary_rows
    for row in rows:     # the pair whose variance components the plan uses, in every row
        row.update(model_a=p.model_a, model_b=p.model_b)
    return tidy(
        rows, table="plan", delta=float(delta), alpha=al, power=pw, model_a=p.model_a,
        model_b=p.model_b, pair_choice=choice, components=comps,
        divisors={c: plan.term_div(c) for c in comps},
        variance_formula=f"Var(mu_hat) = {plan.formula()}",
        roles=rmap, current={_ARG[r]: v for r, v in base.items()},
        design={_ARG[r]: v for r, v in design.items()},
        needed_std_error=math.sqrt(plan.v_need), minimal=minimal, unreachable=unreach,
        formula=fit.frame.spec.formula, estimand=fit.estimand,
    )


def _plan_options(delta: Any, alpha: Any, power: Any,
                  grid: Sequence[float]) -> tuple[float, float, float, list[float]]:
    """``|delta|``, alpha, power and the grid multiples of :func:`plan_of`, checked."""
    for name, v in (("delta", delta), ("alpha", alpha), ("power", power)):
        _scalar(name, v)
    d = abs(float(check_delta(delta)))
    al = float(check_alpha(alpha))
    pw = float(check_power(power, np.asarray(al)))
    try:
        mult = [float(g) for g in grid]
    except (TypeError, ValueError) as exc:
        raise DesignError(f"grid must be a sequence of positive numbers (multiples of the "
                          f"design's counts); received {grid!r}.") from exc
    if not mult or not all(math.isfinite(g) and g > 0 for g in mult):
        raise DesignError(f"grid must be a non-empty sequence of positive finite numbers; "
                          f"received {grid!r}.")
    return d, al, pw, mult


def _check_given(given: dict[str, int | None], base: dict[str, float],
                 pair_by: Sequence[str]) -> None:
    """Reject a count for a factor the data lack; warn when it extrapolates from one level."""
    for r, cnt in given.items():
        if cnt is not None and r not in base:
            raise DesignError(
                f"{_ARG[r]}={cnt} but the fitted design has no {r} factor (pairing keys: "
                f"{list(pair_by)}); its variance was never estimated. Leave "
                f"{_ARG[r]}=None, or fit data with a {r} column (map another column with roles=)."
            )
        if cnt is not None and base[r] <= 1:
            warnings.warn(
                f"{_ARG[r]}={cnt} extrapolates from data with a single {r} level: the {r}-level "
                f"variance cannot be separated from the residual, so the planned SE assumes it "
                f"averages out over {r}s (optimistic).", MixrankWarning, stacklevel=4)


@dataclass(frozen=True)
class _Planner:
    """The fitted components of one pair and the variance a design needs."""

    comps: dict[str, float]          # component -> variance
    divs: dict[str, tuple[str, ...]]  # component -> roles that divide it
    k_sum: float                     # z_{1-alpha/2} + z_{1-beta}
    v_need: float                    # Var(mu_hat) that resolves delta

    def div(self, name: str, x: dict[str, float]) -> float:
        return float(np.prod([x[r] for r in self.divs[name]])) if self.divs[name] else 1.0

    def variance(self, x: dict[str, float]) -> float:
        return sum(self.comps[c] / self.div(c, x) for c in self.comps)

    def row(self, kind: str, vary: str, x: dict[str, float], unreachable: bool = False,
            limit: float = float("nan")) -> dict[str, Any]:
        v = self.variance(x)
        se = math.sqrt(v)
        with np.errstate(divide="ignore"):
            q = float(np.divide(self.v_need, v)) if v > 0 else float("inf")
        return dict(kind=kind, vary=vary,
                    subjects=x.get("subject", np.nan), questions=x.get("question", np.nan),
                    prompts=x.get("prompt", np.nan),
                    n=float(np.prod([x[r] for r in x])) if x else 1.0,
                    variance=v, std_error=se, mde=self.k_sum * se, q=q, resolved=q >= 1,
                    unreachable=unreachable, limit_std_error=limit)

    def vary(self, r: str, design: dict[str, float],
             mult: list[float]) -> tuple[list[dict[str, Any]], int | None, bool]:
        """Grid rows and the minimal row when role ``r`` varies: (rows, minimal, unreachable)."""
        comps, divs, v_need = self.comps, self.divs, self.v_need
        a_part = sum(comps[c] / self.div(c, design) * design[r] for c in comps if r in divs[c])
        b_part = sum(comps[c] / self.div(c, design) for c in comps if r not in divs[c])
        limit = math.sqrt(b_part)
        no_way = b_part >= v_need
        rows = [self.row("grid", _ARG[r], {**design, r: float(val)}, no_way, limit)
                for val in sorted({max(1, int(round(design[r] * g))) for g in mult})]
        if no_way:
            rows.append({**self.row("minimal", _ARG[r], design, True, limit),
                         _ARG[r]: np.nan, "variance": np.nan, "std_error": limit,
                         "mde": self.k_sum * limit, "q": v_need / b_part if b_part > 0 else np.inf,
                         "resolved": False, "n": np.nan})
            return rows, None, True
        if a_part <= 0:
            best: int | None = 1
        else:
            def enough(x: int) -> bool:
                return self.variance({**design, r: float(x)}) <= v_need

            best = smallest_count(enough, a_part / (v_need - b_part))
        if best is None:   # needs more than MAX_COUNT: infeasible in practice
            rows.append({**self.row("minimal", _ARG[r], design, True, limit),
                         _ARG[r]: np.nan, "variance": np.nan, "resolved": False, "n": np.nan})
            return rows, None, True
        rows.append(self.row("minimal", _ARG[r], {**design, r: float(best)}, False, limit))
        return rows, best, False

    def term_div(self, name: str) -> str:
        return "*".join(_SYM[r] for r in self.divs[name]) or "1"

    def formula(self) -> str:
        """``Var(mu_hat)`` as text, e.g. ``subject/T + residual/(T*Q*V)``."""
        def shown(c: str) -> str:
            t = self.term_div(c)
            return c if t == "1" else f"{c}/{t}" if len(self.divs[c]) == 1 else f"{c}/({t})"

        return " + ".join(shown(c) for c in self.comps)


#: Former names (``X_fit`` meant "computed from a fit"; ``X_of(fit)`` now): one release.
__getattr__ = former_names('mixrank.design.plan', {'plan_fit': 'plan_of'}, globals())
