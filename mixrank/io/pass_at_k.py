"""Stage io: k-of-n samples -> the unbiased per-item pass@k as a long frame.

Inputs: long data with either counts (a column of correct samples ``c`` and
one of samples drawn ``n`` per model and item) or 0/1 rows, one per sample
(a ``replicate`` column naming the sample).  Outputs: one row per (model,
item) with ``n_correct``, ``n_samples`` and the pass@k column, which every
analysis reads as a continuous score (``fit("pass_at_5 ~ model +
(1|subject)", out)``).  Statistical notes: docs/pass_at_k.md.

Contents: :func:`pass_at_k`, :func:`pass_at_k_values`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import gammaln

from ..errors import DataError

__all__ = ["pass_at_k", "pass_at_k_values"]

#: Longest product of terms summed per distinct n (beyond it: the log-gamma form).
_MAX_TERMS = 1_000_000


def _check_k(k: Any) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer, float, np.floating)):
        raise DataError(f"k={k!r}: expected a positive integer number of draws, e.g. k=5")
    if isinstance(k, (float, np.floating)) and not float(k).is_integer():
        raise DataError(f"k={k!r} is not an integer; pass@k counts whole draws (e.g. k=5)")
    if int(k) < 1:
        raise DataError(f"k={k!r}: expected k >= 1 (pass@1 is the mean accuracy)")
    return int(k)


def pass_at_k_values(correct: Any, trials: Any, k: int) -> np.ndarray:
    """The unbiased pass@k of each (c, n): ``1 - C(n - c, k) / C(n, k)``.

    Computed as ``-expm1(sum_{i = n - c + 1}^{n} log1p(-k / i))`` (the
    product form of Chen et al. 2021, summed in logs; 1 when ``n - c < k``);
    when ``c`` exceeds a million, by the same product written over the ``k``
    draws, ``-expm1(sum_{j = 0}^{k - 1} log1p(-c / (n - j)))``: every term
    has the same sign, so nothing cancels at any ``n`` up to 2^53 (the
    log-gamma difference it replaces lost every digit near n = 1e15).  Only
    when both ``c`` and ``k`` exceed a million are log-gamma functions used.
    Inputs are assumed valid (:func:`pass_at_k` checks them): integers with
    ``0 <= c <= n`` and ``n >= k``.

    Returns
    -------
    numpy.ndarray
        One float in [0, 1] per input.

    Notes
    -----
    Validated against the exact rational ``1 - comb(n - c, k) / comb(n, k)``
    (``tests/io/test_pass_at_k.py``).
    """
    c = np.asarray(correct, dtype=np.int64)
    n = np.asarray(trials, dtype=np.int64)
    out = np.ones(c.shape, dtype=float)
    for nn in np.unique(n):
        sel = n == nn
        cc = c[sel]
        val = np.ones(cc.shape)
        ok = cc <= nn - k
        top = int(cc[ok].max()) if ok.any() else 0
        if top <= _MAX_TERMS:
            # terms for i = n, n-1, ..., n-top+1: cumulative sums give S(c) for c <= top
            i = np.arange(nn, nn - top, -1, dtype=float)
            cs = np.concatenate([[0.0], np.cumsum(np.log1p(-k / i))])
            val[ok] = 0.0 - np.expm1(cs[cc[ok]])
        elif k <= _MAX_TERMS:  # very many correct samples: the product over the k draws
            m = cc[ok].astype(float)
            acc = np.zeros(m.shape)
            step = max(1, _MAX_TERMS // max(1, len(m)))
            for j0 in range(0, k, step):
                j = np.arange(j0, min(k, j0 + step), dtype=float)
                acc += np.log1p(-m[:, None] / (float(nn) - j[None, :])).sum(axis=1)
            val[ok] = 0.0 - np.expm1(acc)
        else:                  # c and k both above a million: the log-gamma form
            m = cc[ok].astype(float)
            s = (gammaln(nn - m + 1) - gammaln(nn - m - k + 1)
                 - gammaln(nn + 1.0) + gammaln(nn - k + 1.0))
            val[ok] = 0.0 - np.expm1(s)
        out[sel] = val
    return out


def _int_column(df: pd.DataFrame, col: str, what: str) -> np.ndarray:
    if col not in df.columns:
        raise DataError(f"column {col!r} ({what}) is not in the data; columns: {list(df.columns)}")
    s = df[col]
    if s.isna().any():
        row = df.index[s.isna().to_numpy()][0]
        raise DataError(f"column {col!r} ({what}) is missing at row {row!r}; pass@k needs a "
                        "count in every row (drop or fill the row first)")
    try:
        v = pd.to_numeric(s).to_numpy(dtype=float)
    except (ValueError, TypeError):
        bad = s[pd.to_numeric(s, errors="coerce").isna()].iloc[0]
        raise DataError(f"column {col!r} ({what}) holds {bad!r}, not a number") from None
    huge = ~np.isfinite(v) | (np.abs(v) > 2.0 ** 53)
    if huge.any():
        j = int(np.argmax(huge))
        raise DataError(f"column {col!r} ({what}) holds {float(v[j]):g} at row {df.index[j]!r}; "
                        "expected a finite count of at most 2^53 (= 9.0e15, the largest whole "
                        "number a float counts exactly): fix the count")
    bad = (v < 0) | (v != np.floor(v))
    if bad.any():
        j = int(np.argmax(bad))
        raise DataError(f"column {col!r} ({what}) holds {float(v[j]):g} at row {df.index[j]!r}; "
                        "expected a non-negative integer count")
    return v.astype(np.int64)


def pass_at_k(data: pd.DataFrame, k: int, *, correct: str = "correct",
              trials: str | None = None, replicate: str | None = None,
              keys: Sequence[str] | None = None, name: str | None = None) -> pd.DataFrame:
    """The unbiased per-item pass@k (Chen et al. 2021) as a long frame.

    For an item on which a model drew ``n`` samples and ``c`` were correct,
    ``pass@k = 1 - C(n - c, k) / C(n, k)``: the probability that at least one
    of ``k`` samples drawn without replacement from the ``n`` is correct,
    an unbiased estimate of the item's pass@k (docs/pass_at_k.md §1).

    Parameters
    ----------
    data : pandas.DataFrame
        Long data.  Counts: one row per (model, item) with ``correct`` =
        correct samples and ``trials`` = samples drawn.  0/1 rows: one row
        per sample, ``correct`` in {0, 1}, ``replicate`` naming the sample.
    k : int
        Draws; ``1 <= k <= n`` for every row.
    correct : str, default "correct"
        Column of correct samples (counts) or of 0/1 scores.
    trials : str, optional
        Column of samples drawn per row (count input).
    replicate : str, optional
        Column naming the sample (0/1 input); rows sharing ``keys`` are
        counted together.  Exactly one of ``trials`` and ``replicate``.
    keys : sequence of str, optional
        Columns identifying a (model, item) row of the output; default every
        column other than ``correct``, ``trials`` and ``replicate``.  Pass it
        when the data has per-sample columns (a temperature, the answer
        text).
    name : str, optional
        Name of the pass@k column; default ``f"pass_at_{k}"``.

    Returns
    -------
    pandas.DataFrame
        One row per distinct ``keys``: the key columns, ``n_correct`` (c),
        ``n_samples`` (n) and the pass@k column (float in [0, 1]); rows in
        the order of first appearance.  ``attrs["mixrank"]`` holds ``k``,
        the column name and the estimator.

    Raises
    ------
    DataError
        No rows; ``k`` not a positive integer; ``k`` larger than a row's ``n``; ``c >
        n``; a count that is missing, negative, fractional, infinite or above
        2^53; a (keys, replicate) row repeated; 0/1 scores
        outside {0, 1}; both or neither of ``trials`` and ``replicate``;
        keys that leave every group with one sample although the replicate
        column has several values (a per-sample column among the keys).

    Notes
    -----
    Computed in logs as ``-expm1(sum_{i=n-c+1}^{n} log1p(-k/i))``.
    Validated against the exact rational ``1 - comb(n-c, k)/comb(n, k)``
    on hand-built counts and on the bundled ChemBench re-runs.

    References
    ----------
    Chen, M. et al. (2021). Evaluating large language models trained on
    code. arXiv:2107.03374, eq. (1) and its numerically stable form.

    Examples
    --------
    >>> import pandas as pd, mixrank
    >>> d = pd.DataFrame({"model": ["a", "a"], "question": [1, 2], "k": [3, 0], "n": [10, 10]})
    >>> mixrank.pass_at_k(d, 5, correct="k", trials="n")["pass_at_5"].round(4).tolist()
    [0.9167, 0.0]
    """
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"pass_at_k needs a pandas DataFrame; got {type(data).__name__}")
    k = _check_k(k)
    if len(data) == 0:
        raise DataError("pass_at_k got a table without rows; pass the k-of-n data")
    if (trials is None) == (replicate is None):
        raise DataError("pass_at_k needs exactly one of trials= (a column of samples drawn, "
                        "with correct= the correct ones) and replicate= (a column naming the "
                        "sample of 0/1 rows)")
    col = name or f"pass_at_{k}"
    used = [correct] + [c for c in (trials, replicate) if c is not None]
    for name_ in used:
        if name_ not in data.columns:
            raise DataError(f"column {name_!r} is not in the data; columns: {list(data.columns)}")
    if keys is None:
        keys = [x for x in data.columns if x not in used]
    keys = list(keys)
    missing = [x for x in keys if x not in data.columns]
    if missing or not keys:
        raise DataError(f"keys={keys!r}: expected columns of the data identifying a (model, item) "
                        f"row; columns: {list(data.columns)}")
    if col in keys:
        raise DataError(f"the output column {col!r} is already a column of the data; pass name=")
    if replicate is None:
        c = _int_column(data, correct, "correct samples")
        n = _int_column(data, str(trials), "samples drawn")
        out = data[keys].reset_index(drop=True)
        if out.duplicated().any():
            j = int(np.argmax(out.duplicated().to_numpy()))
            raise DataError(f"row {data.index[j]!r} repeats the keys {keys} of an earlier row; "
                            "count input has one row per (model, item): sum the counts first or "
                            "pass keys= naming every identifying column")
        idx = data.index
    else:
        y = _int_column(data, correct, "0/1 score")
        if (y > 1).any():
            j = int(np.argmax(y > 1))
            raise DataError(f"column {correct!r} holds {y[j]} at row {data.index[j]!r}; 0/1 rows "
                            "(replicate=) need scores in {0, 1}; for counts pass trials=")
        dup = data.duplicated(subset=[*keys, replicate]).to_numpy()
        if dup.any():
            j = int(np.argmax(dup))
            raise DataError(f"row {data.index[j]!r} repeats the keys {keys} and sample "
                            f"{data[replicate].tolist()[j]!r} of an earlier row ({replicate!r}); each "
                            "sample of a (model, item) is one row: drop the duplicated rows (as "
                            "fit(replicate=) requires)")
        g = data.groupby(keys, sort=False, dropna=False)
        gid = g.ngroup().to_numpy()
        out = g.size().reset_index()[keys]
        c = np.bincount(gid, weights=y).astype(np.int64)
        n = np.bincount(gid).astype(np.int64)
        if n.max() == 1 and data[replicate].nunique() > 1:
            raise DataError(f"every group of keys {keys} holds one sample although {replicate!r} "
                            "has several values: a column among the keys varies between samples; "
                            "pass keys= with the model and item columns only")
        idx = out.index
    over = c > n
    if over.any():
        j = int(np.argmax(over))
        raise DataError(f"row {idx[j]!r}: {c[j]} correct of {n[j]} samples (c > n); check the "
                        f"columns {correct!r} and {trials!r}")
    short = n < k
    if short.any():
        j = int(np.argmax(short))
        raise DataError(f"k={k} exceeds the {n[j]} sample(s) drawn at row {idx[j]!r} "
                        f"({dict(out.iloc[j])}); pass@k needs n >= k in every row: lower k "
                        f"(at most {int(n.min())} here) or drop the rows with fewer samples")
    out = out.copy()
    out["n_correct"] = c
    out["n_samples"] = n
    out[col] = pass_at_k_values(c, n, k)
    out.attrs["mixrank"] = dict(table="pass_at_k", k=k, column=col,
                                estimator="1 - C(n - c, k) / C(n, k) (Chen et al. 2021)")
    return out
