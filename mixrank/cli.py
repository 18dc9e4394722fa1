"""The ``mixrank`` command: a thin layer over the public API.

Inputs: command-line arguments; data as a long-format file (``.csv``,
``.csv.gz``, ``.parquet``, ``.jsonl``), a wide items x models matrix
(``--input-format wide``), an lm-evaluation-harness ``--log_samples`` folder,
``example`` (the bundled example) or ``shared:NAME`` (a shared real dataset).
Outputs: tables on stdout (or ``--output``) in ``table``, ``csv``, ``json`` or
``markdown`` format, or an HTML report; exit code 0 on success, 2 on a usage
or data error (message on stderr, no traceback).
Contents: subcommands ``demo, fit, contrasts, components, ranks, resolution,
plan, power, rci, report``; :func:`main`, :func:`build_parser` and a tiny
progress bar (:class:`Progress`, shown on stderr only when it is a terminal).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

import pandas as pd

from .errors import MixrankError, SingularFitWarning

__all__ = ["main", "build_parser", "Progress"]

DEMO_FORMULA = "correct ~ model + (1|subject) + (1|subject:question) + (1|prompt)"
#: With at least this many pairs, and stderr a terminal, fits run in chunks with a progress bar.
PROGRESS_MIN_PAIRS = 20


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # exit 2 without argparse's own exit
        raise _UsageError(f"{self.prog}: {message}")


# --------------------------------------------------------------------------- progress

class Progress:
    """A one-line progress bar on a terminal; silent when the stream is not a terminal.

    Parameters
    ----------
    total : int
        Number of steps.
    label : str
        Text before the bar.
    stream : file-like, optional
        Default ``sys.stderr``.
    enabled : bool, optional
        Default: ``stream.isatty()``; ``MIXRANK_PROGRESS=0`` / ``1`` overrides.

    Examples
    --------
    >>> with Progress(3, "fitting") as bar:     # silent unless stderr is a terminal
    ...     for _ in range(3):
    ...         bar.update()
    """

    width = 28

    def __init__(self, total: int, label: str, *, stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        self.total, self.label, self.done = max(int(total), 0), label, 0
        self.stream = sys.stderr if stream is None else stream
        self.enabled = progress_enabled(self.stream) if enabled is None else bool(enabled)

    def __enter__(self) -> Progress:
        self._draw()
        return self

    def update(self, k: int = 1) -> None:
        self.done = min(self.total, self.done + k)
        self._draw()

    def _draw(self) -> None:
        if not self.enabled or self.total == 0:
            return
        filled = self.width * self.done // self.total
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] "
                          f"{self.done}/{self.total}")
        self.stream.flush()

    def __exit__(self, *exc: Any) -> None:
        if self.enabled and self.total:
            self.stream.write("\r" + " " * (len(self.label) + self.width + 24) + "\r")
            self.stream.flush()


def progress_enabled(stream: Any = None) -> bool:
    """True when progress bars should be drawn on ``stream`` (default stderr)."""
    env = os.environ.get("MIXRANK_PROGRESS")
    if env in ("0", "1"):
        return env == "1"
    s = sys.stderr if stream is None else stream
    try:
        return bool(s.isatty())
    except (AttributeError, ValueError):
        return False


# --------------------------------------------------------------------------- output

def _render(df: pd.DataFrame, fmt: str) -> str:
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


def _emit(text: str, args: argparse.Namespace) -> None:
    if getattr(args, "output", None):
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


def _titled(parts: list[tuple[str, pd.DataFrame]], fmt: str) -> str:
    """Several tables: titled text for table/markdown, one JSON object for json."""
    if fmt == "json":
        body = ",\n".join(f'"{name}": {df.to_json(orient="records", double_precision=15)}'
                           for name, df in parts)
        return "{\n" + body + "\n}\n"
    return "\n".join(f"== {name} ==\n{_render(df, fmt)}" for name, df in parts)


# --------------------------------------------------------------------------- input

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


def _mapping(text: str | None, option: str) -> str | dict[str, str] | None:
    """``acc`` -> 'acc'; ``arc_easy=acc,gsm8k=exact_match`` -> a dict."""
    if text is None or "=" not in text:
        return text
    out = {}
    for part in text.split(","):
        if "=" not in part:
            raise _UsageError(f"{option} {text!r}: mix of plain and KEY=VALUE entries; expected "
                              "one value or KEY=VALUE,KEY=VALUE")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _load(args: argparse.Namespace) -> Any:
    """The data argument as a DataFrame or a path that :func:`mixrank.fit` reads."""
    from .io.datasets import load_dataset, load_example

    src = args.data
    if src in ("example", "-"):
        return load_example()
    if src.startswith(("shared:", "dataset:")):
        return load_dataset(src.split(":", 1)[1])
    kind = getattr(args, "input_format", "auto")
    path = Path(src)
    harness = _read_harness(args, path, kind)
    if harness is not None:
        return harness
    if kind == "wide":
        from .io.wide import read_wide

        items = getattr(args, "items", None) or "subject,question"
        return read_wide(path, items=[c.strip() for c in items.split(",")])
    return src


_HARNESS_KINDS = {"lm-eval": "lm_eval", "inspect": "inspect", "helm": "helm",
                  "lighteval": "lighteval"}


def _read_harness(args: argparse.Namespace, path: Path, kind: str) -> pd.DataFrame | None:
    """Harness output read through :func:`mixrank.read` (None for other input).

    The formula's left side or ``--metric`` picks the metric; the column
    mapping and rows per subject go to stderr.  Repeated samples (epochs,
    train trials) become ``--replicate sample`` unless a replicate is given.
    """
    from .io.read import HARNESSES, describe, detect_format, read_for_formula

    if kind == "auto":
        if not path.exists():
            return None
        fmt = detect_format(path)
        if fmt not in HARNESSES:
            return None
    elif kind in _HARNESS_KINDS:
        fmt = _HARNESS_KINDS[kind]
    else:
        return None
    metric = getattr(args, "metric", None)
    opts: dict[str, Any] = {"metric": _mapping(metric, "--metric") if fmt == "lm_eval" else metric}
    if fmt == "lm_eval":
        opts.update(filter=_mapping(getattr(args, "lm_filter", None), "--filter"),
                    prompt=getattr(args, "prompt_label", None))
    fields = {"subject_field": getattr(args, "subject_field", None),
              "prompt_field": getattr(args, "prompt_field", None)}
    if fmt == "inspect":
        opts.update(fields)
    elif any(fields.values()):
        raise _UsageError(f"--subject-field/--prompt-field name Inspect sample metadata fields; "
                          f"{str(path)!r} is {fmt} output")
    if isinstance(opts["metric"], dict) and fmt != "lm_eval":
        raise _UsageError(f"--metric TASK=METRIC is for lm-eval output; {fmt} takes one metric")
    df = read_for_formula(str(path), getattr(args, "formula", None) or "correct ~ model", fmt,
                          **opts)
    print(describe(df), file=sys.stderr)
    if hasattr(args, "replicate") and args.replicate is None and "sample" in df.columns \
            and df["sample"].nunique() > 1:
        args.replicate = "sample"
        print("  replicates: sample (repeated samples are averaged within a cell)",
              file=sys.stderr)
    return df


def _frame_data(args: argparse.Namespace) -> pd.DataFrame:
    from .frame.source import to_pandas

    return to_pandas(_load(args))


def _fit(args: argparse.Namespace, pairs: Sequence[tuple[str, str]] | None = None, data: Any = None):
    """Fit as the options say (``data``: already loaded); chunks with a progress bar on a terminal."""
    from .fit import fit, resolve_pairs
    from .frame import build_frame

    pairs = _pairs(args.pair) if pairs is None else pairs
    pair_by = args.pair_by.split(",") if args.pair_by else None
    kw = dict(method=args.method, estimand=args.estimand, level=args.level)
    data = _load(args) if data is None else data
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

def _data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="long-format file (.csv, .csv.gz, .parquet, .jsonl), a wide "
                   "matrix (--input-format wide), an lm-eval --log_samples folder, 'example' "
                   "or shared:NAME")
    p.add_argument("--input-format", default="auto",
                   choices=["auto", "long", "wide", "lm-eval", "inspect", "helm", "lighteval"],
                   help="auto: harness output (lm-eval, Inspect, HELM, lighteval) is detected "
                   "from its files, else a long table")
    p.add_argument("--items", default=None, help="wide input: item key columns "
                   "(default subject,question)")
    p.add_argument("--metric", default=None, help="harness output: the per-sample metric "
                   "(lm-eval: also TASK=METRIC,...; default acc); or name it on the left of -f")
    p.add_argument("--subject-field", default=None,
                   help="Inspect: sample metadata field used as subject (default: the task)")
    p.add_argument("--prompt-field", default=None,
                   help="Inspect: sample metadata field used as prompt")
    p.add_argument("--filter", dest="lm_filter", default=None,
                   help="lm-eval: filter, or TASK=FILTER,...")
    p.add_argument("--prompt-label", default=None, help="lm-eval: constant prompt label")


def _fit_args(p: argparse.ArgumentParser, formula_required: bool = True) -> None:
    _data_args(p)
    p.add_argument("--formula", "-f", required=formula_required,
                   help="e.g. 'correct ~ model + (1|subject)'")
    p.add_argument("--method", default="reml", choices=["reml", "aggregate"])
    p.add_argument("--estimand", default="gls", choices=["gls", "cells", "units"])
    p.add_argument("--pair", action="append", metavar="A,B", help="fit only this pair (repeatable)")
    p.add_argument("--pair-by", default=None, help="comma-separated pairing keys")
    p.add_argument("--replicate", default=None, help="replicate column, e.g. sample")
    p.add_argument("--na", default="error", choices=["error", "drop"])
    p.add_argument("--level", type=float, default=0.95)


def _common(p: argparse.ArgumentParser, formula_required: bool = True) -> None:
    _fit_args(p, formula_required)
    _out(p)


def _out(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default="table", choices=["table", "csv", "json", "markdown"])
    p.add_argument("--output", "-o", default=None, help="write to this file instead of stdout")


def _rank_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--coverage", default="marginal", choices=["marginal", "simultaneous"])
    p.add_argument("--rank-method", default="holm", choices=["holm", "bonferroni", "bh", "maxt"])
    p.add_argument("--draws", type=int, default=2000, help="Gaussian draws for --rank-method maxt")
    p.add_argument("--seed", type=int, default=None, help="seed for --rank-method maxt")


def _rank_kwargs(args: argparse.Namespace) -> dict:
    return dict(level=args.level, coverage=args.coverage, method=args.rank_method, B=args.draws,
                rng=args.seed)


def _alpha_power(p: argparse.ArgumentParser) -> None:
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")


# --------------------------------------------------------------------------- commands

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


def cmd_ranks(args: argparse.Namespace) -> None:
    if args.pair:
        raise _UsageError("ranks compares every pair of models; drop --pair (select models by "
                          "filtering the data instead)")
    tab = _fit(args).rank_intervals(**_rank_kwargs(args))
    _emit(_render(tab, args.format), args)


_RESOLUTION_MAIN = ("model_a", "model_b", "estimate", "n", "n_star", "q", "resolved",
                    "resolved_multiplicity", "resolved_anytime", "design_effect",
                    "resolved_cluster", "resolved_all")
_SENSITIVITY_MAIN = ("kind", "grouping", "model_a", "model_b", "replicates", "resolved_cluster",
                     "stability", "ci_lower", "ci_upper", "n_star_cluster", "n_star_bootstrap",
                     "p_value")


def cmd_resolution(args: argparse.Namespace) -> None:
    explicit = _pairs(args.pair)
    res = _fit(args, pairs=explicit)
    family: Any = explicit if explicit else args.family
    multiplicity = None if args.multiplicity == "none" else args.multiplicity
    tab = res.resolution(alpha=args.alpha, power=args.power, pairs=family, top=args.top,
                         multiplicity=multiplicity,
                         anytime=False if args.no_anytime else args.anytime,
                         cluster=not args.no_cluster)
    if args.sensitivity:
        summ = res.sensitivity(args.sensitivity, pairs=family, top=args.top, alpha=args.alpha,
                               power=args.power, B=args.boot, rng=args.seed, summary=True)
        if args.format not in ("table", "markdown"):
            return _emit(_render(summ, args.format), args)
        keep = [c for c in _SENSITIVITY_MAIN if c in summ.columns]
        _emit(f"Resolution verdicts\n{_render(tab[[c for c in _RESOLUTION_MAIN if c in tab]], args.format)}"
              f"\n\nStability of the clustered verdict ({args.sensitivity})\n"
              f"{_render(summ[keep], args.format)}", args)
    elif args.format in ("table", "markdown") and not args.all_columns:
        counts = tab.attrs.get("mixrank", {}).get("unresolved", {})
        head = "".join(f"{k}: {v}\n" for k, v in counts.items())
        shown = tab[[c for c in _RESOLUTION_MAIN if c in tab.columns]]
        _emit(f"Resolution verdicts ({args.family if not explicit else 'explicit'} pairs)\n"
              f"{head}\n{_render(shown, args.format)}", args)
    else:
        _emit(_render(tab, args.format), args)


def cmd_plan(args: argparse.Namespace) -> None:
    res = _fit(args)
    kw: dict[str, Any] = dict(subjects=args.subjects, questions=args.questions,
                              prompts=args.prompts, alpha=args.alpha, power=args.power)
    if args.plan_pair:
        pr = _pairs([args.plan_pair])
        kw["pair"] = pr[0] if pr else None
    parts = [res.plan(d, **kw).assign(delta=d) for d in args.delta]
    tab = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    _emit(_render(tab, args.format), args)


def cmd_power(args: argparse.Namespace) -> None:
    from .design import power as pw

    marg = [v is not None for v in (args.p_a, args.p_b, args.rho)]
    common = dict(alpha=args.alpha)
    rows: list[dict] = []
    audit = None
    if all(marg):
        from .design.audit import calculator_audit, cohen_h, shortcut_n

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
        raise _UsageError("power: give all three of --p-a, --p-b and --rho (or --sigma-d with "
                          "--delta and/or --n)")
    elif args.sigma_d is not None:
        s = dict(sigma_d=args.sigma_d, **common)
        if args.delta is None and args.n is None:
            raise _UsageError("power: with --sigma-d give --delta (for N*) and/or --n (for the MDE)")
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
        raise _UsageError("power: describe the comparison with --p-a P --p-b P --rho R, or "
                          "--sigma-d S with --delta D and/or --n N")
    table = pd.DataFrame(rows)
    if args.format == "table":
        lines = [f"{r['quantity']:>10} = {r['value']:.6g}   {r['note']}" for r in rows]
        text = "\n".join(lines) + "\n"
        if audit is not None:
            text += "\n== Calculator audit ==\n" + _render(audit, "table")
        _emit(text, args)
    elif audit is not None and args.format in ("json", "markdown"):
        _emit(_titled([("quantities", table), ("audit", audit)], args.format), args)
    elif audit is not None and args.table == "audit":
        _emit(_render(audit, args.format), args)
    else:
        _emit(_render(table, args.format), args)


def _selector(text: str, data: pd.DataFrame) -> Any:
    """``NAME`` -> a model name; ``col=v1,v2;col2=v`` -> a mapping with values typed as in data."""
    if "=" not in text:
        return text
    out: dict[str, list] = {}
    for part in text.split(";"):
        if "=" not in part:
            raise _UsageError(f"selector {text!r}: expected COLUMN=VALUE[,VALUE][;COLUMN=VALUE]")
        col, vals = (s.strip() for s in part.split("=", 1))
        if col not in data.columns:
            raise _UsageError(f"selector {text!r}: column {col!r} is not in the data "
                              f"(columns: {list(data.columns)})")
        present = {str(v): v.item() if hasattr(v, "item") else v for v in pd.unique(data[col])}
        out[col] = [present.get(v.strip(), v.strip()) for v in vals.split(",")]
    return out


def cmd_rci(args: argparse.Namespace) -> None:
    from .change import reliable_change

    data = _frame_data(args)
    res = reliable_change(
        data, before=_selector(args.before, data), after=_selector(args.after, data),
        model=args.model_column, item=[c.strip() for c in args.item.split(",")],
        sample=None if args.sample == "none" else args.sample, score=args.score,
        split=args.split, by=None if args.by == "none" else args.by, method=args.rci_method,
        sem=args.sem)
    if args.table == "summary":
        s = res.summary()
        if args.format == "table":
            _emit(f"{s}\n\n== Classes ==\n{_render(s.classes, 'table')}", args)
        else:
            _emit(_render(s.classes, args.format), args)
    elif args.table == "items":
        _emit(_render(res.items(), args.format), args)
    elif args.table == "by-subject":
        _emit(_render(res.by_subject(), args.format), args)
    elif args.table == "reliability":
        _emit(_render(res.summary().reliability, args.format), args)
    else:
        if args.greedy_before and args.greedy_after:
            g = res.vs_greedy(data, before=_selector(args.greedy_before, data),
                              after=_selector(args.greedy_after, data))
        elif args.greedy_sample is not None and not (args.greedy_before or args.greedy_after):
            g = res.vs_greedy(_selector(f"{args.sample}={args.greedy_sample}", data)[args.sample][0])
        else:
            raise _UsageError("rci --table vs-greedy needs --greedy-sample ID (that sample of each "
                              "version is its greedy run), or both --greedy-before and "
                              "--greedy-after selectors (e.g. sample=0 and sample=2)")
        _emit(_render(g, args.format), args)


def cmd_report(args: argparse.Namespace) -> None:
    from .report.html import write_report

    if (args.rci_before is None) != (args.rci_after is None):
        raise _UsageError("report: --rci-before and --rci-after go together (the two versions "
                          "whose items are compared)")
    loaded = _load(args)
    if args.formula is None:
        if not isinstance(loaded, pd.DataFrame) or "reader" not in loaded.attrs.get("mixrank", {}):
            raise _UsageError("report needs -f/--formula, e.g. 'correct ~ model + (1|subject)' "
                              "(it is optional only for harness output)")
        args.formula = "correct ~ model + (1|subject)"
        print(f"  formula: {args.formula}", file=sys.stderr)
    args.output = args.output or "mixrank-report.html"
    res = _fit(args, data=loaded)
    rc = None
    if args.rci_before is not None:
        from .change import reliable_change
        from .frame.source import to_pandas

        data = to_pandas(loaded)
        rc = reliable_change(data, before=_selector(args.rci_before, data),
                             after=_selector(args.rci_after, data), model=res.frame.spec.comparison,
                             score=res.frame.spec.response, sample=args.rci_sample, sem=args.rci_sem)
    multiplicity = None if args.multiplicity == "none" else args.multiplicity
    out = write_report(res, args.output, title=args.title, level=args.level,
                       plan_delta=args.delta, max_pairs=args.max_pairs,
                       rank_kwargs={k: v for k, v in _rank_kwargs(args).items() if k != "level"},
                       resolution_kwargs=dict(multiplicity=multiplicity), reliable_change=rc,
                       sensitivity=args.sensitivity)
    print(f"wrote {out}", file=sys.stderr)


# --------------------------------------------------------------------------- parser

def _register(sub: Any, *_: Any) -> None:
    """Register the stage-7 subcommands (ranks, resolution, plan, power, rci, report)."""
    s = sub.add_parser("ranks", help="rank confidence intervals per model")
    _common(s)
    _rank_args(s)
    s.set_defaults(func=cmd_ranks)

    s = sub.add_parser("resolution", help="resolution verdicts (N*, q) per pair")
    _common(s)
    _alpha_power(s)
    s.add_argument("--family", default="adjacent", choices=["adjacent", "all"],
                   help="pairs judged (ignored with --pair, which names them)")
    s.add_argument("--top", type=int, default=None, help="only the TOP best-scoring models")
    s.add_argument("--multiplicity", default="holm", choices=["holm", "bonferroni", "bh", "none"])
    s.add_argument("--no-anytime", action="store_true", help="drop the anytime-valid paradigm")
    s.add_argument("--anytime", default="auto", choices=["auto", "normal", "bernoulli"],
                   help="anytime boundary: auto = Bernoulli e-process for 0/1 scores")
    s.add_argument("--no-cluster", action="store_true", help="drop the clustered paradigm")
    s.add_argument("--all-columns", action="store_true",
                   help="table/markdown: every column (csv/json always have all)")
    s.add_argument("--sensitivity", default=None, metavar="KINDS",
                   help="stability of the clustered verdict: loso,bootstrap,clusterings "
                        "(csv/json then output the stability table)")
    s.add_argument("--B", dest="boot", type=int, default=1000, help="bootstrap replicates")
    s.add_argument("--seed", type=int, default=None, help="seed of the bootstrap")
    s.set_defaults(func=cmd_resolution)

    s = sub.add_parser("plan", help="designs (subjects, questions, prompts) that resolve --delta")
    _common(s)
    _alpha_power(s)
    s.add_argument("--delta", type=float, action="append", required=True,
                   help="target difference (repeatable)")
    s.add_argument("--subjects", type=int, default=None)
    s.add_argument("--questions", type=int, default=None)
    s.add_argument("--prompts", type=int, default=None)
    s.add_argument("--plan-pair", default=None, metavar="A,B",
                   help="whose components (default: the median pair)")
    s.set_defaults(func=cmd_plan)

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
    _alpha_power(s)
    _out(s)
    s.set_defaults(func=cmd_power)

    s = sub.add_parser("rci", help="item-level reliable change between two versions or re-runs")
    _data_args(s)
    s.add_argument("--before", required=True,
                   help="model name, or COLUMN=V[,V][;COLUMN=V], e.g. sample=0,1")
    s.add_argument("--after", required=True, help="as --before")
    s.add_argument("--model-column", default="model")
    s.add_argument("--item", default="subject,question", help="item key columns")
    s.add_argument("--sample", default="sample", help="sample column ('none': one row per item)")
    s.add_argument("--score", default="correct")
    s.add_argument("--split", default="halves", choices=["halves", "odd_even"])
    s.add_argument("--by", default="subject", help="column for --table by-subject ('none')")
    s.add_argument("--rci-method", default="rci", choices=["rci", "eb"])
    s.add_argument("--sem", default="item", choices=["item", "pooled"],
                   help="error model of the RCI classes: per-item exact tests (default) or the "
                   "classical single pooled SEM")
    s.add_argument("--table", default="summary",
                   choices=["summary", "items", "by-subject", "reliability", "vs-greedy"])
    s.add_argument("--greedy-sample", default=None, help="--table vs-greedy: the sample id "
                   "taken as each version's greedy run")
    s.add_argument("--greedy-before", default=None, help="--table vs-greedy: selector of the "
                   "greedy run of the first version, e.g. sample=0")
    s.add_argument("--greedy-after", default=None, help="--table vs-greedy: as --greedy-before")
    _out(s)
    s.set_defaults(func=cmd_rci)

    s = sub.add_parser("report", help="self-contained HTML report of a fit")
    _fit_args(s, formula_required=False)
    _rank_args(s)
    s.add_argument("--output", "-o", default=None,
                   help="the HTML file to write (default mixrank-report.html)")
    s.add_argument("--title", default=None)
    s.add_argument("--delta", type=float, default=0.02, help="planning target (default 0.02)")
    s.add_argument("--multiplicity", default="holm", choices=["holm", "bonferroni", "bh", "none"])
    s.add_argument("--max-pairs", type=int, default=40,
                   help="with more pairs, show the adjacent ones (default 40)")
    s.add_argument("--rci-before", default=None, help="add a reliable-change section: the first "
                   "version (model name or COLUMN=V[,V][;COLUMN=V]); needs --rci-after")
    s.add_argument("--rci-after", default=None, help="the second version, as --rci-before")
    s.add_argument("--rci-sample", default="sample",
                   help="column of the repeated samples per item (default sample)")
    s.add_argument("--rci-sem", default="item", choices=["item", "pooled"],
                   help="error model of the reliable-change classes (see mixrank rci --sem)")
    s.add_argument("--sensitivity", default=None, metavar="KINDS",
                   help="add verdict stability to the resolution section, e.g. loso,bootstrap")
    s.set_defaults(func=cmd_report)


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


# Further subcommands register here: register(sub, _common, _out, _fit, _render, _emit).
_EXTRA_COMMANDS: list[Callable[..., None]] = [_register]


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 success, 2 usage or data error)."""
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
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except (_UsageError, MixrankError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        print(f"error: this command needs a part of mixrank that is not available in this "
              f"installation ({exc}); upgrade mixrank", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
