"""The data an R reference script fitted for one of its cases (test support, no stage).

Every reference JSON (``lme4_engine.json``, ``model_scores.json``,
``interactions.json``, ``glmer.json``) lists cases that are either a
simulated file written next to it (``source: "simulated"``, ``file``) or a
bundled dataset (``dataset``, optionally ``"name/file"``) narrowed exactly as
the R script narrowed it: ``filter`` (column -> value or list of values),
``models_used`` (the models kept) and ``drop_missing`` (columns whose missing
rows R dropped).  :func:`case_frame` rebuilds that data frame.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

REF = Path(__file__).resolve().parent


def case_frame(case: dict[str, Any], shared_data: Callable[[str], pd.DataFrame],
               folder: str) -> pd.DataFrame:
    """The long frame of ``case``; simulated files are read from ``tests/reference/<folder>/``."""
    if case["source"] == "simulated":
        return pd.read_csv(REF / folder / case["file"])
    df = shared_data(case["dataset"].split("/")[0])
    for col, value in (case.get("filter") or {}).items():
        df = df[df[col].isin(value if isinstance(value, list) else [value])]
    if case.get("models_used"):
        df = df[df["model"].isin(case["models_used"])]
    if case.get("drop_missing"):
        df = df.dropna(subset=case["drop_missing"])
    return df
