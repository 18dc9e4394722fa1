"""Every subcommand's table output reads like lme4 and emmeans: at most
100 characters a line, p-values as R's ``format.pval`` (2 significant digits, ``<0.001``),
standard errors to 2-3 significant digits, each estimate and interval end at most to the
decimal place its row's SE supports, every other number at most 4 significant digits --
on the bundled example and on bundled ChemBench.  CSV keeps full precision; ``--wide``
shows every column.

The text is parsed back: a table block is a header of column names and the rows below
it, right-aligned (a wide table continues in further blocks that repeat its key columns).
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.cli import main

F = "correct ~ model + (1|subject) + (1|subject:question)"
FC = "correct ~ model + (1|subject)"

_NUMBER = re.compile(r"^-?(\d+\.\d*|\d*\.\d+|\d+)(e[+-]\d+)?$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_P = re.compile(r"^(p_value|p_adjusted|p_greater|p_less)(_\w+)?$")
_SE = re.compile(r"^(\w+_)?std_error(_\w+)?$")
_ON_SE = re.compile(r"^(estimate|bias|ci_lower|ci_upper)(_\w+)?$")


def _sig(token: str) -> int:
    """Significant digits of a printed number (trailing zeros of a decimal count)."""
    mant = token.lstrip("-").split("e")[0]
    digits = mant.replace(".", "").lstrip("0")
    return len(digits) if "." in mant else len(digits.rstrip("0"))


def _decimals(token: str) -> int:
    mant = token.split("e")[0]
    return len(mant.split(".")[1]) if "." in mant else 0


def _is_header(line: str, nxt: str | None) -> bool:
    words = line.split()
    return (len(words) >= 2 and all(_NAME.match(w) for w in words) and nxt is not None
            and bool(nxt.strip()) and len(nxt) <= len(line) + 40
            and any(w in line for w in ("model", "estimate", "kind", "method", "quantity",
                                         "subject", "statistic", "class", "n")))


def _tables(text: str) -> tuple[list[dict[str, list[str]]], list[str]]:
    """The table blocks of ``text`` (column -> cells; blocks of one table merged) and the
    lines outside any table."""
    lines = text.splitlines()
    tables: list[dict[str, list[str]]] = []
    prose: list[str] = []
    i, keys_prev = 0, None
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if not _is_header(line, nxt):
            prose.append(line)
            i += 1
            continue
        ends = [m.end() for m in re.finditer(r"\S+", line)]
        names = line.split()
        rows = []
        i += 1
        while i < len(lines) and lines[i].strip() and not lines[i].startswith("["):
            rows.append(lines[i])
            i += 1
        block = {}
        for k, (name, end) in enumerate(zip(names, ends)):
            start = ends[k - 1] if k else 0
            block[name] = [r[start:end].strip() for r in rows]
        keys = tuple(n for n in names[:2] if n in ("model", "model_a", "model_b", "kind",
                                                   "group", "subject", "method"))
        if tables and keys and keys == keys_prev and all(
                tables[-1].get(k) == block.get(k) for k in keys):
            tables[-1].update(block)          # the next block of the same table
        else:
            tables.append(block)
        keys_prev = keys
    return tables, prose


def _check_numbers(text: str, where: str) -> None:
    tables, prose = _tables(text)
    for tab in tables:
        ses = tab.get("std_error")
        for col, cells in tab.items():
            for row, cell in enumerate(cells):
                if not _NUMBER.match(cell):
                    continue
                if _P.match(col):
                    assert _sig(cell) <= 2, (where, col, cell)
                elif _SE.match(col):
                    assert _sig(cell) <= 3, (where, col, cell)
                elif (_ON_SE.match(col) and ses is not None and _NUMBER.match(ses[row])
                      and _sig(cell) > 4):
                    # more than 4 significant digits only where the SE supports them
                    assert _decimals(cell) <= max(_decimals(ses[row]), 0), (where, col, cell)
                elif "." in cell or "e" in cell:
                    assert _sig(cell) <= 4, (where, col, cell)
    for line in prose:
        for tok in re.findall(r"(?<![\w.:/-])-?\d+\.\d+(?:e[+-]\d+)?(?![\w.])", line):
            assert _sig(tok) <= 4, (where, line)


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(argv)
    assert code == 0, (argv, err.getvalue())
    return code, out.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Judge labels and a new model's answers on selected items, built from the example."""
    tmp = tmp_path_factory.mktemp("display")
    d = mixrank.load_example()
    rng = np.random.default_rng(1)
    d["judge"] = np.where(rng.uniform(size=len(d)) < 0.1, 1 - d["correct"], d["correct"])
    d["gold"] = np.where(rng.uniform(size=len(d)) < 0.3, d["correct"], np.nan)
    d.to_csv(tmp / "judge.csv", index=False)
    ref, new = d[d.model != "m06"], d[d.model == "m06"]
    ref.to_csv(tmp / "ref.csv", index=False)
    sel = mixrank.select_items(ref.drop(columns=["judge", "gold"]), 60, rng=1)
    keys = ["subject", "question"]
    new.merge(sel[keys], on=keys).to_csv(tmp / "new.csv", index=False)
    sel.to_csv(tmp / "sel.csv", index=False)
    return tmp


def _commands(files) -> dict[str, list[str]]:
    cmds: dict[str, list[str]] = {"demo": ["demo"]}
    for tag, data, f in [("example", "example", F), ("chembench", "dataset:chembench", FC)]:
        cmds.update({
            f"fit {tag}": ["fit", data, "-f", f],
            f"contrasts {tag}": ["contrasts", data, "-f", f],
            f"components {tag}": ["components", data, "-f", f],
            f"scores {tag}": ["scores", data, "-f", f, "--probabilities", "--seed", "1"],
            f"ranks {tag}": ["ranks", data, "-f", f],
            f"ranks simultaneous {tag}": ["ranks", data, "-f", f, "--coverage", "simultaneous"],
            f"resolution {tag}": ["resolution", data, "-f", f, "--pairs", "all"],
            f"plan {tag}": ["plan", data, "-f", f, "--delta", "0.05"],
            f"arena {tag}": ["arena", data, "--from-scores", "--keys", "subject,question,prompt",
                             "--table", "all"],
            f"select-items {tag}": ["select-items", data, "-k", "20", "--seed", "1"],
        })
    glmm = "correct ~ model + (1|subject)"
    cmds.update({
        "fit one pair": ["fit", "example", "-f", F, "--pair", "m01,m02"],   # lme4's layout
        "fit binomial": ["fit", "example", "-f", glmm, "--family", "binomial"],
        "contrasts binomial": ["contrasts", "example", "-f", glmm, "--family", "binomial"],
        "scores binomial": ["scores", "example", "-f", glmm, "--family", "binomial"],
        "ranks binomial": ["ranks", "example", "-f", glmm, "--family", "binomial"],
        "resolution binomial": ["resolution", "example", "-f", glmm, "--family", "binomial"],
        "anova": ["anova", str(files / "judge.csv"), "-f", "correct ~ model * prompt + "
                  "(1|subject)"],
        "power": ["power", "--p-a", "0.7", "--p-b", "0.65", "--rho", "0.5", "--n", "500"],
        "rci": ["rci", "example", "--before", "m01", "--after", "m02", "--sample", "prompt"],
        "judge": ["judge", str(files / "judge.csv"), "-f", "judge ~ model + (1|subject)",
                  "--gold", "gold", "--plan", "0.05"],
        "subset-score": ["subset-score", str(files / "ref.csv"), "--new",
                         str(files / "new.csv"), "--selection", str(files / "sel.csv"),
                         "--table", "contrasts"],
    })
    return cmds


@pytest.mark.parametrize("dataset", ["example", "chembench"])
def test_every_subcommand_prints_at_most_100_characters_rounded_for_reading(files, dataset):
    """Each subcommand (on ChemBench: those that take a benchmark), its default columns and
    (on the example) --wide."""
    widest = {}
    for name, argv in _commands(files).items():
        if (dataset == "chembench") != name.endswith("chembench"):
            continue
        for extra in ([], ["--wide"]) if dataset == "example" else ([],):
            if name == "anova" and extra:
                continue
            _, text = _run(argv + extra)
            assert text.strip(), name
            width = max(len(line) for line in text.splitlines())
            widest[name + " " + " ".join(extra)] = width
            assert width <= 100, (name, extra, [ln for ln in text.splitlines() if len(ln) > 100])
            _check_numbers(text, name)
    assert len(widest) >= (40 if dataset == "example" else 10)


def test_csv_keeps_full_precision_and_every_column():
    _, text = _run(["contrasts", "example", "-f", F, "--format", "csv"])
    got = pd.read_csv(io.StringIO(text))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = mixrank.fit(F, mixrank.load_example()).contrasts()
    assert list(got.columns) == list(want.columns)
    np.testing.assert_allclose(got["std_error"], want["std_error"], rtol=1e-14)


def test_wide_shows_every_column_and_compact_the_main_ones():
    _, compact = _run(["contrasts", "example", "-f", F])
    _, wide = _run(["contrasts", "example", "-f", F, "--wide"])
    assert "p_greater" not in compact and "p_greater" in wide
    assert "0.0346109" not in compact and "0.035" in compact      # the demo's former SE


def test_all_columns_is_the_former_name_of_wide(capsys):
    assert main(["resolution", "example", "-f", F, "--all-columns"]) == 0
    out, err = capsys.readouterr()
    assert "--all-columns is the former name of --wide" in err
    assert "variance_ratio" in out and "n_star_cluster" in out
