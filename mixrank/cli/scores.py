"""CLI subcommand ``scores``: each model's score with its interval at the formula's unit.

Inputs: parsed arguments (see :mod:`mixrank.cli.common`).  Outputs: the table
of :meth:`FitResult.model_scores` (best first; ``--letters`` adds the column of
``letters()``), with ``--probabilities`` the
rank probabilities of :meth:`FitResult.rank_probabilities` as well; with
``--family binomial`` the GLMM's ``model_scores()`` (share of successes,
fitted log-odds, mean fitted probability).
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import UsageError, ask_result, emit, fit_from_args, glmm_by, table_of, titled
from .options import common_args


def cmd_scores(args: argparse.Namespace) -> None:
    if not args.probabilities and (args.draws is not None or args.seed is not None):
        raise UsageError("--draws and --seed set the Gaussian draws of --probabilities; "
                         "without --probabilities they would be ignored: drop them or pass "
                         "--probabilities")
    if args.letters and args.by is not None:
        raise UsageError("--letters groups the models by their pairwise tests over every "
                         "model; with --by (scores per level of a covariate) it has no column "
                         "to fill: drop one of them")
    glmm_by(args, args.by)
    kw = ask_result(args, "model_scores", estimand=("--score-estimand", args.score_estimand),
                    scale=("--scale", args.scale), by=("--by", args.by),
                    scoring=("--scoring", args.scoring))
    probabilities = (ask_result(args, "rank_probabilities", via="--probabilities",
                                draws=("--draws", args.draws),
                                rng=("--seed", args.seed)) if args.probabilities else None)
    res = fit_from_args(args)
    tab = res.model_scores(**kw)
    if args.by is None:                 # best first (one table per group: docs/messy.md §4)
        keys = ["group"] if "group" in tab.columns else []
        tab = tab.sort_values([*keys, "estimate", "model"],
                              ascending=[True] * len(keys) + [False, True],
                              kind="stable").reset_index(drop=True)
    if args.letters:            # res.letters(): the fit's adjustment, at its level
        cld = res.letters(level=args.level)
        attrs = dict(tab.attrs)
        tab = tab.merge(cld[["model", "letters"]], on="model", how="left")
        cols = list(tab.columns[:-1])          # beside the interval
        at = cols.index("ci_upper") + 1 if "ci_upper" in cols else len(cols)
        tab = tab[[*cols[:at], "letters", *cols[at:]]]
        tab.attrs = attrs
    if probabilities is None:
        emit(table_of(res, tab, args.format), args)
        return
    rp = res.rank_probabilities(**probabilities)
    emit(titled([("model_scores", tab), ("rank_probabilities", rp)], args.format), args)


def register(sub: Any) -> None:
    """Add ``scores`` to the subparsers ``sub``."""
    s = sub.add_parser("scores", help="each model's score \u00b1 CI at the formula's unit, "
                                      "beside the iid standard error")
    common_args(s)
    s.add_argument("--score-estimand", default=None, choices=["gls", "cells", "units"],
                   help="estimand of the scores (default: the fit's --estimand); 'cells' is "
                        "the plain mean over each model's cells")
    s.add_argument("--scoring", default=None, choices=["adjusted", "plain"],
                   help="models scored on different cells: adjusted (default) puts every "
                        "score on the union of cells, adjusted for the cells a model lacks; "
                        "plain is the plain mean over each model's own cells (docs/methods.md "
                        "§11)")
    s.add_argument("--letters", action="store_true",
                   help="add the compact letter display (letters()): models sharing a letter "
                        "are not told apart by the fit's family-wise pairwise tests")
    s.add_argument("--probabilities", action="store_true",
                   help="also print P(rank = r) and P(best) per model")
    s.add_argument("--draws", type=int, default=None,
                   help="Gaussian draws for --probabilities (default 10000)")
    s.add_argument("--seed", type=int, default=None, help="seed for --probabilities")
    s.add_argument("--by", default=None, metavar="COLUMN",
                   help="each model's score per level of this covariate of the formula")
    s.add_argument("--scale", default=None, choices=["logit", "response"],
                   help="--family binomial: scores and intervals as log-odds (logit, default) "
                        "or as the probability averaged over the cells (response)")
    s.set_defaults(func=cmd_scores)
