"""CLI stage: the argument groups the subcommands share (data, fit, output, ranks,
level/power options) and the former spellings of flags.

One vocabulary (docs/vocabulary.md): a flag is the API keyword with ``_``
written ``-`` (``--adjust``, ``--level``, ``--draws``, ``--pairs``);
tests/test_vocabulary.py checks every flag of every subcommand.  A former
flag (``--rank-method``, ``--multiplicity``, ``--alpha``, ``--B``,
``--judged``) is still accepted for one release by :func:`former_flag`: it is
hidden from ``--help``, mapped onto the new flag, and prints one deprecation
line on stderr; giving both spellings with different values is an error.

Inputs: an ``argparse`` parser.  Outputs: the parser with the options added.
Contents: :func:`data_args`, :func:`fit_args`, :func:`common_args`,
:func:`out_args`, :func:`rank_args`, :func:`level_power_args`,
:func:`former_flag`, :func:`check_former`, :func:`input_format`,
:func:`parse_control` (``--control`` as a Control).  No pandas or
statistics import: every subcommand's ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .._version import MAX_DRAWS

__all__ = ["data_args", "fit_args", "common_args", "out_args", "rank_args", "level_power_args",
           "former_flag", "check_former", "deprecation_line", "input_format", "FORMER_FLAGS"]

#: Every former flag still accepted, with the flag that replaces it (one release).
FORMER_FLAGS: dict[str, str] = {"--rank-method": "--adjust", "--multiplicity": "--adjust",
                                "--alpha": "--level", "--B": "--draws", "--judged": "--pairs",
                                "--rci-method": "--method", "--model-column": "--model",
                                "--all-columns": "--wide"}

#: The ``--input-format`` names: ``mixrank.io.read.INPUT_FORMATS`` (checked there when
#: the option is parsed, and by tests/test_vocabulary.py; written out here for --help,
#: which must not import the readers).
_INPUT_FORMATS_HELP = "auto, helm, inspect, lighteval, lm_eval, table, jsonl, wide"


def deprecation_line(old: str, new: str) -> None:
    """One line on stderr: ``old`` is the former spelling of ``new`` (as warn_renamed says it)."""
    print(f"warning: {old} is the former name of {new}; it still works in this release and "
          f"will be removed in the next -- write {new} instead (docs/vocabulary.md)",
          file=sys.stderr)


class _Former(argparse.Action):
    """A former flag: stores the converted value in the new flag's ``dest``, with a
    deprecation line; remembers it so :func:`check_former` can spot a contradiction."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, new: str,
                 new_type: Callable[[str], Any] | None = None, shown: str = "",
                 **kw: Any) -> None:
        super().__init__(option_strings, dest, **kw)
        self.new, self.new_type, self.shown = new, new_type, shown or new

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        value = self.const if self.nargs == 0 else values
        deprecation_line(str(option_string), self.shown)
        setattr(namespace, self.dest, value)
        seen = getattr(namespace, "_former", None) or []
        seen.append((option_string, self.new, value, self.new_type))
        namespace._former = seen


def former_flag(p: argparse.ArgumentParser, old: str, new: str, dest: str, *,
                new_type: Callable[[str], Any] | None = None, shown: str = "",
                **kw: Any) -> None:
    """Accept the former flag ``old`` as ``new`` (hidden from --help, one deprecation line).

    ``kw``: the old flag's ``type`` (which maps its text to the new flag's
    value: ``--alpha a`` -> ``--level 1 - a``) and ``choices``; ``new_type``
    parses the new flag's text, to compare the two when both are given;
    ``shown``: how the deprecation line writes the new spelling (default ``new``).
    """
    p.add_argument(old, dest=dest, action=_Former, new=new, new_type=new_type, shown=shown,
                   default=argparse.SUPPRESS, help=argparse.SUPPRESS, **kw)


def check_former(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """Refuse a former flag and its new spelling given with different values.

    Raises ``ValueError`` naming both flags (the caller prints it as ``error:``).
    """
    for old, new, value, new_type in getattr(args, "_former", None) or []:
        if isinstance(value, bool):          # a switch (--all-columns): nothing to contradict
            continue
        given = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == new]
        given += [a.split("=", 1)[1] for a in argv if a.startswith(new + "=")]
        for text in given:
            try:
                other = new_type(text) if new_type is not None else text
            except (TypeError, ValueError):
                other = text
            same = (abs(float(other) - float(value)) <= 1e-12
                    if isinstance(value, float) and isinstance(other, (int, float))
                    else other == value)
            if not same:
                raise ValueError(f"got both {new} {text} and its former name {old} (meaning "
                                 f"{new} {value}); pass only {new}")
    if hasattr(args, "_former"):
        del args._former


def _alpha_to_level(text: str) -> float:
    try:
        return 1.0 - float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None


def input_format(text: str) -> str:
    """``--input-format``: one of ``mixrank.io.read.INPUT_FORMATS`` (former spellings mapped).

    Imported here, when the option is parsed, not at ``--help``.
    """
    from ..io.read import FORMER_FORMAT_NAMES, INPUT_FORMATS

    if text in FORMER_FORMAT_NAMES:
        deprecation_line(f"--input-format {text}", f"--input-format {FORMER_FORMAT_NAMES[text]}")
        return FORMER_FORMAT_NAMES[text]
    if text not in INPUT_FORMATS:
        raise argparse.ArgumentTypeError(f"{text!r} is not an input format; expected one of "
                                         f"{', '.join(INPUT_FORMATS)} (the names of "
                                         "mixrank.read(format=))")
    return text


def data_args(p: argparse.ArgumentParser) -> None:
    """The data argument and the options of its readers."""
    p.add_argument("data", help="long-format file (.csv, .csv.gz, .parquet, .jsonl) or a folder "
                   "of them, a wide matrix (--input-format wide), harness output (lm-eval, "
                   "Inspect, HELM, lighteval), '-' (standard input), 'example' or "
                   "dataset:NAME")
    # --input-format, not --format: --format is the output format of every subcommand
    p.add_argument("--input-format", default="auto", type=input_format,
                   metavar="{" + _INPUT_FORMATS_HELP.replace(", ", ",") + "}",
                   help="the names of mixrank.read(format=): auto detects harness output "
                   "(lm_eval, inspect, helm, lighteval) from its files, else a long table or a "
                   "folder of long parquet/CSV files; table: a long table ('-': CSV on standard "
                   "input); jsonl: a long table as JSON lines; wide: an items x models matrix")
    p.add_argument("--items", default=None, help="wide input: item key columns "
                   "(default subject,question)")
    p.add_argument("--metric", default=None, help="harness output: the per-sample metric "
                   "(lm-eval: also TASK=METRIC,...; default acc); or name it on the left of -f")
    p.add_argument("--subject-field", default=None,
                   help="Inspect: sample metadata field used as subject (default: the task)")
    p.add_argument("--prompt-field", default=None,
                   help="Inspect: sample metadata field used as prompt")
    p.add_argument("--filter", dest="lm_filter", default=None,
                   help="lm-eval: filter, or TASK=FILTER,...")
    p.add_argument("--prompt-label", default=None, help="lm-eval: constant prompt label")


def _lam(text: str) -> float | str:
    """``--lam``: ``unit`` or a number (its range is checked by the fit)."""
    if text == "unit":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1] or 'unit', got "
                                         f"{text!r}") from None


def fit_args(p: argparse.ArgumentParser, formula_required: bool = True,
             family_extra: Sequence[str] = ()) -> None:
    """Data options plus the options of :func:`mixrank.fit`.

    ``family_extra``: further ``--family`` values a subcommand still accepts,
    not shown in ``--help`` (``resolution``'s former ``--family adjacent|all``,
    now ``--pairs``).
    """
    data_args(p)
    p.add_argument("--formula", "-f", required=formula_required,
                   help="e.g. 'correct ~ model + (1|subject)'")
    p.add_argument("--family", default="gaussian", choices=["gaussian", "binomial", *family_extra],
                   metavar="{gaussian,binomial}",
                   help="the response distribution: gaussian, the paired linear mixed model "
                   "(default); binomial, glmer's binomial GLMM over all models at once, the "
                   "formula read as glmer reads it (docs/glmm.md)")
    p.add_argument("--nagq", type=int, default=None, choices=[0, 1],
                   help="--family binomial: glmer's nAGQ (1 = Laplace, the default; 0 = faster)")
    p.add_argument("--method", default="reml", choices=["reml", "aggregate"],
                   help="reml: the paired mixed model (default); aggregate: average the "
                   "differences within the first random term's levels, then a paired t-test "
                   "over those units (docs/methods.md §3)")
    p.add_argument("--estimand", default="cells", choices=["cells", "gls", "units"],
                   help="what a gap and a score mean: cells = the plain mean over common cells "
                   "(the leaderboard number), gls = lme4's fixed effect, units = the mean of the "
                   "first random term's level means (default %(default)s; docs/methods.md §3)")
    p.add_argument("--df", default=None,
                   choices=["cr2", "containment", "satterthwaite", "satterthwaite-vc"],
                   help="SE and df of the contrasts: cr2 (cluster-robust at the unit, "
                   "Bell-McCaffrey df; the default with a unit of >= 3 levels), containment "
                   "(REML SE, units - 1 df), satterthwaite (lme4 + lmerTest's answer) or "
                   "satterthwaite-vc (REML SE, Satterthwaite df of the variance components; "
                   "the default with a term crossed with the unit)")
    p.add_argument("--pair", action="append", metavar="A,B",
                   help="fit only this pair (repeatable); quote names holding commas or spaces: "
                   "'\"A, v2\",B'")
    p.add_argument("--pair-by", default=None, help="comma-separated pairing keys")
    p.add_argument("--replicate", default=None, help="replicate column, e.g. sample")
    p.add_argument("--pass-at", type=int, default=None, metavar="K",
                   help="fit the unbiased per-item pass@K of k-of-n input (a cbind(k, n - k) "
                   "response, or 0/1 rows with --replicate) instead of the raw score")
    p.add_argument("--na", default="error", choices=["error", "drop"],
                   help="missing scores: error (default) stops naming the first one; drop "
                   "drops those rows and reports how many")
    p.add_argument("--drop-incomplete", action="store_true",
                   help="remove the models of pairs the formula cannot estimate (e.g. a model "
                   "scored under one prompt mode only) before fitting, and say which; default: "
                   "keep those pairs as rows with NaN estimate and a note (docs/messy.md §3)")
    p.add_argument("--level", type=float, default=0.95,
                   help="confidence level of the intervals, in (0, 1) (default 0.95)")
    p.add_argument("--gold", default=None, metavar="COLUMN",
                   help="reference labels (humans, a stronger judge) on a subset of cells, "
                   "empty elsewhere, when the score is an LLM judge's: scores and contrasts "
                   "become PPI++ corrected means of the labels (docs/judge.md)")
    p.add_argument("--lam", type=_lam, default=None,
                   help="with --gold: PPI++'s lambda, a number in [0, 1] or 'unit' (minimise "
                   "the variance at the unit); default its plug-in per quantity")
    p.add_argument("--control", default=None, metavar="FIELD=VALUE,...",
                   help="fit(control=): fields of Control (GlmmControl with --family binomial), "
                   "e.g. small_sample=ignore,min_units=3")
    p.add_argument("--backend", default="pandas", choices=["pandas", "duckdb", "dask"],
                   help="where the rows are reduced to cell scores (duckdb/dask: parquet, out "
                   "of core; needs the scale extra)")


def common_args(p: argparse.ArgumentParser, formula_required: bool = True,
                family_extra: Sequence[str] = ()) -> None:
    """Fit options plus output options."""
    fit_args(p, formula_required, family_extra)
    out_args(p)


def out_args(p: argparse.ArgumentParser) -> None:
    """``--format``, ``--wide`` and ``--output``."""
    p.add_argument("--format", default="table", choices=["table", "csv", "json", "markdown"],
                   help="output format: table (aligned text, rounded for reading, at most 100 "
                   "characters a line; default), csv or json (every column, full precision) or "
                   "markdown (rounded)")
    p.add_argument("--wide", action="store_true",
                   help="table/markdown: every column of each table, not only its main ones "
                   "(a table wider than the line is printed in blocks of columns)")
    p.add_argument("--output", "-o", default=None, help="write to this file instead of stdout")


#: The ``--adjust`` values of the rank intervals (``rank_intervals(adjust=)``).
RANK_ADJUST = ("holm", "bonferroni", "bh", "maxt")
#: Every ``adjust=`` value of the package (mixrank.inference.multiplicity.ADJUST, checked by
#: tests/cli/test_vocabulary_adjust.py); each result type refuses those it does not take.
ADJUST_ALL = ("holm", "none", "bonferroni", "bh", "maxt", "stepdown")


def rank_args(p: argparse.ArgumentParser, adjust_help: str = "",
              former_dest: str = "adjust", choices: Sequence[str] = RANK_ADJUST) -> None:
    """Options of :meth:`FitResult.rank_intervals` (``--adjust``; former ``--rank-method``).

    ``former_dest``: where ``--rank-method`` stores its value (``report``
    keeps it for the rank section only).
    """
    p.add_argument("--coverage", default="marginal", choices=["marginal", "simultaneous"],
                   help="rank intervals: marginal (each model's interval covers its rank, "
                   "default) or simultaneous (all intervals at once; docs/methods.md §7)")
    p.add_argument("--adjust", default=None, choices=choices,
                   help=adjust_help or "multiple-testing correction behind the rank intervals: "
                   "holm, bonferroni, bh, or maxt (the unit sign flips on the CR2 path, else "
                   "joint Gaussian draws; --draws, --seed); default the fit's own "
                   "(docs/defaults.md)")
    former_flag(p, "--rank-method", "--adjust", former_dest, choices=RANK_ADJUST)
    p.add_argument("--draws", type=int, default=None,
                   help="Gaussian draws for --adjust maxt (default 2000, at most "
                   f"{MAX_DRAWS})")
    p.add_argument("--seed", type=int, default=None, help="seed for --adjust maxt")


def level_power_args(p: argparse.ArgumentParser, level: bool = False) -> None:
    """``--power`` (and ``--level`` when the subcommand has no fit options); former ``--alpha``.

    ``--alpha A`` is read as ``--level 1-A`` (docs/vocabulary.md).
    """
    if level:
        p.add_argument("--level", type=float, default=0.95,
                       help="confidence level, in (0, 1): the test is two-sided at "
                       "1 - level (default 0.95)")
    former_flag(p, "--alpha", "--level", "level", type=_alpha_to_level, new_type=float,
                shown="--level (level = 1 - alpha)")
    p.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")


def parse_control(text: str, binomial: bool) -> Any:
    """``--control small_sample=ignore,min_units=3`` as a Control (GlmmControl if binomial).

    Raises ValueError (the caller's usage error) for a malformed entry or an
    unknown field, with the closest field named.
    """
    import dataclasses

    from .._util import did_you_mean
    from ..engine.control import Control
    from ..engine.glmm.control import GlmmControl

    cls = GlmmControl if binomial else Control
    fields = {f.name for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for part in text.split(","):
        key, sep, raw = (x.strip() for x in part.partition("="))
        if not sep or not key:
            raise ValueError(f"--control {text!r}: expected FIELD=VALUE,... with fields of "
                             f"{cls.__name__}: {sorted(fields)}")
        if key not in fields:
            raise ValueError(f"--control: {key!r} is not a field of {cls.__name__}"
                             f"{did_you_mean(key, fields)}; fields: {sorted(fields)}")
        value: Any = raw
        for kind in (int, float):
            try:
                value = kind(raw)
                break
            except ValueError:
                continue
        values[key] = value
    return cls(**values)
