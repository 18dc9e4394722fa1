"""CLI subcommand ``rci``: item-level reliable change between two versions or re-runs.

Inputs: parsed arguments; selectors ``NAME`` or ``COLUMN=V[,V][;COLUMN=V]``.
Outputs: the tables of :func:`mixrank.reliable_change`'s result.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import UsageError, emit, frame_data, render, selector
from .options import data_args, former_flag, out_args


def cmd_rci(args: argparse.Namespace) -> None:
    from ..change import reliable_change

    greedy = [f for f, v in (("--greedy-sample", args.greedy_sample),
                             ("--greedy-before", args.greedy_before),
                             ("--greedy-after", args.greedy_after)) if v is not None]
    if greedy and args.table != "vs-greedy":
        raise UsageError(f"{greedy[0]} applies to --table vs-greedy; with --table {args.table} "
                         "it would be ignored: drop it or pass --table vs-greedy")
    data = frame_data(args)
    res = reliable_change(
        data, before=selector(args.before, data), after=selector(args.after, data),
        model=args.model, item=[c.strip() for c in args.item.split(",")],
        sample=None if args.sample == "none" else args.sample, score=args.score,
        split=args.split, by=None if args.by == "none" else args.by, method=args.method,
        sem=args.sem)
    if args.table == "summary":
        s = res.summary()
        if args.format == "table":
            emit(f"{s}\n\n== Classes ==\n{render(s.classes, 'table')}", args)
        else:
            emit(render(s.classes, args.format), args)
    elif args.table == "items":
        emit(render(res.items(), args.format), args)
    elif args.table == "by-subject":
        emit(render(res.by_subject(), args.format), args)
    elif args.table == "reliability":
        emit(render(res.summary().reliability, args.format), args)
    else:
        if args.greedy_before and args.greedy_after:
            g = res.vs_greedy(data, before=selector(args.greedy_before, data),
                              after=selector(args.greedy_after, data))
        elif args.greedy_sample is not None and not (args.greedy_before or args.greedy_after):
            g = res.vs_greedy(selector(f"{args.sample}={args.greedy_sample}", data)[args.sample][0])
        else:
            raise UsageError("rci --table vs-greedy needs --greedy-sample ID (that sample of each "
                              "version is its greedy run), or both --greedy-before and "
                              "--greedy-after selectors (e.g. sample=0 and sample=2)")
        emit(render(g, args.format), args)


def register(sub: Any) -> None:
    """Add ``rci`` to the subparsers ``sub``."""
    s = sub.add_parser("rci", help="item-level reliable change between two versions or re-runs")
    data_args(s)
    s.add_argument("--before", required=True,
                   help="model name, or COLUMN=V[,V][;COLUMN=V], e.g. sample=0,1")
    s.add_argument("--after", required=True, help="as --before")
    s.add_argument("--model", default="model",
                   help="column naming the model version (default model)")
    former_flag(s, "--model-column", "--model", "model")
    s.add_argument("--item", default="subject,question", help="item key columns")
    s.add_argument("--sample", default="sample", help="sample column ('none': one row per item)")
    s.add_argument("--score", default="correct", help="score column (default correct)")
    s.add_argument("--split", default="halves", choices=["halves", "odd_even"],
                   help="split-half reliability over samples: first/second half (default) or "
                   "odd/even samples (docs/methods.md §8)")
    s.add_argument("--by", default="subject", help="column for --table by-subject ('none')")
    s.add_argument("--method", default="rci", choices=["rci", "eb"],
                   help="rci: the reliable change index per item (default); eb: the "
                   "empirical-Bayes mixed-model alternative with FDR control")
    former_flag(s, "--rci-method", "--method", "method", choices=["rci", "eb"])
    s.add_argument("--sem", default="item", choices=["item", "pooled"],
                   help="error model of the RCI classes: per-item exact tests (default) or the "
                   "classical single pooled SEM")
    s.add_argument("--table", default="summary",
                   choices=["summary", "items", "by-subject", "reliability", "vs-greedy"],
                   help="which table: summary (default), items, by-subject, reliability or "
                   "vs-greedy")
    s.add_argument("--greedy-sample", default=None, help="--table vs-greedy: the sample id "
                   "taken as each version's greedy run")
    s.add_argument("--greedy-before", default=None, help="--table vs-greedy: selector of the "
                   "greedy run of the first version, e.g. sample=0")
    s.add_argument("--greedy-after", default=None, help="--table vs-greedy: as --greedy-before")
    out_args(s)
    s.set_defaults(func=cmd_rci)
