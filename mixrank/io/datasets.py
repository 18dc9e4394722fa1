"""Stage io: locating and loading datasets.

Inputs: a dataset name.  Outputs: canonical long DataFrames.
Contents: :func:`load_example` (the simulated example benchmark shipped in the
package), :func:`shared_data_dir` and :func:`load_shared` (the real public
evaluation results in ``../shared/data`` or ``$MIXRANK_DATA_DIR``, which are
never copied into the repository).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..errors import DataError

__all__ = ["load_example", "shared_data_dir", "load_shared", "SHARED_FILES"]

SHARED_FILES = {
    "chembench": "chembench/long.csv.gz",
    "chembench_humans": "chembench/humans.csv.gz",
    "jailbreakbench": "jailbreakbench/long.csv.gz",
    "llm_stability": "llm_stability/long.csv.gz",
    "multiprompt": "multiprompt/per_template.csv.gz",
}

_EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "example.csv.gz"


def load_example() -> pd.DataFrame:
    """Return the bundled simulated example benchmark.

    Six models, 12 subjects x 20 questions x 4 prompts, binary scores,
    simulated by ``data/make_example.py`` with :func:`mixrank.simulate`
    (parameters in ``data/README.md``).

    Returns
    -------
    pandas.DataFrame
        Columns ``model, subject, question, prompt, correct``.

    Examples
    --------
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> df.shape
    (5760, 5)
    """
    if not _EXAMPLE.exists():  # pragma: no cover - packaging error
        raise DataError(f"the bundled example {_EXAMPLE} is missing; reinstall mixrank")
    return pd.read_csv(_EXAMPLE)


def shared_data_dir() -> Path | None:
    """Directory of the shared real datasets, or None when absent.

    ``$MIXRANK_DATA_DIR`` wins; otherwise ``../shared/data`` relative to the
    current directory and to the source checkout are tried.
    """
    env = os.environ.get("MIXRANK_DATA_DIR")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve().parents[2]
    candidates += [Path.cwd().parent / "shared" / "data", here.parent / "shared" / "data"]
    for c in candidates:
        if (c / "chembench").is_dir() or (c / "README.md").is_file():
            return c
    return None


def load_shared(name: str) -> pd.DataFrame:
    """Load one of the shared real datasets by name.

    Parameters
    ----------
    name : str
        One of ``chembench``, ``chembench_humans``, ``jailbreakbench``,
        ``llm_stability``, ``multiprompt``.

    Raises
    ------
    DataError
        Unknown name, or the shared data directory is not found.
    """
    if name not in SHARED_FILES:
        raise DataError(f"unknown shared dataset {name!r}; expected one of {sorted(SHARED_FILES)}")
    root = shared_data_dir()
    if root is None or not (root / SHARED_FILES[name]).exists():
        raise DataError(
            f"shared dataset {name!r} not found; set MIXRANK_DATA_DIR to the folder holding "
            f"{SHARED_FILES[name]} (the project's ../shared/data)"
        )
    return pd.read_csv(root / SHARED_FILES[name])
