"""Shared fixtures: the real datasets bundled in ``mixrank/datasets``, and the
shuffled-rows switch.

``shared_data('chembench')`` gives a fresh copy of a bundled dataset (read
from ``$MIXRANK_DATA_DIR`` when that folder holds it).  That the bundled
files equal the project's shared copies is checked in
``tests/io/test_datasets.py``.

``MIXRANK_SHUFFLE_ROWS=1`` (docs/hardening.md §9): every pandas DataFrame a
test hands to mixrank's entry points reaches it with its rows in a random
order -- the one place every table passes, :func:`mixrank.frame.source.to_pandas`
(fit, build_frame, the readers, the GLMM and arena data), plus the out-of-core
backends' :func:`mixrank.io.sources.resolve_source` and the paired tests'
:func:`mixrank.inference.paired_data.paired_arrays` -- so that no test depends
on the order of the rows, of tied values, or of summation.  The permutation
is seeded from the test's id (``MIXRANK_SHUFFLE_SEED`` changes it).  A test
that checks a row position on purpose (an error naming "row 3") is marked
``@pytest.mark.row_order`` and sees its rows as given; the arena's battle logs
(:data:`ORDERED`), ordered streams by design, are never shuffled.
"""

from __future__ import annotations

import functools
import os
import sys
import zlib

import numpy as np
import pandas as pd
import pytest

from mixrank.io.datasets import load_dataset

_CACHE: dict = {}
#: Modules whose input is an ordered stream, not a set of rows: the arena's battle log is
#: read in order by its anytime monitor (docs/arena.md), so it is never shuffled.
ORDERED = ("mixrank.arena",)
SHUFFLE = os.environ.get("MIXRANK_SHUFFLE_ROWS", "").strip() not in ("", "0")


def _get(name, reruns=False):
    key = (name, reruns)
    if key not in _CACHE:
        _CACHE[key] = load_dataset(name, reruns=reruns) if reruns else load_dataset(name)
    return _CACHE[key].copy()


@pytest.fixture
def shared_data():
    """Return a loader: ``shared_data('chembench')`` gives a fresh DataFrame copy
    (``shared_data('chembench', reruns=True)`` with ChemBench's temperature-1 re-runs)."""
    return _get


def pytest_configure(config):
    config.addinivalue_line("markers", "row_order: checks a row position on purpose (not "
                                       "shuffled under MIXRANK_SHUFFLE_ROWS=1)")


def shuffled(df: pd.DataFrame, seed: int) -> pd.DataFrame:
    """``df`` with its rows permuted (same index labels, same attrs); the input is untouched.

    The permutation depends on the test and the number of rows only, so two tables of
    the same length that a test compares row by row (e.g. one log spelled two ways) are
    permuted alike."""
    out = df.iloc[np.random.default_rng([seed, len(df)]).permutation(len(df))]
    out.attrs = dict(df.attrs)
    return out


def _wrap(fn, seed: int, arg: str | None = None):
    @functools.wraps(fn)
    def inner(*args, **kw):
        if args and isinstance(args[0], pd.DataFrame):
            args = (shuffled(args[0], seed), *args[1:])
        elif arg is not None and isinstance(kw.get(arg), pd.DataFrame):
            kw[arg] = shuffled(kw[arg], seed)
        return fn(*args, **kw)
    inner.__wrapped_by_shuffle__ = True  # type: ignore[attr-defined]
    return inner


@pytest.fixture(autouse=True)
def _shuffle_rows(request, monkeypatch):
    """Under ``MIXRANK_SHUFFLE_ROWS=1``: the entry points see every DataFrame shuffled."""
    if not SHUFFLE or request.node.get_closest_marker("row_order"):
        yield
        return
    import mixrank.frame.source
    import mixrank.inference.paired_data
    import mixrank.io.sources

    seed = zlib.crc32(request.node.nodeid.encode()) ^ int(os.environ.get(
        "MIXRANK_SHUFFLE_SEED", "0"))
    targets = [(mixrank.frame.source, "to_pandas", None),
               (mixrank.io.sources, "resolve_source", "source"),
               (mixrank.inference.paired_data, "paired_arrays", "x")]
    for module, name, arg in targets:
        original = getattr(module, name)
        wrapped = _wrap(original, seed, arg)
        # rebind every reference (modules that imported the function by name)
        for mod in list(sys.modules.values()):
            modname = getattr(mod, "__name__", "")
            if modname.startswith("mixrank") and not modname.startswith(ORDERED) \
                    and getattr(mod, name, None) is original:
                monkeypatch.setattr(mod, name, wrapped)
    yield
