"""Real signatures (issue 48): what ``inspect.signature``, ``help()`` and the API pages show.

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
