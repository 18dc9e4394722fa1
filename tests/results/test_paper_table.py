"""``res.table()``: the leaderboard for a paper in LaTeX, Markdown and HTML.

* Golden files (tests/results/golden/table.tex, .md, .html): the bundled
  example with two models renamed ``m_01 & co`` and ``m#02 100%`` (names
  that LaTeX and Markdown must escape) and a caption naming a model.
  ``MIXRANK_WRITE_GOLDEN=1`` rewrites them (then read the diff).
* Every number of every format is the API's table rounded: the score and
  interval ``model_scores()``, the rank interval ``rank_intervals()``, the
  letters ``letters()`` and ``n``; every model appears once.
* Escaping of ``_ & % #`` (LaTeX) in rows and caption; bad ``format``,
  ``digits`` and ``interval``.
"""

from __future__ import annotations

import html
import os
import re
import warnings
from pathlib import Path

import pytest

import mixrank
from mixrank.errors import DesignError, OptionError
from mixrank.results.paper_table import latex_escape

GOLDEN = Path(__file__).resolve().parent / "golden"
RENAME = {"m01": "m_01 & co", "m02": "m#02 100%"}
CAPTION = "Example benchmark; m_01 & co is the baseline"
EXT = {"latex": "tex", "markdown": "md", "html": "html"}


@pytest.fixture(scope="module")
def res():
    d = mixrank.load_example()
    d["model"] = d["model"].replace(RENAME)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixrank.fit("correct ~ model + (1|subject)", d)


@pytest.mark.parametrize("fmt", list(EXT))
def test_golden(res, fmt):
    got = res.table(fmt, caption=CAPTION, label="tab:leaderboard")
    path = GOLDEN / f"table.{EXT[fmt]}"
    if os.environ.get("MIXRANK_WRITE_GOLDEN") == "1":
        path.write_text(got, encoding="utf-8")
    assert got == path.read_text(encoding="utf-8")


def _cells(text: str, fmt: str) -> list[list[str]]:
    """The body rows of a rendered table, cells unescaped (minus signs as '-')."""
    if fmt == "latex":
        body = text.split("\\midrule\n")[1].split("\\bottomrule")[0]
        rows = [r.removesuffix(" \\\\").split(" & ") for r in body.strip().splitlines()]
        # the model name may itself hold an escaped '&': rejoin to the expected width
        rows = [[" & ".join(r[:len(r) - 5]), *r[len(r) - 5:]] for r in rows]
        un = {v: k for k, v in (("&", r"\&"), ("%", r"\%"), ("#", r"\#"), ("_", r"\_"))}
        fix = [[re.sub(r"\\[&%#_]", lambda m: un[m.group(0)], c).replace("$-$", "-")
                .replace("--", "-") for c in r] for r in rows]
        return fix
    if fmt == "markdown":
        lines = [ln for ln in text.splitlines() if ln.startswith("| ")][2:]
        return [[re.sub(r"\\(.)", r"\1", c).replace("\u2013", "-")
                 for c in re.split(r" (?<!\\)\| ", ln.strip("| ").rstrip(" |"))] for ln in lines]
    rows = re.findall(r"<tr>(.*?)</tr>", text.split("<tbody>")[1])
    return [[html.unescape(c).replace("\u2212", "-").replace("\u2013", "-")
             for c in re.findall(r"<td>(.*?)</td>", r)] for r in rows]


@pytest.mark.parametrize("fmt", list(EXT))
@pytest.mark.parametrize("digits", [0, 2, 3, 5])
def test_every_number_is_the_api_table_rounded(res, fmt, digits):
    sc = res.model_scores().set_index("model")
    ri = res.rank_intervals().set_index("model")
    cld = res.letters()
    rows = _cells(res.table(fmt, digits), fmt)
    assert [r[0] for r in rows] == list(cld["model"])          # every model, best first

    def r(x):
        s = f"{round(float(x), digits):.{digits}f}"
        return s[1:] if s.startswith("-") and float(s) == 0 else s

    for row, (m, letters) in zip(rows, zip(cld["model"], cld["letters"])):
        lo, hi = int(ri.loc[m, "rank_lower"]), int(ri.loc[m, "rank_upper"])
        assert row[1:] == [r(sc.loc[m, "estimate"]),
                           f"[{r(sc.loc[m, 'ci_lower'])}, {r(sc.loc[m, 'ci_upper'])}]",
                           str(lo) if lo == hi else f"{lo}-{hi}", letters,
                           str(int(sc.loc[m, "n"]))], (fmt, m)


def test_plus_minus_interval(res):
    sc = res.model_scores().set_index("model")
    text = res.table("markdown", 4, interval="pm")
    assert "| Model | Score \u00b1 CI | Rank | Letters | n |" in text
    m = "m03"
    half = (sc.loc[m, "ci_upper"] - sc.loc[m, "ci_lower"]) / 2
    assert f"| m03 | {sc.loc[m, 'estimate']:.4f} \u00b1 {half:.4f} |" in text


def test_caption_and_escaping(res):
    tex = res.table("latex", caption=CAPTION)
    cap = re.search(r"\\caption\{(.*)\}\n", tex).group(1)
    assert cap.startswith(r"Example benchmark; m\_01 \& co is the baseline. 6 models")
    for needle in ("unit of inference: subject", r"95\% confidence interval",
                   "stepdown-adjusted", "level 0.95", "SE and df:",
                   r"correct \textasciitilde{} model + (1\textbar{}subject)"):
        assert needle in cap, needle
    assert r"m\_01 \& co & " in tex and r"m\#02 100\% & " in tex
    # no unescaped special character left outside the commands
    body = tex.split("\\midrule")[1].split("\\bottomrule")[0]
    assert not re.search(r"(?<!\\)[_%#]", body)
    assert latex_escape("a_b&c%d#e$f{g}h~i^j\\k") == (
        r"a\_b\&c\%d\#e\$f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k")
    md = res.table("markdown")
    assert r"| m\_01 & co |" in md and "| m#02 100% |" in md
    page = res.table("html", caption=CAPTION)
    assert "<td>m_01 &amp; co</td>" in page and "m_01 &amp; co is the baseline" in page


def test_arena_and_glmm_tables(shared_data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arena = mixrank.arena(shared_data("chatbot_arena"))
        glmm = mixrank.fit("correct ~ model + (1|subject)", shared_data("jailbreakbench"),
                           family="binomial")
    tab = arena.table("markdown", 1)
    assert "unit of inference: battles, clustered by question\\_id" in tab
    assert len([ln for ln in tab.splitlines() if ln.startswith("| ")]) == 2 + 20
    assert "(logit scale)" in glmm.table("markdown") and "holm-adjusted" in glmm.table("html")


def test_bad_input(res, shared_data):
    with pytest.raises(OptionError, match=r"format='docx' is not a table format; expected one "
                                          r"of 'latex', 'markdown', 'html'"):
        res.table(format="docx")
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(OptionError, match=r"digits=.* expected an integer >= 0"):
            res.table(digits=bad)
    with pytest.raises(OptionError, match="interval='sd'"):
        res.table(interval="sd")
    jb = shared_data("jailbreakbench")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        two = mixrank.fit("correct ~ model + (1|subject)", jb[jb.model.isin(jb.model.unique()[:2])])
    with pytest.raises(DesignError, match="at least 3 models"):
        two.table()


def test_plus_minus_refuses_an_asymmetric_interval(res, monkeypatch):
    sc = res.model_scores()
    skewed = sc.assign(ci_upper=sc["ci_upper"] + 0.01)
    skewed.attrs = sc.attrs
    monkeypatch.setattr(type(res), "model_scores", lambda self, level=None: skewed)
    with pytest.raises(OptionError, match=r"interval='pm' needs symmetric intervals; 6 model"):
        res.table(interval="pm")
    assert "[0.5" in res.table("markdown")          # bounds are shown as they are
