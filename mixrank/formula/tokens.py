"""Stage formula: the operator table and the tokenizer of formula text.

Inputs: a formula string.
Outputs: a list of :class:`Token` (names, numbers, operators, and marked
error tokens that the parser reports in context).
Contents: :data:`OPERATORS` (the operator table: what each symbol means and
whether mixrank supports it), :class:`Operator`, :class:`Token`,
:func:`tokenize` (a small hand-written tokenizer), and the helpers the parser
shares with it: :data:`EXAMPLE`, :func:`number_is`, :func:`lexical_error`
and :func:`match_parentheses`.  :mod:`mixrank.formula.parser` builds the
:class:`~mixrank.formula.spec.Spec` from the tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mixrank.errors import FormulaError

__all__ = ["EXAMPLE", "OPERATORS", "Operator", "Token", "tokenize", "number_is", "lexical_error",
           "match_parentheses"]

#: The example formula quoted by error messages.
EXAMPLE = "'correct ~ model + (1|subject)'"


@dataclass(frozen=True)
class Operator:
    """One entry of the operator table: ``symbol`` as written, its ``meaning``
    in an R formula, whether mixrank ``supported`` it (where: see
    :func:`parse`) and, if not, ``advice`` on how to rewrite the formula."""

    symbol: str
    meaning: str
    supported: bool
    advice: str = ""


#: The operator table.  The tokenizer recognises exactly these symbols (longest
#: first, plus any R infix ``%op%``); the parser accepts the supported ones in
#: their place and reports the unsupported ones with their ``advice``.
OPERATORS: dict[str, Operator] = {op.symbol: op for op in (
    Operator("~", "separates the response from the terms", True),
    Operator("+", "adds a term", True),
    Operator(":", "interaction of grouping columns, inside a random term", True),
    Operator("/", "nesting of grouping columns, inside a random term", True),
    Operator("|", "separates '1' from the grouping in a random term", True),
    Operator("(", "opens a random term", True),
    Operator(")", "closes a random term", True),
    Operator("||", "uncorrelated random effects", False,
             "replace '||' with '|'"),
    Operator("*", "crossing, 'a*b' = 'a + b + a:b'", False,
             "write the terms out, e.g. '(1|a) + (1|b) + (1|a:b)'"),
    Operator("^", "crossing up to an order, '(a+b)^2'", False,
             "write the terms out, e.g. '(1|a) + (1|b) + (1|a:b)'"),
    Operator("-", "removes a term", False, "leave the term out instead"),
    Operator("%in%", "nesting, 'b %in% a'", False,
             "write nesting inside a random term, e.g. '(1|a/b)'"),
)}

_OTHER_INFIX = Operator("%op%", "a user-defined R infix operator", False, "remove it")
_SYMBOLS = sorted(OPERATORS, key=len, reverse=True)
_INFIX = re.compile(r"%[^%\s]*%")
_NUMBER = re.compile(r"\d+(\.\d*)?|\.\d+")
_DIGITS = "0123456789"


@dataclass(frozen=True)
class Token:
    """A token: ``kind`` is ``"name"`` (plain or backquoted), ``"number"``,
    ``"op"`` (operator table or R ``%op%``), ``"badname"`` (starts with a
    digit), ``"dot"`` (a lone ``.``) or ``"error"`` (a character outside the
    grammar); ``text`` is as written (``formula[start:end]``), ``value`` the
    name without backquotes (else equal to ``text``)."""

    kind: str
    text: str
    value: str
    start: int
    end: int

    def is_op(self, *symbols: str) -> bool:
        """Whether this is one of the operators ``symbols``."""
        return self.kind == "op" and self.value in symbols


def _is_word_char(ch: str) -> bool:
    return ch.isalpha() or ch in _DIGITS or ch in "_."


def tokenize(formula: str) -> list[Token]:
    """Split formula text into tokens (whitespace is dropped).

    Only a malformed backquoted name raises here; characters outside the
    grammar become ``"error"`` tokens so that the parser can report them in
    context (e.g. a response ``cbind(a,b)`` as a whole).

    Parameters
    ----------
    formula : str
        The formula text.

    Returns
    -------
    list of Token
        The tokens in order.

    Raises
    ------
    FormulaError
        A backquote is never closed, or encloses nothing.
    """
    tokens: list[Token] = []
    i, n = 0, len(formula)
    while i < n:
        ch = formula[i]
        if ch.isspace():
            i += 1
        elif ch == "`":
            j = formula.find("`", i + 1)
            if j < 0:
                raise FormulaError(
                    "This backquoted name is never closed. Expected a closing '`' after "
                    "the name, e.g. '`my col`'; add the missing backquote.",
                    formula, i, 1)
            if j == i + 1:
                raise FormulaError(
                    "Empty backquoted name '``'. Expected a column name between the "
                    "backquotes, e.g. '`my col`'; write the name or remove the backquotes.",
                    formula, i, 2)
            tokens.append(Token("name", formula[i:j + 1], formula[i + 1:j], i, j + 1))
            i = j + 1
        elif _is_word_char(ch):
            j = i
            while j < n and _is_word_char(formula[j]):
                j += 1
            word = formula[i:j]
            if _NUMBER.fullmatch(word):
                kind = "number"
            elif word[0] in _DIGITS:
                kind = "badname"
            elif word == ".":
                kind = "dot"
            else:
                kind = "name"
            tokens.append(Token(kind, word, word, i, j))
            i = j
        else:
            sym = next((s for s in _SYMBOLS if formula.startswith(s, i)), None)
            if sym is None and (m := _INFIX.match(formula, i)):
                sym = m.group()
            kind, sym = ("op", sym) if sym else ("error", ch)
            tokens.append(Token(kind, sym, sym, i, i + len(sym)))
            i += len(sym)
    return tokens


def number_is(tok: Token | None, *values: float) -> bool:
    return tok is not None and tok.kind == "number" and float(tok.value) in values


def lexical_error(formula: str, tok: Token) -> FormulaError:
    """The error for a token that is never valid where it stands."""
    if tok.kind == "badname":
        msg = (f"'{tok.text}' is not a valid name: names cannot start with a digit. "
               f"Expected a column name; backquote such a name, e.g. '`{tok.text}`'.")
    elif tok.kind == "dot":
        msg = ("'.' (all other columns) is not supported. Expected explicit column names; "
               f"write the comparison factor and each random term, e.g. {EXAMPLE}.")
    elif tok.kind == "error":
        msg = (f"Unexpected character '{tok.text}'. Expected column names and the operators "
               "'~', '+', ':', '/', '|', '(' and ')'; remove it, or backquote a column name "
               f"that contains it, e.g. '`a{tok.text}b`'.")
    else:
        op = OPERATORS.get(tok.value, _OTHER_INFIX)
        msg = (f"Operator '{tok.value}' ({op.meaning}) is not supported. Expected terms "
               "joined by '+', with ':' and '/' only inside random terms, e.g. "
               f"'correct ~ model + (1|subject/question)'; {op.advice}.")
    return FormulaError(msg, formula, tok.start, tok.end - tok.start)


def match_parentheses(formula: str, tokens: list[Token]) -> dict[int, int]:
    """Map the index of each '(' to the index of its ')'; reject unbalanced ones."""
    closing: dict[int, int] = {}
    stack: list[int] = []
    for k, tok in enumerate(tokens):
        if tok.is_op("("):
            stack.append(k)
        elif tok.is_op(")"):
            if not stack:
                raise FormulaError(
                    "This ')' has no matching '('. Expected every ')' to close an earlier "
                    "'(', as in '(1|subject)'; remove it or add the missing '('.",
                    formula, tok.start, 1)
            closing[stack.pop()] = k
    if stack:
        raise FormulaError(
            "This '(' is never closed. Expected a matching ')', as in '(1|subject)'; "
            "add the missing ')'.", formula, tokens[stack[-1]].start, 1)
    return closing
