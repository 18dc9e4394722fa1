"""The public namespace: every type a public function or method returns is exported, and
every lazily exported callable shows its real signature to ``inspect.signature``/``help``.

``mixrank.arena`` (a callable package) is checked by tests/arena.
"""

from __future__ import annotations

import inspect
import re
import typing

import mixrank


def _public_callables() -> list[tuple[str, typing.Any]]:
    out = []
    for name in mixrank.__all__:
        obj = getattr(mixrank, name)
        if name == "arena" or inspect.ismodule(obj):
            continue
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            continue
        if inspect.isfunction(obj):
            out.append((name, obj))
        elif inspect.isclass(obj):
            out += [(f"{name}.{m}", f) for m, f in inspect.getmembers(obj, inspect.isfunction)
                    if not m.startswith("_")]
    return out


def test_every_returned_type_is_exported():
    exported = {id(getattr(mixrank, n)) for n in mixrank.__all__}
    missing = []
    for where, fn in _public_callables():
        ann = inspect.signature(fn).return_annotation
        for ident in re.findall(r"[A-Z]\w*", str(ann)):
            obj = fn.__globals__.get(ident)
            if (inspect.isclass(obj) and obj.__module__.startswith("mixrank.")
                    and not obj.__module__.startswith("mixrank.arena")
                    and id(obj) not in exported):
                missing.append(f"{where} -> {ident}")
    assert not missing, missing
    for name in ("GlmmByResult", "GlmmSlopeResult", "GlmmSummary", "JudgeResult"):
        assert name in mixrank.__all__


def test_lazily_exported_callables_show_their_signature():
    for name in mixrank.__all__:
        obj = getattr(mixrank, name)
        if name == "arena" or inspect.ismodule(obj) or (
                inspect.isclass(obj) and issubclass(obj, BaseException)):
            continue
        if callable(obj):
            params = list(inspect.signature(obj).parameters.values())
            kinds = {p.kind for p in params}
            assert kinds != {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}, name
    assert "formula" in inspect.signature(mixrank.fit).parameters
    assert mixrank.fit.__doc__ and "Parameters" in mixrank.fit.__doc__
