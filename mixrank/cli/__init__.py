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
- :mod:`.verdicts` — ``ranks``, ``resolution``, ``plan``;
- :mod:`.power` — ``power``;
- :mod:`.rci` — ``rci``;
- :mod:`.report` — ``report``;
- :mod:`.arena` — ``arena`` (Bradley-Terry battle logs).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Sequence

from .._version import MIXRANK_VERSION
from ..errors import MixrankError
from .common import PROGRESS_MIN_PAIRS, Parser, UsageError, check_output, quiet_arg
from .progress import Progress, progress_enabled

__all__ = ["main", "build_parser", "Progress", "progress_enabled", "SUBCOMMANDS",
           "PROGRESS_MIN_PAIRS"]

#: Subcommand modules of this package, in help order; each defines ``register(sub)``.
SUBCOMMANDS: tuple[str, ...] = (
    "fitting",
    "scores",
    "verdicts",
    "power",
    "rci",
    "report",
    "arena",
    "judge",
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
            check_output(args)  # before any long computation
            args.func(args)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    except (UsageError, MixrankError) as exc:
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
