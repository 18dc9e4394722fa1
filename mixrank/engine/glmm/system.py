"""Stage engine: the penalised least-squares system of the binomial GLMM.

Inputs: a :class:`Problem` -- one observation per (model, cell) with its
successes ``k`` and trials ``n``, the level of every random term, the model
index -- and, per evaluation, the relative standard deviations ``theta`` and
the IRLS weights.  Outputs: :class:`System`, the factorised matrix of the
penalised (P)IRLS step over the spherical random effects ``u`` and the
model effects ``beta``, with solves, log-determinants, the fixed-effect
covariance block and the leverages the Laplace gradient needs
(docs/glmm.md §3).

Structure used (docs/glmm.md §3): every random intercept term gives a
diagonal block ``Z_r' W Z_r``, so the term with the most levels is
eliminated by a diagonal solve; the remaining random levels and the model
effects (few) form a dense Schur complement that is Cholesky-factorised.
The sparsity patterns of all cross-products are computed once per problem;
an evaluation only re-weights them with ``numpy.bincount``.

Contents: :class:`Problem`, :class:`System`, :func:`assemble`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.linalg import lapack

__all__ = ["Problem", "System", "assemble", "MAX_DENSE"]

#: Largest Schur complement (random levels outside the biggest term + models) held dense.
MAX_DENSE = 6000
#: Largest coupling block (first term x dense block entries) held as a dense array.
DENSE_COUPLING = 50_000_000
#: Largest number of (observation or cell, entry) indices assembled in one ``bincount``.
PLAN_MAX = 4_000_000


def _pattern(a: np.ndarray, b: np.ndarray, nb: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique (a, b) pairs and the index of each observation's pair."""
    flat = a.astype(np.int64) * nb + b
    uniq, inv = np.unique(flat, return_inverse=True)
    return uniq // nb, uniq % nb, inv.ravel()


def _cholesky(S: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor by LAPACK directly (the wrappers' overhead dominates small blocks)."""
    L, info = lapack.dpotrf(S, lower=1, clean=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"matrix not positive definite (LAPACK dpotrf info {info})")
    return L


def _cho_solve(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(L L')^{-1} b`` by LAPACK ``dpotrs``."""
    x, info = lapack.dpotrs(L, b, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"LAPACK dpotrs info {info}")
    return x


def _unique_rows(cols: list[np.ndarray], sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of the code columns (each ``0 <= c < size``) and each row's index."""
    if float(np.prod(np.asarray(sizes, dtype=np.float64))) >= 2.0 ** 62:
        uniq, inv = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)
        return uniq, inv.ravel()
    key = np.zeros(len(cols[0]), dtype=np.int64)
    for c, q in zip(cols, sizes):                # mixed radix: one integer per row
        key = key * q + c
    ukey, inv = np.unique(key, return_inverse=True)
    out = np.empty((len(ukey), len(cols)), dtype=np.int64)
    for j in range(len(cols) - 1, -1, -1):
        ukey, out[:, j] = np.divmod(ukey, sizes[j])
    return out, inv.ravel()


@dataclass(eq=False)
class Problem:
    """A binomial GLMM with random intercepts and a model factor (cell-means coding).

    Attributes
    ----------
    k, n : ndarray of float (n_obs,)
        Successes and trials of each (model, cell) observation.
    model : ndarray of int (n_obs,)
        Model index of each observation (0..M-1).
    n_models : int
    names : tuple of str
        Random terms in the order of ``codes`` (the first has the most levels).
    codes : tuple of ndarray of int (n_obs,)
        Level of each observation in each term.
    levels : tuple of int
        Number of levels of each term.
    cell : ndarray of int (n_obs,) or None
        Cell of each observation.  With it, terms whose level depends on the
        cell alone (no model factor) are summed per cell first and then per
        level: the cells are shared by all models, so this replaces a pass
        over the (model, cell) observations by one over the cells.
    n_cells : int
    cell_codes : tuple of (ndarray of int (n_cells,) or None)
        Per term: its level at each cell, or None for a model-by-unit term.
    mult : ndarray of float (levels[0],) or None
        Multiplicity of each level of the first term when exchangeable levels
        were merged (:func:`~mixrank.engine.glmm.problem.merge_exchangeable`):
        one representative level stands for ``mult`` identical ones, whose
        observations' ``k`` and ``n`` are already multiplied by ``mult``
        (docs/glmm.md §3).  None: every level once.
    expand : ndarray of int or None
        With ``mult``: the representative of each original level of the first term.
    """

    k: np.ndarray
    n: np.ndarray
    model: np.ndarray
    n_models: int
    names: tuple[str, ...]
    codes: tuple[np.ndarray, ...]
    levels: tuple[int, ...]
    cell: np.ndarray | None = None
    n_cells: int = 0
    cell_codes: tuple[np.ndarray | None, ...] = ()
    mult: np.ndarray | None = None
    expand: np.ndarray | None = None
    #: a numeric covariate at each observation (``model * x``): the fixed effects are then
    #: an intercept per model (``beta[:M]``) and a slope per model (``beta[M:]``), a
    #: reparameterisation of glmer's treatment coding (docs/glmm.md §11)
    slope: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def n_fixed(self) -> int:
        """Number of fixed effects: one per model, two with a slope."""
        return self.n_models * (1 if self.slope is None else 2)

    def xbeta(self, beta: np.ndarray) -> np.ndarray:
        """``X beta`` at every observation."""
        out = beta[self.model]
        if self.slope is not None:
            out = out + beta[self.n_models:][self.model] * self.slope
        return out

    def xt(self, v: np.ndarray) -> np.ndarray:
        """``X' v`` (``v`` over the observations)."""
        M = self.n_models
        a = np.bincount(self.model, weights=v, minlength=M)
        if self.slope is None:
            return a
        return np.concatenate([a, np.bincount(self.model, weights=v * self.slope, minlength=M)])

    def cell_level(self, r: int) -> np.ndarray | None:
        """Term ``r``'s level at each cell when it does not involve the model, else None."""
        if self.cell is None or not self.cell_codes:
            return None
        return self.cell_codes[r]

    def aggregate(self, v: np.ndarray) -> np.ndarray | None:
        """``v`` summed per cell (None without cells)."""
        if self.cell is None:
            return None
        return np.bincount(self.cell, weights=v, minlength=self.n_cells)

    def sum_squares(self, u: np.ndarray) -> np.ndarray:
        """``||u_r||^2`` of each term's block of ``u`` (over the original levels)."""
        starts = np.concatenate([[0], np.cumsum(self.levels)])
        out = np.array([float(u[a:b] @ u[a:b]) for a, b in zip(starts[:-1], starts[1:])])
        if self.mult is not None:
            u0 = u[: self.levels[0]]
            out[0] = float(self.mult @ (u0 * u0))
        return out

    def penalty(self, u: np.ndarray) -> float:
        """``||u||^2`` over the original levels."""
        if self.mult is None:
            return float(u @ u)
        q0 = self.levels[0]
        u0, ur = u[:q0], u[q0:]
        return float(self.mult @ (u0 * u0) + ur @ ur)

    def penalty_grad0(self, u0: np.ndarray) -> np.ndarray:
        """Half the gradient of the penalty in the first term's (representative) levels."""
        return u0 if self.mult is None else self.mult * u0

    def total_levels(self) -> np.ndarray:
        """Number of (original) levels of each term."""
        out = np.asarray(self.levels, dtype=np.float64)
        if self.mult is not None:
            out[0] = float(np.sum(self.mult))
        return out

    def expand_u(self, u: np.ndarray) -> np.ndarray:
        """``u`` over the original levels (representatives copied to their merged levels)."""
        if self.expand is None:
            return u
        return np.concatenate([u[: self.levels[0]][self.expand], u[self.levels[0]:]])

    @property
    def n_obs(self) -> int:
        return int(len(self.k))

    @property
    def n_rest(self) -> int:
        """Random levels outside the first (diagonal-eliminated) term."""
        return int(sum(self.levels[1:]))

    @property
    def offsets(self) -> np.ndarray:
        """Start of each term after the first within the dense block."""
        return np.concatenate([[0], np.cumsum(self.levels[1:])]).astype(np.int64)

    def families(self) -> list[np.ndarray]:
        """Dense-block column of each observation: one array per rest term, then the model."""
        if "fam" not in self._cache:
            off = self.offsets
            fam = [self.codes[r] + off[r - 1] for r in range(1, len(self.codes))]
            fam.append(self.model + self.n_rest)
            self._cache["fam"] = fam
        return list(self._cache["fam"])

    def _cell_families(self) -> list[np.ndarray | None]:
        off = self.offsets
        out: list[np.ndarray | None] = []
        for r in range(1, len(self.codes)):
            c = self.cell_level(r)
            out.append(None if c is None else c + off[r - 1])
        out.append(None)                          # the model family is per observation
        return out

    def patterns(self) -> dict:
        """Sparsity patterns of the first term against the dense block and of the dense block.

        Each pattern is ``(kind, rows, cols, inverse)`` with ``kind`` "cell"
        (``inverse`` indexes cells: weights summed per cell first) or "obs".
        """
        if "pat" in self._cache:
            return dict(self._cache["pat"])
        fam, fcell = self.families(), self._cell_families()
        nv = self.n_rest + self.n_models
        c0, c0cell = self.codes[0], self.cell_level(0)

        def pattern(a, a_cell, b, b_cell):
            if a_cell is not None and b_cell is not None:
                return ("cell",) + _pattern(a_cell, b_cell, nv)
            return ("obs",) + _pattern(a, b, nv)

        cross = [pattern(c0, c0cell, f, fc) for f, fc in zip(fam, fcell)]
        dense = []
        for a in range(len(fam)):
            for b in range(a + 1, len(fam)):
                dense.append((a, b) + pattern(fam[a], fcell[a], fam[b], fcell[b]))
        diag = [("obs", f) if fc is None else ("cell", fc) for f, fc in zip(fam, fcell)]
        pat = dict(cross=cross, dense=dense, diag=diag, a0=("obs", c0) if c0cell is None
                   else ("cell", c0cell), **self.combos())
        self._cache["pat"] = pat
        return dict(pat)

    def combos(self) -> dict:
        """Distinct random-level combinations (``combos``) and each observation's (``combo_index``)."""
        if "combos" not in self._cache:
            per_cell = [c for c in (self.cell_level(r) for r in range(len(self.codes)))
                        if c is not None]
            if len(per_cell) == len(self.codes) and self.cell is not None:
                uniq, cinv = _unique_rows(per_cell, self.levels)
                cinv = cinv[self.cell]
            else:
                uniq, cinv = _unique_rows(list(self.codes), self.levels)
            # flat gather indices of the leverage's Gram entries (System.leverage)
            nr, off = self.n_rest, self.offsets
            l0 = np.ascontiguousarray(uniq[:, 0])
            cols = [off[r - 1] + uniq[:, r] for r in range(1, uniq.shape[1])]
            gather = dict(l0=l0, diag=[c * (nr + 1) for c in cols],
                          cross=[l0 * nr + c for c in cols],
                          pairs=[(r, s, c * nr + cols[s - 1]) for r, c in enumerate(cols, start=1)
                                 for s in range(r + 1, len(cols) + 1)])
            self._cache["combos"] = dict(combos=uniq, combo_index=cinv.ravel(), gather=gather)
        return dict(self._cache["combos"])

    def plan(self) -> dict | None:
        """Flat indices that assemble the coupling and the dense block in few passes.

        Every entry of ``B`` (first term x dense block, row-major) is a sum of
        weights: of the observations (``w``, once per observation-level
        family) or of the cells (the per-cell sums, once per cell-level
        family), so one ``bincount`` over ``index`` gives them all (``rows``:
        each entry's row, for the row scaling; ``part_family``: each part's
        family, for the column scaling).  The dense block's ``Z'WZ`` part depends
        on the observations only through their combination of dense-block
        columns (``combo``: typically unit x model, far fewer than the
        observations), so the weights are summed per combination first and
        the upper triangle gathered from those sums (``pairs``).  The sums are
        those of the per-pattern assembly (docs/glmm.md §3).  None when the
        coupling is held sparse or the index would be large.
        """
        if "plan" in self._cache:
            return self._cache["plan"]
        M = self.n_models
        q0, nv = self.levels[0], self.n_rest + self.n_fixed
        fam, fcell = self.families(), self._cell_families()
        size0 = q0 * nv
        c0, c0cell = self.codes[0], self.cell_level(0)
        obs: list[np.ndarray] = []
        cell: list[np.ndarray] = []
        obs_fam: list[int] = []
        cell_fam: list[int] = []
        for i, (f, fc) in enumerate(zip(fam, fcell)):
            if c0cell is not None and fc is not None:
                cell.append(c0cell.astype(np.int64) * nv + fc)
                cell_fam.append(i)
            else:
                obs.append(c0.astype(np.int64) * nv + f)
                obs_fam.append(i)
        uniq, combo = _unique_rows(list(fam), (nv,) * len(fam))
        pairs = [uniq[:, a] * nv + uniq[:, b] for a in range(len(fam)) for b in range(a, len(fam))]
        col_family = np.concatenate([np.full(q, r, dtype=np.int64)
                                     for r, q in enumerate(self.levels[1:])]
                                    + [np.full(self.n_fixed, len(self.levels) - 1,
                                               dtype=np.int64)])
        n_idx = self.n_obs * len(obs) + self.n_cells * len(cell) + len(uniq) * len(pairs)
        extra: dict = {}
        if self.slope is not None:
            # slope columns (weights w x): the coupling part, each family x slope entry of
            # the dense block (per combination sums of w x) and slope x slope (w x^2)
            sl = uniq[:, -1] + M
            extra = dict(slope_index=c0.astype(np.int64) * nv + fam[-1] + M,
                         pairs_x=np.concatenate([uniq[:, a] * nv + sl for a in range(len(fam))]),
                         n_pairs_x=len(fam), pairs_xx=sl * nv + sl)
            n_idx += self.n_obs + len(uniq) * (len(fam) + 1)
        plan = None
        if size0 <= DENSE_COUPLING and n_idx <= PLAN_MAX:
            index = np.concatenate(obs + cell + ([extra["slope_index"]] if extra else []))
            plan = dict(index=index, rows=index // nv, part_family=obs_fam + cell_fam,
                        n_obs_parts=len(obs), n_cell_parts=len(cell), combo=combo,
                        n_combo=len(uniq), pairs=np.concatenate(pairs),
                        n_pairs=len(pairs), size=(size0, q0), col_family=col_family, **extra)
        self._cache["plan"] = plan
        return plan


@dataclass(eq=False)
class System:
    """The factorised PIRLS matrix at one (theta, weights).

    ``A = [[Lam'Z'WZLam + I, Lam'Z'WX], [X'WZLam, X'WX]]`` in the order
    (first term's ``u``; other terms' ``u``; ``beta``), held as the diagonal
    ``a0`` of the first block, the coupling ``B`` (first term x dense block)
    scaled by rows, ``Bs = a0^{-1/2} B`` (the form the Schur complement
    needs), and the Cholesky factor ``L`` of the dense Schur complement.
    """

    theta: np.ndarray
    a0: np.ndarray
    Bs: np.ndarray | sp.csr_matrix
    L: np.ndarray
    q0: int
    nr: int
    M: int
    mult: np.ndarray | None = None
    sqa0: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)   # sqrt(a0)
    _gram: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def logdet_u(self) -> float:
        """``log det(Lam'Z'WZLam + I)`` (the u-block; the Laplace term)."""
        d = np.diag(self.L)[: self.nr]
        if self.mult is None:
            first = float(np.sum(np.log(self.a0)))
        else:   # a merged level stands for mult copies with diagonal a0 / mult each
            first = float(self.mult @ (np.log(self.a0) - np.log(self.mult)))
        return first + 2.0 * float(np.sum(np.log(d)))

    def solve(self, g0: np.ndarray, gv: np.ndarray, joint: bool) -> tuple[np.ndarray, np.ndarray]:
        """Solve ``A x = g`` (``g`` a vector or one column per right-hand side);
        ``joint=False`` solves the u-block alone (``gv`` = rest u)."""
        nv = self.nr + (self.M if joint else 0)
        Bs = self.Bs if joint else self.Bs[:, : self.nr]
        L = self.L[:nv, :nv]
        sq = self.sqa0 if g0.ndim == 1 else self.sqa0[:, None]
        t = g0 / sq                    # with B = sq Bs: y0 = g0 / a0, B'y0 = Bs't
        rhs = gv - Bs.T @ t
        xv = _cho_solve(L, rhs) if nv else rhs
        x0 = (t - Bs @ xv) / sq        # y0 - B xv / a0
        return x0, xv

    def vcov_beta(self) -> np.ndarray:
        """``[A^{-1}]_{beta,beta}``: the inverse of the model block's Schur complement."""
        Lb = self.L[self.nr:, self.nr:]
        inv = sla.solve_triangular(Lb, np.eye(self.M), lower=True, check_finite=False)
        return inv.T @ inv

    def schur_beta(self) -> np.ndarray:
        """The model block's Schur complement ``X'WX - X'WZLam C^{-1} Lam'Z'WX``."""
        Lb = self.L[self.nr:, self.nr:]
        return Lb @ Lb.T

    def leverage(self, pat: dict, offsets: np.ndarray) -> np.ndarray:
        """``diag(Z Lam C^{-1} Lam' Z')`` for every distinct random-level combination.

        ``C`` is the u-block.  With ``F = B_u / a0`` and ``S_uu = L_uu L_uu'``,
        ``h = theta_0^2 / a0[l] + ||L_uu^{-1}(theta_0 F[l] - s)||^2`` where ``s``
        holds ``theta_r`` at each other term's level.
        """
        th, ix = self.theta, pat["gather"]
        first = 1.0 / self.a0 if self.mult is None else self.mult / self.a0
        if not self.nr:
            return th[0] ** 2 * first[ix["l0"]]
        # ||th0 P[l0] - sum_r th_r Li[c_r]||^2 expanded into Gram entries: a few
        # gathers per combination (precomputed flat indices) instead of one row
        # of length nr per term
        pn, G, K = self._grams()
        h = (th[0] ** 2 * (first + pn))[ix["l0"]]
        Kf, Gf = K.reshape(-1), G.reshape(-1)
        for r, (kd, gc) in enumerate(zip(ix["diag"], ix["cross"]), start=1):
            h += th[r] ** 2 * Kf[kd]
            h -= 2.0 * th[0] * th[r] * Gf[gc]
        for r, s, kp in ix["pairs"]:
            h += 2.0 * th[r] * th[s] * Kf[kp]
        return h

    def _grams(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Gram matrices of the u-block's inverse (cached) for the leverages and traces.

        ``K = S_uu^{-1}``, ``G = F K`` and ``pn = diag(F K F')`` with
        ``F = B_u / a0`` and ``S_uu = L_uu L_uu'``.  (The rows ``P_l = L_uu^{-1} F_l`` and ``Li_i = L_uu^{-1} e_i`` of the
        leverage formula have ``||P_l||^2 = pn``, ``P_l . Li_i = G`` and
        ``Li_i . Li_j = K``.)
        """
        if self._gram is None:
            Luu = self.L[: self.nr, : self.nr]
            Bu = self.Bs[:, : self.nr]
            F = (Bu if isinstance(Bu, np.ndarray) else Bu.toarray()) / self.sqa0[:, None]
            K = _cho_solve(Luu, np.eye(self.nr))
            G = F @ K
            self._gram = (np.einsum("ij,ij->i", G, F), G, K)
        return self._gram

    def block_traces(self, levels: tuple[int, ...]) -> np.ndarray:
        """Trace of each term's diagonal block of ``C^{-1}`` (C the u-block)."""
        out = np.zeros(len(levels))
        m = np.ones(len(self.a0)) if self.mult is None else self.mult
        out[0] = float(np.sum(m * m / self.a0))
        if self.nr:
            pn, _, K = self._grams()
            out[0] += float(m @ pn)
            diag = np.diag(K)
            start = 0
            for r, q in enumerate(levels[1:], start=1):
                out[r] = float(np.sum(diag[start:start + q]))
                start += q
        return out


def assemble(prob: Problem, theta: np.ndarray, w: np.ndarray) -> System:
    """Build and factorise the PIRLS matrix at ``theta`` with IRLS weights ``w``.

    Raises
    ------
    numpy.linalg.LinAlgError
        The dense Schur complement is not positive definite (callers treat
        it as a failed step).
    """
    plan = prob.plan()
    if plan is not None:
        return _assemble_planned(prob, plan, np.asarray(theta, dtype=np.float64), w)
    pat = prob.patterns()
    th = np.asarray(theta, dtype=np.float64)
    q0, nr, M = prob.levels[0], prob.n_rest, prob.n_models
    P = prob.n_fixed
    nv = nr + P
    famscale = np.concatenate([th[1:], [1.0]])
    wc = prob.aggregate(w)
    wx = None if prob.slope is None else w * prob.slope
    last = len(pat["cross"]) - 1                  # the model family

    def sums(kind: str, idx: np.ndarray, n: int, wts: np.ndarray | None = None) -> np.ndarray:
        if wts is not None:
            return np.bincount(idx, weights=wts, minlength=n)
        return np.bincount(idx, weights=wc if kind == "cell" else w, minlength=n)

    kind0, idx0 = pat["a0"]
    a0 = th[0] ** 2 * sums(kind0, idx0, q0) + (1.0 if prob.mult is None else prob.mult)
    rows, cols, data = [], [], []
    for f, (kind, ra, cb, inv) in enumerate(pat["cross"]):
        rows.append(ra)
        cols.append(cb)
        data.append(th[0] * famscale[f] * sums(kind, inv, len(ra)))
        if f == last and wx is not None:          # slope columns: weights w x
            rows.append(ra)
            cols.append(cb + M)
            data.append(th[0] * sums(kind, inv, len(ra), wx))
    vals = np.concatenate(data)
    B: np.ndarray | sp.csr_matrix
    if q0 * nv <= DENSE_COUPLING:
        B = np.zeros((q0, nv))
        B[np.concatenate(rows), np.concatenate(cols)] = vals
    else:
        B = sp.csr_matrix((vals, (np.concatenate(rows), np.concatenate(cols))), shape=(q0, nv))
    diag = np.zeros(nv)
    diag[:nr] = 1.0
    for f, (kind, col) in enumerate(pat["diag"]):
        diag[: nr + M] += sums(kind, col, nr + M) * famscale[f] ** 2
    sq = np.sqrt(a0)
    Bs: np.ndarray | sp.csr_matrix
    if isinstance(B, np.ndarray):
        Bs = B / sq[:, None]
        S = -(Bs.T @ Bs)               # numpy computes X'X by a symmetric rank-k update
    else:
        Bs = sp.csr_matrix(sp.diags(1.0 / sq) @ B)
        S = -(Bs.T @ Bs).toarray()
    S[np.diag_indices(nv)] += diag
    for a, b, kind, ra, cb, inv in pat["dense"]:
        vals = famscale[a] * famscale[b] * sums(kind, inv, len(ra))
        S[ra, cb] += vals          # pairs are unique within a pattern
        S[cb, ra] += vals
        if b == last and wx is not None:
            vals = famscale[a] * sums(kind, inv, len(ra), wx)
            S[ra, cb + M] += vals
            S[cb + M, ra] += vals
    if wx is not None and prob.slope is not None:   # X'WX: intercept x slope, slope x slope
        im = np.arange(M) + nr
        cross_m = np.bincount(prob.model, weights=wx, minlength=M)
        S[im, im + M] += cross_m
        S[im + M, im] += cross_m
        S[im + M, im + M] += np.bincount(prob.model, weights=wx * prob.slope, minlength=M)
    L = _cholesky(S) if nv else S
    return System(theta=th, a0=a0, Bs=Bs, L=L, q0=q0, nr=nr, M=P, mult=prob.mult, sqa0=sq)


def _assemble_planned(prob: Problem, plan: dict, th: np.ndarray, w: np.ndarray) -> System:
    """:func:`assemble` by ``bincount`` over the plan's flat indices (:meth:`Problem.plan`).

    ``a0`` first, so that the row scaling of ``Bs`` and the column scaling
    by ``theta`` enter the weights of the one ``bincount`` (no pass over
    the matrix)."""
    size0, q0 = plan["size"]
    nr, M = prob.n_rest, prob.n_fixed
    nv = nr + M
    wc = prob.aggregate(w)
    c0cell = prob.cell_level(0)
    s0 = (np.bincount(c0cell, weights=wc, minlength=q0) if c0cell is not None and wc is not None
          else np.bincount(prob.codes[0], weights=w, minlength=q0))
    a0 = th[0] ** 2 * s0 + (1.0 if prob.mult is None else prob.mult)
    sq = np.sqrt(a0)
    fs = np.concatenate([th[1:], [1.0]]) * th[0]            # theta_0 theta_f per family
    parts = [w * fs[f] for f in plan["part_family"][: plan["n_obs_parts"]]]
    if wc is not None:
        parts += [wc * fs[f] for f in plan["part_family"][plan["n_obs_parts"]:]]
    wx = None if prob.slope is None else w * prob.slope
    if wx is not None:
        parts.append(wx * th[0])
    weights = np.concatenate(parts) / sq[plan["rows"]]
    Bs = np.bincount(plan["index"], weights=weights, minlength=size0).reshape(q0, nv)
    wcombo = np.bincount(plan["combo"], weights=w, minlength=plan["n_combo"])
    U = np.bincount(plan["pairs"], weights=np.tile(wcombo, plan["n_pairs"]),
                    minlength=nv * nv)
    if wx is not None and prob.slope is not None:
        wxc = np.bincount(plan["combo"], weights=wx, minlength=plan["n_combo"])
        U += np.bincount(plan["pairs_x"], weights=np.tile(wxc, plan["n_pairs_x"]),
                         minlength=nv * nv)
        U += np.bincount(plan["pairs_xx"], weights=np.bincount(
            plan["combo"], weights=wx * prob.slope, minlength=plan["n_combo"]), minlength=nv * nv)
    U = U.reshape(nv, nv)
    cs = np.concatenate([th[1:], [1.0]])[plan["col_family"]]
    U *= np.multiply.outer(cs, cs)
    S = U + U.T
    d = S.reshape(-1)[:: nv + 1]          # a view: the diagonal, counted twice above
    d *= 0.5
    d[:nr] += 1.0
    S -= Bs.T @ Bs
    L = _cholesky(S)
    return System(theta=th, a0=a0, Bs=Bs, L=L, q0=q0, nr=nr, M=M, mult=prob.mult, sqa0=sq)
