"""Stage inference: paired tests, multiplicity, rank intervals (contrasts come from results).

Modules:

* :mod:`~mixrank.inference.paired` -- classic paired tests and effect sizes
  (docs/methods.md §5), with :mod:`~mixrank.inference.paired_data` (their input
  handling) and :mod:`~mixrank.inference.paired_resampling` (the resampling
  tests);
* :mod:`~mixrank.inference.multiplicity` -- multiplicity adjustment of p-values;
* :mod:`~mixrank.inference.keywords` -- keyword helpers of the one vocabulary
  (former spellings, left-over keywords);
* :mod:`~mixrank.inference.joint` -- the joint covariance of all fitted pairwise
  contrasts;
* :mod:`~mixrank.inference.pairwise` -- the adjusted contrasts table of every
  pairwise result (the one template's adjustment step);
* :mod:`~mixrank.inference.simultaneous` -- family-wise answers for the pairwise
  contrasts of a fit;
* :mod:`~mixrank.inference.randomization` -- unit-level randomization
  (sign-flip) max-t, step-down and contrast draws;
* :mod:`~mixrank.inference.mvt` -- multivariate-t null draws of contrasts
  with small df (max-t and rank probabilities on crossed designs);
* :mod:`~mixrank.inference.letters` -- compact letter display of pairwise
  decisions (Piepho's insert-and-absorb, as multcompView);
* :mod:`~mixrank.inference.sign_exact` -- the exact sign test of a pair without
  an estimable variance;
* :mod:`~mixrank.inference.omnibus` -- the omnibus test that every model's score is
  equal (CR2 Wald with the HTZ F, Friedman, Cochran's Q);
* :mod:`~mixrank.inference.ranks` -- confidence intervals for ranks (a
  subpackage).
"""

from .multiplicity import adjust, reject
from .paired import effect_sizes, mcnemar, paired_bootstrap, paired_t, sign_flip, wilcoxon

__all__ = ["adjust", "reject", "mcnemar", "paired_t", "wilcoxon", "paired_bootstrap", "sign_flip",
           "effect_sizes"]
