"""The ``mixrank`` command: a thin layer over the public API.

Inputs: command-line arguments.  Outputs: tables on stdout (or ``--output``)
in ``table``, ``csv``, ``json`` or ``markdown`` format; exit code 0 on
success, 2 on a usage or data error (message on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from .errors import MixrankError

__all__ = ["main", "build_parser"]

DEMO_FORMULA = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # exit 2 without argparse's own exit
        raise _UsageError(f"{self.prog}: {message}")


def _render(df: pd.DataFrame, fmt: str) -> str:
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        return df.to_json(orient="records", indent=1) + "\n"
    if fmt == "markdown":
        cols = list(df.columns)
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for row in df.itertuples(index=False):
            lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
        return "\n".join(lines) + "\n"
    with pd.option_context("display.max_rows", 500, "display.max_columns", 50,
                           "display.width", 160, "display.float_format", "{:.6g}".format):
        return df.to_string(index=False) + "\n"


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _emit(text: str, args: argparse.Namespace) -> None:
    if getattr(args, "output", None):
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


def _pairs(values: Sequence[str] | None) -> list[tuple[str, str]] | None:
    if not values:
        return None
    out = []
    for v in values:
        if "," not in v:
            raise _UsageError(f"--pair {v!r}: expected MODEL_A,MODEL_B")
        a, b = v.split(",", 1)
        out.append((a.strip(), b.strip()))
    return out


def _load(args: argparse.Namespace) -> Any:
    from .io.datasets import load_example

    if args.data in ("example", "-"):
        return load_example()
    return args.data


def _fit(args: argparse.Namespace):
    from .fit import fit

    return fit(args.formula, _load(args), method=args.method, estimand=args.estimand,
               pairs=_pairs(args.pair), level=args.level,
               pair_by=args.pair_by.split(",") if args.pair_by else None,
               replicate=args.replicate, na=args.na)


def _common(p: argparse.ArgumentParser, formula_required: bool = True) -> None:
    p.add_argument("data", help="long-format file (.csv, .csv.gz, .parquet, .jsonl) or 'example'")
    p.add_argument("--formula", "-f", required=formula_required,
                   help="e.g. 'correct ~ model + (1|subject)'")
    p.add_argument("--method", default="reml", choices=["reml", "aggregate"])
    p.add_argument("--estimand", default="gls", choices=["gls", "cells", "units"])
    p.add_argument("--pair", action="append", metavar="A,B", help="fit only this pair (repeatable)")
    p.add_argument("--pair-by", default=None, help="comma-separated pairing keys")
    p.add_argument("--replicate", default=None, help="replicate column, e.g. sample")
    p.add_argument("--na", default="error", choices=["error", "drop"])
    p.add_argument("--level", type=float, default=0.95)
    _out(p)


def _out(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default="table", choices=["table", "csv", "json", "markdown"])
    p.add_argument("--output", "-o", default=None, help="write to this file instead of stdout")


def cmd_demo(args: argparse.Namespace) -> None:
    from .fit import fit
    from .io.datasets import load_example

    df = load_example()
    res = fit(DEMO_FORMULA, df)
    parts = ["mixrank demo: the bundled simulated example benchmark (see data/README.md)", "",
             res.frame.summary_text(), "", "== Contrasts (model_a - model_b) ==",
             _render(res.contrasts(), args.format), "== Variance components (first pair) ==",
             _render(res.variance_components().query("model_a == 'm01' and model_b == 'm02'"),
                     args.format),
             "== Design effect ==", _render(res.design_effect(), args.format)]
    for title, fn in _optional_sections(res):
        try:
            parts += [f"== {title} ==", _render(fn(), args.format)]
        except (ImportError, AttributeError, NotImplementedError):
            continue
    _emit("\n".join(parts), args)


def _optional_sections(res) -> list[tuple[str, Callable[[], pd.DataFrame]]]:
    return [("Rank intervals (95%, marginal)", lambda: res.rank_intervals()),
            ("Resolution verdicts (adjacent pairs)", lambda: res.resolution())]


def cmd_fit(args: argparse.Namespace) -> None:
    res = _fit(args)
    if args.format == "table":
        _emit(str(res.summary()) + "\n", args)
    else:
        _emit(_render(res.contrasts(), args.format), args)


def cmd_contrasts(args: argparse.Namespace) -> None:
    _emit(_render(_fit(args).contrasts(), args.format), args)


def cmd_components(args: argparse.Namespace) -> None:
    _emit(_render(_fit(args).variance_components(), args.format), args)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    p = _Parser(prog="mixrank", description="Which differences on an LLM benchmark are real.")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    d = sub.add_parser("demo", help="full analysis of the bundled example")
    _out(d)
    d.set_defaults(func=cmd_demo)
    for name, fn, hlp in [("fit", cmd_fit, "fit and print an lme4-like summary"),
                          ("contrasts", cmd_contrasts, "pairwise contrasts table"),
                          ("components", cmd_components, "variance components per pair")]:
        s = sub.add_parser(name, help=hlp)
        _common(s)
        s.set_defaults(func=fn)
    for register in _EXTRA_COMMANDS:
        register(sub, _common, _out, _fit, _render, _emit)
    return p


# Later stages register further subcommands here (ranks, resolution, plan, power, rci, report).
_EXTRA_COMMANDS: list[Callable[..., None]] = []


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help(sys.stderr)
            return 2
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = _show_warning
            args.func(args)
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except MixrankError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
