"""Stage arena/api: :func:`arena`, the public entry point composing read -> encode -> fit -> result.

Inputs: a battle log (DataFrame or path), an optional formula
(``"winner ~ style(len, markdown)"``) and options.  Output: an
:class:`~mixrank.arena.result.ArenaResult`.  The stages are public in
:mod:`mixrank.arena.data` and :mod:`mixrank.arena.estimate`
(docs/arena.md).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from mixrank._deprecate import former_keywords
from mixrank._util import check_level
from mixrank.arena.clusters import detect_cluster
from mixrank.arena.data import TIES, encode_battles, parse_arena_formula, patterns, read_battles
from mixrank.arena.estimate import bootstrap, check_graph, fit_bt, sandwich, with_prior
from mixrank.arena.fitting import (
    MIN_DECISIVE,
    check_rng,
    clustered,
    judged_arena,
    thin_sandwich,
    with_position,
)
from mixrank.arena.result import ArenaResult, check_se
from mixrank.errors import DataError, DesignError, OptionError, SmallSampleWarning
from mixrank.inference.keywords import former, unexpected_keywords

__all__ = ["arena", "check_rng", "with_position"]


def _formula_text(winner: str, terms: Sequence[tuple[str, str]]) -> str:
    style = [f for f, how in terms if how == "style"]
    plain = [f for f, how in terms if how != "style"]
    rhs = ([f"style({', '.join(style)})"] if style else []) + plain
    return f"{winner} ~ {' + '.join(rhs) if rhs else '1'}"


@former_keywords
def arena(data: Any, formula: str | None = None, *,
          ties: Literal["half", "davidson", "drop"] = "half",
          covariates: Sequence[str] | None = None, cluster: str | bool | None = None,
          se: str | None = None, draws: int = 1000, rng: Any = None, prior: float = 0.0,
          level: float = 0.95, model_a: str = "model_a", model_b: str = "model_b",
          judge: str | Sequence[str] | None = None, lam: float | Sequence[float] | None = None,
          position: bool = False, scale: Literal["logit", "elo", "probability"] = "elo",
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
    cluster : str or False, optional
        Grouping column (prompt, conversation, voter) for a clustered
        sandwich.  Default: the first of ``question_id, conversation_id,
        prompt_id, prompt, conversation, question, voter_id, voter,
        user_id, user, annotator`` present in the log (the result's notes
        and ``attrs["mixrank"]["cluster_detected"]`` say so); ``False``
        turns the detection off.
    se : {"information", "sandwich", "bootstrap"}, optional
        Default ``"sandwich"`` when a cluster is given or detected, else
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
    judge : str or list of str, optional
        Column(s) holding an LLM judge's verdict on every battle (same
        spellings as ``winner``).  Battles whose ``winner`` is missing are
        unlabelled; the fit is the prediction-powered BT (PPI++) estimator
        (docs/arena.md §8).  ``ties="half"`` only.
    lam : float or list of float, optional
        With ``judge``: the power-tuning weight of each judge in [0, 1]
        (sum at most 1); default tuned to minimise the variance.  ``0`` is
        the human-only fit.
    position : bool, default False
        Add a first-position (home advantage) term ``position``: the
        log-odds that the answer shown first (``model_a``) wins, reported by
        ``covariates()``.
    scale : {"elo", "logit"}, default "elo"
        Scale of ``model_scores``, ``contrasts`` and ``rank_intervals``
        (Elo: 400/ln 10 points per unit of log-odds; ``logit``: the
        log-strengths).

    Returns
    -------
    ArenaResult
        ``contrasts()``, ``model_scores()``, ``rank_intervals()``,
        ``resolution()``, ``covariates()``, ``summary()``; with ``judge``
        also ``judges()`` (diagnostics), ``agreement()`` and
        ``leaderboards()`` (human-only, judge-only and corrected scores).

    Raises
    ------
    FormulaError
        Unsupported formula terms (caret under the term).
    DataError
        Unknown winner values, self-battles, NaN covariates or clusters,
        Davidson ties without ties (or with nothing else), covariates that
        cannot be estimated,
        missing columns, a disconnected comparison graph (components
        named), strengths running to infinity (models named; ``prior=``);
        a cluster column with a single value; a judge column with missing
        verdicts.
    OptionError
        (a DesignError) Unknown ``ties`` or ``se``, bad ``level``, ``draws``, ``prior``,
        ``rng``, ``judge``, ``lam``, ``position`` or ``scale``; ``draws``/``rng`` without
        ``se="bootstrap"`` (they would be ignored); ``se="bootstrap"`` with ``cluster``;
        ``cluster`` with ``se="information"``; ``judge`` with ``ties`` other than
        ``"half"``, a prior or a non-sandwich ``se``.

    Warns
    -----
    SmallSampleWarning
        Fewer than 20 clusters touch a pair (two clusters: a rank-one
        sandwich).
    DataQualityWarning
        A judge whose first-position term differs from the humans'.

    Notes
    -----
    Maximum likelihood from the win/loss/tie counts per pair (and covariate
    pattern) by Newton's method with the exact Hessian (docs/arena.md §3).
    Validated against statsmodels ``Logit`` (estimates to 1e-8, SEs,
    HC0 and cluster sandwiches), a direct scipy maximisation of the
    Davidson likelihood (``tests/arena/test_estimate.py``), FastChat's
    ``compute_mle_elo`` re-implemented with statsmodels (to 1e-6) and
    ppi_py's logistic PPI++ (``tests/arena/test_ppi.py``, to 1e-6).
    Clustered: CR2 with Bell-McCaffrey df per contrast (§4).

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
        raise OptionError(f"ties={ties!r}; expected one of {list(TIES)}")
    lev = check_level(level, OptionError)
    if (not isinstance(prior, (int, float, np.integer, np.floating)) or isinstance(prior, bool)
            or not np.isfinite(prior) or prior < 0):
        raise OptionError(f"prior={prior!r}; expected a number >= 0 of pseudo-wins, e.g. 0.5")
    if scale not in ("elo", "logit"):
        raise OptionError(f"scale={scale!r}; expected 'elo' (default) or 'logit'")
    if not isinstance(position, (bool, np.bool_)):
        raise OptionError(f"position={position!r}; expected True or False")
    check_rng(rng)
    if cluster is True or (cluster is not None and cluster is not False
                           and not isinstance(cluster, str)):
        raise OptionError(f"cluster={cluster!r}; expected a column name, or False for none")
    winner, terms = parse_arena_formula(formula, covariates)
    df = read_battles(data)
    detected = False
    if cluster is None and se in (None, "sandwich"):
        cl_name = detect_cluster(df.columns)
        detected = cl_name is not None and cl_name not in (winner, model_a, model_b)
        cl_name = cl_name if detected else None
    else:
        cl_name = cluster if isinstance(cluster, str) else None
    default_se = "sandwich" if cl_name is not None or judge is not None else "information"
    se_ = check_se(default_se if se is None else se, cl_name, B)
    if se_ != "bootstrap" and (rng is not None or not (isinstance(B, (int, np.integer))
                                                       and B == 1000)):
        raise OptionError(f"draws= and rng= set the bootstrap (se='bootstrap'); with se={se_!r} they "
                          "would be ignored: drop them or pass se='bootstrap'")
    opts: dict[str, Any] = dict(winner=winner, terms=terms, cl_name=cl_name, detected=detected, se_=se_,
                level=lev, model_a=model_a, model_b=model_b, position=bool(position),
                scale=scale)
    if judge is not None:
        return judged_arena(df, judge=judge, lam=lam, ties=ties, prior=prior, refit=arena, **opts)
    if lam is not None:
        raise OptionError("lam= weights judges; pass judge='<column>' too (or drop lam=)")
    bt = encode_battles(df, winner=winner, terms=terms, ties=ties, cluster=cl_name,
                        model_a=model_a, model_b=model_b)
    if position:
        bt = with_position(bt)
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
    dfs: dict[str, np.ndarray] | None = None
    notes = []
    if se_ == "information":
        cov = fit.covariance()
    elif se_ == "sandwich" and (thin := thin_sandwich(bt, ties)):
        if prior != 0:
            _prior_sandwich()
        cov, se_ = fit.covariance(), "information"
        notes.append(_thin_note(thin, cl_name))
    elif se_ == "sandwich":
        if prior != 0:
            _prior_sandwich()
        if bt.cluster is not None:
            cov, dfs, note = clustered(bt, pt, fit)
            notes.append(note)
        else:
            cov = sandwich(pt, fit, bt.outcome, None)
    else:
        resamples = bootstrap(pt, fit, int(B), rng, prior=float(prior))
        cov = np.cov(resamples, rowvar=False)
    if ties == "drop" and bt.n_ties_dropped:
        notes.append(f"{bt.n_ties_dropped} tie(s) dropped")
    if detected:
        notes.insert(0, f"clustered by {cl_name!r} (detected: votes on one prompt/conversation "
                        "are not independent; cluster=False turns this off)")
    return ArenaResult(battles=bt, counts=pt, fit=fit, cov=cov, se=se_, ties=ties, level=lev,
                       formula=_formula_text(winner, terms), prior=float(prior), draws=resamples,
                       notes=tuple(notes), dfs=dfs, scale=scale, cluster_detected=detected)


def _thin_note(models: list[str], cl_name: str | None) -> str:
    """Warn that the sandwich is degenerate and the information's covariance replaces it."""
    where = f"clusters of {cl_name!r}" if cl_name is not None else "battles"
    note = (f"sandwich replaced by the inverse information (se='information'): model(s) "
            f"{models[:5]}{' ...' if len(models) > 5 else ''} have decisive (non-tie) battles in "
            f"fewer than {MIN_DECISIVE} {where}")
    warnings.warn(f"{note}, so a sandwich variance would rest on (almost) no variation (a tie "
                  "scored as half a win leaves no residual) and collapse towards 0. The standard "
                  "errors treat the battles as independent; with this many ties use "
                  "ties='davidson' for a model of them", SmallSampleWarning, stacklevel=3)
    return note


def _prior_sandwich() -> np.ndarray:
    raise DesignError("se='sandwich' with prior > 0 is not available (the prior's pseudo-battles "
                      "have no per-battle scores); use se='information' or 'bootstrap'")
