"""Stage arena/monitor: a sequential arena -- feed battles, stop each pair once it is resolved.

Inputs: the pairs to watch, ``alpha``, the planned number of decisive
battles per pair; then battle logs in arrival order (``update``).
Outputs: :class:`ArenaMonitor` with ``status()``, a tidy table per pair (``repr()`` and
``_repr_html_()``: a one-line state).
Contents (docs/arena.md §6): the paired-Bernoulli mixture e-process of
:mod:`mixrank.design.anytime.bernoulli` applied to each pair's direct battles.

A battle between the watched pair (a, b) is ``+1`` when a wins, ``-1`` when
b wins and ``0`` for a tie.  Under ``H0: P(a wins) = P(b wins)`` (equal
strengths, whatever the tie rate) the signs of the decisive battles are fair
coin flips, so the Beta-mixture e-value is a test martingale and rejecting
at the first battle where ``E >= 1/alpha'`` has probability at most
``alpha'`` of ever happening under H0 (Ville).  Watching m pairs with
``adjust="bonferroni"`` uses ``alpha' = alpha / m``.  Only direct battles
between the two enter; the BT fit's transitive information is not used
(that would need a variance estimate; the e-process here needs none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from mixrank._util import TextDisplay, listed, tidy
from mixrank.arena.data import encode_battles
from mixrank.design.anytime.bernoulli import bernoulli_log_e, tune_beta
from mixrank.errors import DataError, DesignError

__all__ = ["ArenaMonitor"]


class ArenaMonitor(TextDisplay):
    """Anytime-valid monitor of pairs of models in a stream of battles.

    Parameters
    ----------
    pairs : list of (model_a, model_b)
        The pairs watched (fixed in advance).
    alpha : float, default 0.05
        Family level over the pairs (see ``adjust``).
    d_plan : float, default 1000
        Decisive battles per pair the Beta prior is tuned for (the boundary
        is tightest there; any value keeps validity).
    adjust : {"bonferroni", "none"}, default "bonferroni"
        ``bonferroni``: each pair at ``alpha / m``; ``none``: each at alpha.

    Examples
    --------
    >>> import pandas as pd
    >>> mon = ArenaMonitor([("x", "y")], d_plan=50)
    >>> log = pd.DataFrame({"model_a": ["x"] * 40, "model_b": ["y"] * 40,
    ...                     "winner": ["model_a"] * 40})
    >>> row = mon.update(log).status().iloc[0]
    >>> bool(row["resolved"]), int(row["resolved_at"]) < 40
    (True, True)
    """

    def __init__(self, pairs: Sequence[tuple[str, str]], *, alpha: float = 0.05,
                 d_plan: float = 1000.0, adjust: str = "bonferroni") -> None:
        try:
            fam = [(str(a), str(b)) for a, b in pairs]
        except (TypeError, ValueError):
            raise DesignError(f"pairs must be a list of (model_a, model_b); got {pairs!r}") from None
        if not fam or any(a == b for a, b in fam):
            raise DesignError(f"pairs must name at least one pair of two different models; got "
                              f"{listed(fam)}")
        keys = [frozenset(p) for p in fam]
        if len(set(keys)) != len(keys):
            raise DesignError("a pair is listed twice (in either orientation); list each once")
        if adjust not in ("bonferroni", "none"):
            raise DesignError(f"adjust={adjust!r}; expected 'bonferroni' or 'none'")
        if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
            raise DesignError(f"alpha={alpha!r}; expected a number in (0, 1), e.g. 0.05")
        self.pairs = fam
        self.alpha = float(alpha)
        self.adjust = adjust
        self.alpha_pair = self.alpha / len(fam) if adjust == "bonferroni" else self.alpha
        self.a = float(tune_beta(d_plan, alpha=self.alpha_pair))
        self.d_plan = float(d_plan)
        self._index = {p: i for i, p in enumerate(fam)}
        m = len(fam)
        self.n = np.zeros(m, dtype=np.int64)
        self.s = np.zeros(m)
        self.d = np.zeros(m)
        self.log_e = np.zeros(m)
        self.resolved_at = np.full(m, -1, dtype=np.int64)
        self.seen: int = 0

    def update(self, data: Any, *, winner: str = "winner") -> ArenaMonitor:
        """Feed battles; battles of unwatched pairs are counted in ``seen`` and skipped.

        A pair stops counting at its first crossing.

        Parameters
        ----------
        data : pandas.DataFrame or path
            A battle log (``model_a, model_b`` and the winner), rows in arrival order.
        winner : str, default "winner"
            The winner column.

        Returns
        -------
        ArenaMonitor
            ``self``, updated.

        Raises
        ------
        DataError
            ``data`` is not a battle log (a missing column, an unknown winner value).

        Examples
        --------
        >>> import pandas as pd
        >>> mon = ArenaMonitor([("x", "y"), ("x", "z")], d_plan=50)
        >>> log = pd.DataFrame({"model_a": ["x"] * 40, "model_b": ["y"] * 40,
        ...                     "winner": ["model_a"] * 40})
        >>> mon.update(log).seen, mon.done      # 40 battles fed; ("x", "z") not resolved
        (40, False)
        """
        bt = encode_battles(data, winner=winner)
        where = {m: i for i, m in enumerate(bt.models)}
        K = len(bt.models)
        keys, first_model, which = [], [], []
        for j, (pa, pb) in enumerate(self.pairs):
            if pa in where and pb in where:
                ia, ib = where[pa], where[pb]
                keys.append(min(ia, ib) * K + max(ia, ib))
                first_model.append(ia)
                which.append(j)
        code = np.full(bt.n, -1, dtype=np.int64)
        sign = np.zeros(bt.n)
        if keys:
            ks = np.asarray(keys, dtype=np.int64)
            srt = np.argsort(ks)
            row = np.minimum(bt.a, bt.b).astype(np.int64) * K + np.maximum(bt.a, bt.b)
            pos = np.clip(np.searchsorted(ks[srt], row), 0, ks.size - 1)
            hit = ks[srt][pos] == row
            jj = srt[pos[hit]]
            code[hit] = np.asarray(which)[jj]
            sign[hit] = np.where(bt.a[hit] == np.asarray(first_model)[jj], 1.0, -1.0)
        x = sign * (2 * bt.outcome - 1)
        live = (code >= 0) & (self.resolved_at[np.maximum(code, 0)] < 0)
        self.seen += bt.n
        if not live.any():
            return self
        rows = np.flatnonzero(live)
        order = rows[np.argsort(code[rows], kind="stable")]
        c = code[order]
        xs = x[order]
        start = np.r_[0, np.flatnonzero(np.diff(c)) + 1]
        grp = np.repeat(np.arange(start.size), np.diff(np.r_[start, c.size]))
        cs, cd = np.cumsum(xs), np.cumsum(xs != 0)
        base_s = np.r_[0.0, cs][start][grp]
        base_d = np.r_[0, cd][start][grp]
        pos = np.arange(c.size) - start[grp] + 1
        S = self.s[c] + cs - base_s
        D = self.d[c] + cd - base_d
        le = np.zeros(c.size)
        ok = D > 0
        le[ok] = bernoulli_log_e(S[ok], D[ok], a=self.a)
        hit = le >= np.log(1.0 / self.alpha_pair)
        first = np.full(start.size, c.size, dtype=np.int64)
        np.minimum.at(first, grp[hit], np.flatnonzero(hit))
        ends = np.r_[start[1:], c.size] - 1
        last = np.where(first < c.size, first, ends)
        g = c[start]   # the pair of each group
        self.resolved_at[g] = np.where(first < c.size, self.n[g] + pos[last], -1)
        self.n[g] += pos[last]
        self.s[g], self.d[g], self.log_e[g] = S[last], D[last], le[last]
        return self

    def __str__(self) -> str:
        return (f"<ArenaMonitor: {len(self.pairs)} pairs, {int(self.n.sum()):,} battles counted, "
                f"{int((self.resolved_at >= 0).sum())} resolved, alpha={self.alpha:g} "
                f"({self.adjust})>")

    @property
    def done(self) -> bool:
        """True when every watched pair is resolved."""
        return bool((self.resolved_at >= 0).all())

    def status(self) -> pd.DataFrame:
        """One row per watched pair.

        Returns
        -------
        pandas.DataFrame
            ``model_a, model_b, n`` (battles counted, up to the crossing),
            ``wins_a, wins_b, ties, log_e_value, resolved, resolved_at``
            (battle count of the crossing, else NaN), ``winner`` (the model
            ahead when resolved).  ``attrs["mixrank"]``: ``alpha``,
            ``alpha_pair``, ``adjust``, ``a`` (Beta parameter), ``d_plan``,
            ``seen`` (battles fed).

        Examples
        --------
        >>> import pandas as pd
        >>> mon = ArenaMonitor([("x", "y"), ("x", "z")], d_plan=50)
        >>> log = pd.DataFrame({"model_a": ["x"] * 40, "model_b": ["y"] * 40,
        ...                     "winner": ["model_a"] * 40})
        >>> mon.update(log).status()[["model_a", "model_b", "n", "resolved", "winner"]].values.tolist()
        [['x', 'y', 11, True, 'x'], ['x', 'z', 0, False, '']]
        """
        wa = (self.d + self.s) / 2
        wb = (self.d - self.s) / 2
        res = self.resolved_at >= 0
        tab = pd.DataFrame({"model_a": [p[0] for p in self.pairs],
                            "model_b": [p[1] for p in self.pairs], "n": self.n,
                            "wins_a": wa.round().astype(int), "wins_b": wb.round().astype(int),
                            "ties": (self.n - self.d).astype(int), "log_e_value": self.log_e,
                            "resolved": res,
                            "resolved_at": np.where(res, self.resolved_at, np.nan),
                            "winner": [(p[0] if s > 0 else p[1]) if r else ""
                                       for p, s, r in zip(self.pairs, self.s, res)]})
        if tab.empty:  # pragma: no cover - pairs is never empty
            raise DataError("no pairs watched")
        return tidy(tab, method="bernoulli_mixture", alpha=self.alpha,
                    alpha_pair=self.alpha_pair, adjust=self.adjust, a=self.a,
                    d_plan=self.d_plan, seen=self.seen)
