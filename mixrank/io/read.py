"""Stage io: one entry point for every input format, with a registry of readers.

Inputs: a path (a harness output folder, a log file, or a long table) and a
format name or ``"auto"``.  Outputs: the canonical long DataFrame.
Contents: :class:`Format`, :data:`FORMATS` (the registry: adding a reader is
one module plus one line here), :data:`INPUT_FORMATS` (the one list of
format names, shared by ``read(format=)`` and the CLI's ``--input-format``),
:func:`detect_format`, :func:`read`, :func:`metric_options`.
"""

from __future__ import annotations

import fnmatch
import inspect
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from ..errors import DataError, OptionError
from ..formula import Spec, parse
from ..frame.source import SUPPORTED_SUFFIXES, to_pandas
from .helm import read_helm
from .inspect_logs import read_inspect
from .lighteval import read_lighteval
from .lm_eval import read_lm_eval
from .wide import read_wide

__all__ = ["Format", "FORMATS", "INPUT_FORMATS", "FORMER_FORMAT_NAMES", "detect_format", "read",
           "metric_options", "read_for_formula", "describe", "HARNESSES"]

#: At most this many paths are looked at when sniffing a folder.
SNIFF_LIMIT = 5000


def _inspect_json(path: Path) -> bool:
    """A ``.json`` file that starts like an Inspect log (``version``, ``status``, ``eval``)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(400)
    except OSError:
        return False
    return b'"version"' in head and b'"status"' in head and b'"eval"' in head


def _read_table(path: str | Path, **_: Any) -> pd.DataFrame:
    return to_pandas(str(path))


def _read_jsonl(path: str | Path) -> pd.DataFrame:
    """A long table stored as JSON lines, whatever its file name ends with."""
    try:
        return pd.read_json(path, lines=True)
    except ValueError as exc:
        raise DataError(f"read: cannot read {str(path)!r} as JSON lines (format='jsonl'): "
                        f"{exc}; expected one JSON object per line") from None


@dataclass(frozen=True)
class Format:
    """One input format.

    Attributes
    ----------
    name : str
        The ``format=`` value (and the CLI's ``--input-format`` value).
    reader : callable
        ``reader(path, **options)`` → canonical long DataFrame.
    patterns : tuple of str
        File-name patterns whose presence (in a folder, recursively) or match
        (a file) identifies the format; empty for a format that is only read
        when named (``wide``, ``jsonl``: their files look like long tables).
    sniff : callable, optional
        ``sniff(file) → bool`` for files whose names are ambiguous (``.json``).
    sniff_patterns : tuple of str
        The file-name patterns ``sniff`` is tried on.
    mapping : tuple of (column, field) pairs
        Which field of the output becomes which column, for readers that do
        not record it themselves in ``attrs["mixrank"]["mapping"]``.
    description : str
        What the format is, for messages and ``--help``.
    """

    name: str
    reader: Callable[..., pd.DataFrame]
    patterns: tuple[str, ...]
    description: str
    sniff: Callable[[Path], bool] | None = None
    sniff_patterns: tuple[str, ...] = ()
    mapping: tuple[tuple[str, str], ...] = ()

    def matches(self, path: Path) -> bool:
        """True when ``path`` (file or folder) holds this format's files."""
        if path.is_file():
            return any(fnmatch.fnmatch(path.name, p) for p in self.patterns) or (
                self.sniff is not None
                and any(fnmatch.fnmatch(path.name, p) for p in self.sniff_patterns)
                and self.sniff(path))
        for p in itertools.islice(path.rglob("*"), SNIFF_LIMIT):
            if p.is_file() and Format.matches(self, p):
                return True
        return False


#: The registry, in detection order (the first that matches wins).
FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("helm", read_helm, ("per_instance_stats.json",),
           "HELM benchmark_output/runs/<suite>/<run>/ folders"),
    Format("inspect", read_inspect, ("*.eval",), "Inspect .eval/.json logs",
           sniff=_inspect_json, sniff_patterns=("*.json",)),
    Format("lighteval", read_lighteval, ("details_*.parquet",),
           "lighteval details_<task>_<date>.parquet files"),
    Format("lm_eval", read_lm_eval, ("samples_*.jsonl",),
           "lm-evaluation-harness --log_samples output",
           mapping=(("model", "results model_name (else model_args, else folder)"),
                    ("subject", "leaf task"), ("question", "doc_id"),
                    ("prompt", "run's prompt configuration: n-shot, chat template (or prompt=)"),
                    ("correct", "sample line's <metric>"),
                    ("group", "innermost group of the task"))),
    Format("table", _read_table, tuple(f"*{s}" for s in SUPPORTED_SUFFIXES),
           "a long table (csv, parquet, jsonl) with model, subject, question, prompt, correct"),
    Format("jsonl", _read_jsonl, (), "a long table as JSON lines (named, never detected)"),
    Format("wide", read_wide, (), "an items x models score matrix (csv, parquet; named, never "
           "detected; items= names the item key columns)"),
)}

#: The one list of input-format names: ``read(format=)`` and the CLI's
#: ``--input-format`` take exactly these (docs/vocabulary.md).
INPUT_FORMATS: tuple[str, ...] = ("auto", *FORMATS)

#: Former CLI spellings of format names (one release, with a deprecation line).
FORMER_FORMAT_NAMES: dict[str, str] = {"long": "table", "lm-eval": "lm_eval"}


def detect_format(path: str | Path) -> str:
    """Name of the registered format ``path`` holds.

    Raises
    ------
    DataError
        The path does not exist, or no format matches (lists the formats).
    """
    p = Path(path)
    if not p.exists():
        raise DataError(f"read: path {str(p)!r} does not exist; expected a harness output "
                        "folder, a log file or a long table")
    for fmt in FORMATS.values():
        if fmt.patterns and fmt.matches(p):
            return fmt.name
    known = "; ".join(f"{f.name}: {f.description}" for f in FORMATS.values() if f.patterns)
    raise DataError(f"read: cannot tell the format of {str(p)!r}; known formats: {known}. "
                    "Pass format= (--input-format) explicitly")


def metric_options(fmt: str) -> tuple[str, ...]:
    """Keyword options (among metric, subject_field, prompt_field, ...) a format's reader takes."""
    params = inspect.signature(FORMATS[fmt].reader).parameters
    return tuple(n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY)


def read(path: str | Path,
         format: Literal["auto", "helm", "inspect", "lighteval", "lm_eval", "table", "jsonl",
                         "wide"] = "auto",
         **options: Any) -> pd.DataFrame:
    """Read evaluation results in any registered format as a canonical long DataFrame.

    Parameters
    ----------
    path : str or Path
        A harness output folder or file (lm-evaluation-harness, Inspect,
        HELM, lighteval) or a long table (csv, parquet, jsonl).
    format : str, default "auto"
        ``"auto"`` detects the format from the files (:func:`detect_format`);
        otherwise one of :data:`INPUT_FORMATS`: ``helm``, ``inspect``,
        ``lighteval``, ``lm_eval``, ``table`` (a long csv/parquet/jsonl
        table), ``jsonl`` (a long table as JSON lines, any file name) or
        ``wide`` (:func:`mixrank.read_wide`, ``items=`` its key columns).
    **options
        Passed to the format's reader, e.g. ``metric="acc_norm"`` (every
        harness reader), ``subject_field``/``prompt_field`` (Inspect),
        ``split`` (HELM), ``filter``/``tasks`` (lm-eval).

    Returns
    -------
    pandas.DataFrame
        The reader's canonical long DataFrame: ``model, subject, question,
        prompt, correct`` (and ``sample`` for harness output, plus the
        producer's own ids); ``attrs["mixrank"]`` names the ``reader``, the
        ``mapping`` of log fields to columns and ``rows_per_subject``.

    Raises
    ------
    OptionError
        Unknown format, or an option that format's reader does not take
        (naming the options it takes).
    DataError
        Undetectable format, or any error of the reader (naming the file and
        position).

    Examples
    --------
    >>> import mixrank
    >>> df = mixrank.read("lm_eval_output/", metric="acc_norm")  # doctest: +SKIP
    """
    if format != "auto" and format not in FORMATS:
        hint = (f" (the former CLI spelling of {FORMER_FORMAT_NAMES[format]!r})"
                if format in FORMER_FORMAT_NAMES else "")
        raise OptionError(f"read: format={format!r} is unknown{hint}; expected 'auto' or one of "
                          f"{sorted(FORMATS)}")
    name = detect_format(path) if format == "auto" else format
    allowed = metric_options(name)
    bad = sorted(set(options) - set(allowed))
    if bad:
        raise OptionError(f"read: option(s) {bad} do not apply to format {name!r}; it accepts "
                          f"{list(allowed)}")
    df = FORMATS[name].reader(path, **{k: v for k, v in options.items() if v is not None})
    meta = df.attrs.setdefault("mixrank", {})
    meta.setdefault("format", name)
    if FORMATS[name].mapping and "mapping" not in meta:
        meta["mapping"] = dict(FORMATS[name].mapping)
    return df


#: Formats that are harness output (read by a reader, not as a plain table).
HARNESSES = ("helm", "inspect", "lighteval", "lm_eval")


def read_for_formula(data: Any, formula: str | Spec, format: str = "auto",
                     **options: Any) -> Any:
    """Harness output given as ``data`` to a fit, read with the metric the formula names.

    ``data`` that is not a path to harness output is returned unchanged.  For
    harness output, a left side other than ``correct`` names the metric to
    read (``acc_norm ~ model + (1|subject)`` reads ``acc_norm``) and the
    score column takes that name; ``correct ~ ...`` reads the reader's
    default metric (or ``options["metric"]``).  So a formula means the same
    in :func:`mixrank.fit` and on the command line.

    Raises
    ------
    DataError
        As :func:`read`; a left side that is not a metric of the log names
        the metrics present; a left side and a ``metric`` option that differ.
    """
    if not isinstance(data, (str, Path)) or not Path(data).exists():
        return data
    if format == "auto":
        try:
            format = detect_format(data)
        except DataError:
            return data
    if format not in HARNESSES:
        return data
    spec = parse(formula) if isinstance(formula, str) else formula
    metric = options.pop("metric", None)
    if spec.response != "correct":
        if metric is not None and metric != spec.response:
            raise DataError(f"the formula's left side names metric {spec.response!r} but "
                            f"metric={metric!r} was also given; use one of them")
        metric = spec.response
    df = read(data, format, metric=metric, **options)  # type: ignore[arg-type]  # read checks it
    if spec.response != "correct":
        df = df.rename(columns={"correct": spec.response})
    return df


def describe(df: pd.DataFrame) -> str:
    """What a reader did (text): the column mapping, the metric, the rows per subject, the
    prompts (configurations) read and the superseded runs not read."""
    meta = df.attrs.get("mixrank", {})
    lines = [f"{meta.get('reader', 'read')}: {len(df)} rows, {df['model'].nunique()} models "
             f"from {meta.get('source', '?')}"]
    mapping = meta.get("mapping") or {}
    for column, field in mapping.items():
        lines.append(f"  {column:<9}<- {field}")
    metric = meta.get("metric")
    if metric:
        shown = metric if isinstance(metric, str) else ", ".join(
            f"{k}={v}" for k, v in metric.items())
        lines.append(f"  metric: {shown}")
    counts = meta.get("rows_per_subject")
    if counts is None and "subject" in df.columns:
        counts = {str(k): int(v) for k, v in df.groupby("subject").size().items()}
    if counts:
        lines.append("  rows per subject: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if "prompt" in df.columns and len(df):
        prompts = sorted(map(str, df["prompt"].dropna().unique()))
        shown = ", ".join(prompts[:5]) + (", ..." if len(prompts) > 5 else "")
        lines.append(f"  prompts: {len(prompts)} ({shown})")
    superseded = meta.get("superseded") or []
    if superseded:
        lines.append(f"  superseded by a later run of the same task (not read): "
                     f"{len(superseded)} file(s): " + ", ".join(map(str, superseded)))
    return "\n".join(lines)
