"""CLI stage: what every subcommand shares — argument groups, loading the data
argument, fitting as the options say, and rendering tables.

Inputs: parsed ``argparse`` namespaces.  Outputs: DataFrames / FitResults for
the subcommand modules, text on stdout or ``--output``.
Contents: :class:`UsageError`, :class:`Parser`; output (:func:`render`,
:func:`emit`, :func:`titled`); input (:func:`parse_pairs`,
:func:`parse_mapping`, :func:`load`, :func:`frame_data`, :func:`selector`,
:func:`check_output`); fitting (:func:`fit_from_args`, :func:`is_binomial`,
:func:`result_class`, :func:`ask_result`, :func:`score_header`, :func:`table_of`,
:func:`rank_kwargs`).  The argument groups are in :mod:`mixrank.cli.options`.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .._version import MAX_DRAWS
from ..errors import MixrankWarning
from .progress import Progress, progress_enabled

if TYPE_CHECKING:  # pandas is imported where a table is read or written, not for --help
    import pandas as pd

    from ..results.pairwise_result import PairwiseResult

#: With at least this many pairs, and stderr a terminal, a fit draws a progress bar.
PROGRESS_MIN_PAIRS = 20


class UsageError(Exception):
    """A command-line usage error: printed as ``error: ...``, exit code 2."""


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors raise :class:`UsageError` instead of exiting."""

    def error(self, message: str) -> NoReturn:  # exit 2 without argparse's own exit
        from .._util import invalid_choice_hint  # numpy-free --help: imported on error only

        raise UsageError(f"{self.prog}: {message}{invalid_choice_hint(message)}")


# --------------------------------------------------------------------------- output

#: ``--wide`` of the running command: every column of each table (table/markdown output).
VIEW = {"wide": False}


def render(df: pd.DataFrame, fmt: str) -> str:
    """One table as text in ``fmt``: csv and json in full precision with every column; table
    and markdown rounded for reading, the table's compact columns unless ``--wide``
    (:func:`mixrank._display.format_table`; the table format fits 100 characters a line)."""
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        return df.to_json(orient="records", indent=1, double_precision=15) + "\n"
    from .._display import format_markdown, format_table

    view = "all" if VIEW["wide"] else "compact"
    return format_markdown(df, columns=view) if fmt == "markdown" else format_table(df, columns=view)


def emit(text: str, args: argparse.Namespace) -> None:
    """Write ``text`` to ``--output`` when given, else to stdout."""
    if getattr(args, "format", None) == "table":    # prose lines too: at most 100 characters
        from .._display import wrap

        text = wrap(text)
    out = getattr(args, "output", None)
    if not out:
        sys.stdout.write(text)
        return
    try:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write the output file {out!r} (-o/--output): "
                         f"{exc.strerror or exc}; choose a writable path") from None


def check_output(args: argparse.Namespace) -> None:
    """Refuse an ``--output`` that cannot be written, before any long computation.

    Opens the file for appending (nothing is truncated) and removes it again
    when it did not exist; a folder or a missing parent folder is refused.
    """
    out = getattr(args, "output", None)
    if not out:
        return
    path = Path(out)
    if path.is_dir():
        raise UsageError(f"the output path {out!r} (-o/--output) is a folder; give a file name")
    existed = path.exists()
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"cannot write the output file {out!r} (-o/--output): "
                         f"{exc.strerror or exc}; choose a writable path") from None
    if not existed:
        path.unlink(missing_ok=True)


def score_header(res: Any) -> str:
    """One line naming the score type the fit detected (for ``--format table``).

    A binomial GLMM fit adds a line with its family, nAGQ and unit of inference.
    """
    fr = res.frame
    if getattr(res, "family", "gaussian") == "binomial":
        # n counts cells; the Bernoulli trials they hold are named beside them
        return (f"response: {res.response_form}, {fr.n_models} models, {fr.n_cells:,} cells "
                f"({int(res.fit.trials.sum()):,} trials); formula {res.formula.formula}\n"
                f"family: binomial (logit), nAGQ {res.fit.nagq}; {res.unit_of_inference}\n")
    kind = "binary (0/1)" if fr.binary else "continuous"
    return (f"scores: {kind}, {fr.n_models} models, {fr.n_cells:,} cells; formula "
            f"{fr.spec.formula}\n")


def table_of(res: Any, tab: pd.DataFrame, fmt: str) -> str:
    """``tab`` of the fit ``res`` in ``fmt``; the table format opens with the score-type line
    (and, for a table on a stated scale, the scale and what ``estimate`` is)."""
    head = score_header(res) if fmt == "table" else ""
    meta = tab.attrs.get("mixrank", {})
    if head and getattr(res, "family", "gaussian") == "binomial" and "scale" in meta:
        head += f"scale: {meta['scale']}" + (f"; estimate = {meta['score']}" if "score" in meta
                                              else "") + "\n"
    return head + (tests_line(tab) if fmt == "table" else "") + render(tab, fmt)


def tests_line(tab: pd.DataFrame) -> str:
    """The line above a contrasts table (table format) saying which test its ``p_value``
    and interval are when they are not the t its ``statistic`` and ``df`` describe."""
    meta = tab.attrs.get("mixrank", {})
    if meta.get("ci_method") != "randomization":
        return ""
    return (f"p_value, ci: each pair's {meta['p_value']} (statistic, df: its t); "
            f"p_adjusted: {meta.get('adjust')}\n")


def titled(parts: list[tuple[str, pd.DataFrame]], fmt: str) -> str:
    """Several tables: titled text for table/markdown, one JSON object for json."""
    if fmt == "json":
        body = ",\n".join(f'"{name}": {df.to_json(orient="records", double_precision=15)}'
                           for name, df in parts)
        return "{\n" + body + "\n}\n"
    return "\n".join(f"== {name} ==\n{render(df, fmt)}" for name, df in parts)


# --------------------------------------------------------------------------- input

_PAIR_HELP = ("expected MODEL_A,MODEL_B; quote a name that holds a comma or surrounding spaces "
              "in double quotes, e.g. --pair '\"Acme, v2\",m01'")


def _split_pair(text: str) -> list[str]:
    """Split ``A,B`` at commas outside double quotes; quoted names are kept verbatim."""
    fields, buf, quoted, was_quoted = [], "", False, False
    for ch in text:
        if ch == '"':
            quoted = not quoted
            was_quoted = True
            buf += ch
        elif ch == "," and not quoted:
            fields.append((buf, was_quoted))
            buf, was_quoted = "", False
        else:
            buf += ch
    if quoted:
        raise UsageError(f"--pair {text!r}: unbalanced double quote; {_PAIR_HELP}")
    fields.append((buf, was_quoted))
    out = []
    for f, q in fields:
        if not q and f.strip() != f and f.strip():
            # a name is matched as given; spaces around it are almost always the shell's
            warnings.warn(f"--pair {text!r}: the spaces around {f!r} were removed (matched as "
                          f"{f.strip()!r}); quote the name in double quotes to keep them, e.g. "
                          f"--pair '\"{f}\",B'", MixrankWarning, stacklevel=2)
        f = f.strip()
        if q:
            if not (f.startswith('"') and f.endswith('"') and len(f) >= 2):
                raise UsageError(f"--pair {text!r}: a quoted name must be quoted as a whole; "
                                 f"{_PAIR_HELP}")
            f = f[1:-1]
        out.append(f)
    return out


def parse_pairs(values: Sequence[str] | None) -> list[tuple[str, str]] | None:
    """``["A,B", ...]`` (``--pair``) as a list of model-name pairs (double quotes protect commas)."""
    if not values:
        return None
    out = []
    for v in values:
        names = _split_pair(v)
        if len(names) != 2 or not all(names):
            raise UsageError(f"--pair {v!r}: {_PAIR_HELP}")
        out.append((names[0], names[1]))
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


def _read_harness(args: argparse.Namespace, path: Path, kind: str) -> pd.DataFrame | None:
    """Harness output read through :func:`mixrank.read` (None for other input).

    The formula's left side or ``--metric`` picks the metric; the column
    mapping and rows per subject go to stderr.  Repeated samples (epochs,
    train trials) become ``--replicate sample`` unless a replicate is given.
    """
    from ..io.read import HARNESSES, describe, detect_format, read_for_formula

    if kind == "auto":
        if not path.exists():
            return None
        fmt = detect_format(path)
        if fmt not in HARNESSES:
            return None
    elif kind in HARNESSES:
        fmt = kind
    else:
        return None
    metric = getattr(args, "metric", None)
    opts: dict[str, Any] = {"metric": parse_mapping(metric, "--metric") if fmt == "lm_eval"
                            else metric}
    if fmt == "lm_eval":
        opts.update(filter=parse_mapping(getattr(args, "lm_filter", None), "--filter"),
                    prompt=getattr(args, "prompt_label", None))
    fields = {"subject_field": getattr(args, "subject_field", None),
              "prompt_field": getattr(args, "prompt_field", None)}
    if fmt == "inspect":
        opts.update(fields)
    elif any(fields.values()):
        raise UsageError(f"--subject-field/--prompt-field name Inspect sample metadata fields; "
                         f"{str(path)!r} is {fmt} output")
    if isinstance(opts["metric"], dict) and fmt != "lm_eval":
        raise UsageError(f"--metric TASK=METRIC is for lm-eval output; {fmt} takes one metric")
    df = read_for_formula(str(path), getattr(args, "formula", None) or "correct ~ model", fmt,
                          **opts)
    print(describe(df), file=sys.stderr)
    if hasattr(args, "replicate") and args.replicate is None and "sample" in df.columns \
            and df["sample"].nunique() > 1:
        args.replicate = "sample"
        print("  replicates: sample (repeated samples are averaged within a cell)",
              file=sys.stderr)
    return df


def _stdin(kind: str) -> pd.DataFrame:
    """Standard input (``-``) as a table: CSV, or JSON lines with ``--input-format jsonl``."""
    import pandas as pd

    from ..errors import DataError
    from ..frame.source import read_csv
    from ..io.read import HARNESSES

    if kind in HARNESSES:
        raise UsageError(f"--input-format {kind} reads harness output files, not standard "
                         "input; pass the path instead of '-'")
    text = sys.stdin.read()
    if not text.strip():
        raise DataError("standard input ('-') is empty; pipe a CSV table into mixrank, e.g. "
                        "cat runs.csv | mixrank contrasts - -f ...")
    try:
        if kind == "jsonl":
            return pd.read_json(io.StringIO(text), lines=True)
        return read_csv(io.StringIO(text), "standard input ('-')",
                        dtype=str if kind == "wide" else None)
    except (ValueError, pd.errors.ParserError) as exc:
        fmt = "JSON lines" if kind == "jsonl" else "CSV"
        raise DataError(f"could not read standard input as {fmt}: {exc}; pass --input-format "
                        "(table = CSV, jsonl, wide) matching what is piped in") from None


#: Reader options and the input kinds they apply to (refused elsewhere: never ignored).
_READER_OPTIONS = {"items": ("--items", "wide input"),
                   "metric": ("--metric", "harness output"),
                   "lm_filter": ("--filter", "lm-eval output"),
                   "prompt_label": ("--prompt-label", "lm-eval output"),
                   "subject_field": ("--subject-field", "Inspect output"),
                   "prompt_field": ("--prompt-field", "Inspect output")}


def _refuse_unused(args: argparse.Namespace, what: str, allowed: tuple[str, ...] = ()) -> None:
    given = [(flag, kind) for dest, (flag, kind) in _READER_OPTIONS.items()
             if dest not in allowed and getattr(args, dest, None) is not None]
    if given:
        flag, kind = given[0]
        raise UsageError(f"{flag} applies to {kind}, but {args.data!r} is read as {what}; drop "
                         f"{flag} or pass --input-format naming the input's format")


def load(args: argparse.Namespace) -> Any:
    """The data argument as a DataFrame or a path that :func:`mixrank.fit` reads.

    ``example`` is the bundled example, ``shared:NAME`` a shared dataset,
    ``-`` standard input (CSV; ``--input-format jsonl`` or ``wide`` to
    override); a path is read by the reader its ``--input-format`` names
    (``auto``: a ``samples_*.jsonl`` file or a folder holding them is
    lm-evaluation-harness output, anything else a long table or a folder of
    long parquet/CSV/JSON-lines files).
    """
    from ..io.datasets import load_dataset, load_example

    src = args.data
    kind = getattr(args, "input_format", "auto")
    if src == "example" or src.startswith(("shared:", "dataset:")):
        _refuse_unused(args, "a bundled dataset")
        return load_example() if src == "example" else load_dataset(src.split(":", 1)[1])
    if src == "-":
        _refuse_unused(args, "standard input", allowed=("items",) if kind == "wide" else ())
        data = _stdin(kind)
        if kind == "wide":
            from ..io.wide import read_wide

            items = getattr(args, "items", None) or "subject,question"
            return read_wide(data, items=[c.strip() for c in items.split(",")],
                             na=getattr(args, "na", "error"))
        return data
    path = Path(src)
    harness = _read_harness(args, path, kind)
    if harness is not None:
        return harness
    if kind == "wide":
        from ..io.wide import read_wide

        _refuse_unused(args, "a wide matrix", allowed=("items",))
        items = getattr(args, "items", None) or "subject,question"
        return read_wide(path, items=[c.strip() for c in items.split(",")],
                         na=getattr(args, "na", "error"))
    _refuse_unused(args, "a long table")
    if kind == "jsonl":
        from ..io.read import read

        return read(path, format="jsonl")
    return src


def frame_data(args: argparse.Namespace) -> pd.DataFrame:
    """The data argument as a pandas DataFrame."""
    from ..frame.source import to_pandas

    return to_pandas(load(args))


def selector(text: str, data: pd.DataFrame) -> Any:
    """``NAME`` -> a model name; ``col=v1,v2;col2=v`` -> a mapping with values typed as in data."""
    import pandas as pd

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

class _Bar:
    """``fit(progress=...)`` callback drawing a :class:`Progress` bar for large fits."""

    def __init__(self) -> None:
        self.bar: Progress | None = None

    def __call__(self, done: int, total: int) -> None:
        if total < PROGRESS_MIN_PAIRS:
            return
        if self.bar is None:
            self.bar = Progress(total, f"fitting {total} pairs").__enter__()
        self.bar.update(done - self.bar.done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars on stderr: only on a terminal, and not with ``--quiet``."""
    return progress_enabled() and not getattr(args, "quiet", False)


def progress_arg(args: argparse.Namespace) -> bool | None:
    """The API's ``progress=`` for a long step: True (a bar on stderr) or None (silent)."""
    return True if show_progress(args) else None


def quiet_arg(p: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress bars (they are drawn on stderr only when it is a terminal)."""
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bars on stderr (drawn only on a terminal, for steps that "
                   "take a while: fits, sensitivity refits, the report)")


def is_binomial(args: argparse.Namespace) -> bool:
    """Whether the options ask for the binomial GLMM (``--family binomial``)."""
    return getattr(args, "family", "gaussian") == "binomial"


def result_class(args: argparse.Namespace) -> type[PairwiseResult]:
    """The result type the options ask for: GlmmResult (``--family binomial``; GlmmByResult
    with ``--by``), JudgeResult (``--gold``) or FitResult."""
    if is_binomial(args):
        from ..results import GlmmByResult, GlmmResult

        return GlmmByResult if getattr(args, "by", None) is not None else GlmmResult
    if getattr(args, "gold", None) is not None:
        from ..judge.result import JudgeResult

        return JudgeResult
    from ..results import FitResult

    return FitResult


def ask_result(args: argparse.Namespace, accessor: str, *, via: str = "",
               **given: tuple[str, Any]) -> dict:
    """The options given to ``accessor``, each checked, before the fit, against the result type.

    ``given``: keyword -> (flag as typed, value); a value of None was not
    given and is left out.  An option the type's ``accessor`` does not
    support (or an accessor it lacks) raises the result's own
    :class:`~mixrank.OptionError` (``ContrastsTemplate.check_option``: one
    message, from the result), led by the flag when the flag is not the
    keyword's own name.  ``via``: the flag that asks for the accessor itself
    (``--probabilities``), named when the type lacks it.  Returns
    ``{keyword: value}`` of the options given.
    """
    from ..errors import OptionError

    cls = result_class(args)
    if accessor not in cls.OPTIONS:      # the type lacks the accessor: its message, led by via
        try:
            _check(cls, accessor, "", None)
        except OptionError as exc:
            hint = _other_family(args, accessor)
            raise OptionError((f"{via}: {exc}" if via else str(exc)) + hint) from None
    out = {}
    for name, (flag, value) in given.items():
        if value is None:
            continue
        try:
            _check(cls, accessor, name, value)
        except OptionError as exc:   # the keyword written as the flag the user typed
            shown = flag if isinstance(value, bool) else f"{flag.split()[0]} {value}"
            text = re.sub(rf"(?<![\w-]){name}=('[^']*'|\S+?)(?=[\s,;]|$)",
                          shown.replace("\\", "\\\\"), str(exc), count=1)
            for other, (oflag, _) in given.items():   # the options listed, as their flags
                text = re.sub(rf"(?<![\w-]){other}=(?=[\s,;]|$)", oflag.split()[0], text)
            raise OptionError(text + _other_family(args, accessor, name, value)) from None
        out[name] = value
    return out


def _check(cls: type[PairwiseResult], accessor: str, name: str, value: Any) -> Any:
    """``cls.check_option`` before any fit: it reads only the type's declared OPTIONS."""
    return cls.check_option(accessor, name, value)


def _other_family(args: argparse.Namespace, accessor: str, name: str | None = None,
                  value: Any = None) -> str:
    """``"; pass --family F"`` when the other family's result type takes what was refused."""
    from ..errors import OptionError

    other = "gaussian" if is_binomial(args) else "binomial"
    alt = argparse.Namespace(**{**vars(args), "family": other, "gold": None})
    try:
        cls = result_class(alt)
        if accessor not in cls.OPTIONS:
            return ""
        if name is not None:
            _check(cls, accessor, name, value)
    except OptionError:
        return ""
    return f"; pass --family {other}"


def glmm_by(args: argparse.Namespace, by: str | None) -> dict[str, str]:
    """``{"by": by}`` for a binomial ``model * x`` formula (``--by``), ``{}`` without ``--by``.

    Called before the fit: a ``--by`` the formula cannot answer exits 2 at once.
    """
    from ..errors import FormulaError
    from ..formula.glmm_terms import parse_glmm

    if by is None or not is_binomial(args):
        return {} if by is None else {"by": by}
    try:
        crossed = parse_glmm(args.formula).by
    except FormulaError:
        return {"by": by}                   # the fit reports the formula's error
    if crossed != by:
        raise UsageError(f"--by {by}: the formula has no covariate {by!r} crossed with the "
                         f"model; write it as 'y ~ model * {by} + (random terms)'")
    return {"by": by}


def fit_from_args(args: argparse.Namespace, pairs: Sequence[tuple[str, str]] | None = None,
                  data: Any = None):
    """Fit as the options say (``data``: already loaded); a progress bar on a terminal.

    One call of :func:`mixrank.fit` for every family: the fit options set
    away from their defaults are passed on, and the fit refuses those its
    family does not take (``--method`` with ``--family binomial``, ...).
    """
    from ..fit import fit
    from ..routes import FitOptions

    binomial = is_binomial(args)
    if getattr(args, "nagq", None) is not None and not binomial:
        raise UsageError(f"--nagq sets glmer's nAGQ of the binomial GLMM; with --family "
                         f"{getattr(args, 'family', 'gaussian')} it would be ignored: drop it or "
                         "pass --family binomial")
    pairs = parse_pairs(args.pair) if pairs is None else pairs
    pair_by = [c.strip() for c in args.pair_by.split(",")] if args.pair_by else None
    data = load(args) if data is None else data
    if getattr(args, "pass_at", None) is not None:
        from .pass_at import apply_pass_at

        args.formula, data = apply_pass_at(args, data, UsageError)
    control = None
    if getattr(args, "control", None) is not None:
        from .options import parse_control
        try:
            control = parse_control(args.control, binomial)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    # the fit options as the one record fit() builds; those set away from their defaults go on
    opts = FitOptions(family=getattr(args, "family", "gaussian"), nagq=getattr(args, "nagq", None),
                      method=args.method, estimand=args.estimand, df=getattr(args, "df", None),
                      incomplete="drop" if getattr(args, "drop_incomplete", False) else "keep",
                      gold=getattr(args, "gold", None), lam=getattr(args, "lam", None),
                      control=control)
    # the GLMM is one joint fit: no per-pair progress to draw
    bar = _Bar() if show_progress(args) and not binomial else None
    try:
        return fit(args.formula, data, level=args.level, pairs=pairs, pair_by=pair_by,
                   replicate=args.replicate, na=args.na,
                   backend=getattr(args, "backend", "pandas"), progress=bar, **opts.changed())
    finally:
        if bar is not None:
            bar.close()


# --------------------------------------------------------------------------- arguments

def rank_kwargs(args: argparse.Namespace, adjust: str | None = None, *,
                from_args: bool = True) -> dict:
    """The rank options as keyword arguments of :meth:`FitResult.rank_intervals`.

    ``adjust``: the multiplicity method (default ``--adjust`` when ``from_args``, else the
    fit's default: left out).
    """
    adjust = adjust or (getattr(args, "adjust", None) if from_args else None)
    if adjust != "maxt" and (args.draws is not None or args.seed is not None):
        raise UsageError("--draws and --seed set the Gaussian draws of --adjust maxt; "
                         f"with {'the default --adjust' if adjust is None else '--adjust ' + adjust}"
                         " they would be ignored: drop "
                         "them or pass --adjust maxt")
    if args.draws is not None and args.draws > MAX_DRAWS:
        raise UsageError(f"--draws {args.draws} exceeds the upper bound {MAX_DRAWS}; a Monte "
                         "Carlo p-value from that many draws has an error of about 2e-4 near 0.05 "
                         f"(docs/hardening.md §8): use --draws {MAX_DRAWS} or fewer")
    out = dict(level=args.level, coverage=args.coverage, adjust=adjust,
               draws=2000 if args.draws is None else args.draws, rng=args.seed)
    return {k: v for k, v in out.items() if not (k == "adjust" and v is None)}


