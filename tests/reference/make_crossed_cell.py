"""Write the data of tests/reference/crossed_cell.R: two replicates of the crossed validity cell.

Run from the repository root (only if tests/validity/few_units.simulate_crossed changes):

    python tests/reference/make_crossed_cell.py
    Rscript tests/reference/crossed_cell.R

Seeds 1 (4 prompts, interior fits) and 14 (3 prompts; one pair's prompt variance at the
REML boundary, where lmerTest's Satterthwaite df ignores the prompt term).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.validity.few_units import simulate_crossed

HERE = Path(__file__).parent / "crossed_cell"
SEEDS = (1, 14)

if __name__ == "__main__":
    HERE.mkdir(exist_ok=True)
    for seed in SEEDS:
        d = simulate_crossed(8, 10, np.random.default_rng(seed))
        d["score"] = d["score"].round(6)
        d.to_csv(HERE / f"seed{seed}.csv.gz", index=False)
