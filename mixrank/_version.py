"""The package version and the constants the command line's parsers show (no stage, no imports).

Read by ``--version`` / ``--help`` without loading numpy; :mod:`mixrank._util`
re-exports both.
"""

MIXRANK_VERSION = "0.1.0"

#: Upper bound of every number of random draws or resamples (``B``, ``--draws``,
#: ``n_random``): a Monte Carlo p-value near 0.05 from 10^6 draws already has an
#: error of about 2e-4, and larger counts only cost time and memory
#: (docs/hardening.md §8).
MAX_DRAWS = 1_000_000
