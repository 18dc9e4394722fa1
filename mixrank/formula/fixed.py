"""Stage formula: model x covariate formulas (a fixed part beyond the comparison factor).

Inputs: formula text such as ``"correct ~ model * difficulty + (1|subject)"``.
Outputs: an :class:`InteractionSpec` (a :class:`~mixrank.formula.spec.Spec`
that also carries the fixed part of the paired differences), or, for a
formula whose fixed part is the comparison factor alone, exactly the
:class:`~mixrank.formula.spec.Spec` of :func:`mixrank.formula.parser.parse`.

Contents: :func:`parse` (the public entry point: routes plain formulas to the
hand parser unchanged and interaction formulas here) and
:class:`InteractionSpec`.  The random terms of an interaction formula are
still parsed by the hand parser (on a copy of the text in which the fixed
part is blanked out, so that carets keep their positions); the fixed part's
term algebra (``*``, ``:``, ``+``, parentheses) is formulaic's.

Semantics (docs/interactions.md §1): for a pair ``(a, b)`` the cell
differences ``d = y_a - y_b`` get the fixed part of the interaction with the
comparison factor: ``model * x`` (= ``model + x + model:x``) gives
``d ~ 1 + x``.  A covariate term that does not interact with the comparison
factor cancels in ``d`` and is an error.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from mixrank.errors import FormulaError
from mixrank.formula.parser import parse as parse_plain
from mixrank.formula.spec import Spec, _quote
from mixrank.formula.tokens import Token, tokenize

__all__ = ["InteractionSpec", "parse"]

_EXAMPLE = "'correct ~ model * difficulty + (1|subject)'"


@dataclass(frozen=True, eq=False)
class InteractionSpec(Spec):
    """A parsed formula whose fixed part crosses the comparison factor with covariates.

    Attributes
    ----------
    fixed_terms : tuple of tuple of str
        The fixed terms of the paired differences without the intercept, in
        formulaic's order (by degree, then first appearance): ``model * (x + z)``
        gives ``(("x",), ("z",))``; ``model * x:z`` gives ``(("x", "z"),)``.
    covariates : tuple of str
        Every covariate column, in first-appearance order.
    """

    fixed_terms: tuple[tuple[str, ...], ...] = ()
    covariates: tuple[str, ...] = ()

    @property
    def d_formula(self) -> str:
        """Right side of the paired-difference fixed part, e.g. ``"1 + x + z"``."""
        return " + ".join(["1"] + [":".join(_quote(f) for f in t) for t in self.fixed_terms])

    @property
    def interaction_names(self) -> tuple[str, ...]:
        """The interaction term behind each fixed term, e.g. ``"model:x"``."""
        return tuple(":".join((self.comparison,) + t) for t in self.fixed_terms)

    def __str__(self) -> str:
        fixed = [_quote(self.comparison)] + [
            ":".join(_quote(f) for f in (self.comparison,) + t) for t in self.fixed_terms]
        rhs = " + ".join(fixed + [str(t) for t in self.random])
        return f"{_quote(self.response)} ~ {rhs}"

    def _key(self) -> tuple:
        return (self.response, self.comparison, frozenset(self.random),
                frozenset(frozenset(t) for t in self.fixed_terms), self._binomial_key())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Spec):
            return NotImplemented
        if not isinstance(other, InteractionSpec):
            return False
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass
class _Split:
    """Top-level terms right of '~': fixed tokens per term, random term spans."""

    tilde: Token
    fixed: list[list[Token]]
    separators: list[Token | None]   # the '+' before each fixed term (None: first term)
    random: list[tuple[int, int, Token | None]]  # (start, end, '+' before it)


def _split(tokens: list[Token]) -> _Split | None:
    """Split the right side at top-level '+'; None when the hand parser should decide."""
    tildes = [k for k, t in enumerate(tokens) if t.is_op("~")]
    if len(tildes) != 1:
        return None
    depth = 0
    terms: list[list[Token]] = []
    cur: list[Token] = []
    seps: list[Token | None] = []
    sep: Token | None = None
    for tok in tokens[tildes[0] + 1:]:
        depth += tok.is_op("(") - tok.is_op(")")
        if depth < 0:
            return None
        if depth == 0 and tok.is_op("+"):
            if not cur:
                return None
            terms.append(cur)
            seps.append(sep)
            cur, sep = [], tok
            continue
        cur.append(tok)
    if depth != 0 or not cur:
        return None
    terms.append(cur)
    seps.append(sep)
    out = _Split(tokens[tildes[0]], [], [], [])
    for term, sp in zip(terms, seps):
        inner_bar = any(t.is_op("|", "||") for t in term)
        if term[0].is_op("(") and term[-1].is_op(")") and inner_bar:
            out.random.append((term[0].start, term[-1].end, sp))
        elif inner_bar:
            return None          # a bar outside parentheses: the hand parser explains it
        else:
            out.fixed.append(term)
            out.separators.append(sp)
    return out


def _check_token(formula: str, tok: Token, prev: Token | None, nxt: Token | None) -> None:
    """Reject anything in the fixed part but names, '*', ':', '+' and parentheses."""
    if tok.kind == "name":
        if nxt is not None and nxt.is_op("("):
            raise FormulaError(
                f"Function call '{tok.text}(...)' is not supported. Expected plain column "
                "names; compute the transformed column in the data first and name it in the "
                "formula.", formula, tok.start, tok.end - tok.start)
        return
    if tok.is_op("*", ":", "+", "(", ")"):
        return
    if tok.kind == "number" and float(tok.value) in (0.0, 1.0):
        raise FormulaError(
            f"'{tok.text}' sets the intercept, but the intercept of the paired differences is "
            f"implicit (the comparison factor's main effect). Expected e.g. {_EXAMPLE}; "
            f"remove '{tok.text}'.", formula, tok.start, tok.end - tok.start)
    what = {"number": "number", "badname": "name starting with a digit"}.get(
        tok.kind, "operator" if tok.kind == "op" else "character")
    raise FormulaError(
        f"Unexpected {what} '{tok.text}' in the fixed part. Expected column names crossed "
        f"with '*', ':' and '+' (parentheses allowed), e.g. 'correct ~ model * (x + z)'; "
        "write the terms out with those operators (backquote names with other "
        "characters, e.g. '`a-b`').", formula, tok.start, tok.end - tok.start)


def _masked(formula: str, split: _Split, comparison: Token) -> str:
    """The formula with the fixed part blanked except the comparison factor.

    Positions are preserved, so the hand parser's carets on the random terms
    stay valid.  Each kept item but the first is preceded by its '+'.
    """
    chars = [" "] * len(formula)
    chars[:split.tilde.end] = formula[:split.tilde.end]
    sep_of_cmp = next(sp for term, sp in zip(split.fixed, split.separators)
                      if comparison in term)
    items = [(comparison.start, comparison.end, sep_of_cmp)] + split.random
    items.sort()
    for i, (start, end, sep) in enumerate(items):
        chars[start:end] = formula[start:end]
        if i > 0 and sep is not None:
            chars[sep.start] = "+"
    return "".join(chars)


def _expand(formula: str, fixed_text: str, span: tuple[int, int]) -> list[tuple[str, ...]]:
    """formulaic's expansion of the fixed part into terms (tuples of column names)."""
    import formulaic

    try:
        terms = list(formulaic.Formula(fixed_text))
    except Exception as exc:  # formulaic's own parse errors, re-raised as ours
        raise FormulaError(
            f"The fixed part '{fixed_text}' could not be expanded ({exc}). Expected column "
            f"names crossed with '*', ':' and '+', e.g. {_EXAMPLE}.",
            formula, span[0], span[1] - span[0]) from None
    out = []
    for t in terms:
        names = tuple(str(f) for f in t.factors)
        if names != ("1",):
            out.append(names)
    return out


def parse(formula: str, *, binomial: bool = False) -> Spec:
    """Parse a mixrank formula, with or without a model x covariate fixed part.

    Parameters
    ----------
    formula : str
        ``response ~ comparison [+ (1|g) ...]`` (see
        :func:`mixrank.formula.parser.parse`) or a fixed part crossing the
        comparison factor with cell-level columns: ``model * x``,
        ``model + model:x``, ``model * (x + z)``, ``model * x:z``.  The
        comparison factor is the first column named in the fixed part.
    binomial : bool
        Read the formula as ``lme4::glmer`` does for ``family="binomial"``
        (see :func:`mixrank.formula.parser.parse`): a ``cbind`` response and
        model-by-unit random terms are allowed.

    Returns
    -------
    Spec or InteractionSpec
        A plain :class:`Spec` when the fixed part is the comparison factor
        alone (identical to :func:`mixrank.formula.parser.parse`), else an
        :class:`InteractionSpec`.

    Raises
    ------
    FormulaError
        Everything :func:`mixrank.formula.parser.parse` rejects; in the fixed
        part: operators other than ``* : +`` and parentheses, numbers,
        function calls; a covariate term that does not interact with the
        comparison factor (it cancels in the paired differences); interaction
        terms without the comparison factor's main effect; a covariate that
        is also the response or a random-term grouping.

    Notes
    -----
    Semantics in docs/interactions.md §1.  Term algebra validated against
    formulaic 1.x (the expansion is formulaic's ``Formula(...)``).

    Parsed specs are cached per formula text (they are immutable), so a
    formula parsed again -- every refit of a resampling check, every
    simulation replicate -- costs a dictionary look-up.

    Examples
    --------
    >>> spec = parse("correct ~ model * difficulty + (1|subject)")
    >>> spec.d_formula
    '1 + difficulty'
    >>> str(parse("correct ~ model + (1|subject)"))
    'correct ~ model + (1|subject)'
    """
    if isinstance(formula, str):
        return _parse_cached(formula, binomial)
    return _parse(formula, binomial)


@functools.lru_cache(maxsize=256)
def _parse_cached(formula: str, binomial: bool) -> Spec:
    return _parse(formula, binomial)


def _parse(formula: str, binomial: bool = False) -> Spec:
    """The uncached :func:`parse`."""
    def plain(text: str) -> Spec:
        return parse_plain(text, binomial=binomial)

    if not isinstance(formula, str) or not formula.strip():
        return plain(formula)
    tokens = tokenize(formula)
    split = _split(tokens)
    if split is None or not split.fixed:
        return plain(formula)
    fixed_tokens = [t for term in split.fixed for t in term]
    if len({t.value for t in fixed_tokens if t.kind == "name"}) <= 1 or any(
            a.is_op("(") and b.is_op(")") for a, b in zip(fixed_tokens, fixed_tokens[1:])):
        return plain(formula)     # the comparison alone (or an empty '()')
    if not any(t.is_op("*", ":") for t in fixed_tokens) and any(
            t.kind != "name" and not t.is_op("+") for t in fixed_tokens):
        return plain(formula)     # no crossing: the hand parser's messages apply
    for term in split.fixed:
        for i, tok in enumerate(term):
            _check_token(formula, tok, term[i - 1] if i else None,
                         term[i + 1] if i + 1 < len(term) else None)
    names = [t for t in fixed_tokens if t.kind == "name"]
    if not names:
        return plain(formula)
    comparison = names[0]
    try:
        base = plain(_masked(formula, split, comparison))
    except FormulaError as err:   # quote the formula as given, same caret
        raise FormulaError(err.reason, formula, err.position, err.length) from None
    span = (fixed_tokens[0].start, fixed_tokens[-1].end)
    fixed_text = " + ".join(formula[term[0].start:term[-1].end] for term in split.fixed)
    terms = _expand(formula, fixed_text, span)
    return _build(formula, base, comparison, names, terms)


def _first(names: list[Token], value: str) -> Token:
    return next(t for t in names if t.value == value)


def _build(formula: str, base: Spec, comparison: Token, names: list[Token],
           terms: list[tuple[str, ...]]) -> InteractionSpec:
    cmp = comparison.value
    with_cmp = [tuple(f for f in t if f != cmp) for t in terms if cmp in t]
    others = [t for t in terms if cmp not in t]
    d_terms = [t for t in with_cmp if t]
    if () not in with_cmp:
        raise FormulaError(
            f"The comparison factor '{cmp}' enters only in interactions. Expected its main "
            f"effect too (the overall gap), e.g. 'correct ~ {cmp} * x' or "
            f"'correct ~ {cmp} + {cmp}:x'; add '{cmp} +'.",
            formula, comparison.start, comparison.end - comparison.start)
    d_sets = {frozenset(t) for t in d_terms}
    for t in others:
        if frozenset(t) not in d_sets:
            tok = _first(names, t[0])
            label = ":".join(t)
            raise FormulaError(
                f"The covariate term '{label}' is purely additive: it shifts both models' "
                "scores on a cell alike, so it cancels in the paired differences "
                f"'{cmp}_a - {cmp}_b' and cannot be estimated. Expected it crossed with the "
                f"comparison factor; write '{cmp} * {label}' to ask whether the gap depends "
                f"on it; remove '{label}'; or, if it groups the items, write it as a random "
                f"intercept '(1|{label})'.", formula, tok.start, tok.end - tok.start)
    covariates: list[str] = []
    for t in d_terms:
        for f in t:
            if f not in covariates:
                covariates.append(f)
    for c in covariates:
        tok = _first(names, c)
        if c == base.response:
            raise FormulaError(
                f"The covariate '{c}' is the response. Expected a cell-level column other "
                f"than the score, e.g. {_EXAMPLE}.", formula, tok.start, tok.end - tok.start)
        if any(set(rt.factors) <= {c} for rt in base.random):
            raise FormulaError(
                f"'{c}' is both a fixed covariate and the random term '(1|{c})': its levels "
                "would carry a fixed and a random effect at once, which are confounded. "
                f"Expected one of the two; remove '(1|{c})' to estimate the gap per level "
                f"of '{c}', or remove '{c}' from the fixed part.",
                formula, tok.start, tok.end - tok.start)
    return InteractionSpec(formula=formula, response=base.response, comparison=cmp,
                           random=base.random, model_terms=base.model_terms,
                           failures=base.failures, trials=base.trials,
                           fixed_terms=tuple(d_terms), covariates=tuple(covariates))
