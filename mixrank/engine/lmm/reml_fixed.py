"""Stage engine: profiled REML with p fixed columns for the paired differences of one pair.

Inputs: the random-effects :class:`~mixrank.engine.structure.Structure` of a
pair's common cells and :class:`FixedSums` (cross-products of the fixed
columns ``X``, the differences ``d`` and the random-term indicators).
Outputs: :class:`FixedFit` — REML variance components, ``beta``, its
covariance, the Jacobian of that covariance in the variance parameters and
their asymptotic covariance (what lmerTest's ``contest`` needs), REML criterion.

Model (docs/interactions.md §2): ``d = X beta + sum_r Z_r b_r + e``.  With
``Lambda = diag(theta)``, ``A = Lambda Z'Z Lambda + I`` and, for any two
columns ``a, b`` of ``[X, d]``, ``Q(a, b) = (Z'a)' Lambda A^-1 Lambda (Z'b)``,
the matrix ``T - Q`` (``T = [X d]'[X d]``) has the Cholesky factor
``[[R_X, r_Xy], [0, r]]``: ``R_X'R_X = X'V^-1 X`` (times sigma^2), ``r^2`` the
penalised residual sum of squares at ``beta_hat``.  The profiled REML
criterion (lme4's ``REMLcrit``) is::

    log|A| + log|R_X|^2 + (n - p) (1 + log(2 pi r^2 / (n - p)))

``Q`` is computed like the intercept-only engine's quadratic forms (dense
mode: the largest term's levels grouped by their count, a Schur complement
of dimension q2; sparse mode: a sparse LU of ``A``), with ``p + 1`` columns
instead of 2.  The criterion itself is
:func:`mixrank.engine.lmm.criterion.reml_criterion` (the one definition).
Optimised over ``psi = theta^2 >= 0`` by the one optimiser,
:func:`mixrank.engine.lmm.reml.optimise`, on a :class:`FixedObjective`
(L-BFGS-B from the :class:`~mixrank.engine.control.Control`'s starts, the KKT
certificate, boundary faces and polish; central-difference gradients in
sparse mode).  The moment start and the per-term gradient parts are shared
with :mod:`mixrank.engine.lmm.objective` and :mod:`mixrank.engine.lmm.reml_grad`.
The gradient is analytic in dense mode (``criterion_and_gradient``).
Satterthwaite quantities follow lmerTest: the Hessian of the REML deviance
in ``(theta, sigma)`` and the Jacobian of ``Cov(beta_hat)``, both by
central differences (:mod:`mixrank.engine.lmm.satterthwaite`; the control's
finer ``fd_steps`` step, 1e-4 relative, with an absolute floor for theta;
Richardson extrapolation changed df by < 1e-6 relative on the reference
designs, so it is not used).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ...errors import DesignError
from ..control import DEFAULT_CONTROL, Control
from ..structure import Structure
from .criterion import reml_criterion, reml_deviance
from .objective import _PairObjective, moment_psi
from .reml import check_convergence, optimise
from .reml_grad import term_parts, unpack
from .satterthwaite import central_hessian, central_jacobian

__all__ = ["FixedSums", "FixedFit", "FixedObjective", "fit_reml_fixed", "criterion", "criterion_and_gradient"]



@dataclass(frozen=True, eq=False)
class FixedSums:
    """Sums of one pair that the p-column criterion needs.

    ``W = [X, d]`` (n x (p+1)).  ``T = W'W``; ``ZW`` per term (block order)
    the level sums of W's columns; dense mode: ``P`` (G, p+1, p+1) the sum
    over each count group of the largest term's levels of ``w_i w_i'``,
    ``H`` (G, q2, p+1) of ``z_i w_i'`` (z_i: the level's block-2 counts) and
    ``W2`` (q2, p+1) the stacked block-2 level sums.
    """

    n: int
    p: int
    T: np.ndarray
    ZW: tuple[np.ndarray, ...]
    P: np.ndarray | None = None
    H: np.ndarray | None = None
    W2: np.ndarray | None = None


def group_sums(st: Structure, ZW: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense-mode ``(P, H, W2)`` of :class:`FixedSums` from the level sums ``ZW``."""
    W1 = ZW[0]
    groups = cast(np.ndarray, st.groups)
    nG = len(cast(np.ndarray, st.group_values))
    k = W1.shape[1]
    P = np.zeros((nG, k, k))
    np.add.at(P, groups, W1[:, :, None] * W1[:, None, :])
    z12 = cast(np.ndarray, st.z12)
    q2 = z12.shape[1]
    onehot = cast(sp.csr_matrix, st.onehot)
    H = np.empty((nG, q2, k))
    for j in range(k):
        H[:, :, j] = np.asarray(onehot @ (z12 * W1[:, j:j + 1]))
    W2 = np.concatenate(ZW[1:], axis=0) if len(ZW) > 1 else np.zeros((0, k))
    return P, H, W2


_potrf, _potri, _trtrs = la.lapack.dpotrf, la.lapack.dpotri, la.lapack.dtrtrs


def _chol(S: np.ndarray) -> np.ndarray:
    L, info = _potrf(S, lower=1, clean=1, overwrite_a=1)
    if info != 0:
        raise la.LinAlgError(f"matrix not positive definite (potrf info {info})")
    return L


def _quad(st: Structure, fs: FixedSums, theta: np.ndarray, grad: bool = False
          ) -> tuple[float, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``(log|A|, Q)`` at ``theta`` (block order); Q is (p+1) x (p+1).

    With ``grad`` (dense mode only) also the derivatives of ``log|A|`` (R,)
    and of ``Q`` (R, p+1, p+1) in ``psi = theta^2``, derived as in
    :mod:`mixrank.engine.lmm.reml_grad` with p + 1 columns (docs/interactions.md §2).
    """
    k = fs.p + 1
    if st.mode == "none":
        return 0.0, np.zeros((k, k)), None, None
    if st.mode == "sparse":
        lam = np.concatenate([np.full(L, t) for L, t in zip(st.levels, theta)])
        Lm = sp.diags(lam)
        A = (Lm @ cast(sp.csc_matrix, st.ztz) @ Lm + sp.identity(len(lam))).tocsc()
        lu = spla.splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0)
        logdet = float(np.sum(np.log(np.abs(lu.U.diagonal()))))
        rhs = lam[:, None] * np.concatenate(fs.ZW, axis=0)
        return logdet, rhs.T @ lu.solve(rhs), None, None
    gv, gs = cast(np.ndarray, st.group_values), cast(np.ndarray, st.group_sizes)
    P, H, W2 = cast(np.ndarray, fs.P), cast(np.ndarray, fs.H), cast(np.ndarray, fs.W2)
    R = len(st.levels)
    a = float(theta[0]) ** 2
    D = a * gv + 1.0
    w = 1.0 / D
    logdet = float(gs @ np.log(D))
    Q = a * np.tensordot(w, P, axes=1)
    dl = dQ = None
    if grad:
        w2 = w * w
        dl, dQ = np.zeros(R), np.zeros((R, k, k))
        dl[0] = float(gs @ (gv * w))
        dQ[0] = np.tensordot(w2, P, axes=1)
    q2 = W2.shape[0]
    if q2 == 0:
        return logdet, Q, dl, dQ
    lam = np.concatenate([np.full(L, t) for L, t in zip(st.levels[1:], theta[1:])])
    if st.G is not None:
        M2 = cast(np.ndarray, st.z22) - a * unpack(w @ st.G, st.triu, q2)
    else:
        z12 = cast(np.ndarray, st.z12)
        M2 = cast(np.ndarray, st.z22) - a * (z12.T @ (z12 * w[cast(np.ndarray, st.groups)][:, None]))
    U = W2 - a * np.tensordot(w, H, axes=1)
    S = lam[:, None] * M2 * lam[None, :]
    S.flat[:: q2 + 1] += 1.0
    L = _chol(S)
    logdet += 2.0 * float(np.sum(np.log(L.diagonal())))
    if not grad:
        y, info = _trtrs(L, lam[:, None] * U, lower=1)
        return logdet, Q + y.T @ y, None, None
    Sinv, info = _potri(L, lower=1)
    Sinv = np.tril(Sinv) + np.tril(Sinv, -1).T
    B = lam[:, None] * Sinv * lam[None, :]                # Psi2 (I + M2 Psi2)^-1
    BU = B @ U
    Q = Q + U.T @ BU
    dl, dQ = cast(np.ndarray, dl), cast(np.ndarray, dQ)
    if st.G is not None:
        P2 = unpack((w * w) @ st.G, st.triu, q2)
    else:
        z12 = cast(np.ndarray, st.z12)
        P2 = z12.T @ (z12 * (w * w)[cast(np.ndarray, st.groups)][:, None])
    dU = -np.tensordot(w * w, H, axes=1)
    dl[0] -= float(np.sum(B * P2))
    dQ[0] += dU.T @ BU + BU.T @ dU + BU.T @ (P2 @ BU)
    for j, (kd, zz) in enumerate(term_parts(M2, lam, Sinv, U, BU, st.levels), start=1):
        dl[j] = kd
        dQ[j] = zz.T @ zz
    return logdet, Q, dl, dQ


def _core(st: Structure, fs: FixedSums, theta: np.ndarray) -> tuple[float, float, float, np.ndarray]:
    """``(log|A|, log|R_X|^2, r^2, R)`` with R the Cholesky factor of ``T - Q``."""
    logdet, Q, _, _ = _quad(st, fs, theta)
    M = fs.T - Q
    p = fs.p
    try:
        R = la.cholesky(M, lower=False, check_finite=False)
    except la.LinAlgError:
        # d lies (numerically) in the column space: floor r^2 as the p = 1 engine does
        R = np.zeros_like(M)
        R[:p, :p] = la.cholesky(M[:p, :p], lower=False, check_finite=False)
        R[:p, p] = la.solve_triangular(R[:p, :p], M[:p, p], trans="T", check_finite=False)
        R[p, p] = math.sqrt(max(M[p, p] - float(R[:p, p] @ R[:p, p]), 1e-300))
    logrx = 2.0 * float(np.sum(np.log(R.diagonal()[:p])))
    r2 = max(float(R[p, p]) ** 2, 1e-300)
    return logdet, logrx, r2, R


def criterion(st: Structure, fs: FixedSums, theta: np.ndarray) -> float:
    """lme4's REML criterion at ``theta`` (block order; sigma profiled out)."""
    logdet, logrx, r2, _ = _core(st, fs, theta)
    return reml_criterion(logdet, logrx, r2, fs.n, fs.p)


def criterion_and_gradient(st: Structure, fs: FixedSums, psi: np.ndarray
                           ) -> tuple[float, np.ndarray] | None:
    """:func:`criterion` at ``theta = sqrt(psi)`` and its analytic gradient in ``psi``
    (None outside dense mode or where a floor is active)."""
    if st.mode != "dense":
        return None
    logdet, Q, dl, dQ = _quad(st, fs, np.sqrt(np.maximum(psi, 0.0)), grad=True)
    p = fs.p
    M = fs.T - Q
    try:
        Rx = la.cholesky(M[:p, :p], lower=False, check_finite=False)
    except la.LinAlgError:
        return None
    beta = la.solve_triangular(Rx, la.solve_triangular(Rx, M[:p, p], trans="T",
                                                       check_finite=False), check_finite=False)
    r2 = float(M[p, p] - M[:p, p] @ beta)
    if not r2 > 1e-300:
        return None
    nu = fs.n - p
    Ri = la.solve_triangular(Rx, np.eye(p), check_finite=False)
    Minv = Ri @ Ri.T
    v = np.append(-beta, 1.0)
    dl, dQ = cast(np.ndarray, dl), cast(np.ndarray, dQ)
    g = (dl - np.einsum("ij,rji->r", Minv, dQ[:, :p, :p])
         - nu * np.einsum("i,rij,j->r", v, dQ, v) / r2)
    crit = reml_criterion(logdet, 2.0 * float(np.sum(np.log(np.abs(Rx.diagonal())))), r2,
                          fs.n, p)
    return crit, g


def _full_deviance(st: Structure, fs: FixedSums, x: np.ndarray) -> float:
    """REML deviance at ``x = (theta, sigma)`` (lmerTest's varpar)."""
    logdet, logrx, r2, _ = _core(st, fs, x[:-1])
    return reml_deviance(logdet, logrx, r2, x[-1] ** 2, fs.n, fs.p)


def _beta_cov(st: Structure, fs: FixedSums, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(beta_hat, Cov(beta_hat))`` at ``x = (theta, sigma)``."""
    _, _, _, R = _core(st, fs, x[:-1])
    p = fs.p
    Rx = R[:p, :p]
    beta = la.solve_triangular(Rx, R[:p, p], check_finite=False)
    Ri = la.solve_triangular(Rx, np.eye(p), check_finite=False)
    return beta, x[-1] ** 2 * (Ri @ Ri.T)


@dataclass
class FixedFit:
    """REML fit of ``d = X beta + Z b + e`` for one pair (columns of X: the kept ones).

    ``varpar`` is ``(theta_1..theta_R, sigma)`` in the caller's term order;
    ``jac[i]`` is ``d Cov(beta) / d varpar_i`` and ``vcov_varpar`` the
    asymptotic covariance of varpar (``2 H^-1``).  With no random term,
    ``exact_df`` holds ``n - p`` (the df of every contrast).
    """

    names: tuple[str, ...]
    variances: np.ndarray
    theta: np.ndarray
    sigma: float
    beta: np.ndarray
    cov: np.ndarray
    jac: np.ndarray
    vcov_varpar: np.ndarray
    criterion: float
    n: int
    boundary: tuple[str, ...]
    converged: bool
    message: str
    nfev: int
    exact_df: float | None = None
    extras: dict = field(default_factory=dict)

    def contrast(self, L: np.ndarray) -> tuple[float, float, float]:
        """``(estimate, variance, Satterthwaite df)`` of ``L' beta`` (lmerTest ``contest1D``)."""
        est = float(L @ self.beta)
        var = float(L @ self.cov @ L)
        if self.exact_df is not None:
            return est, var, self.exact_df
        g = np.einsum("i,kij,j->k", L, self.jac, L)
        den = float(g @ self.vcov_varpar @ g)
        return est, var, 2.0 * var * var / den if den > 0 else float("nan")


@dataclass(frozen=True, eq=False)
class FixedObjective(_PairObjective):
    """The REML objective of one pair with p fixed columns, as the one optimiser takes it
    (:class:`~mixrank.engine.lmm.objective.RemlObjective`): a function of ``psi`` alone.

    No exact Hessian: :func:`~mixrank.engine.lmm.reml.optimise` runs L-BFGS-B
    (analytic gradient in dense mode, central differences otherwise) from the
    control's starts, with the same KKT certificate, boundary faces and polish
    as the intercept-only fit.
    """

    st: Structure
    fs: FixedSums

    @property
    def n(self) -> int:
        return self.fs.n

    @property
    def exact_hessian(self) -> bool:
        return False

    def deviance(self, psi: np.ndarray) -> float:
        """REML criterion at ``theta = sqrt(max(psi, 0))``."""
        return criterion(self.st, self.fs, np.sqrt(np.maximum(psi, 0.0)))

    def value_grad(self, psi: np.ndarray) -> tuple[float, np.ndarray] | None:
        """Criterion and analytic gradient in ``psi`` (dense mode), or None."""
        return criterion_and_gradient(self.st, self.fs, psi)

    def moment_start(self) -> np.ndarray:
        """One-way ANOVA moment estimates of psi per term, on the raw differences."""
        fs, p = self.fs, self.fs.p               # column 0 of X is the intercept
        return moment_psi(fs.n, float(fs.T[0, p]), float(fs.T[p, p]), self.st.counts,
                          [zw[:, p] for zw in fs.ZW], floor=1e-12)


def fit_reml_fixed(st: Structure, fs: FixedSums, names: list[str] | tuple[str, ...], *,
                   control: Control = DEFAULT_CONTROL) -> FixedFit:
    """Fit ``d = X beta + Z b + e`` by profiled REML (``names``: terms in the caller's order).

    The optimum is found by the one optimiser of the intercept-only fit,
    :func:`~mixrank.engine.lmm.reml.optimise` on a :class:`FixedObjective`,
    so every field of ``control`` acts as there: tolerances, starts,
    ``certify``, ``check_faces``, ``boundary_tol``, the KKT test
    (:func:`~mixrank.engine.lmm.reml.check_convergence`) and
    ``fd_gradient_step``; ``fd_steps`` (the finer step) for the Hessian and
    the Jacobian; its actions are applied by :func:`mixrank.fit`.

    Raises
    ------
    DesignError
        No residual degrees of freedom (``n <= p``), or the differences are
        fitted exactly by the fixed part (no residual variation).
    """
    n, p = fs.n, fs.p
    if n <= p:
        raise DesignError(f"the pair has {n} common cell(s) for {p} fixed column(s); at least "
                          f"{p + 1} are needed to estimate a variance")
    R = len(st.levels)
    theta0 = np.zeros(R)
    r2_ols = _core(st, fs, theta0)[2]
    if r2_ols <= 1e-12 * max(float(fs.T[p, p]), 1.0):
        raise DesignError("the fixed part fits the paired differences exactly (no residual "
                          "variation); no standard error can be estimated")
    nfev, conv = 1, None
    if R == 0:
        psi = np.zeros(0)
    else:
        obj = FixedObjective(st, fs)
        optimum = optimise(obj, control)
        conv = optimum.convergence or check_convergence(obj, optimum, control)
        psi, nfev = optimum.psi, optimum.nfev
    theta_b = np.sqrt(psi)
    crit = criterion(st, fs, theta_b)
    _, _, r2, _ = _core(st, fs, theta_b)
    sigma = math.sqrt(r2 / (n - p))
    x = np.append(theta_b, sigma)
    beta, cov = _beta_cov(st, fs, x)
    if R == 0:
        jac = np.zeros((1, p, p))
        A = np.zeros((1, 1))
        exact: float | None = float(n - p)
    else:
        H = central_hessian(lambda z: _full_deviance(st, fs, z), x, control.fd_steps[1])
        try:
            A = 2.0 * np.linalg.inv(H)
        except np.linalg.LinAlgError:
            A = 2.0 * np.linalg.pinv(H)
        jac = central_jacobian(lambda z: _beta_cov(st, fs, z)[1], x, control.fd_steps[1])
        exact = None
    inv = np.argsort(st.order) if R else np.zeros(0, dtype=int)
    perm = np.append(inv, R).astype(int)             # varpar in the caller's order
    theta_c = theta_b[inv]
    converged, msg = (True, "closed form") if conv is None else (conv.converged, conv.message)
    return FixedFit(names=tuple(names) + ("residual",),
                    variances=np.append(sigma ** 2 * theta_c ** 2, sigma ** 2), theta=theta_c,
                    sigma=sigma, beta=beta, cov=cov, jac=jac[perm] if R else jac,
                    vcov_varpar=A[np.ix_(perm, perm)] if R else A, criterion=crit, n=n,
                    boundary=tuple(names[i] for i in range(R) if theta_c[i] == 0.0),
                    converged=converged, message=msg, nfev=nfev, exact_df=exact)
