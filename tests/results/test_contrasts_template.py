"""One contrasts template: ``contrasts()`` is written once, in the result base; each result
type supplies its pair estimates and ``mixrank.inference`` does every adjustment.

References: the adjusted p-values are compared with R's ``p.adjust`` rules as implemented in
``mixrank.inference.multiplicity.adjust`` (validated against R and statsmodels in
tests/inference/test_multiplicity.py) applied by hand to the unadjusted column, per set of
pairs; the estimates themselves are validated against lme4/glmer in tests/engine/*reference*.
"""

from __future__ import annotations

import ast
import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.arena import ArenaResult
from mixrank.inference.multiplicity import adjust, adjust_within
from mixrank.judge.result import JudgeResult
from mixrank.results import FitResult, GlmmByResult, GlmmResult, GlmmSlopeResult
from mixrank.results.base import ContrastsTemplate
from mixrank.results.pairwise_result import PairwiseResult
from mixrank.subset import SubsetResult

ROOT = Path(__file__).resolve().parents[2] / "mixrank"
CASE = Path(__file__).resolve().parents[1] / "reference" / "glmm_by_cases" / "unbalanced.csv.gz"


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        return fn(*a, **kw)


@pytest.fixture(scope="module")
def fits():
    ex = mixrank.load_example()
    df = pd.read_csv(CASE)
    g = dict(family="binomial", nagq=0)
    return {
        "gauss": _quiet(mixrank.fit, "correct ~ model + (1|subject)", ex),
        "glmm": _quiet(mixrank.fit, "correct ~ model + (1|subject)", ex, **g),
        "by": _quiet(mixrank.fit, "correct ~ model * topic + (1|question)", df, **g),
        "slope": _quiet(mixrank.fit, "correct ~ model * size + (1|question)",
                        df.assign(size=df.question.str[3:].astype(int)), **g),
    }


def _contrasts_defs() -> list[str]:
    """``module:Class`` of every class body defining ``contrasts``, in every package."""
    out = []
    for f in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ClassDef) and not any(   # a Protocol only declares it
                    isinstance(b, ast.Name) and b.id == "Protocol" for b in node.bases):
                out += [f"{f.relative_to(ROOT)}:{node.name}" for b in node.body
                        if isinstance(b, ast.FunctionDef) and b.name == "contrasts"]
    return out


def test_contrasts_is_written_once_in_the_base():
    assert _contrasts_defs() == ["results/base.py:ContrastsTemplate"]
    for cls in (FitResult, GlmmResult, GlmmByResult, GlmmSlopeResult, JudgeResult, ArenaResult,
                SubsetResult):
        assert cls.contrasts is ContrastsTemplate.contrasts
        assert "contrasts" in cls.OPTIONS and "adjust" in cls.OPTIONS["contrasts"]
    assert issubclass(PairwiseResult, ContrastsTemplate)
    assert not issubclass(SubsetResult, PairwiseResult)     # no inherited accessor that raises


def test_no_result_module_adjusts_p_values_itself():
    """Adjustment and max-t live in inference/: no result module imports them."""
    for pkg in ("results", "judge", "arena", "subset"):
        for f in (ROOT / pkg).rglob("*.py"):
            text = f.read_text()
            assert "adjust_contrasts" not in text and "import adjust\n" not in text \
                and "adjust as " not in text, f


@pytest.mark.parametrize("kind", ["gauss", "glmm", "by", "slope"])
def test_default_adjust_is_one_class_constant(fits, kind):
    res = fits[kind]
    cls = type(res)
    other = dataclasses.dataclass(frozen=True, eq=False, repr=False)(
        type("Other" + cls.__name__, (cls,), {"DEFAULT_ADJUST": "bh", "__module__": __name__}))
    twin = other(**{f.name: getattr(res, f.name) for f in dataclasses.fields(res)})
    # the t reference: a fit's default tests are the unit sign flips only where its default
    # adjustment is their step-down (the twin's is not)
    t = {"ci": "t"} if "ci" in cls.supported_options("contrasts") else {}
    pd.testing.assert_frame_equal(twin.contrasts(), res.contrasts(adjust="bh", **t))
    assert twin.contrasts().attrs["mixrank"]["adjust"] == "bh"
    # the paired mixed model's default is the randomization step-down on the CR2 path, the
    # binomial GLMM's where a model-by-unit term's unit has at most 14 levels (Holm
    # where it does not apply: this GLMM has no model-by-unit term), the model * x fits' Holm
    want = "stepdown" if kind == "gauss" else "holm"
    assert res.contrasts().attrs["mixrank"]["adjust"] == want
    assert cls.DEFAULT_ADJUST == ("stepdown" if kind in ("gauss", "glmm") else "holm")


@pytest.mark.parametrize("kind,by", [("gauss", None), ("glmm", None), ("by", None),
                                     ("by", "topic"), ("slope", "size")])
@pytest.mark.parametrize("how", ["holm", "bh", "none"])
def test_p_adjusted_is_the_adjustment_within_each_set(fits, kind, by, how):
    res = fits[kind]
    tab = res.contrasts(adjust=how, **({} if by is None else {"by": by}))
    assert list(tab.columns).index("p_adjusted") == list(tab.columns).index("p_value") + 1
    p = tab["p_value"].to_numpy()
    keys = np.zeros(len(tab)) if by is None else tab[by].to_numpy()
    for k in pd.unique(keys):
        rows = keys == k
        ok = rows & np.isfinite(p)
        want = p[ok] if how == "none" else adjust(p[ok], how)
        np.testing.assert_array_equal(tab["p_adjusted"].to_numpy()[ok], want)


def test_adjust_within_missing_p_values():
    p = np.array([0.01, np.nan, 0.04, 0.03])
    sets = [np.arange(4)]
    got = adjust_within(p, sets, "holm")
    np.testing.assert_array_equal(got[[0, 2, 3]], adjust(p[[0, 2, 3]], "holm"))
    assert np.isnan(got[1])
    one = adjust_within(p, sets, "holm", nan_p="one")
    np.testing.assert_array_equal(one, adjust([0.01, 1.0, 0.04, 0.03], "holm"))
    assert np.isnan(adjust_within(p, sets, "none", nan_p="one")[1])
    two = adjust_within(p, [np.array([0, 1]), np.array([2, 3])], "bonferroni")
    np.testing.assert_array_equal(two[[0, 2, 3]], [0.01, 0.08, 0.06])


@pytest.mark.parametrize("kind", ["by", "slope"])
def test_options_a_type_lacks_raise_the_one_error(fits, kind):
    with pytest.raises(mixrank.OptionError, match=r"draws=5 is not supported by Glmm\w*Result"
                                                  r"\.contrasts\(\)"):
        fits[kind].contrasts(draws=5)
    with pytest.raises(mixrank.OptionError, match="maxt"):
        fits[kind].contrasts(adjust="maxt")


def test_check_option_is_a_classmethod():
    assert GlmmResult.check_option("contrasts", "scale", "Response") == "response"
    assert FitResult.check_option("contrasts", "by", "Topic") == "Topic"   # a column: as given
    with pytest.raises(mixrank.OptionError, match="GlmmResult has no sensitivity"):
        GlmmResult.check_option("sensitivity", "kind", "loso")
    assert "anova" not in GlmmResult.OPTIONS and "anova" in GlmmByResult.OPTIONS
    assert "sensitivity" not in JudgeResult.OPTIONS and "anova" not in JudgeResult.OPTIONS


@pytest.mark.parametrize("kind", ["gauss", "glmm", "by", "slope"])
def test_every_result_and_summary_shows_itself(fits, kind):
    res = fits[kind]
    name = type(res).__name__
    assert repr(res).startswith(f"<{name} ") and repr(res) == str(res)
    assert res._repr_html_() == "<pre>" + repr(res).replace("&", "&amp;").replace(
        "<", "&lt;").replace(">", "&gt;") + "</pre>"
    s = res.summary()
    assert repr(s) == str(s) and s._repr_html_().startswith("<pre>")


def test_refused_adjust_values_say_why(fits):
    """An adjust value one result family takes and the other refuses says why."""
    with pytest.raises(mixrank.OptionError, match="unit sign flips of the score contributions"):
        fits["by"].contrasts(adjust="stepdown")
    with pytest.raises(mixrank.OptionError, match=r"by='x' is not supported by "
                                                  r"GlmmResult\.contrasts\(\)"):
        fits["glmm"].contrasts(by="x")
    with pytest.raises(mixrank.OptionError, match="Holm has the same family-wise guarantee"):
        fits["gauss"].contrasts(adjust="bonferroni")
