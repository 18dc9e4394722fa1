"""Validators and small numeric helpers of the closed-form design functions (design stage).

Stage: design (no fitted model).
Inputs: plain numbers or numpy arrays passed by users of :mod:`mixrank.power`.
Outputs: finite float arrays (or a :class:`~mixrank.errors.DesignError` that
names the argument, the valid range and the value that broke it).
Contents: :func:`z_quantile`, :func:`as_result`, :func:`as_float_array`,
:func:`describe_bad`, the range checks :func:`check_interval`,
:func:`check_open01`, :func:`check_alpha`, :func:`check_power`,
:func:`check_positive`, :func:`check_delta`, and the Frechet bounds of a
0/1 correlation, :func:`rho_bounds` and :func:`check_rho`; :func:`check_fit`
(the argument is a fitted result); the verdict table's
:func:`check_scalar`, :func:`check_flag` and :func:`check_anytime`.  Used by
:mod:`~mixrank.design.power`, :mod:`~mixrank.design.power.audit`,
:mod:`~mixrank.design.anytime`, :mod:`~mixrank.design.resolution` and
:mod:`~mixrank.design.plan`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from mixrank.errors import DesignError

__all__ = [
    "z_quantile", "as_result", "read_numbers", "as_float_array", "describe_bad", "check_interval", "check_open01",
    "check_alpha", "check_power", "check_positive", "check_delta", "rho_bounds", "check_rho",
    "check_fit", "check_scalar", "check_flag", "check_anytime", "ANYTIME_METHODS",
]

#: Accepted values of ``anytime=`` (besides True = "auto" and False = no anytime column).
ANYTIME_METHODS = ("auto", "normal", "bernoulli")


def z_quantile(q: Any) -> np.ndarray:
    """Standard normal quantile ``Phi^{-1}(q)``."""
    return special.ndtri(q)


def z_upper(tail: Any) -> np.ndarray:
    """Upper quantile ``Phi^{-1}(1 - tail)``, accurate for tiny tails.

    Written as ``-Phi^{-1}(tail)``: ``1 - tail`` rounds to 1 (and the quantile
    to infinity) once ``tail`` is below about 1e-17.
    """
    return -special.ndtri(tail)


def as_result(x: Any) -> float | np.ndarray:
    """Return a Python float for 0-d results, a float array otherwise."""
    a = np.asarray(x, dtype=float)
    return float(a) if a.ndim == 0 else a


def read_numbers(value: Any, message: str, error: type[Exception] = DesignError) -> np.ndarray:
    """``value`` as a float array, or ``error(message)`` when it cannot be read as numbers."""
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise error(message) from exc


def as_float_array(name: str, value: Any, *, error: type[Exception] = DesignError) -> np.ndarray:
    """Convert ``value`` to a finite float array or raise ``error`` naming ``name``."""
    if value is None:
        raise error(f"{name} is required but was None; pass a number.")
    a = read_numbers(value, f"{name} must be a number or an array of numbers; received "
                     f"{value!r}. Pass a float such as 0.05.", error)
    if not np.all(np.isfinite(a)):
        raise error(
            f"{name} must be finite; received {describe_bad(a, ~np.isfinite(a))}. "
            f"Remove NaN/inf values."
        )
    return a


def describe_bad(a: np.ndarray, mask: np.ndarray) -> str:
    """Describe the first offending element of ``a`` (where ``mask`` is True)."""
    if a.ndim == 0:
        return repr(float(a))
    idx = tuple(int(i[0]) for i in np.nonzero(mask))
    return f"{float(a[idx])!r} (at index {idx if len(idx) > 1 else idx[0]})"


def check_interval(name: str, value: Any, lo: float, hi: float, *, hi_closed: bool = False,
                    what: str = "", fix: str = "") -> np.ndarray:
    """Finite values in (lo, hi) (or (lo, hi] when ``hi_closed``), else DesignError."""
    a = as_float_array(name, value)
    mask = (a <= lo) | ((a > hi) if hi_closed else (a >= hi))
    if np.any(mask):
        rng = f"({lo:g}, {hi:g}{']' if hi_closed else ')'}"
        raise DesignError(
            f"{name}{what} must lie in the interval {rng}; received {describe_bad(a, mask)}. {fix}".rstrip()
        )
    return a


def check_open01(name: str, value: Any) -> np.ndarray:
    """An accuracy strictly between 0 and 1."""
    return check_interval(name, value, 0, 1, what=" (an accuracy)",
                           fix="Accuracies of exactly 0 or 1 have no sampling variance.")


def check_alpha(alpha: Any, name: str = "alpha") -> np.ndarray:
    """A two-sided significance level in (0, 1)."""
    return check_interval(name, alpha, 0, 1, what=" (the two-sided significance level)",
                           fix=f"Use e.g. {name}=0.05.")


def check_power(pw: Any, alpha: np.ndarray) -> np.ndarray:
    """A target power in (alpha, 1)."""
    a = as_float_array("power", pw)
    al = np.broadcast_to(alpha, np.broadcast(a, alpha).shape)
    ab = np.broadcast_to(a, al.shape)
    mask = (ab <= al) | (ab >= 1)
    if np.any(mask):
        lo = float(al[mask].flat[0]) if al.ndim else float(al)
        raise DesignError(
            f"power must lie in the open interval (alpha, 1) = ({lo:g}, 1); received "
            f"{describe_bad(ab, mask)}. A two-sided level-alpha test already rejects with "
            f"probability alpha when there is no effect, so a target power at or below "
            f"alpha (or of 1) has no finite sample size; use e.g. power=0.8."
        )
    return a


def check_positive(name: str, value: Any, *, hint: str = "") -> np.ndarray:
    """Finite values > 0."""
    a = as_float_array(name, value)
    mask = a <= 0
    if np.any(mask):
        raise DesignError(
            f"{name} must be > 0 (the interval (0, inf)); received {describe_bad(a, mask)}. {hint}".rstrip()
        )
    return a


def check_delta(delta: Any) -> np.ndarray:
    """A non-zero difference to resolve."""
    a = as_float_array("delta", delta)
    mask = a == 0
    if np.any(mask):
        raise DesignError(
            "delta (the difference to resolve) must be non-zero: a zero difference needs "
            "an infinite sample size. Expected delta in (-1, 0) or (0, 1) for accuracies "
            f"(any non-zero value for continuous scores); received {describe_bad(a, mask)}."
        )
    return a


def rho_bounds(p_a: np.ndarray, p_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Frechet bounds on the correlation of two Bernoulli variables with means p_a, p_b.

    The joint success probability p11 lies in [max(0, p_a + p_b - 1), min(p_a, p_b)];
    rho = (p11 - p_a p_b) / sqrt(p_a q_a p_b q_b).
    """
    s = np.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    lo = (np.maximum(0.0, p_a + p_b - 1) - p_a * p_b) / s
    hi = (np.minimum(p_a, p_b) - p_a * p_b) / s
    return lo, hi


def check_rho(rho: Any, p_a: np.ndarray, p_b: np.ndarray, *, upper_open: bool = False) -> np.ndarray:
    """A correlation of two 0/1 vectors within its Frechet bounds (below 1 if ``upper_open``)."""
    r = as_float_array("rho", rho)
    lo, hi = rho_bounds(p_a, p_b)
    r_b, lo_b, hi_b, pa_b, pb_b = np.broadcast_arrays(r, lo, hi, p_a, p_b)
    tol = 1e-12
    mask = (r_b < lo_b - tol) | (r_b > hi_b + tol)
    if upper_open:
        mask |= r_b >= 1
    if np.any(mask):
        i = tuple(int(k[0]) for k in np.nonzero(mask)) if r_b.ndim else ()
        close = ")" if upper_open else "]"
        why = " (rho = 1 is excluded: the lemma divides by 1 - rho)" if upper_open else ""
        raise DesignError(
            f"rho = {float(r_b[i])!r} is not allowed for two 0/1 score vectors with means "
            f"p_a = {float(pa_b[i])!r} and p_b = {float(pb_b[i])!r}: their correlation must "
            f"lie within the Frechet bounds [{float(lo_b[i]):.6g}, {float(hi_b[i]):.6g}{close}"
            f"{why}. "
            f"Pass a correlation inside that range (estimate it as the Pearson "
            f"correlation of the two models' 0/1 scores over the paired cells)."
        )
    return r


def check_fit(fit: Any, hint: str = "") -> None:
    """Raise DesignError unless ``fit`` is a FitResult from :func:`mixrank.fit`.

    Checked by the fields design reads (``frame``, ``pairs``, ``method``,
    ``estimand``), so that design does not import ``results`` at run time
    (results imports design; see ``tests/test_import_graph.py``).
    """
    if not all(hasattr(fit, a) for a in ("frame", "pairs", "method", "estimand")):
        raise DesignError(f"fit must be a FitResult from mixrank.fit(); received "
                          f"{type(fit).__name__}.{hint}")


def check_scalar(name: str, value: Any) -> None:
    """``value`` is one number (not an array)."""
    if np.ndim(value) != 0:
        raise DesignError(f"{name} must be a single number; received shape {np.shape(value)}.")


def check_flag(name: str, value: Any) -> bool:
    """``value`` is True or False (numpy booleans included)."""
    if not isinstance(value, (bool, np.bool_)):
        raise DesignError(f"{name} must be True or False; received {value!r}.")
    return bool(value)


def check_anytime(anytime: Any, has_psi: bool) -> str | None:
    """"normal", "bernoulli" or None; "auto"/True picks bernoulli when discordances are known."""
    if isinstance(anytime, (bool, np.bool_)):
        return ("bernoulli" if has_psi else "normal") if anytime else None
    key = anytime
    if key not in ANYTIME_METHODS:
        raise DesignError(f"anytime must be one of {list(ANYTIME_METHODS)}, True (= 'auto') or "
                          f"False (no anytime paradigm); received {anytime!r}.")
    if key == "auto":
        return "bernoulli" if has_psi else "normal"
    if key == "bernoulli" and not has_psi:
        raise DesignError("anytime='bernoulli' needs the discordance of every pair (column "
                          "'discordance', the share of cells where exactly one model is right; "
                          "0/1 scores only); use anytime='normal' for continuous scores.")
    return str(key)
