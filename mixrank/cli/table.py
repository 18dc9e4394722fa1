"""CLI subcommand ``table``: the leaderboard as a table for a paper (LaTeX, Markdown, HTML).

Inputs: parsed arguments (the data and fit options of :mod:`mixrank.cli.options`).
Outputs: the text of ``res.table(format=, digits=, adjust=, interval=, caption=,
label=)`` (:meth:`~mixrank.results.pairwise_result.PairwiseResult.table`): one row per
model with its score and interval, rank interval, compact letters and ``n``,
under a caption naming the unit of inference, the SE/df method, the
adjustment and the level.  ``--format`` here is the paper format (``latex``,
default; ``markdown``; ``html``), not the tables' text/csv/json.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import ask_result, emit, fit_from_args
from .options import ADJUST_ALL, fit_args

#: ``table(format=)`` and ``table(interval=)`` values, written here so that building the parser
#: imports no statistics (tests/test_startup.py); equal to
#: ``mixrank.results.paper_table.FORMATS`` / ``INTERVALS`` (tests/cli/test_cli_table.py).
FORMATS: tuple[str, ...] = ("latex", "markdown", "html")
INTERVALS: tuple[str, ...] = ("bounds", "pm")


def cmd_table(args: argparse.Namespace) -> None:
    kw = ask_result(args, "contrasts", adjust=("--adjust", args.adjust))
    res = fit_from_args(args)
    emit(res.table(args.format, args.digits, adjust=kw.get("adjust"), interval=args.interval,
                   caption=args.caption, label=args.label), args)


def _digits(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0 (decimals), got {text!r}")
    return value


def register(sub: Any) -> None:
    """Add ``table`` to the subparsers ``sub``."""
    s = sub.add_parser("table", help="the leaderboard for a paper: score and interval, rank "
                                     "interval, compact letters and n (LaTeX, Markdown, HTML)")
    fit_args(s)
    s.add_argument("--format", default="latex", choices=list(FORMATS),
                   help="latex (booktabs, default), markdown (pipe table, pandoc caption) or "
                        "html")
    s.add_argument("--output", "-o", default=None, help="write to this file instead of stdout")
    s.add_argument("--digits", type=_digits, default=3,
                   help="decimals of the scores and intervals (default 3)")
    s.add_argument("--adjust", default=None, choices=ADJUST_ALL,
                   help="the letters' family-wise adjustment (the values contrasts(adjust=) "
                        "takes for the fit's type); default the fit's")
    s.add_argument("--interval", default="bounds", choices=list(INTERVALS),
                   help="bounds: [lower, upper] in its own column (default); pm: score "
                        "\u00b1 half-width")
    s.add_argument("--caption", default=None,
                   help="text put before the generated caption (escaped)")
    s.add_argument("--label", default=None, help="LaTeX \\label (HTML: the table's id)")
    s.set_defaults(func=cmd_table)
