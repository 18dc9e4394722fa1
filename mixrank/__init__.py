"""mixrank: which differences on an LLM benchmark are real.

R-style formulas and paired mixed models over long-format per-item results:
``mixrank.fit("correct ~ model + (1|subject) + (1|prompt)", data)``.
This module only re-exports the public API.
"""

from . import arena, power  # arena: a callable package, mixrank.arena(data, ...) fits
from ._util import MIXRANK_VERSION as __version__
from .arena import ArenaMonitor, ArenaResult, battles_from_scores, read_battles
from .change import ReliableChange, ReliableChangeSummary, reliable_change
from .design.anytime import monitor
from .design.power import mde, n_star, sigma_d
from .design.power_summary import power_summary
from .design.simulate import simulate
from .engine.control import Control
from .engine.glmm_control import GlmmControl
from .engine.native import fit_pairs
from .errors import (
    ConvergenceError,
    ConvergenceWarning,
    DataError,
    DataQualityWarning,
    DegeneratePairWarning,
    DesignError,
    FormulaError,
    IncompletePairWarning,
    MissingDataWarning,
    MissingDependencyError,
    MixrankError,
    MixrankWarning,
    SingularFitWarning,
    SmallSampleWarning,
    UnpairedCellsWarning,
    WeakDesignWarning,
)
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
from .io.datasets import list_datasets, load_dataset, load_example, load_shared
from .io.helm import read_helm
from .io.inspect_logs import read_inspect
from .io.lighteval import read_lighteval
from .io.lm_eval import read_lm_eval
from .io.pass_at_k import pass_at_k
from .io.read import read
from .io.wide import read_wide
from .judge.plan import plan_labels
from .judge.result import JudgeResult
from .results import FitResult, GlmmResult, Summary

__all__ = [
    "__version__",
    "arena", "ArenaResult", "ArenaMonitor", "battles_from_scores", "read_battles",
    "fit", "fit_pairs", "Control", "GlmmControl", "parse", "build_frame", "simulate", "load_example",
    "load_shared",
    "load_dataset", "list_datasets",
    "reliable_change", "ReliableChange", "ReliableChangeSummary",
    "read", "pass_at_k", "read_lm_eval", "read_inspect", "read_helm", "read_lighteval", "read_wide", "power",
    "n_star", "mde", "sigma_d", "power_summary", "monitor",
    "mcnemar", "paired_t", "wilcoxon", "paired_bootstrap", "sign_flip", "effect_sizes", "adjust",
    "Spec", "RandomTerm", "Frame", "FitResult", "GlmmResult", "Summary",
    "MixrankError", "FormulaError", "DataError", "DesignError", "ConvergenceError",
    "MissingDependencyError", "MixrankWarning", "SingularFitWarning", "ConvergenceWarning",
    "SmallSampleWarning", "MissingDataWarning", "DegeneratePairWarning", "DataQualityWarning",
    "plan_labels", "JudgeResult",
    "WeakDesignWarning", "IncompletePairWarning", "UnpairedCellsWarning",
]
