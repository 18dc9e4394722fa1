"""Stage inference: input handling shared by the classic paired tests.

Inputs: either two aligned score arrays ``x, y`` (model A and model B on the
same cells, position by position) or a long DataFrame with a model column, a
score column and pairing-key columns; the long form is paired by
:func:`mixrank.frame.build_frame` (one pairing rule for the whole package).  Output: :class:`PairedData`, the two
aligned float vectors (plus optional cluster codes) and the labels of the two
models.  Contents: :func:`paired_arrays` (the one entry point every test in
:mod:`mixrank.inference.paired` and :mod:`mixrank.inference.paired_resampling`
uses), :func:`check_alternative` (the accepted ``alternative=`` spellings)
and its validators.

Orientation: everywhere in these modules the difference is ``d = A - B``
(``x - y``, or model ``a`` minus model ``b``).
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mixrank.errors import DataError, MissingDataWarning
from mixrank.frame.build import CONVENTIONAL_KEYS

__all__ = ["PairedData", "DEFAULT_PAIR_KEYS", "ALTERNATIVES", "paired_arrays", "check_alternative"]

#: Pairing keys used by default in the long form (those present in the data):
#: the frame builder's conventional keys.
DEFAULT_PAIR_KEYS: tuple[str, ...] = CONVENTIONAL_KEYS

_MAX_LISTED = 10

#: Accepted spellings of ``alternative=`` (R's ``two.sided`` included) and what they mean.
ALTERNATIVES = {"two-sided": "two-sided", "two.sided": "two-sided", "two_sided": "two-sided",
                "greater": "greater", "less": "less"}


def check_alternative(alternative: str) -> str:
    """The canonical name of ``alternative`` ("two-sided", "greater", "less"), else DataError."""
    try:
        return ALTERNATIVES[alternative]
    except (KeyError, TypeError):
        raise DataError(f"alternative={alternative!r} is not supported; expected 'two-sided', "
                        "'greater' (A scores higher) or 'less' (A scores lower)") from None


@dataclass(frozen=True)
class PairedData:
    """Aligned scores of two models.

    Attributes
    ----------
    x, y : numpy.ndarray
        Float scores of model A and model B on the same cells (same order).
    model_a, model_b : str
        Labels of the two models (``"x"``/``"y"`` for bare arrays unless
        ``a``/``b`` name them).
    cluster : numpy.ndarray or None
        Integer cluster codes ``0..G-1`` per cell, or None.
    cluster_labels : numpy.ndarray or None
        The cluster level of each code.
    keys : tuple of str
        The pairing keys used (empty for bare arrays).
    n_unpaired_a, n_unpaired_b : int
        Cells scored for only one of the two models (dropped).
    """

    x: np.ndarray
    y: np.ndarray
    model_a: str
    model_b: str
    cluster: np.ndarray | None = None
    cluster_labels: np.ndarray | None = None
    keys: tuple[str, ...] = ()
    n_unpaired_a: int = 0
    n_unpaired_b: int = 0

    @property
    def d(self) -> np.ndarray:
        """Per-cell differences ``x - y`` (A minus B)."""
        return self.x - self.y

    @property
    def n(self) -> int:
        """Number of paired cells."""
        return int(self.x.shape[0])

    @property
    def n_clusters(self) -> int | None:
        """Number of clusters, or None without clustering."""
        return None if self.cluster_labels is None else int(len(self.cluster_labels))

    def meta(self) -> dict:
        """Metadata for ``df.attrs['mixrank']``."""
        return {
            "orientation": "difference = model_a - model_b",
            "pair_by": list(self.keys),
            "n_unpaired_a": self.n_unpaired_a,
            "n_unpaired_b": self.n_unpaired_b,
        }


def _numeric_vector(values: Any, name: str) -> np.ndarray:
    """Return a 1-D float64 copy of ``values`` or raise :class:`DataError`."""
    if isinstance(values, pd.DataFrame):
        raise DataError(f"{name} is a DataFrame; expected a one-dimensional array of scores. "
                        "Pass a long DataFrame as the first argument with a= and b=, "
                        "or pass two arrays x and y")
    if isinstance(values, pd.Series):
        s = values.reset_index(drop=True)
    else:
        arr = np.asarray(values)
        if arr.ndim != 1:
            raise DataError(f"{name} has shape {arr.shape}; expected a one-dimensional array "
                            "of scores (one per cell). Flatten it or pass a long DataFrame")
        s = pd.Series(arr)
    if pd.api.types.is_bool_dtype(s.dtype):
        s = s.astype("float64")
    if not pd.api.types.is_numeric_dtype(s.dtype):
        converted = pd.to_numeric(s, errors="coerce")
        bad = converted.isna() & s.notna()
        if bad.any():
            pos = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(f"{name} has a non-numeric value {s.iloc[pos]!r} at position {pos}; "
                            "expected numeric scores (0/1 or a bounded score). "
                            "Convert the column to numbers first")
        s = converted
    out = s.to_numpy(dtype="float64", na_value=np.nan)
    finite = np.isfinite(out)
    if not finite.all():
        pos = int(np.flatnonzero(~finite)[0])
        what = ("a missing value (NaN)" if np.isnan(out[pos])
                else f"a non-finite value {float(out[pos])!r}")
        raise DataError(f"{name} has {what} at position {pos}; expected finite scores on every "
                        "cell. Drop or impute the missing cells before the paired test")
    return out


def _codes(labels: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Factorise cluster labels (no missing values allowed)."""
    s = labels if isinstance(labels, pd.Series) else pd.Series(np.asarray(labels, dtype=object))
    if s.isna().any():
        pos = int(np.flatnonzero(s.isna().to_numpy())[0])
        raise DataError(f"cluster {name} has a missing value at position {pos}; expected a "
                        "cluster label for every cell. Fill or drop those cells")
    codes, uniques = pd.factorize(s, sort=False)
    return codes.astype(np.intp), np.asarray(uniques)


def _label(value: Any, default: str) -> str:
    return default if value is None else str(value)


def paired_arrays(x: Any, y: Any = None, *, a: Hashable | None = None,
                   b: Hashable | None = None, model: str = "model", score: str = "correct",
                   pair_by: str | Sequence[str] | None = None,
                   cluster: Any = None) -> PairedData:
    """Align the scores of two models (the shared front door of the paired tests).

    Either two aligned arrays ``x, y`` (``a``/``b`` then only label them), or a
    long DataFrame ``x`` with rows for models ``a`` and ``b`` aligned on the
    pairing keys ``pair_by`` (default: those of ``subject``, ``question``,
    ``prompt`` present).  ``cluster`` is an array (array form) or a column name
    (long form).

    Raises
    ------
    DataError
        Unequal lengths, NaN or non-finite scores, non-numeric scores, a model
        or column that is missing, no common cells, duplicated keys (the first
        duplicated key is named), inconsistent cluster labels.
    """
    if hasattr(x, "to_pandas") and not isinstance(x, pd.DataFrame | pd.Series | np.ndarray):
        x = x.to_pandas()  # polars
    if isinstance(x, pd.DataFrame):
        if y is not None:
            raise DataError("got a DataFrame and a second argument y; expected either two "
                            "aligned arrays x, y or one long DataFrame with a= and b= naming "
                            "the two models. Drop y")
        return _from_long(x, a=a, b=b, model=model, score=score, pair_by=pair_by,
                          cluster=cluster)
    if y is None:
        raise DataError("got one array x but no y; expected two aligned arrays x, y (scores of "
                        "model A and model B on the same cells) or a long DataFrame with a= "
                        "and b=")
    xa = _numeric_vector(x, "x")
    ya = _numeric_vector(y, "y")
    if xa.shape[0] != ya.shape[0]:
        raise DataError(f"x has {xa.shape[0]} scores and y has {ya.shape[0]}; expected equal "
                        "lengths (one score per cell for each model, in the same cell order). "
                        "Align the two arrays first, or pass a long DataFrame")
    if xa.shape[0] == 0:
        raise DataError("x and y are empty; expected at least one paired cell")
    codes = labels = None
    if cluster is not None:
        if isinstance(cluster, str):
            raise DataError(f"cluster={cluster!r} is a column name but x and y are arrays; "
                            "pass an array of cluster labels (one per cell) or a long DataFrame")
        carr = cluster if isinstance(cluster, pd.Series) else np.asarray(cluster, dtype=object)
        if len(carr) != xa.shape[0]:
            raise DataError(f"cluster has {len(carr)} labels but there are {xa.shape[0]} cells; "
                            "expected one cluster label per cell")
        codes, labels = _codes(carr, "labels")
    return PairedData(xa, ya, _label(a, "x"), _label(b, "y"), codes, labels)


def _from_long(data: pd.DataFrame, *, a: Any, b: Any, model: str, score: str,
               pair_by: str | Sequence[str] | None, cluster: Any) -> PairedData:
    """Pair the rows of models ``a`` and ``b`` with the frame builder's pairing rule."""
    from ..formula.spec import Spec
    from ..frame import build_frame

    if a is None or b is None:
        raise DataError(f"got a long DataFrame but a={a!r}, b={b!r}; expected a= and b= naming "
                        f"the two levels of column {model!r} to compare")
    for col, role in ((model, "model"), (score, "score")):
        if col not in data.columns:
            raise DataError(f"the data have no {role} column {col!r} (columns: "
                            f"{list(data.columns)}); pass {role}= naming it")
    if pair_by is None:
        keys = [k for k in DEFAULT_PAIR_KEYS if k in data.columns]
    else:
        keys = [pair_by] if isinstance(pair_by, str) else list(pair_by)
    if not keys:
        raise DataError(f"no pairing keys: none of {list(DEFAULT_PAIR_KEYS)} is a column "
                        f"(columns: {list(data.columns)}); pass pair_by= naming the columns "
                        "that identify a cell")
    missing = [k for k in keys if k not in data.columns]
    if missing:
        raise DataError(f"pairing key column(s) {missing} not in the data (columns: "
                        f"{list(data.columns)}); fix pair_by=")
    if a == b:
        raise DataError(f"a and b are the same model {a!r}; expected two different models")
    if cluster is not None:
        if not isinstance(cluster, str):
            raise DataError("with a long DataFrame, cluster must be a column name (e.g. "
                            f"'subject'); got a {type(cluster).__name__}")
        if cluster not in data.columns:
            raise DataError(f"cluster column {cluster!r} not in the data (columns: "
                            f"{list(data.columns)}); fix cluster=")
    levels = data[model]
    present = pd.unique(levels.dropna())
    for role, name in (("a", a), ("b", b)):
        mask = (levels == name).to_numpy(dtype=bool, na_value=False)
        if not mask.any():
            shown = [str(v) for v in present[:_MAX_LISTED]]
            more = "" if len(present) <= _MAX_LISTED else f" ... ({len(present)} in all)"
            raise DataError(f"model {name!r} (argument {role}=) has no rows in column "
                            f"{model!r}; available models: {shown}{more}")
        # the paired tests take finite scores only (no na= option): say so per model
        _numeric_vector(data.loc[mask, score], f"column {score!r} (model {name!r})")
    rows = data[levels.isin([a, b]).to_numpy(dtype=bool, na_value=False)]
    # a cluster outside the keys is checked to be one label per cell by keying on it too
    frame_keys = keys + ([cluster] if cluster is not None and cluster not in keys else [])
    spec = Spec(formula=f"{score} ~ {model}", response=score, comparison=model)
    fr = build_frame(rows, spec, pair_by=frame_keys)
    ja, jb = fr.model_index(str(a)), fr.model_index(str(b))
    both = fr.common_mask(ja, jb)
    if frame_keys != keys:
        n_cells = len(fr.cells[keys].drop_duplicates())
        if n_cells != fr.n_cells:
            dup = fr.cells[fr.cells.duplicated(keys, keep=False)].iloc[0]
            raise DataError(f"cluster column {cluster!r} takes several values on cell "
                            f"({_key_text(dup, keys)}); expected one cluster per cell")
    codes = labels = None
    if cluster is not None:
        codes, labels = _codes(fr.cells.loc[both, cluster].reset_index(drop=True),
                               repr(cluster))
    n_a, n_b = int(fr.observed[:, ja].sum()), int(fr.observed[:, jb].sum())
    n = int(both.sum())
    if n == 0:
        raise DataError(f"models {a!r} and {b!r} share no cell on keys {keys}; expected at "
                        "least one cell scored for both. Check the key columns (and pair_by=)")
    if n_a > n or n_b > n:
        warnings.warn(f"{n_a - n} cell(s) of {a!r} and {n_b - n} of {b!r} have no partner on "
                      f"keys {keys} and are left out; the test uses the {n} cells scored for "
                      "both (counts in attrs['mixrank']['n_unpaired_a'/'n_unpaired_b'])",
                      MissingDataWarning, stacklevel=4)
    return PairedData(
        fr.scores[both, ja].astype("float64"), fr.scores[both, jb].astype("float64"),
        str(a), str(b), codes, labels, tuple(keys),
        n_unpaired_a=n_a - n, n_unpaired_b=n_b - n,
    )


def _key_text(row: pd.Series, keys: list[str]) -> str:
    return ", ".join(f"{k}={row[k]!r}" for k in keys)
