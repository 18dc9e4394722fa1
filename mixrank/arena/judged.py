"""Stage arena/judged: judge verdicts in an arena -- PP-BT inputs, diagnostics, side-by-side boards.

Inputs: a battle log with a human ``winner`` column (missing where a battle
was not voted on) and one or more judge columns (an LLM's verdict on every
battle), the encoded battles.
Outputs: :class:`JudgeInfo` (the judges, their power-tuning ``lam``, the
labelled and unlabelled counts, the diagnostics table and the per-model
agreement table) and the helpers :func:`judge_outcomes`,
:func:`diagnostics`, :func:`leaderboards`.
Contents (docs/arena.md §8): the diagnostics report each judge's position
bias (the first-position term of a BT fit with ``position=True`` on its
verdicts, with its CI) beside the humans', and its agreement with the
labelled votes, overall and per model.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from mixrank._util import listed, tidy
from mixrank.arena.data import winner_outcome
from mixrank.errors import DataError, DataQualityWarning, OptionError

__all__ = ["JudgeInfo", "judge_columns", "judge_outcomes", "diagnostics", "leaderboards"]


@dataclass(frozen=True)
class JudgeInfo:
    """What a judge-corrected arena used: judges, ``lam``, counts and diagnostics."""

    judges: tuple[str, ...]
    lam: np.ndarray
    n_labelled: int
    n_unlabelled: int
    diagnostics: pd.DataFrame
    agreement: pd.DataFrame
    make_boards: Callable[[], pd.DataFrame]
    cache: dict = field(default_factory=dict)

    @property
    def boards(self) -> pd.DataFrame:
        """The side-by-side leaderboards (fitted on first use: one BT fit per judge)."""
        if "boards" not in self.cache:
            self.cache["boards"] = self.make_boards()
        return self.cache["boards"]


def judge_columns(judge: Any, columns: pd.Index, winner: str) -> tuple[str, ...]:
    """Validate ``judge=`` (a column name or a list of them)."""
    names = [judge] if isinstance(judge, str) else judge
    if (not isinstance(names, (list, tuple)) or not names
            or not all(isinstance(j, str) for j in names)):
        raise OptionError(f"judge={judge!r}; expected a column name of judge verdicts, e.g. "
                          "judge='winner_gpt4', or a list of them")
    missing = [j for j in names if j not in columns]
    if missing:
        raise DataError(f"judge column(s) {missing} are not in the battle log; columns: "
                        f"{listed(columns)}")
    if winner in names or len(set(names)) < len(names):
        raise OptionError(f"judge={judge!r} repeats a column or names the human winner column "
                          f"{winner!r}; give each judge's verdict column once")
    return tuple(names)


def judge_outcomes(df: pd.DataFrame, judges: Sequence[str], keep: np.ndarray) -> np.ndarray:
    """(N, J) judge verdicts as model_a's share (1 / 0 / 0.5); every battle needs one."""
    cols = []
    for j in judges:
        col = df[j]
        if col.isna().any():
            i = int(np.flatnonzero(col.isna().to_numpy())[0])
            raise DataError(f"judge column {j!r} has {int(col.isna().sum())} missing verdict(s), "
                            f"first in row {i}; a judge's verdict is the prediction on every "
                            "battle: fill them or drop those battles")
        cols.append(winner_outcome(col, j))
    return np.column_stack(cols)[keep]


def _position(res: Any, level: float) -> dict[str, float]:
    cv = res.covariates(level)
    row = cv[cv["term"] == "position"].iloc[0]
    return dict(position=float(row["estimate"]), position_se=float(row["std_error"]),
                position_lower=float(row["ci_lower"]), position_upper=float(row["ci_upper"]))


def diagnostics(df: pd.DataFrame, *, winner: str, judges: Sequence[str], lam: np.ndarray,
                labelled: np.ndarray, fit_one: Any, level: float, models: Sequence[str],
                model_a: str, model_b: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-judge position bias and agreement with the labelled votes; per-model agreement.

    ``fit_one(frame, winner_column)`` fits a BT arena with ``position=True``.
    Warns (:class:`DataQualityWarning`) when a judge's position term differs
    from the humans' at the fit's level.
    """
    lab = df[labelled]
    human = fit_one(lab, winner)
    hp = _position(human, level)
    rows = [dict(judge="human", lam=np.nan, n=int(labelled.sum()), agreement=1.0,
                 agreement_decisive=1.0, share_model_a=_share_a(lab[winner]), **hp,
                 position_differs=False)]
    z = stats.norm.ppf(0.5 + level / 2)
    per_model = []
    yh = winner_outcome(lab[winner], winner)
    for j, lj in zip(judges, lam):
        jp = _judge_position(fit_one, df, j, level)
        yj = winner_outcome(lab[j], j)
        dec = (yh != 0.5) & (yj != 0.5)
        differs = not np.isfinite(jp["position"]) or abs(jp["position"] - hp["position"]) > \
            z * np.hypot(jp["position_se"], hp["position_se"])
        rows.append(dict(judge=j, lam=float(lj), n=int(len(df)), agreement=float(np.mean(yh == yj)),
                         agreement_decisive=float(np.mean(yh[dec] == yj[dec])) if dec.any()
                         else np.nan, share_model_a=_share_a(df[j]), **jp,
                         position_differs=bool(differs)))
        if differs and np.isfinite(jp["position"]):
            warnings.warn(f"judge {j!r} has a first-position (model_a) bias of "
                          f"{jp['position']:+.3f} log-odds [{jp['position_lower']:.3f}, "
                          f"{jp['position_upper']:.3f}], the humans {hp['position']:+.3f}: its "
                          "verdicts depend on the order of the answers. The correction's "
                          "labelled battles rectify it; a judge-only leaderboard would carry "
                          "it (see judges())", DataQualityWarning, stacklevel=4)
        for m in models:
            on = ((lab[model_a].astype(str) == m) | (lab[model_b].astype(str) == m)).to_numpy()
            per_model.append(dict(judge=j, model=m, n=int(on.sum()),
                                  agreement=float(np.mean(yh[on] == yj[on])) if on.any()
                                  else np.nan))
    diag = tidy(pd.DataFrame(rows), table="judge_diagnostics", level=level,
                position_term="log-odds that the answer shown first (model_a) wins, "
                              "strengths held equal")
    agree = tidy(pd.DataFrame(per_model), table="judge_agreement", level=level)
    return diag, agree


def _judge_position(fit_one: Any, df: pd.DataFrame, j: str, level: float) -> dict[str, float]:
    """The judge's position term; infinite (with a warning) when its decisive verdicts all
    pick one side, so that the position term separates them and has no finite estimate."""
    share = _share_a(df[j])
    try:
        return _position(fit_one(df, j), level)
    except DataError:
        if share not in (0.0, 1.0):
            raise
    side = "model_a (shown first)" if share == 1.0 else "model_b (shown second)"
    warnings.warn(f"judge {j!r} answered {side} on every decisive battle (first-position share "
                  f"{share:.3f}): its verdicts carry no information on the models beyond the "
                  "order of the answers, and its position bias has no finite estimate "
                  "(judges() shows it as infinite). The correction's labelled battles rectify "
                  "it; a judge-only leaderboard would be meaningless",
                  DataQualityWarning, stacklevel=4)
    inf = float("inf") if share == 1.0 else float("-inf")
    return dict(position=inf, position_se=float("nan"), position_lower=inf, position_upper=inf)


def _share_a(col: pd.Series) -> float:
    o = winner_outcome(col, str(col.name))
    dec = o != 0.5
    return float(np.mean(o[dec] == 1.0)) if dec.any() else float("nan")


def leaderboards(boards: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Side-by-side score tables (``model`` then ``<board>``, ``<board>_lower/_upper``)."""
    out: pd.DataFrame | None = None
    for name, tab in boards.items():
        t = tab[["model", "estimate", "ci_lower", "ci_upper"]].rename(columns={
            "estimate": name, "ci_lower": f"{name}_lower", "ci_upper": f"{name}_upper"})
        out = t if out is None else out.merge(t, on="model", how="outer")
    assert out is not None
    last = list(boards)[-1]
    return out.sort_values([last, "model"], ascending=[False, True],
                           kind="stable").reset_index(drop=True)
