"""Stage engine: closed-form REML for balanced designs (orthogonal strata).

Inputs: a :class:`~mixrank.frame.Frame` whose cells form a balanced design
and a pair scored on every cell.  Outputs: a :class:`~mixrank.engine.records.RemlFit`
equal to the general engine's, computed from per-level sums.

Theory (Nelder 1965; Searle, Casella & McCulloch 1992, ch. 4): the random
terms' partitions of the cells, closed under intersection and with the
trivial partitions added, form a lattice.  In a balanced design every
partition has equal block sizes and the averaging operators commute, so the
covariance ``V = sigma^2 I + sum_r sigma_r^2 m_r P_r`` has one eigenvalue per
stratum F: ``lambda_F = sigma^2 + sum_{r: F coarser than T_r} m_r sigma_r^2``.
Stratum sums of squares follow by Moebius inversion of ``d'P_G d`` over the
lattice.  The REML estimates are ``lambda_g = SS_g / df_g`` per group of
strata sharing an eigenvalue, when the implied components are all positive;
``Var(mu_hat) = lambda_U / N`` and the Satterthwaite df is the classic one for
that linear combination of mean squares.  Otherwise (a component would be
negative) the pair is handed to the general engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..._util import exact_mean
from ...frame import Frame
from ...frame.encode import combine_codes
from ..records import RemlFit
from .criterion import LOG2PI
from .satterthwaite import balanced_df

__all__ = ["Lattice", "build_lattice", "fit_balanced"]


@dataclass(frozen=True, eq=False)
class Lattice:
    codes: list[np.ndarray]          # per partition, codes over the frame's cells
    nblocks: np.ndarray              # per partition
    size: np.ndarray                 # block size per partition
    term_index: dict[str, int]       # random term -> partition index
    mobius: np.ndarray               # mu(F, G); nonzero only for G coarser-or-equal F
    df: np.ndarray                   # stratum degrees of freedom
    groups: list[tuple[int, ...]]    # partition indices per eigenvalue group (U excluded)
    group_terms: list[tuple[int, ...]]  # term positions (spec order) entering each group's lambda
    design: np.ndarray               # group lambda = design @ (sigma_1^2..sigma_R^2, sigma^2)


def _join_count(a: np.ndarray, na: int, b: np.ndarray, nb: int) -> tuple[int, np.ndarray]:
    g = sp.coo_matrix((np.ones(len(a)), (a, b + na)), shape=(na + nb, na + nb)).tocsr()
    k, lab = connected_components(g, directed=False)
    return k, lab[:na][a]


def _average(codes: np.ndarray, k: int, x: np.ndarray) -> np.ndarray:
    """Block means of ``x`` over the partition ``codes`` (k blocks), cell by cell."""
    s = np.bincount(codes, weights=x, minlength=k)
    c = np.bincount(codes, minlength=k)
    return (s / c)[codes]


def _orthogonal(parts: list[np.ndarray], nbl: list[int], geq: np.ndarray, tol: float) -> bool:
    """Whether the averaging operators of incomparable partitions commute.

    Checked as ``P_A P_B v = P_join v`` for one random ``v`` (seeded), to ``tol``.
    """
    v = np.random.default_rng(0).normal(size=len(parts[0]))
    P = len(parts)
    for a in range(P):
        for b in range(a + 1, P):
            if geq[a, b] or geq[b, a]:
                continue
            kj, jc = _join_count(parts[a], nbl[a], parts[b], nbl[b])
            lhs = _average(parts[a], nbl[a], _average(parts[b], nbl[b], v))
            if not np.allclose(lhs, _average(jc, kj, v), atol=tol):
                return False
    return True


def _mobius(geq: np.ndarray, nb: np.ndarray) -> np.ndarray:
    """Moebius function ``mu(F, G)`` over the order F <= G (G coarser), ``nb`` blocks each."""
    P = len(nb)
    order = np.argsort(-nb)  # finest first
    mob = np.zeros((P, P))
    for f in range(P):
        ups = [g for g in order[::-1] if geq[f, g]]   # coarsest ... finest among G >= F
        ups = sorted(ups, key=lambda g: -nb[g])       # from F upwards (finest first)
        for g in ups:
            if g == f:
                mob[f, g] = 1.0
            else:
                mob[f, g] = -sum(mob[f, h] for h in ups
                                 if h != g and geq[f, h] and geq[h, g] and nb[h] > nb[g])
    return mob


def build_lattice(frame: Frame, orthogonality_tol: float = 1e-9) -> Lattice | None:
    """The strata lattice of a balanced frame, or None when not balanced/orthogonal.

    ``orthogonality_tol``: absolute tolerance of the check that the averaging
    operators commute (:class:`~mixrank.engine.control.Control`).
    """
    spec = frame.spec
    n = frame.n_cells
    if not spec.random or n < 2:
        return None
    parts: list[np.ndarray] = []
    nbl: list[int] = []

    firsts: list[np.ndarray] = []

    def refines(f: int, codes: np.ndarray) -> bool:
        """True when ``codes`` is constant on every block of partition f."""
        return bool(np.array_equal(codes[firsts[f]][parts[f]], codes))

    def add(codes: np.ndarray, k: int) -> int:
        for i, kk in enumerate(nbl):
            if kk == k and refines(i, codes):
                return i
        first = np.empty(k, dtype=np.int64)
        first[codes[::-1]] = np.arange(n)[::-1]
        parts.append(codes.astype(np.int64))
        nbl.append(k)
        firsts.append(first)
        return len(parts) - 1

    uni = add(np.zeros(n, dtype=np.int64), 1)
    term_index = {t: add(frame.term_codes[t], frame.term_levels[t]) for t in spec.term_names}
    add(np.arange(n), n)
    done: set[tuple[int, int]] = set()
    changed = True
    while changed:                      # close under intersection
        changed = False
        for i in range(len(parts)):
            for j in range(i + 1, len(parts)):
                if (i, j) in done:
                    continue
                done.add((i, j))
                if refines(i, parts[j]) or refines(j, parts[i]):
                    continue            # comparable: the meet is one of the two
                c, k, _ = combine_codes(parts[i], nbl[i], parts[j], nbl[j])
                before = len(parts)
                add(c, k)
                changed |= len(parts) > before
                if len(parts) > 40:
                    return None
    P = len(parts)
    nb = np.array(nbl)
    size = np.zeros(P)
    for i, c in enumerate(parts):
        cnt = np.bincount(c, minlength=nbl[i])
        if cnt.min() != cnt.max():
            return None
        size[i] = cnt[0]
    # coarser-or-equal relation: G >= F iff meet(F, G) has as many blocks as F
    geq = np.zeros((P, P), dtype=bool)     # geq[F, G]: G coarser or equal F
    for f in range(P):
        for g in range(P):
            geq[f, g] = f == g or (nbl[g] <= nbl[f] and refines(f, parts[g]))
    if not _orthogonal(parts, nbl, geq, orthogonality_tol):
        return None
    mob = _mobius(geq, nb)
    df = mob @ nb
    # eigenvalue groups: strata keyed by the set of terms T_r with F coarser-or-equal T_r
    terms = list(spec.term_names)
    key_of: dict[tuple[int, ...], list[int]] = {}
    for f in range(P):
        if f == uni or df[f] <= 0:
            continue
        key = tuple(r for r, t in enumerate(terms) if geq[term_index[t], f])
        key_of.setdefault(key, []).append(f)
    groups = [tuple(v) for v in key_of.values()]
    group_terms = list(key_of.keys())
    R = len(terms)
    design = np.zeros((len(groups), R + 1))
    for gi, key in enumerate(group_terms):
        design[gi, R] = 1.0
        for r in key:
            design[gi, r] = size[term_index[terms[r]]]
    if len(groups) != R + 1 or np.linalg.matrix_rank(design) < R + 1:
        return None
    return Lattice(codes=parts, nblocks=nb, size=size, term_index=term_index, mobius=mob, df=df,
                   groups=groups, group_terms=group_terms, design=design)


def fit_balanced(frame: Frame, lat: Lattice, j: int, k: int, d: np.ndarray,
                 whole: bool | None = None) -> RemlFit | None:
    """Closed-form REML fit of the pair (j, k), or None when a component would be < 0."""
    n = frame.n_cells
    terms = list(frame.spec.term_names)
    st = frame.stats
    q = np.empty(len(lat.codes))
    for i, codes in enumerate(lat.codes):
        if lat.nblocks[i] == n:
            q[i] = float(d @ d)
            continue
        tname = next((t for t, ti in lat.term_index.items() if ti == i), None)
        if tname is not None:
            s = st.level_sums[tname][:, j] - st.level_sums[tname][:, k]
        else:
            s = np.bincount(codes, weights=d, minlength=lat.nblocks[i])
        q[i] = float(s @ s) / lat.size[i]
    ss = lat.mobius @ q
    lam = np.array([sum(ss[f] for f in g) / sum(lat.df[f] for f in g) for g in lat.groups])
    dfg = np.array([sum(lat.df[f] for f in g) for g in lat.groups])
    if np.any(lam <= 0):
        return None
    comps = np.linalg.solve(lat.design, lam)        # sigma_1^2..sigma_R^2, sigma^2
    if np.any(comps[:-1] <= 0) or comps[-1] <= 0:
        return None
    m = np.array([lat.size[lat.term_index[t]] for t in terms])
    lam_u = comps[-1] + float(m @ comps[:-1])
    var_mu = lam_u / n
    # lambda_U as a linear combination of the group eigenvalues
    a = np.append(m, 1.0) @ np.linalg.inv(lat.design)
    df = balanced_df(lam_u, a, lam, dfg)
    mu = exact_mean(d, whole)   # order-free: ties stay exact (docs/hardening.md §9)
    # lme4's REML criterion: sum_F df_F log lambda_F + SS_F/lambda_F + log N + (N-1) log 2 pi
    crit = float(np.sum(dfg * np.log(lam)) + np.sum(dfg) + math.log(n) + (n - 1) * LOG2PI)
    sigma2 = comps[-1]
    theta = np.sqrt(comps[:-1] / sigma2)
    return RemlFit(names=tuple(terms) + ("residual",), variances=comps, theta=theta,
                   sigma=math.sqrt(sigma2), mu=mu, var_mu=var_mu, df=df, criterion=crit, n=n,
                   boundary=(), gradient=0.0, converged=True, message="closed form (balanced)",
                   nfev=0, theta_block=None, block_names=tuple(terms))
