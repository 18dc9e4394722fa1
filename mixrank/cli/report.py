"""CLI subcommand ``report``: a self-contained HTML report of a fit.

Inputs: parsed arguments.  Outputs: the file written by
:func:`mixrank.report.html.write_report` (with ``--family binomial`` the GLMM
page of :mod:`mixrank.report.html_glmm`); its path on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import (
    UsageError,
    fit_from_args,
    load,
    progress_arg,
    rank_kwargs,
    refuse_for_binomial,
    selector,
)
from .options import fit_args, rank_args

_GLMM_PAGE = ("the binomial report has fixed sections (scores, both scales' contrasts, "
              "components, fixed effects, rank intervals, verdicts, diagnostics); drop it")

#: report options the binomial GLMM page does not take: (flag, dest, default, instead).
_REPORT_LINEAR_ONLY = (
    ("--delta", "delta", 0.02, "the planning section needs --family gaussian; " + _GLMM_PAGE),
    ("--multiplicity", "multiplicity", "holm", _GLMM_PAGE),
    ("--max-pairs", "max_pairs", 40, _GLMM_PAGE),
    ("--coverage", "coverage", "marginal", _GLMM_PAGE),
    ("--rank-method", "rank_method", "holm", _GLMM_PAGE),
    ("--draws", "draws", None, _GLMM_PAGE),
    ("--seed", "seed", None, _GLMM_PAGE),
    ("--rci-before", "rci_before", None, "the reliable-change section needs --family gaussian, "
     "or 'mixrank rci'"),
    ("--rci-after", "rci_after", None, "the reliable-change section needs --family gaussian, "
     "or 'mixrank rci'"),
    ("--sensitivity", "sensitivity", None, "verdict stability refits the linear model; use "
     "--family gaussian"))


def cmd_report(args: argparse.Namespace) -> None:
    import pandas as pd

    from ..report.html import write_report

    refuse_for_binomial(args, _REPORT_LINEAR_ONLY)
    if args.rci_before is None and (args.rci_sample is not None or args.rci_sem is not None):
        raise UsageError("--rci-sample and --rci-sem shape the reliable-change section; give "
                         "--rci-before and --rci-after too, or drop them")
    if (args.rci_before is None) != (args.rci_after is None):
        raise UsageError("report: --rci-before and --rci-after go together (the two versions "
                         "whose items are compared)")
    loaded = load(args)
    if args.formula is None:
        if not isinstance(loaded, pd.DataFrame) or "reader" not in loaded.attrs.get("mixrank", {}):
            raise UsageError("report needs -f/--formula, e.g. 'correct ~ model + (1|subject)' "
                             "(it is optional only for harness output)")
        args.formula = "correct ~ model + (1|subject)"
        print(f"  formula: {args.formula}", file=sys.stderr)
    if args.title is None and isinstance(loaded, pd.DataFrame) \
            and "format" in loaded.attrs.get("mixrank", {}):
        args.title = f"{Path(args.data).name} ({loaded.attrs['mixrank']['format']} output)"
    args.output = args.output or "mixrank-report.html"
    res = fit_from_args(args, data=loaded)
    if getattr(res, "family", "gaussian") == "binomial":
        print(f"wrote {write_report(res, args.output, title=args.title, level=args.level)}",
              file=sys.stderr)
        return
    rc = None
    if args.rci_before is not None:
        from ..change import reliable_change
        from ..frame.source import to_pandas

        data = to_pandas(loaded)
        rc = reliable_change(data, before=selector(args.rci_before, data),
                             after=selector(args.rci_after, data), model=res.frame.spec.comparison,
                             score=res.frame.spec.response, sample=args.rci_sample or "sample",
                             sem=args.rci_sem or "item")
    multiplicity = None if args.multiplicity == "none" else args.multiplicity
    out = write_report(res, args.output, title=args.title, level=args.level,
                       plan_delta=args.delta, max_pairs=args.max_pairs,
                       rank_kwargs={k: v for k, v in rank_kwargs(args).items() if k != "level"},
                       resolution_kwargs=dict(adjust=multiplicity), reliable_change=rc,
                       sensitivity=args.sensitivity, progress=progress_arg(args))
    print(f"wrote {out}", file=sys.stderr)


def register(sub: Any) -> None:
    """Add ``report`` to the subparsers ``sub``."""
    s = sub.add_parser("report", help="self-contained HTML report of a fit")
    fit_args(s, formula_required=False)
    rank_args(s)
    s.add_argument("--output", "-o", default=None,
                   help="the HTML file to write (default mixrank-report.html)")
    s.add_argument("--title", default=None,
                   help="the page title (default: the data's file name)")
    s.add_argument("--delta", type=float, default=0.02, help="planning target (default 0.02)")
    s.add_argument("--multiplicity", default="holm", choices=["holm", "bonferroni", "bh", "none"],
                   help="correction of the verdict table's multiplicity paradigm: holm "
                   "(default), bonferroni, bh or none")
    s.add_argument("--max-pairs", type=int, default=40,
                   help="with more pairs, show the adjacent ones (default 40)")
    s.add_argument("--rci-before", default=None, help="add a reliable-change section: the first "
                   "version (model name or COLUMN=V[,V][;COLUMN=V]); needs --rci-after")
    s.add_argument("--rci-after", default=None, help="the second version, as --rci-before")
    s.add_argument("--rci-sample", default=None,
                   help="column of the repeated samples per item (default sample)")
    s.add_argument("--rci-sem", default=None, choices=["item", "pooled"],
                   help="error model of the reliable-change classes (see mixrank rci --sem)")
    s.add_argument("--sensitivity", default=None, metavar="KINDS",
                   help="add verdict stability to the resolution section, e.g. loso,bootstrap")
    s.set_defaults(func=cmd_report)
