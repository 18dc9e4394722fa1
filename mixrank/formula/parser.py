"""Stage formula: parse lme4-style formula text into a :class:`Spec`.

Inputs: a formula string such as
``"correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"``.
Outputs: a frozen :class:`~mixrank.formula.spec.Spec` (response, comparison
factor, random intercepts in canonical order).

Contents: :func:`parse` (a recursive-descent parser over the tokens of
:mod:`mixrank.formula.tokens`, which holds the operator table
:data:`OPERATORS` and :func:`tokenize`; both names are re-exported here).
Every rejected formula raises :class:`~mixrank.errors.FormulaError` whose
message quotes the formula with a caret under the offending characters.
"""


from __future__ import annotations

from dataclasses import dataclass, replace

from mixrank.errors import FormulaError
from mixrank.formula.spec import RandomTerm, Spec
from mixrank.formula.tokens import (
    EXAMPLE,
    OPERATORS,
    Operator,
    Token,
    lexical_error,
    match_parentheses,
    number_is,
    tokenize,
)

__all__ = ["OPERATORS", "Operator", "Token", "parse", "tokenize"]


@dataclass
class _Group:
    """A parsed random term: source span, factor tokens, expanded terms."""

    start: int
    end: int
    names: list[Token]
    terms: list[tuple[str, ...]]


class _Parser:
    """Recursive-descent parser over the tokens right of '~'."""

    def __init__(self, formula: str, tokens: list[Token], at: int, response: Token,
                 closing: dict[int, int], binomial: bool = False) -> None:
        self.formula = formula
        self.binomial = binomial  # glmer's reading: model-by-unit terms allowed
        self.toks = tokens  # all tokens; parsing starts after the '~' at index ``at``
        self.tilde = tokens[at]
        self.response = response
        self.closing = closing  # index of '(' -> index of its ')'
        self.i = self.term_start = at + 1
        self.comparison: Token | None = None
        self.groups: list[_Group] = []

    # -- helpers -----------------------------------------------------------
    def fail(self, message: str, start: int, end: int) -> FormulaError:
        return FormulaError(message, self.formula, start, end - start)

    def text(self, first: Token, last: Token) -> str:
        return self.formula[first.start:last.end]

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    # -- errors shared by several contexts -----------------------------------
    def call(self, j: int) -> FormulaError:
        """Error for a function call: name at index ``j`` followed by '('."""
        name, close_at = self.toks[j], self.closing[j + 1]
        close = self.toks[close_at]
        if any(t.is_op("|", "||") for t in self.toks[j + 2:close_at]):
            lp = self.toks[j + 1]
            return self.fail(
                f"Missing '+' before '{self.text(lp, close)}'. Expected terms joined by "
                f"'+', e.g. {EXAMPLE}; add '+' before '('.", lp.start, lp.end)
        return self.fail(
            f"Function call '{self.text(name, close)}' is not supported. Expected plain "
            "column names; compute the transformed column in the data first and name "
            "it in the formula.",
            name.start, close.end)

    def minus(self, tok: Token) -> FormulaError:
        """Error for '-': removing the intercept, or removing a term."""
        nxt = self.toks[self.toks.index(tok) + 1] if tok is not self.toks[-1] else None
        if nxt is not None and number_is(nxt, 0.0, 1.0):
            return self.intercept(tok, nxt)
        return lexical_error(self.formula, tok)

    def intercept(self, first: Token, last: Token) -> FormulaError:
        text = self.text(first, last)
        return self.fail(
            f"'{text}' sets the intercept, but the comparison factor's intercept is "
            "implicit. Expected only the comparison factor as fixed term, e.g. "
            f"{EXAMPLE}; remove '{text}'.",
            first.start, last.end)

    def bar_outside(self, bar: Token) -> FormulaError:
        return self.fail(
            f"'{bar.value}' outside parentheses. Random terms are written in parentheses "
            f"after the comparison factor, e.g. {EXAMPLE}; put the random term in "
            "parentheses.",
            bar.start, bar.end)

    # -- grammar -------------------------------------------------------------
    def parse(self) -> None:
        if self.peek() is None:
            raise self.fail(
                "Nothing is right of '~'. Expected the comparison factor, e.g. "
                "'correct ~ model'; add the column that identifies the systems being "
                "compared.", self.tilde.end, self.tilde.end + 1)
        while True:
            self.term()
            tok = self.peek()
            if tok is None:
                return
            if not tok.is_op("+"):
                raise self.between(tok)
            self.i += 1
            if self.peek() is None:
                raise self.fail(
                    "Trailing '+' with no term after it. Expected a term after '+', e.g. "
                    "'+ (1|subject)'; remove the '+' or add the missing term.",
                    tok.start, tok.end)

    def between(self, tok: Token) -> FormulaError:
        """Error for a token that follows a complete term instead of '+'."""
        if tok.is_op("-"):
            return self.minus(tok)
        if tok.is_op("|", "||"):
            return self.bar_outside(tok)
        if tok.is_op(":", "/"):
            prev = self.text(self.toks[self.term_start], self.toks[self.i - 1])
            return self.fail(
                f"Unexpected '{tok.value}' after '{prev}'. Expected '+' or the end of "
                "the formula; ':' and '/' belong inside a random term, e.g. '(1|a:b)' "
                "or '(1|a/b)'.", tok.start, tok.end)
        if tok.kind in ("name", "number", "badname", "dot") or tok.is_op("("):
            return self.fail(
                f"Missing '+' before '{tok.text}'. Expected terms joined by '+', e.g. "
                f"{EXAMPLE}; add '+' before '{tok.text}'.", tok.start, tok.end)
        return lexical_error(self.formula, tok)

    def term(self) -> None:
        self.term_start = self.i
        tok = self.toks[self.i]  # parse() only calls term() where a token is left
        nxt = self.peek(1)
        if tok.kind == "name":
            if nxt is not None and nxt.is_op("("):
                raise self.call(self.i)
            self.fixed()
        elif tok.kind == "number":
            if nxt is not None and nxt.is_op("|", "||") and number_is(tok, 1.0):
                last = self.i + 1
                while last + 1 < len(self.toks) and (
                        self.toks[last + 1].kind == "name"
                        or self.toks[last + 1].is_op(":", "/", "|", "||")):
                    last += 1
                text = self.text(tok, self.toks[last])
                raise self.fail(
                    f"Random term '{text}' is not in parentheses. Expected '({text})': "
                    f"without parentheses '|' would split the whole formula; write "
                    f"'({text})'.", tok.start, self.toks[last].end)
            if number_is(tok, 0.0, 1.0):
                raise self.intercept(tok, tok)
            raise self.fail(
                f"Unexpected number '{tok.text}'. Expected the comparison factor or a "
                f"random term '(1|group)', e.g. {EXAMPLE}; remove '{tok.text}'.",
                tok.start, tok.end)
        elif tok.is_op("("):
            self.random()
        elif tok.is_op("+"):
            raise self.fail(
                "Empty term: this '+' has no term before it. Expected a term before each "
                f"'+', e.g. {EXAMPLE}; remove the extra '+'.", tok.start, tok.end)
        elif tok.is_op("-"):
            raise self.minus(tok)
        elif tok.is_op("|", "||"):
            raise self.bar_outside(tok)
        elif tok.is_op(":", "/"):
            raise self.fail(
                f"'{tok.value}' has no column name before it. Expected a name on each "
                f"side of '{tok.value}', inside a random term, e.g. "
                f"'(1|subject{tok.value}question)'.", tok.start, tok.end)
        else:
            raise lexical_error(self.formula, tok)

    def fixed(self) -> None:
        name = self.toks[self.i]
        self.i += 1
        op = self.peek()
        if op is not None and op.is_op(":", "*", "/"):
            operand = self.peek(1)
            last = operand if operand is not None and operand.kind == "name" else op
            text = self.text(name, last)
            if op.value == "/":
                raise self.fail(
                    f"Nesting '{text}' in the fixed part is not supported. Expected the "
                    "comparison factor alone as fixed term; nesting belongs in a random "
                    "term, e.g. '(1|a/b)'.", op.start, op.end)
            raise self.fail(
                f"Fixed interaction '{text}' is not supported: the comparison factor "
                "enters alone. Expected 'response ~ comparison [+ (1|group) ...]', e.g. "
                f"{EXAMPLE}; remove the interaction, or write an interaction of grouping "
                "columns as a random term, e.g. '(1|a:b)'.", op.start, op.end)
        if op is not None and not op.is_op("+"):
            raise self.between(op)
        if self.comparison is None:
            self.comparison = name
        elif name.value == self.comparison.value:
            raise self.fail(
                f"The comparison factor '{name.value}' appears twice. Expected it once, "
                f"as the only fixed term; remove the repeated '{name.text}'.",
                name.start, name.end)
        else:
            raise self.fail(
                f"Fixed covariate '{name.value}': fixed covariates beyond the comparison "
                f"factor '{self.comparison.value}' are not supported yet. Expected exactly "
                f"one fixed term, the comparison factor; remove '{name.text}' (or, if it "
                f"groups the items, write it as a random intercept '(1|{name.text})').",
                name.start, name.end)

    def random(self) -> None:
        lp_at = self.i
        rp_at = self.closing[lp_at]
        lp, rp = self.toks[lp_at], self.toks[rp_at]
        inner = self.toks[lp_at + 1:rp_at]
        self.i = rp_at + 1
        src = self.text(lp, rp)
        if not inner:
            raise self.fail(
                "Empty parentheses '()'. Expected a random term '(1|group)', e.g. "
                "'(1|subject)'; fill them in or remove them.", lp.start, rp.end)
        depth, bar_at = 0, None
        for k, tok in enumerate(inner):
            depth += tok.is_op("(") - tok.is_op(")")
            if depth == 0 and tok.is_op("|", "||"):
                bar_at = k
                break
        if bar_at is None:
            raise self.fail(
                f"Parentheses '{src}' do not enclose a random term. Expected parentheses "
                "only around random terms '(1|group)', e.g. '(1|subject)'; remove the "
                "extra parentheses.", lp.start, rp.end)
        bar = inner[bar_at]
        lhs, grp = inner[:bar_at], inner[bar_at + 1:]
        group = self.text(grp[0], grp[-1]) if grp else "group"
        if bar.value == "||":
            raise self.fail(
                f"Double bar '||' in '{src}' (uncorrelated random effects) is not "
                "supported. Expected a random intercept with a single bar, "
                f"'(1|{group})'; replace '||' with '|' and drop any slope.",
                bar.start, bar.end)
        self.intercept_part(lhs, bar, src, group)
        self.groups.append(self.grouping(grp, src, rp, lp))

    def intercept_part(self, lhs: list[Token], bar: Token, src: str, group: str) -> None:
        """Check the part left of '|': exactly the number 1."""
        if not lhs:
            raise self.fail(
                f"Nothing before '|' in '{src}'. Expected '1' (a random intercept), "
                f"e.g. '(1|{group})'; write '(1|{group})'.", bar.start, bar.end)
        if len(lhs) == 1 and number_is(lhs[0], 1.0):
            return
        text = self.text(lhs[0], lhs[-1])
        if (len(lhs) == 1 and number_is(lhs[0], 0.0)) or (
                len(lhs) == 2 and lhs[0].is_op("-") and number_is(lhs[1], 0.0, 1.0)):
            raise self.fail(
                f"'{src}' has no random intercept ('{text}' removes it), so it adds "
                f"nothing. Expected '(1|{group})'; write '(1|{group})' or remove the term.",
                lhs[0].start, lhs[-1].end)
        slope = lhs
        if number_is(lhs[0], 1.0):
            slope = lhs[1:]
            if len(slope) > 1 and slope[0].is_op("+"):
                slope = slope[1:]
        raise self.fail(
            f"Random slope '{self.text(slope[0], slope[-1])}' in '{src}' is not "
            f"supported yet. Expected a random intercept '(1|{group})'; remove the "
            f"slope: write '(1|{group})'.", slope[0].start, slope[-1].end)

    def grouping(self, grp: list[Token], src: str, rp: Token, lp: Token) -> _Group:
        """Parse ``a[:b...][/c...]`` right of '|' and expand the nesting."""
        if not grp:
            raise self.fail(
                f"Nothing after '|' in '{src}'. Expected a grouping column, e.g. "
                "'(1|subject)'; name the column whose levels share a random intercept.",
                rp.start, rp.end)
        segments: list[list[Token]] = [[]]
        expect_name, prev = True, grp[0]
        for k, tok in enumerate(grp):
            if tok.is_op("|", "||"):
                raise self.fail(
                    f"Second '{tok.value}' in '{src}'. Expected one '|' per random term, "
                    "e.g. '(1|subject)'.", tok.start, tok.end)
            if tok.is_op("+"):
                raise self.fail(
                    f"'+' inside the random term '{src}'. Expected one grouping per "
                    "random term; write one term per grouping, e.g. "
                    "'(1|subject) + (1|prompt)'.", tok.start, tok.end)
            if expect_name:
                if tok.kind == "name":
                    if k + 1 < len(grp) and grp[k + 1].is_op("("):
                        raise self.call(self.toks.index(tok))
                    segments[-1].append(tok)
                    expect_name = False
                elif tok.is_op(":", "/"):
                    raise self.fail(
                        f"'{tok.value}' in '{src}' has no column name before it. Expected "
                        f"a name on each side of '{tok.value}', e.g. "
                        f"'(1|subject{tok.value}question)'.", tok.start, tok.end)
                elif tok.kind == "number":
                    raise self.fail(
                        f"Unexpected number '{tok.text}' in the grouping of '{src}'. "
                        "Expected a column name after '|', e.g. '(1|subject)'.",
                        tok.start, tok.end)
                elif tok.is_op("("):
                    raise self.fail(
                        f"Unexpected '(' in the grouping of '{src}'. Expected column names "
                        "joined by ':' or '/', e.g. '(1|subject/question)'; remove the "
                        "inner parentheses.", tok.start, tok.end)
                else:
                    raise lexical_error(self.formula, tok)
            elif tok.is_op(":", "/"):
                if tok.value == "/":
                    segments.append([])
                expect_name, prev = True, tok
            elif tok.kind in ("name", "number", "badname", "dot"):
                before = grp[k - 1].text
                raise self.fail(
                    f"Missing ':' or '/' between '{before}' and '{tok.text}' in '{src}'. "
                    f"Expected grouping columns joined by ':' (interaction) or '/' "
                    f"(nesting); write '{before}:{tok.text}' or '{before}/{tok.text}'.",
                    tok.start, tok.end)
            else:
                raise lexical_error(self.formula, tok)
        if expect_name:
            raise self.fail(
                f"'{prev.value}' at the end of '{src}' has no column name after it. "
                f"Expected a name on each side of '{prev.value}', e.g. "
                f"'(1|subject{prev.value}question)'; add the missing name or remove "
                f"'{prev.value}'.", prev.start, prev.end)
        names = [t for seg in segments for t in seg]
        seen: dict[str, Token] = {}
        for tok in names:
            if tok.value in seen:
                raise self.fail(
                    f"The grouping '{tok.value}' appears twice in '{src}'. Expected "
                    "distinct columns in an interaction or nesting; remove the repeated "
                    f"'{tok.text}'.", tok.start, tok.end)
            seen[tok.value] = tok
        terms: list[tuple[str, ...]] = []
        acc: tuple[str, ...] = ()
        for seg in segments:
            acc = acc + tuple(t.value for t in seg)
            terms.append(acc)
        return _Group(lp.start, rp.end, names, terms)

    def finish(self) -> Spec:
        """Checks that need the whole formula, then the Spec."""
        after = self.tilde.end
        comparison = self.comparison
        if comparison is None:
            raise self.fail(
                "No comparison factor: the right side has only random terms. Expected "
                f"the comparison factor as the fixed term, e.g. {EXAMPLE}; add the column "
                "that identifies the systems being compared.", after, after + 1)
        if comparison.value == self.response.value:
            raise self.fail(
                f"The response '{comparison.value}' is also the comparison factor. Expected "
                "two different columns: the score left of '~', the compared systems right "
                "of it, e.g. 'correct ~ model'.", comparison.start, comparison.end)
        roles = [("comparison factor", comparison)] if not self.binomial else []
        for group in self.groups:
            src = self.formula[group.start:group.end]
            for tok in group.names:
                for role, other in roles + [("response", self.response)]:
                    if tok.value == other.value:
                        raise self.fail(
                            f"The random term '{src}' names the {role} '{tok.value}'. "
                            "Expected grouping columns of the items, e.g. '(1|subject)'; "
                            f"remove '{tok.text}' from the random term.",
                            tok.start, tok.end)
        first: dict[frozenset, tuple[tuple[str, ...], _Group]] = {}
        ordered: list[tuple[str, ...]] = []
        model_terms: list[tuple[str, ...]] = []
        for group in self.groups:
            for factors in group.terms:
                key = frozenset(factors)
                if key in first:
                    raise self.duplicate(factors, group, *first[key])
                first[key] = (factors, group)
                if comparison.value not in factors:
                    ordered.append(factors)
                elif len(factors) > 1:        # binomial: a model-by-unit term
                    model_terms.append(factors)
                else:
                    src = self.formula[group.start:group.end]
                    raise self.fail(
                        f"The random term '{src}' groups by the comparison factor "
                        f"'{comparison.value}' alone, but the model effects are fixed. Expected "
                        f"a model-by-unit term such as '(1|subject:{comparison.value})'; remove "
                        f"'{src}'.", group.start, group.end)
        ordered.sort(key=len)  # stable: ties keep first appearance
        return Spec(formula=self.formula, response=self.response.value,
                    comparison=comparison.value,
                    random=tuple(RandomTerm(f) for f in ordered),
                    model_terms=tuple(model_terms))

    def duplicate(self, factors: tuple[str, ...], group: _Group,
                  earlier: tuple[str, ...], earlier_group: _Group) -> FormulaError:
        def show(fs: tuple[str, ...], g: _Group) -> str:
            src = self.formula[g.start:g.end]
            return f"'(1|{':'.join(fs)})'" + (f" (from '{src}')" if len(g.terms) > 1 else "")

        if factors == earlier and len(group.terms) == len(earlier_group.terms) == 1:
            head = f"The random term '(1|{':'.join(factors)})' appears twice."
            why = "Expected each random term once"
        else:
            head = f"The random term {show(factors, group)} repeats {show(earlier, earlier_group)}."
            why = ("Expected each random term once (the order of the factors of an "
                   "interaction does not matter)" if factors != earlier else
                   "Expected each random term once (a nesting '(1|g/h)' already includes "
                   "'(1|g)' and '(1|g:h)')")
        return self.fail(f"{head} {why}; remove the repeated term.", group.start, group.end)



def _cbind(formula: str, lhs: list[Token]) -> tuple[Token, str | None, str | None] | None:
    """A binomial response ``cbind(k, f)`` / ``cbind(k, n - k)``: (k, failures, trials);
    None when ``lhs`` is not a ``cbind(...)`` call."""
    if not (len(lhs) >= 3 and lhs[0].kind == "name" and lhs[0].value == "cbind"
            and lhs[1].is_op("(") and lhs[-1].is_op(")")):
        return None
    inner = lhs[2:-1]
    names = [t.kind == "name" for t in inner]
    if len(inner) == 3 and names[0] and inner[1].text == "," and names[2]:
        return inner[0], inner[2].value, None
    if (len(inner) == 5 and names[0] and inner[1].text == "," and names[2]
            and inner[3].is_op("-") and names[4] and inner[4].value == inner[0].value):
        return inner[0], None, inner[2].value
    start, end = lhs[0].start, lhs[-1].end
    raise FormulaError(
        f"The response '{formula[start:end]}' is not cbind(successes, failures). Expected "
        "'cbind(k, f)' (columns of successes and failures) or 'cbind(k, n - k)' "
        "(successes and trials), e.g. 'cbind(k, n - k) ~ model + (1|question)'.",
        formula, start, end - start)


def _response(formula: str, lhs: list[Token], tilde: Token) -> Token:
    if not lhs:
        raise FormulaError(
            "Nothing is left of '~'. Expected the name of the score column, e.g. "
            "'correct ~ model'; add the response column before '~'.",
            formula, tilde.start, 1)
    if len(lhs) == 1 and lhs[0].kind == "name":
        return lhs[0]
    if len(lhs) == 1 and lhs[0].kind in ("badname", "dot"):
        raise lexical_error(formula, lhs[0])
    start, end = lhs[0].start, lhs[-1].end
    raise FormulaError(
        f"The response '{formula[start:end]}' is not a single column name. Expected one "
        "score column left of '~' (several or transformed responses are not supported); "
        "compute the score as one column in the data and name it, e.g. 'correct ~ model'.",
        formula, start, end - start)


def parse(formula: str, *, binomial: bool = False) -> Spec:
    """Parse an lme4-style mixrank formula.

    Parameters
    ----------
    formula : str
        ``response ~ comparison [+ (1|g) ...]``, where each ``g`` is a column
        name, an interaction ``a:b[:c]`` or a nesting ``a/b[/c]``.  Names
        contain letters, digits, ``_`` and ``.`` and do not start with a
        digit; any other name is backquoted, e.g. ``(1|`my col`)``.
        Whitespace is free.
    binomial : bool
        Read the formula literally as ``lme4::glmer(family = binomial)`` does
        (docs/glmm.md): the response may be ``cbind(k, f)`` or ``cbind(k, n -
        k)`` (``Spec.failures`` / ``Spec.trials``), and random terms naming
        the comparison factor with another grouping (``(1|subject:model)``)
        are model-by-unit terms (``Spec.model_terms``) instead of an error;
        ``(1|model)`` alone is still refused.

    Returns
    -------
    Spec
        ``formula`` (the text as given), ``response``, ``comparison`` and
        ``random``: the random intercepts with nesting expanded, in canonical
        order (by number of factors, then first appearance).

    Raises
    ------
    FormulaError
        For anything outside the grammar: no or several ``~``; a response that
        is not one name; no comparison factor; fixed covariates, fixed
        interactions or an explicit intercept (``1``, ``0``, ``-1``); random
        slopes, ``||``, ``(0|g)``; empty or unbalanced parentheses; a random
        term without parentheses; a term or grouping given twice (also
        ``(1|a:b) + (1|b:a)`` and ``(1|a/b) + (1|a)``); a random term naming
        the comparison factor or the response; function calls; operators
        other than ``~ + : / | ( )``.  The message quotes the formula with a
        caret under the offending characters; ``position`` and ``length`` of
        the error locate them (0-based offsets into the text as given).

    Notes
    -----
    Grammar (docs/methods.md §2)::

        formula  := name '~' rhs
        rhs      := term ('+' term)*        one term is the comparison name
        term     := name | '(' '1' '|' grouping ')'
        grouping := inter ('/' inter)*
        inter    := name (':' name)*

    Nesting follows base R: ``a/b/c`` is ``a + a:b + a:b:c`` and ``a:b/c``
    is ``a:b + a:b:c`` (``terms(~a:b/c)`` in R 4.2).  Interaction factors
    keep the order written, so the variance component of ``(1|b:a)`` is
    named ``"b:a"``.

    Validated against R 4.2 / lme4 1.1-31 (interactive check, not a committed
    reference): for the good formulas of ``tests/formula/test_parser.py``,
    the response, the fixed term and the set of groupings equal those of
    ``lme4::findbars`` / ``nobars`` (33 of 34; lme4 writes ``a/b`` as
    ``b:a``, the same grouping).  The exception is ``(1|a:b/c)``, which
    ``findbars`` mis-expands (it yields a variable named ``:``); there
    mixrank follows base R ``terms()``.  Whitespace differs from R on
    purpose: a newline never ends a formula here.

    References
    ----------
    Bates, Mächler, Bolker & Walker (2015), "Fitting Linear Mixed-Effects
    Models Using lme4", J. Stat. Softw. 67(1), §2.1 (formula module).

    Examples
    --------
    >>> spec = parse("correct ~ model + (1|subject/question) + (1|prompt)")
    >>> spec.term_names
    ('subject', 'prompt', 'subject:question')
    >>> str(spec)
    'correct ~ model + (1|subject) + (1|prompt) + (1|subject:question)'
    """
    if not isinstance(formula, str):
        raise FormulaError(
            f"Expected the formula as a string, got {type(formula).__name__} "
            f"{formula!r}; pass text such as {EXAMPLE}.")
    if not formula.strip():
        raise FormulaError(
            "The formula is empty. Expected 'response ~ comparison [+ (1|group) ...]', "
            f"e.g. {EXAMPLE}.", formula, 0, max(1, len(formula)))
    tokens = tokenize(formula)
    tildes = [k for k, t in enumerate(tokens) if t.is_op("~")]
    if not tildes:
        start, end = tokens[0].start, tokens[-1].end
        raise FormulaError(
            "The formula has no '~'. Expected 'response ~ comparison [+ (1|group) ...]': "
            "the score column left of '~', the comparison factor right of it, e.g. "
            f"{EXAMPLE}; add '~'.", formula, start, end - start)
    if len(tildes) > 1:
        second = tokens[tildes[1]]
        raise FormulaError(
            "The formula has a second '~'. Expected exactly one '~' between the response "
            "and the terms; remove the extra one.", formula, second.start, 1)
    closing = match_parentheses(formula, tokens)
    at = tildes[0]
    counts = _cbind(formula, tokens[:at]) if binomial else None
    response = counts[0] if counts else _response(formula, tokens[:at], tokens[at])
    parser = _Parser(formula, tokens, at, response, closing, binomial)
    parser.parse()
    spec = parser.finish()
    if counts:
        spec = replace(spec, failures=counts[1], trials=counts[2])
    return spec
