"""Stage cli: ``--pass-at K`` -- k-of-n input turned into the per-item pass@k before a fit.

Inputs: the parsed options (``--formula`` with a ``cbind(k, n - k)`` /
``cbind(k, f)`` response, or a 0/1 response with ``--replicate``) and the
loaded data.  Outputs: the formula with ``pass_at_K`` on the left and the
long frame of :func:`mixrank.pass_at_k` (one row per model and cell), which
the linear engine fits as a continuous score (docs/pass_at_k.md §3).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

import pandas as pd

__all__ = ["apply_pass_at"]

_CBIND = re.compile(r"^\s*cbind\s*\(\s*([A-Za-z_.][\w.]*)\s*,\s*(.+?)\s*\)\s*$")
_MINUS = re.compile(r"^([A-Za-z_.][\w.]*)\s*-\s*([A-Za-z_.][\w.]*)$")


def apply_pass_at(args: argparse.Namespace, data: Any,
                  UsageError: type[Exception]) -> tuple[str, pd.DataFrame]:
    """``(formula, data)`` for a fit of the per-item pass@K (``args.pass_at``).

    ``UsageError``: the CLI's usage exception (passed in by
    :mod:`mixrank.cli.common`, which imports this module).

    Raises
    ------
    UsageError
        ``--family binomial`` (pass@k is a continuous score), no formula, a
        0/1 response without ``--replicate``, ``--backend`` other than pandas.
    DataError
        From :func:`mixrank.pass_at_k` (k > n, c > n, non-integer counts).
    """
    from ..formula import parse
    from ..frame.build import resolve_keys
    from ..frame.source import to_pandas
    from ..io.pass_at_k import pass_at_k

    k = args.pass_at
    if getattr(args, "family", "gaussian") == "binomial":
        raise UsageError(f"--pass-at {k} gives a per-item probability (a continuous score) for "
                         "the linear engine; drop --family binomial (or drop --pass-at to fit "
                         "the counts with the binomial GLMM)")
    if not args.formula or "~" not in args.formula:
        raise UsageError("--pass-at needs --formula, e.g. -f 'cbind(k, n - k) ~ model + "
                         "(1|subject)' for counts, or a 0/1 response with --replicate sample")
    if getattr(args, "backend", "pandas") != "pandas":
        raise UsageError(f"--pass-at reduces the samples in pandas; drop --backend "
                         f"{args.backend}")
    data = to_pandas(data)
    lhs, rhs = args.formula.split("~", 1)
    m = _CBIND.match(lhs)
    trials = None
    if m:
        correct, second = m.group(1), m.group(2).strip()
        mm = _MINUS.match(second)
        if mm and mm.group(2) == correct:
            trials = mm.group(1)
        else:
            if second not in data.columns:
                raise UsageError(f"--pass-at: the response {lhs.strip()!r} is not cbind(k, n - k) "
                                 "or cbind(k, f) with columns of the data")
            data = data.assign(**{"n_samples_": pd.to_numeric(data[correct], errors="coerce")
                                  + pd.to_numeric(data[second], errors="coerce")})
            data = data.drop(columns=[second])
            trials = "n_samples_"
        replicate = None
    else:
        correct = lhs.strip()
        replicate = args.replicate
        if replicate is None:
            raise UsageError(f"--pass-at {k} with the 0/1 response {correct!r} needs --replicate "
                             "naming the sample column (several rows per model and cell); for "
                             "counts write the response as cbind(k, n - k)")
    if args.na == "drop":                      # --na drop: rows without a count are dropped
        used = [c for c in (correct, trials) if c is not None and c in data.columns]
        miss = data[used].isna().any(axis=1)
        if miss.any():
            print(f"  --na drop: dropped {int(miss.sum())} row(s) with a missing "
                  f"{' or '.join(map(repr, used))}", file=sys.stderr)
            data = data[~miss.to_numpy()]
    col = f"pass_at_{k}"
    spec = parse(f"{col} ~ {rhs}")
    pair_by = [c.strip() for c in args.pair_by.split(",")] if args.pair_by else None
    columns = [c for c in data.columns if c not in (correct, trials)] + [col]
    keys = resolve_keys(spec, columns, pair_by=pair_by, replicate=replicate, na=args.na)
    out = pass_at_k(data, k, correct=correct, trials=trials, replicate=replicate,
                    keys=[spec.comparison, *keys], name=col)
    args.replicate = None
    return f"{col} ~ {rhs.strip()}", out
