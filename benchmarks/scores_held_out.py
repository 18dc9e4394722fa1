"""The held-out SE ratios of docs/model_scores.md §1b.

For each bundled dataset named on the command line (default: example, chembench,
jailbreakbench) and three seeds: the first model stays complete, every other model loses
1-6 random questions (all their cells); prints the range and median over the adjusted
rows of SE(held-out) / SE(complete data) and checks every table's ``df_method`` is the
contrasts'.  Run: ``python benchmarks/scores_held_out.py``.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pandas as pd

import mixrank

F = "correct ~ model + (1|subject)"
KEYS = ["subject", "question"]


def held_out(d: pd.DataFrame, seed: int) -> pd.DataFrame:
    """``d`` with 1-6 random questions dropped from every model but the first."""
    g = np.random.default_rng(seed)
    qs = d[KEYS].drop_duplicates().reset_index(drop=True)
    out = []
    for i, m in enumerate(sorted(d.model.unique())):
        dm = d[d.model == m]
        if i > 0:
            drop = qs.iloc[g.choice(len(qs), size=int(g.integers(1, 7)), replace=False)]
            gone = set(map(tuple, drop.to_numpy()))
            dm = dm[[k not in gone for k in map(tuple, dm[KEYS].to_numpy())]]
        out.append(dm)
    return pd.concat(out, ignore_index=True)


def main(names: list[str]) -> None:
    warnings.simplefilter("ignore")
    for name in names:
        d = mixrank.load_example() if name == "example" else mixrank.load_dataset(name)
        full = mixrank.fit(F, d).model_scores().set_index("model")
        ratios = []
        for seed in (1, 2, 3):
            res = mixrank.fit(F, held_out(d, seed))
            sc = res.model_scores().set_index("model")
            assert sc.attrs["mixrank"]["df_method"] == res.contrasts().attrs["mixrank"][
                "df_method"]
            r = sc["std_error"] / full.loc[sc.index, "std_error"]
            ratios.append(r[sc["adjusted"]])
        r = pd.concat(ratios)
        print(f"{name}: {full.attrs['mixrank']['df_method']}; {len(r)} adjusted rows; SE "
              f"ratio {r.min():.3f} - {r.max():.3f} (median {r.median():.3f})")


if __name__ == "__main__":
    main(sys.argv[1:] or ["example", "chembench", "jailbreakbench"])
