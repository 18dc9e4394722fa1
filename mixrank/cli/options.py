"""CLI stage: the argument groups the subcommands share (data, fit, output, ranks,
alpha/power options).

Inputs: an ``argparse`` parser.  Outputs: the parser with the options added.
Contents: :func:`data_args`, :func:`fit_args`, :func:`common_args`,
:func:`out_args`, :func:`rank_args`, :func:`alpha_power_args`.  No pandas or
statistics import: every subcommand's ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .._version import MAX_DRAWS

__all__ = ["data_args", "fit_args", "common_args", "out_args", "rank_args", "alpha_power_args"]


def data_args(p: argparse.ArgumentParser) -> None:
    """The data argument and the options of its readers."""
    p.add_argument("data", help="long-format file (.csv, .csv.gz, .parquet, .jsonl) or a folder "
                   "of them, a wide matrix (--input-format wide), harness output (lm-eval, "
                   "Inspect, HELM, lighteval), '-' (standard input), 'example' or "
                   "dataset:NAME")
    p.add_argument("--input-format", default="auto",
                   choices=["auto", "long", "jsonl", "wide", "lm-eval", "inspect", "helm",
                            "lighteval"],
                   help="auto: harness output (lm-eval, Inspect, HELM, lighteval) is detected "
                   "from its files, else a long table or a folder of long parquet/CSV files; "
                   "'-' reads standard input as CSV (jsonl: JSON lines; wide: a wide CSV)")
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

    ``family_extra``: further ``--family`` values a subcommand still accepts
    (``resolution``'s former ``--family adjacent|all``).
    """
    data_args(p)
    p.add_argument("--formula", "-f", required=formula_required,
                   help="e.g. 'correct ~ model + (1|subject)'")
    p.add_argument("--family", default="gaussian", choices=["gaussian", "binomial", *family_extra],
                   help="gaussian: the paired linear mixed model (default); binomial: glmer's "
                   "binomial GLMM over all models at once, the formula read as glmer reads it "
                   "(docs/glmm.md)" + (f"; {'|'.join(family_extra)}: the former name of "
                                       "--judged" if family_extra else ""))
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
    p.add_argument("--df", default=None, choices=["cr2", "containment", "satterthwaite"],
                   help="SE and df of the contrasts: cr2 (cluster-robust at the unit, "
                   "Bell-McCaffrey df; the default with a unit of >= 3 levels), containment "
                   "(REML SE, units - 1 df) or satterthwaite (lme4 + lmerTest's answer)")
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
    p.add_argument("--backend", default="pandas", choices=["pandas", "duckdb", "dask"],
                   help="where the rows are reduced to cell scores (duckdb/dask: parquet, out "
                   "of core; needs the scale extra)")


def common_args(p: argparse.ArgumentParser, formula_required: bool = True,
                family_extra: Sequence[str] = ()) -> None:
    """Fit options plus output options."""
    fit_args(p, formula_required, family_extra)
    out_args(p)


def out_args(p: argparse.ArgumentParser) -> None:
    """``--format`` and ``--output``."""
    p.add_argument("--format", default="table", choices=["table", "csv", "json", "markdown"],
                   help="output format: table (aligned text, default), csv, json or markdown")
    p.add_argument("--output", "-o", default=None, help="write to this file instead of stdout")


def rank_args(p: argparse.ArgumentParser) -> None:
    """Options of :meth:`FitResult.rank_intervals`."""
    p.add_argument("--coverage", default="marginal", choices=["marginal", "simultaneous"],
                   help="rank intervals: marginal (each model's interval covers its rank, "
                   "default) or simultaneous (all intervals at once; docs/methods.md §7)")
    p.add_argument("--rank-method", default="holm", choices=["holm", "bonferroni", "bh", "maxt"],
                   help="multiple-testing correction behind the rank intervals: holm "
                   "(default), bonferroni, bh, or maxt (joint Gaussian draws; --draws, --seed)")
    p.add_argument("--draws", type=int, default=None,
                   help="Gaussian draws for --rank-method maxt (default 2000, at most "
                   f"{MAX_DRAWS})")
    p.add_argument("--seed", type=int, default=None, help="seed for --rank-method maxt")


def alpha_power_args(p: argparse.ArgumentParser) -> None:
    """``--alpha`` and ``--power``."""
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
