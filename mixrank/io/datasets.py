"""Stage io: locating and loading datasets.

Inputs: a dataset name.  Outputs: canonical long DataFrames.
Contents: :func:`load_example` (the simulated example benchmark),
:func:`load_dataset` and :func:`list_datasets` (four real public evaluation
results bundled in ``mixrank/datasets/<name>/``, each with its licence and a
provenance note), :func:`shared_data_dir` (the ``$MIXRANK_DATA_DIR``
override) and :func:`load_shared` (the same as :func:`load_dataset`, kept
for old scripts).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import DataError

__all__ = ["load_example", "load_dataset", "list_datasets", "dataset_path", "shared_data_dir",
           "load_shared", "DATASETS", "SHARED_FILES", "BUNDLED_DIR"]

#: Folder of the bundled datasets (inside the installed package).
BUNDLED_DIR = Path(__file__).resolve().parent.parent / "datasets"


@dataclass(frozen=True)
class _Dataset:
    file: str         # path relative to the datasets folder (and to $MIXRANK_DATA_DIR)
    licence: str
    source: str       # public repository @ commit
    description: str


DATASETS: dict[str, _Dataset] = {
    "chembench": _Dataset(
        "chembench/long.csv.gz", "MIT", "lamalab-org/chembench-paper @ 8fe2291",
        "25 systems x 2,788 chemistry questions in 9 topics, 0/1, fully paired"),
    "chembench_humans": _Dataset(
        "chembench/humans.csv.gz", "MIT", "lamalab-org/chembench-paper @ 8fe2291",
        "20 chemists x ~120 questions each (unbalanced, partly overlapping), tool/notool"),
    "jailbreakbench": _Dataset(
        "jailbreakbench/long.csv.gz", "MIT", "JailbreakBench/artifacts @ 909e68c",
        "4 models x 100 behaviours in 10 categories x 6 attacks (18 of 24 cells)"),
    "llm_stability": _Dataset(
        "llm_stability/long.csv.gz", "Apache-2.0", "breckbaldwin/llm-stability @ c089c02",
        "gpt-4o, 5 identical re-runs (sample 0-4) x 1,407 BBH/MMLU items in 7 tasks"),
    "multiprompt": _Dataset(
        "multiprompt/per_template.csv.gz", "CDLA-Permissive-2.0",
        "SLAB-NLP/Multi-Prompt-LLM-Evaluation @ 04f57ef",
        "accuracy per model x task x paraphrased template (n_correct of n_samples)"),
}
#: name -> file (relative), as before the datasets were bundled.
SHARED_FILES = {name: d.file for name, d in DATASETS.items()}

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
    """The folder named by ``$MIXRANK_DATA_DIR``, or None when unset or missing."""
    env = os.environ.get("MIXRANK_DATA_DIR")
    if env and Path(env).is_dir():
        return Path(env)
    return None


def _check(name: str) -> _Dataset:
    if not isinstance(name, str) or name not in DATASETS:
        raise DataError(f"unknown dataset {name!r}; expected one of {sorted(DATASETS)} "
                        "(mixrank.list_datasets() describes them)")
    return DATASETS[name]


def dataset_path(name: str) -> Path:
    """File a dataset is read from: ``$MIXRANK_DATA_DIR/<file>`` if present, else the bundled one."""
    d = _check(name)
    root = shared_data_dir()
    if root is not None and (root / d.file).is_file():
        return root / d.file
    path = BUNDLED_DIR / d.file
    if not path.is_file():  # pragma: no cover - packaging error
        raise DataError(f"the bundled dataset file {path} is missing; reinstall mixrank (or set "
                        f"MIXRANK_DATA_DIR to a folder holding {d.file})")
    return path


def load_dataset(name: str) -> pd.DataFrame:
    """Load one of the real evaluation datasets shipped with mixrank.

    Parameters
    ----------
    name : str
        ``chembench``, ``chembench_humans``, ``jailbreakbench``,
        ``llm_stability`` or ``multiprompt`` (see :func:`list_datasets`).

    Returns
    -------
    pandas.DataFrame
        Long format, one row per observation: ``model, subject, question,
        prompt, correct`` (plus ``sample`` for repeated runs; ``multiprompt``
        has cell totals ``n_correct``/``n_samples`` and no ``question``).
        The licence and provenance of each dataset are in
        ``mixrank/datasets/<folder>/LICENSE`` and ``PROVENANCE.md``.

    Raises
    ------
    DataError
        Unknown name (lists the names).

    Notes
    -----
    ``$MIXRANK_DATA_DIR`` overrides: when it names a folder holding the
    dataset's file (same relative path), that file is read instead.

    Examples
    --------
    >>> import mixrank
    >>> mixrank.load_dataset("jailbreakbench").shape
    (1800, 9)
    """
    return pd.read_csv(dataset_path(name))


def list_datasets() -> pd.DataFrame:
    """The bundled datasets.

    Returns
    -------
    pandas.DataFrame
        One row per dataset: ``name``, ``file`` (relative to
        ``mixrank/datasets``), ``licence``, ``source`` (public repository @
        commit) and ``description``.

    Examples
    --------
    >>> import mixrank
    >>> list(mixrank.list_datasets()["name"])
    ['chembench', 'chembench_humans', 'jailbreakbench', 'llm_stability', 'multiprompt']
    """
    return pd.DataFrame([{"name": n, "file": d.file, "licence": d.licence, "source": d.source,
                          "description": d.description} for n, d in DATASETS.items()])


def load_shared(name: str) -> pd.DataFrame:
    """Same as :func:`load_dataset` (the name from before the datasets were bundled)."""
    return load_dataset(name)
