"""``mixrank demo`` is a newcomer's first run: it prints no warning it does not explain:
each warning it shows is followed by one plain ``note:`` sentence saying
what it means and what to do."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import mixrank
from mixrank.cli.fitting import DEMO_FORMULA, DEMO_WARNINGS, _explain


def _unexplained(stderr: str) -> list[str]:
    lines = stderr.splitlines()
    warned = [ln for ln in lines if ln.startswith("warning:")]
    notes = [ln for ln in lines if ln.startswith("note: the ")]
    return warned[len(notes):] if len(notes) < len(warned) else []


def test_the_demo_prints_no_unexplained_warning():
    out = subprocess.run([sys.executable, "-m", "mixrank", "demo"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    # every line on stderr is a warning or its note; no raw Python warning text
    assert all(re.match(r"(warning|note): ", ln) for ln in out.stderr.splitlines()), out.stderr
    assert _unexplained(out.stderr) == []
    assert "== Contrasts (model_a - model_b) ==" in out.stdout


def test_the_demo_formula_triggers_no_warning_on_the_example():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mixrank.fit(DEMO_FORMULA, mixrank.load_example())
    assert [str(w.message) for w in caught] == []


def test_the_warnings_of_the_former_demo_formula_are_each_explained():
    # the former demo, with a 4-level (1|prompt): a singular fit and a weak design
    former = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mixrank.fit(former, mixrank.load_example())
    names = {w.category.__name__ for w in caught}
    assert {"SingularFitWarning", "WeakDesignWarning"} <= names
    notes = _explain(caught)
    assert len(notes) == len(names)
    assert all(any(DEMO_WARNINGS[k] in n for k in DEMO_WARNINGS) for n in notes)
