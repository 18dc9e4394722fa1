"""CLI subcommands ``select-items`` and ``subset-score``: a new model scored on a fraction of the items.

Inputs: parsed arguments; the data argument is the reference leaderboard
(long format, several models); ``subset-score`` also reads ``--new`` (the
new models' scores on the selected items) and ``--selection`` (the table
``select-items`` wrote).  Outputs: the selection table; the scores (or the
contrasts against the reference models, or the rank intervals) of
:func:`mixrank.subset_score`; with ``--table diagnostics`` (``select-items``)
the per-item flags of :func:`mixrank.item_diagnostics`.  docs/subset.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import UsageError, emit, frame_data, render
from .options import data_args, out_args

_FORMULA_HELP = ("score, model and item: 'correct ~ model + (1|subject/question)' (the default); "
                 "the item is the random term with the most factors")


def _read(path: str, flag: str) -> Any:
    from ..frame.source import to_pandas

    if path is None:
        raise UsageError(f"{flag} is required")
    return to_pandas(path)


def cmd_select_items(args: argparse.Namespace) -> None:
    from ..subset import item_diagnostics, select_items

    data = frame_data(args)
    if args.table == "diagnostics":
        if args.k is not None or args.seed is not None or args.item_model != "rasch" \
                or args.dims != 1:
            raise UsageError("--table diagnostics lists every item's flags; --k, --seed, "
                             "--item-model and --dims would be ignored: drop them")
        emit(render(item_diagnostics(data, formula=args.formula, strata=args.strata),
                    args.format), args)
        return
    if args.k is None:
        raise UsageError("select-items needs --k, the number of items to select (e.g. --k 100)")
    sel = select_items(data, args.k, formula=args.formula, strata=args.strata,
                       item_model=args.item_model, dims=args.dims, rng=args.seed)
    emit(render(sel, args.format), args)


def cmd_subset_score(args: argparse.Namespace) -> None:
    from ..subset import subset_score

    data = frame_data(args)
    new = _read(args.new, "--new")
    selection = _read(args.selection, "--selection")
    res = subset_score(data, new, selection=selection, formula=args.formula,
                       item_model=args.item_model, dims=args.dims, level=args.level)
    if args.adjust is not None and args.table != "contrasts":
        raise UsageError(f"--adjust sets the p_adjusted of --table contrasts; with --table "
                         f"{args.table} it would be ignored: drop it or pass --table contrasts")
    if args.table == "scores":
        tab = res.scores(args.method)
    elif args.table == "contrasts":
        tab = res.contrasts(method=args.method or "model_assisted",
                            **({} if args.adjust is None else {"adjust": args.adjust}))
    else:
        tab = res.rank_intervals(args.method or "model_assisted")
    emit(render(tab, args.format), args)


def _shared(s: argparse.ArgumentParser) -> None:
    data_args(s)
    s.add_argument("--formula", "-f", default="correct ~ model + (1|subject/question)",
                   help=_FORMULA_HELP)
    s.add_argument("--item-model", default="rasch", choices=["rasch", "2pl"],
                   help="item model fitted on the reference: rasch (default) or 2pl")
    s.add_argument("--dims", type=int, default=1,
                   help="--item-model 2pl: abilities per model (default 1)")


def register(sub: Any) -> None:
    """Add ``select-items`` and ``subset-score`` to the subparsers ``sub``."""
    s = sub.add_parser("select-items", help="which items to run a new model on: a stratified "
                       "probability sample of the reference leaderboard's items")
    _shared(s)
    s.add_argument("--strata", default=None,
                   help="column whose levels are strata (default: the formula's subject term)")
    s.add_argument("--k", "-k", type=int, default=None, help="items to select")
    s.add_argument("--seed", type=int, default=None, help="seed of the selection")
    s.add_argument("--table", default="selection", choices=["selection", "diagnostics"],
                   help="selection (default): the sampled items and their inclusion "
                   "probabilities; diagnostics: every item's difficulty, discrimination and "
                   "flags (a likely wrong answer key, nobody / everybody solves it)")
    out_args(s)
    s.set_defaults(func=cmd_select_items)

    s = sub.add_parser("subset-score", help="a new model's full-benchmark score, with its "
                       "interval, from its answers on the selected items")
    _shared(s)
    s.add_argument("--new", required=True,
                   help="the new models' scores on the selected items (long table file)")
    s.add_argument("--selection", required=True,
                   help="the selection written by select-items (CSV, parquet or JSON lines)")
    s.add_argument("--level", type=float, default=0.95,
                   help="confidence level of the intervals, in (0, 1) (default 0.95)")
    s.add_argument("--method", default=None,
                   choices=["model_assisted", "stratified_mean", "irt"],
                   help="the estimate shown: model_assisted (design-based, the default of "
                   "contrasts and ranks), stratified_mean, irt (model-based); scores: all")
    s.add_argument("--table", default="scores", choices=["scores", "contrasts", "ranks"],
                   help="scores (default), contrasts against every reference model, or ranks "
                   "among them")
    s.add_argument("--adjust", default=None, choices=["none", "holm", "bonferroni", "bh"],
                   help="--table contrasts: the p_adjusted of each new model's contrasts "
                   "(default none: closed testing, at most one of them can be null; "
                   "docs/subset.md)")
    out_args(s)
    s.set_defaults(func=cmd_subset_score)
