"""Stage inference: contrast matrices and the bootstrap max-t step of rank sets (docs/methods.md §7).

Inputs: a table of pairwise contrasts (estimate, SE, df) or the per-pair
variances ``v_jk = Var(estimate_j - estimate_k)`` of all pairs of M models,
the one-sided p-values of the M(M-1) directed hypotheses and a random
generator.  Outputs: the contrasts as (M, M) matrices and step-down
(Westfall-Young min-p / Romano-Wolf max-t) adjusted p-values of the
directed hypotheses, for one family (simultaneous coverage) or for each
model's two side families (marginal coverage).  Contents:
:func:`contrast_matrices`, :func:`joint_covariance` (the implied model-level
covariance, projected to PSD) and :func:`stepdown_maxt` (adjusted p-values
from standardised Gaussian null draws of the pairwise differences).

The public entry points are :func:`mixrank.inference.ranks.rank_intervals_of`
and :func:`~mixrank.inference.ranks.rank_intervals_from_contrasts` (with
``method="maxt"``); these helpers are pure numpy and are tested directly.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import pandas as pd
from scipy import special, stats

from mixrank._util import listed
from mixrank.errors import DataError
from mixrank.inference.mvt import normal_scores, small_df

__all__ = ["contrast_matrices", "joint_covariance", "stepdown_maxt"]

def contrast_matrices(contrasts: pd.DataFrame, models: list[str]) -> dict[str, np.ndarray]:
    """Pairwise contrasts as (M, M) matrices in the order of ``models``.

    Parameters
    ----------
    contrasts : DataFrame
        One row per pair: ``model_a, model_b, estimate`` (of a - b),
        ``std_error, df`` and optionally ``n``.
    models : list of str

    Returns
    -------
    dict of ndarray (M, M)
        ``estimate`` (antisymmetric), ``variance`` (zero diagonal), ``df``,
        ``statistic`` (t), ``p`` (``p[j, k] = P(t_df >= t_jk)``, one-sided
        for "j better than k"; NaN diagonal), ``n``.  A degenerate pair
        (``std_error`` 0, ``df`` NaN) gets a NaN t and the one-sided p of
        its exact sign test (half its two-sided ``p_value`` in the
        direction of the estimate, 1 in the other; 1 both ways without a
        ``p_value`` column or for a zero gap).

    Raises
    ------
    DataError
        Missing columns, unknown models, duplicated or missing pairs, a NaN
        estimate, a non-positive standard error or df (other than a
        degenerate pair's).
    """
    need = ("model_a", "model_b", "estimate", "std_error", "df")
    miss = [c for c in need if c not in contrasts.columns]
    if miss:
        raise DataError(f"contrasts table lacks columns {miss}; expected {list(need)} (as "
                        "FitResult.contrasts() returns)")
    M = len(models)
    pos = {m: i for i, m in enumerate(models)}
    E, V, D, N = (np.full((M, M), np.nan) for _ in range(4))
    has_n = "n" in contrasts.columns
    seen = np.zeros((M, M), dtype=bool)
    unknown = sorted({str(m) for c in ("model_a", "model_b") for m in contrasts[c]} - set(pos))
    if unknown:
        raise DataError(f"contrasts name models {listed(unknown)} that have no score; give a "
                        "score for every model")
    ns = contrasts["n"] if has_n else [np.nan] * len(contrasts)
    # a degenerate pair's two-sided p: its exact sign test (docs/hardening.md §1), else 1
    P2 = np.ones((M, M))
    p2s = contrasts["p_value"] if "p_value" in contrasts.columns else [1.0] * len(contrasts)
    for a, b, e, s, d, nn, p2 in zip(contrasts["model_a"], contrasts["model_b"],
                                     contrasts["estimate"], contrasts["std_error"],
                                     contrasts["df"], ns, p2s, strict=True):
        j, k = pos[str(a)], pos[str(b)]
        if j == k or seen[j, k]:
            raise DataError(f"contrasts have {'a self-comparison' if j == k else 'a duplicated pair'} "
                            f"({a!r}, {b!r}); expected one row per pair of distinct models")
        seen[j, k] = seen[k, j] = True
        E[j, k], E[k, j] = float(e), -float(e)
        V[j, k] = V[k, j] = float(s) ** 2
        D[j, k] = D[k, j] = float(d)
        N[j, k] = N[k, j] = float(nn)
        P2[j, k] = P2[k, j] = float(p2) if np.isfinite(p2) else 1.0
    off = ~np.eye(M, dtype=bool)
    missing = [(models[j], models[k]) for j, k in np.argwhere(np.triu(off & ~seen))]
    if missing:
        raise DataError(f"{len(missing)} pair(s) of models were not compared: {listed(missing)}. "
                        "Every pair is needed to rank all models; pairs with no common cells "
                        "cannot be fitted: drop one model of each such pair, or fit all pairs "
                        "(pairs=None)")
    # a degenerate pair (FitResult.diagnostics().degenerate): std_error 0 and no df;
    # no evidence either way, p = 1 in both directions
    deg = off & np.isfinite(E) & (V == 0) & ~(D > 0)
    bad = [(models[j], models[k]) for j, k in np.argwhere(np.triu(off) & ~deg & ~(
        np.isfinite(E) & np.isfinite(V) & (V > 0) & (D > 0)))]
    if bad:
        raise DataError(f"estimate, std_error or df is NaN, infinite or not positive for "
                        f"{listed(bad)}; every pair needs a finite estimate and a positive "
                        "standard error and df to be tested (a degenerate pair has std_error 0 "
                        "and df NaN); check those pairs' fits")
    np.fill_diagonal(E, 0.0)
    np.fill_diagonal(V, 0.0)
    ok = off & ~deg
    T = np.where(ok, E / np.sqrt(np.where(ok, V, 1.0)), np.where(deg, np.nan, 0.0))
    P = np.where(ok, stats.t.sf(np.nan_to_num(T), np.where(ok, D, 1.0)), np.nan)
    # sign test of a constant non-zero gap: p2/2 in the observed direction, 1 in the other
    P[deg] = np.where((E[deg] > 0) & (P2[deg] < 1.0), P2[deg] / 2.0, 1.0)
    if contrasts.attrs.get("mixrank", {}).get("ci_method") == "randomization":
        P = _flip_one_sided(contrasts, pos, E, P, ok)
    return dict(estimate=E, variance=V, df=D, statistic=T, p=P, n=N)


def _flip_one_sided(contrasts: pd.DataFrame, pos: dict[str, int], E: np.ndarray,
                    P: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """The one-sided p-values of a table whose tests are the unit sign flips
    (``ci_method == "randomization"``, docs/methods.md §9) instead of the t's: "a better
    than b" is ``p_greater``; "b better than a" is ``p_value / 2`` when the estimate is
    negative (exact: the flip distribution is symmetric), ``p_greater`` at 0 (symmetry),
    and ``1 - p_greater`` when positive (a lower bound of ``P(S <= obs)``, at least 0.5:
    never reached by a level below 0.5)."""
    P = P.copy()
    for a, b, p2, pg in zip(contrasts["model_a"], contrasts["model_b"], contrasts["p_value"],
                            contrasts["p_greater"], strict=True):
        j, k = pos[str(a)], pos[str(b)]
        if not ok[j, k] or not (np.isfinite(p2) and np.isfinite(pg)):
            continue
        P[j, k] = pg
        P[k, j] = p2 / 2.0 if E[j, k] < 0 else pg if E[j, k] == 0 else 1.0 - pg
    return P


def joint_covariance(v: np.ndarray) -> tuple[np.ndarray, float]:
    """Model-level covariance implied by the pairwise variances, projected to PSD.

    Parameters
    ----------
    v : ndarray (M, M)
        Symmetric, ``v[j, k] = Var(X_j - X_k)``, zero diagonal.

    Returns
    -------
    C : ndarray (M, M)
        Positive semi-definite, centred (rows sum to 0) covariance such that
        ``C_jj + C_kk - 2 C_jk`` reproduces ``v_jk`` whenever the pairwise
        variances are jointly consistent.
    clipped : float
        Share of the spectrum's absolute mass removed by the projection
        (0 when the pairwise variances were consistent).

    Notes
    -----
    For any random vector ``X``, ``Cov(X_j - X_k, X_l - X_m) = (v_jm + v_kl
    - v_jl - v_km) / 2`` (docs/methods.md §7).  That matrix over all pairs
    equals ``D C D^T`` with ``D`` the pair-difference matrix and
    ``C = -J v J / 2`` (``J`` the centring matrix; classical
    multidimensional scaling).  Because ``D^T D = M J``, the non-zero
    eigenvalues of ``D C D^T`` are ``M`` times those of ``C`` with
    eigenvectors mapped isometrically, so clipping the negative eigenvalues
    of ``C`` is exactly the Frobenius-nearest PSD projection of the pairwise
    covariance, computed in M rather than M(M-1)/2 dimensions.

    Validated in ``tests/inference/test_ranks.py``: consistent pairwise
    variances of a random covariance are reproduced to 1e-10.
    """
    v = np.asarray(v, dtype=np.float64)
    M = v.shape[0]
    J = np.eye(M) - 1.0 / M
    C = -0.5 * J @ v @ J
    C = 0.5 * (C + C.T)
    w, U = np.linalg.eigh(C)
    neg = float(np.sum(np.abs(w[w < 0])))
    tot = float(np.sum(np.abs(w)))
    wp = np.clip(w, 0.0, None)
    Cp = (U * wp) @ U.T
    return 0.5 * (Cp + Cp.T), (neg / tot if tot > 0 else 0.0)


def _root_and_sd(C: np.ndarray, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A square root of ``C`` and the SD of every pairwise difference under ``C``.

    ``allowed``: pairs that may have zero variance (degenerate pairs, p = 1);
    their SD is reported as 1 (their statistics are then 0 and never reject).
    """
    M = C.shape[0]
    w, U = np.linalg.eigh(C)
    root = U * np.sqrt(np.clip(w, 0.0, None))          # C = root @ root.T
    d = np.diag(C)
    var = d[:, None] + d[None, :] - 2.0 * C
    off = ~np.eye(M, dtype=bool)
    tiny = 1e-14 * max(float(np.max(np.abs(d))), 1e-300)
    zero = (var <= tiny) & off
    if allowed is not None:
        var = np.where(zero & allowed, 1.0, var)
        zero &= ~allowed
    if np.any(zero):
        j, k = np.argwhere(zero)[0]
        raise DataError(f"after the PSD projection the difference of models {j} and {k} has "
                        "zero variance; the pairwise variances are inconsistent or degenerate. "
                        "Use method='holm' instead of 'maxt'")
    return root, np.sqrt(np.where(off, var, 1.0))


def _pair_draw(rng: np.random.Generator, shape: tuple[int, int], root: np.ndarray,
               pairs_of: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """A fresh Gaussian draw of the models (``shape``) mapped to standardized pair differences."""
    return pairs_of(rng.standard_normal(shape) @ root.T)


class _Family:
    """One family of directed hypotheses (j_h better than k_h), sorted by significance."""

    def __init__(self, jj: np.ndarray, kk: np.ndarray, thr: np.ndarray) -> None:
        order = np.argsort(-thr, kind="stable")         # most significant first
        self.jj, self.kk, self.order = jj[order], kk[order], order
        self.thr = thr[order]
        self.count = np.zeros(len(order))

    def add(self, X: np.ndarray, sd: np.ndarray, S: np.ndarray | None = None) -> None:
        """Count the draws ``X`` (b x M); ``S``: the directed statistics (b, M, M) when
        they are not plain standardized differences (multivariate t, small df)."""
        if len(self.jj) == 0:
            return
        Zs = S[:, self.jj, self.kk] if S is not None else (X[:, self.jj] - X[:, self.kk]) / sd[self.jj, self.kk]
        # suffix maxima: the maximum over the hypotheses still in play at step l
        suffix = np.maximum.accumulate(Zs[:, ::-1], axis=1)[:, ::-1]
        self.count += np.sum(suffix >= self.thr[None, :], axis=0)

    def adjusted(self, B: int) -> np.ndarray:
        out = np.empty(len(self.order))
        out[self.order] = np.minimum(1.0, np.maximum.accumulate(self.count / B))
        return out


def stepdown_maxt(p: np.ndarray, C: np.ndarray, *, coverage: str, B: int,
                  rng: np.random.Generator, chunk: int = 256,
                  df: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Step-down max-t adjusted p-values of all directed hypotheses.

    Parameters
    ----------
    p : ndarray (M, M)
        ``p[j, k]``: one-sided p-value of ``H_jk: mu_j <= mu_k`` (rejecting
        it means "j better than k"); the diagonal is ignored.
    C : ndarray (M, M)
        PSD model-level covariance of the estimates.
    coverage : {"marginal", "simultaneous"}
        One family of all M(M-1) directed hypotheses at ``alpha``, or, for
        each model j, two families at ``alpha/2`` each: the M-1 hypotheses
        ``H_jk`` (bounding ``U_j``) and the M-1 hypotheses ``H_kj``
        (bounding ``L_j``), as Holm's marginal procedure.
    B : int
        Number of Gaussian draws.
    rng : numpy.random.Generator
    chunk : int
        Draws generated at a time (memory ``chunk x M(M-1)``); the result
        depends on it only through the order in which ``rng`` is consumed.
    df : ndarray (M, M), optional
        The pairs' df.  Pairs with fewer than
        :data:`~mixrank.inference.mvt.DF_SHARED` df get multivariate-t null
        draws (:func:`mixrank.inference.mvt.normal_scores`: estimated
        variances sharing the pairs' correlation) instead of the Gaussian
        copula, which is anti-conservative at few df.

    Returns
    -------
    adj_a, adj_b : ndarray (M, M)
        ``adj_a[j, k]``: adjusted p-value of ``H_jk`` in the family that
        bounds ``U_j`` (j's family); ``adj_b[j, k]``: in the family that
        bounds ``L_k`` (k's family).  Equal under simultaneous coverage.
        On the scale of ``alpha``: marginal families (tested at ``alpha/2``)
        report ``min(1, 2 * adjusted)``.  NaN on the diagonal.

    Notes
    -----
    Each hypothesis's observed p-value (from its own reference distribution,
    e.g. t with the pair's df) is mapped to the normal scale,
    ``t*_h = Phi^-1(1 - p_h)``; the null draws are Gaussian with the joint
    correlation of the pairwise differences (a Gaussian copula).  At step l
    the adjusted p-value is the share of draws whose maximum over the
    hypotheses not yet rejected reaches ``t*_(l)``, made monotone (Romano &
    Wolf 2005; Westfall & Young 1993, min-p form).  With infinite df this is
    the max-t procedure of Mogstad, Romano, Shaikh & Wilhelm (2024) with
    its stepwise improvement.  The same draws serve every step, so the
    critical values shrink monotonically as hypotheses are rejected.

    Validated against closed forms (``tests/inference/test_ranks.py``): two
    models give ``2p`` (the two-sided |Z|); independent equal-variance
    models give the studentized range (``scipy.stats.studentized_range``)
    at the first step.
    """
    M = p.shape[0]
    off = ~np.eye(M, dtype=bool)
    thr = -special.ndtri(np.clip(p, 1e-300, 1.0))       # Phi^-1(1 - p), accurate for small p
    root, sd = _root_and_sd(C, allowed=(p >= 1.0) & (p.T >= 1.0))  # degenerate pairs
    if coverage == "simultaneous":
        jj, kk = np.nonzero(off)
        fams = [_Family(jj, kk, thr[jj, kk])]
    else:
        fams = []
        for j in range(M):
            others = np.array([k for k in range(M) if k != j], dtype=np.int64)
            mine = np.full(M - 1, j)
            fams.append(_Family(mine, others, thr[j, others]))     # H_jk: j beats k -> U_j
            fams.append(_Family(others, mine, thr[others, j]))     # H_kj: k beats j -> L_j
    iu, ku = np.triu_indices(M, 1)
    dfp = None if df is None else np.asarray(df, dtype=float)[iu, ku]
    mvt = dfp is not None and bool(small_df(dfp).any())
    nu = dfp if dfp is not None else np.zeros(0)
    done = 0
    while done < B:
        b = min(chunk, B - done)
        X = rng.standard_normal((b, M)) @ root.T
        S = None
        if mvt:
            def pairs_of(Y: np.ndarray) -> np.ndarray:
                return (Y[:, iu] - Y[:, ku]) / sd[iu, ku]

            z = normal_scores(pairs_of(X), nu, partial(_pair_draw, rng, (b, M), root, pairs_of),
                              rng)
            S = np.zeros((b, M, M))
            S[:, iu, ku], S[:, ku, iu] = z, -z
        for f in fams:
            f.add(X, sd, S)
        done += b
    adj_a = np.full((M, M), np.nan)
    adj_b = np.full((M, M), np.nan)
    if coverage == "simultaneous":
        f = fams[0]
        a = f.adjusted(B)
        jj, kk = np.nonzero(off)
        adj_a[jj, kk] = a
        adj_b[jj, kk] = a
        return adj_a, adj_b
    for j in range(M):
        others = np.array([k for k in range(M) if k != j], dtype=np.int64)
        # each side at alpha/2: reported on the alpha scale as min(1, 2 * adjusted)
        adj_a[j, others] = np.minimum(1.0, 2.0 * fams[2 * j].adjusted(B))
        adj_b[others, j] = np.minimum(1.0, 2.0 * fams[2 * j + 1].adjusted(B))
    return adj_a, adj_b
