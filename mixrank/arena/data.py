"""Stage arena/data: battle logs -> validated, encoded battles and their sufficient statistics.

Inputs: a battle log (DataFrame or a path to CSV/JSONL/parquet/JSON, including
FastChat's ``clean_battle`` JSON), one row per vote with ``model_a, model_b,
winner``, optional per-side feature columns (``len_a, len_b``) and a grouping
column; or per-item scores of several models (:func:`battles_from_scores`).
Outputs: :class:`Battles` (model codes, outcome 1/0/0.5 from model_a's side,
the covariate differences, cluster codes) and :class:`Patterns` (win, loss
and tie counts per pair and covariate pattern, docs/arena.md §2).
Contents: :func:`parse_arena_formula`, :func:`read_battles`,
:func:`battles_from_scores`, :func:`encode_battles`, :func:`patterns`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mixrank._util import listed
from mixrank.errors import DataError, FormulaError
from mixrank.frame.build import CONVENTIONAL_KEYS
from mixrank.frame.source import to_pandas

__all__ = ["Battles", "Patterns", "WINNER_CODES", "parse_arena_formula", "read_battles",
           "battles_from_scores", "encode_battles", "patterns", "TIES", "winner_outcome"]

#: Winner spellings (FastChat's and numeric ones) -> outcome from model_a's side.
WINNER_CODES: dict[Any, float] = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5,
                                  "tie (bothbad)": 0.5, 1: 1.0, 0: 0.0, 0.5: 0.5}
#: Accepted values of ``ties=``.
TIES = ("half", "davidson", "drop")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


@dataclass(frozen=True)
class Battles:
    """Validated battles: one entry per vote, models as integer codes.

    ``outcome`` is 1 when ``model_a`` won, 0 when ``model_b`` won and 0.5 for
    a tie; ``x`` holds the covariate differences (side a minus side b, after
    the transform of docs/arena.md §4), one column per feature.
    """

    models: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    x: np.ndarray
    features: tuple[str, ...]
    cluster: np.ndarray | None
    cluster_name: str | None
    n_ties_dropped: int

    @property
    def n(self) -> int:
        return int(self.a.size)


@dataclass(frozen=True)
class Patterns:
    """Sufficient statistics: counts per (pair, covariate pattern), pair oriented a < b.

    ``index`` maps every battle to its pattern and ``flip`` says whether its
    sides were swapped to orient the pair (needed for per-battle scores).
    """

    a: np.ndarray
    b: np.ndarray
    x: np.ndarray
    win: np.ndarray
    loss: np.ndarray
    tie: np.ndarray
    index: np.ndarray
    flip: np.ndarray

    @property
    def n(self) -> np.ndarray:
        return self.win + self.loss + self.tie


# ----------------------------------------------------------------------------- formula

def parse_arena_formula(formula: str | None, covariates: Sequence[str] | None
                        ) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``"winner ~ style(len, markdown) + x"`` -> (winner column, ((feature, transform), ...)).

    ``style(f, ...)`` gives the normalised difference ``(f_a - f_b) / (f_a +
    f_b)`` of LMArena's style control; a bare name ``f`` the plain difference
    ``f_a - f_b``; ``1`` nothing.  ``covariates=[...]`` is ``style(...)`` of
    those names.  Raises :class:`FormulaError` with a caret at the bad part.
    """
    if covariates is not None:
        if isinstance(covariates, str) or not all(isinstance(c, str) for c in covariates):
            raise FormulaError(f"covariates must be a list of feature names such as ['len', "
                               f"'markdown'] (columns len_a, len_b, ...); got {covariates!r}")
        cov = tuple((c, "style") for c in covariates)
    else:
        cov = ()
    if formula is None:
        return "winner", cov
    if not isinstance(formula, str):
        raise FormulaError(f"formula must be a string such as 'winner ~ style(len, markdown)'; "
                           f"got {type(formula).__name__}")
    if formula.count("~") != 1:
        raise FormulaError("an arena formula has one '~': 'winner ~ 1' or 'winner ~ "
                           "style(len, markdown)'", formula, max(formula.find("~"), 0))
    lhs, rhs = formula.split("~")
    winner = lhs.strip()
    if not _NAME.fullmatch(winner):
        raise FormulaError("the left side must name the winner column, e.g. 'winner'", formula, 0,
                           max(len(lhs), 1))
    terms: list[tuple[str, str]] = []
    pos = len(lhs) + 1
    for raw in rhs.split("+"):
        t = raw.strip()
        start = pos + (len(raw) - len(raw.lstrip()))
        pos += len(raw) + 1
        if t == "1":
            continue
        m = re.fullmatch(r"style\((.*)\)", t)
        if m:
            names = [s.strip() for s in m.group(1).split(",")]
            if not names or not all(_NAME.fullmatch(s) for s in names):
                raise FormulaError("style() takes feature names, e.g. style(len, markdown)",
                                   formula, start, len(t))
            terms += [(s, "style") for s in names]
        elif t == "model":
            raise FormulaError("'model' is not a covariate: the arena compares the models of "
                               "model_a and model_b already; write 'winner ~ 1', or add feature "
                               "covariates such as style(len)", formula, start, len(t))
        elif _NAME.fullmatch(t):
            terms.append((t, "difference"))
        else:
            raise FormulaError("unsupported term; an arena formula allows '1', feature names "
                               "(plain side difference f_a - f_b) and style(f, ...)", formula,
                               start, max(len(t), 1))
    if cov and terms:
        raise FormulaError("give the covariates once: in the formula or in covariates=, not both",
                           formula, len(lhs) + 1, len(rhs))
    allterms = tuple(terms) or cov
    seen = [f for f, _ in allterms]
    dup = sorted({f for f in seen if seen.count(f) > 1})
    if dup:
        raise FormulaError(f"feature(s) {dup} named twice", formula, len(lhs) + 1, len(rhs))
    return winner, allterms


# ----------------------------------------------------------------------------- reading

def _flatten_fastchat(records: list[dict]) -> pd.DataFrame:
    """FastChat clean_battle records -> columns (style counts summed over heading levels)."""
    rows = []
    for r in records:
        row = {k: v for k, v in r.items() if not isinstance(v, (dict, list))}
        meta = r.get("conv_metadata") or {}
        for side in ("a", "b"):
            if f"sum_assistant_{side}_tokens" in meta:
                row[f"len_{side}"] = meta[f"sum_assistant_{side}_tokens"]
            for key in ("header_count", "list_count", "bold_count"):
                v = meta.get(f"{key}_{side}")
                if v is not None:
                    row[f"{key.split('_')[0]}_{side}"] = (sum(v.values()) if isinstance(v, dict)
                                                         else v)
        rows.append(row)
    return pd.DataFrame(rows)


def read_battles(source: Any) -> pd.DataFrame:
    """Read a battle log: DataFrame, CSV/JSONL/parquet (as the long readers), or a ``.json`` file.

    A ``.json`` file holds a list of records (FastChat's ``clean_battle``
    output: its ``conv_metadata`` becomes ``len_a, len_b, header_a, ...,
    bold_b``) or a pandas ``orient="records"`` table.

    Parameters
    ----------
    source : pandas.DataFrame, str or path
        The battle log.

    Returns
    -------
    pandas.DataFrame
        One row per battle with the source's columns (``model_a, model_b, winner``, ...).

    Raises
    ------
    DataError
        Missing or unreadable file, not a list of records, no rows.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> import mixrank
    >>> log = [{"model_a": "x", "model_b": "y", "winner": "model_a"},
    ...        {"model_a": "y", "model_b": "x", "winner": "tie"}]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "battles.json"
    ...     _ = path.write_text(json.dumps(log))
    ...     battles = mixrank.read_battles(path)
    >>> battles.values.tolist()
    [['x', 'y', 'model_a'], ['y', 'x', 'tie']]
    >>> try:
    ...     mixrank.read_battles("missing.json")
    ... except mixrank.DataError as e:
    ...     print(str(e).split(";")[0])
    battle log 'missing.json' does not exist
    """
    if isinstance(source, (str, Path)) and str(source).lower().endswith(".json"):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"battle log {str(path)!r} does not exist; pass a CSV, JSONL, "
                            "parquet or JSON file")
        try:
            records = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataError(f"could not read {str(path)!r} as JSON: {exc}; a battle log is a "
                            "JSON list of records (FastChat clean_battle) or JSON lines "
                            "(.jsonl)") from None
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise DataError(f"{str(path)!r} is not a JSON list of battle records (objects with "
                            "model_a, model_b, winner)")
        if not records:
            raise DataError(f"{str(path)!r} holds no battles")
        return _flatten_fastchat(records)
    return to_pandas(source)


def battles_from_scores(data: pd.DataFrame, *, model: str = "model", score: str = "correct",
                        keys: Sequence[str] | None = None) -> pd.DataFrame:
    """Judged battles from per-item scores: every pair of models on every common cell.

    The model with the higher score on a cell wins; equal scores are a tie
    (both right or both wrong for 0/1 scores).  This turns a benchmark into
    a *derived* battle log (docs/arena.md §2): it is not a human preference
    arena, and its battles on one cell share the cell (use ``cluster=``).

    Parameters
    ----------
    data : DataFrame
        Long format, one row per (model, cell).
    model, score : str
        Column names.
    keys : list of str, optional
        Cell columns; default the conventional pairing keys present
        (``subject``, ``question``, ``prompt``, as :func:`mixrank.fit` pairs
        cells), else every other column.

    Returns
    -------
    pandas.DataFrame
        ``model_a, model_b, winner`` (``"model_a"``, ``"model_b"``,
        ``"tie"``) and ``cell`` (the cell id, ``"|"``-joined keys); pairs in
        the order of first appearance of the models.

    Raises
    ------
    DataError
        Missing columns, NaN or non-numeric scores, duplicated (model, cell)
        rows, fewer than two models.

    Examples
    --------
    >>> import mixrank
    >>> df = mixrank.load_example().query("model in ['m01', 'm02', 'm03']")
    >>> b = mixrank.battles_from_scores(df)      # 3 pairs x 960 cells
    >>> b.columns.tolist(), len(b), int((b["winner"] == "tie").sum())
    (['model_a', 'model_b', 'winner', 'cell'], 2880, 1910)
    """
    df = to_pandas(data)
    for c in (model, score):
        if c not in df.columns:
            raise DataError(f"column {c!r} is not in the data; columns: {listed(df.columns)}")
    if keys is None:
        keys = [c for c in CONVENTIONAL_KEYS if c in df.columns and c not in (model, score)] or [
            c for c in df.columns if c not in (model, score)]
    keys = list(keys)
    miss = [k for k in keys if k not in df.columns]
    if miss:
        raise DataError(f"key column(s) {miss} are not in the data; columns: {listed(df.columns)}")
    if not keys:
        raise DataError("battles from scores need cell key columns besides the model and score")
    y = pd.to_numeric(df[score], errors="coerce")
    bad = y.isna() | ~np.isfinite(y.to_numpy(dtype=float, na_value=np.nan))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"column {score!r} has a missing or non-numeric score in row {i} "
                        f"({df[score].iloc[i]!r}); drop or fix those rows first")
    cell = df[keys].astype(object).where(df[keys].notna(), "<NA>").astype(str).agg("|".join, axis=1)
    dup = pd.DataFrame({"m": df[model].astype(str), "c": cell}).duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise DataError(f"model {df[model].iloc[i]!r} has several rows for cell {cell.iloc[i]!r}; "
                        "average replicates first or name the replicate column among keys")
    models = list(pd.unique(df[model].astype(str)))
    if len(models) < 2:
        raise DataError(f"battles need at least two models; the data have {models}")
    wide = pd.DataFrame({"m": df[model].astype(str), "c": cell, "y": y}).pivot(
        index="c", columns="m", values="y")[models]
    out = []
    vals = wide.to_numpy(dtype=float)
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            ok = ~np.isnan(vals[:, i]) & ~np.isnan(vals[:, j])
            d = vals[ok, i] - vals[ok, j]
            out.append(pd.DataFrame({"model_a": models[i], "model_b": models[j],
                                     "winner": np.where(d > 0, "model_a",
                                                        np.where(d < 0, "model_b", "tie")),
                                     "cell": wide.index[ok]}))
    return pd.concat(out, ignore_index=True)


# ----------------------------------------------------------------------------- encoding

def _outcome(col: pd.Series, name: str) -> np.ndarray:
    codes, uniq = pd.factorize(col, use_na_sentinel=True)
    table = np.full(len(uniq) + 1, np.nan)   # last slot: NaN values (code -1)
    for i, u in enumerate(uniq):
        if isinstance(u, str):
            table[i] = WINNER_CODES.get(u.strip().lower(), np.nan)
        elif isinstance(u, (int, float, np.integer, np.floating)) and not isinstance(u, bool):
            table[i] = WINNER_CODES.get(float(u), np.nan) if float(u) in (0, 0.5, 1) else np.nan
    out = table[codes]
    bad = np.isnan(out)
    if bad.any():
        v = col.to_numpy(dtype=object)
        vals = list(pd.unique(pd.Series(v[bad], dtype=object).astype(str)))
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"column {name!r} has {int(bad.sum())} unknown winner value(s), first "
                        f"in row {i}: {listed(vals, 5)}; expected 'model_a', 'model_b', 'tie', "
                        "'tie (bothbad)' (FastChat) or 1 / 0 / 0.5 (model_a's share of the "
                        "win); fix or drop those rows")
    return out


def winner_outcome(col: pd.Series, name: str) -> np.ndarray:
    """A winner column as model_a's share: 1, 0 or 0.5 (DataError naming unknown values)."""
    return _outcome(col, name)


def _side(df: pd.DataFrame, feat: str, side: str) -> np.ndarray:
    col = f"{feat}_{side}"
    if col not in df.columns:
        raise DataError(f"covariate {feat!r} needs columns {feat}_a and {feat}_b (one per side); "
                        f"{col!r} is missing. Columns: {listed(df.columns)}")
    v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(v)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"covariate column {col!r} has {int(bad.sum())} missing, non-numeric or "
                        f"infinite value(s), first in row {i} ({df[col].iloc[i]!r}); fill them "
                        "or drop those battles before fitting (nothing is dropped silently)")
    return v


def _covariates(df: pd.DataFrame, terms: Sequence[tuple[str, str]]) -> np.ndarray:
    cols = []
    for feat, how in terms:
        xa, xb = _side(df, feat, "a"), _side(df, feat, "b")
        if how == "style":
            if (xa < 0).any() or (xb < 0).any():
                raise DataError(f"style({feat}) normalises by {feat}_a + {feat}_b and needs "
                                f"non-negative counts; found negative values. Name {feat} "
                                "without style() for the plain difference")
            tot = xa + xb
            cols.append(np.divide(xa - xb, tot, out=np.zeros_like(tot), where=tot > 0))
        else:
            cols.append(xa - xb)
    return np.column_stack(cols) if cols else np.zeros((len(df), 0))


def _cluster_codes(col: pd.Series) -> np.ndarray:
    """Codes ``0..G-1`` of a cluster column: an integer column of a range up to four times
    its length by a counting pass (codes in value order), else ``pd.factorize``."""
    v = col.to_numpy()
    if v.dtype.kind in "iu" and v.size:
        lo, hi = int(v.min()), int(v.max())
        if hi - lo <= 4 * v.size:
            off = (v - lo).astype(np.intp, copy=False)
            present = np.bincount(off, minlength=hi - lo + 1) > 0
            return (np.cumsum(present) - 1)[off]
    return pd.factorize(col)[0]


def encode_battles(data: Any, *, winner: str = "winner",
                   terms: Sequence[tuple[str, str]] = (), ties: str = "half",
                   cluster: str | None = None, model_a: str = "model_a",
                   model_b: str = "model_b") -> Battles:
    """Validate a battle log and encode it (docs/arena.md §2, "Input").

    Raises
    ------
    DataError
        Missing columns; unknown winner values; NaN model names;
        self-battles (a model against itself; rows named); NaN covariates
        or cluster values; fewer than two models; no battles left.
    """
    df = read_battles(data)
    for c in (model_a, model_b, winner) + ((cluster,) if cluster else ()):
        if c not in df.columns:
            raise DataError(f"the battle log has no column {c!r}; expected one row per vote with "
                            f"columns model_a, model_b, winner; columns: {listed(df.columns)}")
    side_codes, side_names = [], []
    for c in (model_a, model_b):
        codes, uniq = pd.factorize(df[c])
        if (codes < 0).any():
            i = int(np.flatnonzero(codes < 0)[0])
            raise DataError(f"column {c!r} has a missing model name in row {i}; drop that battle")
        side_codes.append(codes)
        side_names.append([str(u) for u in uniq])
    allnames = sorted(set(side_names[0]) | set(side_names[1]))
    where = {m: i for i, m in enumerate(allnames)}
    ca = np.array([where[m] for m in side_names[0]], dtype=np.intp)[side_codes[0]]
    cb = np.array([where[m] for m in side_names[1]], dtype=np.intp)[side_codes[1]]
    selfb = ca == cb
    if selfb.any():
        rows = np.flatnonzero(selfb)
        raise DataError(f"{rows.size} self-battle(s) (a model against itself), e.g. row "
                        f"{int(rows[0])}: {allnames[ca[rows[0]]]!r} vs itself; a battle needs "
                        "two different models: drop those rows")
    out = _outcome(df[winner], winner)
    x = _covariates(df, terms)
    cl = None
    if cluster is not None:
        if df[cluster].isna().any():
            i = int(np.flatnonzero(df[cluster].isna().to_numpy())[0])
            raise DataError(f"cluster column {cluster!r} is missing in row {i}; every battle "
                            "needs its group (prompt, user, judge)")
        cl = _cluster_codes(df[cluster])
    keep = np.ones(out.size, dtype=bool)
    dropped = 0
    if ties == "drop":
        keep = out != 0.5
        dropped = int((~keep).sum())
    ca, cb = ca[keep], cb[keep]
    used = np.zeros(len(allnames), dtype=bool)
    used[ca] = used[cb] = True
    models = [m for m, u in zip(allnames, used) if u]
    if len(models) < 2:
        raise DataError(f"the battle log has fewer than two models ({models}) after "
                        f"dropping {dropped} tie(s)" if dropped else
                        f"the battle log has fewer than two models ({models})")
    remap = np.cumsum(used) - 1
    return Battles(models=tuple(models), a=remap[ca].astype(np.intp), b=remap[cb].astype(np.intp),
                   outcome=out[keep], x=x[keep], features=tuple(f for f, _ in terms),
                   cluster=None if cl is None else cl[keep], cluster_name=cluster,
                   n_ties_dropped=dropped)


def patterns(bt: Battles) -> Patterns:
    """Counts per (pair, covariate pattern), the pair oriented so that ``a < b``."""
    flip = bt.a > bt.b
    a = np.where(flip, bt.b, bt.a)
    b = np.where(flip, bt.a, bt.b)
    o = np.where(flip, 1.0 - bt.outcome, bt.outcome)
    x = np.where(flip[:, None], -bt.x, bt.x)
    K = len(bt.models)
    key = a.astype(np.int64) * K + b
    if x.shape[1]:   # hash group-by (sorted groups: an order independent of the rows)
        cols = {"k": key, **{f"x{j}": x[:, j] for j in range(x.shape[1])}}
        index = pd.DataFrame(cols).groupby(list(cols), sort=True).ngroup().to_numpy()
        first = np.full(int(index.max()) + 1, key.size)
        np.minimum.at(first, index, np.arange(key.size))
        ukey = key[first]
        ux = x[first]
    else:   # keys < K^2: a counting pass instead of a sort
        present = np.bincount(key, minlength=K * K) > 0
        ukey = np.flatnonzero(present)
        lookup = np.cumsum(present) - 1
        index = lookup[key]
        ux = np.zeros((ukey.size, 0))
    index = index.reshape(-1)
    m = ukey.size
    half = o * 2.0
    code = half.astype(np.intp)                    # 0 loss, 1 tie, 2 win
    if np.array_equal(code, half):                 # outcomes 0 / 0.5 / 1: one counting pass
        cnt = np.bincount(index * 3 + code, minlength=3 * m).reshape(m, 3)
        loss, tie, win = np.ascontiguousarray(cnt.T, dtype=float)
    else:
        win = np.bincount(index, weights=(o == 1.0), minlength=m)
        loss = np.bincount(index, weights=(o == 0.0), minlength=m)
        tie = np.bincount(index, weights=(o == 0.5), minlength=m)
    return Patterns(a=(ukey // K).astype(np.intp), b=(ukey % K).astype(np.intp), x=ux, win=win,
                    loss=loss, tie=tie, index=index, flip=flip)
