"""Stage results: the binomial GLMM with a model x covariate fixed part (``model * x``).

Inputs: a :class:`~mixrank.engine.glmm.fit.GlmmFit` whose fixed effects are one
log-odds per (model, level of ``x``) combination with cells (glmer's ``model
* x`` in cell-means coding), the frame, and the level of ``x`` at each cell.
Outputs: :class:`GlmmByResult`, a :class:`~mixrank.results.glmm.result.GlmmResult`
whose accessors take ``by=``: ``contrasts(by=, scale=)`` (per-level
log-odds ratios, per-level average marginal effects), ``model_scores(by=)``,
``rank_intervals(by=)``, and ``anova()`` (Wald chi-square tests of the
interaction).  Statistical notes: docs/glmm.md §11.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from ..._util import tidy
from ...errors import DataError, DesignError
from ...inference.multiplicity import adjust_values, adjust_within
from ..base import ANY, OptionTable, PairEstimates, with_options
from .result import AT_ZERO, GLMM_OPTIONS, PROBABILITY, REFUSED_JOINT, SCORE, GlmmResult

__all__ = ["GlmmByResult"]


#: ``adjust=`` of the contrasts and anova: p-values adjusted within each set of pairs.
PER_SET = adjust_values("glmm_anova")
#: Options of :class:`GlmmByResult`: those of :class:`GlmmResult` with ``by=`` and ``anova``.
GLMM_BY_OPTIONS = with_options(GLMM_OPTIONS, contrasts={"by": ANY, "adjust": PER_SET},
                               model_scores={"by": ANY}, rank_intervals={"by": ANY},
                               anova={"adjust": PER_SET})
for _unused in ("draws", "rng"):     # no jointly drawn adjustment here
    GLMM_BY_OPTIONS["contrasts"].pop(_unused)


def _note_last(tab: pd.DataFrame) -> pd.DataFrame:
    """The ``note`` column (blank where a row has none) moved to the end."""
    if "note" in tab.columns:
        attrs = tab.attrs
        tab["note"] = tab["note"].fillna("").astype(str)
        tab = tab[[c for c in tab.columns if c != "note"] + ["note"]]
        tab.attrs = attrs
    return tab


@dataclass(frozen=True, eq=False, repr=False)
class GlmmByResult(GlmmResult):
    """Result of a binomial ``model * x`` fit with a categorical ``x`` (docs/glmm.md §11).

    Without ``by`` the accessors report the overall gap: on the logit scale
    the average over the levels of ``x`` of the per-level log-odds (equal
    weight per level, as emmeans' marginal means), on the response scale the
    probability averaged over all cells, each at its own level.

    Examples
    --------
    >>> import mixrank
    >>> df = mixrank.load_example().query("model in ['m01', 'm02', 'm03']")
    >>> b = mixrank.fit("correct ~ model * prompt + (1|subject:model)", df, family="binomial")
    >>> b.by, b.by_levels
    ('prompt', ('p1', 'p2', 'p3', 'p4'))
    """

    by: str = ""
    by_levels: tuple[str, ...] = ()
    OPTIONS: ClassVar[OptionTable] = GLMM_BY_OPTIONS
    DEFAULT_ADJUST: ClassVar[str] = "holm"
    REFUSED: ClassVar[dict[tuple[str, str, Any], str]] = REFUSED_JOINT
    cell_level: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)

    def __str__(self) -> str:
        return (f"<GlmmByResult {self.formula.formula!r}: binomial GLMM, {len(self.models)} "
                f"models x {len(self.by_levels)} levels of {self.by!r}, nAGQ={self.fit.nagq}>")

    # ------------------------------------------------------------- internals
    def _index(self) -> np.ndarray:
        """``idx[j, l]``: the beta entry of model j at level l, -1 where it has no cells."""
        idx = np.full((len(self.models), len(self.by_levels)), -1, dtype=np.int64)
        g = self.fit.groups
        assert g is not None
        idx[g[:, 0], g[:, 1]] = np.arange(len(g))
        return idx

    def _check_by(self, by: str | None) -> None:
        if by is not None and by != self.by:
            raise DesignError(f"by={by!r}: the formula crosses the model with {self.by!r} only; "
                              f"use by={self.by!r}")

    def _logit_vec(self, j: int, levels: list[int]) -> np.ndarray | None:
        """Coefficient vector of model j's log-odds averaged over ``levels`` (None: a level
        without cells)."""
        idx = self._index()
        if not levels or (idx[j, levels] < 0).any():
            return None
        v = np.zeros(len(self.fit.beta))
        v[idx[j, levels]] = 1.0 / len(levels)
        return v

    def _prob(self, j: int, cells: np.ndarray) -> tuple[float, np.ndarray] | None:
        """Mean over ``cells`` of logit^-1(beta_{j, l(c)} + s_c) and its gradient in beta."""
        idx = self._index()
        col = idx[j, self.cell_level[cells]]
        if len(cells) == 0 or (col < 0).any():
            return None
        p = expit(self.fit.beta[col] + self.fit.cell_effects[cells])
        g = np.bincount(col, weights=p * (1 - p), minlength=len(self.fit.beta)) / len(cells)
        return float(p.mean()), g

    def _score(self, j: int, lev: int | None, scale: str) -> tuple[float, np.ndarray] | None:
        """Model j's score at level ``lev`` (None: overall) on ``scale`` and its gradient."""
        if scale == "logit":
            levels = list(range(len(self.by_levels))) if lev is None else [lev]
            v = self._logit_vec(j, levels)
            return None if v is None else (float(v @ self.fit.beta), v)
        cells = (np.arange(self.frame.n_cells) if lev is None
                 else np.flatnonzero(self.cell_level == lev))
        return self._prob(j, cells)

    def _cells(self, j: int, lev: int | None) -> int:
        obs = self.frame.observed[:, j]
        return int(obs.sum() if lev is None else (obs & (self.cell_level == lev)).sum())

    def _common(self, j: int, k: int, lev: int | None) -> int:
        both = self.frame.common_mask(j, k)
        return int(both.sum() if lev is None else (both & (self.cell_level == lev)).sum())

    # ---------------------------------------------------------------- tables
    def _pair_estimates(self, level: float, *, scale: str = "logit", df: str | None = None,
                        by: str | None = None) -> PairEstimates:
        """The pair estimates, overall or per level of the covariate (docs/glmm.md §11).

        ``logit``: the log-odds difference (per level: ``beta_{a,l} - beta_{b,l}``,
        the log odds ratio at level l; overall: its average over the levels where
        both models have cells, with a ``note`` when that is not all of them);
        ``response``: the average marginal effect, the difference in probability
        averaged over the cells (per level: the cells at that level), delta-method
        SE.  glmer's Wald z is the only reference (``df="wald"``); ``trials`` are
        the two models' trials on the cells; a model without cells at a level
        gives a NaN row with a ``note``.  Adjusted within each level with ``by``.
        Validated against lme4 1.1 ``glmer(cbind(k, n - k) ~ model * x + ...)``
        (``tests/reference/glmer_by.R``).
        """
        self._check_by(by)
        if df not in (None, "wald"):
            raise DesignError(f"df={df!r}: model x covariate GLMM contrasts are glmer's Wald z "
                              "tests (df='wald'); the containment t is not available for them "
                              "yet (docs/glmm.md)")
        lev = level
        q = stats.norm.ppf(0.5 + lev / 2)
        V = self.fit.vcov
        levels: list[int | None] = [None] if by is None else list(range(len(self.by_levels)))
        rows = []
        for li in levels:
            for j, k in self._pairs():
                row: dict[str, Any] = dict(model_a=self.models[j], model_b=self.models[k])
                if li is not None:
                    row[self.by] = self.by_levels[li]
                if li is None and scale == "logit":
                    both = [x for x in range(len(self.by_levels))
                            if self._logit_vec(j, [x]) is not None
                            and self._logit_vec(k, [x]) is not None]
                    va, vb = self._logit_vec(j, both), self._logit_vec(k, both)
                    sa = None if va is None else (float(va @ self.fit.beta), va)
                    sb = None if vb is None else (float(vb @ self.fit.beta), vb)
                    if sa is not None and len(both) < len(self.by_levels):
                        row["note"] = (f"averaged over the {len(both)} level(s) of {self.by!r} "
                                       "where both models have cells")
                else:
                    sa, sb = self._score(j, li, scale), self._score(k, li, scale)
                n = self._common(j, k, li)
                tr = self._trials(j, k, None if li is None else self.cell_level == li)
                if sa is None or sb is None:
                    row.update(estimate=np.nan, std_error=np.nan, df=np.inf, statistic=np.nan,
                               p_value=np.nan, p_greater=np.nan, ci_lower=np.nan,
                               ci_upper=np.nan, level=lev, n=n, trials=tr,
                               note=f"a model has no cells at {self.by}="
                                    f"{self.by_levels[li] if li is not None else '?'}")
                else:
                    est = sa[0] - sb[0]
                    g = sa[1] - sb[1]
                    se = float(np.sqrt(max(g @ V @ g, 0.0)))
                    row.update(self.contrast_row(row["model_a"], row["model_b"], est, se,
                                                 np.inf, q, stats.norm.sf, level=lev, n=n,
                                                 trials=tr))
                if scale == "logit":
                    e, s = row["estimate"], row["std_error"]
                    row.update(odds_ratio=float(np.exp(e)),
                               odds_ratio_lower=float(np.exp(e - q * s)),
                               odds_ratio_upper=float(np.exp(e + q * s)))
                rows.append(row)
        return PairEstimates(rows, self._meta("contrasts", scale=scale, by=by,
                                              df_method="Wald z (normal), as glmer"),
                             within=None if by is None else self.by, finish=_note_last)

    def model_scores(self, level: float | None = None, *,
                     scale: Literal["logit", "response"] = "logit",
                     by: str | None = None) -> pd.DataFrame:
        """Each model's score (overall or per level) on one scale with its interval.

        Overall: the log-odds averaged over the levels (logit) or the
        probability averaged over all cells (response).  Per level
        (``by``): ``beta_{j,l}`` or the probability averaged over the level's
        cells.  The response interval is the logit interval transformed
        (the average is increasing in each beta).

        Parameters
        ----------
        level : float, optional
            Confidence level; default the fit's.
        scale : {"logit", "response"}, default "logit"
            The scale of the scores.
        by : str, optional
            The covariate: one row per model and level.

        Returns
        -------
        pandas.DataFrame
            ``model`` (``<by>``), ``estimate, std_error, ci_lower, ci_upper,
            level, n`` (the model's cells), ``trials, observed`` (successes /
            trials), ``logit, logit_std_error, probability,
            probability_at_zero`` (per level; overall they average over the
            levels / cells as ``estimate`` does).  NaN with ``note`` where a
            model has no cells at a level.

        Raises
        ------
        DesignError
            ``by`` not the fitted covariate.
        OptionError
            ``scale`` not one of the scales, or ``level`` outside (0, 1).

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example().query("model in ['m01', 'm02', 'm03']")
        >>> b = mixrank.fit("correct ~ model * prompt + (1|subject:model)", df, family="binomial")
        >>> b.model_scores(by="prompt")[["model", "prompt"]].values.tolist()[:4]
        [['m01', 'p1'], ['m02', 'p1'], ['m03', 'p1'], ['m01', 'p2']]
        """
        self._check_by(by)
        lev = self._level(level)
        scale = self.check_option("contrasts", "scale", scale)
        q = stats.norm.ppf(0.5 + lev / 2)
        f, V, idx = self.fit, self.fit.vcov, self._index()
        levels: list[int | None] = [None] if by is None else list(range(len(self.by_levels)))
        rows = []
        for li in levels:
            for j, m in enumerate(self.models):
                row: dict[str, Any] = dict(model=m)
                if li is not None:
                    row[self.by] = self.by_levels[li]
                cols = idx[j] if li is None else idx[j, [li]]
                cols = cols[cols >= 0]
                lg, pr = self._score(j, li, "logit"), self._score(j, li, "response")
                if lg is None or pr is None:
                    rows.append(dict(row, estimate=np.nan, std_error=np.nan, ci_lower=np.nan,
                                     ci_upper=np.nan, level=lev, n=self._cells(j, li),
                                     trials=int(f.trials[cols].sum()),
                                     observed=np.nan, logit=np.nan, logit_std_error=np.nan,
                                     probability=np.nan, probability_at_zero=np.nan,
                                     note=f"no cells at {self.by}="
                                          f"{self.by_levels[li] if li is not None else '?'}"))
                    continue
                lse = float(np.sqrt(max(lg[1] @ V @ lg[1], 0.0)))
                if scale == "logit":
                    est, se, lo, hi = lg[0], lse, lg[0] - q * lse, lg[0] + q * lse
                else:
                    est, se = pr[0], float(np.sqrt(max(pr[1] @ V @ pr[1], 0.0)))
                    cells = (np.arange(self.frame.n_cells) if li is None
                             else np.flatnonzero(self.cell_level == li))
                    shifted = [self._shifted_prob(j, cells, lg[1], d * q * lse) for d in (-1, 1)]
                    lo, hi = shifted
                rows.append(dict(row, estimate=est, std_error=se, ci_lower=lo, ci_upper=hi,
                                 level=lev, n=self._cells(j, li), trials=int(f.trials[cols].sum()),
                                 observed=float(f.successes[cols].sum() / f.trials[cols].sum()),
                                 logit=lg[0], logit_std_error=lse, probability=pr[0],
                                 probability_at_zero=float(expit(lg[0]))))
        out = tidy(rows, **self._meta("model_scores", scale=scale, by=by, score=SCORE[scale],
                                      probability=PROBABILITY, probability_at_zero=AT_ZERO,
                                      response_form=self.response_form))
        if "note" in out.columns:
            out["note"] = out["note"].fillna("").astype(str)
        return out

    def _shifted_prob(self, j: int, cells: np.ndarray, v: np.ndarray, delta: float) -> float:
        """The response score with model j's log-odds (direction ``v``) moved by ``delta``:
        the end point of the transformed logit interval."""
        idx = self._index()
        col = idx[j, self.cell_level[cells]]
        shift = delta / float(v @ v) * v            # moves v'beta by exactly delta
        return float(expit(self.fit.beta[col] + shift[col] + self.fit.cell_effects[cells]).mean())

    def _rank_intervals(self, level: float, *, coverage: str, adjust: str, draws: int,
                        rng: Any, scale: Any = "logit", by: str | None = None) -> pd.DataFrame:
        """Rank intervals overall, or per level of the covariate (``by``).

        Per level, the scores and the pairwise tests are
        ``model_scores(by=)`` and ``contrasts(by=)`` at that level on one
        ``scale``; models without cells at a level are left out there
        (``note``).  Columns as :meth:`GlmmResult.rank_intervals` plus
        ``<by>``.
        """
        self._check_by(by)
        if by is None:
            return super()._rank_intervals(level, coverage=coverage, adjust=adjust,
                                           draws=draws, rng=rng, scale=scale)
        from ...inference.ranks.intervals import rank_intervals_from_contrasts

        if self.pair_filter is not None:
            raise DataError("rank intervals need every pair; refit without pairs=")
        scores = self.model_scores(level, scale=scale, by=by)
        con = self.contrasts(level, scale=scale, by=by)
        parts = []
        for lv in self.by_levels:
            s = scores[(scores[by] == lv) & scores["estimate"].notna()]
            keep = set(s["model"])
            c = con[(con[by] == lv) & con.model_a.isin(keep) & con.model_b.isin(keep)]
            if len(s) < 2:
                continue
            tab = rank_intervals_from_contrasts(s[["model", "estimate", "n"]], c, level=level,
                                                coverage=coverage, adjust=adjust, draws=draws,
                                                rng=rng)
            tab.insert(1, by, lv)
            if len(keep) < len(self.models):
                tab["note"] = f"ranked among the {len(keep)} models with cells at {by}={lv}"
            parts.append(tab)
        out = pd.concat(parts, ignore_index=True)
        if "note" in out.columns:
            out["note"] = out["note"].fillna("").astype(str)
        out.attrs["mixrank"] = dict(parts[0].attrs.get("mixrank", {}), source="glmm",
                                    formula=self.formula.formula, scale=scale,
                                    score=SCORE[scale], by=by, unit=self.unit_of_inference,
                                    response_form=self.response_form)
        return out

    def anova(self, adjust: Literal["holm", "none", "bh", "bonferroni"] = "none") -> pd.DataFrame:
        """Is the gap the same at every level?  Wald chi-square tests of ``model:x``.

        Per pair: H0 ``beta_{a,l} - beta_{b,l}`` equal for all levels l where
        both models have cells (``q - 1`` df for q such levels).  Last row
        (``model_a = model_b = "(all)"``): the joint test of the whole
        ``model:x`` interaction (every model's level profile parallel to the
        first model's), ``(M - 1)(L - 1)`` df when every combination has
        cells.  ``statistic`` is the Wald chi-square; ``f_value`` = chi-square
        / df (glmer's Wald F with infinite denominator df).

        Parameters
        ----------
        adjust : {"none", "holm", "bh", "bonferroni"}, default "none"
            The adjustment of ``p_adjusted`` across the pairs (none: no column).

        Returns
        -------
        pandas.DataFrame
            ``term, model_a, model_b, statistic, df, f_value, p_value``
            (``p_adjusted``, Holm/BH/Bonferroni across the pairs, when
            ``adjust`` is not "none"; the joint row is not adjusted).

        Raises
        ------
        OptionError
            ``adjust`` not one of the values above.

        Notes
        -----
        A Wald test of the joint fit's coefficients (no refit): it equals
        the chi-square computed from glmer's ``fixef``/``vcov`` with the
        same contrast rows (``tests/reference/glmer_by.R``).  A likelihood
        ratio test would need a refit without the interaction.

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example().query("model in ['m01', 'm02', 'm03']")
        >>> b = mixrank.fit("correct ~ model * prompt + (1|subject:model)", df, family="binomial")
        >>> b.anova()[["model_a", "model_b", "df"]].values.tolist()
        [['m01', 'm02', 3], ['m01', 'm03', 3], ['m02', 'm03', 3], ['(all)', '(all)', 6]]
        """
        adjust = self.check_option("anova", "adjust", adjust)
        idx, b, V = self._index(), self.fit.beta, self.fit.vcov
        term = f"{self.formula.spec.comparison}:{self.by}"
        rows = []

        def wald(Lm: np.ndarray) -> tuple[float, int]:
            """Wald chi-square of H0: Lm beta = 0 and its df (the rank of Lm); the statistic
            is invariant to the basis, so an orthonormal basis of Lm's row space is used."""
            if not len(Lm):
                return np.nan, 0
            _, sv, vt = np.linalg.svd(Lm, full_matrices=False)
            Lm = vt[sv > 1e-10 * sv[0]]
            d = Lm @ b
            return float(d @ np.linalg.solve(Lm @ V @ Lm.T, d)), len(Lm)

        for j, k in self._pairs():
            both = [x for x in range(len(self.by_levels)) if idx[j, x] >= 0 and idx[k, x] >= 0]
            Lm = np.zeros((max(len(both) - 1, 0), len(b)))
            for r, x in enumerate(both[1:]):
                Lm[r, idx[j, x]], Lm[r, idx[k, x]] = 1.0, -1.0
                Lm[r, idx[j, both[0]]] -= 1.0
                Lm[r, idx[k, both[0]]] += 1.0
            chi, df = wald(Lm)
            rows.append(dict(term=term, model_a=self.models[j], model_b=self.models[k],
                             statistic=chi, df=df, f_value=chi / df if df else np.nan,
                             p_value=float(stats.chi2.sf(chi, df)) if df else np.nan))
        # joint: every model's contrasts with the first model, every level vs the first
        L_all = []
        for j in range(1, len(self.models)):
            both = [x for x in range(len(self.by_levels)) if idx[j, x] >= 0 and idx[0, x] >= 0]
            for x in both[1:]:
                v = np.zeros(len(b))
                v[idx[j, x]], v[idx[0, x]], v[idx[j, both[0]]], v[idx[0, both[0]]] = 1, -1, -1, 1
                L_all.append(v)
        chi, df = wald(np.array(L_all) if L_all else np.zeros((0, len(b))))
        out = tidy(rows, **self._meta("anova", test="Wald chi-square", adjust=adjust))
        if adjust != "none" and len(out):
            out["p_adjusted"] = adjust_within(out["p_value"].to_numpy(),
                                              [np.arange(len(out))], adjust)
        joint = pd.DataFrame([dict(term=term, model_a="(all)", model_b="(all)", statistic=chi,
                                   df=df, f_value=chi / df if df else np.nan,
                                   p_value=float(stats.chi2.sf(chi, df)) if df else np.nan)])
        res = pd.concat([out, joint], ignore_index=True)
        res.attrs = out.attrs
        return res

    def fixed_effects(self) -> pd.DataFrame:
        """glmer's treatment coding of ``model * x`` (intercept = first model at the first
        level); with a (model, level) combination without cells, the cell-means coding
        (``model<m>:<x><l>`` = that combination's log-odds), which glmer would not identify.

        Returns
        -------
        pandas.DataFrame
            ``term, estimate, std_error, statistic`` (z), ``p_value``.

        Examples
        --------
        >>> import mixrank
        >>> df = mixrank.load_example().query("model in ['m01', 'm02', 'm03']")
        >>> b = mixrank.fit("correct ~ model * prompt + (1|subject:model)", df, family="binomial")
        >>> b.fixed_effects()["term"].tolist()[:6]
        ['(Intercept)', 'modelm02', 'modelm03', 'promptp2', 'promptp3', 'promptp4']
        """
        idx, b, V = self._index(), self.fit.beta, self.fit.vcov
        comp, x = self.formula.spec.comparison, self.by
        if (idx >= 0).all():
            names, T = [], []
            M, L = idx.shape

            def vec(*terms: tuple[int, int, float]) -> np.ndarray:
                v = np.zeros(len(b))
                for j, lv, w in terms:
                    v[idx[j, lv]] += w
                return v

            names.append("(Intercept)")
            T.append(vec((0, 0, 1.0)))
            for j in range(1, M):
                names.append(f"{comp}{self.models[j]}")
                T.append(vec((j, 0, 1.0), (0, 0, -1.0)))
            for lv in range(1, L):
                names.append(f"{x}{self.by_levels[lv]}")
                T.append(vec((0, lv, 1.0), (0, 0, -1.0)))
            for lv in range(1, L):
                for j in range(1, M):
                    names.append(f"{comp}{self.models[j]}:{x}{self.by_levels[lv]}")
                    T.append(vec((j, lv, 1.0), (j, 0, -1.0), (0, lv, -1.0), (0, 0, 1.0)))
            Tm = np.array(T)
        else:
            g = self.fit.groups
            assert g is not None
            names = [f"{comp}{self.models[j]}:{x}{self.by_levels[lv]}" for j, lv in g]
            Tm = np.eye(len(b))
        est, cov = Tm @ b, Tm @ V @ Tm.T
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        z = est / se
        rows = [dict(term=t, estimate=float(e), std_error=float(s), statistic=float(zz),
                     p_value=float(2 * stats.norm.sf(abs(zz))))
                for t, e, s, zz in zip(names, est, se, z)]
        return tidy(rows, **self._meta("fixed_effects"))
