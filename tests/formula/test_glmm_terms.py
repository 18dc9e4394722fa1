"""The binomial formula is read by the one parser: its errors quote the user's own text with
the caret under the offending characters (never a rewritten formula), and the parsed pieces
(cbind response, model-by-unit terms, ``model * x``) come out of the one Spec."""

from __future__ import annotations

import pytest

import mixrank
from mixrank import FormulaError
from mixrank.formula import parse
from mixrank.formula.glmm_terms import parse_glmm


def _caret(err: FormulaError) -> tuple[str, int, int]:
    """The quoted formula line and the caret's column and width, from the message text."""
    lines = str(err).splitlines()
    quoted, caret = lines[-2][4:], lines[-1][4:]
    return quoted, len(caret) - len(caret.lstrip(" ")), caret.count("^")


@pytest.mark.parametrize("formula, bad", [
    ("cbind(k, n - k) ~ model + (x|question)", "x"),
    ("cbind(k, n - k) ~ model + (1|model)", "(1|model)"),
    ("correct ~ model + (1|subject:model) + (1|question) + (1|question)", "(1|question)"),
    ("cbind(k, n - k) ~ model + (1|subject:model) + (1|prompt", "("),
    ("cbind(k, n + k) ~ model + (1|question)", "cbind(k, n + k)"),
    ("cbind(k,  f) ~ model + log(x) + (1|question)", "log(x)"),
    ("cbind(k, n - k) ~ model * x * z + (1|question)", "model * x * z"),
])
def test_binomial_errors_quote_the_users_text_with_the_caret_in_place(formula, bad):
    with pytest.raises(FormulaError) as info:
        parse_glmm(formula)
    quoted, col, width = _caret(info.value)
    assert quoted == formula and info.value.formula == formula
    want = formula.rindex(bad) if bad in ("(1|question)", "(") else formula.index(bad)
    assert (col, width) == (want, len(bad)) == (info.value.position, info.value.length)


def test_binomial_fit_error_quotes_the_original_formula():
    formula = "cbind(k, n - k) ~ model + (x|question)"
    with pytest.raises(FormulaError) as info:
        mixrank.fit(formula, mixrank.load_example(), family="binomial")
    quoted, col, width = _caret(info.value)
    assert quoted == formula and (col, width) == (formula.index("x|"), 1)
    assert "k ~ model" not in str(info.value).replace(formula, "")


def test_the_one_spec_carries_the_binomial_pieces():
    gf = parse_glmm("cbind(k, n - k) ~ model + (1|subject/model) + (1|question)")
    assert gf.trials == "n" and gf.failures is None and gf.spec.response == "k"
    assert gf.model_terms == (("subject", "model"),)
    assert gf.spec.term_names == ("subject", "question")
    spec = parse("cbind(k, f) ~ model * x + (1|subject:model)", binomial=True)
    assert (spec.failures, spec.trials, spec.model_terms) == ("f", None, (("subject", "model"),))
    assert parse_glmm("cbind(k, f) ~ model * x + (1|subject:model)").by == "x"
    # the gaussian reading is unchanged: model-by-unit terms and cbind stay errors there
    with pytest.raises(FormulaError, match="names the comparison factor"):
        parse("correct ~ model + (1|subject:model)")
    with pytest.raises(FormulaError, match="not a single column name"):
        parse("cbind(k, f) ~ model")


def test_a_binomial_spec_passed_to_fit_is_read_from_its_own_text():
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(4)
    rows = [(m, f"q{q}", int(n := rng.integers(3, 9)), int(rng.binomial(n, p)))
            for m, p in (("a", 0.4), ("b", 0.6)) for q in range(40)]
    df = pd.DataFrame(rows, columns=["model", "question", "n", "k"])
    text = "cbind(k, n - k) ~ model + (1|question)"
    with pytest.warns(mixrank.UnitOfInferenceWarning):
        a = mixrank.fit(text, df, family="binomial", nagq=0)
    with pytest.warns(mixrank.UnitOfInferenceWarning):
        b = mixrank.fit(parse(text, binomial=True), df, family="binomial", nagq=0)
    assert b.response_form == a.response_form == "counts (cbind(successes, failures))"
    assert b.fit.beta.tolist() == a.fit.beta.tolist()
