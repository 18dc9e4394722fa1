"""Stage inference: paired tests, multiplicity, rank intervals (contrasts come from results)."""

from .multiplicity import adjust, reject
from .paired import effect_sizes, mcnemar, paired_bootstrap, paired_t, sign_flip, wilcoxon

__all__ = ["adjust", "reject", "mcnemar", "paired_t", "wilcoxon", "paired_bootstrap", "sign_flip",
           "effect_sizes"]
