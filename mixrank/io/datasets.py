"""Stage io: locating and loading datasets.

Inputs: a dataset name.  Outputs: canonical long DataFrames.
Contents: :func:`load_example` (the simulated example benchmark),
:func:`load_dataset` and :func:`list_datasets` (real public evaluation
results, judge-labelled data and an arena battle log bundled in ``mixrank/datasets/<name>/``, each with its licence and a
provenance note), :func:`shared_data_dir` (the ``$MIXRANK_DATA_DIR``
override) and :func:`load_shared` (the same as :func:`load_dataset`, kept
for old scripts).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import DataError, OptionError

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
        "25 systems x 2,788 chemistry questions in 9 topics, 0/1, fully paired (the published "
        "run, prompt 'default'; load_dataset('chembench', reruns=True) adds the temperature-1 "
        "re-runs of 7 open models, prompt 'temp1_rerun')"),
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
    "chatbot_arena": _Dataset(
        "chatbot_arena/battles.csv.gz", "MIT",
        "Networks-Learning/prediction-powered-ranking @ af64521",
        "26,919 human Chatbot Arena votes on 20 models, each battle also judged by gpt-4, "
        "claude-3 and gpt-3.5 (winner_gpt4, winner_claude3, winner_gpt35)"),
    "triviaqa_judges": _Dataset(
        "triviaqa_judges/long.csv.gz", "MIT", "UMass-Meta-LLM-Eval/llm_eval @ 7c0bf28",
        "9 models x 400 TriviaQA questions graded 0/1 by 11 automatic judges (judge) and by "
        "humans (gold)"),
    "hanna_stories": _Dataset(
        "hanna_stories/long.csv.gz", "MIT", "dig-team/hanna-benchmark-asg @ 282f275",
        "11 story generators x 96 prompts x 6 criteria, 1-5 ratings by 5 LLM judges x 4 prompts "
        "(judge) and the mean of 3 humans (gold)"),
}
#: Datasets whose file also holds re-runs, -> the ``prompt`` of the published run that
#: :func:`load_dataset` keeps unless ``reruns=True``.
_PUBLISHED_PROMPT = {"chembench": "default"}

#: name -> file (relative), as before the datasets were bundled.
SHARED_FILES = {name: d.file for name, d in DATASETS.items()}

_EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "example.csv.gz"


def load_example() -> pd.DataFrame:
    """Return the bundled simulated example benchmark.

    Six models, 12 subjects x 20 questions x 4 prompts, binary scores,
    simulated (not real) by the repository's ``data/make_example.py`` with
    :func:`mixrank.simulate`; its parameters are under Notes.

    Returns
    -------
    pandas.DataFrame
        Columns ``model, subject, question, prompt, correct``.

    Notes
    -----
    ``mixrank.simulate(models=["m01", ..., "m06"], subjects=12,
    questions=20, prompts=4, effects=[0.9, 0.75, 0.7, 0.4, 0.35, 0.0],
    sd_subject=0.8, sd_question=1.5, sd_prompt=0.3, sd_model_subject=0.35,
    sd_model_question=0.6, sd_model_prompt=0.15, sd_residual=0.0,
    family="binomial", rng=20260101)``: latent-logistic 0/1 scores, fully
    crossed and balanced, 5,760 rows.  The main effects of subject, question
    and prompt cancel in paired differences; the model interactions do not.

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


def load_dataset(name: str, *, reruns: bool = False) -> pd.DataFrame:
    """Load one of the real evaluation datasets shipped with mixrank.

    Parameters
    ----------
    name : str
        ``chembench``, ``chembench_humans``, ``jailbreakbench``,
        ``llm_stability``, ``multiprompt``, ``chatbot_arena`` (a battle log
        for :func:`mixrank.arena`), ``triviaqa_judges`` or ``hanna_stories``
        (judge verdicts with human ``gold`` labels, for ``fit(gold=)``); see
        :func:`list_datasets`.
    reruns : bool, default False
        ``chembench`` only.  False: the published run (``prompt ==
        "default"``, 25 systems x 2,788 questions, 69,700 rows, every model
        on every question once).  True: also the temperature-1 re-runs of 7
        open models (``prompt == "temp1_rerun"``, 19,516 more rows; those
        models then have two rows per question and the other 18 one).

    Returns
    -------
    pandas.DataFrame
        Long format, one row per observation: ``model, subject, question,
        prompt, correct`` (plus ``sample`` for repeated runs; ``multiprompt``
        has cell totals ``n_correct``/``n_samples`` and no ``question``;
        ``chatbot_arena`` is one row per battle: ``battle_id, question_id,
        model_a, model_b, judge, winner, winner_gpt4, winner_claude3,
        winner_gpt35``; ``triviaqa_judges`` and ``hanna_stories`` add
        ``judge_name``, ``judge`` and ``gold``).
        The licence and provenance of each dataset are in
        ``mixrank/datasets/<folder>/LICENSE`` and ``PROVENANCE.md``.

    Raises
    ------
    DataError
        Unknown name (lists the names).
    OptionError
        ``reruns=True`` for a dataset without re-runs.

    Notes
    -----
    ``$MIXRANK_DATA_DIR`` overrides: when it names a folder holding the
    dataset's file (same relative path), that file is read instead.

    Examples
    --------
    >>> import mixrank
    >>> mixrank.load_dataset("jailbreakbench").shape
    (1800, 9)
    >>> mixrank.load_dataset("chembench").shape
    (69700, 7)
    >>> mixrank.load_dataset("chembench", reruns=True)["prompt"].value_counts().to_dict()
    {'default': 69700, 'temp1_rerun': 19516}
    """
    if not isinstance(reruns, bool):
        raise OptionError(f"load_dataset: reruns must be True or False, not {reruns!r}")
    published = _PUBLISHED_PROMPT.get(name)
    if reruns and published is None:
        raise OptionError(f"load_dataset: {name!r} has no re-runs; reruns=True applies to "
                          f"{', '.join(sorted(_PUBLISHED_PROMPT))} only -- drop reruns=")
    data = pd.read_csv(dataset_path(name))
    if published is None or reruns:
        return data
    return data.loc[data["prompt"] == published].reset_index(drop=True)


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
    >>> names = list(mixrank.list_datasets()["name"])
    >>> names[:5]
    ['chembench', 'chembench_humans', 'jailbreakbench', 'llm_stability', 'multiprompt']
    >>> names[5:]
    ['chatbot_arena', 'triviaqa_judges', 'hanna_stories']
    """
    return pd.DataFrame([{"name": n, "file": d.file, "licence": d.licence, "source": d.source,
                          "description": d.description} for n, d in DATASETS.items()])


def load_shared(name: str, *, reruns: bool = False) -> pd.DataFrame:
    """Same as :func:`load_dataset` (the name from before the datasets were bundled)."""
    return load_dataset(name, reruns=reruns)
