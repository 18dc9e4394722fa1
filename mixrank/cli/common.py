"""CLI stage: what every subcommand shares — argument groups, loading the data
argument, fitting as the options say, and rendering tables.

Inputs: parsed ``argparse`` namespaces.  Outputs: DataFrames / FitResults for
the subcommand modules, text on stdout or ``--output``.
Contents: :class:`UsageError`, :class:`Parser`; output (:func:`render`,
:func:`emit`, :func:`titled`); input (:func:`parse_pairs`,
:func:`parse_mapping`, :func:`load`, :func:`frame_data`, :func:`selector`);
fitting (:func:`fit_from_args`); argument groups (:func:`data_args`,
:func:`fit_args`, :func:`common_args`, :func:`out_args`, :func:`rank_args`,
:func:`rank_kwargs`, :func:`alpha_power_args`).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import pandas as pd

from ..errors import SingularFitWarning
from .progress import Progress, progress_enabled

#: With at least this many pairs, and stderr a terminal, fits run in chunks with a progress bar.
PROGRESS_MIN_PAIRS = 20


class UsageError(Exception):
    """A command-line usage error: printed as ``error: ...``, exit code 2."""


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors raise :class:`UsageError` instead of exiting."""

    def error(self, message: str) -> NoReturn:  # exit 2 without argparse's own exit
        raise UsageError(f"{self.prog}: {message}")


# --------------------------------------------------------------------------- output

def render(df: pd.DataFrame, fmt: str) -> str:
    """One table as text in ``fmt`` (table, csv, json or markdown)."""
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        return df.to_json(orient="records", indent=1, double_precision=15) + "\n"
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


def emit(text: str, args: argparse.Namespace) -> None:
    """Write ``text`` to ``--output`` when given, else to stdout."""
    if getattr(args, "output", None):
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


def titled(parts: list[tuple[str, pd.DataFrame]], fmt: str) -> str:
    """Several tables: titled text for table/markdown, one JSON object for json."""
    if fmt == "json":
        body = ",\n".join(f'"{name}": {df.to_json(orient="records", double_precision=15)}'
                           for name, df in parts)
        return "{\n" + body + "\n}\n"
    return "\n".join(f"== {name} ==\n{render(df, fmt)}" for name, df in parts)


# --------------------------------------------------------------------------- input

def parse_pairs(values: Sequence[str] | None) -> list[tuple[str, str]] | None:
    """``["A,B", ...]`` (``--pair``) as a list of model-name pairs."""
    if not values:
        return None
    out = []
    for v in values:
        if "," not in v:
            raise UsageError(f"--pair {v!r}: expected MODEL_A,MODEL_B")
        a, b = v.split(",", 1)
        out.append((a.strip(), b.strip()))
    return out


def parse_mapping(text: str | None, option: str) -> str | dict[str, str] | None:
    """``acc`` -> 'acc'; ``arc_easy=acc,gsm8k=exact_match`` -> a dict."""
    if text is None or "=" not in text:
        return text
    out = {}
    for part in text.split(","):
        if "=" not in part:
            raise UsageError(f"{option} {text!r}: mix of plain and KEY=VALUE entries; expected "
                             "one value or KEY=VALUE,KEY=VALUE")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _is_lm_eval(path: Path) -> bool:
    return path.is_dir() or (path.name.startswith("samples_") and ".jsonl" in path.name)


def load(args: argparse.Namespace) -> Any:
    """The data argument as a DataFrame or a path that :func:`mixrank.fit` reads."""
    from ..io.datasets import load_example, load_shared

    src = args.data
    if src in ("example", "-"):
        return load_example()
    if src.startswith("shared:"):
        return load_shared(src.split(":", 1)[1])
    kind = getattr(args, "input_format", "auto")
    path = Path(src)
    if kind == "lm-eval" or (kind == "auto" and _is_lm_eval(path)):
        from ..io.lm_eval import read_lm_eval

        return read_lm_eval(path, metric=parse_mapping(getattr(args, "metric", None), "--metric")
                            or "acc",
                            filter=parse_mapping(getattr(args, "lm_filter", None), "--filter"),
                            prompt=getattr(args, "prompt_label", None))
    if kind == "wide":
        from ..io.wide import read_wide

        items = getattr(args, "items", None) or "subject,question"
        return read_wide(path, items=[c.strip() for c in items.split(",")])
    return src


def frame_data(args: argparse.Namespace) -> pd.DataFrame:
    """The data argument as a pandas DataFrame."""
    from ..frame.source import to_pandas

    return to_pandas(load(args))


def selector(text: str, data: pd.DataFrame) -> Any:
    """``NAME`` -> a model name; ``col=v1,v2;col2=v`` -> a mapping with values typed as in data."""
    if "=" not in text:
        return text
    out: dict[str, list] = {}
    for part in text.split(";"):
        if "=" not in part:
            raise UsageError(f"selector {text!r}: expected COLUMN=VALUE[,VALUE][;COLUMN=VALUE]")
        col, vals = (s.strip() for s in part.split("=", 1))
        if col not in data.columns:
            raise UsageError(f"selector {text!r}: column {col!r} is not in the data "
                             f"(columns: {list(data.columns)})")
        present = {str(v): v.item() if hasattr(v, "item") else v for v in pd.unique(data[col])}
        out[col] = [present.get(v.strip(), v.strip()) for v in vals.split(",")]
    return out


# --------------------------------------------------------------------------- fitting

def fit_from_args(args: argparse.Namespace, pairs: Sequence[tuple[str, str]] | None = None,
                  data: Any = None):
    """Fit as the options say (``data``: already loaded); chunks with a progress bar on a terminal."""
    from ..fit import fit, resolve_pairs
    from ..frame import build_frame

    pairs = parse_pairs(args.pair) if pairs is None else pairs
    pair_by = args.pair_by.split(",") if args.pair_by else None
    kw = dict(method=args.method, estimand=args.estimand, level=args.level)
    data = load(args) if data is None else data
    if not progress_enabled():
        return fit(args.formula, data, pairs=pairs, pair_by=pair_by, replicate=args.replicate,
                   na=args.na, **kw)
    frame = build_frame(data, args.formula, pair_by=pair_by, replicate=args.replicate, na=args.na)
    names = [(frame.models[j], frame.models[k]) for j, k in resolve_pairs(frame, pairs)]
    if len(names) < PROGRESS_MIN_PAIRS:
        return fit(frame.spec, frame, pairs=names, **kw)
    size = max(1, math.ceil(len(names) / 50))
    parts = []
    with Progress(len(names), f"fitting {len(names)} pairs") as bar, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(0, len(names), size):
            parts.append(fit(frame.spec, frame, pairs=names[i:i + size], **kw))
            bar.update(len(names[i:i + size]))
    res = dataclasses.replace(parts[0], pairs=tuple(p for r in parts for p in r.pairs))
    for w in caught:  # one singular-fit message for all chunks, others as they came
        if not issubclass(w.category, SingularFitWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    nb = [f"{p.model_a} vs {p.model_b}: {', '.join(p.boundary)}" for p in res.pairs if p.boundary]
    if nb:
        warnings.warn(f"boundary (singular) fit in {len(nb)} pair(s), variance estimated at 0 "
                      f"({'; '.join(nb[:3])}{'; ...' if len(nb) > 3 else ''})", SingularFitWarning,
                      stacklevel=2)
    return res


# --------------------------------------------------------------------------- arguments

def data_args(p: argparse.ArgumentParser) -> None:
    """The data argument and the options of its readers."""
    p.add_argument("data", help="long-format file (.csv, .csv.gz, .parquet, .jsonl), a wide "
                   "matrix (--input-format wide), an lm-eval --log_samples folder, 'example' "
                   "or shared:NAME")
    p.add_argument("--input-format", default="auto", choices=["auto", "long", "wide", "lm-eval"],
                   help="auto: a folder or samples_*.jsonl is lm-eval output, else long")
    p.add_argument("--items", default=None, help="wide input: item key columns "
                   "(default subject,question)")
    p.add_argument("--metric", default=None, help="lm-eval: metric, or TASK=METRIC,... "
                   "(default acc)")
    p.add_argument("--filter", dest="lm_filter", default=None,
                   help="lm-eval: filter, or TASK=FILTER,...")
    p.add_argument("--prompt-label", default=None, help="lm-eval: constant prompt label")


def fit_args(p: argparse.ArgumentParser, formula_required: bool = True) -> None:
    """Data options plus the options of :func:`mixrank.fit`."""
    data_args(p)
    p.add_argument("--formula", "-f", required=formula_required,
                   help="e.g. 'correct ~ model + (1|subject)'")
    p.add_argument("--method", default="reml", choices=["reml", "aggregate"])
    p.add_argument("--estimand", default="gls", choices=["gls", "cells", "units"])
    p.add_argument("--pair", action="append", metavar="A,B", help="fit only this pair (repeatable)")
    p.add_argument("--pair-by", default=None, help="comma-separated pairing keys")
    p.add_argument("--replicate", default=None, help="replicate column, e.g. sample")
    p.add_argument("--na", default="error", choices=["error", "drop"])
    p.add_argument("--level", type=float, default=0.95)


def common_args(p: argparse.ArgumentParser, formula_required: bool = True) -> None:
    """Fit options plus output options."""
    fit_args(p, formula_required)
    out_args(p)


def out_args(p: argparse.ArgumentParser) -> None:
    """``--format`` and ``--output``."""
    p.add_argument("--format", default="table", choices=["table", "csv", "json", "markdown"])
    p.add_argument("--output", "-o", default=None, help="write to this file instead of stdout")


def rank_args(p: argparse.ArgumentParser) -> None:
    """Options of :meth:`FitResult.rank_intervals`."""
    p.add_argument("--coverage", default="marginal", choices=["marginal", "simultaneous"])
    p.add_argument("--rank-method", default="holm", choices=["holm", "bonferroni", "bh", "maxt"])
    p.add_argument("--draws", type=int, default=2000, help="Gaussian draws for --rank-method maxt")
    p.add_argument("--seed", type=int, default=None, help="seed for --rank-method maxt")


def rank_kwargs(args: argparse.Namespace) -> dict:
    """The rank options as keyword arguments of :meth:`FitResult.rank_intervals`."""
    return dict(level=args.level, coverage=args.coverage, method=args.rank_method, B=args.draws,
                rng=args.seed)


def alpha_power_args(p: argparse.ArgumentParser) -> None:
    """``--alpha`` and ``--power``."""
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
