"""CLI subcommand ``power``: N*, MDE, power and the calculator audit (no data).

Inputs: parsed arguments.  Outputs: :func:`mixrank.power_summary`'s
quantity/value/note table (and the calculator audit of
:func:`mixrank.design.power.audit.calculator_audit` with marginals).
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import emit, render, titled
from .options import level_power_args, out_args


def cmd_power(args: argparse.Namespace) -> None:
    from ..design.power.audit import calculator_audit
    from ..design.power.summary import power_summary

    alpha = round(1 - args.level, 12)           # --level 0.95 is alpha 0.05 exactly
    table = power_summary(p_a=args.p_a, p_b=args.p_b, rho=args.rho, sigma_d=args.sigma_d,
                          delta=args.delta, n=args.n, alpha=alpha, power=args.power,
                          method=args.test)
    audit = None
    if args.p_a is not None:
        audit = calculator_audit(args.p_a, args.p_b, rho=args.rho, alpha=alpha,
                                 power=args.power)
    if args.format == "table":
        from .._display import format_signif

        lines = [f"{q:>10} = {format_signif(v)}   {note}"
                 for q, v, note in zip(table.quantity, table.value, table.note)]
        text = "\n".join(lines) + "\n"
        if audit is not None:
            text += "\n== Calculator audit ==\n" + render(audit, "table")
        emit(text, args)
    elif audit is not None and args.format in ("json", "markdown"):
        emit(titled([("quantities", table), ("audit", audit)], args.format), args)
    elif audit is not None and args.table == "audit":
        emit(render(audit, args.format), args)
    else:
        emit(render(table, args.format), args)


def register(sub: Any) -> None:
    """Add ``power`` to the subparsers ``sub``."""
    s = sub.add_parser("power", help="N*, MDE, power and the calculator audit (no data)")
    s.add_argument("--p-a", type=float, default=None, help="accuracy of model A")
    s.add_argument("--p-b", type=float, default=None, help="accuracy of model B")
    s.add_argument("--rho", type=float, default=None, help="correlation of the 0/1 scores")
    s.add_argument("--sigma-d", type=float, default=None, help="paired SD of the differences")
    s.add_argument("--delta", type=float, default=None, help="difference to resolve")
    s.add_argument("--n", type=float, default=None, help="paired cells available")
    s.add_argument("--test", default="wald", choices=["wald", "connor"],
                   help="wald (paired z) or connor (McNemar; marginals only)")
    s.add_argument("--table", default="summary", choices=["summary", "audit"],
                   help="csv: which table to write")
    level_power_args(s, level=True)
    out_args(s)
    s.set_defaults(func=cmd_power)
