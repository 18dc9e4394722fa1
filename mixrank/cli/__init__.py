"""The ``mixrank`` command: a thin layer over the public API.

Inputs: command-line arguments; data as a long-format file (``.csv``,
``.csv.gz``, ``.parquet``, ``.jsonl``), a wide items x models matrix
(``--input-format wide``), an lm-evaluation-harness ``--log_samples`` folder,
``example`` (the bundled example) or ``shared:NAME`` (a shared real dataset).
Outputs: tables on stdout (or ``--output``) in ``table``, ``csv``, ``json`` or
``markdown`` format, or an HTML report; exit code 0 on success, 2 on a usage
or data error (message on stderr, no traceback).  Every subcommand that fits
takes ``--family gaussian|binomial`` (``binomial``: the GLMM of
docs/glmm.md, ``--nagq 0|1``).

One vocabulary (docs/vocabulary.md): every flag is the keyword of the API
call it feeds, ``_`` written ``-`` (tests/test_vocabulary.py); former flags
work for one release with a deprecation line (:mod:`.options`).  One rule for
errors: a value an option cannot take is refused by argparse's choices or
raises the API's :class:`~mixrank.OptionError` (an option the result type
does not support: the result's own message, asked before the fit by
:func:`.common.ask_result`); either is one ``error:`` line naming the flag
(an API message's ``keyword=value`` is written as ``--keyword value``), exit 2.

Layout: one module per subcommand group, each with a ``register(sub)`` that
adds its subparsers; :data:`SUBCOMMANDS` lists the modules in help order, so a
new subcommand is one new module plus one line there.

- :mod:`.common` — argument groups, loading the data argument, fitting as the
  options say, rendering tables (shared by every subcommand);
- :mod:`.options` — the argument groups the subcommands share (data, fit,
  output, ranks, alpha/power options);
- :mod:`.pass_at` — ``--pass-at K``: k-of-n input turned into per-item pass@k;
- :mod:`.judge` — ``judge`` (an LLM judge against reference labels, label budget);
- :mod:`.progress` — the terminal progress bar;
- :mod:`.fitting` — ``demo``, ``fit``, ``contrasts``, ``components``;
- :mod:`.scores` — ``scores``;
- :mod:`.table` — ``table`` (the leaderboard for a paper: LaTeX, Markdown, HTML);
- :mod:`.omnibus` — ``omnibus`` (do the models differ at all?);
- :mod:`.verdicts` — ``ranks``, ``resolution``, ``plan``;
- :mod:`.power` — ``power``;
- :mod:`.rci` — ``rci``;
- :mod:`.report` — ``report``;
- :mod:`.arena` — ``arena`` (Bradley-Terry battle logs);
- :mod:`.subset` — ``select-items``, ``subset-score`` (a new model scored on a
  probability sample of items).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import warnings
from collections.abc import Sequence

from .._version import MIXRANK_VERSION
from ..errors import MixrankError
from .common import PROGRESS_MIN_PAIRS, VIEW, Parser, UsageError, check_output, quiet_arg
from .options import check_former
from .progress import Progress, progress_enabled

__all__ = ["main", "build_parser", "Progress", "progress_enabled", "SUBCOMMANDS",
           "PROGRESS_MIN_PAIRS"]

#: Subcommand modules of this package, in help order; each defines ``register(sub)``.
SUBCOMMANDS: tuple[str, ...] = (
    "fitting",
    "scores",
    "table",
    "omnibus",
    "verdicts",
    "power",
    "rci",
    "report",
    "arena",
    "judge",
    "subset",
)


def build_parser() -> Parser:
    """The argument parser (exposed for tests and docs)."""
    p = Parser(prog="mixrank", description="Which differences on an LLM benchmark are real.")
    p.add_argument("--version", action="version", version=f"mixrank {MIXRANK_VERSION}")
    sub = p.add_subparsers(dest="command", parser_class=Parser)
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    for s in sub.choices.values():          # every subcommand: --quiet silences progress bars
        if not any("--quiet" in a.option_strings for a in s._actions):
            quiet_arg(s)
    return p


#: The running subcommand's flags: warnings name them as errors do (name_flags).
_WARNING_FLAGS: set[str] = set()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"warning: {name_flags(str(message), _WARNING_FLAGS)}", file=sys.stderr)


def _flags(parser: Parser, command: str | None) -> set[str]:
    """The option strings of ``command``'s parser."""
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if sub is None or command not in sub.choices:
        return set()
    return {o for a in sub.choices[command]._actions for o in a.option_strings}


#: API keywords whose flag is not the keyword's own name (tests/test_vocabulary.py CLI_ONLY).
_FLAG_OF = {"incomplete": "--drop-incomplete", "rng": "--seed"}
_BARE = {"--drop-incomplete"}        # flags without a value
_VALUE = r"('[^'\n]*'|[^\s,;:)}\]]*)"


def name_flags(message: str, flags: set[str]) -> str:
    """An API message with each ``keyword=value`` that is a flag here written as that flag.

    The flag is the keyword with ``_`` as ``-`` (docs/vocabulary.md), so
    ``adjust='maxt' is not available`` reads ``--adjust maxt is not
    available``; a mapping ``{'method': 'aggregate'}`` reads ``{--method aggregate}``.
    """
    def flag_of(name: str) -> str | None:
        flag = _FLAG_OF.get(name, "--" + name.replace("_", "-"))
        return flag if flag in flags else None

    def one(m: re.Match) -> str:
        flag = flag_of(m.group(1) or m.group(2))
        if flag is None:
            return m.group(0)
        value = "" if flag in _BARE else m.group(3)
        if len(value) >= 2 and value[0] == value[-1] == "'" and " " not in value:
            value = value[1:-1]
        return f"{flag} {value}" if value else flag

    def mapping(m: re.Match) -> str:          # filter={'gsm8k': 'x'} -> --filter gsm8k=x
        flag = flag_of(m.group(1))
        if flag is None:
            return m.group(0)
        pairs = re.findall(r"'([^'\n]*)': '([^'\n]*)'", m.group(2))
        return f"{flag} " + ",".join(f"{k}={v}" for k, v in pairs)

    if "--control" in flags:                   # Control(small_sample='ignore')
        message = re.sub(r"\b(?:Glmm)?Control\(([a-z_]+)=('[^'\n]*'|[^,)\s]*)\)",
                         lambda m: f"--control {m.group(1)}={m.group(2).strip(chr(39))}",
                         message)
    message = re.sub(r"(?<![\w.-])([a-z][a-z0-9_]*)=\{((?:'[^'\n]*': '[^'\n]*'(?:, )?)+)\}",
                     mapping, message)
    return re.sub(r"(?<![\w.-])(?:'([a-z][a-z0-9_]*)': |([a-z][a-z0-9_]*)=(?!=))" + _VALUE,
                  one, message)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 success, 2 usage or data error)."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = None
    try:
        args = parser.parse_args(argv)
        try:
            check_former(args, argv)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if not getattr(args, "func", None):
            parser.print_help(sys.stderr)
            return 2
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = _show_warning
            _WARNING_FLAGS.clear()
            _WARNING_FLAGS.update(_flags(parser, getattr(args, "command", None)))
            check_output(args)  # before any long computation
            VIEW["wide"] = bool(getattr(args, "wide", False))
            args.func(args)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    except MixrankError as exc:          # the API's message, its keywords written as flags
        flags = _flags(parser, getattr(args, "command", None))
        print(f"error: {name_flags(str(exc), flags)}", file=sys.stderr)
        return 2
    except UsageError as exc:
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
