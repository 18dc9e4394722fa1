"""Sphinx extension of the mixrank site: the API and CLI reference pages, written from the
code at every build so that new exports and subcommands join the site without edits.

* ``api/``: one page per name in ``mixrank.__all__`` and ``mixrank.report.__all__``
  (function, class with every accessor -- its methods first, its helpers last --,
  exception, module, data), listed on ``api/index`` with their one-line summaries
  (autosummary), grouped by task (TASK_SECTIONS; a name not listed there by the pipeline
  stage of the subpackage that defines it);
* numpydoc validates every documented docstring (``numpydoc_validation_checks`` in
  ``conf.py``; :func:`validate_api` runs the same checks without a build);
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
from typing import Any

#: Sections of the API reference by task, in page order: the public names of each.  A name
#: not listed falls back to its pipeline stage's section (STAGE_SECTIONS), so a new export
#: joins the index without an edit here.
TASK_SECTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("Fit", ("fit", "Control", "GlmmControl", "parse", "build_frame", "pass_at_k")),
    ("Results", ("FitResult", "GlmmResult", "GlmmByResult", "GlmmSlopeResult", "Summary",
                 "GlmmSummary", "PairFit", "WeakTerm", "Spec", "RandomTerm", "Frame")),
    ("Arena leaderboards", ("arena", "ArenaResult", "ArenaMonitor", "battles_from_scores",
                            "read_battles")),
    ("Judge-corrected scores", ("JudgeResult", "plan_labels")),
    ("Subset scoring", ("subset_score", "select_items", "item_diagnostics", "SubsetResult")),
    ("Design and power", ("power", "n_star", "mde", "sigma_d", "power_summary", "monitor",
                          "simulate")),
    ("Classic paired tests and multiplicity", ("mcnemar", "paired_t", "wilcoxon",
                                               "paired_bootstrap", "sign_flip",
                                               "effect_sizes", "adjust")),
    ("Reliable change", ("reliable_change", "ReliableChange", "ReliableChangeSummary")),
    ("Readers", ("read", "read_wide")),
    ("Datasets", ("load_example", "load_dataset", "list_datasets")),
]

#: Section of the API reference for each top-level module or subpackage, in stage order
#: (the fallback of a name no task section lists).
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

#: A result class's accessors in the order its page shows them (the questions users ask
#: first); the rest follow alphabetically, then HELPERS (building blocks of the result
#: types, public for extensions), last.
FIRST = ("contrasts", "model_scores", "rank_intervals", "resolution", "summary",
         "variance_components", "design_effect", "anova", "plan", "sensitivity",
         "rank_probabilities", "diagnostics", "fixed_effects", "pass_at_k", "judge", "scores",
         "leaderboards", "agreement", "covariates", "models", "n_battles")
HELPERS = ("judged_pairs", "inference_pairs", "score_group_fits", "estimable_part", "pair",
           "weak_terms", "df_label", "contrast_row", "contrast_covariance",
           "effective_labels", "unit_levels", "unit_of_inference", "supported_options",
           "check_option")


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
    """The API index section of a public name: its task's (TASK_SECTIONS); else its
    stage's, or ``mixrank.<subpackage>`` for a subpackage not in STAGE_SECTIONS yet (so a
    new one needs no edit here)."""
    task = next((title for title, names in TASK_SECTIONS if name in names), None)
    if task:
        return task
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return "Errors and warnings"
    top = _top(obj, name)
    found = next((title for title, tops in STAGE_SECTIONS if top in tops), None)
    return found or (f"mixrank.{top}" if top else OTHER)


def built_by_mixrank(obj: object) -> bool:
    """A public class that mixrank builds and hands to the user (a result, a frame, a parsed
    formula, a summary, an error): documented by its attributes and methods, not by its
    constructor (whose fields are internals)."""
    if not inspect.isclass(obj) or not (obj.__module__ or "").startswith("mixrank"):
        return False
    if issubclass(obj, BaseException):
        return True
    return obj.__name__ not in ("Control", "GlmmControl", "ArenaMonitor")


def accessors(cls: type) -> list[tuple[str, str]]:
    """``(name, directive)`` of every public method and property of ``cls`` (inherited ones
    too), in page order: FIRST, then alphabetical, then HELPERS."""
    found = []
    for name, raw in inspect.getmembers(cls):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(cls, name)
        if isinstance(attr, (property, functools.cached_property)):
            found.append((name, "autoproperty"))
        elif inspect.isroutine(raw) and getattr(raw, "__module__", "").startswith("mixrank"):
            found.append((name, "automethod"))

    def key(item: tuple[str, str]) -> tuple[int, int, str]:
        name = item[0]
        if name in FIRST:
            return (0, FIRST.index(name), name)
        return (2, HELPERS.index(name), name) if name in HELPERS else (1, 0, name)

    return sorted(found, key=key)


def _class_page(head: str, full: str, obj: type) -> str:
    members = accessors(obj)
    text = head + f".. autoclass:: {full}\n"
    if not built_by_mixrank(obj):
        text += "   :show-inheritance:\n"
    if not members:
        return text
    text += ("\n.. rubric:: Methods and properties\n\n.. autosummary::\n   :nosignatures:\n\n"
             + "".join(f"   ~{full}.{m}\n" for m, _ in members) + "\n")
    return text + "".join(f".. {how}:: {full}.{m}\n\n" for m, how in members)


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
        return _class_page(head, full, obj)
    if callable(obj):
        return head + f".. autofunction:: {full}\n"
    return head + f".. autodata:: {full}\n"


#: Subpackages whose own ``__all__`` is documented too (as ``mixrank.<sub>.<name>``).
SUBPACKAGES = {"report": "Plots and the report"}


def _task_rank(title: str, name: str) -> tuple[int, str]:
    names = next((n for t, n in TASK_SECTIONS if t == title), ())
    base = name.split(".")[-1]
    return (names.index(base), name) if base in names else (len(names), name.lower())


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
    order = [t for t, _ in TASK_SECTIONS] + [t for t, _ in STAGE_SECTIONS]
    order += list(SUBPACKAGES.values())
    order = list(dict.fromkeys(order))
    order += sorted(set(groups) - set(order) - {OTHER}) + [OTHER]
    index = [_title("API reference"), "",
             "Every public name of ``mixrank`` (``mixrank.__all__``) and of ``mixrank.report``, "
             "grouped by task, with the first line of its docstring; each page is generated "
             "from the docstring at build time. A result class's page lists its methods "
             "first (the questions it answers), its building blocks last.", "",
             f"The version documented here: ``{mixrank.__version__}``.", ""]
    for title in order:
        names = groups.get(title)
        if not names:
            continue
        names = sorted(names, key=lambda n: _task_rank(title, n))
        shown = [n for n in names if n != "__version__"]
        index += [_title(title, "-"), ""]
        if shown:
            index += [".. autosummary::", "   :nosignatures:", ""]
            index += [f"   ~mixrank.{n}" for n in shown] + [""]
        if "__version__" in names:
            index += [":doc:`__version__`: the version string of the installed package.", ""]
        index += [".. toctree::", "   :hidden:", ""]
        index += [f"   {n}" for n in names] + [""]
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


def validation_signature() -> None:
    """numpydoc's parameter checks (PR01, PR02) read the signature; two readings are
    mixrank's: a class mixrank builds (:func:`built_by_mixrank`) has no parameters to
    document (its page shows no constructor), and ``**old`` -- former keyword spellings,
    accepted with a deprecation warning for one release -- is not a parameter."""
    from numpydoc import validate

    if getattr(validate.Validator, "_mixrank", False):
        return
    plain = validate.Validator.signature_parameters.fget

    def signature_parameters(self):  # type: ignore[no-untyped-def]
        if built_by_mixrank(self.obj):
            return ()
        return tuple(p for p in plain(self) if p != "**old")

    validate.Validator.signature_parameters = property(signature_parameters)
    validate.Validator._mixrank = True


def documented_names() -> list[str]:
    """The dotted names the API pages document: every public name and every accessor of a
    public class."""
    import importlib

    import mixrank

    names = []
    for module in (mixrank, importlib.import_module("mixrank.report")):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, str) or (isinstance(obj, types.ModuleType) and not callable(obj)):
                continue
            full = f"{module.__name__}.{name}"
            names.append(f"{full}.{name}" if isinstance(obj, types.ModuleType) else full)
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                names += [f"{full}.{m}" for m, _ in accessors(obj)]
    return names


def validate_api(checks: set[str], exclude: Any = ()) -> dict[str, list[tuple[str, str]]]:
    """numpydoc's validation of every documented name, as the build runs it: the errors
    of ``checks`` per name not matched by a regex of ``exclude`` (none: an empty dict)."""
    import importlib

    from numpydoc.docscrape import get_doc_object
    from numpydoc.validate import validate

    validation_signature()
    found = {}
    for name in documented_names():
        if any(re.search(x, name) for x in exclude):
            continue
        module, _, rest = name.partition(".report.") if ".report." in name else (
            "mixrank", "", name[len("mixrank."):])
        obj: Any = importlib.import_module("mixrank.report" if _ else "mixrank")
        for part in rest.split("."):      # an attribute, as autodoc reaches it
            static = inspect.getattr_static(obj, part, None)
            obj = static if isinstance(static, (property, functools.cached_property)) \
                else getattr(obj, part)
        errors = [e for e in validate(get_doc_object(obj))["errors"] if e[0] in checks]
        if errors:
            found[name] = errors
    return found


def _no_constructor(app, what, name, obj, options, signature, return_annotation):
    """A class mixrank builds shows no constructor signature (its fields are internals)."""
    if signature is not None and what in ("class", "exception") and built_by_mixrank(obj):
        return "", None
    return None


#: Per page, the namespace its ``mixrank-run`` blocks share (run in page order).
_RUN_NAMESPACES: dict[str, dict[str, Any]] = {}
RUN_DIR = "_run"       # docs/_run/: the figures of the executed blocks (not committed)


def run_block(code: str, namespace: dict[str, Any]) -> tuple[str, list[Any]]:
    """Execute ``code`` in ``namespace`` as a notebook cell: what it prints, and the value
    of a last bare expression (its ``repr``), and the matplotlib figures it left open."""
    import ast
    import contextlib

    import matplotlib.pyplot as plt

    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    buf = io.StringIO()
    with redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        exec(compile(tree, "<mixrank-run>", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<mixrank-run>", "eval"), namespace)
            if value is not None and not hasattr(value, "figure"):
                print(repr(value))
    figures = [plt.figure(n) for n in plt.get_fignums()]
    return buf.getvalue(), figures


def _run_directive():
    import hashlib

    from docutils import nodes
    from sphinx.util.docutils import SphinxDirective

    class MixrankRun(SphinxDirective):
        """``mixrank-run``: a Python block executed at build time, shown with its printed
        output and figures (as the gallery shows the vignettes); the blocks of a page share
        one namespace, and an exception fails the build."""

        has_content = True

        def run(self) -> list[Any]:
            import matplotlib.pyplot as plt

            code = "\n".join(self.content)
            ns = _RUN_NAMESPACES.setdefault(self.env.docname, {"__name__": "__main__"})
            try:
                out, figures = run_block(code, ns)
            except Exception as exc:
                raise self.error(f"mixrank-run block failed: {type(exc).__name__}: {exc}") from exc
            shown: list[Any] = [nodes.literal_block(code, code, language="python")]
            if out.strip():
                shown.append(nodes.literal_block(out, out.rstrip("\n"), language="text",
                                                 classes=["mixrank-run-output"]))
            folder = Path(self.env.srcdir) / RUN_DIR
            folder.mkdir(exist_ok=True)
            for k, fig in enumerate(figures):
                key = hashlib.sha1(f"{self.env.docname}:{self.lineno}:{k}".encode()).hexdigest()
                name = f"{key[:16]}.png"
                fig.savefig(folder / name, dpi=90, bbox_inches="tight")
                shown.append(nodes.image(uri=f"/{RUN_DIR}/{name}", alt="figure"))
            plt.close("all")
            return shown

    return MixrankRun


def _forget_namespace(app, env, docname: str) -> None:
    _RUN_NAMESPACES.pop(docname, None)


USER_GUIDE_REST = "user-guide-rest"


def user_guide_rest(index_text: str, src: Path) -> list[str]:
    """The pages of ``docs/`` (``*.md``) that no toctree of the root page lists: they join
    the end of the User guide (in place of the line ``user-guide-rest``), so a new page
    needs no edit of ``docs/index.md``."""
    listed = {ln.strip() for ln in index_text.splitlines()}
    return sorted(p.stem for p in src.glob("*.md") if p.stem != "index" and p.stem not in listed)


def _index_rest(app, docname: str, source: list[str]) -> None:
    if docname != "index":
        return
    rest = user_guide_rest(source[0], Path(app.srcdir))
    source[0] = re.sub(rf"^{USER_GUIDE_REST}$", "\n".join(rest), source[0], flags=re.M)


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
    app.connect("autodoc-process-signature", _no_constructor)
    app.add_directive("mixrank-run", _run_directive())
    app.connect("env-purge-doc", _forget_namespace)
    validation_signature()
    app.connect("source-read", _changelog)
    app.connect("source-read", _defaults_note)
    app.connect("source-read", _index_rest)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
