"""CLI subcommand ``omnibus``: do the models differ at all?

Inputs: parsed arguments (see :mod:`mixrank.cli.common`).  Outputs: the one-row table of
:meth:`FitResult.omnibus` (statistic, df, p-value, the test and its unit).  ``--test``
is ``omnibus(method=)`` (``--method`` is ``fit(method=)``).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from ..errors import MixrankError
from .common import UsageError, emit, fit_from_args, is_binomial, table_of
from .options import common_args


def cmd_omnibus(args: argparse.Namespace) -> None:
    if is_binomial(args) or getattr(args, "gold", None) is not None:
        raise UsageError("omnibus tests the Gaussian fit's model scores; --family binomial and "
                         "--gold fits have no omnibus test: drop the option, or use --test "
                         "cochran on 0/1 scores")
    res = fit_from_args(args)
    try:
        kw = {k: v for k, v in (("draws", args.draws), ("rng", args.seed)) if v is not None}
        tab = res.omnibus(method=args.test, **kw)
    except MixrankError as exc:     # omnibus(method=) is --test here (--method is fit's)
        raise type(exc)(re.sub(r"\bmethod='(\w+)'", r"--test \1", str(exc))) from None
    emit(table_of(res, tab, args.format), args)


def register(sub: Any) -> None:
    """Add ``omnibus`` to the subparsers ``sub``."""
    s = sub.add_parser("omnibus", help="the test that every model's score is equal")
    common_args(s)
    s.add_argument("--test", default=None,
                   choices=["cr2", "randomization", "friedman", "cochran"],
                   help="omnibus(method=): cr2 (the CR2 Wald test at the formula's unit with "
                        "the HTZ F; the default where the contrasts use CR2), randomization "
                        "(its p-value from permutations of the model labels within units), "
                        "friedman or cochran (cell-level tests on complete cells)")
    s.add_argument("--draws", type=int, default=None,
                   help="--test randomization: permutations (default 2000; all of them when "
                        "there are fewer)")
    s.add_argument("--seed", type=int, default=None, help="seed for --test randomization")
    s.set_defaults(func=cmd_omnibus)
