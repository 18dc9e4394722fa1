"""Reference verdict tables for estimand="cells", generated at commit e3b47ea.

Making every verdict row use one estimand (the fit's) must leave the verdict
table of an ``estimand="cells"`` fit unchanged.  This script was run ONCE on commit
e3b47ea (before that change), with the normal-mixture anytime column (the
only one that existed), and wrote ``resolution_cells.json`` next to it;
``tests/design/test_resolution_estimand.py`` rebuilds the same designs and
compares every numeric and boolean column to 1e-12 (relative).

Designs (all deterministic):

* ``example``: the bundled example data, ``correct ~ model + (1|subject)``,
  all pairs, Holm;
* ``chembench_unbalanced``: ChemBench (``$MIXRANK_DATA_DIR``), ``default``
  prompt, the 8 systems listed in ``CHEM_MODELS``, questions subsampled per
  topic with the shares in ``CHEM_KEEP`` (first questions in sorted order),
  adjacent pairs, Holm and BH;
* ``simulated``: ``mixrank.simulate`` with unequal subject sizes (seed 15),
  all pairs, Bonferroni.

Run: ``PYTHONPATH=. MIXRANK_DATA_DIR=... python tests/reference/make_resolution_cells.py``.
"""

from __future__ import annotations

import json
import subprocess
import warnings
from pathlib import Path

import numpy as np

import mixrank

HERE = Path(__file__).parent
CHEM_MODELS = ["claude3", "gpt-4", "claude2", "gpt-3.5-turbo", "llama3-70b-instruct",
               "mixtral-8x7b-instruct", "galactica_120b", "gemini-pro"]
CHEM_KEEP = [1.0, 0.15, 0.5, 0.08, 1.0, 0.3, 0.6, 0.04, 0.9]
COLUMNS = None  # every column of the table


def chembench_unbalanced(data):
    d = data[(data["prompt"] == "default") & data["model"].isin(CHEM_MODELS)]
    subjects = sorted(d["subject"].unique())
    keep = []
    for s, share in zip(subjects, CHEM_KEEP):
        qs = sorted(d.loc[d["subject"] == s, "question"].unique())
        keep += qs[: max(3, int(round(share * len(qs))))]
    return d[d["question"].isin(keep)].reset_index(drop=True)


def simulated():
    return mixrank.simulate(models=5, subjects=8, questions=[5, 40, 12, 60, 8, 25, 90, 3],
                            prompts=1, effects=[0.0, 0.1, 0.25, 0.3, 0.6], rng=15)


def designs():
    """(name, formula, data, resolution kwargs) of every reference design."""
    out = [("example", "correct ~ model + (1|subject)", mixrank.load_example(),
            [dict(pairs="all", multiplicity="holm")])]
    try:
        chem = mixrank.load_dataset("chembench")
    except Exception:  # noqa: BLE001 - the reference needs the data
        chem = None
    if chem is not None:
        out.append(("chembench_unbalanced", "correct ~ model + (1|subject)",
                    chembench_unbalanced(chem),
                    [dict(pairs="adjacent", multiplicity="holm"),
                     dict(pairs="adjacent", multiplicity="bh")]))
    out.append(("simulated", "correct ~ model + (1|subject)", simulated(),
                [dict(pairs="all", multiplicity="bonferroni")]))
    return out


def table_json(tab):
    cols = {}
    for c in tab.columns:
        v = tab[c].tolist()
        cols[c] = [x if not isinstance(x, float) or np.isfinite(x) else str(x) for x in v]
    return cols


def main():
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=HERE).stdout.strip()
    ref = {"commit": commit, "estimand": "cells", "anytime": "normal", "designs": []}
    for name, formula, data, calls in designs():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = mixrank.fit(formula, data, estimand="cells")
        for kw in calls:
            tab = fit.resolution(columns="all", **kw)
            ref["designs"].append({"name": name, "formula": formula, "kwargs": kw,
                                   "table": table_json(tab)})
    (HERE / "resolution_cells.json").write_text(json.dumps(ref, indent=1))
    print(f"wrote {len(ref['designs'])} tables from commit {commit}")


if __name__ == "__main__":
    main()
