"""mixrank: which differences on an LLM benchmark are real.

R-style formulas and paired mixed models over long-format per-item results:
``mixrank.fit("correct ~ model + (1|subject) + (1|prompt)", data)``.
This module only re-exports the public API.

The re-exports are lazy (PEP 562 module ``__getattr__``): ``import mixrank``
loads nothing but the version and the exception tree, and the first access to
a name such as ``mixrank.fit`` imports the module that defines it, so the
command line's ``--version`` / ``--help`` start without pandas or scipy.
``__all__`` and ``dir(mixrank)`` list every public name, and only those.

Module map (stages lowest first, as in ``tests/test_import_graph.py``):

* shared helpers: :mod:`~mixrank.errors` (the one tree of exceptions and
  warnings), :mod:`~mixrank._deprecate` (old spellings kept for one release),
  :mod:`~mixrank._progress` (``progress=``), :mod:`~mixrank._util`,
  :mod:`~mixrank._display` (the one rounding and layout of printed tables),
  :mod:`~mixrank._warned` (the warnings a fit raised, for the report),
  :mod:`~mixrank._version`;
* the stages: :mod:`~mixrank.formula` (text -> Spec), :mod:`~mixrank.frame`
  (data + Spec -> Frame), :mod:`~mixrank.io` (readers, datasets, out-of-core
  backends), :mod:`~mixrank.engine` (Frame -> per-pair fits; LMM, GLMM,
  cross-checks), :mod:`~mixrank.inference` (paired tests, multiplicity, rank
  intervals), :mod:`~mixrank.design` (resolution, power, planning, anytime
  monitoring, sensitivity), :mod:`~mixrank.change` (item-level reliable change),
  :mod:`~mixrank.results` (FitResult, GlmmResult), :mod:`~mixrank.arena`
  (Bradley-Terry battle logs), :mod:`~mixrank.judge` (PPI++ judge-corrected fits),
  :mod:`~mixrank.subset` (a new model scored on a probability sample of items);
* composition: :mod:`~mixrank.fit` (:func:`fit`), :mod:`~mixrank.routes`
  (its routes, one module each: gaussian, binomial, interaction, judge),
  :mod:`~mixrank.power` (the closed forms in one namespace);
* presentation: :mod:`~mixrank.report` (plots, HTML), :mod:`~mixrank.cli` (the
  ``mixrank`` command, run by :mod:`~mixrank.__main__`).
"""

from __future__ import annotations

import importlib as _importlib
import sys as _sys
import types as _types
import typing as _typing

from ._version import MIXRANK_VERSION as _MIXRANK_VERSION
from .errors import (
    ConvergenceError,
    ConvergenceWarning,
    DataError,
    DataQualityWarning,
    DegeneratePairWarning,
    DesignError,
    FormulaError,
    GlmmConvergenceWarning,
    IncompletePairWarning,
    MissingDataWarning,
    MissingDependencyError,
    MixrankDeprecationWarning,
    MixrankError,
    MixrankFutureWarning,
    MixrankWarning,
    OmittedKeyWarning,
    OptionError,
    PirlsError,
    SingularFitWarning,
    SmallSampleWarning,
    UnitOfInferenceWarning,
    UnpairedCellsWarning,
    WeakDesignWarning,
)

#: Public name -> the module that defines it (relative to this package).
_LAZY: dict[str, str] = {
    "power": ".power",
    "arena": ".arena", "ArenaResult": ".arena", "ArenaMonitor": ".arena",
    "battles_from_scores": ".arena", "read_battles": ".arena",
    "plan_labels": ".judge.plan", "JudgeResult": ".judge.result",
    "ReliableChange": ".change", "ReliableChangeSummary": ".change",
    "reliable_change": ".change",
    "monitor": ".design.anytime",
    "mde": ".design.power", "n_star": ".design.power", "sigma_d": ".design.power",
    "power_summary": ".design.power",
    "simulate": ".design.simulate",
    "Control": ".engine.control", "GlmmControl": ".engine.glmm.control",
    "fit": ".fit",
    "RandomTerm": ".formula", "Spec": ".formula", "parse": ".formula",
    "Frame": ".frame", "build_frame": ".frame",
    "adjust": ".inference.multiplicity",
    "effect_sizes": ".inference.paired", "mcnemar": ".inference.paired",
    "paired_bootstrap": ".inference.paired", "paired_t": ".inference.paired",
    "sign_flip": ".inference.paired", "wilcoxon": ".inference.paired",
    "list_datasets": ".io.datasets", "load_dataset": ".io.datasets",
    "load_example": ".io.datasets",
    "read": ".io.read", "read_wide": ".io.wide", "pass_at_k": ".io.pass_at_k",
    "FitResult": ".results", "GlmmResult": ".results", "Summary": ".results",
    "GlmmByResult": ".results", "GlmmSlopeResult": ".results",
    "GlmmSummary": ".results.glmm.result", "PairFit": ".engine.records",
    "WeakTerm": ".engine.estimability",
    "select_items": ".subset", "subset_score": ".subset", "item_diagnostics": ".subset",
    "SubsetResult": ".subset",
}

if _typing.TYPE_CHECKING:  # the same names, eagerly, for type checkers and IDEs
    from . import power
    from .arena import ArenaMonitor, ArenaResult, arena, battles_from_scores, read_battles
    from .change import ReliableChange, ReliableChangeSummary, reliable_change
    from .design.anytime import monitor
    from .design.power import mde, n_star, power_summary, sigma_d
    from .design.simulate import simulate
    from .engine.control import Control
    from .engine.estimability import WeakTerm
    from .engine.glmm.control import GlmmControl
    from .engine.records import PairFit
    from .fit import fit
    from .formula import RandomTerm, Spec, parse
    from .frame import Frame, build_frame
    from .inference.multiplicity import adjust
    from .inference.paired import (
        effect_sizes,
        mcnemar,
        paired_bootstrap,
        paired_t,
        sign_flip,
        wilcoxon,
    )
    from .io.datasets import list_datasets, load_dataset, load_example
    from .io.pass_at_k import pass_at_k
    from .io.read import read
    from .io.wide import read_wide
    from .judge.plan import plan_labels
    from .judge.result import JudgeResult
    from .results import FitResult, GlmmByResult, GlmmResult, GlmmSlopeResult, Summary
    from .results.glmm.result import GlmmSummary
    from .subset import SubsetResult, item_diagnostics, select_items, subset_score


#: Former top-level names -> (module, attribute, new home).  They still resolve for one
#: release, with a MixrankDeprecationWarning naming the new home (mixrank/_deprecate.py).
_MOVED: dict[str, tuple[str, str, str]] = {
    "fit_pairs": (".engine.lmm.native", "fit_pairs",
                  "mixrank.engine.fit_pairs (an engine stage: integer index pairs of a Frame)"),
    "load_shared": (".io.datasets", "load_shared",
                    "mixrank.load_dataset (load_shared was its alias)"),
    **{f"read_{fmt}": (f".io.{mod}", f"read_{fmt}",
                       f"mixrank.read(path, format={fmt!r}) (or mixrank.io.read_{fmt})")
       for fmt, mod in (("helm", "helm"), ("inspect", "inspect_logs"),
                        ("lighteval", "lighteval"), ("lm_eval", "lm_eval"))},
}


def __getattr__(name: str) -> _typing.Any:
    """Import the module that defines the public ``name`` on first access (PEP 562)."""
    target = _LAZY.get(name)
    if target is None and name in _MOVED:
        from ._deprecate import warn_moved

        where, attr, home = _MOVED[name]
        warn_moved(f"mixrank.{name}", home)
        return getattr(_importlib.import_module(where, __name__), attr)
    if target is None:
        raise AttributeError(f"module 'mixrank' has no attribute {name!r}")
    module = _importlib.import_module(target, __name__)
    value = module if name in _MODULES else getattr(module, name)
    globals()[name] = value  # later accesses skip this function
    return value


def __dir__() -> list[str]:
    """The public API only (``__all__``): not the helpers this module imports, nor the
    submodules that importing them sets as attributes (``import mixrank.io``)."""
    return sorted(__all__)


#: Public names that are modules themselves.
_MODULES = frozenset({"power"})

#: Public functions named like the submodule (or subpackage) that defines them: ``mixrank.arena``
#: is the function :func:`mixrank.arena.api.arena` (its real signature and ``help()``), while
#: ``import mixrank.arena.data`` / ``from mixrank.arena import ArenaMonitor`` reach the package.
_SHADOWED = frozenset({"fit", "arena"})


class _Namespace(_types.ModuleType):
    """This package's module type: ``mixrank.fit`` stays the function.

    Importing the submodule :mod:`mixrank.fit` (as the CLI does) makes the
    import system set the package attribute ``fit`` to that module; with the
    re-exports lazy nothing would set it back, so that assignment is
    dropped and ``mixrank.fit`` resolves to the function through
    :func:`__getattr__`, as it did with eager re-exports.
    """

    def __setattr__(self, name: str, value: _typing.Any) -> None:
        if name in _SHADOWED and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Namespace
del annotations  # the __future__ feature object: not a public name


__version__ = _MIXRANK_VERSION

#: The public API, sorted, as ``dir(mixrank)`` lists it (``__version__`` is there too, as
#: every package's, but is no API name).
__all__ = [
    "ArenaMonitor", "ArenaResult", "Control", "ConvergenceError", "ConvergenceWarning",
    "DataError", "DataQualityWarning", "DegeneratePairWarning", "DesignError", "FitResult",
    "FormulaError", "Frame", "GlmmByResult", "GlmmControl", "GlmmConvergenceWarning",
    "GlmmResult", "GlmmSlopeResult", "GlmmSummary", "IncompletePairWarning", "JudgeResult",
    "MissingDataWarning", "MissingDependencyError", "MixrankDeprecationWarning", "MixrankError",
    "MixrankFutureWarning", "MixrankWarning", "OmittedKeyWarning", "OptionError", "PairFit",
    "PirlsError", "RandomTerm", "ReliableChange", "ReliableChangeSummary", "SingularFitWarning",
    "SmallSampleWarning", "Spec", "SubsetResult", "Summary", "UnitOfInferenceWarning",
    "UnpairedCellsWarning", "WeakDesignWarning", "WeakTerm", "adjust", "arena",
    "battles_from_scores", "build_frame", "effect_sizes", "fit", "item_diagnostics",
    "list_datasets", "load_dataset", "load_example", "mcnemar", "mde", "monitor", "n_star",
    "paired_bootstrap", "paired_t", "parse", "pass_at_k", "plan_labels", "power", "power_summary",
    "read", "read_battles", "read_wide", "reliable_change", "select_items", "sigma_d",
    "sign_flip", "simulate", "subset_score", "wilcoxon",
]
