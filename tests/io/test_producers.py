"""Re-run the harnesses and compare with the committed fixtures (marker ``producers``).

``tests/io/producers/generate.py`` wrote ``fixtures/generated/``; these tests
run it again into a temporary folder and require the reader to give the
same rows.  lm_eval and inspect_ai come with ``pip install -e '.[producers]'``
(pinned versions); HELM's and lighteval's schema classes need torch-free
installs of crfm-helm and lighteval (``pip install --no-deps``, see the
script), so those two skip when absent.  With ``MIXRANK_REQUIRE_PRODUCERS=1``
(set by ``.ci/run``) a missing lm_eval or inspect_ai fails instead.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

import mixrank

HERE = Path(__file__).resolve().parent
GEN = HERE / "fixtures" / "generated"
sys.path.insert(0, str(HERE / "producers"))
import generate  # noqa: E402

sys.path.remove(str(HERE / "producers"))

pytestmark = pytest.mark.producers

#: harness -> (module that must import, required in CI, folders, read options)
CASES = {
    "lm_eval": ("lm_eval", True, ["lm_eval"], {}),
    "inspect": ("inspect_ai", True, ["inspect", "inspect_json"], {}),
    "helm": ("helm.benchmark.metrics.metric", False, ["helm"], {}),
    "lighteval": ("lighteval.tasks.requests", False, ["lighteval"], {"metric": "acc"}),
}


def _available(module: str) -> bool:
    """Installed as a real package (fixture folders such as fixtures/lm_eval are namespace
    packages when their parent is on sys.path, and do not count)."""
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        return False
    return spec is not None and spec.origin not in (None, "namespace")


def _rows(folder: Path, opts: dict) -> pd.DataFrame:
    df = mixrank.read(folder, **opts)
    cols = [c for c in df.columns if c not in ("filter",)]
    return df[cols].sort_values(cols).reset_index(drop=True)


@pytest.mark.parametrize("harness", sorted(CASES))
def test_regenerated_output_reads_the_same(harness, tmp_path):
    module, required, folders, opts = CASES[harness]
    if not _available(module):
        if required and os.environ.get("MIXRANK_REQUIRE_PRODUCERS") == "1":
            pytest.fail(f"{module} not installed; pip install -e '.[producers]'")
        pytest.skip(f"{module} not installed (pip install -e '.[producers]'; HELM/lighteval "
                    "schema classes: see tests/io/producers/generate.py)")
    if harness == "inspect":
        pytest.importorskip("zstandard")
    generate.generate([harness], root=tmp_path)
    for folder in folders:
        fresh, committed = _rows(tmp_path / folder, opts), _rows(GEN / folder, opts)
        pd.testing.assert_frame_equal(fresh, committed)
