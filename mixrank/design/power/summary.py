"""Stage design: one table of N*, MDE, power and q for a described comparison.

Inputs: a comparison described by marginals (``p_a, p_b, rho``) or by the
paired SD ``sigma_d`` with ``delta`` and/or ``n``.  Outputs: a tidy
``quantity, value, note`` table (what ``mixrank power`` prints).
Contents: :func:`power_summary`.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..._util import tidy
from ...errors import DesignError
from . import closed_form as pw
from .audit import cohen_h, shortcut_n

__all__ = ["power_summary"]

_HOW = ("describe the comparison with p_a, p_b and rho (--p-a --p-b --rho), or with sigma_d "
        "(--sigma-d) and delta (--delta) and/or n (--n)")


def _plan(ns: float) -> str:
    if not math.isfinite(ns):
        return "no finite number of cells resolves it"
    return f"plan {math.ceil(ns)} cells"


def _marginal_rows(p_a: float, p_b: float, rho: float, n: float | None, kw: dict[str, Any],
                   method: str, power: float) -> list[dict]:
    m = dict(p_a=p_a, p_b=p_b, rho=rho)
    ns = float(pw.n_star(**m, power=power, method=method, **kw))
    rows = [dict(quantity="delta", value=p_a - p_b, note="p_a - p_b"),
            dict(quantity="sigma_d", value=float(pw.sigma_d(p_a, p_b, rho=rho)),
                 note="paired SD of the cell differences"),
            dict(quantity="cohen_h", value=float(cohen_h(p_a, p_b)), note="Cohen's h"),
            dict(quantity="n_star", value=ns, note=f"paired N* ({method}); {_plan(ns)}"),
            dict(quantity="shortcut_n", value=float(shortcut_n(p_a, p_b, rho=rho, power=power,
                                                               **kw)),
                 note="unpaired Cohen-h n times (1 - rho): the shortcut")]
    if n is not None:
        rows += [dict(quantity="power", value=float(pw.power(n=n, method=method, **m, **kw)),
                      note=f"at n = {n:g}"),
                 dict(quantity="q", value=float(pw.resolution_ratio(n, method=method, power=power,
                                                                    **m, **kw)),
                      note="n / N*; resolved when >= 1"),
                 dict(quantity="mde", value=float(pw.mde(n, method=method, power=power, **m,
                                                         **kw)),
                      note=f"smallest |delta| resolved at n = {n:g}")]
    return rows


def _sigma_rows(sigma_d: float, delta: float | None, n: float | None, kw: dict[str, Any],
                power: float) -> list[dict]:
    s = dict(sigma_d=sigma_d, **kw)
    rows = []
    if delta is not None:
        ns = float(pw.n_star(delta, power=power, **s))
        rows.append(dict(quantity="n_star", value=ns, note=f"paired N*; {_plan(ns)}"))
    if n is not None:
        rows.append(dict(quantity="mde", value=float(pw.mde(n, power=power, **s)),
                         note=f"smallest |delta| resolved at n = {n:g}"))
    if n is not None and delta is not None:
        rows += [dict(quantity="power", value=float(pw.power(delta, n, **s)),
                      note=f"at n = {n:g}"),
                 dict(quantity="q", value=float(pw.resolution_ratio(n, delta, power=power, **s)),
                      note="n / N*; resolved when >= 1")]
    return rows


def power_summary(*, p_a: float | None = None, p_b: float | None = None,
                  rho: float | None = None, sigma_d: float | None = None,
                  delta: float | None = None, n: float | None = None, alpha: float = 0.05,
                  power: float = 0.8, method: str = "wald") -> pd.DataFrame:
    """N*, MDE, power and q of one paired comparison, as one table.

    Parameters
    ----------
    p_a, p_b, rho : float, optional
        Marginal accuracies and the correlation of the 0/1 scores (all three
        or none).
    sigma_d : float, optional
        Paired SD of the cell differences (instead of the marginals).
    delta : float, optional
        Difference to resolve (with ``sigma_d``; implied by the marginals).
    n : float, optional
        Paired cells available: adds power, q and the MDE at ``n``.
    alpha : float, default 0.05
        Two-sided level.
    power : float, default 0.8
        Target power.
    method : {"wald", "connor"}, default "wald"
        ``connor`` (McNemar) needs the marginals.

    Returns
    -------
    pandas.DataFrame
        ``quantity, value, note``.  Quantities: with marginals ``delta,
        sigma_d, cohen_h, n_star, shortcut_n`` (+ ``power, q, mde`` with
        ``n``); with ``sigma_d``: ``n_star`` (with ``delta``), ``mde`` (with
        ``n``), ``power, q`` (with both).  ``n_star`` is ``inf`` when no
        finite design resolves ``delta`` (e.g. ``delta = 1e-300``).

    Raises
    ------
    DesignError
        Only some of the marginals; neither marginals nor ``sigma_d``; both;
        ``sigma_d`` without ``delta`` or ``n``; ``method="connor"`` without
        marginals; and every check of :func:`mixrank.n_star` and friends.

    Notes
    -----
    Each value is the public function's (:func:`mixrank.n_star`,
    :func:`mixrank.mde`, :func:`mixrank.power.power`,
    :func:`~mixrank.power.resolution_ratio`, :func:`~mixrank.design.power.audit.cohen_h`,
    :func:`~mixrank.design.power.audit.shortcut_n`); validated by
    ``tests/design/test_power_summary.py`` against those calls.

    Examples
    --------
    >>> tab = power_summary(sigma_d=0.5, delta=0.03, n=2000)
    >>> tab.quantity.tolist()
    ['n_star', 'mde', 'power', 'q']
    """
    given = [v is not None for v in (p_a, p_b, rho)]
    kw = dict(alpha=alpha)
    if method not in ("wald", "connor"):
        raise DesignError(f"method={method!r} is not an option; expected one of 'wald', 'connor'")
    if any(given) and not all(given):
        raise DesignError(f"give all three of p_a, p_b and rho (got p_a={p_a}, p_b={p_b}, "
                          f"rho={rho}); or {_HOW}")
    if all(given):
        if sigma_d is not None or delta is not None:
            raise DesignError("the marginals p_a, p_b, rho already fix sigma_d and delta; drop "
                              "sigma_d/delta (--sigma-d/--delta) or the marginals")
        rows = _marginal_rows(float(p_a), float(p_b), float(rho), n, kw,  # type: ignore[arg-type]
                              method, power)
    elif sigma_d is None:
        raise DesignError(f"power_summary: {_HOW}")
    elif method == "connor":
        raise DesignError("method='connor' (McNemar, --test connor) needs the discordance, i.e. "
                          "the marginals p_a, p_b and rho (--p-a --p-b --rho); with sigma_d use "
                          "method='wald'")
    elif delta is None and n is None:
        raise DesignError("with sigma_d give delta (for N*; --delta) and/or n (for the MDE; --n)")
    else:
        rows = _sigma_rows(sigma_d, delta, n, kw, power)
    return tidy(rows, table="power_summary", method=method, alpha=alpha, power=power)
