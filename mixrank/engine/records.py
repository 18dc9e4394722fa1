"""Stage engine: the typed, frozen records the engine produces.

Inputs: none (value objects).  Outputs: :class:`PairFit` (one fitted pair of
models, what :class:`~mixrank.results.FitResult` holds), :class:`CrossCheck`
(what a cross-check engine adds to a pair's fit) and :class:`RemlFit` (the
REML estimates of one pair's difference model, before packaging).

The records are frozen: a field cannot be reassigned, ``components`` is a
read-only mapping and the arrays of :class:`RemlFit` are read-only, so a
:class:`~mixrank.results.FitResult` cannot be changed through its pairs.
Use :func:`dataclasses.replace` to derive a modified copy.  Every record
pickles and deep-copies (its mappings travel as plain dicts).

:class:`FittedPairs`: the narrow protocol of a fit's pairs (``frame``,
``pairs``, ``method``, ``estimand``) that the inference and design stages are
typed against, so they never name the result classes above them.

The one order-insensitive pair lookup: :func:`pair_key`, :func:`pair_lookup`
and :func:`missing_pairs` (a pair fitted as ``(a, b)`` is found as ``(b, a)``).

Produced by :mod:`mixrank.engine.lmm.native` (and :mod:`~mixrank.engine.lmm.reml`,
:mod:`~mixrank.engine.lmm.balanced`), and by the cross-check adapters
:mod:`~mixrank.engine.crosscheck.statsmodels_engine` and
:mod:`~mixrank.engine.crosscheck.lme4_engine`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from ..frame import Frame

__all__ = ["PairFit", "CrossCheck", "RemlFit", "FittedPairs", "design_effect", "pair_key",
           "pair_lookup", "missing_pairs"]


class FittedPairs(Protocol):
    """What the inference and design stages need of a fit (results satisfy it structurally).

    The narrow part -- ``frame`` (the :class:`~mixrank.frame.Frame`), ``pairs``
    (the :class:`PairFit` records), ``method`` and ``estimand`` -- plus the few
    accessors those stages call back (``engine``, ``level``, ``models``, ``contrasts``,
    ``model_scores``, ``inference_pairs``).  :class:`~mixrank.results.FitResult`
    and :class:`~mixrank.judge.result.JudgeResult` satisfy it.
    """

    @property
    def frame(self) -> Frame: ...
    @property
    def pairs(self) -> tuple[PairFit, ...]: ...
    @property
    def method(self) -> str: ...
    @property
    def estimand(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def level(self) -> float: ...
    @property
    def models(self) -> tuple[str, ...]: ...

    def contrasts(self, level: float | None = None, **options: Any) -> pd.DataFrame: ...

    def model_scores(self, level: float | None = None) -> pd.DataFrame: ...

    def inference_pairs(self) -> tuple[PairFit, ...]: ...


def design_effect(variance: float, sigma: float, n: int) -> float:
    """The design effect ``variance / (sigma^2 / n)`` (docs/methods.md §4), the one definition.

    ``sigma`` is the sample SD of the ``n`` cell values (differences for a
    pair, scores for one model); NaN when ``sigma`` or ``n`` is 0.
    """
    iid = sigma ** 2 / n if n > 0 else 0.0
    return variance / iid if iid > 0 else float("nan")


def _readonly_mapping(m: Mapping[str, float]) -> Mapping[str, float]:
    return m if isinstance(m, MappingProxyType) else MappingProxyType(dict(m))


def _readonly_array(a: Any) -> np.ndarray:
    arr = np.array(a, dtype=float)     # a private copy: the caller's array stays writeable
    arr.flags.writeable = False
    return arr


class _PicklableMappings:
    """Pickling and deep copies of frozen records holding read-only mappings."""

    _MAPPINGS: tuple[str, ...] = ()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in self._MAPPINGS:
            state[name] = dict(state[name])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        for name in self._MAPPINGS:
            object.__setattr__(self, name, _readonly_mapping(state[name]))


@dataclass(frozen=True)
class CrossCheck:
    """What a cross-check engine (statsmodels, lme4) reports beyond the common fields.

    Attributes
    ----------
    engine : str
        ``"statsmodels"`` or ``"lme4"``.
    df_method : str
        How the df were obtained (e.g. ``"lmerTest satterthwaite"``).
    is_singular : bool or None
        lme4's ``isSingular()`` (None for statsmodels).
    bse_fe : float or None
        statsmodels' own standard error of the intercept (None for lme4).
    """

    engine: str
    df_method: str
    is_singular: bool | None = None
    bse_fe: float | None = None


@dataclass(frozen=True)
class PairFit(_PicklableMappings):
    """Fit of one pair of models (``d = y_a - y_b`` over their common cells).

    Attributes
    ----------
    model_a, model_b : str
        The pair; a positive ``estimate`` favours ``model_a``.
    n, only_a, only_b : int
        Common cells, and cells scored for only one of the two models.
    estimate, variance, df : float
        The estimand's estimate, its variance and its (Satterthwaite, or
        units - 1 for the aggregate method) degrees of freedom.
    sigma_d : float
        Sample SD of ``d`` over the common cells (the paired SD the power
        functions call ``sigma_d``; docs/methods.md §4).
    components : mapping
        Variance per random term and ``"residual"`` (read-only; NaN for a
        term that is not estimable on this pair's cells).
    criterion : float
        REML criterion ``-2 l_R`` at the optimum (NaN when not applicable).
    converged : bool
        The optimiser and the convergence checks succeeded.
    boundary : tuple of str
        Components estimated at zero.
    gradient : float
        Largest absolute gradient of the criterion on the free components.
    message : str
        The engine's note ("ok", the closed form used, a warning text).
    nfev : int
        Criterion evaluations used.
    gls_estimate, gls_variance : float
        The GLS estimate and its variance (equal to ``estimate`` and
        ``variance`` for the ``gls`` estimand; NaN for the aggregate method
        and the cross-check engines).
    crosscheck : CrossCheck or None
        Set by the statsmodels and lme4 adapters.
    degenerate : str
        Why no variance is estimable for the pair (identical differences,
        fewer than two units; see :func:`mixrank.engine.lmm.native.degenerate_pair`);
        empty for a regular fit.  A degenerate pair has variance 0, df NaN and
        no evidence either way (p-value 1).
    fixed : FixedPair or None
        Model x covariate formulas: the pair's p-column fit
        (:class:`mixrank.engine.lmm.fixed.FixedPair`, docs/interactions.md).

    Examples
    --------
    >>> import mixrank
    >>> r = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    >>> p = r.pair("m01", "m02")
    >>> p.model_a, p.model_b, p.n, p.only_a, p.converged, sorted(p.components)
    ('m01', 'm02', 960, 0, True, ['residual', 'subject'])
    """

    _MAPPINGS = ("components",)

    model_a: str
    model_b: str
    n: int
    only_a: int
    only_b: int
    estimate: float
    variance: float
    df: float
    sigma_d: float
    components: Mapping[str, float]
    criterion: float = float("nan")
    converged: bool = True
    boundary: tuple[str, ...] = ()
    gradient: float = 0.0
    message: str = ""
    nfev: int = 0
    gls_estimate: float = float("nan")
    gls_variance: float = float("nan")
    crosscheck: CrossCheck | None = None
    degenerate: str = ""
    fixed: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "components", _readonly_mapping(self.components))
        object.__setattr__(self, "boundary", tuple(self.boundary))

    @property
    def std_error(self) -> float:
        """``sqrt(variance)``."""
        return math.sqrt(self.variance)

    @property
    def design_effect(self) -> float:
        """``variance / (sigma_d^2 / n)`` (:func:`design_effect`); NaN for a degenerate pair."""
        if self.degenerate:
            return float("nan")
        return design_effect(self.variance, self.sigma_d, self.n)


@dataclass(frozen=True)
class RemlFit:
    """REML estimates of one pair's difference model (before packaging as a :class:`PairFit`).

    Attributes
    ----------
    names : tuple of str
        Component names in the caller's order, then ``"residual"``.
    variances : numpy.ndarray
        ``sigma_r^2`` in the order of ``names`` (read-only).
    theta : numpy.ndarray
        ``sigma_r / sigma`` in the caller's order (read-only).
    sigma, mu, var_mu, df : float
        Residual SD, GLS mean, its variance and Satterthwaite df.
    criterion : float
        REML criterion ``-2 l_R``.
    n : int
        Cells.
    boundary : tuple of str
        Components at zero.
    gradient : float
        Max ``|d criterion / d psi|`` on free components.
    converged : bool
    message : str
    nfev : int
    theta_block : numpy.ndarray or None
        ``theta`` in the structure's block order (what
        :func:`~mixrank.engine.lmm.satterthwaite.linear_variance` needs); None
        from the balanced closed form.
    block_names : tuple of str
        Term names in block order.
    """

    names: tuple[str, ...]
    variances: np.ndarray
    theta: np.ndarray
    sigma: float
    mu: float
    var_mu: float
    df: float
    criterion: float
    n: int
    boundary: tuple[str, ...]
    gradient: float
    converged: bool
    message: str
    nfev: int
    theta_block: np.ndarray | None = None
    block_names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "variances", _readonly_array(self.variances))
        object.__setattr__(self, "theta", _readonly_array(self.theta))
        if self.theta_block is not None:
            object.__setattr__(self, "theta_block", _readonly_array(self.theta_block))


def pair_key(model_a: Any, model_b: Any) -> frozenset[str]:
    """The order-insensitive key of a pair of models (``pair_key(a, b) == pair_key(b, a)``)."""
    return frozenset((str(model_a), str(model_b)))


def pair_lookup(pairs: Iterable[PairFit]) -> dict[frozenset[str], PairFit]:
    """Fitted pairs by :func:`pair_key`: ``pair_lookup(fits).get(pair_key(a, b))``."""
    return {pair_key(p.model_a, p.model_b): p for p in pairs}


def missing_pairs(pairs: Iterable[PairFit], models: Sequence[str]) -> list[tuple[str, str]]:
    """The unordered pairs of ``models`` (in their order) that ``pairs`` does not contain."""
    have = pair_lookup(pairs)
    return [(a, b) for i, a in enumerate(models) for b in models[i + 1:]
            if pair_key(a, b) not in have]
