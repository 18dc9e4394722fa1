"""Shared fixtures: real data from ../shared/data (or $MIXRANK_DATA_DIR).

Where the data are absent, tests that need them skip with a reason; with
MIXRANK_REQUIRE_DATA=1 (set by .ci/run) they fail instead.
"""

from __future__ import annotations

import os

import pytest

from mixrank.io.datasets import SHARED_FILES, load_shared, shared_data_dir

_CACHE: dict = {}


def _get(name):
    root = shared_data_dir()
    if root is None or not (root / SHARED_FILES[name]).exists():
        msg = f"shared dataset {name!r} not found (set MIXRANK_DATA_DIR)"
        if os.environ.get("MIXRANK_REQUIRE_DATA") == "1":
            pytest.fail(msg + " and MIXRANK_REQUIRE_DATA=1")
        pytest.skip(msg)
    if name not in _CACHE:
        _CACHE[name] = load_shared(name)
    return _CACHE[name].copy()


@pytest.fixture
def shared_data():
    """Return a loader: ``shared_data('chembench')`` gives a fresh DataFrame copy."""
    return _get
