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
    ask_result,
    emit,
    fit_from_args,
    glmm_by,
    parse_pairs,
    progress_arg,
    rank_kwargs,
    render,
    score_header,
    table_of,
)
from .options import common_args, deprecation_line, former_flag, level_power_args, rank_args

#: The ``--adjust`` values of the verdicts' multiplicity paradigm (``resolution(adjust=)``).
VERDICT_ADJUST = ("holm", "bonferroni", "bh", "stepdown", "none")



def cmd_ranks(args: argparse.Namespace) -> None:
    if args.pair:
        raise UsageError("ranks compares every pair of models; drop --pair (select models by "
                         "filtering the data instead)")
    glmm_by(args, args.by)
    kw = rank_kwargs(args)
    kw.update(ask_result(args, "rank_intervals", coverage=("--coverage", kw["coverage"]),
                         adjust=("--adjust", kw.get("adjust")), scale=("--scale", args.scale),
                         by=("--by", args.by)))
    res = fit_from_args(args)
    tab = res.rank_intervals(**kw)
    emit(table_of(res, tab, args.format) + rank_note(res, tab, args.format), args)


def rank_note(res: Any, ranks: Any, fmt: str, **contrasts: Any) -> str:
    """Table format: the note naming the pairs the rank intervals and the default contrasts
    answer differently, and why (:func:`mixrank.inference.ranks.agreement.rank_contrast_note`)."""
    if fmt != "table" or ranks.attrs.get("mixrank", {}).get("by"):
        return ""
    from ..inference.ranks.agreement import rank_contrast_note

    note = rank_contrast_note(ranks, res.contrasts(**contrasts))
    return note + "\n" if note else ""


def _legacy_pairs(args: argparse.Namespace) -> None:
    """``--family adjacent|all`` (its former meaning) -> ``--pairs``, with a deprecation line."""
    if args.family in ("adjacent", "all"):
        if args.pairs is not None and args.pairs != args.family:
            raise UsageError(f"--family {args.family} (the former name of --pairs) contradicts "
                             f"--pairs {args.pairs}; keep --pairs")
        deprecation_line(f"resolution --family {args.family}", f"--pairs {args.family}")
        print("  (--family names the response distribution: gaussian, binomial)",
              file=sys.stderr)
        args.pairs, args.family = args.family, "gaussian"
    args.pairs = args.pairs or "adjacent"


def cmd_resolution(args: argparse.Namespace) -> None:
    if not args.sensitivity and (args.draws is not None or args.seed is not None):
        raise UsageError("--draws and --seed set the bootstrap of --sensitivity; without "
                         "--sensitivity they would be ignored")
    if args.no_anytime and args.anytime != "auto":
        raise UsageError(f"--anytime {args.anytime} and --no-anytime contradict each other; "
                         "keep one")
    _legacy_pairs(args)
    extra = ask_result(args, "resolution", top=("--top", args.top),
                       cluster=("--no-cluster", False if args.no_cluster else None),
                       design_effect=("--design-effect", args.design_effect),
                       anytime=("--anytime", None if args.anytime == "auto" else args.anytime))
    if args.sensitivity:
        ask_result(args, "sensitivity", via=f"--sensitivity {args.sensitivity}")
    explicit = parse_pairs(args.pair)
    res = fit_from_args(args, pairs=explicit)
    judged: Any = explicit if explicit else args.pairs
    extra["anytime"] = False if args.no_anytime else extra.get("anytime", "auto")
    if args.adjust is not None:                  # else the fit's default (stepdown on CR2)
        extra["adjust"] = None if args.adjust == "none" else args.adjust
    # table/markdown: the default view (resolution()'s 13 main columns) unless --wide
    shown = "default" if args.format in ("table", "markdown") and not args.wide else "all"
    tab = res.resolution(level=args.level, power=args.power, pairs=judged, columns=shown,
                         **extra)
    summ = None
    if args.sensitivity:
        summ = res.sensitivity(args.sensitivity, pairs=judged, top=args.top, level=args.level,
                               power=args.power, draws=1000 if args.draws is None else args.draws,
                               rng=args.seed, summary=True, progress=progress_arg(args))
        if args.format not in ("table", "markdown"):
            return emit(render(summ, args.format), args)
    if args.format in ("table", "markdown"):
        counts = tab.attrs.get("mixrank", {}).get("unresolved", {})
        head = "".join(f"{k}: {v}\n" for k, v in counts.items())
        top = score_header(res) if args.format == "table" else ""
        if "n_star" in tab.attrs.get("mixrank", {}):     # how N* is computed, where it differs
            head += f"N*: {tab.attrs['mixrank']['n_star']}\n"
        text = (f"{top}Resolution verdicts ({args.pairs if not explicit else 'explicit'} pairs)\n"
                f"{head}\n{render(tab, args.format)}")
        if summ is not None:
            text += (f"\n\nStability of the clustered verdict ({args.sensitivity})\n"
                     f"{render(summ, args.format)}")
        emit(text, args)
    else:
        emit(render(tab, args.format), args)


def cmd_plan(args: argparse.Namespace) -> None:
    import pandas as pd

    ask_result(args, "plan", via="plan")
    res = fit_from_args(args)
    kw: dict[str, Any] = dict(subjects=args.subjects, questions=args.questions,
                              prompts=args.prompts, level=args.level, power=args.power)
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

    s = sub.add_parser(
        "resolution", help="resolution verdicts (N*, q) per pair",
        description="Resolution verdicts per pair. The fixed-n column treats the cells as "
        "independent; each further column (multiplicity-adjusted, anytime-valid, clustered at "
        "the formula's unit) is a separate stress test of that verdict, the clustered one on "
        "the default contrast's own estimate, SE and df. resolved_all is their conjunction "
        "together with 'rejected' (the default adjusted contrast rejects).")
    common_args(s, family_extra=("adjacent", "all"))
    level_power_args(s)
    s.add_argument("--pairs", default=None, choices=["adjacent", "all"],
                   help="pairs judged: adjacent in score order (default) or all (with --pair, "
                        "the pairs named there are judged instead)")
    former_flag(s, "--judged", "--pairs", "pairs", choices=["adjacent", "all"])
    s.add_argument("--top", type=int, default=None, help="only the TOP best-scoring models")
    s.add_argument("--adjust", default=None, choices=VERDICT_ADJUST,
                   help="correction of the multiplicity-adjusted paradigm across the pairs "
                   "shown: holm, bonferroni, bh, stepdown (the unit sign-flip step-down's "
                   "per-step levels; df cr2 fits) or none (drop that paradigm); default the "
                   "fit's (stepdown where the contrasts default to it, else holm)")
    former_flag(s, "--multiplicity", "--adjust", "adjust", choices=VERDICT_ADJUST)
    s.add_argument("--no-anytime", action="store_true", help="drop the anytime-valid paradigm")
    s.add_argument("--anytime", default="auto", choices=["auto", "normal", "bernoulli"],
                   help="anytime boundary: auto = Bernoulli e-process for 0/1 scores")
    s.add_argument("--no-cluster", action="store_true", help="drop the clustered paradigm")
    s.add_argument("--design-effect", default=None, choices=["model", "anova"],
                   help="how the clustered paradigm's variance_ratio is computed: model = the "
                        "default contrast's SE and df (default); anova = the published "
                        "recipe's design effect, 1 + (m_bar - 1) ICC with the one-way ANOVA "
                        "ICC over the unit")
    former_flag(s, "--all-columns", "--wide", "wide", nargs=0, const=True)
    s.add_argument("--sensitivity", default=None, metavar="KINDS",
                   help="stability of the clustered verdict: loso,bootstrap,clusterings "
                        "(csv/json then output the stability table)")
    s.add_argument("--draws", type=int, default=None,
                   help="bootstrap replicates of --sensitivity (default 1000)")
    former_flag(s, "--B", "--draws", "draws", type=int, new_type=int)
    s.add_argument("--seed", type=int, default=None, help="seed of the bootstrap")
    s.set_defaults(func=cmd_resolution)

    s = sub.add_parser("plan", help="designs (subjects, questions, prompts) that resolve --delta")
    common_args(s)
    level_power_args(s)
    s.add_argument("--delta", type=float, action="append", required=True,
                   help="target difference (repeatable)")
    s.add_argument("--subjects", type=int, default=None,
                   help="subjects T of the hypothetical design (default: the data's)")
    s.add_argument("--questions", type=int, default=None,
                   help="questions per subject Q (default: the data's mean)")
    s.add_argument("--prompts", type=int, default=None,
                   help="prompts V (default: the data's)")
    s.add_argument("--plan-pair", default=None, metavar="A,B",
                   help="whose components (default: the median pair; the table's pair "
                        "column names it)")
    s.set_defaults(func=cmd_plan)
