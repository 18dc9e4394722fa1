"""Stage engine: the one control object for every numerical choice of a fit (cf. lme4's ``lmerControl``).

Inputs: keyword settings.  Outputs: :class:`Control` (frozen, validated) and
:func:`act`, which applies a check's action ("ignore" | "warning" | "error").
Read by :mod:`mixrank.engine.lmm.reml` (the one optimiser and its convergence
check, for the intercept-only and the p-column fits alike),
:mod:`mixrank.engine.lmm.reml_fixed` (finite-difference steps of the p-column
df), :mod:`mixrank.engine.lmm.satterthwaite` (finite-difference steps),
:mod:`mixrank.engine.lmm.balanced` (orthogonality tolerance; intercept-only
fits only, refused on the p-column path by
:func:`mixrank.engine.lmm.fixed.check_control`),
:mod:`mixrank.engine.lmm.driver` (BLAS threads, parallel pairs, both fits) and
:func:`mixrank.fit` (the per-check actions).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields

from ..errors import OptionError

__all__ = ["Control", "ACTIONS", "STARTS", "act", "DEFAULT_CONTROL"]

ACTIONS = ("ignore", "warning", "error")
STARTS = ("moment", "default")


@dataclass(frozen=True)
class Control:
    """Numerical settings and check actions of :func:`mixrank.fit` (cf. lme4's ``lmerControl``).

    Parameters
    ----------
    ftol, gtol : float
        L-BFGS-B's relative-reduction and projected-gradient tolerances.
    max_iterations : int
        L-BFGS-B iterations per optimisation.
    starts : tuple of {"moment", "default"}
        Starting points of the optimiser over ``psi = (sigma_r / sigma)^2``:
        ``moment`` (one-way ANOVA moment estimates on the pair's cells) and
        ``default`` (lme4's start, every ``psi = 1``).  The best optimum
        across starts is kept.
    certify : bool
        After the first start, accept its optimum when it carries a KKT
        certificate (:func:`~mixrank.engine.lmm.reml.check_convergence` passes:
        zero gradient on interior components, non-negative derivative on
        components at 0); only otherwise run the remaining starts, the
        boundary faces and a polishing restart.  ``False``: always run them.
    check_faces : bool
        When the search continues past the first start, also optimise on
        each boundary face (one free component set to zero) and keep a face
        that is better.
    boundary_tol : float
        A boundary face replaces the optimum only when its REML criterion is
        lower by more than this (absolute).
    gradient_tol : float
        Convergence: ``max |d criterion / d psi|`` over interior components
        must be below this (scaled by ``1 / min psi`` when components are small).
    kkt_tol : float
        Convergence: on a component at zero the derivative must be
        ``>= -kkt_tol * max(1, |criterion|)`` (the KKT condition of the
        bounded problem; a negative derivative means moving off zero helps).
    fd_steps : tuple of two floats
        Relative steps of the Richardson-extrapolated finite differences in
        the Satterthwaite df (the second half of the first).
    fd_gradient_step : float
        Relative step of the finite-difference gradient in ``psi`` (sparse
        mode, and the convergence check where no analytic gradient applies).
    orthogonality_tol : float
        Absolute tolerance of the balanced fast path's test that the random
        terms' averaging operators commute.  Intercept-only fits only: a
        model x covariate formula has no balanced closed form and refuses a
        non-default value (:class:`~mixrank.errors.OptionError`); every
        other field acts on both.
    singular, convergence, small_sample : {"ignore", "warning", "error"}
        Action when a pair's fit is singular (a variance component at 0;
        error raises :class:`~mixrank.errors.DesignError`), when the
        optimiser's optimum fails the convergence check
        (:class:`~mixrank.errors.ConvergenceWarning` /
        :class:`~mixrank.errors.ConvergenceError`), and when any random term
        has fewer than ``min_units`` levels among a pair's common cells (a
        weak design: :class:`~mixrank.errors.WeakDesignWarning`, one per
        fit naming each term, / :class:`~mixrank.errors.DesignError`; like
        lme4's ``check.nlev.gtr.5``; docs/messy.md §2).
    min_units : int
        The small-sample threshold, per random term (default 5 levels).
    workers : int or None
        Processes that fit pairs in parallel (None: one per available core
        when there are enough pairs to pay for it; 1: in this process).

    Raises
    ------
    OptionError
        An unknown action, start or a non-positive tolerance, naming the valid values
        (a :class:`~mixrank.errors.DesignError`, as before).

    Examples
    --------
    >>> import mixrank
    >>> mixrank.Control(convergence="error").convergence
    'error'
    """

    ftol: float = 1e-15
    gtol: float = 1e-10
    max_iterations: int = 500
    starts: tuple[str, ...] = ("moment", "default")
    certify: bool = True
    check_faces: bool = True
    boundary_tol: float = 1e-10
    gradient_tol: float = 1e-3
    kkt_tol: float = 1e-9
    fd_steps: tuple[float, float] = (2e-4, 1e-4)
    fd_gradient_step: float = 1e-6
    orthogonality_tol: float = 1e-9
    singular: str = "warning"
    convergence: str = "warning"
    small_sample: str = "warning"
    min_units: int = 5
    workers: int | None = None

    def __post_init__(self) -> None:
        for name in ("singular", "convergence", "small_sample"):
            value = getattr(self, name)
            if value not in ACTIONS:
                raise OptionError(f"Control({name}={value!r}): expected one of {ACTIONS}")
        starts = tuple(self.starts) if not isinstance(self.starts, str) else (self.starts,)
        object.__setattr__(self, "starts", starts)
        bad = [s for s in starts if s not in STARTS]
        if bad or not starts:
            raise OptionError(f"Control(starts={self.starts!r}): expected a non-empty tuple of {STARTS}")
        for f in fields(self):
            if f.name in ("ftol", "gtol", "boundary_tol", "gradient_tol", "kkt_tol",
                          "fd_gradient_step", "orthogonality_tol"):
                v = getattr(self, f.name)
                if not (isinstance(v, (int, float)) and v > 0):
                    raise OptionError(f"Control({f.name}={v!r}): expected a positive number")
        steps = tuple(self.fd_steps)
        if len(steps) != 2 or not all(isinstance(s, (int, float)) and 0 < s < 0.1 for s in steps):
            raise OptionError(f"Control(fd_steps={self.fd_steps!r}): expected two steps in (0, 0.1)")
        object.__setattr__(self, "fd_steps", (float(steps[0]), float(steps[1])))
        for name, lo in (("max_iterations", 1), ("min_units", 1)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                raise OptionError(f"Control({name}={v!r}): expected an integer >= {lo}")
        if self.workers is not None and (not isinstance(self.workers, int) or self.workers < 1):
            raise OptionError(f"Control(workers={self.workers!r}): expected None or an integer >= 1")


DEFAULT_CONTROL = Control()


def act(action: str, message: str, warning: type[Warning], error: type[Exception],
        stacklevel: int = 3) -> None:
    """Apply a check's ``action`` to a failed check described by ``message``."""
    if action == "warning":
        warnings.warn(message, warning, stacklevel=stacklevel)
    elif action == "error":
        raise error(message)
