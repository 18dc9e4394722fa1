"""Shared fixtures: the real datasets bundled in ``mixrank/datasets``.

``shared_data('chembench')`` gives a fresh copy of a bundled dataset (read
from ``$MIXRANK_DATA_DIR`` when that folder holds it).  That the bundled
files equal the project's shared copies is checked in
``tests/io/test_datasets.py``.
"""

from __future__ import annotations

import pytest

from mixrank.io.datasets import load_dataset

_CACHE: dict = {}


def _get(name):
    if name not in _CACHE:
        _CACHE[name] = load_dataset(name)
    return _CACHE[name].copy()


@pytest.fixture
def shared_data():
    """Return a loader: ``shared_data('chembench')`` gives a fresh DataFrame copy."""
    return _get
