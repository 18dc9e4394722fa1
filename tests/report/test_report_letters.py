"""The report's leaderboard shows the compact letters of ``res.letters()``.

Linear (paired mixed models), arena (Bradley-Terry) and binomial GLMM pages:
the leaderboard table has a ``letters`` column beside the interval whose
value for each model is the API's ``letters()``, and its caption says what a
shared letter means.  A two-model fit (no letters) keeps its table.
"""

from __future__ import annotations

import html
import re
import warnings

import matplotlib

matplotlib.use("Agg")

import mixrank  # noqa: E402
from mixrank.report import render_report  # noqa: E402

F = "correct ~ model + (1|subject)"


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def _table(page: str, sid: str) -> tuple[list[str], list[list[str]], str]:
    sec = re.search(rf'<section id="{sid}">(.*?)</section>', page, re.S).group(1)
    tab = re.search(r"<table.*?</table>", sec, re.S).group(0)
    # each header cell carries the exact column name in its title (the text may hold <wbr>)
    head = [html.unescape(h) for h in re.findall(r'<th title="(.*?)">', tab)]
    rows = [[html.unescape(re.sub("<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)]
            for r in re.findall(r"<tr>(.*?)</tr>", tab, re.S)]
    return head, [r for r in rows if r], sec


def _check(res, page, sid="leaderboard"):
    head, rows, sec = _table(page, sid)
    assert "letters" in head and head.index("letters") == head.index("ci_upper") + 1
    got = {r[head.index("model")]: r[head.index("letters")] for r in rows}
    cld = res.letters()
    assert got == dict(zip(cld["model"], cld["letters"]))
    assert "models sharing a letter are not told apart" in html.unescape(sec)


def test_linear_leaderboard_letters():
    res = _quiet(mixrank.fit, F, mixrank.load_example())
    _check(res, _quiet(render_report, res))


def test_arena_leaderboard_letters(shared_data):
    res = _quiet(mixrank.arena, shared_data("chatbot_arena"))
    _check(res, _quiet(render_report, res))


def test_glmm_scores_letters(shared_data):
    res = _quiet(mixrank.fit, F, shared_data("jailbreakbench"), family="binomial")
    page = _quiet(render_report, res)
    _check(res, page, sid="scores")
    assert "Letters (logit-scale tests)" in html.unescape(page)


def test_two_models_keep_their_table():
    d = mixrank.load_example()
    res = _quiet(mixrank.fit, F, d[d.model.isin(["m01", "m02"])])
    head, rows, _ = _table(_quiet(render_report, res), "leaderboard")
    assert "letters" not in head and len(rows) == 2
