"""Stage formula: formula text → :class:`Spec`.

Inputs: an lme4-style formula string.  Outputs: a frozen :class:`Spec`
(response, comparison factor, random intercepts as :class:`RandomTerm`).
Contents: :func:`parse` (in ``parser``), the operator table and tokenizer
(in ``tokens``), the value objects (in ``spec``).
"""

from mixrank.formula.parser import parse
from mixrank.formula.spec import RandomTerm, Spec

__all__ = ["RandomTerm", "Spec", "parse"]
