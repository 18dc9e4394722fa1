"""CLI subcommand ``arena``: a Bradley-Terry leaderboard of a battle log.

Inputs: parsed arguments -- a battle log (CSV, JSONL, parquet, FastChat
``clean_battle`` JSON, or ``-`` for CSV on standard input) with ``model_a,
model_b, winner`` columns, or per-item scores with ``--from-scores``.
Outputs: the tables of :class:`mixrank.arena.ArenaResult` chosen by
``--table`` (scores, contrasts, ranks, resolution, covariates, or all of
them), in ``--format``.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import UsageError, emit, render, titled
from .options import out_args
from .verdicts import rank_note

TABLES = ("scores", "contrasts", "ranks", "resolution", "covariates", "judges", "boards", "all")
#: Tables of a judge-corrected fit only (--judge).
JUDGE_TABLES = ("judges", "boards")


def _data(args: argparse.Namespace) -> Any:
    from ..arena import battles_from_scores
    from ..frame.source import to_pandas
    from .common import _stdin, load

    bundled = args.data == "example" or args.data.startswith(("shared:", "dataset:"))
    if bundled and not args.from_scores:
        raise UsageError(f"{args.data!r} is a bundled per-item dataset, not a battle log; pass "
                         "--from-scores to judge every pair of models on every common item")
    data = _stdin("table") if args.data == "-" else load(args) if bundled else args.data
    if args.from_scores:
        df = to_pandas(data)
        keys = None if args.keys is None else [k.strip() for k in args.keys.split(",")]
        return battles_from_scores(df, model=args.model, score=args.score, keys=keys)
    if args.keys is not None or args.model != "model" or args.score != "correct":
        raise UsageError("--model, --score and --keys describe per-item scores; pass "
                         "--from-scores, or drop them")
    if not isinstance(data, str):
        return data
    from ..arena import read_battles

    df = read_battles(data)
    if "model_a" not in df.columns and {"model", "correct"} <= set(df.columns):
        raise UsageError(f"{args.data!r} holds per-item scores (columns model, correct), not "
                         "battles (model_a, model_b, winner); pass --from-scores to judge every "
                         "pair of models on every common item")
    return df


def _anchor(text: str | None) -> tuple[str, float] | None:
    if text is None:
        return None
    name, sep, value = text.rpartition("=")
    try:
        return (name, float(value)) if sep and name else _bad_anchor(text)
    except ValueError:
        return _bad_anchor(text)


def _bad_anchor(text: str) -> tuple[str, float]:
    raise UsageError(f"--anchor {text!r}: expected MODEL=VALUE, e.g. --anchor gpt-4=1250")


def cmd_arena(args: argparse.Namespace) -> None:
    from ..arena import arena

    if args.se != "bootstrap" and (args.draws is not None or args.seed is not None):
        raise UsageError("--draws and --seed set the bootstrap (--se bootstrap); drop them or "
                         "pass --se bootstrap")
    want: tuple[str, ...] = TABLES[:-1] if args.table == "all" else (args.table,)
    _check_table_options(args, want)
    anchor = _anchor(args.anchor)   # before the fit: a typo should not wait for it
    covs = None if args.covariates is None else [c.strip() for c in args.covariates.split(",")]
    cluster: Any = False if args.cluster in ("none", "False", "false") else args.cluster
    if args.from_scores and cluster is None and args.se is None:
        cluster = "cell"   # derived battles on one cell share it (docs/arena.md §2)
    judge = None if not args.judge else args.judge[0] if len(args.judge) == 1 else args.judge
    if judge is None and args.table in JUDGE_TABLES:
        raise UsageError(f"--table {args.table} shows the judge correction; pass --judge COLUMN "
                         "(an LLM's verdict on every battle)")
    res = arena(_data(args), args.formula, ties=args.ties, covariates=covs, cluster=cluster,
                se=args.se, draws=1000 if args.draws is None else args.draws, rng=args.seed,
                prior=args.prior, level=args.level, judge=judge, position=args.position)
    if args.report:
        _write_report(res, args)
        return
    parts, notes = [], ""      # notes: where the rank intervals and contrasts answer differently
    if not res.fit.n_features and res.ties != "davidson":   # no covariate table to show
        if args.table == "covariates":
            raise UsageError(f"the fit {res.formula!r} with ties={res.ties} has no covariates; "
                             "add them to -f (e.g. 'winner ~ style(len)') or pass --ties "
                             "davidson for the tie parameter")
        want = tuple(w for w in want if w != "covariates")
    if judge is None:
        want = tuple(w for w in want if w not in JUDGE_TABLES)
    for name in want:
        if name == "scores":
            tab = res.model_scores(anchor=anchor).sort_values(
                ["estimate", "model"], ascending=[False, True], kind="stable"
            ).reset_index(drop=True)
        elif name == "contrasts":
            tab = res.contrasts(adjust=args.adjust or "holm", scale=args.scale)
        elif name == "ranks":
            tab = res.rank_intervals(coverage=args.coverage or "marginal")
            notes = rank_note(res, tab, args.format, adjust=args.adjust or "holm")
        elif name == "resolution":
            tab = res.resolution()
        elif name == "judges":
            tab = res.judges()
        elif name == "boards":
            tab = res.leaderboards()
        else:
            tab = res.covariates()
        parts.append((name, tab))
    if len(parts) == 1:
        head = f"{res!r}\n" if args.format == "table" else ""
        emit(head + render(parts[0][1], args.format) + notes, args)
    else:
        emit(titled(parts, args.format) + notes, args)


#: Options that shape one table only: option -> (attribute, the tables it shapes).
_TABLE_OPTIONS = {"--scale": ("scale", ("contrasts",)), "--adjust": ("adjust", ("contrasts",)),
                  "--coverage": ("coverage", ("ranks",)), "--anchor": ("anchor", ("scores",))}


def _check_table_options(args: argparse.Namespace, want: tuple[str, ...]) -> None:
    """Refuse an option of a table that is not printed (it would be ignored)."""
    for flag, (attr, tables) in _TABLE_OPTIONS.items():
        if getattr(args, attr) is None:
            continue
        if args.report:
            raise UsageError(f"{flag} shapes a printed table; --report writes the HTML page with "
                             "its own choices: drop --report or drop " + flag)
        if not set(tables) & set(want):
            raise UsageError(f"{flag} shapes --table {' or '.join(tables)} (or all); with "
                             f"--table {args.table} it would be ignored: drop it or pass "
                             f"--table {tables[0]}")


def _write_report(res: Any, args: argparse.Namespace) -> None:
    import sys

    from ..report.html import render_report

    if args.table != "scores" or args.output or args.format != "table":
        raise UsageError("--report writes the HTML page with every table; drop --table, "
                         "--format and -o/--output")
    text = render_report(res, level=args.level)
    try:
        with open(args.report, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write the report {args.report!r} (--report): "
                         f"{exc.strerror or exc}; choose a writable path") from None
    print(f"wrote {args.report}", file=sys.stderr)


def register(sub: Any) -> None:
    """Add ``arena`` to the subparsers ``sub``."""
    s = sub.add_parser("arena", help="Bradley-Terry leaderboard of a pairwise battle log "
                                     "(LMArena style) with intervals, ranks and resolution")
    s.add_argument("data", help="battle log: .csv, .jsonl, .parquet, FastChat clean_battle "
                   ".json, or '-' (CSV on standard input); columns model_a, model_b, winner. "
                   "With --from-scores: per-item scores, also 'example' or dataset:NAME")
    s.add_argument("--formula", "-f", default=None,
                   help="e.g. 'winner ~ style(len, markdown)' (columns len_a, len_b, ...); "
                   "default 'winner ~ 1'")
    s.add_argument("--ties", default="half", choices=["half", "davidson", "drop"],
                   help="ties: half a win to each side (default), Davidson's tie model, or drop "
                   "them (docs/arena.md)")
    s.add_argument("--covariates", default=None, metavar="F1,F2",
                   help="style covariates (same as style(F1, F2) in the formula)")
    s.add_argument("--cluster", default=None, metavar="COLUMN",
                   help="grouping column for a clustered sandwich (CR2, t with Bell-McCaffrey "
                   "df); default: a prompt/conversation/voter column of the log if present "
                   "(question_id, conversation_id, prompt, ..., voter, user), 'none' for no "
                   "clustering; with --from-scores the default is 'cell' (the item) unless --se "
                   "is given")
    s.add_argument("--se", default=None, choices=["information", "sandwich", "bootstrap"],
                   help="default: sandwich when clustered or with --judge, else information")
    s.add_argument("--judge", action="append", default=None, metavar="COLUMN",
                   help="an LLM judge's verdict column (every battle); battles with an empty "
                   "winner are unlabelled and the fit is prediction-powered Bradley-Terry "
                   "(PPI++, docs/arena.md §8); repeat for several judges")
    s.add_argument("--position", action="store_true",
                   help="add a first-position (model_a) term to the fit (--table covariates); "
                   "with --judge the judges' position terms are in --table judges")
    s.add_argument("--draws", type=int, default=None, help="bootstrap resamples (default 1000)")
    s.add_argument("--seed", type=int, default=None, help="bootstrap seed")
    s.add_argument("--prior", type=float, default=0.0,
                   help="pseudo-wins each way per pair that met (keeps scores finite when a "
                   "model never wins or never loses); default 0 = maximum likelihood")
    s.add_argument("--level", type=float, default=0.95,
                   help="confidence level of the intervals, in (0, 1) (default 0.95)")
    s.add_argument("--table", default="scores", choices=list(TABLES),
                   help="which table to print (default %(default)s); with --judge also "
                   "'judges' (position bias and agreement of each judge) and 'boards' "
                   "(human-only, judge-only and corrected scores side by side)")
    s.add_argument("--scale", default=None, choices=["logit", "elo", "probability"],
                   help="scale of --table contrasts (default elo, the scale of the scores)")
    s.add_argument("--adjust", default=None, choices=["holm", "none", "bonferroni", "bh",
                                                      "maxt"],
                   help="multiplicity adjustment of --table contrasts (default holm)")
    s.add_argument("--coverage", default=None, choices=["marginal", "simultaneous"],
                   help="coverage of --table ranks (default marginal)")
    s.add_argument("--anchor", default=None, metavar="MODEL=VALUE",
                   help="pin this model's displayed score in --table scores (default: mean "
                   "1000)")
    s.add_argument("--report", default=None, metavar="PATH",
                   help="write the self-contained HTML report (all tables and plots) to PATH")
    s.add_argument("--from-scores", action="store_true",
                   help="the data are per-item scores (model, keys, score): every pair of "
                   "models on every common item is a judged battle, higher score wins; standard errors "
                   "clustered by the item ('cell') unless --cluster or --se says otherwise")
    s.add_argument("--model", default="model", help="--from-scores: the model column")
    s.add_argument("--score", default="correct", help="--from-scores: the score column")
    s.add_argument("--keys", default=None, help="--from-scores: item key columns (default the "
                   "pairing keys present among subject, question, prompt, else all other "
                   "columns)")
    out_args(s)
    s.set_defaults(func=cmd_arena)
