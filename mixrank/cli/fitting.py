"""CLI subcommands ``demo``, ``fit``, ``contrasts`` and ``components``.

Inputs: parsed arguments (see :mod:`mixrank.cli.common`).  Outputs: the
summary, contrasts and variance-components tables of :func:`mixrank.fit`
(with ``--family binomial`` those of the GLMM: glmer-like summary, contrasts on
``--scale logit`` or ``response``, logit-scale variance components).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from .common import (
    UsageError,
    ask_result,
    emit,
    fit_from_args,
    glmm_by,
    is_binomial,
    render,
    score_header,
    table_of,
    tests_line,
)
from .options import ADJUST_ALL, common_args, out_args
from .verdicts import rank_note

#: The demo's formula: subjects as the unit with questions nested in them, so the default
#: CR2 SE applies and the example data trigger no warning (a 4-level ``(1|prompt)`` term
#: would warn that it has too few levels and fit a singular variance).
DEMO_FORMULA = "correct ~ model + (1|subject) + (1|subject:question)"

#: One plain sentence per warning class the demo may trigger: what it means, what to do.
DEMO_WARNINGS: dict[str, str] = {
    "SingularFitWarning": "a variance was estimated at exactly 0: that random term adds nothing "
                          "for those pairs; the fit is still valid, or drop the term.",
    "WeakDesignWarning": "a random term has fewer than 5 levels, so its variance rests on few "
                         "numbers and intervals are wide; use a unit with more levels or make "
                         "the term a fixed stratum (docs/messy.md).",
    "SmallSampleWarning": "few units back some standard errors, so intervals are wide; "
                          "collect more units or read the intervals with care.",
    "DegeneratePairWarning": "two models gave identical differences everywhere, so that pair "
                             "has no variance; its p-value is the exact sign test's.",
    "ConvergenceWarning": "an optimiser stopped before its tolerance; check "
                          "res.diagnostics() for the pairs named.",
}


def _explain(caught: list[Any]) -> list[str]:
    """One ``note:`` line per distinct warning class caught, from :data:`DEMO_WARNINGS`."""
    lines, seen = [], set()
    for w in caught:
        name = next((c.__name__ for c in w.category.__mro__ if c.__name__ in DEMO_WARNINGS),
                    w.category.__name__)
        if name in seen:
            continue
        seen.add(name)
        plain = DEMO_WARNINGS.get(name, "see the message above and docs/messy.md for what "
                                  "it means and how to silence it.")
        lines.append(f"note: the {w.category.__name__} above means {plain}")
    return lines


def cmd_demo(args: argparse.Namespace) -> None:
    import warnings

    from ..fit import fit
    from ..io.datasets import load_example

    df = load_example()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res: Any = fit(DEMO_FORMULA, df)
    for w in caught:        # shown as usual, each followed by what it means
        warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    for line in _explain(caught):
        print(line, file=sys.stderr)
    con = res.contrasts()
    parts = ["mixrank demo: the bundled simulated example (see help(mixrank.load_example))", "",
             res.frame.summary_text(), "", "== Contrasts (model_a - model_b) ==",
             (tests_line(con) if args.format == "table" else "") + render(con, args.format),
             "== Variance components (first pair) ==",
             render(res.variance_components().query("model_a == 'm01' and model_b == 'm02'"),
                    args.format),
             "== Design effect ==", render(res.design_effect(), args.format)]
    for title, fn in _optional_sections(res):
        try:
            tab = fn()
        except (ImportError, AttributeError, NotImplementedError):
            continue
        parts += [f"== {title} ==", render(tab, args.format)
                  + (rank_note(res, tab, args.format) if title.startswith("Rank") else "")]
    emit("\n".join(parts), args)


def _optional_sections(res: Any) -> list[tuple[str, Callable[[], pd.DataFrame]]]:
    return [("Rank intervals (95%, marginal)", lambda: res.rank_intervals()),
            ("Resolution verdicts (adjacent pairs)", lambda: res.resolution())]


def cmd_fit(args: argparse.Namespace) -> None:
    res = fit_from_args(args)
    if args.format == "table":
        emit(score_header(res) + str(res.summary()) + "\n", args)
    else:
        emit(render(res.contrasts(), args.format), args)


def cmd_contrasts(args: argparse.Namespace) -> None:
    if args.adjust not in ("maxt", "stepdown") and (args.draws is not None
                                                     or args.seed is not None):
        raise UsageError("--draws and --seed set the draws of --adjust maxt/stepdown; with "
                         f"--adjust {args.adjust or 'holm (the default)'} they would be "
                         "ignored: drop them or pass --adjust maxt")
    glmm_by(args, args.by)
    kw = ask_result(args, "contrasts", adjust=("--adjust", args.adjust),
                    draws=("--draws", args.draws), rng=("--seed", args.seed),
                    scale=("--scale", args.scale), by=("--by", args.by),
                    ci=("--ci", args.ci))
    res = fit_from_args(args)
    emit(table_of(res, res.contrasts(**kw), args.format), args)


def cmd_anova(args: argparse.Namespace) -> None:
    if is_binomial(args):
        from ..errors import FormulaError
        from ..formula.glmm_terms import parse_glmm

        try:
            crossed = parse_glmm(args.formula).by
        except FormulaError:
            crossed = "?"                   # the fit reports the formula's error
        if crossed is None:
            raise UsageError("anova tests the covariate crossed with the model (model * x); "
                             "the formula has none: write it as 'y ~ model * x + (random "
                             "terms)'")
    from ..formula import InteractionSpec, parse

    if (not is_binomial(args) and args.formula is not None
            and not isinstance(parse(args.formula), InteractionSpec)):
        # refused before reading and fitting every pair
        raise UsageError(f"anova tests covariate terms, and the formula {args.formula!r} has no "
                         "covariate in its fixed part (nothing to test); fit e.g. "
                         "'correct ~ model * x + (1|subject)', where x is a cell-level column")
    res = fit_from_args(args)
    emit(table_of(res, res.anova(adjust=args.anova_adjust), args.format), args)


def cmd_components(args: argparse.Namespace) -> None:
    res = fit_from_args(args)
    tab = res.variance_components()
    note = tab.attrs.get("mixrank", {}).get("note")
    if tab.empty and note:   # e.g. a judge-corrected fit (--gold): no mixed model
        raise UsageError(f"{note}; drop --gold for the components of the judge's scores")
    emit(table_of(res, tab, args.format), args)


def register(sub: Any) -> None:
    """Add ``demo``, ``fit``, ``contrasts``, ``components`` and ``anova`` to the subparsers ``sub``."""
    d = sub.add_parser("demo", help="full analysis of the bundled example")
    out_args(d)
    d.set_defaults(func=cmd_demo)
    for name, fn, hlp in [("fit", cmd_fit, "fit and print an lme4-like summary"),
                          ("contrasts", cmd_contrasts, "pairwise contrasts table"),
                          ("components", cmd_components, "variance components per pair"),
                          ("anova", cmd_anova, "per pair, F tests that the gap is the same at "
                           "every level of each covariate (formulas such as model * x)")]:
        s = sub.add_parser(name, help=hlp)
        common_args(s)
        s.set_defaults(func=fn)
        if name == "contrasts":
            s.add_argument("--adjust", default=None, choices=ADJUST_ALL,
                           help="p_adjusted across the pairs shown (the values contrasts(adjust=) "
                                "takes for the fit's type; maxt: simultaneous CIs too; stepdown: "
                                "step-down max-t); default the fit's (the unit randomization "
                                "step-down on the CR2 path with 6 to 14 units, else holm)")
            s.add_argument("--draws", type=int, default=None,
                           help="Gaussian draws for --adjust maxt (default 10000)")
            s.add_argument("--seed", type=int, default=None, help="seed for --adjust maxt")
            s.add_argument("--by", default=None, metavar="COLUMN",
                           help="gap per level of this covariate of the formula "
                                "(e.g. -f 'correct ~ model * topic' --by topic)")
            s.add_argument("--scale", default=None, choices=["logit", "response"],
                           help="--family binomial: log-odds differences with odds ratios "
                                "(logit, default) or probability differences averaged over "
                                "the cells (response)")
            s.add_argument("--ci", default=None, choices=["t", "randomization"],
                           help="each pair's test and interval: t (its SE and df) or "
                                "randomization (its unit sign-flip test, inverted); default "
                                "randomization where the default adjustment is the unit "
                                "step-down, else t")
        if name == "anova":
            s.add_argument("--adjust", dest="anova_adjust", default="none",
                           choices=("none", "holm"), help="Holm across pairs, per term")
