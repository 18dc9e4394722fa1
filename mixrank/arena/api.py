"""Stage arena/api: :func:`arena`, the public entry point composing read -> encode -> fit -> result.

Inputs: a battle log (DataFrame or path), an optional formula
(``"winner ~ style(len, markdown)"``) and options.  Output: an
:class:`~mixrank.arena.result.ArenaResult`.  The stages are public in
:mod:`mixrank.arena.data` and :mod:`mixrank.arena.estimate`
(docs/arena.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mixrank._util import check_level
from mixrank.arena.data import TIES, encode_battles, parse_arena_formula, patterns
from mixrank.arena.estimate import bootstrap, check_graph, fit_bt, sandwich, with_prior
from mixrank.arena.result import ArenaResult, check_se
from mixrank.errors import DataError, DesignError
from mixrank.inference.keywords import former, unexpected_keywords

__all__ = ["arena"]


def _formula_text(winner: str, terms: Sequence[tuple[str, str]]) -> str:
    style = [f for f, how in terms if how == "style"]
    plain = [f for f, how in terms if how != "style"]
    rhs = ([f"style({', '.join(style)})"] if style else []) + plain
    return f"{winner} ~ {' + '.join(rhs) if rhs else '1'}"


def arena(data: Any, formula: str | None = None, *, ties: str = "half",
          covariates: Sequence[str] | None = None, cluster: str | None = None,
          se: str | None = None, draws: int = 1000, rng: Any = None, prior: float = 0.0,
          level: float = 0.95, model_a: str = "model_a", model_b: str = "model_b",
          **old: Any) -> ArenaResult:
    """Bradley-Terry leaderboard of a battle log (pairwise preferences, LMArena style).

    Parameters
    ----------
    data : DataFrame or path
        One row per vote: ``model_a, model_b, winner`` -- winner
        ``"model_a"``, ``"model_b"``, ``"tie"``, ``"tie (bothbad)"``
        (FastChat) or 1 / 0 / 0.5 (model_a's share) -- plus per-side
        feature columns ``<f>_a, <f>_b`` for covariates and any grouping
        column.  Paths: CSV, JSONL, parquet, or a ``.json`` list of records
        (FastChat ``clean_battle``; its ``conv_metadata`` gives ``len``,
        ``header``, ``list``, ``bold``).
    formula : str, optional
        ``"winner ~ 1"`` (default) or with covariates: ``style(f, ...)``
        (LMArena's normalised side difference ``(f_a - f_b)/(f_a + f_b)``)
        and bare names ``f`` (plain difference ``f_a - f_b``).
    ties : {"half", "davidson", "drop"}, default "half"
        A tie counts as half a win for each side (FastChat), follows
        Davidson's tie model (parameter ``log_nu``), or is dropped.
    covariates : list of str, optional
        Same as ``style(...)`` of these names in the formula.
    cluster : str, optional
        Grouping column (prompt, user, judge) for a clustered sandwich.
    se : {"information", "sandwich", "bootstrap"}, optional
        Default ``"sandwich"`` when ``cluster`` is given, else
        ``"information"`` (inverse observed information).  ``"bootstrap"``:
        ``draws`` multinomial resamples of the battle counts, each refitted.
    draws : int, default 1000
        Bootstrap resamples (``se="bootstrap"`` only; refused otherwise).
    rng : Generator or int, optional
        Randomness of the bootstrap (``se="bootstrap"`` only; refused otherwise).
    prior : float, default 0
        Pseudo-wins added each way to every pair that met (a symmetric
        prior that keeps strengths finite when a model never wins or never
        loses); 0 is the maximum-likelihood fit, which refuses such data.
    level : float, default 0.95
    model_a, model_b : str
        Column names of the two sides.

    Returns
    -------
    ArenaResult
        ``contrasts()``, ``model_scores()``, ``rank_intervals()``,
        ``resolution()``, ``covariates()``, ``summary()``.

    Raises
    ------
    FormulaError
        Unsupported formula terms (caret under the term).
    DataError
        Unknown winner values, self-battles, NaN covariates or clusters,
        Davidson ties without ties (or with nothing else), covariates that
        cannot be estimated,
        missing columns, a disconnected comparison graph (components
        named), strengths running to infinity (models named; ``prior=``).
    DesignError
        Unknown ``ties``/``se``, bad ``level``, ``draws`` or ``prior``;
        ``se="bootstrap"`` with ``cluster``; ``draws``/``rng`` without
        ``se="bootstrap"``.

    Notes
    -----
    Maximum likelihood from the win/loss/tie counts per pair (and covariate
    pattern) by Newton's method with the exact Hessian (docs/arena.md §3).
    Validated against statsmodels ``Logit`` (estimates to 1e-8, SEs,
    HC0 and cluster sandwiches) and a direct scipy maximisation of the
    Davidson likelihood (``tests/arena/test_estimate.py``).

    Examples
    --------
    >>> import pandas as pd, mixrank
    >>> log = pd.DataFrame({"model_a": ["x", "y", "z", "x", "y", "z"],
    ...                     "model_b": ["y", "z", "x", "z", "x", "y"],
    ...                     "winner": ["model_a", "model_a", "model_b", "tie", "model_b", "tie"]})
    >>> res = mixrank.arena(log)
    >>> res.model_scores()[["model", "n"]].values.tolist()
    [['x', 4], ['y', 4], ['z', 4]]
    """
    B = former(old, "B", "draws", draws, 1000, where="arena")   # B= kept for one release
    unexpected_keywords(old, "arena")
    if ties not in TIES:
        raise DesignError(f"ties={ties!r}; expected one of {list(TIES)}")
    lev = check_level(level, DesignError)
    if (not isinstance(prior, (int, float, np.integer, np.floating)) or isinstance(prior, bool)
            or not np.isfinite(prior) or prior < 0):
        raise DesignError(f"prior={prior!r}; expected a number >= 0 of pseudo-wins, e.g. 0.5")
    se_ = check_se(("sandwich" if cluster is not None else "information") if se is None else se,
                   cluster, B)
    if se_ != "bootstrap" and (rng is not None or not (isinstance(B, (int, np.integer))
                                                       and B == 1000)):
        raise DesignError(f"draws= and rng= set the bootstrap (se='bootstrap'); with se={se_!r} they "
                          "would be ignored: drop them or pass se='bootstrap'")
    winner, terms = parse_arena_formula(formula, covariates)
    bt = encode_battles(data, winner=winner, terms=terms, ties=ties, cluster=cluster,
                        model_a=model_a, model_b=model_b)
    pt = patterns(bt)
    K = len(bt.models)
    if ties == "davidson":
        n_ties, n_all = int(round(pt.tie.sum())), int(round(pt.n.sum()))
        if n_ties == 0 or n_ties == n_all:
            raise DataError(f"Davidson's tie model needs both ties and decisive battles; this log "
                            f"has {n_ties} tie(s) in {n_all} battles, so its tie parameter runs "
                            "to " + ("zero" if n_ties == 0 else "infinity") + ". Use "
                            "ties='half' or 'drop'")
    if prior > 0:
        check_graph(pt, bt.models, ties, finite=False)   # the prior keeps strengths finite
        fit_pt = with_prior(pt, float(prior))
    else:
        check_graph(pt, bt.models, ties)
        fit_pt = pt
    fit = fit_bt(fit_pt, K, ties=ties, names=bt.features)
    resamples = None
    if se_ == "information":
        cov = fit.covariance()
    elif se_ == "sandwich":
        cov = sandwich(pt, fit, bt.outcome, bt.cluster) if prior == 0 else _prior_sandwich()
    else:
        resamples = bootstrap(pt, fit, int(B), rng, prior=float(prior))
        cov = np.cov(resamples, rowvar=False)
    notes = []
    if ties == "drop" and bt.n_ties_dropped:
        notes.append(f"{bt.n_ties_dropped} tie(s) dropped")
    return ArenaResult(battles=bt, counts=pt, fit=fit, cov=cov, se=se_, ties=ties, level=lev,
                       formula=_formula_text(winner, terms), prior=float(prior), draws=resamples,
                       notes=tuple(notes))


def _prior_sandwich() -> np.ndarray:
    raise DesignError("se='sandwich' with prior > 0 is not available (the prior's pseudo-battles "
                      "have no per-battle scores); use se='information' or 'bootstrap'")
