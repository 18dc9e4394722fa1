"""Stage formula: formula text → :class:`Spec`.

Inputs: an lme4-style formula string.  Outputs: a frozen :class:`Spec`
(response, comparison factor, random intercepts as :class:`RandomTerm`).
Contents: :func:`parse` (in ``fixed``: plain formulas go to the hand parser
of ``parser`` unchanged, model x covariate formulas give an
:class:`InteractionSpec`), the operator table and tokenizer (in ``tokens``),
the value objects (in ``spec``).
"""

from mixrank.formula.fixed import InteractionSpec, parse
from mixrank.formula.spec import RandomTerm, Spec

__all__ = ["InteractionSpec", "RandomTerm", "Spec", "parse"]
