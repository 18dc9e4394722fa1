"""CLI subcommand ``judge``: how an LLM judge departs from reference labels, and the label budget.

Inputs: parsed arguments (see :mod:`mixrank.cli.common`; ``--gold`` is
required).  Outputs: the table of ``JudgeResult.judge()`` (bias per model
with its interval at the formula's unit, agreement, effective labels), the
differential-bias test, and with ``--plan DELTA`` the label budget per pair
(``JudgeResult.plan(delta, labels=True)``); docs/judge.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import UsageError, emit, fit_from_args, titled
from .options import alpha_power_args, common_args


def cmd_judge(args: argparse.Namespace) -> None:
    import pandas as pd  # here, not at import: --help starts without pandas

    if args.gold is None:
        raise UsageError("mixrank judge needs --gold COLUMN: the column of reference labels "
                         "(NaN on unlabelled cells) beside the judge's score in -f")
    if args.plan is None and (args.alpha != 0.05 or args.power != 0.8):
        raise UsageError("--alpha and --power set the label budget of --plan DELTA; without "
                         "--plan they would be ignored: drop them or pass --plan")
    res = fit_from_args(args)
    tab = res.judge()
    test = tab.attrs["mixrank"]["differential_bias"]
    diff = pd.DataFrame([{k: test[k] for k in ("statistic", "df1", "df2", "p_value", "units",
                                                "note")}])
    parts = [("judge", tab), ("differential_bias", diff)]
    if args.plan is not None:
        parts.append(("label_plan", res.plan(args.plan, labels=True, level=1 - args.alpha,
                                             power=args.power)))
    emit(titled(parts, args.format), args)


def register(sub: Any) -> None:
    """Add ``judge`` to the subparsers ``sub``."""
    s = sub.add_parser("judge", help="judge vs reference labels (--gold): bias per model, "
                                     "agreement, differential bias, label budget")
    common_args(s)
    alpha_power_args(s)
    s.add_argument("--plan", type=float, default=None, metavar="DELTA",  # uses --alpha, --power
                   help="also the reference labels each pair needs to resolve a gap DELTA")
    s.set_defaults(func=cmd_judge)
