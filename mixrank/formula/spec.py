"""Stage formula: the parsed-formula value objects.

Inputs: none (data classes).  Outputs: :class:`Spec`, :class:`RandomTerm`.
A ``Spec`` is frozen and hashable; two formulas that differ only in spacing
or in the order of their random terms give equal specs.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RandomTerm", "Spec"]


def _quote(name: str) -> str:
    """Backquote a column name that is not a plain identifier (as R does)."""
    plain = name.replace(".", "_").replace("_", "a")
    return name if plain.isidentifier() and not name[0].isdigit() else f"`{name}`"


@dataclass(frozen=True)
class RandomTerm:
    """A random intercept ``(1 | a:b:...)``.

    Attributes
    ----------
    factors : tuple of str
        The grouping columns in the order written, e.g. ``("subject", "question")``.

    Examples
    --------
    >>> import mixrank
    >>> t = mixrank.RandomTerm(("subject", "question"))
    >>> str(t), t.name
    ('(1|subject:question)', 'subject:question')
    """

    factors: tuple[str, ...]

    @property
    def name(self) -> str:
        """Component name as written: ``"subject:question"``."""
        return ":".join(self.factors)

    def __str__(self) -> str:
        return "(1|" + ":".join(_quote(f) for f in self.factors) + ")"


@dataclass(frozen=True)
class Spec:
    """A parsed mixrank formula.

    Attributes
    ----------
    formula : str
        The formula text as given.
    response : str
        The score column (left side).
    comparison : str
        The comparison factor (first and only fixed term), e.g. ``"model"``.
    random : tuple of RandomTerm
        Random intercepts, ``a/b`` expanded to ``a`` and ``a:b``, in canonical
        order: by number of factors, then by first appearance.
    model_terms : tuple of tuple of str
        ``family="binomial"`` only (``parse(..., binomial=True)``): random
        terms naming the comparison factor (model-by-unit terms such as
        ``(1|subject:model)``), as written; empty otherwise.
    failures, trials : str or None
        A ``cbind`` response (binomial only): ``cbind(k, f)`` gives the
        failure column ``f``, ``cbind(k, n - k)`` the trials column ``n``;
        ``response`` is then the success column ``k``.

    Examples
    --------
    >>> import mixrank
    >>> s = mixrank.parse("correct ~ model + (1|subject/question)")
    >>> s.response, s.comparison, s.term_names, s.unit
    ('correct', 'model', ('subject', 'subject:question'), 'subject')
    >>> str(s)
    'correct ~ model + (1|subject) + (1|subject:question)'
    """

    formula: str
    response: str
    comparison: str
    random: tuple[RandomTerm, ...] = ()
    model_terms: tuple[tuple[str, ...], ...] = ()
    failures: str | None = None
    trials: str | None = None

    @property
    def grouping_columns(self) -> tuple[str, ...]:
        """Every column named in a random term, in first-appearance order."""
        seen: list[str] = []
        for term in self.random:
            for f in term.factors:
                if f not in seen:
                    seen.append(f)
        return tuple(seen)

    @property
    def unit(self) -> str | None:
        """The unit of inference: the name of the first random term in canonical order
        (docs/methods.md §2), e.g. ``"subject"``; None when the cells are the units."""
        return self.random[0].name if self.random else None

    @property
    def term_names(self) -> tuple[str, ...]:
        """Names of the random terms, e.g. ``("subject", "subject:question")``."""
        return tuple(t.name for t in self.random)

    def __str__(self) -> str:
        rhs = " + ".join([_quote(self.comparison)] + [str(t) for t in self.random])
        return f"{_quote(self.response)} ~ {rhs}"

    def _binomial_key(self) -> tuple:
        return (frozenset(frozenset(t) for t in self.model_terms), self.failures, self.trials)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Spec):
            return NotImplemented
        return (self.response, self.comparison, frozenset(self.random),
                self._binomial_key()) == (other.response, other.comparison,
                                          frozenset(other.random), other._binomial_key())

    def __hash__(self) -> int:
        return hash((self.response, self.comparison, frozenset(self.random),
                     self._binomial_key()))
