"""Stage arena/estimate: Bradley-Terry (and Davidson) maximum likelihood from pattern counts.

Inputs: :class:`~mixrank.arena.data.Patterns` (win/loss/tie counts per pair
and covariate pattern), the number of models, the tie model.
Outputs: :class:`BTFit` -- strengths ``beta`` (first model = 0), covariate
coefficients ``gamma``, Davidson's ``log_nu``, the observed information and
its inverse; covariances from the observed information, the sandwich (per
battle or clustered) and the multinomial bootstrap on the counts.
Contents (docs/arena.md §3-§4): :func:`check_graph`, :func:`fit_bt`,
:func:`sandwich`, :func:`bootstrap`.

Parameterisation: ``d = beta_a - beta_b + x' gamma`` is the log-odds that
side a beats side b.  ``ties="half"`` scores a tie as half a win for each
side (a binomial likelihood with fractional successes, as FastChat);
``"drop"`` removes ties before counting; ``"davidson"`` uses
``P(a) : P(b) : P(tie) = e^{d/2} : e^{-d/2} : nu`` (Davidson 1970).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import linalg, sparse
from scipy.sparse.csgraph import connected_components

from mixrank._util import as_rng, listed
from mixrank.arena.data import Patterns
from mixrank.errors import ConvergenceError, DataError

__all__ = ["BTFit", "check_graph", "fit_bt", "sandwich", "bootstrap", "with_prior"]

_MAX_IT = 200


@dataclass(frozen=True)
class BTFit:
    """One fitted Bradley-Terry model; ``theta = (beta, gamma[, log_nu])``, ``beta[0] = 0``."""

    theta: np.ndarray
    n_models: int
    n_features: int
    ties: str
    info: np.ndarray          # observed information of the free parameters (theta[1:])
    loglik: float
    iterations: int

    @property
    def beta(self) -> np.ndarray:
        return self.theta[: self.n_models]

    @property
    def gamma(self) -> np.ndarray:
        return self.theta[self.n_models: self.n_models + self.n_features]

    @property
    def log_nu(self) -> float:
        return float(self.theta[-1]) if self.ties == "davidson" else float("nan")

    def covariance(self) -> np.ndarray:
        """Inverse observed information, padded with a zero row/column for ``beta[0]``."""
        return pad(np.linalg.inv(self.info))


def pad(cov_free: np.ndarray) -> np.ndarray:
    """Add the zero row and column of the reference strength ``beta[0]``."""
    P = cov_free.shape[0] + 1
    out = np.zeros((P, P))
    out[1:, 1:] = cov_free
    return out


# ----------------------------------------------------------------------------- checks

def _names(models: tuple[str, ...], idx: np.ndarray) -> str:
    return listed([models[i] for i in idx], 8)


def check_graph(pt: Patterns, models: tuple[str, ...], ties: str, *,
                finite: bool = True) -> None:
    """Refuse a disconnected comparison graph and (MLE) strengths that run to infinity.

    ``finite=False`` checks the connection only (a prior keeps strengths
    finite).

    Raises
    ------
    DataError
        Components named; models that never win or never lose (against the
        rest of their component), with the fixes.
    """
    K = len(models)
    w = np.ones(pt.a.size)
    g = sparse.coo_matrix((w, (pt.a, pt.b)), shape=(K, K)).tocsr()
    ncomp, lab = connected_components(g, directed=False)
    if ncomp > 1:
        groups = [np.flatnonzero(lab == c) for c in range(ncomp)]
        groups.sort(key=lambda s: -s.size)
        desc = "; ".join(f"{{{_names(models, s)}}}" for s in groups[:5])
        raise DataError(f"the comparison graph is disconnected: {ncomp} groups of models never "
                        f"met each other ({desc}{' ...' if ncomp > 5 else ''}); strengths are "
                        "only comparable within a group. Add battles between the groups or fit "
                        "each group separately")
    if not finite:
        return
    tie_both = pt.tie > 0 if ties != "drop" else np.zeros(pt.a.size, dtype=bool)
    beat_ab = (pt.win > 0) | tie_both           # edge a -> b: a won (or tied) against b
    beat_ba = (pt.loss > 0) | tie_both
    src = np.concatenate([pt.a[beat_ab], pt.b[beat_ba]])
    dst = np.concatenate([pt.b[beat_ab], pt.a[beat_ba]])
    win = sparse.coo_matrix((np.ones(src.size), (src, dst)), shape=(K, K)).tocsr()
    ns, slab = connected_components(win, directed=True, connection="strong")
    if ns == 1:
        return
    # components that nobody outside ever beat (top) / that never beat anyone outside (bottom)
    cross = slab[src] != slab[dst]
    beaten = np.zeros(ns, dtype=bool)
    beaten[slab[dst[cross]]] = True
    beats = np.zeros(ns, dtype=bool)
    beats[slab[src[cross]]] = True
    top = np.flatnonzero(np.isin(slab, np.flatnonzero(~beaten)))
    bottom = np.flatnonzero(np.isin(slab, np.flatnonzero(~beats)))
    raise DataError(
        "the maximum-likelihood strengths are infinite: models "
        f"{{{_names(models, top)}}} never lost a battle to the other models they met, and "
        f"models {{{_names(models, bottom)}}} never won one against them, so their scores run "
        "to +/- infinity. Pass prior=0.5 (adds 0.5 pseudo-wins each way to every pair that "
        "met, docs/arena.md §4, \"Prior\"), or collect more battles")


def with_prior(pt: Patterns, prior: float) -> Patterns:
    """Add ``prior`` pseudo-wins each way to every pair that met, at covariates zero."""
    key = np.unique(np.column_stack([pt.a, pt.b]), axis=0)
    m = key.shape[0]
    return Patterns(a=np.concatenate([pt.a, key[:, 0]]), b=np.concatenate([pt.b, key[:, 1]]),
                    x=np.vstack([pt.x, np.zeros((m, pt.x.shape[1]))]),
                    win=np.concatenate([pt.win, np.full(m, prior)]),
                    loss=np.concatenate([pt.loss, np.full(m, prior)]),
                    tie=np.concatenate([pt.tie, np.zeros(m)]), index=pt.index, flip=pt.flip)


# ----------------------------------------------------------------------------- likelihood

def _d(pt: Patterns, theta: np.ndarray, K: int, p: int) -> np.ndarray:
    return theta[pt.a] - theta[pt.b] + pt.x @ theta[K: K + p]


def _expit(d: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * d))


def _terms(pt: Patterns, theta: np.ndarray, K: int, p: int, ties: str
           ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray | None]:
    """Log-likelihood, per-pattern gradient in (d[, phi]) and information weights."""
    d = _d(pt, theta, K, p)
    if ties != "davidson":
        t = pt.tie if ties == "half" else 0.0 * pt.tie
        y = pt.win + 0.5 * t
        n = pt.win + pt.loss + t
        pr = _expit(d)
        ll = float(np.sum(y * d - n * np.logaddexp(0.0, d)))
        g = np.column_stack([y - n * pr])
        h = (n * pr * (1 - pr))[:, None, None]
        return ll, g, h, None
    phi = theta[-1]
    lz = np.logaddexp(np.logaddexp(0.5 * d, -0.5 * d), phi)
    pa, pb, ptie = np.exp(0.5 * d - lz), np.exp(-0.5 * d - lz), np.exp(phi - lz)
    n = pt.n
    ll = float(np.sum(pt.win * 0.5 * d - pt.loss * 0.5 * d + pt.tie * phi - n * lz))
    g = np.column_stack([0.5 * (pt.win - pt.loss) - 0.5 * n * (pa - pb), pt.tie - n * ptie])
    h = np.empty((d.size, 2, 2))
    h[:, 0, 0] = 0.25 * n * ((pa + pb) - (pa - pb) ** 2)
    h[:, 0, 1] = h[:, 1, 0] = -0.5 * n * (pa - pb) * ptie
    h[:, 1, 1] = n * ptie * (1 - ptie)
    return ll, g, h, np.column_stack([pa, pb, ptie])


def _grad(pt: Patterns, g: np.ndarray, K: int) -> np.ndarray:
    gd = g[:, 0]
    parts = [np.bincount(pt.a, gd, K) - np.bincount(pt.b, gd, K), pt.x.T @ gd]
    if g.shape[1] == 2:
        parts.append(np.array([g[:, 1].sum()]))
    return np.concatenate(parts)


def assemble(pt: Patterns, h: np.ndarray, K: int) -> np.ndarray:
    """``sum_i z_i' H_i z_i`` over patterns, ``z_i = (e_a - e_b, x_i[, phi])`` (full size)."""
    p = pt.x.shape[1]
    q = h.shape[1]
    P = K + p + (q - 1)
    out = np.zeros((P, P))
    hd = h[:, 0, 0]
    lap = (np.bincount(pt.a * K + pt.b, hd, K * K) + np.bincount(pt.b * K + pt.a, hd, K * K)
           ).reshape(K, K)
    out[:K, :K] = np.diag(lap.sum(axis=1)) - lap
    xh = pt.x * hd[:, None]
    for k in range(p):
        col = np.bincount(pt.a, xh[:, k], K) - np.bincount(pt.b, xh[:, k], K)
        out[:K, K + k] = out[K + k, :K] = col
    out[K:K + p, K:K + p] = pt.x.T @ xh
    if q == 2:
        hp = h[:, 0, 1]
        col = np.concatenate([np.bincount(pt.a, hp, K) - np.bincount(pt.b, hp, K),
                              pt.x.T @ hp])
        out[:-1, -1] = out[-1, :-1] = col
        out[-1, -1] = h[:, 1, 1].sum()
    return out


def _check_identified(info: np.ndarray, K: int, p: int, names: tuple[str, ...]) -> None:
    """Refuse covariates without variation or collinear with the strengths."""
    if not p:
        return
    scale = np.sqrt(np.clip(np.diag(info), 1e-300, None))
    corr = info / np.outer(scale, scale)
    w = np.linalg.eigvalsh(corr)
    flat = np.diag(info)[K - 1:K - 1 + p] <= 1e-12 * max(1.0, float(np.max(np.diag(info))))
    if flat.any() or w[0] < 1e-10 * w[-1]:
        bad = [n for n, f in zip(names, flat) if f] or list(names)
        raise DataError(f"covariate(s) {bad} cannot be estimated: their side differences are "
                        "all zero or a combination of the models' strengths (e.g. a feature "
                        "that is constant per model); drop them from the formula")


def _check_finite(theta: np.ndarray, info: np.ndarray, K: int, p: int,
                  names: tuple[str, ...]) -> None:
    """Refuse an optimum at infinity (separation): huge log-odds or a singular information."""
    try:   # pivots of the Cholesky factor: a cheap rank check (no eigen-decomposition)
        piv = np.diag(np.linalg.cholesky(info)) ** 2
        singular = not piv.min() > 1e-12 * max(piv.max(), 1e-300)
    except np.linalg.LinAlgError:
        singular = True
    if np.max(np.abs(theta)) > 30 or singular:
        big = [names[j] if j < len(names) else f"x{j}" for j in range(p)
               if abs(theta[K + j]) > 30] if p else []
        what = (f"covariate(s) {big} separate wins from losses" if big else
                "some strengths or covariate effects are not determined by these battles")
        raise DataError(f"the maximum-likelihood estimates run to infinity: {what}. Collect more "
                        "battles, drop the covariate, or pass prior=0.5 for the strengths")


def fit_bt(pt: Patterns, K: int, *, ties: str = "half", start: np.ndarray | None = None,
           tol: float = 1e-11, names: tuple[str, ...] = ()) -> BTFit:
    """Newton-Raphson with the exact Hessian and step halving (docs/arena.md §3).

    Raises
    ------
    DataError
        Covariates (``names``) that cannot be estimated (no variation, or
        collinear with the strengths).
    ConvergenceError
        No convergence in 200 iterations (e.g. covariates that separate
        wins from losses).
    """
    p = pt.x.shape[1]
    P = K + p + (ties == "davidson")
    if start is not None:
        theta = np.array(start, dtype=float)
    else:
        theta = np.zeros(P)
        if ties == "davidson":
            share = max(pt.tie.sum() / max(pt.n.sum(), 1.0), 1e-3)
            theta[-1] = np.log(2 * share / max(1 - share, 1e-3))
    ll, g, h, _ = _terms(pt, theta, K, p, ties)
    if start is None:
        _check_identified(assemble(pt, h, K)[1:, 1:], K, p, names)
    for it in range(1, _MAX_IT + 1):
        grad = _grad(pt, g, K)[1:]
        info = assemble(pt, h, K)[1:, 1:]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", linalg.LinAlgWarning)
                step = linalg.solve(info, grad, assume_a="pos")
        except (linalg.LinAlgError, linalg.LinAlgWarning, ValueError):
            step = linalg.lstsq(info, grad)[0]
        t = 1.0
        while True:
            new = theta.copy()
            new[1:] += t * step
            ll_new, g_new, h_new, _ = _terms(pt, new, K, p, ties)
            if np.isfinite(ll_new) and ll_new >= ll - 1e-12 * max(1.0, abs(ll)):
                break
            t *= 0.5
            if t < 1e-10:
                raise ConvergenceError("the Bradley-Terry likelihood could not be increased "
                                       "along the Newton direction; check the covariates for "
                                       "separation (a feature that decides every battle)")
        theta, ll, g, h = new, ll_new, g_new, h_new
        if np.max(np.abs(t * step)) < tol * (1 + np.max(np.abs(theta))):
            info = assemble(pt, h, K)[1:, 1:]
            _check_finite(theta, info, K, p, names)
            return BTFit(theta=theta, n_models=K, n_features=p, ties=ties, info=info,
                         loglik=ll, iterations=it)
    raise ConvergenceError(f"Newton did not converge in {_MAX_IT} iterations (largest step "
                           f"{np.max(np.abs(step)):.3g}); a covariate may separate wins from "
                           "losses, or strengths run to infinity: try prior=0.5")


# ----------------------------------------------------------------------------- uncertainty

def _battle_scores(pt: Patterns, fit: BTFit, outcome: np.ndarray) -> np.ndarray:
    """Per-battle scores in (d[, phi]) at the fitted values, for oriented outcomes."""
    K, p = fit.n_models, fit.n_features
    d = _d(pt, fit.theta, K, p)[pt.index]
    o = np.where(pt.flip, 1.0 - outcome, outcome)
    if fit.ties != "davidson":
        return (o - _expit(d))[:, None]
    _, _, _, probs = _terms(pt, fit.theta, K, p, "davidson")
    assert probs is not None   # davidson always returns its three probabilities
    pa, pb, ptie = probs[pt.index].T
    sd = 0.5 * ((o == 1.0).astype(float) - (o == 0.0)) - 0.5 * (pa - pb)
    return np.column_stack([sd, (o == 0.5) - ptie])


def sandwich(pt: Patterns, fit: BTFit, outcome: np.ndarray,
             cluster: np.ndarray | None = None) -> np.ndarray:
    """Sandwich covariance ``I^-1 M I^-1`` (padded), M from per-battle or per-cluster scores.

    Clustered: ``M = G/(G-1) sum_g u_g u_g'`` with ``u_g`` the sum of the
    scores of cluster g's battles (docs/arena.md §4).
    """
    K = fit.n_models
    s = _battle_scores(pt, fit, outcome)
    bread = np.linalg.inv(fit.info)
    if cluster is None:
        q = s.shape[1]
        m = np.empty((pt.a.size, q, q))
        for i in range(q):
            for j in range(q):
                m[:, i, j] = np.bincount(pt.index, s[:, i] * s[:, j], pt.a.size)
        meat = assemble(pt, m, K)[1:, 1:]
    else:
        G = int(cluster.max()) + 1
        a, b, sd = pt.a[pt.index], pt.b[pt.index], s[:, 0]
        ub = (sparse.coo_matrix((sd, (cluster, a)), shape=(G, K))
              - sparse.coo_matrix((sd, (cluster, b)), shape=(G, K))).tocsc()
        cols = [ub]
        x = pt.x[pt.index]
        if x.shape[1]:
            cols.append(sparse.csc_matrix(np.column_stack(
                [np.bincount(cluster, sd * x[:, k], G) for k in range(x.shape[1])])))
        if s.shape[1] == 2:
            cols.append(sparse.csc_matrix(np.bincount(cluster, s[:, 1], G)[:, None]))
        U = sparse.hstack(cols).tocsc()[:, 1:]
        meat = (U.T @ U).toarray() * (G / (G - 1) if G > 1 else np.inf)
    return pad(bread @ meat @ bread)


def bootstrap(pt: Patterns, fit: BTFit, B: int, rng: object = None,
              prior: float = 0.0) -> np.ndarray:
    """B multinomial resamples of the battles' (pattern, outcome) counts, each refitted.

    Returns a (B, P) array of ``theta`` (``beta[0] = 0``).  Each refit is
    Newton from the full-data estimate on K(K-1)/2 x 3 counts (or per
    covariate pattern), not a refit on the resampled rows.  A resample
    whose strengths run to infinity (possible when a pair met rarely) is
    redrawn.  ``prior`` pseudo-wins (see :func:`with_prior`) are added to
    every resample, not resampled.
    """
    gen = as_rng(rng)
    counts = np.concatenate([pt.win, pt.loss, pt.tie])
    N = int(round(counts.sum()))
    probs = counts / counts.sum()
    m = pt.a.size
    out = np.empty((B, fit.theta.size))
    done = tries = 0
    names = tuple(str(i) for i in range(fit.n_models))
    while done < B:
        tries += 1
        if tries > 3 * B + 10:
            raise DataError("most bootstrap resamples have strengths running to infinity (pairs "
                            "met too rarely); use se='information' or 'sandwich', or prior=0.5")
        c = gen.multinomial(N, probs).astype(float)
        res = Patterns(a=pt.a, b=pt.b, x=pt.x, win=c[:m], loss=c[m:2 * m], tie=c[2 * m:],
                       index=pt.index, flip=pt.flip)
        if prior > 0:
            res = with_prior(res, prior)
        try:
            check_graph(res, names, fit.ties, finite=prior == 0)
            out[done] = fit_bt(res, fit.n_models, ties=fit.ties, start=fit.theta, tol=1e-9).theta
        except (ConvergenceError, DataError):
            continue
        if np.max(np.abs(out[done])) > 50:
            continue
        done += 1
    return out
