"""Stage formula: formula text → :class:`Spec`.

Inputs: an lme4-style formula string.  Outputs: a frozen :class:`Spec`
(response, comparison factor, random intercepts as :class:`RandomTerm`; for
``family="binomial"`` also the model-by-unit terms and the ``cbind`` count
columns; for a model x covariate fixed part an :class:`InteractionSpec`).
One tokenizer and one parser read every formula, so every
:class:`~mixrank.errors.FormulaError` quotes the user's text with a caret
under the offending characters.

Modules:

* :mod:`~mixrank.formula.tokens` -- the operator table and the tokenizer;
* :mod:`~mixrank.formula.parser` -- the recursive-descent parser of the
  response and the random terms (``binomial=True``: glmer's reading, with
  ``cbind`` and model-by-unit terms);
* :mod:`~mixrank.formula.fixed` -- :func:`parse`, the public entry point: the
  fixed part beyond the comparison factor through formulaic
  (:class:`InteractionSpec`), the rest by the parser;
* :mod:`~mixrank.formula.glmm_terms` -- :func:`parse_glmm`, the binomial
  formula as a :class:`~mixrank.formula.glmm_terms.GlmmFormula` (built from
  the one Spec);
* :mod:`~mixrank.formula.spec` -- the value objects :class:`Spec` and
  :class:`RandomTerm`.
"""

from mixrank.formula.fixed import InteractionSpec, parse
from mixrank.formula.spec import RandomTerm, Spec

__all__ = ["InteractionSpec", "RandomTerm", "Spec", "parse"]
