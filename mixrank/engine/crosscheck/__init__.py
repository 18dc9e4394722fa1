"""mixrank.engine.crosscheck: the same pairs fitted by other engines, for cross-checks.

Modules: :mod:`.statsmodels_engine` (statsmodels MixedLM) and
:mod:`.lme4_engine` (R lme4 + lmerTest through ``Rscript``).
"""
