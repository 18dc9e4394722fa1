"""CLI subcommand ``scores``: each model's score with its interval at the formula's unit.

Inputs: parsed arguments (see :mod:`mixrank.cli.common`).  Outputs: the table
of :meth:`FitResult.model_scores` (best first), with ``--probabilities`` the
rank probabilities of :meth:`FitResult.rank_probabilities` as well; with
``--family binomial`` the GLMM's ``model_scores()`` (share of successes,
fitted log-odds, mean fitted probability).
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import (
    UsageError,
    emit,
    fit_from_args,
    glmm_by,
    is_binomial,
    refuse_for_binomial,
    table_of,
    titled,
)
from .options import common_args

#: scores options the binomial GLMM does not take: (flag, dest, default, instead).
_SCORES_LINEAR_ONLY = (
    ("--score-estimand", "score_estimand", None, "its scores are each model's share of "
     "successes, fitted log-odds and mean fitted probability; drop --score-estimand"),
    ("--probabilities", "probabilities", False, "rank probabilities need --family gaussian; "
     "'mixrank ranks --family binomial' gives rank intervals"),
    ("--draws", "draws", 10000, "--draws sets the draws of --probabilities; drop it"),
    ("--seed", "seed", None, "--seed seeds --probabilities; drop it"))


def cmd_scores(args: argparse.Namespace) -> None:
    refuse_for_binomial(args, _SCORES_LINEAR_ONLY)
    if args.scale is not None and not is_binomial(args):
        raise UsageError(f"--scale {args.scale} chooses the scale of the binomial GLMM's scores; "
                         "pass --family binomial, or drop --scale")
    by = glmm_by(args, args.by)
    res = fit_from_args(args)
    if is_binomial(args):
        tab = res.model_scores(scale=args.scale or "logit", **by)
        if args.by is None:
            tab = tab.sort_values(["estimate", "model"], ascending=[False, True],
                                  kind="stable").reset_index(drop=True)
        emit(table_of(res, tab, args.format), args)
        return
    if args.by is not None:   # per level of a covariate (model * x formulas)
        emit(table_of(res, res.model_scores(by=args.by), args.format), args)
        return
    tab = res.model_scores(estimand=args.score_estimand)
    keys = ["group"] if "group" in tab.columns else []     # one table per group (docs/messy.md §4)
    tab = tab.sort_values([*keys, "estimate", "model"], ascending=[True] * len(keys) + [False, True],
                          kind="stable")
    tab = tab.reset_index(drop=True)
    if not args.probabilities:
        emit(table_of(res, tab, args.format), args)
        return
    rp = res.rank_probabilities(draws=args.draws, rng=args.seed)
    emit(titled([("model_scores", tab), ("rank_probabilities", rp)], args.format), args)


def register(sub: Any) -> None:
    """Add ``scores`` to the subparsers ``sub``."""
    s = sub.add_parser("scores", help="each model's score \u00b1 CI at the formula's unit, "
                                      "beside the iid standard error")
    common_args(s)
    s.add_argument("--score-estimand", default=None, choices=["gls", "cells", "units"],
                   help="estimand of the scores (default: the fit's --estimand); 'cells' is "
                        "the plain mean over each model's cells")
    s.add_argument("--probabilities", action="store_true",
                   help="also print P(rank = r) and P(best) per model")
    s.add_argument("--draws", type=int, default=10000, help="Gaussian draws for --probabilities")
    s.add_argument("--seed", type=int, default=None, help="seed for --probabilities")
    s.add_argument("--by", default=None, metavar="COLUMN",
                   help="each model's score per level of this covariate of the formula")
    s.add_argument("--scale", default=None, choices=["logit", "response"],
                   help="--family binomial: scores and intervals as log-odds (logit, default) "
                        "or as the probability averaged over the cells (response)")
    s.set_defaults(func=cmd_scores)
