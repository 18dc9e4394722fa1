"""Stage arena/result: :class:`ArenaResult`, the fitted Bradley-Terry leaderboard and its tables.

Inputs: encoded battles, their pattern counts, the fitted model and the
chosen covariance (information, sandwich or bootstrap draws).
Outputs: tidy tables with the vocabulary and defaults of
:class:`~mixrank.results.FitResult` -- ``contrasts(level, adjust=, scale=)``,
``model_scores(level, scale=, anchor=)``, ``rank_intervals(level, ...)``,
``resolution(...)``, ``covariates()``, ``summary()``.
Contents (docs/arena.md §4-§6).  ``contrasts`` is the one template of
:class:`~mixrank.results.base.ContrastsTemplate` (this module supplies the
pair estimates; the adjustment and max-t are
:func:`mixrank.inference.pairwise.adjusted_contrasts`); rank intervals reuse
:func:`mixrank.inference.ranks.rank_intervals_from_contrasts`, verdicts
:func:`mixrank.design.resolution.resolution_table`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from scipy import stats

from mixrank._display import format_table, wrap
from mixrank._util import listed, tidy
from mixrank.arena.data import Battles, Patterns
from mixrank.arena.estimate import BTFit
from mixrank.design.resolution import resolution_table
from mixrank.errors import DesignError, OptionError
from mixrank.inference.multiplicity import adjust_values
from mixrank.inference.pairwise import NormalCoefficients
from mixrank.inference.ranks.intervals import rank_intervals_from_contrasts
from mixrank.results.base import ANY, OptionTable, PairEstimates
from mixrank.results.pairwise_result import PairwiseResult

__all__ = ["ArenaResult", "ArenaSummary", "ELO", "SCALES", "ADJUST", "check_rng", "check_se"]

#: Elo display factor: 400 points per factor 10 in the odds (FastChat's SCALE / log BASE).
ELO = 400.0 / np.log(10.0)
#: Accepted ``scale=`` values of :meth:`ArenaResult.contrasts`.
SCALES = ("logit", "elo", "probability")
#: Accepted ``adjust=`` values.
ADJUST = adjust_values("arena_contrasts")


@dataclass(frozen=True, eq=False)
class ArenaResult(PairwiseResult):
    """Result of :func:`mixrank.arena`: Bradley-Terry strengths with their covariance.

    Orientation: a contrast row ``(model_a, model_b)`` is ``beta_a -
    beta_b``, the log-odds that ``model_a`` beats ``model_b`` (covariates
    at zero); positive favours ``model_a``.

    Examples
    --------
    >>> import mixrank
    >>> mixrank.arena(mixrank.load_dataset("chatbot_arena").head(2000), cluster=False)
    <ArenaResult 'winner ~ 1': 8 models, 2,000 battles, ties=half, se=information>
    """

    battles: Battles
    counts: Patterns
    fit: BTFit
    cov: np.ndarray
    se: str
    ties: str
    level: float
    formula: str
    prior: float
    draws: np.ndarray | None = None
    notes: tuple[str, ...] = field(default=())
    dfs: dict[str, np.ndarray] | None = None     # clustered: df of pairs (K x K), scores, covariates
    scale: str = "elo"                            # scale of scores, contrasts and rank intervals
    cluster_detected: bool = False
    judge: Any = None                             # JudgeInfo of a judge-corrected fit
    #: Options per accessor (:attr:`~mixrank.results.base.ContrastsTemplate.OPTIONS`).
    OPTIONS: ClassVar[OptionTable] = {
        "contrasts": {"adjust": ADJUST, "scale": SCALES, "draws": ANY, "rng": ANY},
        "rank_intervals": dict(PairwiseResult.OPTIONS["rank_intervals"]),
        "resolution": {**PairwiseResult.OPTIONS["resolution"], "models": ANY, "top": ANY,
                       "cluster": (True, False), "anytime": (True, False, "auto", "normal")},
        "model_scores": {"scale": ("elo", "logit", "probability"), "anchor": ANY, "center": ANY},
        "covariates": {},
    }

    # ---------------------------------------------------------------- basics
    @property
    def models(self) -> tuple[str, ...]:
        """The models of the battle log, in the order of the score tables."""
        return self.battles.models

    @property
    def n_battles(self) -> int:
        """The number of battles fitted."""
        return self.battles.n

    def _meta(self, table: str, **extra: Any) -> dict:
        m: dict[str, Any] = dict(
            table=table, formula=self.formula, method="bradley_terry", ties=self.ties,
            se=self.se, cluster=self.battles.cluster_name, prior=self.prior,
            n_battles=self.n_battles, cluster_detected=self.cluster_detected,
            df_method="normal (df = inf)" if self.dfs is None else
            next((n for n in self.notes if "sandwich" in n), "clustered, t reference"))
        if self.judge is not None:
            m.update(method="prediction_powered_bradley_terry", judges=list(self.judge.judges),
                     lam=[float(v) for v in self.judge.lam], n_labelled=self.judge.n_labelled,
                     n_unlabelled=self.judge.n_unlabelled)
        m.update(extra)
        return m

    def _pair_counts(self) -> pd.DataFrame:
        K = len(self.models)
        c = self.counts
        key = c.a * K + c.b
        return pd.DataFrame({"win": np.bincount(key, c.win, K * K),
                             "loss": np.bincount(key, c.loss, K * K),
                             "tie": np.bincount(key, c.tie, K * K)})

    def _contrast_arrays(self) -> dict[str, np.ndarray]:
        K = len(self.models)
        ia, ib = np.triu_indices(K, 1)
        beta = self.fit.beta
        C = self.cov[:K, :K]
        var = C[ia, ia] + C[ib, ib] - 2 * C[ia, ib]
        pc = self._pair_counts()
        n = (pc["win"] + pc["loss"] + pc["tie"]).to_numpy()[ia * K + ib]
        df = np.full(ia.size, np.inf) if self.dfs is None else self.dfs["pairs"][ia, ib]
        return dict(ia=ia, ib=ib, estimate=beta[ia] - beta[ib], variance=var, n=n, df=df)

    # ---------------------------------------------------------------- tables
    def _pair_estimates(self, level: float, *, scale: str | None = None) -> PairEstimates:
        """The pair estimates of :meth:`~mixrank.results.base.ContrastsTemplate.contrasts`:
        every pair ``beta_a - beta_b`` with its z (t with the clustered df) on ``scale``
        (``_on_scale``), the percentile interval of the draws with ``se="bootstrap"``,
        and max-t drawn from the strengths' joint normal law
        (:class:`~mixrank.inference.pairwise.NormalCoefficients`)."""
        scale = self.scale if scale is None else scale
        c = self._contrast_arrays()
        est, se, dfr = c["estimate"], np.sqrt(c["variance"]), c["df"]
        z = est / se
        q = stats.t.ppf(0.5 + level / 2, dfr)
        lo, hi = est - q * se, est + q * se
        if self.draws is not None:
            dr = self.draws[:, c["ia"]] - self.draws[:, c["ib"]]
            lo, hi = np.quantile(dr, [0.5 - level / 2, 0.5 + level / 2], axis=0)
        K = len(self.models)
        pc = self._pair_counts().to_numpy()[c["ia"] * K + c["ib"]]
        if scale == "probability":
            pr = 1 / (1 + np.exp(-est))
            val, sev = pr, pr * (1 - pr) * se
        else:
            val, sev = _on_scale(est, scale), _on_scale(se, scale)
        m = self.models
        rows = pd.DataFrame({"model_a": [m[i] for i in c["ia"]],
                             "model_b": [m[i] for i in c["ib"]],
                             "estimate": val, "std_error": sev, "df": dfr, "statistic": z,
                             "p_value": 2 * stats.t.sf(np.abs(z), dfr),
                             "p_greater": stats.t.sf(z, dfr), "ci_lower": _on_scale(lo, scale),
                             "ci_upper": _on_scale(hi, scale), "level": level,
                             "n": c["n"].astype(int), "wins_a": pc[:, 0].round().astype(int),
                             "wins_b": pc[:, 1].round().astype(int),
                             "ties": pc[:, 2].round().astype(int)})
        joint = NormalCoefficients(self.cov[:K, :K], c["ia"], c["ib"], est, se,
                                   to_scale=partial(_on_scale, scale=scale), min_draws=100)
        return PairEstimates(rows, self._meta("contrasts", scale=scale), joint=joint)

    def _check_rng(self, rng: Any) -> None:
        """``contrasts(rng=)`` is checked whatever the adjustment (:func:`check_rng`)."""
        check_rng(rng)

    def model_scores(self, level: float | None = None, *,
                     scale: Literal["elo", "logit", "probability"] | None = None,
                     anchor: tuple[str, float] | None = None, center: float = 1000.0
                     ) -> pd.DataFrame:
        """Each model's strength on a display scale, with its interval.

        Parameters
        ----------
        level : float, optional
        scale : {"elo", "logit"}, optional
            Default the fit's ``scale`` (``arena(scale=)``, Elo unless chosen
            otherwise).  ``elo``: ``center + 400 / ln 10 * (beta_j - mean beta)`` (the
            FastChat/LMArena display: 400 points per factor 10 in the odds,
            centred at 1000); ``logit``: ``beta_j - mean beta``.
        anchor : (model, value), optional
            Shift the scale so that this model shows ``value`` (its
            standard error is then 0; the others' are those of their
            contrast with it), as LMArena pins one model.
        center : float, default 1000
            Mean of the displayed scores when no anchor is given.

        Returns
        -------
        pandas.DataFrame
            In model order: ``model, estimate, std_error, df`` (inf: normal;
            clustered: Bell-McCaffrey), ``ci_lower, ci_upper, level, n``
            (battles played; human-labelled ones with ``judge=``),
            ``wins, losses, ties``.

        Notes
        -----
        A score is a linear combination of the strengths; its variance
        comes from the chosen covariance (percentiles of the draws with
        ``se="bootstrap"``).  Covariates are held at zero (docs/arena.md §4).

        Raises
        ------
        DesignError
            ``scale`` other than ``"elo"`` or ``"logit"``.
        OptionError
            A ``level`` outside (0, 1).

        Examples
        --------
        >>> import mixrank
        >>> votes = mixrank.load_dataset("chatbot_arena").head(5000)
        >>> s = mixrank.arena(votes, cluster=False).model_scores()
        >>> s.nlargest(2, "estimate")[["model", "estimate"]].round(1).values.tolist()
        [['gpt-4', 1317.2], ['claude-v1', 1218.6]]
        """
        lev = self._level(level)
        scale = self.scale if scale is None else scale  # type: ignore[assignment]
        if scale not in ("elo", "logit"):
            raise DesignError(f"scale={scale!r}; expected 'elo' or 'logit'")
        K = len(self.models)
        W = np.eye(K) - 1.0 / K
        shift = center if scale == "elo" else 0.0
        if anchor is not None:
            if (not isinstance(anchor, (tuple, list)) or len(anchor) != 2
                    or anchor[0] not in self.models):
                raise DesignError(f"anchor={anchor!r}; expected (model, value) with a model "
                                  f"among {listed(self.models)}")
            j = self.models.index(anchor[0])
            W = np.eye(K)
            W[:, j] -= 1.0
            shift = float(anchor[1])
        f = ELO if scale == "elo" else 1.0
        est = shift + f * (W @ self.fit.beta)
        C = self.cov[:K, :K]
        se = f * np.sqrt(np.clip(np.einsum("ij,jk,ik->i", W, C, W), 0, None))
        dfs = np.full(K, np.inf) if self.dfs is None else self.dfs["scores"]
        if anchor is not None and self.dfs is not None:
            dfs = self.dfs["pairs"][:, self.models.index(anchor[0])]
        q = stats.t.ppf(0.5 + lev / 2, dfs)
        lo, hi = est - q * se, est + q * se
        if self.draws is not None:
            d = shift + f * (self.draws[:, :K] @ W.T)
            lo, hi = np.quantile(d, [0.5 - lev / 2, 0.5 + lev / 2], axis=0)
        c = self.counts
        wins = np.bincount(c.a, c.win, K) + np.bincount(c.b, c.loss, K)
        losses = np.bincount(c.a, c.loss, K) + np.bincount(c.b, c.win, K)
        ties = np.bincount(c.a, c.tie, K) + np.bincount(c.b, c.tie, K)
        tab = pd.DataFrame({"model": list(self.models), "estimate": est, "std_error": se,
                            "df": dfs, "ci_lower": lo, "ci_upper": hi, "level": lev,
                            "n": (wins + losses + ties).astype(int),
                            "wins": wins.round().astype(int),
                            "losses": losses.round().astype(int),
                            "ties": ties.round().astype(int)})
        return tidy(tab, **self._meta("model_scores", scale=scale,
                                      anchor=None if anchor is None else list(anchor)))

    def covariates(self, level: float | None = None) -> pd.DataFrame:
        """Style/covariate coefficients (log-odds per unit of the side difference).

        Parameters
        ----------
        level : float, optional
            Confidence level; default the fit's.

        Returns
        -------
        pandas.DataFrame
            ``term, estimate, std_error, df, statistic, p_value, ci_lower,
            ci_upper, level``; Davidson fits add the row ``log_nu`` (log of
            the tie parameter); ``position=True`` the row ``position`` (the
            log-odds that the answer shown first wins).

        Examples
        --------
        >>> import mixrank
        >>> votes = mixrank.load_dataset("chatbot_arena").head(5000)
        >>> human = mixrank.arena(votes, "winner ~ 1", position=True, cluster=False)
        >>> judge = mixrank.arena(votes, "winner_gpt35 ~ 1", position=True, cluster=False)
        >>> bool(human.covariates()["p_value"].iloc[0] > 0.05)   # humans: no position bias
        True
        >>> round(float(judge.covariates()["estimate"].iloc[0]), 2)   # gpt-3.5 prefers model_a
        1.86
        """
        lev = self._level(level)
        K, p = len(self.models), self.fit.n_features
        names = list(self.battles.features) + (["log_nu"] if self.ties == "davidson" else [])
        idx = np.arange(K, K + len(names))
        est = self.fit.theta[idx]
        se = np.sqrt(np.diag(self.cov)[idx]) if idx.size else np.zeros(0)
        z = est / se if idx.size else est
        dfc = np.full(len(names), np.inf) if self.dfs is None else self.dfs["covariates"]
        q = stats.t.ppf(0.5 + lev / 2, dfc)
        tab = pd.DataFrame({"term": names, "estimate": est, "std_error": se, "df": dfc,
                            "statistic": z, "p_value": 2 * stats.t.sf(np.abs(z), dfc),
                            "ci_lower": est - q * se, "ci_upper": est + q * se, "level": lev})
        return tidy(tab, **self._meta("covariates", n_features=p))

    def _rank_intervals(self, level: float, *, coverage: str, adjust: str, draws: int,
                        rng: Any) -> pd.DataFrame:
        """Rank confidence intervals from all pairwise contrasts (docs/methods.md §7).

        Same procedures, columns and defaults as
        :meth:`FitResult.rank_intervals` (through
        :func:`mixrank.inference.ranks.rank_intervals_from_contrasts` with
        the pairs' df); ``estimate`` is the centred strength on the fit's
        ``scale`` (Elo by default, as ``model_scores``).
        """
        lev = level
        check_rng(rng)
        scores = self.model_scores(lev)
        tab = rank_intervals_from_contrasts(scores[["model", "estimate", "n"]],
                                            self.contrasts(lev, adjust="none"), level=lev,
                                            coverage=coverage, adjust=adjust, draws=draws,
                                            rng=rng)
        tab.attrs["mixrank"].update(source="arena", formula=self.formula, ties=self.ties,
                                    se=self.se, scale=self.scale,
                                    cluster_detected=self.cluster_detected)
        return tab

    def _resolution(self, level: float, *, power: float, pairs: Any, adjust: str | None,
                    anytime: bool | str, models: Sequence[str] | None = None,
                    top: int | None = None, cluster: bool = True) -> pd.DataFrame:
        """Resolution verdicts per pair from the BT contrast's information per battle.

        Parameters
        ----------
        level : float, optional
            Default the fit's; ``alpha = 1 - level``.
        power, adjust, cluster
            As :meth:`FitResult.resolution`; ``cluster`` uses the variance
            ratio ``variance_ratio = (SE / SE_information)^2`` of the chosen
            covariance (1 for ``se="information"``).
        pairs : "adjacent", "all" or list of (model_a, model_b)
            ``adjacent``: consecutive models by score.
        models : list of str, optional
            With ``"adjacent"``/``"all"``: only these models (in score order).
        top : int, optional
            With ``"adjacent"``/``"all"``: only the ``top`` best models.
        anytime : {"auto", "normal"} or bool, default "auto"
            The normal-mixture boundary (``"auto"`` = ``"normal"``: BT
            contrasts are not paired 0/1 differences).

        Returns
        -------
        pandas.DataFrame
            The columns of :func:`mixrank.design.resolution.resolution_table`
            with ``n`` = all battles and ``sigma_d = SE_info * sqrt(n)`` (the
            SD of one battle's contribution to the contrast under the
            current sampling of pairs), so ``n_star`` counts battles overall;
            plus ``n_pair`` (battles between the two), ``p_win`` (P(model_a
            wins a decisive battle)) and ``n_star_pair`` (battles between
            the two alone that resolve the gap, ``K / (delta^2 p (1-p))``
            with ties counted as their information share).
        """
        al = self._alpha(level)
        if pairs is None:
            pairs = "adjacent"
        sc = self.model_scores(scale="logit")
        order = list(sc.sort_values(["estimate", "model"], ascending=[False, True],
                                    kind="stable")["model"])
        fam = self.judged_pairs(pairs, order, models=models, top=top)
        K = len(self.models)
        info_cov = self.fit.covariance()[:K, :K]
        C = self.cov[:K, :K]
        N = self.n_battles
        pc = self._pair_counts().to_numpy()
        rows = []
        for a, b in fam:
            i, j = self.models.index(a), self.models.index(b)
            est = self.fit.beta[i] - self.fit.beta[j]
            v_info = info_cov[i, i] + info_cov[j, j] - 2 * info_cov[i, j]
            v = C[i, i] + C[j, j] - 2 * C[i, j]
            lo, hi = min(i, j), max(i, j)
            w, lo_, t = pc[lo * K + hi]
            pw = 1 / (1 + np.exp(-est))
            rows.append(dict(model_a=a, model_b=b, estimate=est, n=N,
                             sigma_d=np.sqrt(v_info * N), variance_ratio=max(v / v_info, 1e-12),
                             std_error=np.sqrt(v), n_pair=int(w + lo_ + t), p_win=pw))
        fam_tab = pd.DataFrame(rows)
        tab = resolution_table(fam_tab.drop(columns=["n_pair", "p_win"]), level=level,
                               power=power, adjust=adjust,
                               anytime="normal" if anytime in (True, "auto") else anytime,
                               cluster=cluster)
        zsum = stats.norm.ppf(1 - al / 2) + stats.norm.ppf(power)
        tab["n_pair"] = fam_tab["n_pair"].to_numpy()
        tab["p_win"] = fam_tab["p_win"].to_numpy()
        info1 = tab["p_win"] * (1 - tab["p_win"])
        tab["n_star_pair"] = zsum ** 2 / (tab["estimate"] ** 2 * info1)
        tab.attrs["mixrank"].update(self._meta("resolution", pairs=pairs if isinstance(pairs, str)
                                               else "explicit"))
        return tab

    def judges(self) -> pd.DataFrame:
        """Judge diagnostics of a ``judge=`` fit: one row per judge, plus the humans.

        Returns
        -------
        pandas.DataFrame
            ``judge`` (``"human"`` first), ``lam`` (power-tuning weight),
            ``n`` (battles judged), ``agreement`` (share of labelled battles
            with the human's verdict), ``agreement_decisive`` (among those
            where both picked a winner), ``share_model_a`` (share of
            decisive verdicts for the first position), ``position,
            position_se, position_lower, position_upper`` (first-position
            log-odds from a BT fit with ``position=True``) and
            ``position_differs`` (its CI test against the humans').

        Raises
        ------
        OptionError
            The fit has no judge (pass ``judge=`` to :func:`mixrank.arena`).

        Examples
        --------
        >>> import mixrank
        >>> v = mixrank.load_dataset("chatbot_arena").head(2000)
        >>> v = v.assign(verdict=v["winner"].where(v.index % 10 > 0, v["winner_gpt4"]),
        ...              winner=v["winner"].where(v.index % 2 == 0))  # half the battles unlabelled
        >>> r = mixrank.arena(v, judge="verdict", cluster=False)
        >>> r.judges()[["judge", "n", "agreement"]].round(3).values.tolist()
        [['human', 1000, 1.0], ['verdict', 2000, 0.914]]
        """
        return self._judge_info().diagnostics.copy()

    def agreement(self) -> pd.DataFrame:
        """How often each judge agrees with the human verdicts, per model.

        Returns
        -------
        pandas.DataFrame
            ``judge, model, n`` (labelled battles) and ``agreement``.

        Raises
        ------
        OptionError
            The fit has no judge (pass ``judge=`` to :func:`mixrank.arena`).

        Examples
        --------
        >>> import mixrank
        >>> v = mixrank.load_dataset("chatbot_arena").head(2000)
        >>> v = v.assign(verdict=v["winner"].where(v.index % 10 > 0, v["winner_gpt4"]),
        ...              winner=v["winner"].where(v.index % 2 == 0))  # half the battles unlabelled
        >>> r = mixrank.arena(v, judge="verdict", cluster=False)
        >>> r.agreement().head(2).round(3).values.tolist()
        [['verdict', 'alpaca-13b', 200, 0.915], ['verdict', 'chatglm-6b', 154, 0.929]]
        """
        return self._judge_info().agreement.copy()

    def leaderboards(self) -> pd.DataFrame:
        """Human-only, judge-only (uncorrected) and corrected scores side by side.

        Returns
        -------
        pandas.DataFrame
            ``model`` and, for each board (``human_only``,
            ``judge_only_<column>``, ``corrected``), its score and
            ``<board>_lower``/``<board>_upper`` interval on the fit's scale.

        Raises
        ------
        OptionError
            The fit has no judge (pass ``judge=`` to :func:`mixrank.arena`).

        Examples
        --------
        >>> import mixrank
        >>> v = mixrank.load_dataset("chatbot_arena").head(2000)
        >>> v = v.assign(verdict=v["winner"].where(v.index % 10 > 0, v["winner_gpt4"]),
        ...              winner=v["winner"].where(v.index % 2 == 0))  # half the battles unlabelled
        >>> r = mixrank.arena(v, judge="verdict", cluster=False)
        >>> [c for c in r.leaderboards().columns if not c.endswith(("_lower", "_upper"))]
        ['model', 'human_only', 'judge_only_verdict', 'corrected']
        """
        return self._judge_info().boards.copy()

    def _judge_info(self) -> Any:
        if self.judge is None:
            raise OptionError("this arena was fitted without judge verdicts; pass "
                              "judge='<column>' to mixrank.arena for the judge tables")
        return self.judge

    def summary(self) -> ArenaSummary:
        """A printable summary: battles, ties, covariates and the score table.

        Returns
        -------
        ArenaSummary
            Printed as text; ``str()`` gives it.

        Examples
        --------
        >>> import mixrank
        >>> r = mixrank.arena(mixrank.load_dataset("chatbot_arena").head(2000), cluster=False)
        >>> print(str(r.summary()).splitlines()[1])
          8 models, 2,000 battles (586 ties, 0 dropped), ties=half, se=information
        """
        return ArenaSummary(self)

    def __repr__(self) -> str:
        return (f"<ArenaResult {self.formula!r}: {len(self.models)} models, "
                f"{self.n_battles:,} battles, ties={self.ties}, se={self.se}>")


class ArenaSummary:
    """Text (``str``) and HTML (``_repr_html_``) summary of an :class:`ArenaResult`."""

    def __init__(self, res: ArenaResult) -> None:
        self.result = res
        self.scores = res.model_scores().sort_values("estimate", ascending=False,
                                                     kind="stable").reset_index(drop=True)
        self.covariates = res.covariates()

    def __str__(self) -> str:
        r = self.result
        b = r.battles
        ties = int(round(r.counts.tie.sum()))
        lines = [f"Bradley-Terry arena fit: {r.formula}",
                 f"  {len(r.models)} models, {b.n:,} battles ({ties:,} ties, "
                 f"{b.n_ties_dropped:,} dropped), ties={r.ties}, se={r.se}"
                 + (f" clustered by {b.cluster_name}" if b.cluster_name else "")
                 + (f", prior={r.prior}" if r.prior else ""), ""]
        for note in r.notes:
            lines.append(f"  note: {note}")
        lines.append(format_table(self.scores).rstrip())
        if len(self.covariates):
            lines += ["", "covariates (log-odds per unit of side difference):",
                      format_table(self.covariates).rstrip()]
        return wrap("\n".join(lines))

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return "<pre>" + str(self).replace("&", "&amp;").replace("<", "&lt;") + "</pre>"


def _on_scale(x: np.ndarray, scale: str) -> np.ndarray:
    """A log-odds value (a contrast, an interval endpoint; an SE for ``logit``/``elo``) on
    ``scale``: itself (``logit``), times 400/ln 10 (``elo``) or ``1 / (1 + exp(-x))``
    (``probability``)."""
    if scale == "probability":
        return 1 / (1 + np.exp(-x))
    return x if scale == "logit" else ELO * x


def check_rng(rng: Any) -> None:
    """Refuse an ``rng`` that is not None, a non-negative integer seed or a numpy Generator."""
    ok = (rng is None or isinstance(rng, np.random.Generator)
          or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0))
    if not ok:
        raise OptionError(f"rng={rng!r}; expected None, a non-negative integer seed (e.g. rng=1) "
                          "or a numpy Generator (np.random.default_rng(1))")


def check_se(se: Any, cluster: str | None, B: Any) -> str:
    """Validate ``se=`` against ``cluster=`` and ``B``."""
    if se not in ("information", "sandwich", "bootstrap"):
        raise OptionError(f"se={se!r}; expected 'information', 'sandwich' or 'bootstrap'")
    if se == "bootstrap" and cluster is not None:
        raise OptionError("se='bootstrap' resamples battles independently; with cluster= use "
                          "se='sandwich' (clustered) instead")
    if se == "information" and cluster is not None:
        raise OptionError(f"cluster={cluster!r} is used by se='sandwich' only; pass "
                          "se='sandwich' (or drop cluster=)")
    if se == "bootstrap" and (not isinstance(B, (int, np.integer)) or isinstance(B, bool)
                              or not 100 <= B <= 100000):
        raise OptionError(f"draws={B!r}; the bootstrap needs an integer number of resamples in "
                          "[100, 100000], e.g. 1000")
    return str(se)
