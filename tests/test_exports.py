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


def test_dir_lists_the_public_api_only():
    """``dir(mixrank)`` is ``__all__``: not the helpers ``mixrank/__init__.py`` imports
    (``Any``, ``TYPE_CHECKING``, ``annotations``, ``importlib``, ``sys``, ``types``) nor the
    submodules importing them sets as attributes, before and after the lazy names load."""
    import mixrank.io  # noqa: F401  (sets the attribute 'io' on the package)
    import mixrank.report  # noqa: F401

    public = [n for n in dir(mixrank) if not n.startswith("_")]
    assert sorted(public) == mixrank.__all__          # the words, literally
    assert len(set(mixrank.__all__)) == len(mixrank.__all__)
    assert isinstance(mixrank.__version__, str)
    for name in ("Any", "TYPE_CHECKING", "annotations", "importlib", "sys", "types"):
        assert not hasattr(mixrank, name), name
    # the lazy names still resolve (and then stay out of dir's way)
    assert callable(mixrank.fit) and callable(mixrank.load_dataset)
    assert mixrank.power.__name__ == "mixrank.power"
    assert set(n for n in dir(mixrank) if not n.startswith("_")) == set(public)
