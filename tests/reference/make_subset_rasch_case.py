"""Write tests/reference/subset_cases/rasch.csv: the design glmer fits in subset_rasch.R.

10 simulated models x 80 items (tests/subset/sim.py, seed 21), 0/1 scores.  Run from the
repository root: ``python tests/reference/make_subset_rasch_case.py``.
"""

from pathlib import Path

import numpy as np

from tests.subset.sim import long_table, probabilities


def main() -> None:
    P, subj = probabilities(10, 80, 2, 21)
    Y = (np.random.default_rng(21).random(P.shape) < P).astype(int)
    long_table(Y, subj).to_csv(Path(__file__).parent / "subset_cases" / "rasch.csv", index=False)


if __name__ == "__main__":
    main()
