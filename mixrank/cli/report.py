"""CLI subcommand ``report``: a self-contained HTML report of a fit.

Inputs: parsed arguments.  Outputs: the file written by
:func:`mixrank.report.html.write_report` (one page builder for every family:
the sections the result supports); its path on stderr.  An option whose
section the result type lacks (``--delta`` without a planner,
``--sensitivity`` ...) is refused before the fit by the result's own message.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import (
    UsageError,
    ask_result,
    fit_from_args,
    load,
    progress_arg,
    rank_kwargs,
    selector,
)
from .options import RANK_ADJUST, fit_args, former_flag, rank_args


def _section_adjust(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """The multiplicity method of the rank intervals and of the verdict table (None: the
    fit's own default, the one the API uses).

    ``--adjust`` goes to each section whose accessor takes the value (the
    result type's declared options: ``maxt`` only the rank intervals, ``none``
    only the verdicts; each section's caption names its method); a value
    neither takes is refused with the rank intervals' message.  The former
    ``--rank-method`` / ``--multiplicity`` set their own section only.
    """
    from .common import result_class

    given = args.adjust
    rank = getattr(args, "rank_adjust", None)
    verdict = getattr(args, "verdict_adjust", None)
    if given is not None:
        cls = result_class(args)
        takes_rank = given in (cls.supported_options("rank_intervals").get("adjust") or ())
        takes_verdict = (None if given == "none" else given) in (
            cls.supported_options("resolution").get("adjust") or ())
        if not (takes_rank or takes_verdict):
            ask_result(args, "rank_intervals", adjust=("--adjust", given))
        rank = rank or (given if takes_rank else None)
        verdict = verdict or (given if takes_verdict else None)
    return rank, verdict          # None: the fit's own default (docs/defaults.md), as the API


def cmd_report(args: argparse.Namespace) -> None:
    import pandas as pd

    from ..report.html import write_report

    rank_adjust, verdicts = _section_adjust(args)
    ranks = rank_kwargs(args, rank_adjust, from_args=False)
    ask_result(args, "rank_intervals", coverage=("--coverage", ranks["coverage"]))
    if "adjust" in ranks:
        ask_result(args, "rank_intervals", adjust=("--adjust", ranks["adjust"]))
    resolution_kw = {} if verdicts is None else dict(adjust=None if verdicts == "none" else verdicts)
    if resolution_kw:
        ask_result(args, "resolution", adjust=("--adjust", resolution_kw["adjust"]))
    if args.delta is not None:
        ask_result(args, "plan", via=f"--delta {args.delta} (the planning section)")
    if args.sensitivity:
        ask_result(args, "sensitivity", via=f"--sensitivity {args.sensitivity}")
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
    rc = None
    if args.rci_before is not None:
        from ..change import reliable_change
        from ..frame.source import to_pandas

        data = to_pandas(loaded)
        spec = getattr(res.frame, "spec", None) or res.formula.spec
        rc = reliable_change(data, before=selector(args.rci_before, data),
                             after=selector(args.rci_after, data), model=spec.comparison,
                             score=spec.response, sample=args.rci_sample or "sample",
                             sem=args.rci_sem or "item")
    out = write_report(res, args.output, title=args.title, level=args.level,
                       plan_delta=args.delta,
                       max_pairs=args.max_pairs,
                       rank_kwargs={k: v for k, v in ranks.items() if k != "level"},
                       resolution_kwargs=resolution_kw,
                       reliable_change=rc, sensitivity=args.sensitivity,
                       progress=progress_arg(args))
    print(f"wrote {out}", file=sys.stderr)


def register(sub: Any) -> None:
    """Add ``report`` to the subparsers ``sub``."""
    s = sub.add_parser("report", help="self-contained HTML report of a fit")
    fit_args(s, formula_required=False)
    rank_args(s, former_dest="rank_adjust", adjust_help=(
        "multiple-testing correction of the rank intervals and of the verdict table's "
        "multiplicity paradigm: holm, bonferroni or bh for both (default: the fit's own, as the "
        "API's; docs/defaults.md); maxt for the rank "
        "intervals only (joint Gaussian draws; --draws, --seed), none for the verdicts only "
        "(that paradigm dropped); each section's caption names its method"),
        choices=(*RANK_ADJUST, "none"))
    s.add_argument("--output", "-o", default=None,
                   help="the HTML file to write (default mixrank-report.html)")
    s.add_argument("--title", default=None,
                   help="the page title (default: the data's file name)")
    s.add_argument("--delta", type=float, default=None, help="planning target (default 0.02)")
    former_flag(s, "--multiplicity", "--adjust", "verdict_adjust",
                choices=["holm", "bonferroni", "bh", "none"])
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
