"""Stage engine: the control object of the binomial GLMM (cf. lme4's ``glmerControl``).

Inputs: keyword settings, or a :class:`~mixrank.engine.control.Control`
whose per-check actions are carried over.  Outputs: :class:`GlmmControl`
(frozen, validated) -- the tolerances and iteration limits of the penalised
IRLS and of the two optimisers (nAGQ = 0 quasi-Newton, nAGQ = 1 damped
Newton), the starting point, the singularity threshold and the actions of
the singular-fit, convergence and few-levels checks -- and
:func:`as_glmm_control`.  Read by :mod:`mixrank.engine.glmm.optim` and
:func:`mixrank.engine.glmm.fit.fit_glmm` (docs/glmm.md §4).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ...errors import DesignError, OptionError
from ..control import ACTIONS, Control

__all__ = ["GlmmControl", "DEFAULT_GLMM_CONTROL", "as_glmm_control"]


@dataclass(frozen=True)
class GlmmControl:
    """Numerical settings and check actions of ``fit(..., family="binomial")``.

    The same shape as :class:`~mixrank.Control` (tolerances, starts, per-check
    actions); the defaults are the settings documented in docs/glmm.md §3.

    Parameters
    ----------
    pirls_tol : float
        Relative Newton decrement at which the conditional mode (the
        penalised IRLS) stops (1e-20: ``log det`` is first-order in the mode,
        so an inexact mode biases the deviance, docs/glmm.md §3).
    pirls_max_iterations : int
        Penalised IRLS Newton steps per evaluation.
    tol : float
        nAGQ = 0: the theta search stops when the Newton decrement
        ``g' H^-1 g`` falls below this.
    max_iterations : int
        nAGQ = 0: quasi-Newton steps per search.
    laplace_tol : float
        nAGQ = 1: Newton decrement over (theta, beta) at convergence.
    laplace_max_iterations : int
        nAGQ = 1: damped Newton steps.
    fd_step : float
        nAGQ = 1: finite-difference step of the Hessian in (theta, beta).
    theta_start : float
        Starting standard deviation of every random term (glmer: 1).
    em_steps : int
        EM-type updates of theta before the quasi-Newton search (0: none).
    singular_tol : float
        A term whose standard deviation is below this is singular (lme4's
        ``isSingular`` uses 1e-4).
    singular, convergence, small_sample : {"ignore", "warning", "error"}
        Action on a singular fit (:class:`~mixrank.errors.SingularFitWarning`
        / :class:`~mixrank.errors.DesignError`), on an optimiser that did
        not meet its criterion
        (:class:`~mixrank.errors.GlmmConvergenceWarning` /
        :class:`~mixrank.errors.ConvergenceError`), and on a random term
        whose grouping (without the model factor) has fewer than
        ``min_units`` levels (:class:`~mixrank.errors.SmallSampleWarning` /
        :class:`~mixrank.errors.DesignError`; like lme4's
        ``check.nlev.gtr.5``, ignored by default).
    min_units : int
        The few-levels threshold.

    Raises
    ------
    DesignError
        An unknown action, a non-positive tolerance or iteration count.

    Examples
    --------
    >>> import mixrank
    >>> mixrank.GlmmControl(convergence="error").convergence
    'error'
    """

    pirls_tol: float = 1e-20
    pirls_max_iterations: int = 60
    tol: float = 1e-9
    max_iterations: int = 100
    laplace_tol: float = 1e-10
    laplace_max_iterations: int = 40
    fd_step: float = 1e-3
    theta_start: float = 1.0
    em_steps: int = 2
    singular_tol: float = 1e-4
    singular: str = "warning"
    convergence: str = "warning"
    small_sample: str = "ignore"
    min_units: int = 5

    def __post_init__(self) -> None:
        for name in ("singular", "convergence", "small_sample"):
            value = getattr(self, name)
            if value not in ACTIONS:
                raise DesignError(f"GlmmControl({name}={value!r}): expected one of {ACTIONS}")
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("pirls_tol", "tol", "laplace_tol", "fd_step", "theta_start",
                          "singular_tol"):
                if (isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0
                        or v == float("inf")):
                    raise DesignError(f"GlmmControl({f.name}={v!r}): expected a positive, "
                                      "finite number")
            elif f.name in ("pirls_max_iterations", "max_iterations", "laplace_max_iterations",
                            "min_units", "em_steps"):
                lo = 0 if f.name == "em_steps" else 1
                if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                    raise DesignError(f"GlmmControl({f.name}={v!r}): expected an integer >= {lo}")
        if self.fd_step >= 0.1:
            raise DesignError(f"GlmmControl(fd_step={self.fd_step!r}): expected a step below 0.1")


DEFAULT_GLMM_CONTROL = GlmmControl()

#: Settings of :class:`Control` that mean the same for the GLMM (carried over).
_SHARED = ("singular", "convergence", "small_sample", "min_units")


def as_glmm_control(control: Any) -> GlmmControl:
    """``control`` as a :class:`GlmmControl` (None: the defaults).

    A :class:`~mixrank.Control` is accepted when only its per-check settings
    (``singular, convergence, small_sample, min_units``: the same fields,
    same meaning) differ from the defaults; those are carried over.  Any
    other field set is refused, never ignored.

    Raises
    ------
    OptionError
        Another type, or a ``Control`` field without a counterpart here
        (the linear engine's optimiser settings, ``workers``: the GLMM is
        one joint fit); the message names the fields and the GlmmControl
        fields to use.
    """
    if control is None:
        return DEFAULT_GLMM_CONTROL
    if isinstance(control, GlmmControl):
        return control
    if isinstance(control, Control):
        base = Control()
        linear = [f.name for f in fields(Control) if f.name not in _SHARED
                  and getattr(control, f.name) != getattr(base, f.name)]
        if linear:
            raise OptionError(f"Control({', '.join(linear)}=...) sets the linear engine's REML "
                              "optimiser (or its pair workers), which the binomial GLMM does not "
                              f"use; of Control only {', '.join(_SHARED)} apply here. Pass "
                              "mixrank.GlmmControl(...) (pirls_tol, tol, max_iterations, "
                              "laplace_tol, theta_start, ...) instead")
        return GlmmControl(**{k: getattr(control, k) for k in _SHARED})
    raise OptionError(f"control={control!r}; expected mixrank.GlmmControl(...) (or a "
                      "mixrank.Control(...) with per-check actions only)")
