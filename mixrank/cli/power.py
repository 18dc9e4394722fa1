"""CLI subcommand ``power``: N*, MDE, power and the calculator audit (no data).

Inputs: parsed arguments.  Outputs: a quantity/value/note table (and the
calculator audit of :func:`mixrank.design.audit.calculator_audit`).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import pandas as pd

from .common import UsageError, alpha_power_args, emit, out_args, render, titled


def cmd_power(args: argparse.Namespace) -> None:
    from ..design import power as pw

    marg = [v is not None for v in (args.p_a, args.p_b, args.rho)]
    common = dict(alpha=args.alpha)
    rows: list[dict] = []
    audit = None
    if all(marg):
        from ..design.audit import calculator_audit, cohen_h, shortcut_n

        m = dict(p_a=args.p_a, p_b=args.p_b, rho=args.rho)
        ns = pw.n_star(**m, power=args.power, method=args.test, **common)
        rows += [dict(quantity="delta", value=args.p_a - args.p_b, note="p_a - p_b"),
                 dict(quantity="sigma_d", value=pw.sigma_d(args.p_a, args.p_b, rho=args.rho),
                      note="paired SD of the cell differences"),
                 dict(quantity="cohen_h", value=cohen_h(args.p_a, args.p_b), note="Cohen's h"),
                 dict(quantity="n_star", value=ns, note=f"paired N* ({args.test}); plan "
                      f"{math.ceil(ns)} cells"),
                 dict(quantity="shortcut_n", value=shortcut_n(args.p_a, args.p_b, rho=args.rho,
                                                              power=args.power, **common),
                      note="unpaired Cohen-h n times (1 - rho): the shortcut")]
        if args.n is not None:
            rows += [dict(quantity="power", value=pw.power(n=args.n, method=args.test, **m, **common),
                          note=f"at n = {args.n:g}"),
                     dict(quantity="q", value=pw.resolution_ratio(args.n, method=args.test,
                                                                   power=args.power, **m, **common),
                          note="n / N*; resolved when >= 1"),
                     dict(quantity="mde", value=pw.mde(args.n, method=args.test, power=args.power,
                                                       **m, **common),
                          note=f"smallest |delta| resolved at n = {args.n:g}")]
        audit = calculator_audit(args.p_a, args.p_b, rho=args.rho, alpha=args.alpha,
                                 power=args.power)
    elif any(marg):
        raise UsageError("power: give all three of --p-a, --p-b and --rho (or --sigma-d with "
                          "--delta and/or --n)")
    elif args.sigma_d is not None:
        s = dict(sigma_d=args.sigma_d, **common)
        if args.delta is None and args.n is None:
            raise UsageError("power: with --sigma-d give --delta (for N*) and/or --n (for the MDE)")
        if args.delta is not None:
            ns = pw.n_star(args.delta, power=args.power, **s)
            rows.append(dict(quantity="n_star", value=ns, note=f"paired N*; plan {math.ceil(ns)} "
                             "cells"))
        if args.n is not None:
            rows.append(dict(quantity="mde", value=pw.mde(args.n, power=args.power, **s),
                             note=f"smallest |delta| resolved at n = {args.n:g}"))
        if args.n is not None and args.delta is not None:
            rows += [dict(quantity="power", value=pw.power(args.delta, args.n, **s),
                          note=f"at n = {args.n:g}"),
                     dict(quantity="q", value=pw.resolution_ratio(args.n, args.delta,
                                                                   power=args.power, **s),
                          note="n / N*; resolved when >= 1")]
    else:
        raise UsageError("power: describe the comparison with --p-a P --p-b P --rho R, or "
                          "--sigma-d S with --delta D and/or --n N")
    table = pd.DataFrame(rows)
    if args.format == "table":
        lines = [f"{r['quantity']:>10} = {r['value']:.6g}   {r['note']}" for r in rows]
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
    alpha_power_args(s)
    out_args(s)
    s.set_defaults(func=cmd_power)
