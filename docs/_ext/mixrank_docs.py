"""Sphinx extension of the mixrank site: the API and CLI reference pages, written from the
code at every build so that new exports and subcommands join the site without edits.

* ``api/``: one page per name in ``mixrank.__all__`` (function, class with every
  accessor, exception, module, data), grouped on ``api/index`` by pipeline stage (the
  stage of the subpackage that defines the name, in the order of
  ``tests/test_import_graph.py``'s STAGES);
* ``cli/``: one page per subcommand of ``mixrank.cli.build_parser()``, its help text as
  argparse prints it, and ``cli/index`` with the top-level help;
* every User guide page (``docs/*.md``) gets, under its title, a note with the defaults
  in force read from the code (estimand, SE/df rule, ``contrasts(adjust=)``), pointing to
  ``docs/defaults.md``;
* the Changelog page is the repository's ``CHANGELOG.md`` (its links rewritten to work
  from ``docs/project/``) when it exists, and says there is none yet otherwise (so a
  checkout without it still builds warning-free).

Generated folders (``api/``, ``cli/``) are rewritten only where their text changed.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import io
import os
import re
import types
from contextlib import redirect_stdout
from pathlib import Path

#: Section of the API reference for each top-level module or subpackage, in stage order.
STAGE_SECTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("Fitting: the entry points", ("fit", "fit_binomial", "fit_fixed")),
    ("Formula", ("formula",)),
    ("Data: frames, readers and bundled datasets", ("frame", "io")),
    ("Engine controls", ("engine",)),
    ("Results and their accessors", ("results",)),
    ("Inference: classic paired tests and multiplicity", ("inference",)),
    ("Design: power, planning and monitoring", ("design", "power")),
    ("Reliable change", ("change",)),
    ("Arena leaderboards", ("arena",)),
    ("Judge-corrected scores", ("judge",)),
    ("Errors and warnings", ("errors",)),
    ("Package", ("_version", "_util", "_progress", "_deprecate")),
]
OTHER = "Other"


def _write(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _title(text: str, ch: str = "=") -> str:
    return f"{text}\n{ch * len(text)}\n"


def _top(obj: object, name: str) -> str:
    """The top-level mixrank module or subpackage that defines ``obj``."""
    mod = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    if not isinstance(mod, str) or not mod.startswith("mixrank"):
        return "_version" if name == "__version__" else ""
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "_version"


def section_of(obj: object, name: str) -> str:
    """The API index section of a public name: its stage's, or ``mixrank.<subpackage>``
    for a subpackage not in STAGE_SECTIONS yet (so a new one needs no edit here)."""
    top = _top(obj, name)
    found = next((title for title, tops in STAGE_SECTIONS if top in tops), None)
    return found or (f"mixrank.{top}" if top else OTHER)


def _api_page(name: str, obj: object) -> str:
    full = f"mixrank.{name}"
    head = _title(f"``{full}``") + "\n"
    if isinstance(obj, types.ModuleType):
        call = getattr(obj, name, None)          # a callable package such as mixrank.arena
        if callable(obj) and callable(call):
            return (head + f".. autofunction:: {full}.{name}\n\n"
                    + f".. automodule:: {full}\n   :no-index:\n")
        return head + f".. automodule:: {full}\n   :members:\n   :imported-members:\n"
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return head + f".. autoexception:: {full}\n   :show-inheritance:\n"
    if inspect.isclass(obj):
        return (head + f".. autoclass:: {full}\n   :members:\n   :undoc-members:\n"
                + "   :inherited-members:\n   :show-inheritance:\n")
    if callable(obj):
        return head + f".. autofunction:: {full}\n"
    return head + f".. autodata:: {full}\n"


#: Subpackages whose own ``__all__`` is documented too (as ``mixrank.<sub>.<name>``).
SUBPACKAGES = {"report": "Report: the HTML page and the plots"}


def write_api(src: Path) -> list[str]:
    import importlib

    import mixrank

    out = src / "api"
    groups: dict[str, list[str]] = {}
    pages: set[str] = set()
    for name in mixrank.__all__:
        obj = getattr(mixrank, name)
        groups.setdefault(section_of(obj, name), []).append(name)
        _write(out / f"{name}.rst", _api_page(name, obj))
        pages.add(name)
    for sub, title in SUBPACKAGES.items():
        module = importlib.import_module(f"mixrank.{sub}")
        for name in getattr(module, "__all__", []):
            page = f"{sub}.{name}"
            groups.setdefault(title, []).append(page)
            _write(out / f"{page}.rst", _api_page(page, getattr(module, name)))
            pages.add(page)
    order = [t for t, _ in STAGE_SECTIONS] + list(SUBPACKAGES.values())
    order += sorted(set(groups) - set(order) - {OTHER}) + [OTHER]
    index = [_title("API reference"), "",
             "Every public name of ``mixrank`` (``mixrank.__all__``), generated from its "
             "docstring at build time and grouped by the pipeline stage that defines it "
             "(formula -> frame -> engine -> results -> inference/design -> report/cli). "
             "Result classes list all their accessors.", ""]
    for title in order:
        names = groups.get(title)
        if not names:
            continue
        index += [_title(title, "-"), ".. toctree::", "   :maxdepth: 1", ""]
        index += [f"   {n}" for n in sorted(names, key=str.lower)] + [""]
    _write(out / "index.rst", "\n".join(index))
    for stale in out.glob("*.rst"):              # an export that went away
        if stale.stem not in pages | {"index"}:
            stale.unlink()
    return sorted(pages)


def _help(parser: argparse.ArgumentParser) -> str:
    buf = io.StringIO()
    with redirect_stdout(buf):
        parser.print_help()
    return buf.getvalue()


def _literal(text: str) -> str:
    return ".. code-block:: text\n\n" + "".join(
        f"   {ln}\n" if ln.strip() else "\n" for ln in text.splitlines()) + "\n"


def subcommands() -> dict[str, tuple[argparse.ArgumentParser, str]]:
    from mixrank.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    return {name: (p, helps.get(name, "")) for name, p in sub.choices.items()}


def write_cli(src: Path) -> list[str]:
    from mixrank.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "96"                 # the same wrapping on every machine
    try:
        out = src / "cli"
        subs = subcommands()
        for name, (parser, hlp) in subs.items():
            text = [_title(f"``mixrank {name}``"), ""]
            if hlp:
                text += [hlp[0].upper() + hlp[1:] + ".", ""]
            text += [_literal(_help(parser))]
            _write(out / f"{name}.rst", "\n".join(text))
        index = [_title("Command line"), "",
                 "The ``mixrank`` command: one page per subcommand, generated from its "
                 "argparse parser at build time. Every flag is the API keyword with ``_`` "
                 "written ``-`` (:doc:`/vocabulary`); a user mistake exits with code 2 and "
                 "an ``error:`` line naming the flag.", "", _literal(_help(build_parser())),
                 ".. toctree::", "   :maxdepth: 1", ""]
        index += [f"   {n}" for n in subs] + [""]
        _write(out / "index.rst", "\n".join(index))
        for stale in out.glob("*.rst"):
            if stale.stem not in set(subs) | {"index"}:
                stale.unlink()
        return list(subs)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


CHANGELOG_DOC = "project/changelog"


def changelog_markdown(root: Path) -> str:
    """The text of the Changelog page: ``root/CHANGELOG.md`` with its links rewritten for
    ``docs/project/changelog.md`` (``docs/X.md#a`` -> ``../X.md#a``; another file of the
    repository -> ``../../path``, a download link), or a sentence when there is none."""
    path = root / "CHANGELOG.md"
    if not path.is_file():
        return "# Changelog\n\nThis checkout has no `CHANGELOG.md` yet.\n"
    text = path.read_text(encoding="utf-8")

    def link(m: re.Match) -> str:
        label, target = m.group(1), m.group(2)
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:|#", target):
            return m.group(0)
        file, _, anchor = target.partition("#")
        if file.startswith("docs/") and file.endswith(".md"):
            return f"[{label}](../{file[len('docs/'):]}" + (f"#{anchor})" if anchor else ")")
        if file.endswith(".md") and (root / file).is_file():   # not a page of the site
            return f"{label} (`{file}`)"
        if (root / file).exists():                             # a download link
            return f"[{label}](../../{file})"
        return m.group(0)

    text = re.sub(r"\[([^\]]*)\]\(([^)\s]+)\)", link, text)
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return text if first.startswith("# ") else "# Changelog\n\n" + text


def _changelog(app, docname: str, source: list[str]) -> None:
    if docname != CHANGELOG_DOC:
        return
    root = Path(app.srcdir).parent
    app.env.note_dependency(str(root / "CHANGELOG.md"))   # re-read when it changes
    source[0] = changelog_markdown(root)


def defaults_in_force() -> dict[str, str]:
    """The defaults as the code has them now (not copied into any page)."""
    import warnings

    import mixrank

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tab = mixrank.fit("correct ~ model + (1|subject) + (1|subject:question)",
                          mixrank.load_example(), pairs=[("m01", "m02")]).contrasts()
    meta = tab.attrs["mixrank"]            # what contrasts() did when asked for no option
    return {"adjust": str(meta["adjust"]), "estimand": str(meta["estimand"])}


def defaults_note(defaults: dict[str, str]) -> str:
    """The note the site shows under the title of every User guide page."""
    return ("\n```{admonition} Defaults in force\n:class: note\n\n"
            f"Estimand `{defaults['estimand']}`; a contrast's standard error at the formula's "
            "unit of inference, CR2 with Bell–McCaffrey df where every other random term is "
            "nested in the unit, Satterthwaite df otherwise; multiplicity adjustment "
            f"`adjust=\"{defaults['adjust']}\"`. What each means and how to change it: "
            "{doc}`/defaults`.\n```\n\n")


def _defaults_note(app, docname: str, source: list[str]) -> None:
    """Under the first heading of each User guide page (docs/*.md), the defaults in force."""
    if "/" in docname or docname in ("index", "defaults"):
        return
    if not (Path(app.srcdir) / f"{docname}.md").is_file():
        return
    note = getattr(app, "_mixrank_defaults_note", None)
    if note is None:
        note = app._mixrank_defaults_note = defaults_note(defaults_in_force())
    text = source[0]
    m = re.search(r"^#{1,6} .*$", text, re.M)
    at = m.end() + 1 if m else 0
    source[0] = text[:at] + note + text[at:]


def _skip_member(app, what, name, obj, skip, options):
    """Class pages list methods and properties (the accessors), not data attributes such
    as dataclass fields: those are described in the class docstring."""
    if what in ("class", "exception") and not (
            inspect.isroutine(obj) or isinstance(obj, (property, functools.cached_property))):
        return True
    return None


def _prune_gallery(app) -> None:
    """Remove the gallery pages of vignettes that no longer exist (a renamed or deleted
    vignette would otherwise leave a page in no toctree: a warning, and the build is -W)."""
    gallery = Path(app.srcdir) / "auto_examples"
    vignettes = Path(app.srcdir).parent / "vignettes"
    for page in gallery.glob("[0-9][0-9]_*.rst") if gallery.is_dir() else []:
        if not (vignettes / f"{page.stem}.py").is_file():
            for stale in gallery.glob(f"{page.stem}.*"):
                stale.unlink()


def _generate(app) -> None:
    src = Path(app.srcdir)
    write_api(src)
    write_cli(src)


def setup(app):
    app.connect("builder-inited", _prune_gallery, priority=100)   # before sphinx-gallery
    app.connect("builder-inited", _generate)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("source-read", _changelog)
    app.connect("source-read", _defaults_note)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
