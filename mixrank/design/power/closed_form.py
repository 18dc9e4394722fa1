"""Closed-form resolution diagnostics for one paired comparison (design stage).

Stage: design (needs no fitted model).
Inputs: plain numbers or numpy arrays (broadcast together) -- an effect
``delta``, a paired standard deviation ``sigma_d`` or the ingredients it is
built from (marginal accuracies ``p_a``, ``p_b`` and their correlation
``rho``; or a discordance table ``p10``, ``p01``; or a discordance ``psi``),
the level ``alpha`` and the target power.
Outputs: floats (0-d input) or float arrays.
Contents (docs/methods.md §6): :func:`sigma_d`, :func:`n_star`, :func:`mde`,
:func:`resolution_ratio` and :func:`power` (solves for whichever of effect, n
and power is None).  The shortcut lemma, the calculator audit and the
multiplicity helpers live in :mod:`mixrank.design.power.audit`, the anytime-valid
boundary in :mod:`mixrank.design.anytime`; the validators all of them share
in :mod:`mixrank.design.checks`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import optimize, special

from mixrank.design.checks import (
    as_float_array,
    as_result,
    check_alpha,
    check_delta,
    check_interval,
    check_open01,
    check_positive,
    check_power,
    check_rho,
    describe_bad,
    z_quantile,
    z_upper,
)
from mixrank.errors import DesignError

__all__ = [
    "sigma_d",
    "n_star",
    "mde",
    "resolution_ratio",
    "power",
]

_METHODS = ("wald", "connor")


# ----------------------------------------------------------------------------
# paired SD and the effect/variance resolver
# ----------------------------------------------------------------------------

def sigma_d(p_a: Any, p_b: Any, *, rho: Any) -> float | np.ndarray:
    """Paired standard deviation of the per-cell difference of two 0/1 scores.

    Parameters
    ----------
    p_a, p_b : float or array_like
        Accuracies of models A and B, each in (0, 1).
    rho : float or array_like
        Correlation of the two 0/1 score vectors over the paired cells; must
        lie within the Frechet bounds that ``p_a`` and ``p_b`` allow.

    Returns
    -------
    float or numpy.ndarray
        ``sigma_D`` (a float for scalar input; arrays broadcast).

    Raises
    ------
    DesignError
        If a p is outside (0, 1) or ``rho`` outside its Frechet bounds.

    Notes
    -----
    ``sigma_D^2 = p_A q_A + p_B q_B - 2 rho sqrt(p_A q_A p_B q_B)`` with
    ``q = 1 - p`` (docs/methods.md §6).  Equivalently, with the discordance
    ``psi = p10 + p01`` and ``delta = p_A - p_B``, ``sigma_D^2 = psi - delta^2``.
    The Frechet bounds follow from ``max(0, p_A + p_B - 1) <= p11 <= min(p_A, p_B)``.

    Validated against the worked example of arXiv 2605.30315 (N* ~ 1028 at
    (0.65, 0.60, 0.30)) and against the discordance identity in the tests.

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.

    Examples
    --------
    >>> round(sigma_d(0.65, 0.60, rho=0.30), 4)
    0.5721
    """
    pa = check_open01("p_a", p_a)
    pb = check_open01("p_b", p_b)
    r = check_rho(rho, pa, pb)
    va, vb = pa * (1 - pa), pb * (1 - pb)
    var = va + vb - 2 * r * np.sqrt(va * vb)
    return as_result(np.sqrt(np.maximum(var, 0.0)))


def _check_method(method: str) -> str:
    if method not in _METHODS:
        raise DesignError(
            f"method must be one of {list(_METHODS)}; received {method!r}. 'wald' uses the "
            f"paired SD under the alternative for both quantiles; 'connor' is McNemar's "
            f"test sized with Connor's (1987) formula."
        )
    return method


def _table(p10: Any, p01: Any) -> tuple[np.ndarray, np.ndarray]:
    a = as_float_array("p10", p10)
    b = as_float_array("p01", p01)
    mask = (a < 0) | (b < 0) | (a + b > 1) | (a + b <= 0)
    if np.any(mask):
        a_b, b_b = np.broadcast_arrays(a, b)
        m = np.broadcast_to(mask, a_b.shape)
        raise DesignError(
            "the discordance table needs p10 >= 0, p01 >= 0 and 0 < p10 + p01 <= 1 "
            f"(p10 = P(A right, B wrong), p01 = P(A wrong, B right)); received "
            f"p10 = {describe_bad(a_b, m)}, p01 = {describe_bad(b_b, m)}."
        )
    return a, b


def _check_psi(psi: Any) -> np.ndarray:
    return check_interval("psi", psi, 0, 1, hi_closed=True, what=" (the discordance p10 + p01)")


def _psi_sds(psi: Any, d: Any, method: str) -> tuple[np.ndarray, np.ndarray]:
    """(null SD, alternative SD) for discordance psi: Wald both sqrt(psi - d^2); Connor sqrt(psi)."""
    alt = np.sqrt(np.maximum(np.asarray(psi) - np.asarray(d) ** 2, 0.0))
    return (np.sqrt(psi) if method == "connor" else alt), alt


def _source(*, sigma_d: Any, psi: Any, p_a: Any, p_b: Any, rho: Any, p10: Any, p01: Any) -> str:
    """Name the single way the paired variability was described, or raise."""
    marg = [x is not None for x in (p_a, p_b, rho)]
    tab = [x is not None for x in (p10, p01)]
    if any(marg) and not all(marg):
        raise DesignError(
            "marginals need all three of p_a, p_b and rho; received "
            f"p_a={p_a!r}, p_b={p_b!r}, rho={rho!r}."
        )
    if any(tab) and not all(tab):
        raise DesignError(
            f"a discordance table needs both p10 and p01; received p10={p10!r}, p01={p01!r}."
        )
    given = (("sigma_d", sigma_d is not None), ("marginals", all(marg)), ("table", all(tab)),
             ("psi", psi is not None))
    sources = [name for name, g in given if g]
    if len(sources) != 1:
        raise DesignError(
            "describe the paired variability in exactly one way: sigma_d=..., or "
            "p_a=..., p_b=..., rho=..., or p10=..., p01=..., or psi=...; received "
            f"{sources or 'none of them'}."
        )
    return sources[0]


def _checked_sigma_d(sigma_d: Any, method: str) -> np.ndarray:
    """The given paired SD (Wald only: Connor's method needs the discordance)."""
    if method == "connor":
        raise DesignError(
            "method='connor' needs the discordance psi = p10 + p01, not sigma_d; pass "
            "psi=..., p10=/p01=, or p_a=/p_b=/rho=, or use method='wald'."
        )
    return check_positive("sigma_d", sigma_d, hint="Pass the paired SD of the differences.")


def _marginal_psi(p_a: Any, p_b: Any, rho: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated marginals -> (p_a, p_b, psi) with psi = p_a + p_b - 2 p11."""
    pa = check_open01("p_a", p_a)
    pb = check_open01("p_b", p_b)
    r = check_rho(rho, pa, pb)
    p11 = pa * pb + r * np.sqrt(pa * (1 - pa) * pb * (1 - pb))
    return pa, pb, np.maximum(pa + pb - 2 * p11, 0.0)


def _resolve(
    delta: Any, *, sigma_d: Any, psi: Any, p_a: Any, p_b: Any, rho: Any, p10: Any, p01: Any,
    method: str,
) -> tuple[np.ndarray, Any, str]:
    """Turn the user's description into ``(delta, sd_fn, source)``.

    ``sd_fn(delta)`` returns ``(sd0, sd1)``: the SD multiplying ``z_{1-alpha/2}``
    (null) and ``z_{1-beta}`` (alternative).  Wald: both are sigma_D.  Connor:
    ``sqrt(psi)`` and ``sqrt(psi - delta^2)``.
    """
    method = _check_method(method)
    source = _source(sigma_d=sigma_d, psi=psi, p_a=p_a, p_b=p_b, rho=rho, p10=p10, p01=p01)

    def _implied(implied: np.ndarray, what: str) -> np.ndarray:
        if delta is None:
            if np.any(implied == 0):
                raise DesignError(
                    f"the {what} is 0 (no difference), which needs an infinite sample "
                    f"size (delta = 0); pass values with a non-zero difference."
                )
            return implied
        d = check_delta(delta)
        if not np.allclose(d, implied, rtol=0, atol=1e-9):
            raise DesignError(
                f"delta = {delta!r} contradicts the {what}, which implies delta = "
                f"{as_result(implied)!r}. Drop delta, or pass sigma_d=sigma_d(p_a, p_b, rho=rho) "
                f"to size a different effect at the same paired SD."
            )
        return d

    if source == "sigma_d":
        s = _checked_sigma_d(sigma_d, method)
        if delta is None:
            raise DesignError("delta is required with sigma_d; pass delta=... (non-zero).")
        return check_delta(delta), (lambda _d: (s, s)), source

    if source == "marginals":
        pa, pb, psi_m = _marginal_psi(p_a, p_b, rho)
        d = _implied(pa - pb, "difference p_a - p_b of the marginals")
    elif source == "table":
        a, b = _table(p10, p01)
        psi_m = a + b
        d = _implied(a - b, "difference p10 - p01 of the discordance table")
    else:
        psi_m = _check_psi(psi)
        if delta is None:
            raise DesignError("delta is required with psi; pass delta=... (non-zero).")
        d = check_delta(delta)
        mask = np.abs(d) > psi_m
        if np.any(mask):
            raise DesignError(
                f"|delta| cannot exceed the discordance psi = p10 + p01; received "
                f"delta = {as_result(d)!r} with psi = {as_result(psi_m)!r}."
            )

    return d, (lambda dd: _psi_sds(psi_m, dd, method)), source


def _zsum(alpha: np.ndarray, pw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return z_upper(alpha / 2), z_quantile(pw)


# ----------------------------------------------------------------------------
# N*, MDE, q
# ----------------------------------------------------------------------------

def n_star(
    delta: Any = None,
    *,
    sigma_d: Any = None, p_a: Any = None, p_b: Any = None, rho: Any = None,
    p10: Any = None, p01: Any = None, psi: Any = None, alpha: Any = 0.05,
    power: Any = 0.8, method: str = "wald",
) -> float | np.ndarray:
    """Paired sample size N* that resolves a difference ``delta``.

    Parameters
    ----------
    delta : float or array_like, optional
        The difference to resolve (``p_A - p_B``; the sign is irrelevant).
        Required with ``sigma_d`` or ``psi``; implied (and may be omitted) with
        marginals (``p_a - p_b``) or a discordance table (``p10 - p01``).
    sigma_d : float or array_like, optional
        Paired SD of the per-cell differences (Wald only).
    p_a, p_b, rho : float or array_like, optional
        Marginal accuracies and the correlation of the 0/1 scores.
    p10, p01 : float or array_like, optional
        Discordance table: P(A right, B wrong) and P(A wrong, B right).
    psi : float or array_like, optional
        Discordance ``p10 + p01`` (with ``delta``).
    alpha : float, default 0.05
        Two-sided level, in (0, 1).
    power : float, default 0.8
        Target power ``1 - beta``, in (alpha, 1).
    method : {"wald", "connor"}, default "wald"
        ``"wald"``: paired z-test with SD sigma_D.  ``"connor"``: McNemar's
        test, Connor's (1987) formula (needs the discordance).

    Returns
    -------
    float or numpy.ndarray
        N*, not rounded (round up to plan a study).

    Raises
    ------
    DesignError
        Bad arguments: a p outside (0, 1), rho outside its Frechet bounds,
        delta = 0, alpha outside (0, 1), power outside (alpha, 1), an
        inconsistent or missing variance description.

    Notes
    -----
    Wald: ``N* = ((z_{1-alpha/2} + z_{1-beta}) sigma_D / |delta|)^2``.
    Connor (McNemar): ``N = (z_{1-alpha/2} sqrt(psi) + z_{1-beta}
    sqrt(psi - delta^2))^2 / delta^2`` with ``psi = p10 + p01``,
    ``delta = p10 - p01`` (docs/methods.md §6).  Both neglect the far tail
    of the two-sided test (probability below ``Phi(-2 z_{1-alpha/2})``).
    With marginals, ``p11 = p_A p_B + rho sqrt(p_A q_A p_B q_B)``,
    ``p10 = p_A - p11``, ``p01 = p_B - p11``, so ``sigma_D^2 = psi - delta^2``.

    The McNemar counts of *discordant* pairs often quoted for 55:45 / 60:40 /
    65:35 splits (about 784 / 197 / 88) are this Wald form with ``psi = 1``
    and the null variance, i.e. ``n_star(delta, sigma_d=1)`` = K / delta^2
    for delta = 0.1, 0.2, 0.3 (784.9, 196.2, 87.2); Connor's formula with
    ``psi = 1`` gives 782.5, 193.8, 84.8.

    Validated against the worked example of arXiv 2605.30315
    ((0.65, 0.60, 0.30) -> N* ~ 1028) and by Monte Carlo power at N* (tests).

    References
    ----------
    Connor, R. J. (1987). Sample size for testing differences in proportions
    for the paired-sample design. Biometrics 43(1), 207-211.
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.

    Examples
    --------
    >>> round(n_star(p_a=0.65, p_b=0.60, rho=0.30), 1)
    1027.6
    """
    al = check_alpha(alpha)
    pw = check_power(power, al)
    d, sd_fn, _ = _resolve(
        delta, sigma_d=sigma_d, psi=psi, p_a=p_a, p_b=p_b, rho=rho, p10=p10, p01=p01,
        method=method,
    )
    za, zb = _zsum(al, pw)
    sd0, sd1 = sd_fn(d)
    with np.errstate(over="ignore"):  # a vanishing effect needs an infinite N*: inf is the answer
        return as_result(((za * sd0 + zb * sd1) / np.abs(d)) ** 2)


def mde(
    n: Any,
    *,
    sigma_d: Any = None, p_a: Any = None, p_b: Any = None, rho: Any = None,
    p10: Any = None, p01: Any = None, psi: Any = None, alpha: Any = 0.05,
    power: Any = 0.8, method: str = "wald",
) -> float | np.ndarray:
    """Minimum detectable effect at paired sample size ``n``.

    Parameters
    ----------
    n : float or array_like
        Number of paired cells, > 0.
    sigma_d : float or array_like, optional
        Paired SD (Wald): closed form.
    p_a, p_b, rho : float or array_like, optional
        Marginals: sigma_D is evaluated at these marginals (a plug-in: the
        MDE is the effect detectable at that paired SD).
    p10, p01, psi : float or array_like, optional
        Discordance: ``psi = p10 + p01`` is held fixed and the effect solved
        exactly (needed for ``method="connor"``).
    alpha, power, method
        As in :func:`n_star`.

    Returns
    -------
    float or numpy.ndarray
        The smallest ``|delta|`` resolved at ``n`` (positive).

    Raises
    ------
    DesignError
        Bad arguments (see :func:`n_star`), ``n <= 0``, or no effect
        compatible with the discordance ``psi`` is detectable at ``n``.

    Notes
    -----
    Wald: ``MDE(N) = (z_{1-alpha/2} + z_{1-beta}) sigma_D / sqrt(N)``
    (docs/methods.md §6).  With a fixed discordance ``psi`` the MDE solves
    ``sqrt(N) delta = z_{1-alpha/2} s0(delta) + z_{1-beta} s1(delta)``
    (Wald: ``s0 = s1 = sqrt(psi - delta^2)``; Connor: ``s0 = sqrt(psi)``,
    ``s1 = sqrt(psi - delta^2)``) by Brent's method on (0, psi].

    Validated against :func:`n_star` (``n_star(mde(n)) == n``) in the tests.

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.

    Examples
    --------
    >>> import mixrank
    >>> mixrank.mde([250, 1000, 4000], sigma_d=0.4).round(4).tolist()   # halves as n quadruples
    [0.0709, 0.0354, 0.0177]
    >>> round(float(mixrank.mde(1000, psi=0.2, method="connor")), 4)    # discordance 20%
    0.0396
    """
    nn = check_positive("n", n, hint="n is the number of paired cells.")
    al = check_alpha(alpha)
    pw = check_power(power, al)
    method = _check_method(method)
    za, zb = _zsum(al, pw)
    source = _source(sigma_d=sigma_d, psi=psi, p_a=p_a, p_b=p_b, rho=rho, p10=p10, p01=p01)
    if source == "sigma_d":
        s = _checked_sigma_d(sigma_d, method)
        return as_result((za + zb) * s / np.sqrt(nn))
    if source == "marginals":
        pa, pb, psi_v = _marginal_psi(p_a, p_b, rho)
        if method == "wald":
            return as_result((za + zb) * np.sqrt(np.maximum(psi_v - (pa - pb) ** 2, 0.0)) / np.sqrt(nn))
    elif source == "table":
        psi_v = np.add(*_table(p10, p01))
    else:
        psi_v = _check_psi(psi)
    return _mde_psi(nn, psi_v, za, zb, method)


def _mde_psi(nn, psi_v, za, zb, method) -> float | np.ndarray:
    def one(n1: float, ps: float, a: float, b: float) -> float:
        def f(dd: float) -> float:
            s0, s1 = _psi_sds(ps, dd, method)
            return np.sqrt(n1) * dd - a * s0 - b * s1

        if f(ps) < 0:
            raise DesignError(
                f"no effect is detectable at n = {n1:g} with discordance psi = {ps:g} "
                f"(even |delta| = psi falls short); increase n."
            )
        return optimize.brentq(f, 1e-15, ps, xtol=1e-14, rtol=1e-13)

    return as_result(np.vectorize(one, otypes=[float])(nn, psi_v, za, zb))


def resolution_ratio(
    n: Any,
    delta: Any = None,
    *,
    sigma_d: Any = None, p_a: Any = None, p_b: Any = None, rho: Any = None,
    p10: Any = None, p01: Any = None, psi: Any = None, alpha: Any = 0.05,
    power: Any = 0.8, method: str = "wald",
) -> float | np.ndarray:
    """Resolution ratio ``q = n / N*(delta)``; the comparison is resolved when q >= 1.

    Parameters
    ----------
    n : float or array_like
        Paired cells available, > 0.
    delta : float or array_like, optional
        Observed (or planned) difference; see :func:`n_star`.
    sigma_d, p_a, p_b, rho, p10, p01, psi, alpha, power, method
        As in :func:`n_star`.

    Returns
    -------
    float or numpy.ndarray
        q (not rounded).

    Raises
    ------
    DesignError
        As :func:`n_star`, and for ``n <= 0``.

    Notes
    -----
    ``q = N / N*(delta)``; for the Wald form ``q >= 1`` iff
    ``|delta| sqrt(N) / sigma_D >= z_{1-alpha/2} + z_{1-beta}`` (about 2.80 at
    the defaults) (docs/methods.md §6).

    Validated against the closed form above in the tests.

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.
    """
    nn = check_positive("n", n, hint="n is the number of paired cells.")
    ns = n_star(delta, sigma_d=sigma_d, p_a=p_a, p_b=p_b, rho=rho, p10=p10, p01=p01,
                psi=psi, alpha=alpha, power=power, method=method)
    return as_result(nn / np.asarray(ns))


def _power_at(absd, n1, sd0, sd1, za):
    """Two-sided power: P(|Z| >= z_{1-alpha/2}) when the standardized mean is shifted."""
    with np.errstate(over="ignore"):        # an overflow to inf is the right limit (power 1)
        lam = np.sqrt(n1) * absd
    sd1 = np.maximum(sd1, 1e-300)
    return special.ndtr((lam - za * sd0) / sd1) + special.ndtr((-lam - za * sd0) / sd1)


def power(
    delta: Any = None,
    n: Any = None,
    *,
    power: Any = None,
    sigma_d: Any = None, p_a: Any = None, p_b: Any = None, rho: Any = None,
    p10: Any = None, p01: Any = None, psi: Any = None, alpha: Any = 0.05,
    method: str = "wald",
) -> float | np.ndarray:
    """Solve the paired power equation for whichever of effect, n and power is None.

    Parameters
    ----------
    delta : float or array_like, optional
        The difference; implied by marginals or a discordance table. Solved
        for when None (needs ``sigma_d`` or ``psi``: the variability must not
        depend on the unknown effect through the marginals).
    n : float or array_like, optional
        Paired cells; solved for when None.
    power : float or array_like, optional
        Power; solved for when None.  Must lie in (alpha, 1) when given.
    sigma_d, p_a, p_b, rho, p10, p01, psi, alpha, method
        As in :func:`n_star`.

    Returns
    -------
    float or numpy.ndarray
        The solved quantity (``|delta|`` when solving for the effect).

    Raises
    ------
    DesignError
        If not exactly one of the three is unknown, or for bad arguments
        (see :func:`n_star`).

    Notes
    -----
    Exact two-sided normal power (both tails):
    ``P = Phi((sqrt(n)|delta| - z_{1-alpha/2} s0) / s1) + Phi((-sqrt(n)|delta| - z_{1-alpha/2} s0) / s1)``
    with ``s0 = s1 = sigma_D`` (Wald) or ``s0 = sqrt(psi)``,
    ``s1 = sqrt(psi - delta^2)`` (Connor).  The power is increasing in n and
    ``|delta|``, so n and delta are found by Brent's method.  Because the far
    tail is included, the n solved here falls short of :func:`n_star`'s
    closed form by a negligible amount (relative 3e-6 at the defaults).

    Validated against :func:`n_star` and :func:`mde` (round trips) in the tests.

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.
    """
    al = check_alpha(alpha)
    implied = delta is None and (
        (p_a is not None or p_b is not None or rho is not None) or (p10 is not None or p01 is not None)
    )
    unknown = [name for name, v in (("delta", None if implied else delta), ("n", n), ("power", power))
               if v is None and not (name == "delta" and implied)]
    if len(unknown) != 1:
        raise DesignError(
            "power() solves for exactly one of delta, n and power: leave exactly one of them "
            f"None; received unknowns {unknown or 'none'}"
            + (" (delta is implied by the marginals/table)" if implied else "") + "."
        )
    target = unknown[0]
    za = z_upper(al / 2)
    if target == "delta":
        method = _check_method(method)
        source = _source(sigma_d=sigma_d, psi=psi, p_a=p_a, p_b=p_b, rho=rho, p10=p10, p01=p01)
        if source not in ("psi", "sigma_d") or (source == "sigma_d" and method == "connor"):
            raise DesignError(
                "to solve for the effect, describe the variability independently of it: "
                "sigma_d=... (method='wald') or psi=... (the discordance p10 + p01, held "
                f"fixed); received {source} with method={method!r}."
            )
        nn = check_positive("n", n, hint="n is the number of paired cells.")
        pw = check_power(power, al)
        scale = (check_positive("sigma_d", sigma_d) if source == "sigma_d" else _check_psi(psi))

        def one(n1, sc, a, p):
            def f(x):
                s0, s1 = (sc, sc) if source == "sigma_d" else _psi_sds(sc, x, method)
                return _power_at(x, n1, s0, s1, a) - p

            hi = sc
            while source == "sigma_d" and f(hi) < 0:
                hi *= 2.0
            if f(hi) < 0:
                raise DesignError(
                    f"the target power {p:g} is out of reach at n = {n1:g} with discordance "
                    f"psi = {sc:g} (|delta| cannot exceed psi); increase n."
                )
            return optimize.brentq(f, 1e-300, hi, xtol=1e-15 * sc, rtol=1e-13)

        return as_result(np.vectorize(one, otypes=[float])(nn, scale, za, pw))

    d, sd_fn, _ = _resolve(delta, sigma_d=sigma_d, psi=psi, p_a=p_a, p_b=p_b, rho=rho,
                           p10=p10, p01=p01, method=method)
    sd0, sd1 = sd_fn(d)
    absd = np.abs(d)
    if target == "power":
        nn = check_positive("n", n, hint="n is the number of paired cells.")
        return as_result(_power_at(absd, nn, sd0, sd1, za))
    pw = check_power(power, al)

    def one_n(x, s0, s1, a, p):
        f = lambda m: _power_at(x, m, s0, s1, a) - p  # noqa: E731
        if f(0.0) >= 0:  # only when the alternative SD is ~0
            return 0.0
        hi = max(((a * s0 + 3.0 * s1) / x) ** 2, 1.0)
        while f(hi) < 0:
            hi *= 2.0
        return optimize.brentq(f, 0.0, hi, xtol=1e-12, rtol=1e-13)

    return as_result(np.vectorize(one_n, otypes=[float])(absd, sd0, sd1, za, pw))
