"""Sphinx configuration of the mixrank documentation site.

Build (from the repository root; ``pip install -e '.[docs,test]'``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The site reuses the repository's own files: ``docs/*.md`` (MyST) are the User guide,
every ``vignettes/NN_*.py`` is executed into the Examples gallery (sphinx-gallery),
the API and CLI references are generated from ``mixrank.__all__`` and
``mixrank.cli.build_parser()`` (``_ext/mixrank_docs.py``). Offline: no intersphinx.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("MIXRANK_PROGRESS", "0")

import mixrank  # noqa: E402

project = "mixrank"
author = "the mixrank authors"
copyright = "the mixrank authors"
release = version = mixrank.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "mixrank_docs",
]

root_doc = "index"
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# _run: the figures of the executed blocks; project/validation_*.md: included by
# project/validation.md (written by docs/make_validation.py)
exclude_patterns = ["_build", "_ext", "_run", "project/validation_*.md", "Thumbs.db",
                    ".DS_Store", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.json"]
templates_path: list[str] = []
html_static_path = ["_static"]
# furo: responsive, the site's contents on the left, the page's on the right; the sidebar
# brand is html_title, so the version is on every page.
html_theme = "furo"
html_title = f"mixrank {release}"
html_theme_options = {"sidebar_hide_name": False, "navigation_with_keys": True}
# Single backticks are inline code (the vignettes' text and many docstrings use them so).
default_role = "literal"

# autodoc + numpydoc: docstrings as written; the API pages list members explicitly
# (docs/_ext/mixrank_docs.py: a result class's public methods first, its helpers last).
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"exclude-members": "__init__, __new__"}
autosummary_generate = False           # the API pages are written by mixrank_docs
numpydoc_show_class_members = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# numpydoc validation of every documented docstring, a warning each (so the -W build fails):
# GL08 no docstring, SS01 no summary, PR01 a parameter not documented, PR02 a documented
# parameter the signature does not have (prose parsed as parameters: the bold fake
# parameters the API pages once showed), RT01 no Returns section, RT03 a Returns entry without text.
# Two signature readings are mixrank's (mixrank_docs.validation_signature): a class that
# mixrank builds (results, frames, errors) is documented by its attributes, not its
# constructor; ``**old`` (former keyword spellings, one release) is not a parameter.
numpydoc_validation_checks = {"GL08", "SS01", "PR01", "PR02", "RT01", "RT03"}
# No name is exempt (tests/test_docs_site.py checks that this stays empty).
numpydoc_validation_exclude: set[str] = set()

# MyST: the markdown pages of docs/ as they read on GitHub; GitHub-style heading
# anchors so links such as methods.md#0-where-things-live resolve.
myst_heading_anchors = 6
myst_enable_extensions = ["dollarmath", "colon_fence"]
# pages written for GitHub start at any heading level
suppress_warnings = ["myst.header"]

# sphinx-gallery: every vignettes/NN_*.py, executed at build time.
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "vignettes"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/\d\d_[^/]*\.py$",
    "ignore_pattern": r"(render|conf|__init__)\.py$",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "write_computation_times": False,
    "show_memory": False,
    "plot_gallery": "True",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "capture_repr": ("_repr_html_", "__repr__"),
}
