"""Real signatures: what ``inspect.signature``, ``help()`` and the API pages show.

* No public callable shows the ``**old`` through which former keyword spellings still arrive
  (:func:`mixrank._deprecate.former_keywords`); those spellings still work, with their
  :class:`~mixrank.MixrankDeprecationWarning`.
* Every option a result type checks against a list of values
  (``type(result).supported_options(accessor)``, the list :meth:`check_option` accepts) is
  typed ``Literal[...]`` of exactly those values on the method that takes it: the union over
  the public result types sharing that method (a value one type refuses is still refused by
  that type's check, with an :class:`~mixrank.OptionError`).
"""

from __future__ import annotations

import inspect
import types
import typing
import warnings

import pytest

import mixrank
from mixrank.subset import SubsetResult

RESULTS = [mixrank.FitResult, mixrank.GlmmResult, mixrank.GlmmByResult, mixrank.GlmmSlopeResult,
           mixrank.JudgeResult, mixrank.ArenaResult, SubsetResult]


def _public_callables() -> list[tuple[str, typing.Any]]:
    out = []
    for name in mixrank.__all__:
        obj = getattr(mixrank, name)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            continue
        if inspect.ismodule(obj):
            out += [(f"{name}.{n}", f) for n, f in vars(obj).items()
                    if not n.startswith("_") and inspect.isfunction(f)]
        elif inspect.isclass(obj):
            out += [(f"{name}.{m}", f) for m, f in inspect.getmembers(obj, inspect.isfunction)
                    if not m.startswith("_")]
        elif callable(obj):
            out.append((name, obj))
    return out


def test_no_public_signature_shows_the_former_spellings():
    shown = []
    for where, fn in _public_callables():
        for p in inspect.signature(fn).parameters.values():
            if p.kind is inspect.Parameter.VAR_KEYWORD and p.name == "old":
                shown.append(where)
    assert not shown, shown
    sig = inspect.signature(mixrank.FitResult.rank_intervals)
    assert "adjust" in sig.parameters and "method" not in sig.parameters


def test_former_spellings_still_work_with_their_warning():
    res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    with pytest.warns(mixrank.MixrankDeprecationWarning, match="method= is the former name"):
        old = res.rank_intervals(method="holm")
    new = res.rank_intervals(adjust="holm")
    assert old.equals(new)
    with pytest.raises(mixrank.OptionError, match="unexpected keyword"):
        res.rank_intervals(colour="red")
    with pytest.raises(TypeError, match="no \\*\\*old"):
        mixrank._deprecate.former_keywords(lambda x: x)


def _literal_values(annotation: typing.Any) -> set:
    """The values a (possibly union) annotation admits: Literal members, None, and bool's
    True/False; anything else as its type."""
    out: set = set()
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return set(typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        for a in typing.get_args(annotation):
            out |= _literal_values(a)
        return out
    if annotation is type(None) or annotation is None:
        return {None}
    if annotation is bool:
        return {True, False}
    return {annotation}


def _checked_options() -> dict[tuple[typing.Any, str], set]:
    """(method function, option) -> the values the result types sharing it accept."""
    out: dict[tuple[typing.Any, str], set] = {}
    for cls in RESULTS:
        for accessor, table in cls.OPTIONS.items():
            fn = getattr(cls, accessor)
            for option, allowed in table.items():
                if allowed is not None and any(isinstance(v, str) for v in allowed):
                    out.setdefault((fn, option), set()).update(allowed)
    return out


def test_option_parameters_are_literals_of_the_values_the_check_accepts():
    checked = _checked_options()
    assert len(checked) >= 20
    wrong = []
    for (fn, option), accepted in checked.items():
        ann = inspect.signature(fn).parameters[option].annotation
        assert isinstance(ann, str), (fn.__qualname__, option)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = eval(ann, dict(vars(typing)), fn.__globals__)  # noqa: S307
        admits = {v for v in _literal_values(value) if isinstance(v, str | bool) or v is None}
        # Sequence[str] (several kinds at once) is allowed beside the literals
        if admits - {None} != accepted - {None} or (None in accepted and None not in admits):
            wrong.append(f"{fn.__qualname__}({option}=): annotated {sorted(map(str, admits))}, "
                         f"accepted {sorted(map(str, accepted))}")
    assert not wrong, "\n".join(wrong)


def test_the_defaults_the_signatures_show_are_real_values():
    """No sentinel shown where a plain default says the same: the result type's own default
    adjustment is ``adjust=None`` (named in the docstring), not an object printed as
    ``default``."""
    for fn in (mixrank.FitResult.contrasts, mixrank.FitResult.rank_intervals):
        p = inspect.signature(fn).parameters["adjust"]
        assert p.default is None, fn.__qualname__
        assert "default the result type's" in fn.__doc__
    res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
    assert res.contrasts().attrs["mixrank"]["adjust"] == res._default_adjust()


def _admitted(fn: typing.Any, option: str) -> set:
    ann = inspect.signature(fn).parameters[option].annotation
    value = eval(ann, dict(vars(typing)), fn.__globals__)  # noqa: S307
    return {v for v in _literal_values(value) if isinstance(v, str)}


def test_fit_options_are_literals_of_the_registries_that_check_them():
    from mixrank.engine.lmm.unit_se import DF_METHODS
    from mixrank.fit import ENGINES, ESTIMANDS, FAMILIES, METHODS
    from mixrank.io.backends import BACKENDS
    from mixrank.routes.options import INCOMPLETE

    want = {"method": set(METHODS), "estimand": set(ESTIMANDS), "family": set(FAMILIES),
            "engine": {"auto", *ENGINES}, "backend": set(BACKENDS),
            "incomplete": set(INCOMPLETE), "df": set(DF_METHODS), "na": {"error", "drop"}}
    fit = mixrank.fit
    for option, values in want.items():
        assert _admitted(fit, option) == values, option
    # the overloads' aliases say the same
    g = fit.__globals__
    for alias, option in (("_Method", "method"), ("_Engine", "engine"), ("_Estimand", "estimand"),
                          ("_Na", "na"), ("_Backend", "backend"), ("_Incomplete", "incomplete"),
                          ("_Df", "df")):
        assert set(typing.get_args(g[alias])) == want[option], alias
    # and a value outside them is refused by name (the check, not the annotation, decides)
    with pytest.raises(mixrank.OptionError, match="engine"):
        mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example(), engine="spss")


def test_public_functions_type_their_options_as_the_registries_that_check_them():
    from mixrank.arena.data import TIES
    from mixrank.arena.result import SCALES
    from mixrank.change import rci
    from mixrank.change.reliability import SPLITS
    from mixrank.design.anytime.normal import KINDS
    from mixrank.inference import paired
    from mixrank.inference.paired_data import ALTERNATIVES
    from mixrank.io.read import INPUT_FORMATS
    from mixrank.subset.irt import ITEM_MODELS

    alternatives = set(ALTERNATIVES.values())
    want = {
        (mixrank.read, "format"): set(INPUT_FORMATS),
        (mixrank.arena, "ties"): set(TIES), (mixrank.arena, "scale"): set(SCALES),
        (mixrank.paired_t, "alternative"): alternatives,
        (mixrank.wilcoxon, "alternative"): alternatives,
        (mixrank.sign_flip, "alternative"): alternatives,
        (mixrank.mcnemar, "method"): {*paired._MCNEMAR_METHODS, "all"},
        (mixrank.monitor, "anytime"): set(KINDS),
        (mixrank.reliable_change, "split"): set(SPLITS),
        (mixrank.reliable_change, "method"): set(rci._METHODS),
        (mixrank.reliable_change, "sem"): set(rci._SEMS),
        (mixrank.select_items, "item_model"): set(ITEM_MODELS),
        (mixrank.subset_score, "item_model"): set(ITEM_MODELS),
    }
    for (fn, option), values in want.items():
        assert _admitted(fn, option) == values, (fn.__name__, option)


@pytest.mark.parametrize("call, option", [
    (lambda v: mixrank.wilcoxon([1, 0, 1, 1], [0, 0, 1, 0], zero_method=v), "zero_method"),
    (lambda v: mixrank.wilcoxon([1, 0, 1, 1], [0, 0, 1, 0], method=v), "method"),
    (lambda v: mixrank.sign_flip([1, 0, 1, 1], [0, 0, 1, 0], method=v), "method"),
    (lambda v: mixrank.paired_bootstrap([1, 0, 1, 1], [0, 0, 1, 0], ci=v), "ci"),
    (lambda v: mixrank.simulate(2, 3, 4, 1, family=v), "family"),
], ids=["wilcoxon-zero_method", "wilcoxon-method", "sign_flip-method", "bootstrap-ci",
        "simulate-family"])
def test_inline_checks_name_the_literal_values(call, option):
    """Options checked against a tuple written in the check itself: the error for a value
    outside the Literal names the option and lists exactly the Literal's values."""
    import re

    fn = call.__code__.co_names[-1]
    values = _admitted(getattr(mixrank, fn), option)
    with pytest.raises(mixrank.MixrankError) as err:
        call("nonsense")
    msg = str(err.value)
    assert option in msg
    assert set(re.findall(r"'([\w-]+)'", msg)) - {"nonsense"} == values, msg
