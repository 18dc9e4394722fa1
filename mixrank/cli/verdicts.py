"""CLI subcommands ``ranks``, ``resolution`` and ``plan``.

Inputs: parsed arguments (see :mod:`mixrank.cli.common`).  Outputs: the
tables of :meth:`FitResult.rank_intervals`, :meth:`FitResult.resolution` and
:meth:`FitResult.plan`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import (
    UsageError,
    emit,
    fit_from_args,
    glmm_by,
    is_binomial,
    parse_pairs,
    progress_arg,
    rank_kwargs,
    refuse_for_binomial,
    render,
    score_header,
    table_of,
)
from .options import alpha_power_args, common_args, rank_args

_RESOLUTION_MAIN = ("model_a", "model_b", "estimate", "n", "n_star", "q", "resolved",
                    "resolved_multiplicity", "resolved_anytime", "design_effect",
                    "resolved_cluster", "resolved_all")
_SENSITIVITY_MAIN = ("kind", "grouping", "model_a", "model_b", "replicates", "resolved_cluster",
                     "stability", "ci_lower", "ci_upper", "n_star_cluster", "n_star_bootstrap",
                     "p_value")


def cmd_ranks(args: argparse.Namespace) -> None:
    if args.pair:
        raise UsageError("ranks compares every pair of models; drop --pair (select models by "
                         "filtering the data instead)")
    if args.scale is not None and not is_binomial(args):
        raise UsageError(f"--scale {args.scale} chooses the scale of the binomial GLMM's tests; "
                         "pass --family binomial, or drop --scale")
    by = glmm_by(args, args.by)
    res = fit_from_args(args)
    if is_binomial(args):
        tab = res.rank_intervals(**rank_kwargs(args), scale=args.scale or "logit", **by)
    else:
        tab = res.rank_intervals(**rank_kwargs(args), by=args.by)
    emit(table_of(res, tab, args.format), args)


#: resolution options the binomial GLMM does not take: (flag, dest, default, instead).
_RESOLUTION_LINEAR_ONLY = (
    ("--top", "top", None, "select models by filtering the data, or name pairs with --pair"),
    ("--no-cluster", "no_cluster", False, "its verdicts have no separate clustered paradigm "
     "(the Wald SE already carries the formula's unit of inference); drop --no-cluster"),
    ("--anytime", "anytime", "auto", "its anytime verdict uses the normal boundary on the "
     "logit-scale z; drop --anytime (or pass --no-anytime)"),
    ("--sensitivity", "sensitivity", None, "verdict stability refits the linear model; use "
     "--family gaussian"))


def _legacy_judged(args: argparse.Namespace) -> None:
    """``--family adjacent|all`` (its former meaning) -> ``--judged``, with a note on stderr."""
    if args.family in ("adjacent", "all"):
        if args.judged is not None and args.judged != args.family:
            raise UsageError(f"--family {args.family} (the former name of --judged) contradicts "
                             f"--judged {args.judged}; keep --judged")
        print(f"note: resolution --family {args.family} is now --judged {args.family}; "
              "--family names the response family (gaussian, binomial)", file=sys.stderr)
        args.judged, args.family = args.family, "gaussian"
    args.judged = args.judged or "adjacent"


def cmd_resolution(args: argparse.Namespace) -> None:
    if not args.sensitivity and (args.boot is not None or args.seed is not None):
        raise UsageError("--B and --seed set the bootstrap of --sensitivity; without "
                         "--sensitivity they would be ignored")
    if args.no_anytime and args.anytime != "auto":
        raise UsageError(f"--anytime {args.anytime} and --no-anytime contradict each other; "
                         "keep one")
    _legacy_judged(args)
    refuse_for_binomial(args, _RESOLUTION_LINEAR_ONLY)
    explicit = parse_pairs(args.pair)
    res = fit_from_args(args, pairs=explicit)
    family: Any = explicit if explicit else args.judged
    multiplicity = None if args.multiplicity == "none" else args.multiplicity
    if is_binomial(args):
        tab = res.resolution(level=1 - args.alpha, power=args.power, pairs=family,
                             adjust=multiplicity, anytime=not args.no_anytime)
    else:
        tab = res.resolution(level=1 - args.alpha, power=args.power, pairs=family, top=args.top,
                             adjust=multiplicity,
                             anytime=False if args.no_anytime else args.anytime,
                             cluster=not args.no_cluster)
    summ = None
    if args.sensitivity:
        summ = res.sensitivity(args.sensitivity, pairs=family, top=args.top,
                               level=1 - args.alpha,
                               power=args.power, draws=1000 if args.boot is None else args.boot,
                               rng=args.seed, summary=True, progress=progress_arg(args))
        if args.format not in ("table", "markdown"):
            return emit(render(summ, args.format), args)
    if args.format in ("table", "markdown") and (summ is not None or not args.all_columns):
        counts = tab.attrs.get("mixrank", {}).get("unresolved", {})
        head = "".join(f"{k}: {v}\n" for k, v in counts.items())
        shown = tab[[c for c in _RESOLUTION_MAIN if c in tab.columns]]
        top = score_header(res) if args.format == "table" else ""
        if is_binomial(args):
            head += f"N*: {tab.attrs['mixrank']['n_star']}\n"
        text = (f"{top}Resolution verdicts ({args.judged if not explicit else 'explicit'} pairs)\n"
                f"{head}\n{render(shown, args.format)}")
        if summ is not None:
            keep = [c for c in _SENSITIVITY_MAIN if c in summ.columns]
            text += (f"\n\nStability of the clustered verdict ({args.sensitivity})\n"
                     f"{render(summ[keep], args.format)}")
        emit(text, args)
    else:
        emit(render(tab, args.format), args)


def cmd_plan(args: argparse.Namespace) -> None:
    import pandas as pd

    if is_binomial(args):
        raise UsageError("plan sizes designs from the linear model's variance components; the "
                         "binomial GLMM has no planner yet: use --family gaussian, or "
                         "'mixrank resolution --family binomial' for N* per pair")
    res = fit_from_args(args)
    kw: dict[str, Any] = dict(subjects=args.subjects, questions=args.questions,
                              prompts=args.prompts, level=1 - args.alpha, power=args.power)
    if args.plan_pair:
        pr = parse_pairs([args.plan_pair])
        kw["pair"] = pr[0] if pr else None
    parts = [res.plan(d, **kw).assign(delta=d) for d in args.delta]
    tab = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    emit(table_of(res, tab, args.format), args)


def register(sub: Any) -> None:
    """Add ``ranks``, ``resolution`` and ``plan`` to the subparsers ``sub``."""
    s = sub.add_parser("ranks", help="rank confidence intervals per model")
    common_args(s)
    rank_args(s)
    s.add_argument("--by", default=None, metavar="COLUMN",
                   help="rank intervals per level of this covariate of the formula")
    s.add_argument("--scale", default=None, choices=["logit", "response"],
                   help="--family binomial: rank from the logit-scale (default) or the "
                        "probability-scale pairwise tests")
    s.set_defaults(func=cmd_ranks)

    s = sub.add_parser("resolution", help="resolution verdicts (N*, q) per pair")
    common_args(s, family_extra=("adjacent", "all"))
    alpha_power_args(s)
    s.add_argument("--judged", default=None, choices=["adjacent", "all"],
                   help="pairs judged: adjacent in score order (default) or all (ignored with "
                        "--pair, which names them; formerly --family adjacent|all)")
    s.add_argument("--top", type=int, default=None, help="only the TOP best-scoring models")
    s.add_argument("--multiplicity", default="holm", choices=["holm", "bonferroni", "bh", "none"],
                   help="correction of the multiplicity-adjusted paradigm across the pairs "
                   "shown: holm (default), bonferroni, bh or none (drop that paradigm)")
    s.add_argument("--no-anytime", action="store_true", help="drop the anytime-valid paradigm")
    s.add_argument("--anytime", default="auto", choices=["auto", "normal", "bernoulli"],
                   help="anytime boundary: auto = Bernoulli e-process for 0/1 scores")
    s.add_argument("--no-cluster", action="store_true", help="drop the clustered paradigm")
    s.add_argument("--all-columns", action="store_true",
                   help="table/markdown: every column (csv/json always have all)")
    s.add_argument("--sensitivity", default=None, metavar="KINDS",
                   help="stability of the clustered verdict: loso,bootstrap,clusterings "
                        "(csv/json then output the stability table)")
    s.add_argument("--B", dest="boot", type=int, default=None,
                   help="bootstrap replicates of --sensitivity (default 1000)")
    s.add_argument("--seed", type=int, default=None, help="seed of the bootstrap")
    s.set_defaults(func=cmd_resolution)

    s = sub.add_parser("plan", help="designs (subjects, questions, prompts) that resolve --delta")
    common_args(s)
    alpha_power_args(s)
    s.add_argument("--delta", type=float, action="append", required=True,
                   help="target difference (repeatable)")
    s.add_argument("--subjects", type=int, default=None,
                   help="subjects T of the hypothetical design (default: the data's)")
    s.add_argument("--questions", type=int, default=None,
                   help="questions per subject Q (default: the data's mean)")
    s.add_argument("--prompts", type=int, default=None,
                   help="prompts V (default: the data's)")
    s.add_argument("--plan-pair", default=None, metavar="A,B",
                   help="whose components (default: the median pair)")
    s.set_defaults(func=cmd_plan)
