"""Conventions and stresses around N* (design stage).

Stage: design (needs no fitted model).
Inputs: marginal accuracies ``p_a``, ``p_b`` (or their midpoint ``p``), the
correlation ``rho`` of the two 0/1 score vectors, a level ``alpha`` and power.
Outputs: floats / arrays, and one tidy table (:func:`calculator_audit`).
Contents (docs/methods.md §6): the unpaired Cohen-h-times-(1 - rho)
shortcut that common calculators invite and its small-effect lemma
(:func:`shortcut_n`, :func:`shortcut_constant`, :func:`shortcut_safe_delta`),
:func:`calculator_audit` (what each convention returns next to the correct
paired N*), and the multiplicity helpers :func:`multiplicity_alpha` and
:func:`n_star_scale` that the fitted-model layer uses to rescale N*.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from mixrank._util import tidy
from mixrank.design.checks import (
    as_float_array,
    as_result,
    check_alpha,
    check_interval,
    check_open01,
    check_positive,
    check_power,
    check_rho,
    describe_bad,
    z_quantile,
    z_upper,
)
from mixrank.design.power.closed_form import n_star, sigma_d
from mixrank.errors import DesignError

__all__ = [
    "cohen_h",
    "shortcut_n",
    "shortcut_constant",
    "shortcut_safe_delta",
    "calculator_audit",
    "multiplicity_alpha",
    "n_star_scale",
]


def cohen_h(p_a: Any, p_b: Any) -> float | np.ndarray:
    """Cohen's h effect size ``2 asin sqrt(p_a) - 2 asin sqrt(p_b)``.

    Parameters
    ----------
    p_a, p_b : float or array_like
        Accuracies in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        h (signed like ``p_a - p_b``).

    Raises
    ------
    DesignError
        If a p is outside (0, 1).

    Notes
    -----
    ``h = 2 arcsin sqrt(p_A) - 2 arcsin sqrt(p_B)`` (Cohen 1988, ch. 6;
    docs/methods.md §5).  Validated against the closed form in the tests.

    References
    ----------
    Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences,
    2nd ed., chapter 6.
    """
    pa = check_open01("p_a", p_a)
    pb = check_open01("p_b", p_b)
    return as_result(2 * np.arcsin(np.sqrt(pa)) - 2 * np.arcsin(np.sqrt(pb)))


def shortcut_n(p_a: Any, p_b: Any, *, rho: Any, alpha: Any = 0.05,
               power: Any = 0.8) -> float | np.ndarray:
    """The shortcut calculators invite: unpaired Cohen-h n per arm times (1 - rho).

    Parameters
    ----------
    p_a, p_b : float or array_like
        Accuracies in (0, 1), ``p_a != p_b``.
    rho : float or array_like
        Correlation of the 0/1 scores (within the Frechet bounds).
    alpha : float, default 0.05
        Two-sided level.
    power : float, default 0.8
        Target power.

    Returns
    -------
    float or numpy.ndarray
        ``n_h = K / h^2 * (1 - rho)`` with ``K = (z_{1-alpha/2} + z_{1-beta})^2``.

    Raises
    ------
    DesignError
        p outside (0, 1), ``p_a == p_b``, rho outside its Frechet bounds,
        alpha outside (0, 1), power outside (alpha, 1).

    Notes
    -----
    For small effects ``n_h / N* -> 1/2``: the shortcut undersizes the paired
    comparison by about a factor of two (docs/methods.md §6; lemma of
    arXiv 2605.30315).  Validated against the worked example
    (0.65, 0.60, 0.30) -> about 515 (tests).

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.
    """
    al = check_alpha(alpha)
    pw = check_power(power, al)
    h = np.asarray(cohen_h(p_a, p_b))
    r = check_rho(rho, as_float_array("p_a", p_a), as_float_array("p_b", p_b))
    if np.any(h == 0):
        raise DesignError(
            f"the shortcut needs p_a != p_b (Cohen's h = 0 has no finite n); received "
            f"p_a = {p_a!r}, p_b = {p_b!r}."
        )
    k = (z_upper(al / 2) + z_quantile(pw)) ** 2
    return as_result(k / h**2 * (1 - r))


def _lemma_bracket(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    u = p * (1 - p)
    return (1 + r) * (1 - 2 * p) ** 2 / (16 * (1 - r) * u**2) - 1 / (6 * u)


def shortcut_constant(p: Any, rho: Any) -> float | np.ndarray:
    """Second-order constant C(p, rho) of the shortcut lemma.

    Parameters
    ----------
    p : float or array_like
        Midpoint accuracy ``(p_A + p_B) / 2``, in (0, 1).
    rho : float or array_like
        Correlation of the 0/1 scores, within the Frechet bounds at
        ``p_A = p_B = p`` and below 1.

    Returns
    -------
    float or numpy.ndarray
        ``C(p, rho) = 1/2 |(1 + rho)(1 - 2p)^2 / (16 (1 - rho) u^2) - 1/(6u)|``,
        ``u = p(1 - p)``.

    Raises
    ------
    DesignError
        p outside (0, 1), rho outside ``[rho_min(p), 1)``.

    Notes
    -----
    Lemma (docs/methods.md §6): at ``p_A = p + delta/2``, ``p_B = p - delta/2``,
    ``n_h / N* = 1/2 - (delta^2 / 2) [(1+rho)(1-2p)^2 / (16(1-rho)u^2) - 1/(6u)]
    + O(delta^4)``, so ``|n_h/N* - 1/2| ~ C(p, rho) delta^2``; ``C(1/2, rho) = 1/3``.
    Validated against exact ratios (residual O(delta^4): halving delta divides
    it by about 16) in the tests.

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.
    """
    pp = check_open01("p", p)
    r = check_rho(rho, pp, pp, upper_open=True)
    return as_result(0.5 * np.abs(_lemma_bracket(pp, r)))


def shortcut_safe_delta(p: Any, rho: Any, *, eps: Any) -> float | np.ndarray:
    """Largest ``|delta|`` for which the shortcut ratio stays within ``eps`` of 1/2.

    Parameters
    ----------
    p, rho : float or array_like
        As in :func:`shortcut_constant`.
    eps : float or array_like
        Tolerated deviation of ``n_h / N*`` from 1/2, > 0.

    Returns
    -------
    float or numpy.ndarray
        ``delta* = sqrt(eps / C(p, rho))`` (``inf`` where C = 0, i.e. where the
        second-order term vanishes).

    Raises
    ------
    DesignError
        Bad p or rho (see :func:`shortcut_constant`), ``eps <= 0``.

    Notes
    -----
    From the second-order expansion (docs/methods.md §6); fourth-order
    terms are ignored, so treat delta* as a guide, not a guarantee.
    Validated against the closed form in the tests.

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.
    """
    c = np.asarray(shortcut_constant(p, rho))
    e = check_positive("eps", eps, hint="eps is a tolerance on n_h/N*, e.g. 0.05.")
    with np.errstate(divide="ignore"):
        return as_result(np.where(c > 0, np.sqrt(e / np.where(c > 0, c, 1.0)), np.inf))


def calculator_audit(p_a: float, p_b: float, *, rho: float, alpha: float = 0.05,
                     power: float = 0.8) -> pd.DataFrame:
    """What each sample-size convention returns for one paired comparison.

    Parameters
    ----------
    p_a, p_b : float
        Accuracies in (0, 1), ``p_a != p_b``.
    rho : float
        Correlation of the two 0/1 score vectors (within the Frechet bounds).
    alpha : float, default 0.05
        Two-sided level.
    power : float, default 0.8
        Target power.

    Returns
    -------
    pandas.DataFrame
        One row per convention, columns:

        * ``method`` -- ``cohen_textbook`` (K/h^2, the n_h of
          docs/methods.md §6), ``statsmodels_normal_ind`` (statsmodels
          ``NormalIndPower`` called live: the two-sample per-arm n, 2K/h^2
          up to the far tail), ``shortcut`` (K/h^2 times (1 - rho)),
          ``statsmodels_shortcut`` (the statsmodels n times (1 - rho)),
          ``paired_wald`` (the correct paired N*) and ``connor`` (McNemar,
          Connor's formula);
        * ``n`` -- the sample size that convention asks for (not rounded);
        * ``ratio_to_n_star`` -- ``n / N*`` (paired Wald);
        * ``note`` -- what the number means.

        ``attrs["mixrank"]`` holds p_a, p_b, rho, alpha, power, cohen_h,
        sigma_d and n_star.

    Raises
    ------
    DesignError
        Bad arguments (see :func:`shortcut_n`); non-scalar input.

    Notes
    -----
    ``K = (z_{1-alpha/2} + z_{1-beta})^2``, ``h`` Cohen's h; N* as in
    :func:`mixrank.design.power.n_star`.  Beware the factor of two between
    conventions: ``K/h^2`` (the n_h of the lemma; numerically Cohen's
    one-sample h formula, R ``pwr.p.test``) is half the two-sample per-arm
    ``2K/h^2`` of Cohen's Table 6.4.1, R ``pwr.2p.test`` and statsmodels
    ``NormalIndPower`` (arcsine variance 1/n per arm, so ``Var(h_hat) = 2/n``).
    The lemma's ratio 1/2 belongs to ``K/h^2 (1 - rho)``; the statsmodels
    per-arm n times (1 - rho) is close to N* for small effects.  Validated against the worked example
    of arXiv 2605.30315 ((0.65, 0.60, 0.30): N* ~ 1028, shortcut ~ 515) and
    the live statsmodels call (tests).

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.
    Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences.
    Connor, R. J. (1987). Biometrics 43(1), 207-211.
    """
    import statsmodels
    from statsmodels.stats.power import NormalIndPower

    for name, v in (("p_a", p_a), ("p_b", p_b), ("rho", rho), ("alpha", alpha), ("power", power)):
        if np.ndim(v) != 0:
            raise DesignError(
                f"calculator_audit takes scalars; received {name} with shape {np.shape(v)}. "
                f"Call it once per comparison."
            )
    n_sc = shortcut_n(p_a, p_b, rho=rho, alpha=alpha, power=power)  # validates everything
    h = float(cohen_h(p_a, p_b))
    k = float((z_upper(alpha / 2) + z_quantile(power)) ** 2)
    n_cohen = k / h**2
    with warnings.catch_warnings(record=True) as caught:   # its root finder can fail at tiny n
        warnings.simplefilter("always")
        n_sm = float(np.asarray(NormalIndPower().solve_power(
            effect_size=abs(h), nobs1=None, alpha=alpha, power=power, ratio=1.0,
            alternative="two-sided")))
    sm_note = ("; statsmodels' root finder did not converge here (NaN)"
               if caught and not np.isfinite(n_sm) else "")
    ns = float(n_star(p_a=p_a, p_b=p_b, rho=rho, alpha=alpha, power=power))
    n_connor = float(n_star(p_a=p_a, p_b=p_b, rho=rho, alpha=alpha, power=power,
                            method="connor"))
    rows = [
        ("cohen_textbook", n_cohen,
         "K/h^2 (n_h of the shortcut lemma; = Cohen's one-sample h formula); ignores pairing"),
        ("statsmodels_normal_ind", n_sm,
         f"statsmodels {statsmodels.__version__} NormalIndPower.solve_power(effect_size=|h|): "
         f"two-sample n per arm (2K/h^2, both tails); ignores pairing{sm_note}"),
        ("shortcut", n_sc, "K/h^2 times (1 - rho): about N*/2 for small effects"),
        ("statsmodels_shortcut", n_sm * (1 - rho),
         "statsmodels per-arm n post-multiplied by (1 - rho)"),
        ("paired_wald", ns, "correct paired N* = K sigma_D^2 / delta^2"),
        ("connor", n_connor, "McNemar test sized with Connor's (1987) formula"),
    ]
    return tidy(
        [{"method": m, "n": n, "ratio_to_n_star": n / ns, "note": note} for m, n, note in rows],
        p_a=float(p_a), p_b=float(p_b), rho=float(rho), alpha=float(alpha), power=float(power),
        cohen_h=h, sigma_d=float(sigma_d(p_a, p_b, rho=rho)), n_star=ns,
    )


# ----------------------------------------------------------------------------
# multiplicity
# ----------------------------------------------------------------------------

def multiplicity_alpha(alpha: Any, m: Any, *, method: str = "bonferroni",
                       rank: Any = None) -> float | np.ndarray:
    """Per-comparison level after a multiplicity correction over ``m`` tests.

    Parameters
    ----------
    alpha : float
        Family level, in (0, 1).
    m : int or array_like
        Number of comparisons in the family, a whole number >= 1.
    method : {"bonferroni", "holm", "bh"}, default "bonferroni"
        Bonferroni, Holm's step-down, or Benjamini-Hochberg step-up.
    rank : int or array_like, optional
        1-based position of the comparison in ascending p-value order; needed
        for ``"holm"`` and ``"bh"`` (1 <= rank <= m).

    Returns
    -------
    float or numpy.ndarray
        The level ``alpha'`` at which that comparison is tested.

    Raises
    ------
    DesignError
        alpha outside (0, 1), m not a whole number >= 1, rank missing or
        outside 1..m, unknown method.

    Notes
    -----
    Bonferroni ``alpha/m``; Holm step ``alpha/(m - rank + 1)``; BH
    ``rank * alpha / m`` (docs/methods.md §5-§6).  Combine with
    :func:`n_star_scale` to rescale N*.  Validated against the textbook
    definitions (tests).

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure.
    Scand. J. Statist. 6, 65-70.
    Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate.
    JRSS B 57, 289-300.
    """
    al = check_alpha(alpha)
    mm = as_float_array("m", m)
    bad = (mm < 1) | (mm != np.round(mm))
    if np.any(bad):
        raise DesignError(
            f"m (the number of comparisons) must be a whole number >= 1; received {describe_bad(mm, bad)}."
        )
    if method not in ("bonferroni", "holm", "bh"):
        raise DesignError(f"method must be 'bonferroni', 'holm' or 'bh'; received {method!r}.")
    if method == "bonferroni":
        return as_result(al / mm)
    if rank is None:
        raise DesignError(
            f"method={method!r} needs rank= (the comparison's 1-based position in ascending "
            f"p-value order, 1..m); received rank=None."
        )
    rk = as_float_array("rank", rank)
    rk_b, mm_b = np.broadcast_arrays(rk, mm)
    bad = (rk_b < 1) | (rk_b > mm_b) | (rk_b != np.round(rk_b))
    if np.any(bad):
        raise DesignError(
            f"rank must be a whole number in 1..m; received rank = {describe_bad(rk_b, bad)} "
            f"with m = {describe_bad(mm_b, bad)}."
        )
    if method == "holm":
        return as_result(al / (mm - rk + 1))
    return as_result(rk * al / mm)


def n_star_scale(alpha_prime: Any, alpha: Any = 0.05, *, power: Any = 0.8) -> float | np.ndarray:
    """Factor by which N* grows when the level drops from ``alpha`` to ``alpha_prime``.

    Parameters
    ----------
    alpha_prime : float or array_like
        Adjusted per-comparison level (e.g. from :func:`multiplicity_alpha`).
    alpha : float, default 0.05
        Unadjusted level.
    power : float, default 0.8
        Target power, in (max(alpha, alpha_prime), 1).

    Returns
    -------
    float or numpy.ndarray
        ``((z_{1-alpha'/2} + z_{1-beta}) / (z_{1-alpha/2} + z_{1-beta}))^2``.

    Raises
    ------
    DesignError
        A level outside (0, 1) or power outside (max(alpha, alpha'), 1).

    Notes
    -----
    Exact for the Wald N* (docs/methods.md §6), which is proportional to
    ``(z_{1-alpha/2} + z_{1-beta})^2``.  Validated against
    :func:`mixrank.design.power.n_star` at both levels (tests).

    References
    ----------
    Kotawala, A. (2026). Resolution Diagnostics for Paired LLM Evaluation.
    arXiv:2605.30315.
    """
    ap = check_interval("alpha_prime", alpha_prime, 0, 1, what=" (the adjusted level)")
    al = check_alpha(alpha)
    pw = check_power(power, np.maximum(ap, al))
    zb = z_quantile(pw)
    return as_result(((z_upper(ap / 2) + zb) / (z_upper(al / 2) + zb)) ** 2)
