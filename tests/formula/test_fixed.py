"""Model x covariate formulas (mixrank.formula.fixed): tables of good and bad formulas.

Reference: R's term algebra (``terms(~ model * (x + z))``) as formulaic
implements it; the fixed part of the paired differences drops ``model`` from
each term containing it (docs/interactions.md §1).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mixrank.errors import FormulaError
from mixrank.formula import InteractionSpec, Spec, parse

GOOD = [
    # formula, d-terms, covariates, random term names
    ("correct ~ model * x + (1|subject)", (("x",),), ("x",), ("subject",)),
    ("correct ~ model + model:x", (("x",),), ("x",), ()),
    ("correct ~ model * (x + z) + (1|s) + (1|s:q)", (("x",), ("z",)), ("x", "z"), ("s", "s:q")),
    ("correct ~ model * x:z", (("x", "z"),), ("x", "z"), ()),
    ("correct ~ model * x * z", (("x",), ("z",), ("x", "z")), ("x", "z"), ()),
    ("correct ~ (1|subject) + model * x", (("x",),), ("x",), ("subject",)),
    ("correct ~ model * x + x", (("x",),), ("x",), ()),
    ("y ~ model * `my col` + (1|g)", (("my col",),), ("my col",), ("g",)),
]

BAD = [
    ("correct ~ model + x", "purely additive", (18, 1)),
    ("correct ~ model * x + z", "'z' is purely additive", (22, 1)),
    ("correct ~ model:x", "enters only in interactions", (10, 5)),
    ("correct ~ model * x + (1|x)", "both a fixed covariate and the random term", (18, 1)),
    ("correct ~ model * log(x)", "Function call 'log(...)'", (18, 3)),
    ("correct ~ 0 + model * x", "sets the intercept", (10, 1)),
    ("correct ~ model * x ^ 2", "Unexpected operator '^'", (20, 1)),
    ("correct ~ model * x + (1|s) + (1|s)", "appears twice", (30, 5)),
    ("correct ~ model * correct", "is the response", (18, 7)),
]


@pytest.mark.parametrize("formula,terms,covs,random", GOOD, ids=[g[0] for g in GOOD])
def test_good(formula, terms, covs, random):
    spec = parse(formula)
    assert isinstance(spec, InteractionSpec)
    assert spec.comparison in ("model",) and spec.fixed_terms == terms
    assert spec.covariates == covs and spec.term_names == random
    assert spec.formula == formula
    assert parse(str(spec)) == spec


@pytest.mark.parametrize("formula,message,where", BAD, ids=[b[0] for b in BAD])
def test_bad(formula, message, where):
    with pytest.raises(FormulaError) as info:
        parse(formula)
    err = info.value
    assert message in err.reason
    assert (err.position, err.length) == where
    assert err.formula == formula


def test_plain_formulas_stay_plain_specs():
    spec = parse("correct ~ model + (1|subject)")
    assert type(spec) is Spec
    assert spec != parse("correct ~ model * x + (1|subject)")


def test_d_formula_and_interaction_names():
    spec = parse("correct ~ model * (x + z:w)")
    assert spec.d_formula == "1 + x + z:w"
    assert spec.interaction_names == ("model:x", "model:z:w")


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from(list("ymx z~+*:()|1")), max_size=22))
def test_any_text_parses_or_raises_formula_error(text):
    try:
        parse(text)
    except FormulaError as err:
        assert err.position is None or 0 <= err.position <= len(text)
