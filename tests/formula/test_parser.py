"""Tests for mixrank.formula.parser: tables of good and bad formulas.

Good formulas pin the response, the comparison factor and the exact tuple of
random-term names in canonical order (by number of factors, then first
appearance; docs/methods.md §2).  The expansion of nesting follows base R
(``attr(terms(~a:b/c), "term.labels")`` is ``"a:b" "a:b:c"`` in R 4.2).  The
GOOD table was checked once against ``lme4::findbars``/``nobars`` (R 4.2,
lme4 1.1-31): same response, fixed term and set of groupings for 33 of 34
formulas; the exception, ``(1|a:b/c)``, is mis-expanded by ``findbars``, and
R cannot parse the multi-line one (a newline ends an R expression).  Bad formulas pin the full error text and the
caret: each caret line is written under its formula, so the expected
position and length are read off the table.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mixrank.errors import FormulaError, MixrankError
from mixrank.formula import RandomTerm, Spec, parse
from mixrank.formula.parser import OPERATORS, tokenize

EX = "'correct ~ model + (1|subject)'"

# (formula, response, comparison, term names in canonical order)
GOOD = [
    ("correct ~ model", "correct", "model", ()),
    ("correct ~ model + (1|subject)", "correct", "model", ("subject",)),
    ("correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)",
     "correct", "model", ("subject", "prompt", "subject:question")),
    ("correct ~ model + (1|subject/question)",
     "correct", "model", ("subject", "subject:question")),
    ("correct~model+(1|subject)", "correct", "model", ("subject",)),
    ("  correct  ~  model  +  ( 1 | subject )  ", "correct", "model", ("subject",)),
    ("correct ~ model + (1 | subject : question)", "correct", "model", ("subject:question",)),
    ("correct ~ model + ( 1|subject/ question )",
     "correct", "model", ("subject", "subject:question")),
    ("y ~ m + (1|a/b/c)", "y", "m", ("a", "a:b", "a:b:c")),
    ("y ~ m + (1|a/b/c/d)", "y", "m", ("a", "a:b", "a:b:c", "a:b:c:d")),
    ("y ~ m + (1|a:b:c)", "y", "m", ("a:b:c",)),
    ("y ~ m + (1|a:b/c)", "y", "m", ("a:b", "a:b:c")),
    ("y ~ m + (1|a/b:c)", "y", "m", ("a", "a:b:c")),
    ("y ~ m + (1|b:a)", "y", "m", ("b:a",)),
    ("y ~ (1|subject) + model", "y", "model", ("subject",)),
    ("y ~ (1|a) + m + (1|b)", "y", "m", ("a", "b")),
    ("y ~ m + (1|a:b) + (1|c)", "y", "m", ("c", "a:b")),
    ("y ~ m + (1|prompt) + (1|subject)", "y", "m", ("prompt", "subject")),
    ("y ~ m + (1|a/b) + (1|c/d)", "y", "m", ("a", "c", "a:b", "c:d")),
    ("y ~ m + (1|a/b) + (1|c)", "y", "m", ("a", "c", "a:b")),
    ("y ~ m + (1|a:b) + (1|a:c) + (1|a)", "y", "m", ("a", "a:b", "a:c")),
    ("y ~ m + (1|a) + (1|b:a)", "y", "m", ("a", "b:a")),
    ("y ~ m + (1|a/b) + (1|b)", "y", "m", ("a", "b", "a:b")),
    ("y ~ m + (1|subject:question:prompt) + (1|subject)",
     "y", "m", ("subject", "subject:question:prompt")),
    ("correct ~ model + (1|subject) + (1|prompt) + (1|subject:prompt)",
     "correct", "model", ("subject", "prompt", "subject:prompt")),
    ("y~m+(1|a)+(1|b)+(1|c)+(1|d)", "y", "m", ("a", "b", "c", "d")),
    ("`my score` ~ `the model` + (1|`sub ject`)", "my score", "the model", ("sub ject",)),
    ("y ~ m + (1 |`a b`/c)", "y", "m", ("a b", "a b:c")),
    ("y ~ `1x` + (1|`2y`)", "y", "1x", ("2y",)),
    ("score.v2 ~ model_name + (1|item.id)", "score.v2", "model_name", ("item.id",)),
    (".hidden ~ model + (1|x1) + (1|x_2)", ".hidden", "model", ("x1", "x_2")),
    ("y\t~\nmodel\n+ (1|s)", "y", "model", ("s",)),
    ("réponse ~ modèle + (1|sujet)", "réponse", "modèle", ("sujet",)),
    ("Y ~ Model + (1|Subject) + (1|subject)", "Y", "Model", ("Subject", "subject")),
    ("correct ~ model + (1|sample)", "correct", "model", ("sample",)),
]


@pytest.mark.parametrize(("formula", "response", "comparison", "terms"), GOOD)
def test_good_formula(formula, response, comparison, terms):
    spec = parse(formula)
    assert isinstance(spec, Spec)
    assert spec.formula == formula
    assert spec.response == response
    assert spec.comparison == comparison
    assert spec.term_names == terms
    assert all(isinstance(t, RandomTerm) for t in spec.random)


def test_backquoted_name_with_colon_is_one_factor():
    spec = parse("y ~ m + (1|`a:b`) + (1|a:b)")
    assert [t.factors for t in spec.random] == [("a:b",), ("a", "b")]


def test_grouping_columns_first_appearance():
    spec = parse("y ~ m + (1|q:s) + (1|p) + (1|s)")
    assert spec.grouping_columns == ("p", "s", "q")  # canonical order: p, s, q:s


# (formula, caret line under it, full message)
BAD = [
    ("",
     "^",
     "The formula is empty. Expected 'response ~ comparison [+ (1|group) ...]', "
     f"e.g. {EX}."),
    ("correct model",
     "^^^^^^^^^^^^^",
     "The formula has no '~'. Expected 'response ~ comparison [+ (1|group) ...]': the "
     "score column left of '~', the comparison factor right of it, e.g. "
     f"{EX}; add '~'."),
    ("a ~ b ~ c",
     "      ^",
     "The formula has a second '~'. Expected exactly one '~' between the response and "
     "the terms; remove the extra one."),
    (" ~ model",
     " ^",
     "Nothing is left of '~'. Expected the name of the score column, e.g. "
     "'correct ~ model'; add the response column before '~'."),
    ("cbind(a,b) ~ model",
     "^^^^^^^^^^",
     "The response 'cbind(a,b)' is not a single column name. Expected one score column "
     "left of '~' (several or transformed responses are not supported); compute the "
     "score as one column in the data and name it, e.g. 'correct ~ model'."),
    ("a + b ~ model",
     "^^^^^",
     "The response 'a + b' is not a single column name. Expected one score column "
     "left of '~' (several or transformed responses are not supported); compute the "
     "score as one column in the data and name it, e.g. 'correct ~ model'."),
    ("correct ~ (1|subject)",
     "         ^",
     "No comparison factor: the right side has only random terms. Expected the "
     f"comparison factor as the fixed term, e.g. {EX}; add the column that identifies "
     "the systems being compared."),
    ("correct ~",
     "         ^",
     "Nothing is right of '~'. Expected the comparison factor, e.g. 'correct ~ model'; "
     "add the column that identifies the systems being compared."),
    # fixed parts beyond the comparison factor: mixrank.formula.fixed (tests/formula/test_fixed.py)
    ("correct ~ model + temperature",
     "                  ^^^^^^^^^^^",
     "The covariate term 'temperature' is purely additive: it shifts both models' scores "
     "on a cell alike, so it cancels in the paired differences 'model_a - model_b' and "
     "cannot be estimated. Expected it crossed with the comparison factor; write "
     "'model * temperature' to ask whether the gap depends on it; remove 'temperature'; "
     "or, if it groups the items, write it as a random intercept '(1|temperature)'."),
    ("correct ~ model:x",
     "          ^^^^^",
     "The comparison factor 'model' enters only in interactions. Expected its main effect "
     "too (the overall gap), e.g. 'correct ~ model * x' or 'correct ~ model + model:x'; "
     "add 'model +'."),
    ("y ~ model/x",
     "         ^",
     "Nesting 'model/x' in the fixed part is not supported. Expected the comparison "
     "factor alone as fixed term; nesting belongs in a random term, e.g. '(1|a/b)'."),
    ("correct ~ model + (1|subject",
     "                  ^",
     "This '(' is never closed. Expected a matching ')', as in '(1|subject)'; add the "
     "missing ')'."),
    ("correct ~ model + 1|subject)",
     "                           ^",
     "This ')' has no matching '('. Expected every ')' to close an earlier '(', as in "
     "'(1|subject)'; remove it or add the missing '('."),
    ("correct ~ model + (x|g)",
     "                   ^",
     "Random slope 'x' in '(x|g)' is not supported yet. Expected a random intercept "
     "'(1|g)'; remove the slope: write '(1|g)'."),
    ("correct ~ model + (1 + x|g)",
     "                       ^",
     "Random slope 'x' in '(1 + x|g)' is not supported yet. Expected a random intercept "
     "'(1|g)'; remove the slope: write '(1|g)'."),
    ("correct ~ model + (0 + x|g)",
     "                   ^^^^^",
     "Random slope '0 + x' in '(0 + x|g)' is not supported yet. Expected a random "
     "intercept '(1|g)'; remove the slope: write '(1|g)'."),
    ("correct ~ model + (1||g)",
     "                    ^^",
     "Double bar '||' in '(1||g)' (uncorrelated random effects) is not supported. "
     "Expected a random intercept with a single bar, '(1|g)'; replace '||' with '|' "
     "and drop any slope."),
    ("correct ~ model + (0|g)",
     "                   ^",
     "'(0|g)' has no random intercept ('0' removes it), so it adds nothing. Expected "
     "'(1|g)'; write '(1|g)' or remove the term."),
    ("correct ~ model + (1|)",
     "                     ^",
     "Nothing after '|' in '(1|)'. Expected a grouping column, e.g. '(1|subject)'; "
     "name the column whose levels share a random intercept."),
    ("correct ~ model + (|g)",
     "                   ^",
     "Nothing before '|' in '(|g)'. Expected '1' (a random intercept), e.g. '(1|g)'; "
     "write '(1|g)'."),
    ("correct ~ model + ()",
     "                  ^^",
     "Empty parentheses '()'. Expected a random term '(1|group)', e.g. '(1|subject)'; "
     "fill them in or remove them."),
    ("correct ~ model + (1|subject) + (1|subject)",
     "                                ^^^^^^^^^^^",
     "The random term '(1|subject)' appears twice. Expected each random term once; "
     "remove the repeated term."),
    ("y ~ m + (1|a:b)+(1|b:a)",
     "                ^^^^^^^",
     "The random term '(1|b:a)' repeats '(1|a:b)'. Expected each random term once (the "
     "order of the factors of an interaction does not matter); remove the repeated term."),
    ("y ~ m + (1|a/b) + (1|a)",
     "                  ^^^^^",
     "The random term '(1|a)' repeats '(1|a)' (from '(1|a/b)'). Expected each random "
     "term once (a nesting '(1|g/h)' already includes '(1|g)' and '(1|g:h)'); remove "
     "the repeated term."),
    ("y ~ m + (1|a:b) + (1|b/a)",
     "                  ^^^^^^^",
     "The random term '(1|b:a)' (from '(1|b/a)') repeats '(1|a:b)'. Expected each "
     "random term once (the order of the factors of an interaction does not matter); "
     "remove the repeated term."),
    ("y ~ model + (1|model)",
     "               ^^^^^",
     "The random term '(1|model)' names the comparison factor 'model'. Expected grouping "
     "columns of the items, e.g. '(1|subject)'; remove 'model' from the random term."),
    ("y ~ (1|s:model) + model",
     "         ^^^^^",
     "The random term '(1|s:model)' names the comparison factor 'model'. Expected "
     "grouping columns of the items, e.g. '(1|subject)'; remove 'model' from the random "
     "term."),
    ("y ~ model + (1|y)",
     "               ^",
     "The random term '(1|y)' names the response 'y'. Expected grouping columns of the "
     "items, e.g. '(1|subject)'; remove 'y' from the random term."),
    ("model ~ model",
     "        ^^^^^",
     "The response 'model' is also the comparison factor. Expected two different "
     "columns: the score left of '~', the compared systems right of it, e.g. "
     "'correct ~ model'."),
    ("y ~ model + (1|a*b)",
     "                ^",
     "Operator '*' (crossing, 'a*b' = 'a + b + a:b') is not supported. Expected terms "
     "joined by '+', with ':' and '/' only inside random terms, e.g. "
     "'correct ~ model + (1|subject/question)'; write the terms out, e.g. "
     "'(1|a) + (1|b) + (1|a:b)'."),
    ("y ~ model ^ 2",
     "          ^",
     "Operator '^' (crossing up to an order, '(a+b)^2') is not supported. Expected "
     "terms joined by '+', with ':' and '/' only inside random terms, e.g. "
     "'correct ~ model + (1|subject/question)'; write the terms out, e.g. "
     "'(1|a) + (1|b) + (1|a:b)'."),
    ("y ~ model - x",
     "          ^",
     "Operator '-' (removes a term) is not supported. Expected terms joined by '+', "
     "with ':' and '/' only inside random terms, e.g. "
     "'correct ~ model + (1|subject/question)'; leave the term out instead."),
    ("y ~ model + x %in% g",
     "              ^^^^",
     "Operator '%in%' (nesting, 'b %in% a') is not supported. Expected terms joined by "
     "'+', with ':' and '/' only inside random terms, e.g. "
     "'correct ~ model + (1|subject/question)'; write nesting inside a random term, "
     "e.g. '(1|a/b)'."),
    ("y ~ model + a$b",
     "             ^",
     "Unexpected character '$'. Expected column names and the operators '~', '+', ':', "
     "'/', '|', '(' and ')'; remove it, or backquote a column name that contains it, "
     "e.g. '`a$b`'."),
    ("y ~ model, x",
     "         ^",
     "Unexpected character ','. Expected column names and the operators '~', '+', ':', "
     "'/', '|', '(' and ')'; remove it, or backquote a column name that contains it, "
     "e.g. '`a,b`'."),
    ("y ~ model + (1|g) +",
     "                  ^",
     "Trailing '+' with no term after it. Expected a term after '+', e.g. "
     "'+ (1|subject)'; remove the '+' or add the missing term."),
    ("y ~ model + (1|g) + + (1|h)",
     "                    ^",
     "Empty term: this '+' has no term before it. Expected a term before each '+', "
     f"e.g. {EX}; remove the extra '+'."),
    ("y ~ + model",
     "    ^",
     "Empty term: this '+' has no term before it. Expected a term before each '+', "
     f"e.g. {EX}; remove the extra '+'."),
    ("y ~ model + 1|subject:question",
     "            ^^^^^^^^^^^^^^^^^^",
     "Random term '1|subject:question' is not in parentheses. Expected "
     "'(1|subject:question)': without parentheses '|' would split the whole formula; "
     "write '(1|subject:question)'."),
    ("y ~ model|g",
     "         ^",
     "'|' outside parentheses. Random terms are written in parentheses after the "
     f"comparison factor, e.g. {EX}; put the random term in parentheses."),
    ("y ~ model + (1|a:a)",
     "                 ^",
     "The grouping 'a' appears twice in '(1|a:a)'. Expected distinct columns in an "
     "interaction or nesting; remove the repeated 'a'."),
    ("y ~ model + (1|s/q/s)",
     "                   ^",
     "The grouping 's' appears twice in '(1|s/q/s)'. Expected distinct columns in an "
     "interaction or nesting; remove the repeated 's'."),
    ("y ~ model + log(x)",
     "            ^^^^^^",
     "Function call 'log(x)' is not supported. Expected plain column names; compute the "
     "transformed column in the data first and name it in the formula."),
    ("y ~ model + (1|factor(g))",
     "               ^^^^^^^^^",
     "Function call 'factor(g)' is not supported. Expected plain column names; compute "
     "the transformed column in the data first and name it in the formula."),
    ("y ~ 1 + model",
     "    ^",
     "'1' sets the intercept, but the comparison factor's intercept is implicit. "
     f"Expected only the comparison factor as fixed term, e.g. {EX}; remove '1'."),
    ("y ~ 0 + model",
     "    ^",
     "'0' sets the intercept, but the comparison factor's intercept is implicit. "
     f"Expected only the comparison factor as fixed term, e.g. {EX}; remove '0'."),
    ("y ~ model - 1",
     "          ^^^",
     "'- 1' sets the intercept, but the comparison factor's intercept is implicit. "
     f"Expected only the comparison factor as fixed term, e.g. {EX}; remove '- 1'."),
    ("y ~ -1 + model",
     "    ^^",
     "'-1' sets the intercept, but the comparison factor's intercept is implicit. "
     f"Expected only the comparison factor as fixed term, e.g. {EX}; remove '-1'."),
    ("y ~ model + model",
     "            ^^^^^",
     "The comparison factor 'model' appears twice. Expected it once, as the only fixed "
     "term; remove the repeated 'model'."),
    ("y ~ model + (model)",
     "            ^^^^^^^",
     "Parentheses '(model)' do not enclose a random term. Expected parentheses only "
     "around random terms '(1|group)', e.g. '(1|subject)'; remove the extra "
     "parentheses."),
    ("y ~ model + ((1|g))",
     "            ^^^^^^^",
     "Parentheses '((1|g))' do not enclose a random term. Expected parentheses only "
     "around random terms '(1|group)', e.g. '(1|subject)'; remove the extra "
     "parentheses."),
    ("y ~ model (1|g)",
     "          ^",
     "Missing '+' before '(1|g)'. Expected terms joined by '+', e.g. "
     f"{EX}; add '+' before '('."),
    ("y ~ model + (1|a b)",
     "                 ^",
     "Missing ':' or '/' between 'a' and 'b' in '(1|a b)'. Expected grouping columns "
     "joined by ':' (interaction) or '/' (nesting); write 'a:b' or 'a/b'."),
    ("y ~ model + (1|a+b)",
     "                ^",
     "'+' inside the random term '(1|a+b)'. Expected one grouping per random term; "
     "write one term per grouping, e.g. '(1|subject) + (1|prompt)'."),
    ("y ~ model + (1|a:)",
     "                ^",
     "':' at the end of '(1|a:)' has no column name after it. Expected a name on each "
     "side of ':', e.g. '(1|subject:question)'; add the missing name or remove ':'."),
    ("y ~ model + (1|/a)",
     "               ^",
     "'/' in '(1|/a)' has no column name before it. Expected a name on each side of "
     "'/', e.g. '(1|subject/question)'."),
    ("y ~ model + (1|g|h)",
     "                ^",
     "Second '|' in '(1|g|h)'. Expected one '|' per random term, e.g. '(1|subject)'."),
    ("y ~ model + (1|g):x",
     "                 ^",
     "Unexpected ':' after '(1|g)'. Expected '+' or the end of the formula; ':' and '/' "
     "belong inside a random term, e.g. '(1|a:b)' or '(1|a/b)'."),
    ("y ~ model + 2",
     "            ^",
     "Unexpected number '2'. Expected the comparison factor or a random term "
     f"'(1|group)', e.g. {EX}; remove '2'."),
    ("y ~ .",
     "    ^",
     "'.' (all other columns) is not supported. Expected explicit column names; write "
     f"the comparison factor and each random term, e.g. {EX}."),
    ("1x ~ model",
     "^^",
     "'1x' is not a valid name: names cannot start with a digit. Expected a column "
     "name; backquote such a name, e.g. '`1x`'."),
    ("y ~ model + (1|`x)",
     "               ^",
     "This backquoted name is never closed. Expected a closing '`' after the name, "
     "e.g. '`my col`'; add the missing backquote."),
    ("y ~ model + (1|``)",
     "               ^^",
     "Empty backquoted name '``'. Expected a column name between the backquotes, e.g. "
     "'`my col`'; write the name or remove the backquotes."),
]


@pytest.mark.parametrize(("formula", "carets", "message"), BAD,
                         ids=[repr(b[0]) for b in BAD])
def test_bad_formula(formula, carets, message):
    position = len(carets) - len(carets.lstrip(" "))
    length = carets.count("^")
    assert re.fullmatch(r" *\^+", carets), "malformed caret line in the table"
    with pytest.raises(FormulaError) as info:
        parse(formula)
    err = info.value
    assert err.reason == message
    assert (err.position, err.length) == (position, length)
    assert err.formula == formula
    assert str(err) == f"{message}\n    {formula}\n    {carets}"


def test_tables_are_large_enough():
    assert len(GOOD) >= 30
    assert len(BAD) >= 30


def test_position_is_offset_into_text_as_given():
    # leading whitespace and tabs count as characters, nothing is stripped
    with pytest.raises(FormulaError) as info:
        parse("\t  y ~ m + (x|g)")
    assert info.value.position == 12
    assert "\t  y ~ m + (x|g)"[12] == "x"


@pytest.mark.parametrize("symbol", [s for s, op in OPERATORS.items() if not op.supported])
def test_every_unsupported_operator_is_reported_under_itself(symbol):
    formula = f"y ~ m + (1|a {symbol} b)"
    with pytest.raises(FormulaError) as info:
        parse(formula)
    err = info.value
    assert formula[err.position:err.position + err.length] == symbol


def test_unknown_infix_operator():
    with pytest.raises(FormulaError) as info:
        parse("y ~ m %o% x")
    assert (info.value.position, info.value.length) == (6, 3)
    assert info.value.reason.startswith(
        "Operator '%o%' (a user-defined R infix operator) is not supported.")


def test_error_types():
    with pytest.raises(FormulaError) as info:
        parse("y ~")
    assert isinstance(info.value, MixrankError)
    assert isinstance(info.value, ValueError)


def test_non_string_formula():
    with pytest.raises(FormulaError, match=r"Expected the formula as a string, got int 3"):
        parse(3)


def test_tokenize_positions():
    toks = tokenize("y ~ `a b` + (1|s:q)")
    assert [(t.kind, t.value) for t in toks] == [
        ("name", "y"), ("op", "~"), ("name", "a b"), ("op", "+"), ("op", "("),
        ("number", "1"), ("op", "|"), ("name", "s"), ("op", ":"), ("name", "q"),
        ("op", ")")]
    assert all("y ~ `a b` + (1|s:q)"[t.start:t.end] == t.text for t in toks)


# -- equality, hashing, round trips -------------------------------------------

EQUAL = [
    ("correct ~ model + (1|subject:question) + (1|subject)",
     "correct~model+(1|subject)+(1|subject:question)"),
    ("y ~ m + (1|a/b)", "y ~ m + (1|a:b) + (1|a)"),
    ("y ~ m + (1|a/b/c)", "  y ~ (1 | a : b : c) + (1|a:b) + m + (1|a)"),
    ("y ~ m + (1|g)", "y\n~\tm\n+\t(1\n|\tg)"),
    ("y ~ (1|g) + m", "y ~ m + (1|g)"),
]


@pytest.mark.parametrize(("a", "b"), EQUAL)
def test_equal_specs(a, b):
    sa, sb = parse(a), parse(b)
    assert sa == sb
    assert hash(sa) == hash(sb)
    assert sa.formula == a and sb.formula == b


def test_equal_specs_for_reordered_terms_of_equal_size():
    assert parse("y ~ m + (1|a) + (1|b)") == parse("y ~ m + (1|b) + (1|a)")


@pytest.mark.parametrize(("a", "b"), [
    ("y ~ m + (1|g)", "z ~ m + (1|g)"),
    ("y ~ m + (1|g)", "y ~ n + (1|g)"),
    ("y ~ m + (1|g)", "y ~ m + (1|h)"),
    ("y ~ m + (1|g)", "y ~ m"),
    ("y ~ m + (1|a/b)", "y ~ m + (1|a:b)"),
])
def test_unequal_specs(a, b):
    assert parse(a) != parse(b)


def test_hashable():
    specs = {parse(f) for f, *_ in GOOD}
    assert len(specs) == len({(r, c, t) for _, r, c, t in GOOD})
    table = {parse("y ~ m + (1|a/b)"): "nested"}
    assert table[parse("y~m+(1|a)+(1|a:b)")] == "nested"


_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")


@pytest.mark.parametrize("formula", [f for f, *_ in GOOD if "`" not in f])
def test_str_round_trips(formula):
    spec = parse(formula)
    again = parse(str(spec))
    assert again == spec
    assert str(again) == str(spec)


def test_str_round_trips_backquoted_names():
    spec = parse("`my score` ~ model + (1|`sub ject`)")
    assert parse(str(spec)) == spec


# -- property tests -------------------------------------------------------------

_plain_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_.]{0,5}", fullmatch=True)
_quoted_names = st.text(st.characters(blacklist_characters="`",
                                      blacklist_categories=("Cs",)),
                        min_size=1, max_size=6)
_space = st.sampled_from(["", " ", "  ", "\t", "\n"])


@st.composite
def formulas(draw):
    """A random well-formed formula and the (response, comparison, terms) it encodes."""
    pool = draw(st.lists(st.one_of(_plain_names, _quoted_names), min_size=2,
                         max_size=8, unique=True))
    response, comparison, columns = pool[0], pool[1], pool[2:]
    groups, seen = [], set()
    if columns:
        for _ in range(draw(st.integers(0, 4))):
            factors = draw(st.lists(st.sampled_from(columns), min_size=1, max_size=3,
                                    unique=True))
            seps = [draw(st.sampled_from(":/")) for _ in factors[1:]]
            terms, acc = [], ()
            for k, f in enumerate(factors):
                if k and seps[k - 1] == "/":
                    terms.append(acc)
                acc = acc + (f,)
            terms.append(acc)
            keys = [frozenset(t) for t in terms]
            if seen.isdisjoint(keys):  # keep the formula well formed: no repeats
                seen.update(keys)
                groups.append((factors, seps, terms))

    def name(n):
        if _PLAIN.fullmatch(n) and not draw(st.booleans()):
            return n
        return f"`{n}`"

    def sp():
        return draw(_space)

    parts = []
    for factors, seps, _ in groups:
        g = sp() + name(factors[0])
        for sep, f in zip(seps, factors[1:], strict=True):
            g += sp() + sep + sp() + name(f)
        parts.append("(" + sp() + "1" + sp() + "|" + g + sp() + ")")
    parts.insert(draw(st.integers(0, len(parts))), name(comparison))
    rhs = (sp() + "+" + sp()).join(parts)
    text = sp() + name(response) + sp() + "~" + sp() + rhs + sp()
    expected = [t for _, _, terms in groups for t in terms]
    expected.sort(key=len)
    return text, response, comparison, tuple(expected)


@settings(max_examples=300, deadline=None)
@given(formulas())
def test_random_well_formed_formulas_parse_to_their_terms(case):
    text, response, comparison, terms = case
    spec = parse(text)
    assert spec.response == response
    assert spec.comparison == comparison
    assert tuple(t.factors for t in spec.random) == terms
    assert spec.formula == text


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(list("yms ab1~+:/|()*-^%`$,.")), max_size=25))
def test_any_text_parses_or_raises_formula_error_with_caret_in_range(text):
    try:
        parse(text)
    except FormulaError as err:
        assert err.position is not None
        assert 0 <= err.position and err.position + err.length <= len(text) + 1
        assert err.reason and err.formula == text
