"""Stage frame: validate and encode long-format data for a formula.

Inputs: data (DataFrame, polars, pyarrow, or a file path) and a formula or
:class:`~mixrank.formula.Spec`.  Outputs: :class:`~mixrank.frame.Frame`.

Pairing rule (documented default): a *cell* is one combination of the
pairing keys.  Unless ``pair_by`` is given, the keys are the conventional key
columns ``subject``, ``question``, ``prompt`` that exist in the data, plus
every column named in a random term; the comparison factor, the score and the
replicate column are never keys.  Other columns (e.g. ``temperature``) are
ignored.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Sequence
from functools import lru_cache, partial
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, DataQualityWarning, MissingDataWarning, OptionError
from ..formula.spec import Spec
from .columns import CompressedFrame, ModelColumns
from .encode import combine_codes, encode_column
from .frame import Deferred, Frame, compute_stats
from .memory import check_frame_size
from .source import row_origin, to_pandas

__all__ = ["build_frame", "CONVENTIONAL_KEYS", "default_pair_by", "resolve_keys",
           "assemble_frame", "duplicate_cells_error", "cell_scores", "score_kind", "STRAY_SHARE",
           "BUILD_OPTIONS", "refuse_build_options"]

CONVENTIONAL_KEYS = ("subject", "question", "prompt")


#: Options that only act while a frame is built from raw data, with their defaults.
BUILD_OPTIONS: dict[str, Any] = {"pair_by": None, "replicate": None, "na": "error",
                                 "backend": "pandas", "client": None, "backend_options": None}


def refuse_build_options(data: Any, **given: Any) -> None:
    """Raise :class:`OptionError` when ``data`` is a prebuilt :class:`Frame` and one of
    :data:`BUILD_OPTIONS` is set: the frame is already built, so they would be ignored."""
    if not isinstance(data, Frame):
        return
    unknown = set(given) - set(BUILD_OPTIONS)
    if unknown:
        raise TypeError(f"refuse_build_options: unknown option(s) {sorted(unknown)}")
    set_ = {k: v for k, v in given.items() if v is not BUILD_OPTIONS[k] and v != BUILD_OPTIONS[k]}
    if set_:
        shown = ", ".join(f"{k}={v!r}" for k, v in set_.items())
        raise OptionError(f"{shown}: data is a prebuilt Frame, and these options act only while "
                          "a frame is built from raw data (they would be ignored). Drop them, "
                          "or pass the raw data (or build_frame(..., pair_by=, replicate=, na=) / "
                          "mixrank.io.backends.load_frame(..., backend=, client=, options=))")


def as_spec(formula: str | Spec) -> Spec:
    """``formula`` parsed (a :class:`~mixrank.formula.Spec` is returned as is)."""
    if isinstance(formula, Spec):
        return formula
    from ..formula import parse

    return parse(formula)


def _missing_column(col: str, role: str, columns: list[str]) -> DataError:
    close = difflib.get_close_matches(col, columns, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return DataError(f"column {col!r} ({role}) is not in the data.{hint} "
                     f"Available columns: {columns}")


#: Largest score magnitude computed in (docs/hardening.md §2): beyond it sums of squares and
#: fourth powers overflow double precision (or, below its inverse, underflow).
MAX_MAGNITUDE = 1e75


def check_magnitude(y: np.ndarray, column: str) -> None:
    """DataError when the scores' largest magnitude is outside ``[1/MAX, MAX]`` (not all 0)."""
    big = float(np.max(np.abs(y))) if y.size else 0.0
    if big == 0.0 or 1.0 / MAX_MAGNITUDE <= big <= MAX_MAGNITUDE:
        return
    e = int(np.floor(np.log10(big)))
    raise DataError(f"score column {column!r} has scores of magnitude 1e{e}: outside "
                    f"[1e-75, 1e75], where sums of squares {'overflow' if e > 0 else 'underflow'} "
                    f"double precision. Change the unit: divide the scores by 1e{e} (every "
                    "p-value and decision stays the same; estimates scale by that factor)")


def _score_values(s: pd.Series, name: str) -> np.ndarray:
    if isinstance(s.dtype, np.dtype) and s.dtype.kind in "biuf":   # numpy: no NA to map
        return s.to_numpy().astype(np.float64)
    if pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=np.float64)
    if not pd.api.types.is_numeric_dtype(s):
        num = pd.to_numeric(s, errors="coerce")
        bad = num.isna() & s.notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(
                f"score column {name!r} must be numeric, but row {row} holds {s.iloc[row]!r}; "
                "convert the scores to numbers (0/1 or a bounded score) before fitting")
        s = num
    return s.to_numpy(dtype=np.float64, na_value=np.nan)


def default_pair_by(spec: Spec, columns: list[str], replicate: str | None) -> tuple[str, ...]:
    """The documented default pairing keys for ``spec`` over ``columns``."""
    exclude = {spec.comparison, spec.response, replicate}
    keys = [c for c in CONVENTIONAL_KEYS if c in columns and c not in exclude]
    keys += [c for c in spec.grouping_columns if c not in keys and c not in exclude]
    return tuple(keys)


def encode_keys(spec: Spec, keys: Sequence[str], column: Any) -> tuple[
        np.ndarray, tuple[str, ...], dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray, int]:
    """Encode the comparison factor and the pairing keys; combine the keys into cells.

    ``column(name)`` returns the Series of one column.  Returns the model
    codes, the model labels, per-key codes and levels, the cell code of every
    entry and the number of cells.  Shared by :func:`build_frame` (rows) and
    :func:`mixrank.frame.cells.frame_from_cells` (aggregated cells).
    """
    model_codes, model_levels = encode_column(column(spec.comparison), spec.comparison)
    models = tuple(str(m) for m in model_levels)
    if len(set(models)) != len(models):
        raise DataError(f"comparison factor {spec.comparison!r} has levels that coincide as text "
                        f"({list(model_levels)}); make the labels distinct")
    key_codes: dict[str, np.ndarray] = {}
    key_levels: dict[str, np.ndarray] = {}
    for k in keys:
        key_codes[k], key_levels[k] = encode_column(column(k), k)
    cell = key_codes[keys[0]]
    ncell = len(key_levels[keys[0]])
    for k in keys[1:]:
        cell, ncell, _ = combine_codes(cell, ncell, key_codes[k], len(key_levels[k]))
    return model_codes, models, key_codes, key_levels, cell, ncell


def resolve_keys(spec: Spec, columns: list[str], *, pair_by: Sequence[str] | None,
                 replicate: str | None, na: str) -> tuple[str, ...]:
    """Check that the formula's columns exist in ``columns`` and return the pairing keys.

    Shared by :func:`build_frame` and the out-of-core constructors
    (:mod:`mixrank.frame.cells`), which only know a source's schema.

    Raises
    ------
    DataError
        Unsupported ``na``, a missing column (with the closest match and the
        available columns), ``pair_by`` naming the comparison factor, the
        score or the replicate column, a random-term column outside
        ``pair_by``, or no pairing key at all.
    """
    if na not in ("error", "drop"):
        raise DataError(f"na={na!r} is not supported; use na='error' or na='drop'")
    for col, role in [(spec.response, "the score, left of ~"), (spec.comparison, "the comparison factor")]:
        if col not in columns:
            raise _missing_column(col, role, columns)
    for col in spec.grouping_columns:
        if col not in columns:
            raise _missing_column(col, "a random-term grouping", columns)
    if replicate is not None:
        if not isinstance(replicate, str):
            raise DataError(f"replicate={replicate!r}; expected the name of the column that "
                            "numbers repeated generations (e.g. 'sample') or None")
        if replicate not in columns:
            raise _missing_column(replicate, "the replicate column", columns)
        if replicate in (spec.response, spec.comparison):
            raise DataError(f"replicate={replicate!r} is the formula's "
                            f"{'score' if replicate == spec.response else 'comparison factor'}; "
                            "name the column that numbers repeated generations (e.g. 'sample')")
    if pair_by is None:
        keys = default_pair_by(spec, columns, replicate)
    else:
        keys = (pair_by,) if isinstance(pair_by, str) else tuple(pair_by)
        bad_type = [c for c in keys if not isinstance(c, str)]
        if bad_type:
            raise DataError(f"pair_by={pair_by!r}: {bad_type} are not column names; expected "
                            "a column name or a list of them, e.g. ['subject', 'question']")
        for col in keys:
            if col not in columns:
                raise _missing_column(col, "a pairing key in pair_by", columns)
        bad = [c for c in keys if c in (spec.comparison, spec.response, replicate)]
        if len(set(keys)) != len(keys):
            raise DataError(f"pair_by={list(keys)} names a column twice; list each key once")
        if bad:
            raise DataError(f"pair_by must not contain the comparison factor, the score or the "
                            f"replicate column; remove {bad}")
        for col in spec.grouping_columns:
            if col not in keys:
                raise DataError(f"random-term column {col!r} is not a pairing key; add it to "
                                f"pair_by={list(keys) + [col]} or remove the term")
    if not keys:
        raise DataError("no pairing keys: the data need at least one key column such as "
                        "'question', or pass pair_by=[...]")
    return keys


def duplicate_cells_error(rows: np.ndarray, flat: np.ndarray, spec: Spec, keys: Sequence[str],
                          models: tuple[str, ...], model_codes: np.ndarray,
                          key_codes: dict[str, np.ndarray],
                          key_levels: dict[str, np.ndarray]) -> DataError | None:
    """The one duplicate check: several source rows for one (model, cell) without a replicate.

    ``rows[i]`` is the number of source rows behind entry ``i`` (a row: its
    (model, cell)'s count; an aggregated group: its row count), ``flat`` its
    (cell, model) code.  Returns the error naming the first such (model,
    cell) in cell order, or None.  Shared by :func:`build_frame` (rows) and
    :func:`mixrank.frame.cells.frame_from_cells` (aggregated groups);
    docs/hardening.md §4.
    """
    bad = rows > 1
    if not bad.any():
        return None
    order = np.argsort(flat, kind="stable")
    first = int(order[np.flatnonzero(bad[order])[0]])
    where = {k: key_levels[k][key_codes[k][first]] for k in keys}
    where[spec.comparison] = models[model_codes[first]]
    return several_rows_error(len(np.unique(flat[bad])), where, keys)


def several_rows_error(count: int, where: dict[str, Any], keys: Sequence[str]) -> DataError:
    """The error for ``count`` (model, cell)s with several rows, the first at ``where``
    (key and comparison values); every backend and layout raises this one."""
    return DataError(
        f"{count} (model, cell) combination(s) have several rows, first {where}; a cell is "
        f"keyed by {list(keys)}. Pass replicate='sample' (the column distinguishing repeated "
        "generations) to average them, or add the distinguishing column to pair_by")


def cell_scores(flat: np.ndarray, n: np.ndarray | None, sums: np.ndarray, ncell: int, M: int,
                key_codes: dict[str, np.ndarray], *, checked: bool = False,
                rows: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Average entries into the cells x models score matrix.

    ``flat`` is each entry's (cell, model) code, ``n`` its row count and
    ``sums`` its score sum (a row: 1 and its score).  Returns the scores
    (NaN where unobserved), the observed mask, the row counts per (cell,
    model) and each cell's key codes.  Shared by :func:`build_frame` and
    :func:`mixrank.frame.cells.frame_from_cells`, so both average alike.  ``checked``:
    the caller has run :func:`check_frame_size` on these sizes already.  ``rows``:
    the row counts per (cell, model) when the caller has them (then ``n`` may be None).
    """
    if not checked:
        check_frame_size(ncell, M, dense=True, n_entries=len(flat))   # before allocating
    counts = (np.bincount(flat, weights=n, minlength=ncell * M).astype(np.int64) if rows is None
              else rows.astype(np.int64, copy=False))
    total = np.bincount(flat, weights=sums, minlength=ncell * M)
    observed = (counts > 0).reshape(ncell, M)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(observed, total.reshape(ncell, M) / np.maximum(counts, 1).reshape(ncell, M),
                          np.nan)
    first_row = np.empty(ncell, dtype=np.int64)
    first_row[(flat // M)[::-1]] = np.arange(len(flat))[::-1]
    cell_key_codes = {k: c[first_row] for k, c in key_codes.items()}
    return scores, observed, counts.reshape(ncell, M), cell_key_codes


#: A 0/1 score column with at most this share of other values is taken for a
#: binary column with stray entries (warned about, used as given).
STRAY_SHARE = 0.05


def score_kind(y: np.ndarray | None, name: str, *, n_nonbinary: int | None = None,
               n: int | None = None) -> bool:
    """The one rule for "binary": every score is 0 or 1.  Returns whether ``y`` is binary.

    A column that is 0/1 except for a few values (at most
    :data:`STRAY_SHARE` of the rows, or any value outside [0, 1] among a
    majority of 0/1) gets a :class:`~mixrank.errors.DataQualityWarning`
    naming the values (with ``y``) or their count (an aggregated source:
    ``n_nonbinary`` of ``n`` rows): one stray 100 moves estimates a lot
    (docs/hardening.md §3).
    """
    if y is not None:
        # count first (two comparisons and two counts): the mask only when there are strays
        k, total = len(y) - np.count_nonzero(y == 0) - np.count_nonzero(y == 1), len(y)
        stray = ~((y == 0) | (y == 1)) if k else None
    else:
        k, total = int(n_nonbinary or 0), int(n or 0)
    if k == 0:
        return True
    outside = bool(y is not None and np.any((y[stray] < 0) | (y[stray] > 1)))
    if total and (k <= STRAY_SHARE * total or (outside and k < 0.5 * total)):
        if y is not None:
            vals, cnt = np.unique(y[stray], return_counts=True)
            shown = ", ".join(f"{v:g} ({c}x)" for v, c in list(zip(vals, cnt))[:5])
            what = f"{k} other value(s): {shown}{', ...' if len(vals) > 5 else ''}"
        else:
            what = f"{k} value(s) that are neither 0 nor 1"
        warnings.warn(f"score column {name!r} is 0/1 except for {what} among {total} rows; "
                      "it is analysed as continuous. Fix or drop those rows if they are "
                      "mistakes", DataQualityWarning, stacklevel=3)
    return False


def _cells_table(keys: Sequence[str], key_levels: dict[str, np.ndarray],
                 cell_key_codes: dict[str, np.ndarray]) -> pd.DataFrame:
    """The cells' key values, one column per key (cells in ``cell_key_codes`` order).

    Equal, dtypes included, to ``pd.DataFrame({k: key_levels[k][codes]})``: a key whose
    levels pandas stores as text gets that array built once over its levels and taken
    by the codes, instead of inferring the type of every cell's value again.
    """
    cols: dict[str, Any] = {}
    for k in keys:
        levels, codes = key_levels[k], cell_key_codes[k]
        text = _text_dtype() if len(levels) < len(codes) else None
        if text is not None and pd.api.types.infer_dtype(levels, skipna=False) == "string":
            cols[k] = pd.array(levels, dtype=text).take(codes)
        else:
            cols[k] = levels[codes]
    return pd.DataFrame(cols)


@lru_cache(maxsize=4)
def _text_dtype_for(options: tuple[Any, ...]) -> Any:
    return pd.DataFrame({"a": np.array(["a"], dtype=object)})["a"].dtype


def _text_dtype() -> Any:
    """The dtype pandas gives a column of text built from an object array (``str`` in
    pandas 3), or None where it keeps it as object."""
    dt = _text_dtype_for((pd.get_option("mode.string_storage"),))
    return dt if isinstance(dt, pd.StringDtype) else None


#: Levels of an interaction term up to which its labels are joined in Python, not pandas.
_SMALL_LABELS = 5000


def _term_labels(spec: Spec, key_levels: dict[str, np.ndarray], cell_key_codes: dict[str, np.ndarray],
                 term_codes: dict[str, np.ndarray], term_levels: dict[str, int]
                 ) -> dict[str, np.ndarray]:
    """Each random term's level labels (``"s1:q3"`` for an interaction), in code order."""
    out: dict[str, np.ndarray] = {}
    for term in spec.random:
        f0, codes, n = term.factors[0], term_codes[term.name], term_levels[term.name]
        first = np.empty(n, dtype=np.int64)
        first[codes[::-1]] = np.arange(len(codes))[::-1]
        lab0 = key_levels[f0][cell_key_codes[f0][first]]
        if len(term.factors) == 1 and all(isinstance(v, str) for v in key_levels[f0]):
            labels = lab0                     # text levels are their own labels
        elif n <= _SMALL_LABELS:              # a few levels: plain Python beats pandas' set-up
            # each factor's levels as text once, then one join per level of the term
            parts = [np.array([str(v) for v in key_levels[f]], dtype=object)[cell_key_codes[f][first]]
                     for f in term.factors]
            labels = np.array([":".join(t) for t in zip(*parts)], dtype=object)
        else:
            lab = pd.Series(lab0).astype(str)
            for f in term.factors[1:]:
                lab = lab + ":" + pd.Series(key_levels[f][cell_key_codes[f][first]]).astype(str)
            labels = lab.to_numpy(dtype=object)
        out[term.name] = labels
    return out


def assemble_frame(spec: Spec, *, keys: tuple[str, ...], models: tuple[str, ...],
                   key_levels: dict[str, np.ndarray], cell_key_codes: dict[str, np.ndarray],
                   scores: np.ndarray | None, observed: np.ndarray | None,
                   replicates: np.ndarray | None, replicate: str | None, binary: bool,
                   n_rows: int, n_dropped: int, columns: ModelColumns | None = None) -> Frame:
    """Random-term codes, sufficient statistics and final checks of an encoded frame.

    Shared by :func:`build_frame` (rows) and :func:`mixrank.frame.cells.frame_from_cells`
    (an aggregated cell table), so that both give identical frames.  ``cell_key_codes``
    holds each cell's code of every key (cells in lexicographic key-code order).
    With ``columns`` (the compressed layout, docs/scale.md) the dense matrices
    are None and a :class:`~mixrank.frame.columns.CompressedFrame` is returned.
    """
    # the key values per cell are a pandas table that no fit reads: built when first read
    cells = Deferred(partial(_cells_table, keys, key_levels, cell_key_codes))
    n_cells = len(cell_key_codes[keys[0]])
    M = len(models)

    term_codes: dict[str, np.ndarray] = {}
    term_levels: dict[str, int] = {}
    for term in spec.random:
        f0 = term.factors[0]
        codes, n = cell_key_codes[f0], len(key_levels[f0])
        for f in term.factors[1:]:
            codes, n, _ = combine_codes(codes, n, cell_key_codes[f], len(key_levels[f]))
        if n < 2:
            value = [v.item() if isinstance(v, np.generic) else v
                     for v in (key_levels[f][cell_key_codes[f][0]] for f in term.factors)]
            raise DataError(f"random term (1|{term.name}) has a single level ({value}); a variance "
                            "needs at least two levels: drop the term or add data")
        term_codes[term.name], term_levels[term.name] = codes, n

    # the level labels are for reading results (random effects, leave-one-out): built when read
    term_labels = Deferred(partial(_term_labels, spec, key_levels, cell_key_codes, term_codes,
                                   term_levels))
    if columns is not None:
        check_frame_size(n_cells, M, dense=False,
                         n_entries=int(columns.n_observed.sum()))   # the M x M statistics
        stats = columns.stats(term_codes, term_levels)
    else:
        assert scores is not None and observed is not None and replicates is not None
        stats = compute_stats(scores, observed, term_codes, term_levels)
    shared = stats.n_common.copy()
    np.fill_diagonal(shared, 0)
    lonely = [models[j] for j in range(M) if shared[j].sum() == 0]
    if lonely and M > 1:
        raise DataError(f"model(s) {lonely} share no cell with any other model (cells keyed by "
                        f"{list(keys)}), so they cannot be compared; check the key values or "
                        "pair_by")
    kw: dict[str, Any] = dict(spec=spec, models=models, pair_by=keys, replicate=replicate,
                              cells=cells, term_codes=term_codes, term_levels=term_levels,
                              term_labels=term_labels, scores=scores, observed=observed,
                              replicates=replicates, binary=binary, n_rows=n_rows,
                              n_dropped=n_dropped, stats=stats)
    return Frame(**kw) if columns is None else CompressedFrame(columns=columns, **kw)


def build_frame(data: Any, formula: str | Spec, *, pair_by: Sequence[str] | None = None,
                replicate: str | None = None, na: str = "error") -> Frame:
    """Validate and encode long-format data for ``formula``.

    Parameters
    ----------
    data : DataFrame, polars.DataFrame, pyarrow.Table or path
        One row per observation (``.csv``, ``.csv.gz``, ``.parquet``, ``.jsonl``).
    formula : str or Spec
        e.g. ``"correct ~ model + (1|subject)"``.
    pair_by : sequence of str, optional
        Pairing keys defining a cell; default: see module docstring.
    replicate : str, optional
        Column distinguishing replicates (e.g. ``"sample"``) of one
        (model, cell); their scores are averaged and counts kept.
    na : {"error", "drop"}
        Missing scores raise (default) or are dropped and reported.

    Returns
    -------
    Frame

    Raises
    ------
    DataError
        Missing column (with the closest match), non-numeric, infinite or
        missing scores, mixed types or missing values in a key column,
        duplicated (model, cell) rows without a replicate column, a random
        grouping with a single level, a model sharing no cell with any other
        model, random-term columns outside the keys.  A frame with a single
        model is legal (e.g. to describe re-runs); fitting it is not.
    """
    spec = as_spec(formula)
    df = to_pandas(data)
    columns = [str(c) for c in df.columns.tolist()]
    keys = resolve_keys(spec, columns, pair_by=pair_by, replicate=replicate, na=na)

    y = _score_values(df[spec.response], spec.response)
    n_dropped = 0
    keep = None
    nan = np.isnan(y) if not np.isfinite(y).all() else None     # one pass when all are finite
    if nan is not None and nan.any():
        if na == "error":
            row = int(np.flatnonzero(nan)[0])
            raise DataError(
                f"score column {spec.response!r} has {int(nan.sum())} missing value(s) (first at "
                f"{row_origin(df, row)}); fix them, or pass na='drop' to drop those rows (they are reported)")
        keep = ~nan
        n_dropped = int(nan.sum())
        warnings.warn(f"dropped {n_dropped} row(s) with a missing {spec.response!r} score",
                      MissingDataWarning, stacklevel=2)
        y = y[keep]
    if nan is not None and np.isinf(y).any():
        row = int(np.flatnonzero(np.isinf(y))[0])
        if keep is not None:
            row = int(np.flatnonzero(keep)[row])
        raise DataError(f"score column {spec.response!r} has an infinite value "
                        f"({row_origin(df, row)}); scores must be finite")
    if len(y) == 0:
        raise DataError("no rows left after dropping missing scores")
    check_magnitude(y, spec.response)

    def col(name: str) -> pd.Series:
        s = df[name]
        return s[keep] if keep is not None else s

    model_codes, models, key_codes, key_levels, cell, ncell = encode_keys(spec, keys, col)
    M = len(models)
    check_frame_size(ncell, M, dense=True, n_entries=len(cell))   # before any cells x models array

    flat = cell.astype(np.int64) * M
    flat += model_codes
    del cell
    rows = np.bincount(flat, minlength=ncell * M)          # rows per (cell, model)
    if replicate is None:
        err = duplicate_cells_error(rows[flat], flat, spec, keys, models, model_codes,
                                    key_codes, key_levels) if rows.max() > 1 else None
        if err is not None:
            raise err
    else:
        rep_codes, rep_levels = encode_column(col(replicate), replicate)
        comb, _, _ = combine_codes(flat, ncell * M, rep_codes, len(rep_levels))
        if len(np.unique(comb)) < len(comb):
            first = int(np.flatnonzero(np.bincount(comb)[comb] > 1)[0])
            where = {k: key_levels[k][key_codes[k][first]] for k in keys}
            raise DataError(
                f"replicate {replicate!r}={rep_levels[rep_codes[first]]!r} appears more than once "
                f"for model {models[model_codes[first]]!r} at {where}; replicate values must be "
                "unique within a (model, cell)")
    scores, observed, counts, cell_key_codes = cell_scores(flat, None, y, ncell, M, key_codes,
                                                           checked=True, rows=rows)
    binary = score_kind(y, spec.response)
    return assemble_frame(spec, keys=keys, models=models, key_levels=key_levels,
                          cell_key_codes=cell_key_codes, scores=scores, observed=observed,
                          replicates=counts, replicate=replicate,
                          binary=binary, n_rows=len(y), n_dropped=n_dropped)
